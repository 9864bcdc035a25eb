"""TreeView and SessionExplorer: rows, Pi's selection, the leaf traitlet, filters, speed."""

from __future__ import annotations

import json
from typing import Any

import pytest
import traitlets

from pikit import Session
from pikit.widgets import SessionExplorer, TreeView


def click(tree: TreeView, entry_id: Any) -> None:
    """What a click in the browser does: the view sends {"event": "select", "id", "row"}."""
    row = tree.row_ids.index(entry_id) if entry_id in tree.row_ids else -1
    tree._on_front_end_msg(tree, {"event": "select", "id": entry_id, "row": row}, [])


def test_rows_follow_flatten(tree_basic: Session) -> None:
    tree = TreeView(tree_basic)
    flat = tree_basic.flatten()
    assert tree.row_ids == [r.id for r in flat]
    assert [r[0] for r in tree.rows] == [r.id for r in flat]
    assert [r[1] for r in tree.rows] == [r.indent for r in flat]
    # Each row's parent row is an earlier row (or -1), and it is the entry's nearest shown ancestor.
    for i, row in enumerate(tree.rows):
        assert -1 <= row[2] < i
    labelled = {r[0]: r[5] for r in tree.rows if r[5]}
    assert labelled == {"b62ac1fe": "fork-point"}
    forks = {r[0]: r[7] for r in tree.rows if r[7] > 1}
    assert forks == {"1e2feb89": 2, "b62ac1fe": 2}
    assert json.loads(json.dumps(tree.rows)) == tree.rows  # plain JSON for the browser


def test_leaf_marks(tree_basic: Session) -> None:
    tree = TreeView(tree_basic)
    assert tree.leaf_id == "f57dd6ab"
    assert tree.row_ids[tree.leaf_row] == "f57dd6ab" and tree.anchor_row == tree.leaf_row
    sent = tree.rows_data
    assert json.loads(sent) == tree.rows  # the rows travel as one UTF-8 JSON buffer
    tree.leaf_id = "5c9c1898"
    assert tree.row_ids[tree.leaf_row] == "5c9c1898"
    assert tree.rows_data is sent  # a leaf move does not resend the rows


def test_click_assistant_makes_it_the_leaf(tree_basic: Session) -> None:
    tree = TreeView(tree_basic)
    seen: list[tuple[Any, Any]] = []
    tree.on_select(lambda entry_id, text: seen.append((entry_id, text)))
    click(tree, "b8e7df9b")
    assert tree.leaf_id == "b8e7df9b" and tree.editor_text == ""
    assert tree.selected_id == "b8e7df9b" and tree.row_ids[tree.selected_row] == "b8e7df9b"
    assert seen == [("b8e7df9b", None)]


def test_click_user_message_moves_leaf_to_parent_and_fills_editor(tree_basic: Session) -> None:
    tree = TreeView(tree_basic)
    click(tree, "b3df44a4")
    assert tree.leaf_id == "b62ac1fe"
    assert tree.editor_text == "用策略模式重构 login"


def test_click_root_user_message_resets_the_leaf() -> None:
    session = Session.from_entries([
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "first prompt", "timestamp": 1}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "stopReason": "stop"}},
    ])
    explorer = SessionExplorer(session)
    click(explorer.tree, "u1")
    assert explorer.leaf_id is None and session.leaf_id is None
    assert explorer.editor.value == "first prompt"
    assert explorer.tree.anchor_row == -1
    assert "reset" in explorer.leaf_info.value
    assert "empty context" in explorer.context_view.header.value


def test_unknown_messages_from_the_front_end_are_ignored(tree_basic: Session) -> None:
    tree = TreeView(tree_basic)
    tree._on_front_end_msg(tree, {"event": "select", "id": "nope", "row": 99}, [])
    tree._on_front_end_msg(tree, {"event": "other"}, [])
    tree._on_front_end_msg(tree, "junk", [])
    assert tree.leaf_id == "f57dd6ab"


