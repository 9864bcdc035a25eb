#!/usr/bin/env python3
"""The corpus benchmark: ``pikit usage --by day --json`` against ccusage 20 (``ccusage pi daily --json --offline``).

    python benchmarks/bench_corpus.py                 # generate what is missing, then 5 alternating rounds
    python benchmarks/bench_corpus.py --runs 3 --no-dask --no-growth

Setup (only what is missing): the corpus, written by ``data/sample_corpus/generate.py``
(``--sessions 270 --mb 2.5``: 324 files, about 815 MB, forks, eight days, four models) into
``benchmarks/data/corpus``, and for the growth table the same at 2× and 4× the sessions
(``corpus-2x``, ``corpus-4x``); the forks' ``parentSession`` paths are made to name the files
where they are (only the header lines, in these generated files), so that ccusage 20 finds the
parents and its per-day totals are pikit's; ccusage 20.0.24 and its linux program installed from
npm into ``benchmarks/data/node20``. All of it is git-ignored.

Each round runs, as whole processes, one after the other: ccusage 20 and a cold ``pikit usage
--by day --json`` (a fresh index) on each corpus, then on the 1× corpus warm re-runs (nothing
changed; one file appended to). Wall time is taken around spawn and reap. Peak memory is the
largest sum of the resident sizes of the process and all its descendants, sampled every
10 ms; CPU time is the user + system time of that whole process tree: the same samples read
each process's own time from ``/proc`` (the pool's workers are not children the command waits
for, so ``wait4`` alone misses them), the larger of that sum and ``wait4``'s is taken. Ratios
are per round (pikit / ccusage 20), then the median; ranges are the rounds' minimum and maximum.
With Dask: a cold and a warm run with ``--engine dask --scheduler local`` (a two-worker
LocalCluster started by the command). Results go to ``benchmarks/data/corpus-results.json``
and Markdown tables are printed.
"""

from __future__ import annotations

import argparse
import compileall
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
CORPUS = DATA / "corpus"
NODE = DATA / "node20"
CCUSAGE_VERSION = "20.0.24"
SCALES = {1: CORPUS, 2: DATA / "corpus-2x", 4: DATA / "corpus-4x"}
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


