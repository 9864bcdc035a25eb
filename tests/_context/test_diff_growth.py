"""A context diff's cost grows linearly with the branches: a diff of branches four times as long costs at most
twice what four diffs of the short ones cost.

Two branches leave one root, each a long run of messages that differ only after their first
hundred characters (same role, same estimate, same opening), the shape that made pairing
removed and added messages by content quadratic. In linear time the two sides cost the same, in
quadratic time the long diff costs four times as much. The diffs run in this process and are
timed in CPU time (``time.process_time``, the collector paused), the best of several runs each,
the two sides taking turns and lasting about as long.
"""

from __future__ import annotations

from typing import Any

import pytest

from pikit import Session, diff_contexts
from tests.entries import asst, session_of, text, user
from tests.timing import cpu_seconds_each

HEADER = {"type": "session", "version": 3, "id": "sess-diff", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
SHORT = 500  # messages per branch; the long branches have four times as many
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


def _contexts(session: Session, a: Any, b: Any) -> tuple[Any, Any]:
    return session.context(a), session.context(b)


@pytest.mark.timeout(120)
def test_branches_four_times_as_long_cost_what_four_short_diffs_cost() -> None:
    short, long = _contexts(*_branches(SHORT)), _contexts(*_branches(4 * SHORT))
    diffs: dict[str, Any] = {}
    shorts, whole = cpu_seconds_each([lambda: diffs.update(short=[diff_contexts(*short) for _ in range(4)][-1]),
                                      lambda: diffs.update(long=diff_contexts(*long))], RUNS)
    for diff, count in ((diffs["short"], SHORT), (diffs["long"], 4 * SHORT)):
        t = diff.totals
        assert (t.same, t.added, t.removed, t.changed) == (1, count, count, 0)
    assert whole <= 2 * shorts, f"branches 4x as long took {whole / shorts:.1f}x the CPU time of four diffs of " \
                                f"the short ones ({whole:.3f} s against {shorts:.3f} s)"
