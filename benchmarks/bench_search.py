#!/usr/bin/env python3
"""The search benchmark: ``Corpus.search`` on the corpus benchmark's 1x corpus, warm.

    python benchmarks/bench_search.py            # the corpus of bench_corpus.py (generated when missing)
    python benchmarks/bench_search.py --runs 9

The index is built once (a cold ``Corpus.open``, timed for the record), then each query runs
``--runs`` times in this process with the index open (warm: nothing to scan) and the median
and fastest wall times are printed, with the hits found; then ``pikit search … --json`` as a
whole process (start-up, the check that no file changed, the query), median of the runs.
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

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "benchmarks" / "data" / "corpus"  # bench_corpus.py's 1x corpus
QUERIES = ("deadlock", "migration", "error timeout", "refactor cache", "the")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    if not CORPUS.is_dir() or not any(CORPUS.rglob("*.jsonl")):
        subprocess.run([sys.executable, str(ROOT / "data" / "sample_corpus" / "generate.py"), str(CORPUS),
                        "--sessions", "270", "--mb", "2.5"], check=True)
    from pikit.corpus import Corpus

    with tempfile.TemporaryDirectory(prefix="pikit-bench-search-") as work:
        index = str(Path(work) / "index.duckdb")
        start = time.perf_counter()
        corpus = Corpus.open(str(CORPUS), index=index)
        print(f"index built in {time.perf_counter() - start:.1f} s; search text: "
              f"{corpus.rows('SELECT count(*), sum(length(text)) FROM texts')[0]} (rows, characters)")
        print(f"load average before the queries: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
        print("| query | hits (limit 50) | median ms | fastest ms | median CPU ms (all threads) |")
        print("|---|---|---|---|---|")
        for query in QUERIES:
            times, cpu = [], []
            for _ in range(args.runs):
                start, start_cpu = time.perf_counter(), time.process_time()
                found = corpus.search(query, limit=50)
                times.append((time.perf_counter() - start) * 1000)
                cpu.append((time.process_time() - start_cpu) * 1000)
            print(f"| {query} | {len(found)} | {statistics.median(times):.0f} | {min(times):.0f} | "
                  f"{statistics.median(cpu):.0f} |")
        corpus.close()
        command = [sys.executable, "-m", "pikit", "search", str(CORPUS), "migration", "--json", "--index", index]
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            times.append((time.perf_counter() - start) * 1000)
        print(f"\n`pikit search DIR migration --json`, a whole process, warm: median "
              f"{statistics.median(times):.0f} ms, fastest {min(times):.0f} ms")


if __name__ == "__main__":
    main()
