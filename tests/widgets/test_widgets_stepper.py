"""The compaction stepper without a browser: steps, settings, summarizer failures, escaping, rendering."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit.compaction import Settings, SummaryRequest, SummaryResult, prepare_compaction, trace_compaction, walkthrough
from pikit.compaction._walkthrough import Fold, StepRow
from pikit.errors import SummarizerError
from pikit.widgets import CompactionStepper
from pikit.widgets._views.stepper import render_rows, render_step, render_walkthrough
from tests.widgets.synthetic import PAYLOAD

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample_sessions" / "refactor-auth.jsonl"
_ROW = re.compile(r'<tr class="pikit-step-row( pikit-step-hl)?[^"]*"[^>]*data-entry-id="([^"]*)"')
_FOLD = re.compile(r'<tr class="pikit-step-fold" data-highlighted="(\d+)"')


@pytest.fixture
def refactor() -> pikit.Session:
    return pikit.load(SAMPLE)


def highlighted_in(html: str) -> tuple[list[str], int]:
    """The highlighted rows shown in a step's HTML, and how many the folds hide."""
    shown = [entry for lit, entry in _ROW.findall(html) if lit]
    return shown, sum(int(n) for n in _FOLD.findall(html))


class Failing:
    name = "failing"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        raise SummarizerError("the model is unreachable")


class Counting:
    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        self.calls += 1
        return SummaryResult(f"summary #{self.calls} of {len(request.messages)} messages", None)


def test_steps_through_and_highlights_what_prepare_compaction_decides(refactor: pikit.Session) -> None:
    stepper = CompactionStepper(refactor, keep_recent_tokens=4_000)
    prep = prepare_compaction(refactor.branch(), 4_000, refactor.context())
    assert prep is not None
    assert stepper.step == 1 and stepper.back_button.disabled and not stepper.next_button.disabled
    seen = []
    for number in range(1, 8):
        assert stepper.step == number and stepper.status == "ready"
        html = stepper.body.value
        assert f'data-step="{number}"' in html
        shown, folded = highlighted_in(html)
        assert set(shown) <= set(stepper.highlighted)
        assert len(shown) + folded == len(stepper.highlighted)
        seen.append(stepper.highlighted)
        stepper.next()
    assert stepper.step == 7 and stepper.next_button.disabled
    assert seen[2][-1] == prep.first_kept_entry_id
    assert seen[4] == tuple(prep.summarized_entry_ids)
    assert stepper.result is not None and seen[6][0] == stepper.result.entry["id"]
    stepper.back()
    assert stepper.step == 6 and stepper.slider.value == 6
    stepper.slider.value = 2
    assert stepper.step == 2 and "reaches keepRecentTokens at entry" in stepper.body.value


def test_settings_and_leaf_recompute(refactor: pikit.Session) -> None:
    stepper = CompactionStepper(refactor, keep_recent_tokens=4_000, step=5)
    before = stepper.highlighted
    stepper.keep_box.value = 2_500
    assert stepper.keep_recent_tokens == 2_500 and stepper.highlighted != before
    prep = prepare_compaction(refactor.branch(), 2_500, refactor.context())
    assert prep is not None and stepper.highlighted == tuple(prep.summarized_entry_ids)
    stepper.keep_recent_tokens = 10**8
    assert stepper.walk.reason is not None and "Nothing to compact" in stepper.body.value
    leaf = refactor.branch()[-10].id
    stepper.keep_recent_tokens = 1_000
    stepper.leaf_id = leaf
    assert stepper.trace is not None and stepper.trace.projection.leaf_id == leaf
    other = trace_compaction(refactor.branch(leaf), 1_000, refactor.context(leaf)).preparation
    assert other is not None and stepper.highlighted == tuple(other.summarized_entry_ids)
    stepper.leaf_id = None
    assert stepper.status == "error" and "nothing to compact" in stepper.body.value


def test_default_settings_from_pi(refactor: pikit.Session) -> None:
    stepper = CompactionStepper(refactor, settings=Settings({"compaction": {"keepRecentTokens": 3_210}}))
    assert stepper.keep_recent_tokens == 3_210


def test_summarizer_runs_once_per_setting_and_failures_are_shown(refactor: pikit.Session) -> None:
    counting = Counting()
    stepper = CompactionStepper(refactor, keep_recent_tokens=4_000, summarizer=counting)
    assert counting.calls == 0  # nothing is summarized before step 6
    stepper.step = 6
    calls = counting.calls
    assert calls in (1, 2) and "summary #1" in stepper.body.value
    stepper.step = 7
    stepper.step = 6
    assert counting.calls == calls
    # A summarizer that is not the offline one runs only when asked: not on every setting change.
    stepper.keep_recent_tokens = 3_000
    assert counting.calls == calls and stepper.result is None and "not written yet" in stepper.body.value
    assert stepper.summarize_button.layout.display is None
    stepper.summarize_button.click()
    assert counting.calls > calls and stepper.result is not None
    assert stepper.summarize_button.layout.display == "none"
    stepper.set_summarizer(Failing())
    assert stepper.status == "ready" and stepper.result is None and "not written yet" in stepper.body.value
    stepper.summarize_button.click()
    assert stepper.status == "error" and "the model is unreachable" in stepper.body.value
    assert stepper.result is None and stepper.summarize_button.layout.display is None
    stepper.set_summarizer(None)  # the offline one runs at once
    assert stepper.status == "ready" and "offline" in stepper.header.value and stepper.result is not None


