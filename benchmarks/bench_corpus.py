#!/usr/bin/env python3
"""The corpus benchmark: ``pikit usage --by day --json`` against ccusage 20 (``ccusage pi daily --json --offline``).

    python benchmarks/bench_corpus.py                 # generate what is missing, then 5 alternating rounds
    python benchmarks/bench_corpus.py --runs 3 --sizes 20,120 --no-floor
    python benchmarks/bench_corpus.py --growth --dask # also 2x and 4x the 800 MB corpus, and the Dask engine

Setup (only what is missing), in ``benchmarks/data/`` (git-ignored): three corpora of the same
generator, ``data/sample_corpus/generate.py`` (forks, eight days, four models): ``corpus-20``, a
copy of the bundled corpus (37 files, 22 MB); ``corpus-120`` (``--sessions 40 --mb 2.5``: 48
files, 119 MB); ``corpus`` (``--sessions 270 --mb 2.5``: 324 files, 806 MB); with ``--growth``
also ``corpus-2x`` and ``corpus-4x`` (540 and 1,080 sessions). The forks' ``parentSession``
paths are made to name the files where they are (only the header lines, in these copies), so
that ccusage 20 finds the parents and its per-day totals are pikit's. ccusage 20.0.24 and its
linux program are installed from npm into ``benchmarks/data/node20``.

Each round runs, as whole processes, on each corpus: ccusage 20 and a cold ``pikit usage --by
day --json`` (a fresh index), one after the other, the one that goes first alternating from round
to round; then pikit warm (nothing changed) and after one line was appended to one file; then ``pikit
sessions --json`` cold (a fresh index) and warm, the two lists checked equal. Every
day's tokens are checked equal to ccusage 20's in every round. A first ``pikit usage`` prints its
answer and leaves the index to a process of its own: "answer" is the wall time to the command's
exit (what a user waits for), "index written" the time until every process it started has ended.
This script makes itself the reaper of orphaned descendants (``PR_SET_CHILD_SUBREAPER``), so the
index writer is measured too: peak memory is the largest sum of the proportional set sizes
(PSS) of every process the command started, sampled every 10 ms; CPU time is the user + system time of all of
them (the samples read each process's own time from ``/proc``; the larger of that sum and what
``wait4`` reports is taken). Ratios are per round (pikit / ccusage 20), then the median; ranges
are the rounds' minimum and maximum. The fixed cost and the cost per GB are a least-squares line
through the median CPU times against the corpus sizes. The floor (``--no-floor`` skips it): one
process reading every file of the largest corpus and decoding every line with msgspec into just
what a usage report needs, nothing kept. Results go to ``benchmarks/data/corpus-results.json``;
Markdown tables are printed.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"
NODE = DATA / "node20"
CCUSAGE_VERSION = "20.0.24"
# name → (folder, sessions of the generator at --mb 2.5; None: a copy of the bundled corpus)
CORPORA: dict[str, tuple[Path, int | None]] = {
    "20": (DATA / "corpus-20", None), "120": (DATA / "corpus-120", 40), "800": (DATA / "corpus", 270),
    "1600": (DATA / "corpus-2x", 540), "3200": (DATA / "corpus-4x", 1080)}
_GENERATED_PARENTS = "/home/dev/.pi/agent/sessions/"  # where the generator's forks say their parents are


def _resolve_parents(root: Path) -> None:
    """Make every fork's ``parentSession`` name its parent's file in ``root`` (header lines only)."""
    for path in sorted(root.rglob("*.jsonl")):
        with path.open("rb") as handle:
            first = handle.readline()
        if _GENERATED_PARENTS.encode() not in first:
            continue
        head = json.loads(first)
        head["parentSession"] = str(root / head["parentSession"].split(_GENERATED_PARENTS, 1)[1])
        rest = path.read_bytes()[len(first):]
        path.write_bytes(json.dumps(head, separators=(",", ":"), ensure_ascii=False).encode() + b"\n" + rest)


def setup(names: list[str], mb: float) -> Path:
    """Make the corpora and install ccusage 20 when missing; return the ccusage executable."""
    for name in names:
        folder, sessions = CORPORA[name]
        if not folder.is_dir() or not any(folder.rglob("*.jsonl")):
            if sessions is None:
                shutil.copytree(ROOT / "data" / "sample_corpus" / "sessions", folder, dirs_exist_ok=True)
            else:
                subprocess.run([sys.executable, str(ROOT / "data" / "sample_corpus" / "generate.py"), str(folder),
                                "--sessions", str(sessions), "--mb", str(mb)], check=True)
        _resolve_parents(folder)
    exe = NODE / "node_modules" / ".bin" / "ccusage"
    if not exe.exists():
        npm = shutil.which("npm")
        if npm is None:
            sys.exit("npm is needed to install ccusage")
        arch = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]
        subprocess.run([npm, "install", "--prefix", str(NODE), "--no-audit", "--no-fund",
                        f"ccusage@{CCUSAGE_VERSION}", f"@ccusage/ccusage-linux-{arch}@{CCUSAGE_VERSION}"], check=True)
    # Byte-compile pikit as an install does (a checkout run with PYTHONDONTWRITEBYTECODE set would
    # otherwise compile every changed module again in every process of every run).
    import compileall

    compileall.compile_dir(str(ROOT / "pikit"), quiet=1)
    return exe


def _children(pid: int) -> list[int]:
    """The child processes of ``pid``, from ``/proc/PID/task/*/children`` (a few small reads)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(child) for child in handle.read().split())
        except OSError:
            continue
    return found


_TICK = os.sysconf("SC_CLK_TCK")


def _sample(pid: int, cpu: dict[int, float]) -> int:
    """Proportional set size (PSS: a page shared by n processes counts 1/n in each) of a process and all its
    descendants, in bytes; each one's own CPU seconds so far go into ``cpu``.

    PSS, not resident size: the processes of one command share pages (a forked index writer shares its
    parent's memory until either writes it), which a sum of resident sizes would count again in each. Only
    the tree is read (not every process of the machine): the sampler runs every 10 ms on the machine it
    measures, and must not take CPU from a command that uses every core.
    """
    total = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/smaps_rollup") as handle:
                total += next(int(line.split()[1]) * 1024 for line in handle if line.startswith("Pss:"))
            with open(f"/proc/{current}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            cpu[current] = (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (of the process itself)
        except (OSError, IndexError, ValueError, StopIteration):
            pass
        stack.extend(_children(current))
    return total


class Run:
    """One command: wall seconds to its exit (``answer``) and until every process it started ended (``done``), CPU
    seconds and peak memory (PSS) of all of them, its standard output."""

    def __init__(self, answer: float, done: float, cpu: float, peak: int, out: str, answer_cpu: float) -> None:
        self.answer, self.done, self.cpu, self.peak, self.out = answer, done, cpu, peak, out
        self.answer_cpu = answer_cpu  # (every process until the command's exit: its workers, not its index writer)


def _reap_orphans() -> None:
    """Become the parent of every orphaned descendant (a first ``pikit usage`` leaves its index writer running)."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def run(command: list[str], env: dict[str, str] | None = None) -> Run:
    """Run ``command`` and every process it leaves behind to their end."""
    me = os.getpid()
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env)
        peak, answer, status, waited, answer_cpu = 0, 0.0, 0, 0.0, 0.0
        cpu: dict[int, float] = {}
        while True:
            # (the command, then what it left: every child of this process is the command's)
            peak = max(peak, sum(_sample(child, cpu) for child in _children(me)))
            try:
                pid, code, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid:
                waited += usage.ru_utime + usage.ru_stime
                if pid == process.pid:
                    answer, status = time.perf_counter() - start, code
                    # (its pool's workers are no children it waits for: their samples count)
                    answer_cpu = max(usage.ru_utime + usage.ru_stime, sum(cpu.values()))
                continue
            time.sleep(0.01)
        done = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if process.returncode != 0:
        raise SystemExit(f"failed ({process.returncode}): {' '.join(command)}")
    return Run(answer, done, max(waited, sum(cpu.values())), peak, text, answer_cpu)


def _pikit(root: Path, index: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pikit", "usage", str(root), "--by", "day", "--json", "--timezone", "UTC",
            "--index", str(index), *extra]


def _sessions(root: Path, index: Path) -> list[str]:
    return [sys.executable, "-m", "pikit", "sessions", str(root), "--json", "--index", str(index)]


def _ccusage(exe: Path, root: Path) -> list[str]:
    return [str(exe), "pi", "daily", "--json", "--offline", "--timezone", "UTC", "--pi-path", str(root)]


def _append_one(path: Path) -> None:
    lines = path.read_bytes().split(b"\n")
    with path.open("ab") as out:
        out.write(lines[-2] + b"\n")  # the last entry again: a whole new line


_FIELDS = (("inputTokens", "inputTokens"), ("outputTokens", "outputTokens"),
           ("cacheWriteTokens", "cacheCreationTokens"), ("cacheReadTokens", "cacheReadTokens"))


def _same_days(ours: str, theirs: str) -> None:
    """Every day's token counts equal, costs equal up to rounding (pikit adds them with compensated summation)."""
    mine = {row["key"]: row for row in json.loads(ours)["rows"]}
    their = {row["date"]: row for row in json.loads(theirs)["daily"]}
    assert set(mine) == set(their), "the days differ"
    for day, row in their.items():
        for ours_name, theirs_name in _FIELDS:
            assert mine[day][ours_name] == row[theirs_name], f"{day}: {ours_name} differs"
        assert abs(mine[day]["cost"] - row["totalCost"]) <= 1e-9 * max(1.0, row["totalCost"]), f"{day}: cost"


def rounds(exe: Path, runs: int, names: list[str], dask: bool) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    figures: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    work = Path(tempfile.mkdtemp(prefix="pikit-bench-corpus-"))
    try:
        for number in range(runs):
            for name in names:
                root = CORPORA[name][0]
                index = work / f"index-{number}-{name}.duckdb"
                if number % 2 == 0:
                    node = run(_ccusage(exe, root))
                    cold = run(_pikit(root, index), env)
                else:
                    cold = run(_pikit(root, index), env)
                    node = run(_ccusage(exe, root))
                _same_days(cold.out, node.out)
                for tool, done in (("node", node), ("cold", cold)):
                    add(f"{tool}_s_{name}", done.answer)
                    add(f"{tool}_cpu_s_{name}", done.cpu)
                    add(f"{tool}_rss_mb_{name}", done.peak / 1e6)
                add(f"written_s_{name}", cold.done)
                add(f"answer_cpu_s_{name}", cold.answer_cpu)
                add(f"cold_ratio_{name}", cold.answer / node.answer)
                add(f"cold_cpu_ratio_{name}", cold.cpu / node.cpu)
                warm = run(_pikit(root, index), env)
                add(f"warm_s_{name}", warm.answer)
                add(f"warm_cpu_s_{name}", warm.cpu)
                victim = sorted(root.rglob("*.jsonl"))[0]
                original = victim.read_bytes()
                try:
                    _append_one(victim)
                    add(f"appended_s_{name}", run(_pikit(root, index), env).answer)
                finally:
                    victim.write_bytes(original)
                listed = work / f"sessions-{number}-{name}.duckdb"
                first, again = run(_sessions(root, listed), env), run(_sessions(root, listed), env)
                assert json.loads(first.out) == json.loads(again.out), "the first list is not the index's"
                for tool, done in (("sessions_cold", first), ("sessions_warm", again)):
                    add(f"{tool}_s_{name}", done.answer)
                    add(f"{tool}_cpu_s_{name}", done.answer_cpu)
                add(f"sessions_written_s_{name}", first.done)
                add(f"sessions_rss_mb_{name}", first.peak / 1e6)
                print(f"round {number + 1}, {name} MB: ccusage 20 {node.answer:.2f}s, pikit cold {cold.answer:.2f}s "
                      f"({cold.answer / node.answer:.2f}x; index written {cold.done:.2f}s; {cold.peak / 1e6:.0f} MB), "
                      f"warm {warm.answer:.2f}s", flush=True)
            if dask:
                root = CORPORA[names[-1]][0]
                dask_index = work / f"dask-{number}.duckdb"
                command = _pikit(root, dask_index, "--engine", "dask", "--scheduler", "local")
                add("dask_cold_s", run(command, env).answer)
                add("dask_warm_s", run(command, env).answer)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return figures


def floor(name: str) -> float:
    """CPU seconds of one process decoding every line of a corpus into what a usage report reads (msgspec, in C),
    keeping nothing: what no Python scan can go below."""
    code = """
import sys, time, msgspec
from pathlib import Path
class Cost(msgspec.Struct):
    total: object = None
class Usage(msgspec.Struct):
    input: int = 0
    output: int = 0
    cacheRead: int = 0
    cacheWrite: int = 0
    totalTokens: int = 0
    cost: Cost | None = None
class Msg(msgspec.Struct):
    role: str | None = None
    model: object = None
    provider: object = None
    usage: Usage | None = None
class Line(msgspec.Struct):
    type: str | None = None
    id: object = None
    parentId: object = None
    timestamp: object = None
    message: Msg | None = None
decode = msgspec.json.Decoder(Line).decode
start = time.process_time()
n = 0
for path in sorted(Path(sys.argv[1]).rglob("*.jsonl")):
    for line in path.read_bytes().splitlines():
        try:
            decode(line)
        except msgspec.DecodeError:
            pass
        n += 1
print(time.process_time() - start)
"""
    done = subprocess.run([sys.executable, "-c", code, str(CORPORA[name][0])], capture_output=True, text=True,
                          check=True)
    return float(done.stdout)


def _size(root: Path) -> tuple[int, int]:
    files = sorted(root.rglob("*.jsonl"))
    return len(files), sum(f.stat().st_size for f in files)


def _fit(sizes: list[float], cpu: list[float]) -> tuple[float, float]:
    """Fixed CPU seconds and CPU seconds per GB: the least-squares line through (GB, CPU seconds)."""
    slope, intercept = statistics.linear_regression(sizes, cpu)
    return intercept, slope


def table(figures: dict[str, list[float]], names: list[str], floor_cpu: float | None) -> str:
    def med(name: str) -> float:
        return statistics.median(figures[name])

    def spread(name: str, digits: int = 2) -> str:
        return f"{min(figures[name]):.{digits}f}–{max(figures[name]):.{digits}f}"

    runs = len(figures[f"node_s_{names[0]}"])
    lines = [f"{runs} alternating rounds of whole processes, medians (ranges).", "",
             "| corpus | ccusage 20 | pikit cold: answer | ratio | index written | pikit warm (CPU) "
             "| one file appended | CPU ccusage 20 | CPU pikit cold: answer, with the index writer "
             "| peak ccusage 20 | peak pikit |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    gigabytes = []
    for name in names:
        files, size = _size(CORPORA[name][0])
        gigabytes.append(size / 1e9)
        lines.append(
            f"| {files} files, {size / 1e6:,.0f} MB | {med(f'node_s_{name}'):.2f} s ({spread(f'node_s_{name}')}) | "
            f"{med(f'cold_s_{name}'):.2f} s ({spread(f'cold_s_{name}')}) | {med(f'cold_ratio_{name}'):.2f}× "
            f"({spread(f'cold_ratio_{name}')}) | {med(f'written_s_{name}'):.2f} s | {med(f'warm_s_{name}'):.2f} s "
            f"({spread(f'warm_s_{name}')}; {med(f'warm_cpu_s_{name}'):.2f} CPU-s) | "
            f"{med(f'appended_s_{name}'):.2f} s | {med(f'node_cpu_s_{name}'):.2f} s | "
            f"{med(f'answer_cpu_s_{name}'):.2f} s, {med(f'cold_cpu_s_{name}'):.2f} s | "
            f"{med(f'node_rss_mb_{name}'):.0f} MB | "
            f"{med(f'cold_rss_mb_{name}'):.0f} MB |")
    lines += ["", "`pikit sessions --json`, cold (a fresh index) and warm, each its own process:", "",
              "| corpus | cold: answer (CPU) | index written | warm (CPU) | peak |", "|---|---|---|---|---|"]
    for name in names:
        files, size = _size(CORPORA[name][0])
        lines.append(
            f"| {files} files, {size / 1e6:,.0f} MB | {med(f'sessions_cold_s_{name}'):.2f} s "
            f"({spread(f'sessions_cold_s_{name}')}; {med(f'sessions_cold_cpu_s_{name}'):.2f} CPU-s) | "
            f"{med(f'sessions_written_s_{name}'):.2f} s | {med(f'sessions_warm_s_{name}'):.2f} s "
            f"({spread(f'sessions_warm_s_{name}')}; {med(f'sessions_warm_cpu_s_{name}'):.2f} CPU-s) | "
            f"{med(f'sessions_rss_mb_{name}'):.0f} MB |")
    if len(names) > 1:
        lines += ["", "| CPU time against size (least squares) | fixed | per GB |", "|---|---|---|"]
        for tool, label in (("node", "ccusage 20"), ("answer", "pikit cold, the answer (until the command exits)"),
                            ("cold", "pikit cold, the index writer included")):
            fixed, per_gb = _fit(gigabytes, [med(f"{tool}_cpu_s_{name}") for name in names])
            lines.append(f"| {label} | {fixed:.2f} s | {per_gb:.2f} s |")
    if floor_cpu is not None:
        name = names[-1]
        lines += ["", f"Floor on the {_size(CORPORA[name][0])[1] / 1e6:,.0f} MB corpus: every line decoded by msgspec "
                      f"into what a usage report reads, one process: {floor_cpu:.2f} CPU-s (pikit cold "
                      f"{med(f'cold_cpu_s_{name}'):.2f} CPU-s, ccusage 20 {med(f'node_cpu_s_{name}'):.2f} CPU-s)."]
    if "dask_cold_s" in figures:
        lines += ["", "Dask, `--scheduler local` (2 workers, started by the command): "
                      f"cold {med('dask_cold_s'):.2f} s, warm {med('dask_warm_s'):.2f} s."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="20,120,800", help="the corpora, by MB: 20, 120, 800 (default: all three)")
    parser.add_argument("--growth", action="store_true", help="also 1,600 and 3,200 MB")
    parser.add_argument("--mb", type=float, default=2.5)
    parser.add_argument("--dask", action="store_true", help="also the Dask engine on the largest corpus")
    parser.add_argument("--no-floor", action="store_true")
    args = parser.parse_args()
    names = args.sizes.split(",") + (["1600", "3200"] if args.growth else [])
    exe = setup(names, args.mb)
    _reap_orphans()
    load = os.getloadavg()
    figures = rounds(exe, args.runs, names, args.dask)
    floor_cpu = None if args.no_floor else floor(names[-1])
    result = {"corpora": {name: _size(CORPORA[name][0]) for name in names}, "load_before": load,
              "load_after": os.getloadavg(), "cpus": os.cpu_count(), "figures": figures, "floor_cpu_s": floor_cpu}
    (DATA / "corpus-results.json").write_text(json.dumps(result, indent=2))
    print()
    print(table(figures, names, floor_cpu))
    print(f"\nload average before/after: {load[0]:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
