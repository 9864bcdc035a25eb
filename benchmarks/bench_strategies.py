#!/usr/bin/env python3
"""Whole-process benchmark: ``pikit simulate --strategy`` with the lab's five strategies against one ``pi`` replay.

    python benchmarks/bench_strategies.py                    # the generated 100 MB session, 3 runs each
    python benchmarks/bench_strategies.py FILE --runs 5 --context-window 200000

Each run is one child process (``python -m pikit simulate FILE --context-window W --strategy S
--json``, offline summarizer, stdout to a file); the two commands alternate (pi, all five, pi,
all five, ...) after one warm-up of each, and the medians of the wall times are compared with
the target: the five (pi, none, mask-observations, codex-inline, truncate) in at most 5x the time of
one ``pi`` replay, both scored on common ground. A missing
generated session is made first with ``make_session.py``.
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
DEFAULT = HERE / "data" / "session-100mb-s1.jsonl"
ALL = "pi,none,mask-observations,codex-inline,truncate"


def run_once(cmd: list[str], out: Path) -> float:
    """The wall time of one child process running ``cmd`` (its stdout to ``out``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    with out.open("wb") as sink:
        subprocess.run(cmd, stdout=sink, stderr=subprocess.DEVNULL, env=env, cwd=ROOT, check=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--context-window", type=int, default=200_000)
    args = parser.parse_args(argv)
    if not args.file.exists():
        subprocess.run([sys.executable, str(HERE / "make_session.py"), "--mb", "100"], check=True, cwd=ROOT)
    base = [sys.executable, "-m", "pikit", "simulate", str(args.file), "--context-window", str(args.context_window),
            "--json", "--strategy"]
    sides = {"pi": [*base, "pi"], "all five": [*base, ALL]}
    times: dict[str, list[float]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as tmp:
        for cmd in sides.values():
            run_once(cmd, Path(tmp) / "warmup.json")
        for _ in range(args.runs):
            for side, cmd in sides.items():
                times[side].append(run_once(cmd, Path(tmp) / "out.json"))
    med = {side: statistics.median(t) for side, t in times.items()}
    load = os.getloadavg()[0]
    print(f"{args.file.name} ({args.file.stat().st_size / 1e6:.0f} MB), window {args.context_window:,}, "
          f"{args.runs} alternating runs after one warm-up, medians, load average {load:.1f}")
    for side, t in times.items():
        print(f"  {side:<9} {med[side]:6.2f} s  (runs: {', '.join(f'{x:.2f}' for x in t)})")
    ratio = med["all five"] / med["pi"]
    print(f"  all five / pi = {ratio:.2f}x (target <= 5x): {'ok' if ratio <= 5 else 'OVER'}")
    return 0 if ratio <= 5 else 1


if __name__ == "__main__":
    sys.exit(main())
