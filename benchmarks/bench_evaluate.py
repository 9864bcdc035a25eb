#!/usr/bin/env python3
"""Evaluating compactions: one compaction of a 20k-token span, and every recorded compaction of the benchmark corpus.

    python benchmarks/bench_evaluate.py                 # both measures
    python benchmarks/bench_evaluate.py --only one      # or: --only corpus

*one*: a 2 MB session from ``make_session.py --no-compaction`` (one branch), compacted by pikit
with the offline summarizer and Pi's default ``keepRecentTokens`` (20,000) at the first leaf
where the replaced span holds 20,000 tokens or more (Pi's estimate); then ``pikit.evaluate(session, result)`` is
timed (median of 21 runs, after one run that builds what the session caches), and so is the
evaluation of the compaction once it is recorded in the session (``pikit.evaluate(session, id)``).

*corpus*: the benchmark corpus of ``bench_corpus.py`` (generated when missing, 324 files),
scanned into a fresh index, then ``Corpus.evaluate()`` timed: every recorded compaction of
every file, by the corpus's worker processes.
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
DATA = ROOT / "benchmarks" / "data"
sys.path.insert(0, str(ROOT))

import pikit  # noqa: E402
from pikit import compaction  # noqa: E402
from pikit.llm._offline import OfflineSummarizer  # noqa: E402

SPAN_TOKENS = 20_000


def _session() -> pikit.Session:
    path = DATA / "session-2mb-nocompact-s1.jsonl"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_session.py"), "--mb", "2",
                        "--no-compaction", "-o", str(path), "-q"], check=True)
    return pikit.load(path)


def _median_ms(run: object, runs: int = 21) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _compacted(session: pikit.Session) -> compaction.CompactionResult:
    """The compaction at the first leaf whose replaced span reaches SPAN_TOKENS, keeping 20,000 tokens."""
    running = 0
    for entry in session.branch():
        message = entry.data.get("message") if entry.type == "message" else None
        running += pikit.estimate_tokens(message) if isinstance(message, dict) else 0
        if entry.type == "message" and entry.role == "assistant" and running >= SPAN_TOKENS + 20_000:
            result = compaction.build_compaction(session, entry.id, keep_recent_tokens=20_000,
                                                 summarizer=OfflineSummarizer())
            if result.replaced_tokens >= SPAN_TOKENS:
                return result
    raise SystemExit("no leaf replaces 20,000 tokens")


def one() -> None:
    session = _session()
    result = _compacted(session)
    span = result.replaced_tokens
    pikit.evaluate(session, result)
    ran = _median_ms(lambda: pikit.evaluate(session, result))
    evaluation = pikit.evaluate(session, result)
    facts = len(evaluation.facts)  # type: ignore[union-attr]
    print(f"one compaction: span {span:,} tokens (kept {result.preparation.kept_tokens:,}), {facts} facts: "
          f"{ran:.1f} ms (median of 21; target 50 ms)")


def corpus() -> None:
    from pikit.corpus import Corpus

    root = DATA / "corpus"
    if not root.is_dir() or not any(root.rglob("*.jsonl")):
        subprocess.run([sys.executable, str(ROOT / "data" / "sample_corpus" / "generate.py"), str(root),
                        "--sessions", "270", "--mb", "2.5"], check=True)
    with tempfile.TemporaryDirectory() as folder, Corpus.open(root, index=os.path.join(folder, "index.duckdb")) as c:
        start = time.perf_counter()
        files = c.evaluate()
        seconds = time.perf_counter() - start
        count, facts = c.rows("SELECT count(*), sum(facts) FROM evaluations")[0]
        print(f"corpus: {files} files, {count} compactions, {facts:,} facts evaluated in {seconds:.1f} s "
              f"({c.workers} workers; target 10 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["one", "corpus"])
    args = parser.parse_args()
    if args.only in (None, "one"):
        one()
    if args.only in (None, "corpus"):
        corpus()


if __name__ == "__main__":
    main()
