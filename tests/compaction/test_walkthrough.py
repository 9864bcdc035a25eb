"""pikit.compaction._walkthrough: the seven steps name the entries prepare_compaction decides on, with its figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pikit
from pikit._formatting import fmt_int
from pikit.compaction import (
    CompactionTrace,
    Step,
    Walkthrough,
    build_compaction,
    compact_prepared,
    prepare_compaction,
    trace_compaction,
    walkthrough,
)
from pikit.compaction._walkthrough import STEP_TITLES, Fold, StepRow
from pikit.llm import OfflineSummarizer
from tests.compaction.test_preparation import build, conversations
from tests.entries import asst, compaction, text, usage, user


def _figures(step: Step) -> dict[str, str]:
    return dict(step.figures)


def _covers(step: Step, size: int) -> None:
    """The rows and folds tile the view in order, and account for every highlighted entry."""
    position = 0
    shown_highlighted = 0
    folded_highlighted = 0
    for row in step.rows:
        if isinstance(row, Fold):
            assert row.start == position and row.stop > row.start
            position = row.stop
            folded_highlighted += row.highlighted
        else:
            assert row.index == position
            position += 1
            shown_highlighted += row.highlighted
            assert row.highlighted == (row.entry_id in step.highlighted)
    assert position == size
    assert shown_highlighted + folded_highlighted == len(step.highlighted)


def _trace(session: pikit.Session, keep: int, leaf: Any = None) -> CompactionTrace:
    projection = session.context(leaf if leaf is not None else session.leaf_id)
    return trace_compaction(projection.path, keep, projection)


@pytest.fixture(scope="module")
def refactor(sample_sessions: Path) -> pikit.Session:
    return pikit.load(sample_sessions / "refactor-auth.jsonl")


@pytest.mark.parametrize("keep", [300, 2_500, 4_000, 6_000])
def test_steps_follow_prepare_compaction(refactor: pikit.Session, keep: int) -> None:
    trace = _trace(refactor, keep)
    prep = prepare_compaction(refactor.branch(), keep, refactor.context())
    assert prep is not None and trace.preparation is not None and trace.cut is not None
    result = compact_prepared(refactor, trace.preparation, summarizer=OfflineSummarizer())
    walk = walkthrough(trace, result, summarizer="offline")
    assert isinstance(walk, Walkthrough) and len(walk) == 7 and walk.summarized
    assert [s.title for s in walk.steps] == list(STEP_TITLES)
    entries = prep.projection.entries
    ids = [pe.entry.id for pe in entries]

    walk_step, reach, cut, turn, span, summary, after = walk.steps
    # 1: the walked entries, their running sums the suffix sums of the estimates
    reached = trace.cut.reached_index
    assert walk_step.highlighted == tuple(ids[reached:])
    for row in walk_step.rows:
        if isinstance(row, StepRow) and row.mark == "walked":
            assert row.running_sum == sum(pe.tokens for pe in entries[row.index:])
    assert _figures(walk_step)["keepRecentTokens"] == fmt_int(keep)
    # 2: the entry where the sum reaches keepRecentTokens
    assert reach.highlighted == (ids[reached],)
    assert sum(pe.tokens for pe in entries[reached:]) >= keep > sum(pe.tokens for pe in entries[reached + 1:])
    # 3: the cut is prepare_compaction's first kept entry
    assert cut.highlighted[-1] == prep.first_kept_entry_id
    assert _figures(cut)["first kept"] == prep.first_kept_entry_id
    # 4: the turn prefix, or the first kept entry when no turn is split
    if prep.is_split_turn:
        assert turn.highlighted == tuple(ids[prep.turn_start_index:prep.first_kept_index])
    else:
        assert turn.highlighted == (prep.first_kept_entry_id,)
    # 5 and 6: what is summarized
    assert span.highlighted == tuple(prep.summarized_entry_ids) == summary.highlighted
    assert _figures(span)["messages to summarize"] == fmt_int(len(prep.messages_to_summarize))
    assert span.text == prep.file_lists_text.strip()
    assert summary.text == result.entry["summary"]
    # 7: the new context: the new compaction, then the kept entries
    assert after.view == "after"
    assert after.highlighted[0] == result.entry["id"]
    assert list(after.highlighted[1:]) == [pe.entry.id for pe in entries[prep.first_kept_index:] if pe.messages]
    assert _figures(after)["tokensAfter"] == fmt_int(result.tokens_after)
    assert _figures(after)["tokensBefore"] == fmt_int(prep.tokens_before)
    for step in walk.steps[:6]:
        _covers(step, len(entries))
    _covers(after, sum(1 for r in after.rows if isinstance(r, StepRow)) + sum(
        r.count for r in after.rows if isinstance(r, Fold)))


def test_same_result_as_build_compaction(refactor: pikit.Session) -> None:
    trace = _trace(refactor, 4_000)
    assert trace.preparation is not None
    ours = compact_prepared(refactor, trace.preparation, summarizer=OfflineSummarizer())
    theirs = build_compaction(refactor, keep_recent_tokens=4_000, summarizer=OfflineSummarizer())
    strip = ("id", "timestamp")
    assert {k: v for k, v in ours.entry.items() if k not in strip and k != "systemMessage"} == \
        {k: v for k, v in theirs.entry.items() if k not in strip and k != "systemMessage"}
    assert (ours.tokens_before, ours.tokens_after) == (theirs.tokens_before, theirs.tokens_after)


def test_without_a_result_the_summary_steps_wait(refactor: pikit.Session) -> None:
    walk = walkthrough(_trace(refactor, 4_000))
    assert not walk.summarized
    assert "not written yet" in walk.step(6).sentence
    assert walk.step(7).rows == () and walk.step(7).view == "after"
    with pytest.raises(IndexError):
        walk.step(0)
    with pytest.raises(IndexError):
        walk.step(8)


def test_a_result_from_another_preparation_is_refused(refactor: pikit.Session) -> None:
    other = _trace(refactor, 300)
    assert other.preparation is not None
    result = compact_prepared(refactor, other.preparation, summarizer=OfflineSummarizer())
    with pytest.raises(ValueError, match="not built from"):
        walkthrough(_trace(refactor, 4_000), result)


def test_everything_fits(refactor: pikit.Session) -> None:
    walk = walkthrough(_trace(refactor, 10**7))
    assert walk.reason is not None and "fits" in walk.reason
    assert walk.step(2).highlighted == ()
    assert "never reaches" in walk.step(2).sentence
    assert "first valid cut point" in walk.step(3).sentence
    for number in range(4, 8):
        assert walk.step(number).sentence.startswith("Nothing to compact")
        assert walk.step(number).highlighted == ()


def test_leaf_is_a_compaction() -> None:
    session = build([user("u1", None, 1, "hello " * 30), asst("a1", "u1", 2, text("hi " * 30), usage(50, 5)),
                     compaction("c1", "a1", 3, "a1", "summary", 60)])
    walk = walkthrough(_trace(session, 10))
    assert walk.reason == "the leaf is a compaction"
    assert all(s.sentence.startswith("Nothing to compact") and s.highlighted == () for s in walk.steps)


def test_cut_moves_forward_from_a_tool_result(refactor: pikit.Session) -> None:
    for keep in range(200, 8_000, 97):
        trace = _trace(refactor, keep)
        cut = trace.cut
        assert cut is not None
        if cut.reached and cut.nearest_cut_index > cut.reached_index:
            step = walkthrough(trace).step(3)
            assert "not a valid cut point" in step.sentence
            marks = {r.index: r.mark for r in step.rows if isinstance(r, StepRow)}
            assert marks[cut.reached_index] == "reached"
            assert marks[cut.cut.first_kept_index] == "cut"
            return
    pytest.fail("no keepRecentTokens value lands on a tool result in the sample")


def test_long_runs_are_folded(refactor: pikit.Session) -> None:
    walk = walkthrough(_trace(refactor, 300))
    span = walk.step(5)
    folds = [r for r in span.rows if isinstance(r, Fold)]
    assert folds and sum(f.highlighted for f in folds) > 0
    assert sum(1 for r in span.rows if isinstance(r, StepRow)) <= 20


def test_rows_show_the_summary_of_a_compaction(refactor: pikit.Session) -> None:
    row = next(r for r in walkthrough(_trace(refactor, 4_000)).step(5).rows if isinstance(r, StepRow))
    assert row.mark == "previous" and row.role == "compactionSummary" and row.kind == "compaction"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.integers(0, 400))
def test_windows_account_for_every_highlighted_entry(entries: list[dict[str, Any]], keep: int) -> None:
    session = build(entries)
    trace = _trace(session, keep)
    result = (compact_prepared(session, trace.preparation, summarizer=OfflineSummarizer())
              if trace.preparation is not None else None)
    walk = walkthrough(trace, result)
    size = len(trace.projection.entries)
    for step in walk.steps:
        if step.view == "after":
            if step.rows:
                assert result is not None
                _covers(step, sum(1 if isinstance(r, StepRow) else r.count for r in step.rows))
        else:
            _covers(step, size)
    if trace.preparation is not None:
        assert walk.step(5).highlighted == tuple(trace.preparation.summarized_entry_ids)
        assert trace.preparation.first_kept_entry_id in walk.step(3).highlighted


def test_no_cut_point_after_the_reached_entry_takes_the_last_one() -> None:
    from tests.entries import tool_result

    session = build([user("u1", None, 1, "first request " * 40), asst("a1", "u1", 2, text("answer " * 40)),
                     user("u2", "a1", 3, "second request " * 30), asst("a2", "u2", 4, text("second answer " * 30)),
                     tool_result("r1", "a2", 5, text("x"))])
    trace = _trace(session, 1)
    assert trace.cut is not None and trace.cut.nearest_cut_index < trace.cut.reached_index
    step = walkthrough(trace).step(3)
    assert "no valid cut point follows it" in step.sentence and "a2" in step.sentence
    assert dict(step.figures)["moved"] == "back 1 entry"


def test_step_one_says_whether_pis_trigger_fires(refactor: pikit.Session) -> None:
    from pikit.compaction import CompactionSettings

    trace = _trace(refactor, 4_000)
    size = trace.projection.tokens
    settings = CompactionSettings(True, 3_000, 4_000)
    fires = walkthrough(trace, settings=settings, context_window=size + 3_000 - 1).step(1).notes[0]
    assert fires.startswith("Pi compacts here on its own") and fmt_int(size) in fires
    waits = walkthrough(trace, settings=settings, context_window=size + 3_000).step(1).notes[0]
    assert waits.startswith("Pi would not compact here yet")
    assert not any("threshold" in n for n in walkthrough(trace).step(1).notes)


def test_reprs_are_short(refactor: pikit.Session) -> None:
    walk = walkthrough(_trace(refactor, 4_000))
    assert repr(walk) == "<Walkthrough at '0ce8fc25' keepRecentTokens=4,000: 7 steps, not summarized yet>"
    assert repr(walk.step(2)) == "<Step 2: Where the sum reaches keepRecentTokens (1 entry highlighted)>"
    assert "everything fits" in repr(walkthrough(_trace(refactor, 10**7)))


def test_a_previous_summary_that_is_a_number_is_walked_through() -> None:
    entries = [user("u1", None, 1, "old stuff " * 20), asst("a1", "u1", 2, text("ok " * 20), usage(50, 5)),
               compaction("c1", "a1", 3, "a1", 1.5, 60), user("u2", "c1", 4, "new stuff " * 20),
               asst("a2", "u2", 5, text("fine " * 20), usage(90, 9)), user("u3", "a2", 6, "more " * 20),
               asst("a3", "u3", 7, text("done " * 20), usage(120, 12))]
    session = build(entries)
    walk = walkthrough(_trace(session, 50))
    assert "updating the previous summary (3 characters)" in walk.step(5).sentence
