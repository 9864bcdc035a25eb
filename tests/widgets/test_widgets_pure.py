"""The pure layer under the widgets: view models and render functions (no widget, no kernel),
the shared leaf-following mixin, callbacks shown in an Output, and what the widgets expose."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit import Session, diff_compaction
from pikit._tree.tree import FILTER_MODES, describe_hidden
from pikit.compaction import Settings
from pikit.widgets import BudgetBar, CompactionPanel, ContextDiff, ContextView, SessionExplorer, TreeView, context_rows
from pikit.widgets._views import (
    budget_view,
    context_header,
    context_page,
    cut_preview,
    diff_view,
    render_budget,
    render_diff_rows,
    render_header,
    render_preview,
    render_table,
)

REPO = Path(__file__).resolve().parents[2]


def test_views_import_no_widget_library() -> None:
    code = ("import sys, pikit.widgets._views; "
            "print(sorted(m for m in ('ipywidgets', 'anywidget', 'traitlets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


def test_view_models_are_frozen_and_render_the_same_html_as_the_widgets(compaction_chain: Session) -> None:
    p = compaction_chain.context()
    view = budget_view(p, model="anthropic/claude-sonnet-4-5", window=200_000, reserve=16_384, keep=20_000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.window = 1  # type: ignore[misc]
    html = render_budget(view)
    assert "threshold 183,616" in html and "pikit-budget-summary" in html
    header = context_header(p, labels=compaction_chain.labels, kind="assistant")
    assert header.compaction is not None and header.compaction.kept_entries == 3
    rows = context_rows(p)
    page = context_page(p, rows, -1, 5, labels=compaction_chain.labels)
    assert page.page == page.pages - 1 and len(page.rows) <= 5
    widget = ContextView(compaction_chain, page_size=5, encoding=None)
    assert widget.header.value == render_header(header)
    assert widget.body.value == render_table(page)


def test_threshold_label_sits_on_the_side_with_room(compaction_chain: Session) -> None:
    p = compaction_chain.context()
    near_end = render_budget(budget_view(p, model="m", window=200_000, reserve=16_384, keep=1))
    near_start = render_budget(budget_view(p, model="m", window=200_000, reserve=190_000, keep=1))
    assert "pikit-mark-left" in near_end and "pikit-mark-right" not in near_end
    assert "pikit-mark-right" in near_start and "▾ threshold 10,000" in near_start


def test_before_and_after_share_a_scale(compaction_chain: Session) -> None:
    before, after = compaction_chain.context("1bc870e5"), compaction_chain.context("799eac36")
    a = budget_view(before, model="m", window=8_000, reserve=1_000, keep=500)
    b = budget_view(after, model="m", window=8_000, reserve=1_000, keep=500)
    scale = max(a.natural_scale, b.natural_scale)
    html_a = render_budget(dataclasses.replace(a, scale=scale))
    html_b = render_budget(dataclasses.replace(b, scale=scale))
    # The window line is at the same place on both bars.
    window = [h.split("pikit-budget-window")[1].split("%")[0] for h in (html_a, html_b)]
    assert window[0] == window[1]


def test_preview_and_diff_render_without_widgets(compaction_chain: Session) -> None:
    from pikit.compaction import prepare_compaction

    branch = compaction_chain.branch()
    prep = prepare_compaction(branch, 500, compaction_chain.context())
    view = cut_preview(prep, 9_000, 5_000, describe=lambda i: ("user", "<b>hi</b>"))
    html = render_preview(view)
    assert view.fires and "Pi would compact here" in html and "&lt;b&gt;hi&lt;/b&gt;" in html
    assert view.kept + view.summarized + view.previous + view.prefix > 0
    assert "Nothing to compact" in render_preview(cut_preview(None, 10, 100))
    d = diff_compaction(compaction_chain, "799eac36")
    body = render_diff_rows(diff_view(d, ("a", "b"), labels={}, two_leaves=False))
    assert 'data-note="summary"' in body and 'data-note="summarized"' in body


def test_compaction_diff_has_no_system_row_among_changes() -> None:
    session = pikit.load(REPO / "data" / "sample_sessions" / "refactor-auth.jsonl")
    compactions = [e.id for e in session.entries if e.type == "compaction"]
    assert compactions
    for compaction in compactions:
        d = diff_compaction(session, compaction)
        changed = d.changes()
        assert not [r for r in changed if r.role == "system"], compaction
        system = [r for r in d.rows if r.role == "system"]
        assert len(system) == 1 and system[0].status == "same"
        assert system[0].source_a != system[0].source_b  # taken from two sources, same content
        assert [r.note for r in changed if r.status == "added"] == ["summary"]
        assert {r.note for r in changed if r.status == "removed"} <= {"summarized", "previous summary"}
        assert d.totals.removed_tokens == sum(r.estimate_a for r in changed if r.status == "removed")


# ---------------------------------------------------------------------------------- shared mechanism
def test_every_leaf_widget_drops_its_projection_on_a_move(tree_basic: Session) -> None:
    view = ContextView(tree_basic, "5c9c1898", encoding=None)
    first = view.projection
    view.leaf_id = "f57dd6ab"
    assert view.projection is not first and view.projection.leaf_id == "f57dd6ab"
    for source in tree_basic.context("f57dd6ab").sources:
        assert f'data-entry-id="{source}"' in view.body.value
    assert "f57dd6ab" in view.header.value


def test_failing_callback_shows_in_an_output_and_others_still_run(tree_basic: Session) -> None:
    tree = TreeView(tree_basic)
    seen: list[Any] = []

    def broken(entry_id: Any, text: Any) -> None:
        raise RuntimeError("callback <b>broke</b>")

    tree.on_select(broken)
    tree.on_select(lambda entry_id, text: seen.append(entry_id))
    tree.select("b8e7df9b")
    assert seen == ["b8e7df9b"] and tree.leaf_id == "b8e7df9b"
    assert tree.callback_errors.layout.display is None
    shown = tree.callback_errors.outputs[0]["data"]["text/html"]
    assert "broken" in shown and "callback &lt;b&gt;broke&lt;/b&gt;" in shown
    assert [str(e) for e in tree._callbacks.errors] == ["callback <b>broke</b>"]
    tree.on_select(broken, remove=True)
    tree.select("5c9c1898")
    assert len(tree.callback_errors.outputs) == 1


def test_reprs_are_short(compaction_chain: Session, tmp_path: Path) -> None:
    for widget in (SessionExplorer(compaction_chain), ContextView(compaction_chain, encoding=None),
                   TreeView(compaction_chain), BudgetBar(compaction_chain, settings=Settings({})),
                   ContextDiff(compaction_chain, compaction="799eac36"),
                   CompactionPanel(compaction_chain, settings=Settings({}), output_dir=tmp_path)):
        assert len(repr(widget)) < 200, repr(widget)


def test_explorer_exposes_projection_diff_and_frames(tree_basic: Session) -> None:
    explorer = SessionExplorer(tree_basic, "5c9c1898")
    assert explorer.diff is None and explorer.diff_frame().empty
    assert explorer.projection.leaf_id == "5c9c1898"
    frame = explorer.frame()
    assert len(frame) == len(explorer.projection.messages)
    explorer.leaf_id = "f57dd6ab"
    diff = explorer.diff
    assert diff is not None and diff.a.leaf_id == "5c9c1898" and diff.b.leaf_id == "f57dd6ab"
    assert len(explorer.diff_frame()) == len(diff.rows)


def test_explorer_says_how_many_entries_the_filter_hides(tree_basic: Session) -> None:
    explorer = SessionExplorer(tree_basic)
    explorer.mode_picker.value = "user-only"
    hidden = len(tree_basic.by_id) - len(explorer.tree.row_ids)
    assert hidden > 0 and explorer.hidden == hidden
    status = explorer.tree_status.value
    assert f"{hidden} of {len(tree_basic.by_id)} entries hidden — filter “user-only”: " in status
    reasons = tree_basic.tree_hidden(explorer.tree.leaf_id, "user-only")
    assert sum(reasons.values()) == hidden and "entries that are not user prompts" in status
    explorer.search_box.value = "nothing-matches-this"
    assert "search “nothing-matches-this”" in explorer.tree_status.value
    explorer.search_box.value = ""
    explorer.mode_picker.value = "all"
    assert "hidden" not in explorer.tree_status.value


def test_every_hidden_entry_is_accounted_for_by_its_reason(shared_sessions: Path) -> None:
    """Filter "all" still hides what Pi's /tree never shows, and the explorer says so, with the same count and
    words as `pikit tree`: the hidden entries by reason add up to every entry without a row."""
    session = pikit.load(shared_sessions / "before-compaction.jsonl")
    explorer = SessionExplorer(session, mode="all")
    hidden = len(session.by_id) - len(explorer.tree.row_ids)
    assert hidden == 215 and explorer.hidden == hidden
    assert ("215 of 1,002 entries hidden — filter “all”: 215 assistant messages with only tool calls"
            in explorer.tree_status.value)
    for mode in FILTER_MODES:
        explorer.mode_picker.value = mode
        counts = session.tree_hidden(explorer.tree.leaf_id, mode)
        assert sum(counts.values()) == len(session.by_id) - len(explorer.tree.row_ids)
        assert describe_hidden(counts) in explorer.tree_status.value