class Verbose:
    name = "verbose"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        return SummaryResult("## Goal\n" + "word " * 200_000, None)


def test_a_summary_larger_than_what_it_replaces_is_flagged(refactor: pikit.Session) -> None:
    stepper = CompactionStepper(refactor, keep_recent_tokens=4_000, summarizer=Verbose(), step=6)
    stepper.summarize_button.click()
    result = stepper.result
    assert result is not None and result.is_larger
    for step in (6, 7):
        stepper.step = step
        assert "larger than what it replaces" in stepper.body.value
        assert f"({result.summary_tokens:,} tokens)" in stepper.body.value
    stepper.set_summarizer(None)  # the offline summary is smaller: no warning
    stepper.step = 7
    assert stepper.result is not None and not stepper.result.is_larger
    assert "larger than what it replaces" not in stepper.body.value


def test_unknown_leaf_is_refused(refactor: pikit.Session) -> None:
    with pytest.raises(Exception, match="no entry"):
        CompactionStepper(refactor, "nope")


def test_every_step_escapes_session_text(hostile: pikit.Session) -> None:
    for entry in hostile.entries:
        stepper = CompactionStepper(hostile, entry.id, keep_recent_tokens=1)
        for number in range(1, 8):
            stepper.step = number
            for value in (stepper.body.value, stepper.header.value):
                lowered = value.lower()
                assert "<script" not in lowered and "<img" not in lowered and 'onerror="' not in lowered
    assert PAYLOAD not in render_walkthrough(walkthrough(trace_compaction(
        hostile.branch(), 1, hostile.context())))


def test_render_marks_rows_and_folds(refactor: pikit.Session) -> None:
    walk = walkthrough(trace_compaction(refactor.branch(), 300, refactor.context()))
    step = walk.step(5)
    html = render_rows(step)
    rows = [r for r in step.rows if isinstance(r, StepRow)]
    folds = [r for r in step.rows if isinstance(r, Fold)]
    assert html.count('<tr class="pikit-step-row') == len(rows)
    assert html.count('class="pikit-step-fold"') == len(folds)
    assert "running sum" not in html and "running sum" in render_rows(walk.step(1))
    page = render_step(walk, 5)
    assert 'aria-current="step"' in page and "Step 5 of 7" in page
    assert page.count('<li class="pikit-step-done"') == 4


def test_repr_is_short(refactor: pikit.Session) -> None:
    stepper: Any = CompactionStepper(refactor, keep_recent_tokens=4_000)
    assert len(repr(stepper)) < 120


@pytest.mark.parametrize("name", ["compaction-chain.jsonl", "context-edits.jsonl", "split-turn.jsonl",
                                  "tree-basic.jsonl", "system-replay.jsonl"])
