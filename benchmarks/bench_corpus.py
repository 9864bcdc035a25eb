#!/usr/bin/env python3
"""The corpus benchmark: ``pikit usage --by day --json`` against ``@ccusage/pi daily --json``.

    python benchmarks/bench_corpus.py                 # generate what is missing, then 5 alternating rounds
    python benchmarks/bench_corpus.py --runs 3 --no-dask

Setup (only what is missing): the corpus, written by ``data/sample_corpus/generate.py``
(``--sessions 270 --mb 2.5``: 324 files, about 794 MB, forks, eight days, four models) into
``benchmarks/data/corpus``; ``@ccusage/pi`` 18.0.11 installed from npm into
``benchmarks/data/node``. Both are git-ignored.

Each round runs, as whole processes, one after the other: ``@ccusage/pi daily --json`` and a
cold ``pikit usage --by day --json`` (a fresh index), then warm re-runs (nothing changed; one
file appended to). The peak memory is the largest sum of the resident sizes of the process and
its children, sampled every 10 ms. Ratios are per round (pikit / @ccusage/pi), then the median.
CPU time (a figure the machine's load disturbs less than wall time) is measured on a separate
cold scan in one process (``workers=1``), since the workers of a process pool are not children
the command waits for. With Dask: the same
cold and warm runs with ``--engine dask --scheduler local`` (a two-worker
LocalCluster started by the command), and a scan in process on an already running cluster.
Results go to ``benchmarks/data/corpus-results.json`` and a Markdown table is printed.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
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
NODE = DATA / "node"
CCUSAGE_VERSION = "18.0.11"


def setup(sessions: int, mb: float) -> Path:
    """Generate the corpus and install @ccusage/pi when missing; return the ccusage executable."""
    if not CORPUS.is_dir() or not any(CORPUS.rglob("*.jsonl")):
        subprocess.run([sys.executable, str(ROOT / "data" / "sample_corpus" / "generate.py"), str(CORPUS),
                        "--sessions", str(sessions), "--mb", str(mb)], check=True)
    exe = NODE / "node_modules" / ".bin" / "ccusage-pi"
    if not exe.exists():
        npm = shutil.which("npm")
        if npm is None:
            sys.exit("npm is needed to install @ccusage/pi")
        subprocess.run([npm, "install", "--prefix", str(NODE), "--no-audit", "--no-fund",
                        f"@ccusage/pi@{CCUSAGE_VERSION}"], check=True)
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


def _tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants.

    Only the tree is read (not every process of the machine): the sampler runs every 10 ms on
    the machine it measures, and must not take CPU from a command that uses every core.
    """
    total = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
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
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _tree_rss(process.pid))
            time.sleep(0.01)
        elapsed = time.perf_counter() - start
        # the rusage of a waited process includes every descendant it waited for (the workers too)
        CPU["last"] = usage.ru_utime + usage.ru_stime
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if process.returncode != 0:
        raise SystemExit(f"failed ({process.returncode}): {' '.join(command)}")
    return elapsed, peak, text


def _pikit(index: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pikit", "usage", str(CORPUS), "--by", "day", "--json", "--timezone", "UTC",
            "--index", str(index), *extra]


def _append_one(path: Path) -> None:
    lines = path.read_bytes().split(b"\n")
    with path.open("ab") as out:
        out.write(lines[-2] + b"\n")  # the last entry again: a whole new line


