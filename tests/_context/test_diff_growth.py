"""A context diff's cost grows linearly with the branches: four times the messages, at most five times the time.

Two branches leave one root, each a long run of messages that differ only after their first
hundred characters (same role, same estimate, same opening), the shape that made pairing
removed and added messages by content quadratic. Both diffs run in this process and are timed
in CPU time (``time.process_time``, the collector paused), the best of several runs each.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import pytest

from pikit import Session, diff_contexts
from tests.entries import asst, session_of, text, user

HEADER = {"type": "session", "version": 3, "id": "sess-diff", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
SMALL = 500  # messages per branch; the large diff has four times as many
RUNS = 7
OPENING = "Run the whole test suite again and tell me which checks fail this time, with the details. "


def _branches(count: int) -> tuple[Session, Any, Any]:
    """A root and two branches of ``count`` similar messages each, and the two leaves."""
    entries: list[dict[str, Any]] = [user("root", None, 0, "start")]
    leaves = []
    for side in "ab":
        parent = "root"
        for k in range(count):
            words = text(f"{OPENING}{side}{k:06d}")
            entries.append(user(f"{side}{k}", parent, 1, words) if k % 2 == 0 else asst(f"{side}{k}", parent, 1, words))
            parent = f"{side}{k}"
        leaves.append(parent)
    return session_of(HEADER, entries), leaves[0], leaves[1]


def _best(session: Session, a: Any, b: Any) -> tuple[float, Any]:
    """The least CPU time of :data:`RUNS` diffs of the two projections, and the diff."""
    pa, pb = session.context(a), session.context(b)
    best, result = float("inf"), None
    for _ in range(RUNS):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            result = diff_contexts(pa, pb)
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best, result


@pytest.mark.timeout(120)
def test_four_times_the_messages_cost_at_most_five_times_the_time() -> None:
    small, small_diff = _best(*_branches(SMALL))
    large, large_diff = _best(*_branches(4 * SMALL))
    for diff, count in ((small_diff, SMALL), (large_diff, 4 * SMALL)):
        t = diff.totals
        assert (t.same, t.added, t.removed, t.changed) == (1, count, count, 0)
    assert large <= 5 * small, f"branches 4x as long took {large / small:.1f}x the CPU time ({large:.3f} s " \
                               f"against {small:.3f} s)"