def test_any_leaf_of_pi_sessions(name: str, shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / name)
    stepper = CompactionStepper(session, keep_recent_tokens=200)
    for entry in session.entries[::max(1, len(session.entries) // 30)]:
        stepper.leaf_id = entry.id
        for number in range(1, 8):
            stepper.step = number
            assert stepper.status == "ready", (entry.id, number, stepper.body.value[:300])
            shown, folded = highlighted_in(stepper.body.value)
            assert len(shown) + folded == len(stepper.highlighted)
        prep = stepper.trace.preparation if stepper.trace is not None else None
        if prep is not None:
            assert stepper.walk.step(5).highlighted == tuple(prep.summarized_entry_ids)


def test_the_explorer_opens_a_stepper_that_follows_its_leaf(refactor: pikit.Session) -> None:
    from pikit.widgets import SessionExplorer

    explorer = SessionExplorer(refactor, keep_recent_tokens=4_000)
    assert explorer.stepper is None  # made on first use only
    explorer.stepper_launcher.toggle.value = True
    stepper = explorer.stepper
    assert stepper is not None and stepper is explorer.open_stepper()
    assert stepper.leaf_id == explorer.leaf_id and stepper.keep_recent_tokens == 4_000
    leaf = refactor.branch()[-20].id
    explorer.leaf_id = leaf
    assert stepper.leaf_id == leaf and stepper.trace is not None and stepper.trace.projection.leaf_id == leaf
    explorer.budget.keep_recent_tokens = 1_500
    prep = prepare_compaction(refactor.branch(leaf), 1_500, refactor.context(leaf))
    stepper.step = 5
    assert prep is not None and stepper.highlighted == tuple(prep.summarized_entry_ids)
    explorer.stepper_launcher.toggle.value = False
    assert stepper.layout.display == "none"


def test_the_panel_opens_a_stepper_with_its_settings_and_summarizer(refactor: pikit.Session, tmp_path: Path) -> None:
    from pikit.widgets import CompactionPanel

    counting = Counting()
    panel = CompactionPanel(refactor, settings=Settings({}), output_dir=tmp_path, summarizer=counting,
                            keep_recent_tokens=3_000)
    stepper = panel.open_stepper()
    assert panel.stepper is stepper and stepper.keep_recent_tokens == 3_000
    panel.keep_recent_tokens = 2_500
    assert stepper.keep_recent_tokens == 2_500
    stepper.step = 6
    assert stepper.status == "ready" and counting.calls >= 1 and "summary #" in stepper.body.value
    assert "counting" in stepper.header.value
    panel.summarizer_picker.value = "openai"  # not called on a change of setting: only when asked
    assert stepper.status == "ready" and stepper.result is None and "openai" in stepper.header.value
    panel.summarizer_picker.value = "offline"
    assert stepper.status == "ready" and "offline" in stepper.header.value
    assert stepper.result is not None and stepper.result.preparation.keep_recent_tokens == 2_500
    assert not list(tmp_path.iterdir())  # stepping writes nothing


def test_arrow_keys_from_the_page(refactor: pikit.Session) -> None:
    stepper = CompactionStepper(refactor, keep_recent_tokens=4_000)
    keys: Any = stepper.children[2]
    for action, step in (("next", 2), ("next", 3), ("back", 2), ("last", 7), ("first", 1), ("junk", 1)):
        keys._handle_custom_msg({"action": action}, [])
        assert stepper.step == step, action


def test_the_explorer_highlights_the_step_in_its_tree_and_context(refactor: pikit.Session) -> None:
    from pikit.widgets import SessionExplorer

    explorer = SessionExplorer(refactor, keep_recent_tokens=4_000)
    stepper = explorer.open_stepper()
    scope = stepper.highlight_scope
    assert scope is not None and scope in explorer._dom_classes
    css = stepper.highlight.value
    assert css.startswith("<style>") and f".{scope} .pikit-tree-row" in css
    assert all(f'data-entry-id="{entry}"' in css for entry in stepper.highlighted)
    stepper.step = 7  # the new context is not in the session: nothing to highlight there
    assert stepper.highlight.value == ""
    explorer.stepper_launcher.show(False)
    assert stepper.highlight.value == ""


def test_highlight_css_escapes_ids() -> None:
    from pikit.compaction import Step
    from pikit.widgets._views.stepper import highlight_css

    step = Step(1, "t", "s", ("ok-1", '"]</style><script>x()</script>', "é"), ())
    css = highlight_css(step, "scope")
    body = css[len("<style>"):-len("</style>")]
    assert "<" not in body and 'data-entry-id="ok-1"' in css
    assert body.count('"') == 4 * 3  # each id opens and closes its string twice, and nothing else does
    assert highlight_css(Step(7, "t", "s", ("a",), (), view="after"), "scope") == ""


def test_the_trigger_follows_the_panels_window_and_reserve(refactor: pikit.Session, tmp_path: Path) -> None:
    from pikit.widgets import CompactionPanel

    panel = CompactionPanel(refactor, settings=Settings({}), output_dir=tmp_path, keep_recent_tokens=3_000,
                            context_window=200_000, reserve_tokens=16_384)
    stepper = panel.open_stepper()
    assert (stepper.context_window, stepper.reserve_tokens) == (200_000, 16_384)
    assert "Pi would not compact here yet" in stepper.body.value
    panel.context_window = 12_000
    assert stepper.context_window == 12_000 and "Pi compacts here on its own" in stepper.body.value


def test_bad_settings_fall_back_to_the_defaults_and_say_why(refactor: pikit.Session) -> None:
    stepper = CompactionStepper(refactor, settings=Settings({"compaction": {"keepRecentTokens": -1}}))
    assert stepper.keep_recent_tokens == 20_000 and stepper.status == "ready"
    assert "settings:" in stepper.header.value and "non-negative" in stepper.header.value


def test_every_mark_has_a_colour_of_its_own() -> None:
    """The legend tells marks apart by colour: the split turn's start and its prefix, what is summarized and the
    previous compaction, the new summary and what it summarizes are never drawn alike."""
    from pikit.compaction._walkthrough import MARKS
    from pikit.widgets._views.stepper import _MARK_COLOURS

    assert set(_MARK_COLOURS) == set(MARKS)
    assert len(set(_MARK_COLOURS.values())) == len(_MARK_COLOURS)
