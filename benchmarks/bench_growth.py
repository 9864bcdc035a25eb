#!/usr/bin/env python3
"""Whole-process benchmark: how ``pikit simulate`` grows with the file, against ``pikit context``.

    python benchmarks/bench_growth.py                  # the generated 100 MB and 250 MB sessions, 3 runs each
    python benchmarks/bench_growth.py --large          # and the 1 GB one
    python benchmarks/bench_growth.py --runs 5 --context-window 200000
    python benchmarks/bench_growth.py FILE...            # other files

For each size, ``pikit simulate FILE --context-window W --json`` and ``pikit context FILE
--json`` run as child processes (stdout to a file, offline summarizer), alternating (simulate,
context, simulate, ...) after one warm-up of each. Each run reports its wall time, the CPU time
of its process tree (user + sys of the waited child, which includes its own children, from
``os.wait4``) and its peak resident memory; the table shows the medians, the ratio
simulate / context of wall and CPU time, and peak memory / file size. The sessions are
``make_session.py --mb N`` (``benchmarks/data/session-<N>mb-s1.jsonl``), generated when missing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIZES = (100, 250)
LARGE = 1000


def session(mb: int) -> Path:
    """The generated session of ``mb`` MB, made first when missing."""
    path = HERE / "data" / f"session-{mb}mb-s1.jsonl"
    if not path.exists():
        subprocess.run([sys.executable, str(HERE / "make_session.py"), "--mb", str(mb), "-o", str(path), "-q"],
                       check=True, cwd=ROOT)
    return path


def run_once(cmd: list[str], out: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds of the process tree, peak RSS in MB) of one child running ``cmd``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with out.open("wb") as sink:
        start = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{' '.join(cmd)} exited with {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def alternate(sides: dict[str, list[str]], runs: int) -> dict[str, list[tuple[float, float, float]]]:
    """``runs`` alternating runs of each command of ``sides`` (name → argv), after one warm-up each:
    each side's figures of :func:`run_once`, run by run."""
    figures: dict[str, list[tuple[float, float, float]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as tmp:
        for cmd in sides.values():
            run_once(cmd, Path(tmp) / "warmup.json")
        for _ in range(runs):
            for side, cmd in sides.items():
                figures[side].append(run_once(cmd, Path(tmp) / "out.json"))
    return figures


def measure(path: Path, runs: int, window: int) -> dict[str, list[tuple[float, float, float]]]:
    """Alternating runs of both commands on ``path``, after one warm-up each."""
    return alternate({
        "simulate": [sys.executable, "-m", "pikit", "simulate", str(path), "--context-window", str(window), "--json"],
        "context": [sys.executable, "-m", "pikit", "context", str(path), "--json"],
    }, runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, help="other session files instead of the generated ones")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--context-window", type=int, default=200_000)
    parser.add_argument("--large", action="store_true", help="also the 1 GB session")
    args = parser.parse_args(argv)
    paths = args.files or [session(mb) for mb in ((*SIZES, LARGE) if args.large else SIZES)]
    print(f"pikit simulate FILE --context-window {args.context_window:,} --json against pikit context FILE --json; "
          f"medians of {args.runs} alternating runs after one warm-up each")
    print("| file | MB | command | wall | CPU | peak RSS | RSS / file | simulate / context (wall, CPU) |")
    print("|---|---|---|---|---|---|---|---|")
    for path in paths:
        size = path.stat().st_size / 1e6
        started = time.perf_counter()
        figures = measure(path, args.runs, args.context_window)
        med = {side: [statistics.median(run[i] for run in runs) for i in range(3)] for side, runs in figures.items()}
        for side in ("simulate", "context"):
            wall, cpu, rss = med[side]
            ratio = ""
            if side == "simulate":
                ratio = f"{wall / med['context'][0]:.2f}×, {cpu / med['context'][1]:.2f}×"
            print(f"| {path.name} | {size:.0f} | {side} | {wall:.2f} s | {cpu:.2f} s | {rss:.0f} MB | "
                  f"{rss / size:.2f}× | {ratio} |")
        print(f"<!-- {path.name}: measured in {time.perf_counter() - started:.0f} s, load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} -->", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
