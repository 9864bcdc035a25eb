#!/usr/bin/env python3
"""Whole-process benchmark: ``pikit diff A B --json`` against ``pikit context FILE --json`` on the same file.

    python benchmarks/bench_diff.py                    # 1,000, 2,000 and 4,000 messages per branch, 3 runs each
    python benchmarks/bench_diff.py --messages 8000 --runs 5

Each file is a root prompt and two branches of N messages each, made of identical turns but
for a number near the end of every message: a prompt, a ``bash`` call, its output (about 2 KB)
and an answer. Every message of one branch has the same role, size and opening as many of the
other's, the shape that made pairing removed and added messages by content quadratic. The
files are written to ``benchmarks/data/diff-<N>.jsonl`` when missing (deterministic).

``pikit diff FILE A B --json`` (A and B the two branch tips) and ``pikit context FILE --json``
(the file's current leaf, B) run as child processes, alternating after one warm-up of each.
The table shows the medians of wall and CPU time (user + sys of the waited child, from
``os.wait4``) and the ratio diff / context; the target is at most 2x.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from bench_growth import alternate

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
COUNTS = (1000, 2000, 4000)
T0 = 1767225600000
OUTPUT = "".join(f"tests/test_module_{k:02d}.py::test_case PASSED\n" for k in range(40))


def _message(role: str, k: int, side: str) -> dict[str, Any]:
    mark = f"{side}{k:06d}"
    if role == "user":
        return {"role": "user", "content": [{"type": "text", "text": f"Run the test suite again and tell me what "
                                                                    f"fails this time, please. ({mark})"}]}
    if role == "call":
        return {"role": "assistant", "api": "anthropic-messages", "provider": "anthropic", "model": "claude",
                "stopReason": "toolUse", "content": [{"type": "toolCall", "id": f"call-{mark}", "name": "bash",
                                                      "arguments": {"command": f"pytest -q  # {mark}"}}]}
    if role == "result":
        return {"role": "toolResult", "toolCallId": f"call-{mark}", "toolName": "bash", "isError": False,
                "content": [{"type": "text", "text": f"{OUTPUT}40 passed ({mark})"}]}
    return {"role": "assistant", "api": "anthropic-messages", "provider": "anthropic", "model": "claude",
            "stopReason": "stop", "content": [{"type": "text", "text": f"All 40 tests pass; nothing to fix. ({mark})"}]}


def session(count: int) -> tuple[Path, str, str]:
    """The file of two branches of ``count`` messages each (made when missing) and the two tips."""
    path = HERE / "data" / f"diff-{count}.jsonl"
    tips = [f"{side}{count - 1:07d}" for side in "ab"]
    if path.exists():
        return path, tips[0], tips[1]
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "0190a0a0-0000-7000-8000-000000000000",
         "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/work"},
        {"type": "message", "id": "root0000", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "Set up the project.", "timestamp": T0}}]
    roles = ("user", "call", "result", "answer")
    for side in "ab":
        parent = "root0000"
        for k in range(count):
            entry_id = f"{side}{k:07d}"
            message = {**_message(roles[k % 4], k, side), "timestamp": T0 + k * 1000}
            lines.append({"type": "message", "id": entry_id, "parentId": parent,
                          "timestamp": "2026-01-01T00:00:01.000Z", "message": message})
            parent = entry_id
    path.parent.mkdir(exist_ok=True)
    partial = path.with_suffix(".part")
    partial.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    partial.rename(path)
    return path, tips[0], tips[1]


def measure(count: int, runs: int) -> dict[str, list[tuple[float, float, float]]]:
    """Alternating runs of both commands on the file of ``count`` messages per branch, after one warm-up each."""
    path, a, b = session(count)
    return alternate({
        "diff": [sys.executable, "-m", "pikit", "diff", str(path), a, b, "--json"],
        "context": [sys.executable, "-m", "pikit", "context", str(path), "--json"],
    }, runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, nargs="+", default=list(COUNTS), help="messages per branch")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"pikit diff FILE A B --json against pikit context FILE --json; medians of {args.runs} alternating runs "
          "after one warm-up each")
    print("| messages per branch | MB | diff wall | diff CPU | context wall | context CPU | "
          "diff / context (wall, CPU) |")
    print("|---|---|---|---|---|---|---|")
    for count in args.messages:
        figures = measure(count, args.runs)
        med = {side: [statistics.median(run[i] for run in runs) for i in range(2)] for side, runs in figures.items()}
        (dw, dc), (cw, cc) = med["diff"], med["context"]
        size = session(count)[0].stat().st_size / 1e6
        print(f"| {count:,} | {size:.1f} | {dw:.2f} s | {dc:.2f} s | {cw:.2f} s | {cc:.2f} s | "
              f"{dw / cw:.2f}×, {dc / cc:.2f}× |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