def rounds(exe: Path, runs: int, dask: bool) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    figures: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    work = Path(tempfile.mkdtemp(prefix="pikit-bench-corpus-"))
    victim = sorted(CORPUS.rglob("*.jsonl"))[0]
    original = victim.read_bytes()
    try:
        for number in range(runs):
            node_s, node_rss, node_out = run([str(exe), "daily", "--json", "--piPath", str(CORPUS), "-z", "UTC"])
            node_cpu = CPU["last"]
            index = work / f"index-{number}.duckdb"
            cold_s, cold_rss, cold_out = run(_pikit(index), env)
            # CPU: one process (the workers of a pool are not children the command waits for)
            one = ("from pikit.corpus import Corpus; import sys; "
                   "Corpus.open(sys.argv[1], index=sys.argv[2], workers=1).usage_rows('day', timezone='UTC')")
            run([sys.executable, "-c", one, str(CORPUS), str(work / f"one-{number}.duckdb")], env)
            add("node_cpu_s", node_cpu)
            add("cold_cpu_s", CPU["last"])
            add("cold_cpu_ratio", CPU["last"] / node_cpu)
            theirs = json.loads(node_out)["totals"]
            ours = json.loads(cold_out)["totals"]
            assert ours["inputTokens"] == theirs["inputTokens"], "the totals differ"
            add("node_s", node_s)
            add("node_rss_mb", node_rss / 1e6)
            add("cold_s", cold_s)
            add("cold_rss_mb", cold_rss / 1e6)
            add("cold_ratio", cold_s / node_s)
            warm_s, warm_rss, _ = run(_pikit(index), env)
            add("warm_s", warm_s)
            add("warm_rss_mb", warm_rss / 1e6)
            _append_one(victim)
            add("appended_s", run(_pikit(index), env)[0])
            if dask:
                dask_index = work / f"dask-{number}.duckdb"
                add("dask_cold_s", run(_pikit(dask_index, "--engine", "dask", "--scheduler", "local"), env)[0])
                add("dask_warm_s", run(_pikit(dask_index, "--engine", "dask", "--scheduler", "local"), env)[0])
            print(f"round {number + 1}: node {node_s:.2f}s, pikit cold {cold_s:.2f}s ({cold_s / node_s:.2f}x, "
                  f"{cold_rss / 1e6:.0f} MB), warm {warm_s:.2f}s, appended {figures['appended_s'][-1]:.2f}s",
                  flush=True)
        if dask:
            add("dask_inprocess_s", _dask_in_process(work))
    finally:
        victim.write_bytes(original)
        shutil.rmtree(work, ignore_errors=True)
    return figures


def _dask_in_process(work: Path) -> float:
    """Seconds of a cold scan on an already running two-worker LocalCluster (cluster start excluded)."""
    sys.path.insert(0, str(ROOT))
    from distributed import Client, LocalCluster

    from pikit.corpus import Corpus

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        start = time.perf_counter()
        with Corpus.open(CORPUS, index=work / "dask-inprocess.duckdb", client=client):
            pass
        return time.perf_counter() - start


def table(figures: dict[str, list[float]], files: int, size: int) -> str:
    def med(name: str) -> float:
        return statistics.median(figures[name])

    lines = [f"Corpus: {files} files, {size / 1e6:,.0f} MB; {len(figures['node_s'])} alternating rounds, medians.",
             "", "| measure | pikit | @ccusage/pi | ratio | target |", "|---|---|---|---|---|",
             f"| cold `usage --by day --json` (fresh index) | {med('cold_s'):.2f} s | {med('node_s'):.2f} s | "
             f"{med('cold_ratio'):.2f}× | ≤ 0.25× |",
             f"| CPU time (user + system), cold, in one process | {med('cold_cpu_s'):.2f} s | "
             f"{med('node_cpu_s'):.2f} s | "
             f"{med('cold_cpu_ratio'):.2f}× | |",
             f"| peak memory, cold | {med('cold_rss_mb'):.0f} MB | {med('node_rss_mb'):.0f} MB | | ≤ 300 MB |",
             f"| warm re-run, nothing changed | {med('warm_s'):.2f} s | | | < 1 s |",
             f"| warm re-run, one file appended to | {med('appended_s'):.2f} s | | | < 1 s |"]
    if "dask_cold_s" in figures:
        lines += [f"| Dask, `--scheduler local` (2 workers, started by the command), cold | {med('dask_cold_s'):.2f} s "
                  f"| | {med('dask_cold_s') / med('node_s'):.2f}× | |",
                  f"| Dask, `--scheduler local`, warm | {med('dask_warm_s'):.2f} s | | | |",
                  f"| Dask, scan on a running 2-worker LocalCluster (in process) | {med('dask_inprocess_s'):.2f} s "
                  f"| | {med('dask_inprocess_s') / med('node_s'):.2f}× | |"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=270)
    parser.add_argument("--mb", type=float, default=2.5)
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    exe = setup(args.sessions, args.mb)
    files = sorted(CORPUS.rglob("*.jsonl"))
    size = sum(f.stat().st_size for f in files)
    load = os.getloadavg()
    figures = rounds(exe, args.runs, not args.no_dask)
    result = {"files": len(files), "bytes": size, "load_before": load, "load_after": os.getloadavg(),
              "cpus": os.cpu_count(), "figures": figures}
    (DATA / "corpus-results.json").write_text(json.dumps(result, indent=2))
    print()
    print(table(figures, len(files), size))
    print(f"\nload average before/after: {load[0]:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
