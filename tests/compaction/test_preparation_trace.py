"""trace_compaction: the walk's figures match a plain walk, and the preparation is unchanged.

The oracle here is the rule written out the slow way (the walk back entry by entry, as
the specification states it), independent of the indexed code ``prepare_compaction`` uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pikit
from pikit import ProjectedEntry, Projection
from pikit.cli._json import compaction as compaction_json
from pikit.compaction import find_cut_point, prepare_compaction, trace_compaction
from tests.compaction.test_preparation import build, conversations
from tests.entries import asst, compaction, edit, text, tool_result, ts, usage, user

_CUT_ROLES = {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}


def _plain_walk(entries: list[ProjectedEntry], start: int, keep: int) -> tuple[int, list[int]]:
    """The entry where the running sum reaches ``keep`` (-1: never) and every running sum (None: not walked)."""
    sums: list[int] = [0] * len(entries)
    total = 0
    reached = -1
    for i in range(len(entries) - 1, start - 1, -1):
        total += sum(entries[i].estimates)
        sums[i] = total
        if reached < 0 and entries[i].tokens and total >= keep:
            reached = i
    return reached, sums


def _check(projection: Projection, branch: list[Any], keep: int) -> None:
    trace = trace_compaction(branch, keep, projection)
    plain = prepare_compaction(branch, keep, projection)
    assert (trace.preparation is None) == (plain is None)
    if trace.preparation is not None and plain is not None:
        assert compaction_json.preparation(trace.preparation) == compaction_json.preparation(plain)
    if branch and branch[-1].type == "compaction":
        assert trace.cut is None and trace.preparation is None and trace.reason
        return
    cut = trace.cut
    assert cut is not None
    entries = projection.entries
    start = cut.start
    head = next((i for i, pe in enumerate(entries) if pe.entry.type == "compaction" and pe.messages), -1)
    assert start == head + 1 and cut.end == len(entries)
    reached, sums = _plain_walk(entries, start, keep)
    cut_points = [i for i in range(start, len(entries))
                  if entries[i].entry.type != "compaction" and _CUT_ROLES & set(entries[i].roles)]
    assert cut.cut_points == cut_points
    assert [cut.is_cut_point(i) for i in range(start, len(entries))] == \
        [i in cut_points for i in range(start, len(entries))]
    if not cut_points:
        assert (cut.reached_index, cut.nearest_cut_index) == (-1, -1)
    else:
        assert cut.reached_index == reached
        nearest = next((c for c in cut_points if c >= reached), cut_points[-1]) if reached >= 0 else cut_points[0]
        assert cut.nearest_cut_index == nearest
        assert cut.recovered_index in (nearest, nearest + 1)
        assert cut.recovered_index - cut.pulled_back == cut.cut.first_kept_index
    for i in range(start, len(entries)):
        assert cut.running_sum(i) == sums[i]
        assert cut.estimate(i) == entries[i].tokens
    assert cut.cut == find_cut_point(entries, start, len(entries), keep)
    prep = trace.preparation
    if prep is not None:
        assert trace.reason is None
        assert (prep.first_kept_index, prep.turn_start_index, prep.is_split_turn) == \
            (cut.cut.first_kept_index, cut.cut.turn_start_index, cut.cut.is_split_turn)
    else:
        assert trace.reason


@pytest.mark.parametrize("name", ["before-compaction.jsonl", "compaction-chain.jsonl", "context-edits.jsonl",
                                  "split-turn.jsonl", "system-replay.jsonl", "usage.jsonl", "retain-none.jsonl"])
def test_trace_matches_a_plain_walk_on_pi_sessions(shared_sessions: Path, name: str) -> None:
    session = pikit.load(shared_sessions / name)
    leaves = [*[e.id for e in session.entries][::max(1, len(session.entries) // 25)], session.leaf_id]
    for leaf in leaves:
        branch = session.branch(leaf)
        projection = session.context(leaf)
        for keep in (0, 1, 50, 400, 2_000, 20_000, 10**9):
            _check(projection, branch, keep)


def test_trace_matches_a_plain_walk_on_the_samples(sample_sessions: Path) -> None:
    session = pikit.load(sample_sessions / "refactor-auth.jsonl")
    branch = session.branch()
    projection = session.context()
    for keep in range(0, 12_000, 250):
        _check(projection, branch, keep)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.integers(0, 400))
def test_trace_matches_a_plain_walk(entries: list[dict[str, Any]], keep: int) -> None:
    session = build(entries)
    branch = session.branch()
    _check(session.context(), branch, keep)


def test_reasons_when_there_is_nothing_to_compact() -> None:
    entries = [user("u1", None, 1, "hello " * 20), asst("a1", "u1", 2, text("hi " * 20), usage(50, 5))]
    session = build(entries)
    trace = trace_compaction(session.branch(), 10_000, session.context())
    assert trace.preparation is None
    assert trace.reason is not None and "fits" in trace.reason
    assert trace.cut is not None and not trace.cut.reached and trace.cut.walked == range(0, 2)
    assert trace.cut.running_sum(0) == sum(pe.tokens for pe in session.context().entries)

    compacted = build([*entries, compaction("c1", "a1", 3, "a1", "summary", 60)])
    trace = trace_compaction(compacted.branch(), 10, compacted.context())
    assert (trace.cut, trace.preparation, trace.reason) == (None, None, "the leaf is a compaction")


def test_recovery_and_pull_back_are_visible() -> None:
    recovery = build([
        user("u1", None, 1, "first request " * 10), asst("a1", "u1", 2, text("first answer " * 10), usage(100, 10)),
        user("u2", "a1", 3, "second request " * 10),
        asst("a2", "u2", 4, text("partial failed answer " * 20), usage(150, 10), stop="length"),
        edit("e1", "a2", 5, "a2", None),
    ])
    trace = trace_compaction(recovery.branch(), 1, recovery.context())
    assert trace.cut is not None
    assert trace.cut.recovered_index == trace.cut.nearest_cut_index + 1

    pulled = build([
        user("u1", None, 1, "first request " * 40), asst("a1", "u1", 2, text("answer " * 40), usage(100, 10)),
        {"type": "label", "id": "l1", "parentId": "a1", "timestamp": ts(3), "targetId": "u1", "label": "start"},
        user("u2", "l1", 4, "second request " * 30),
        asst("a2", "u2", 5, text("second answer " * 30), usage(200, 10)),
        tool_result("r1", "a2", 6, text("x")),
    ])
    projection = pulled.context()
    ids = [pe.entry.id for pe in projection.entries]
    keep = sum(pe.tokens for pe in projection.entries[ids.index("u2"):])
    trace = trace_compaction(pulled.branch(), keep, projection)
    assert trace.cut is not None and trace.preparation is not None
    assert trace.cut.nearest_cut_index == ids.index("u2")
    assert trace.cut.pulled_back == 1 and trace.preparation.first_kept_entry_id == "l1"
