"""ContextView, BudgetBar and ContextDiff built headless: Python state and the HTML they render."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import traitlets

from pikit import Session
from pikit.compaction import Settings
from pikit.widgets import (
    BudgetBar,
    CompactionPanel,
    CompactionStepper,
    ContextDiff,
    ContextView,
    SessionExplorer,
    TreeView,
    budget_segments,
    compaction_history,
    context_rows,
)
from pikit.widgets._state import state_for
from pikit.widgets._views.context import context_page
from pikit.widgets._views.tree import tree_layout


def row_sources(html: str) -> list[str]:
    return re.findall(r'<tr class="pikit-context-row[^"]*" data-entry-id="([^"]+)"', html)


# ---------------------------------------------------------------------------------- ContextView
def test_context_view_rows_and_figures(tree_basic: Session) -> None:
    view = ContextView(tree_basic, "5c9c1898")
    p = tree_basic.context("5c9c1898")
    assert [r.entry.entry.id for r in view.rows if r.message is not None] == p.sources
    html = view.body.value
    assert row_sources(html) == p.sources
    header = view.header.value
    assert f"{len(p.messages)}</b> messages" in header
    assert "context size" in header and "pikit-context-tokens" in header
    # Each message row shows its estimate; recorded usage appears on assistant messages.
    for i, estimate in enumerate(p.estimates):
        assert f'data-index="{i}"' in html
        assert str(estimate) in html
    assert "real count" in header  # tiktoken (offline cl100k) is installed in the test environment


def test_context_view_compaction_block_and_zones(compaction_chain: Session) -> None:
    view = ContextView(compaction_chain)
    zones = [r.zone for r in view.rows]
    assert zones[0] == "summary"
    assert zones[1:4] == ["kept", "kept", "kept"]
    assert set(zones[4:]) == {"new"}
    header = view.header.value
    assert "pikit-compaction-block" in header and "799eac36" in header
    assert "kept range: from" in header and "3fc6dd22" in header and "1bc870e5" in header
    assert "pikit-zone-kept" in view.body.value and "pikit-zone-summary" in view.body.value
    assert "pikit-marker-summary" in view.body.value


def test_context_view_edit_markers(context_edits: Session) -> None:
    view = ContextView(context_edits, "a98e926a")
    body = view.body.value
    assert "pikit-marker-omitted" in body and "omitted by edit 1de23150" in body
    assert "pikit-marker-replaced" in body and "replaced by edit" in body
    assert "<b>1</b> omitted, <b>2</b> replaced" in view.header.value


def test_context_view_silent_entries_and_paging(compaction_chain: Session) -> None:
    view = ContextView(compaction_chain, page_size=5)
    assert view.pages == -(-len(view.rows) // 5)
    assert view.current_page == view.pages - 1  # the leaf's end is shown first
    last_page = row_sources(view.body.value)
    assert last_page == [r.entry.entry.id for r in view.rows[-5:]]  # a whole page of the newest rows
    view.page = 0  # the oldest rows, what the pages counted back from the newest leave over
    assert row_sources(view.body.value) == [r.entry.entry.id for r in view.rows[:len(view.rows) % 5 or 5]]
    assert last_page != row_sources(view.body.value)
    buttons = {b._dom_classes[0]: b for b in view.pager.children if hasattr(b, "on_click")}
    buttons["pikit-page-next"].click()
    assert view.current_page == 1
    buttons["pikit-page-last"].click()
    assert view.current_page == view.pages - 1
    buttons["pikit-page-first"].click()
    assert view.current_page == 0
    count = len(view.rows)
    view.show_silent = True
    assert len(view.rows) >= count


def test_long_tool_output_is_collapsible(compaction_chain: Session) -> None:
    view = ContextView(compaction_chain, page_size=500)
    assert '<details class="pikit-more">' in view.body.value
    assert "show all (" in view.body.value


def test_context_view_reset_leaf_and_bad_leaf(tree_basic: Session) -> None:
    view = ContextView(tree_basic, None)
    assert "empty context" in view.header.value
    assert "No messages" in view.body.value
    with pytest.raises(traitlets.TraitError):
        view.leaf_id = "nope"
    with pytest.raises(traitlets.TraitError):
        ContextView(tree_basic, "nope")


def test_context_rows_helper(context_edits: Session) -> None:
    p = context_edits.context("a98e926a")
    rows = context_rows(p)
    assert [r.index for r in rows if r.message is not None] == list(range(len(p.messages)))
    assert any(r.message is None and r.entry.status == "omitted" for r in rows)
    assert len(context_rows(p, include_silent=True)) >= len(rows)


# ---------------------------------------------------------------------------------- BudgetBar
def test_budget_segments_add_up(compaction_chain: Session) -> None:
    p = compaction_chain.context()
    seg = budget_segments(p)
    assert seg.summary == 76  # the compaction summary's estimate
    assert seg.kept + seg.new + seg.summary == sum(e for m, e in zip(p.messages, p.estimates, strict=True)
                                                   if m["role"] != "system")
    assert seg.tokens == p.tokens
    assert seg.unitemized == max(0, p.tokens - seg.total)


def test_budget_bar_html_and_traits(compaction_chain: Session) -> None:
    bar = BudgetBar(compaction_chain, settings=Settings({}))
    assert bar.model == "anthropic/claude-sonnet-4-5"
    assert bar.context_window == 200_000 and bar.reserve_tokens == 16_384 and bar.keep_recent_tokens == 20_000
    html = bar.html.value
    for css in ("pikit-budget-summary", "pikit-budget-kept", "pikit-budget-new", "pikit-budget-threshold",
                "pikit-budget-keep", "pikit-budget-size"):
        assert css in html
    assert "threshold 183,616" in html and "window 200,000 (catalog pi 1.6.0)" in html
    assert bar.window_source == "catalog pi 1.6.0"
    bar.reserve_tokens = 190_000  # threshold 10 000: now over it
    assert "over the threshold" in bar.html.value
    bar.context_window = 1_000_000
    assert "window 1,000,000 (a setting/argument)" in bar.html.value and bar.window_source == "a setting/argument"
    bar.leaf_id = None
    assert "context size <b class=\"pikit-budget-tokens\">0</b>" in bar.html.value


def test_budget_bar_uses_model_overrides(compaction_chain: Session) -> None:
    settings = Settings({"compaction": {"modelOverrides": {
        "anthropic/claude-sonnet-4-5": {"reserveTokens": 5000, "keepRecentTokens": 3000}}}})
    bar = BudgetBar(compaction_chain, settings=settings)
    assert (bar.reserve_tokens, bar.keep_recent_tokens) == (5000, 3000)
    bar2 = BudgetBar(compaction_chain, model="openai/gpt-4o", settings=settings)
    assert bar2.context_window == 128_000 and bar2.reserve_tokens == 16_384


def test_budget_bar_of_an_unknown_model_draws_no_threshold(compaction_chain: Session) -> None:
    bar = BudgetBar(compaction_chain, model="acme/mystery-1", settings=Settings({}))
    assert (bar.context_window, bar.window_source, bar.threshold) == (None, None, None)
    html = bar.html.value
    assert "window unknown: pass --context-window or add the model to ~/.pi/agent/models.json" in html
    assert "pikit-budget-threshold" not in html and "128,000" not in html and "over the threshold" not in html
    assert bar.view is not None and not bar.view.over
    bar.context_window = 50_000  # given by hand: now there is a threshold, named as given
    assert "threshold 33,616" in bar.html.value and "(a setting/argument)" in bar.html.value


def test_budget_bar_bad_settings_are_reported_not_raised(compaction_chain: Session, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text('{"compaction": {"reserveTokens": "lots"}}')
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    bar = BudgetBar(compaction_chain)
    assert bar.reserve_tokens == 16_384
    assert "settings could not be read" in bar.html.value


# ---------------------------------------------------------------------------------- ContextDiff
def test_context_diff_two_leaves(tree_basic: Session) -> None:
    widget = ContextDiff(tree_basic, "f57dd6ab", "5c9c1898")
    assert widget.diff is not None
    t = widget.diff.totals
    header = widget.header.value
    assert f"+{t.added} added" in header and f"−{t.removed} removed" in header
    assert "branches share the path up to" in header and "1e2feb89" in header
    body = widget.body.value
    assert body.count('data-status="added"') == t.added
    assert body.count('data-status="removed"') == t.removed
    widget.swap()
    assert (widget.a, widget.b) == ("5c9c1898", "f57dd6ab")
    assert widget.diff.totals.added == t.removed
    assert widget.pick_a.value == "5c9c1898"
    widget.pick_b.value = "5c9c1898"
    assert widget.diff.identical


def test_context_diff_around_a_compaction(compaction_chain: Session) -> None:
    widget = ContextDiff(compaction_chain, compaction="799eac36")
    assert widget.diff is not None
    body = widget.body.value
    assert body.count('data-status="added"') == 1
    assert 'data-entry-id="799eac36"' in body
    assert "identical" not in body or "pikit-diff-fold" in body
    assert widget.pick_compaction.value == "799eac36"
    widget.pick_compaction.value = None
    assert widget.compaction is None
    with pytest.raises(traitlets.TraitError):
        widget.compaction = "3fc6dd22"  # not a compaction


def test_context_diff_folds_long_unchanged_runs(compaction_chain: Session) -> None:
    leaf = compaction_chain.leaf_id
    parent = compaction_chain.by_id[leaf].parent_id
    widget = ContextDiff(compaction_chain, parent, leaf)
    assert "pikit-diff-fold" in widget.body.value and "identical messages" in widget.body.value
    assert widget.body.value.count('data-status="added"') == 1


def test_real_count_total_is_bounded_then_on_demand(compaction_chain: Session) -> None:
    view = ContextView(compaction_chain, "f1d42f35", encoding="cl100k_base")
    view.count_limit = 0  # pretend every branch is long
    view.leaf_id = "b0f5393b"
    if view.counter is None or not view.counter.exact:
        pytest.skip("no tiktoken encoding available")
    assert "not counted yet" in view.header.value and view.count_button.layout.display is None
    total = view.count_all()
    assert total > 0 and "pikit-real-total" in view.header.value
    assert view.count_button.layout.display == "none"


def _three_ways(session: Session, entry_id: str) -> list[Any]:
    """The id, a unique prefix of it, and the Entry: each names the same entry (as on the command line)."""
    others = [k for k in session.by_id if k != entry_id]
    prefix = next(entry_id[:n] for n in range(1, len(entry_id)) if not any(k.startswith(entry_id[:n]) for k in others))
    return [entry_id, prefix, session.entry(prefix)]


def test_every_widget_takes_an_id_a_prefix_or_an_entry(tree_basic: Session, compaction_chain: Session) -> None:
    target = "2397c884"
    builders = [lambda ref: ContextView(tree_basic, ref, encoding=None), lambda ref: BudgetBar(tree_basic, ref),
                lambda ref: TreeView(tree_basic, ref), lambda ref: SessionExplorer(tree_basic, ref),
                lambda ref: CompactionStepper(tree_basic, ref), lambda ref: CompactionPanel(tree_basic, ref)]
    for build in builders:
        for ref in _three_ways(tree_basic, target):
            widget = build(ref)
            assert widget.leaf_id == target
            widget.leaf_id = None
            widget.leaf_id = ref  # the trait reads it the same way
            assert widget.leaf_id == target
    for ref in _three_ways(tree_basic, target):
        diff = ContextDiff(tree_basic, ref, ref)
        assert (diff.a, diff.b) == (target, target) and diff.diff is not None and diff.diff.totals.same
        assert [p.tokens_after for p in compaction_history(tree_basic, ref)] == []
        layout = tree_layout(tree_basic, ref, "all", "", describe=lambda e, kind: (*kind(e), ""))
        assert layout.ids[layout.leaf_row] == target
        assert state_for(tree_basic).projection(ref).leaf_id == target
    for ref in _three_ways(compaction_chain, "799eac36"):
        assert ContextDiff(compaction_chain, compaction=ref).compaction == "799eac36"
        assert [p.id for p in compaction_history(compaction_chain, ref)] == ["050385be", "799eac36"]
    for ref in _three_ways(tree_basic, "b8e7df9b"):
        explorer = SessionExplorer(tree_basic)
        assert explorer.select(ref) is None and explorer.leaf_id == "b8e7df9b" == explorer.selected_id


def test_a_widget_names_an_unknown_or_ambiguous_id(tree_basic: Session, compaction_chain: Session) -> None:
    stranger = compaction_chain.entries[0]
    with pytest.raises(traitlets.TraitError) as caught:
        ContextView(tree_basic, stranger)
    assert str(caught.value) == f"no entry id is or starts with {stranger.id!r} in {tree_basic.path}"
    view = ContextView(tree_basic, encoding=None)
    with pytest.raises(traitlets.TraitError, match=r"prefix '1e' is ambiguous: 2 entries start with it \(1e2feb89"):
        view.leaf_id = "1e"
    with pytest.raises(traitlets.TraitError, match="'zz'"):
        ContextDiff(tree_basic, "zz", None)
    with pytest.raises(traitlets.TraitError, match="'2397c884' is not a compaction"):
        ContextDiff(tree_basic, compaction="2397")


def _conversation(messages: int) -> Session:
    """A linear session of ``messages`` user and assistant messages, numbered in their text."""
    from tests.entries import asst, session_of, text, user

    entries = [user(f"m{i:04d}", f"m{i - 1:04d}" if i else None, i, f"message {i + 1}") if i % 2 == 0 else
               asst(f"m{i:04d}", f"m{i - 1:04d}", i, text(f"message {i + 1}")) for i in range(messages)]
    return session_of({"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z",
                       "cwd": "/"}, entries)


def test_a_context_opens_on_a_whole_page_of_its_newest_messages() -> None:
    view = ContextView(_conversation(52), encoding=None)  # 52 messages, pages of 50
    assert (view.pages, view.current_page) == (2, 1)
    assert view.page_view is not None and len(view.page_view.rows) == 50
    assert row_sources(view.body.value) == [f"m{i:04d}" for i in range(2, 52)]
    assert view.page_view.label == "rows 3–52 of 52 · page 2/2"
    assert "message 52" in view.body.value and "message 3<" in view.body.value
    view.page = 0
    assert row_sources(view.body.value) == ["m0000", "m0001"]
    assert view.page_view.label == "rows 1–2 of 52 · page 1/2"
    view.leaf_id = "m0050"  # another leaf opens on its last page again: 51 messages, rows 2–51
    assert view.current_page == 1 and view.page_view.label == "rows 2–51 of 51 · page 2/2"


def test_pages_cover_every_row_once() -> None:
    session = _conversation(123)
    rows = context_rows(session.context())
    for size in (1, 7, 50, 122, 123, 500):
        pages = [context_page(session.context(), rows, k, size, labels={}) for k in range(-(-len(rows) // size))]
        seen = [view.row.index for page in pages for view in page.rows]
        assert seen == list(range(123)), size
        assert len(pages[-1].rows) == min(size, 123)
        assert context_page(session.context(), rows, -1, size, labels={}) == pages[-1]


def test_the_legend_says_what_not_itemized_is(compaction_chain: Session, context_edits: Session) -> None:
    from pikit import estimate_tokens
    from pikit._context.tokens import message_usage, usage_total

    p = compaction_chain.context()
    k = p.size.usage_index
    assert k is not None and not p.size.stale
    # what the code computes, worked out here: the usage reported on message k beyond Pi's estimates
    # of what it covers (the system prompt and every message up to k), the messages after it cancelling out
    covered = sum(e for m, e in zip(p.messages[:k + 1], p.estimates[:k + 1], strict=True) if m.get("role") != "system")
    system = estimate_tokens(p.system_message) if p.system_message is not None else 0
    expected = usage_total(message_usage(p.messages[k])) - covered - system
    assert budget_segments(p).unitemized == expected > 0
    bar = BudgetBar(compaction_chain).html.value
    note = "(reported usage beyond Pi&#x27;s estimates of the messages it covers)"  # escaped as all text is
    assert f"not itemized <b>{expected:,}</b> <span class=\"pikit-dim pikit-legend-note\">{note}</span>" in bar
    assert "usage the provider reported" in bar and "tool definitions" in bar  # the hint says more
    assert "not itemized" not in BudgetBar(context_edits).html.value  # all estimated: nothing unaccounted for