def test_modes_and_search(tree_basic: Session) -> None:
    tree = TreeView(tree_basic)
    tree.mode = "user-only"
    assert tree.row_ids == [r.id for r in tree_basic.flatten(mode="user-only")]
    kinds = {r[3] for r in tree.rows if r[0] != tree.leaf_id}
    assert kinds == {"user"}
    tree.mode = "all"
    assert len(tree.rows) == len(tree_basic.entries)
    tree.mode = "default"
    tree.search = "alternative"
    assert tree.row_ids == [r.id for r in tree_basic.flatten(search="alternative")]
    with pytest.raises(traitlets.TraitError):
        tree.mode = "bogus"
    with pytest.raises(traitlets.TraitError):
        tree.leaf_id = "no-such-entry"


def test_hidden_leaf_marked_on_ancestor_then_shown_on_relayout(tree_basic: Session) -> None:
    tree = TreeView(tree_basic, mode="user-only")
    tree.leaf_id = "b8e7df9b"  # an assistant message: hidden in user-only mode
    assert tree.leaf_row == -1
    assert tree.row_ids[tree.anchor_row] == "b3df44a4"  # its nearest shown ancestor
    tree.relayout()
    assert tree.row_ids[tree.leaf_row] == "b8e7df9b"  # Pi always shows the leaf


def test_explorer_leaf_is_read_and_set(tree_basic: Session) -> None:
    explorer = SessionExplorer(tree_basic)
    seen = []
    explorer.observe(lambda c: seen.append(c["new"]), names="leaf_id")
    before = explorer.context_view.body.value
    explorer.leaf_id = "5c9c1898"
    assert seen == ["5c9c1898"]
    assert tree_basic.leaf_id == "5c9c1898"
    assert explorer.tree.leaf_id == "5c9c1898" and explorer.tree.row_ids[explorer.tree.leaf_row] == "5c9c1898"
    assert explorer.context_view.leaf_id == "5c9c1898" and explorer.budget.leaf_id == "5c9c1898"
    assert explorer.context_view.body.value != before
    assert 'data-entry-id="5c9c1898"' in explorer.context_view.body.value
    assert "5c9c1898" in explorer.leaf_info.value
    with pytest.raises(traitlets.TraitError):
        explorer.leaf_id = "missing"


def test_explorer_click_updates_everything(tree_basic: Session) -> None:
    explorer = SessionExplorer(tree_basic)
    click(explorer.tree, "b3df44a4")
    assert explorer.leaf_id == "b62ac1fe" == tree_basic.leaf_id
    assert explorer.selected_id == "b3df44a4"
    assert explorer.editor.value == "用策略模式重构 login"
    assert explorer.context_view.projection.leaf_id == "b62ac1fe"
    click(explorer.tree, "b8e7df9b")
    assert explorer.editor.value == ""
    assert explorer.select("5c9c1898") is None and explorer.leaf_id == "5c9c1898"


def test_explorer_controls_drive_the_tree(tree_basic: Session) -> None:
    explorer = SessionExplorer(tree_basic)
    explorer.mode_picker.value = "labeled-only"
    assert explorer.tree.mode == "labeled-only"
    assert set(explorer.tree.row_ids) <= {"b62ac1fe", explorer.leaf_id}
    explorer.mode_picker.value = "default"
    explorer.search_box.value = "login"
    assert explorer.tree.search == "login"
    assert explorer.tree.row_ids == [r.id for r in tree_basic.flatten(search="login")]
    assert f"{len(explorer.tree.rows)} rows" in explorer.tree_status.value


@pytest.mark.slow
def test_10k_tree_layout_and_leaf_moves(big: Session) -> None:
    """A 10k-entry tree lays out and its rows move the leaf (the 100 ms target: benchmarks/bench_widgets.py)."""
    explorer = SessionExplorer(big)
    assert len(explorer.tree.rows) > 9_000
    assert len(explorer.tree.rows_data) < 3_000_000
    ids = explorer.tree.row_ids
    targets = ids[:: max(1, len(ids) // 40)]
    for target in targets:
        click(explorer.tree, target)
        assert explorer.leaf_id == big.leaf_id