def setup(sessions: int, mb: float, scales: list[int]) -> Path:
    """Generate the corpora and install ccusage 20 when missing; return the ccusage executable."""
    for scale in scales:
        folder = SCALES[scale]
        if not folder.is_dir() or not any(folder.rglob("*.jsonl")):
            subprocess.run([sys.executable, str(ROOT / "data" / "sample_corpus" / "generate.py"), str(folder),
                            "--sessions", str(sessions * scale), "--mb", str(mb)], check=True)
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
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _sample(pid: int, cpu: dict[int, float]) -> int:
    """Resident bytes of a process and all its descendants; each one's own CPU seconds so far go into ``cpu``.

    Only the tree is read (not every process of the machine): the sampler runs every 10 ms on
    the machine it measures, and must not take CPU from a command that uses every core.
    """
    total = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/statm") as handle:
                total += int(handle.read().split()[1]) * _PAGE
            with open(f"/proc/{current}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            cpu[current] = (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (of the process itself)
        except (OSError, IndexError, ValueError):
            pass
        stack.extend(_children(current))
    return total


CPU: dict[str, float] = {}  # CPU seconds (user + system, the whole process tree) of the last run


def run(command: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """Wall seconds, peak resident bytes (process tree) and stdout of one run; its CPU time in ``CPU``."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env)
        peak = 0
        cpu: dict[int, float] = {}
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _sample(process.pid, cpu))
            time.sleep(0.01)
        elapsed = time.perf_counter() - start
        # wait4's rusage holds the process and the descendants it (and they) waited for; the samples every process
        CPU["last"] = max(usage.ru_utime + usage.ru_stime, sum(cpu.values()))
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if process.returncode != 0:
        raise SystemExit(f"failed ({process.returncode}): {' '.join(command)}")
    return elapsed, peak, text


def _pikit(root: Path, index: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pikit", "usage", str(root), "--by", "day", "--json", "--timezone", "UTC",
            "--index", str(index), *extra]


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


def rounds(exe: Path, runs: int, scales: list[int], dask: bool) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    figures: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    work = Path(tempfile.mkdtemp(prefix="pikit-bench-corpus-"))
    victim = sorted(CORPUS.rglob("*.jsonl"))[0]
    original = victim.read_bytes()
    try:
        for number in range(runs):
            for scale in scales:
                root, tag = SCALES[scale], f"x{scale}"
                node_s, node_rss, node_out = run(_ccusage(exe, root))
                add(f"node_cpu_s_{tag}", CPU["last"])
                index = work / f"index-{number}-{tag}.duckdb"
                cold_s, cold_rss, cold_out = run(_pikit(root, index), env)
                add(f"cold_cpu_s_{tag}", CPU["last"])
                add(f"cold_cpu_ratio_{tag}", CPU["last"] / figures[f"node_cpu_s_{tag}"][-1])
                _same_days(cold_out, node_out)
                add(f"node_s_{tag}", node_s)
                add(f"node_rss_mb_{tag}", node_rss / 1e6)
                add(f"cold_s_{tag}", cold_s)
                add(f"cold_rss_mb_{tag}", cold_rss / 1e6)
                add(f"cold_ratio_{tag}", cold_s / node_s)
                print(f"round {number + 1}, {scale}x: ccusage 20 {node_s:.2f}s, pikit cold {cold_s:.2f}s "
                      f"({cold_s / node_s:.2f}x, {cold_rss / 1e6:.0f} MB)", flush=True)
            index = work / f"index-{number}-x1.duckdb"
            warm_s, warm_rss, _ = run(_pikit(CORPUS, index), env)
            add("warm_s", warm_s)
            add("warm_rss_mb", warm_rss / 1e6)
            _append_one(victim)
            add("appended_s", run(_pikit(CORPUS, index), env)[0])
            victim.write_bytes(original)
            if dask:
                dask_index = work / f"dask-{number}.duckdb"
                add("dask_cold_s", run(_pikit(CORPUS, dask_index, "--engine", "dask", "--scheduler", "local"), env)[0])
                add("dask_warm_s", run(_pikit(CORPUS, dask_index, "--engine", "dask", "--scheduler", "local"), env)[0])
            print(f"round {number + 1}: warm {warm_s:.2f}s, appended {figures['appended_s'][-1]:.2f}s", flush=True)
    finally:
        victim.write_bytes(original)
        shutil.rmtree(work, ignore_errors=True)
    return figures


def _size(root: Path) -> tuple[int, int]:
    files = sorted(root.rglob("*.jsonl"))
    return len(files), sum(f.stat().st_size for f in files)


def table(figures: dict[str, list[float]], scales: list[int]) -> str:
    def med(name: str) -> float:
        return statistics.median(figures[name])

    def spread(name: str, digits: int = 2) -> str:
        return f"{min(figures[name]):.{digits}f}–{max(figures[name]):.{digits}f}"

    files, size = _size(CORPUS)
    runs = len(figures["node_s_x1"])
    lines = [f"Corpus: {files} files, {size / 1e6:,.0f} MB; {runs} alternating rounds, medians (ranges).",
             "", "| measure | pikit | ccusage 20 | ratio | target |", "|---|---|---|---|---|",
             f"| cold `usage --by day --json` (fresh index) | {med('cold_s_x1'):.2f} s ({spread('cold_s_x1')}) | "
             f"{med('node_s_x1'):.2f} s ({spread('node_s_x1')}) | {med('cold_ratio_x1'):.2f}× "
             f"({spread('cold_ratio_x1')}) | ≤ 1.0× |",
             f"| CPU time (user + system, the whole process tree), cold | {med('cold_cpu_s_x1'):.2f} s | "
             f"{med('node_cpu_s_x1'):.2f} s | {med('cold_cpu_ratio_x1'):.2f}× | |",
             f"| peak memory, cold (the process tree, summed) | {med('cold_rss_mb_x1'):.0f} MB | "
             f"{med('node_rss_mb_x1'):.0f} MB | | ≤ 300 MB |",
             f"| warm re-run, nothing changed | {med('warm_s'):.2f} s ({spread('warm_s')}) | | | < 0.3 s |",
             f"| warm re-run, one file appended to | {med('appended_s'):.2f} s ({spread('appended_s')}) | | | |"]
    if "dask_cold_s" in figures:
        lines += [f"| Dask, `--scheduler local` (2 workers, started by the command), cold | {med('dask_cold_s'):.2f} s "
                  f"| | {med('dask_cold_s') / med('node_s_x1'):.2f}× | |",
                  f"| Dask, `--scheduler local`, warm | {med('dask_warm_s'):.2f} s | | | |"]
    if len(scales) > 1:
        lines += ["", "Growth (cold scans, medians):", "",
                  "| corpus | files | size | pikit | ccusage 20 | ratio | pikit CPU | ccusage 20 CPU | pikit peak |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for scale in scales:
            tag = f"x{scale}"
            files, size = _size(SCALES[scale])
            lines.append(f"| {scale}× | {files} | {size / 1e6:,.0f} MB | {med(f'cold_s_{tag}'):.2f} s | "
                         f"{med(f'node_s_{tag}'):.2f} s | {med(f'cold_ratio_{tag}'):.2f}× | "
                         f"{med(f'cold_cpu_s_{tag}'):.2f} s | {med(f'node_cpu_s_{tag}'):.2f} s | "
                         f"{med(f'cold_rss_mb_{tag}'):.0f} MB |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=270)
    parser.add_argument("--mb", type=float, default=2.5)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--no-growth", action="store_true", help="the 1x corpus only")
    args = parser.parse_args()
    scales = [1] if args.no_growth else [1, 2, 4]
    exe = setup(args.sessions, args.mb, scales)
    load = os.getloadavg()
    figures = rounds(exe, args.runs, scales, not args.no_dask)
    files, size = _size(CORPUS)
    result = {"files": files, "bytes": size, "load_before": load, "load_after": os.getloadavg(),
              "cpus": os.cpu_count(), "figures": figures}
    (DATA / "corpus-results.json").write_text(json.dumps(result, indent=2))
    print()
    print(table(figures, scales))
    print(f"\nload average before/after: {load[0]:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
