"""pikit.session.Session: indexes, labels, name, look-ups, leaf moves (Pi's /tree selection)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pikit
from pikit import PikitError, Session, UnknownEntryError
from pikit.entry import Entry

HEADER = {"type": "session", "version": 3, "id": "sess-1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


def ts(second: int) -> str:
    return f"2026-01-01T00:{second // 60:02d}:{second % 60:02d}.000Z"


def dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def build(*entries: dict[str, Any], header: dict[str, Any] = HEADER) -> Session:
    return pikit.loads("\n".join(dumps(x) for x in [header, *entries]) + "\n")


def msg(entry_id: str, parent: str | None, role: str, content: Any, second: int, **extra: Any) -> dict[str, Any]:
    message = {"role": role, "content": content, "timestamp": 1767225600000 + second * 1000, **extra}
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": ts(second), "message": message}


def label(entry_id: str, parent: str | None, target: str, text: Any, second: int) -> dict[str, Any]:
    out = {"type": "label", "id": entry_id, "parentId": parent, "timestamp": ts(second), "targetId": target}
    if text is not ...:
        out["label"] = text
    return out


def info(entry_id: str, parent: str | None, name: Any, second: int) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "session_info", "id": entry_id, "parentId": parent, "timestamp": ts(second)}
    if name is not ...:
        out["name"] = name
    return out


def custom_message(entry_id: str, parent: str | None, content: Any, second: int) -> dict[str, Any]:
    return {"type": "custom_message", "id": entry_id, "parentId": parent, "timestamp": ts(second),
            "customType": "note", "content": content, "display": True}


@pytest.fixture
def conversation() -> Session:
    """u1 → a1 → u2 → a2, with a second branch u3 → a3 under a1 and a custom message under a2."""
    return build(
        msg("u1", None, "user", "first question", 1),
        msg("a1", "u1", "assistant", [{"type": "text", "text": "answer"}], 2),
        msg("u2", "a1", "user", [{"type": "text", "text": "second "}, {"type": "image", "data": "AA==",
                                                                          "mimeType": "image/png"},
                                 {"type": "text", "text": "question"}], 3),
        msg("a2", "u2", "assistant", [{"type": "text", "text": "ok"}], 4),
        msg("u3", "a1", "user", "other way", 5),
        msg("a3", "u3", "assistant", [{"type": "text", "text": "fine"}], 6),
        custom_message("c1", "a2", [{"type": "text", "text": "custom "}, {"type": "text", "text": "text"}], 7),
    )


# ---------------------------------------------------------------- basic indexes
def test_entries_by_id_and_default_leaf(conversation: Session) -> None:
    assert len(conversation) == 7
    assert [e.id for e in conversation] == ["u1", "a1", "u2", "a2", "u3", "a3", "c1"]
    assert conversation.leaf_id == "c1"  # the last entry in file order
    assert conversation.leaf is conversation.by_id["c1"]
    assert conversation.id == "sess-1"
    assert conversation.version == 3
    assert "u2" in conversation and "zz" not in conversation and ["x"] not in conversation
    assert conversation["a2"].role == "assistant"
    assert conversation.entry("u1").type == "message"
    assert "7 entries" in repr(conversation)


def test_entry_unknown_raises_unknown_entry_error(conversation: Session) -> None:
    with pytest.raises(UnknownEntryError) as info_:
        conversation.entry("nope")
    assert "nope" in str(info_.value)
    assert info_.value.entry_id == "nope"
    assert isinstance(info_.value, KeyError) and isinstance(info_.value, PikitError)
    with pytest.raises(UnknownEntryError):
        conversation["nope"]


def test_branch_and_branch_ids(conversation: Session) -> None:
    assert conversation.branch_ids() == ["u1", "a1", "u2", "a2", "c1"]
    assert conversation.branch_ids("a3") == ["u1", "a1", "u3", "a3"]
    assert [e.id for e in conversation.branch("u1")] == ["u1"]
    conversation.leaf_id = None
    assert conversation.branch() == []
    assert conversation.branch(None) == []


def test_branch_unknown_leaf_raises(conversation: Session) -> None:
    with pytest.raises(UnknownEntryError, match="nope"):
        conversation.branch("nope")
    with pytest.raises(UnknownEntryError):
        conversation.context("nope")


def test_roots_and_children(conversation: Session) -> None:
    assert conversation.roots == ["u1"]
    assert conversation.children("a1") == ["u2", "u3"]
    assert conversation.children("a3") == []
    with pytest.raises(UnknownEntryError):
        conversation.children("nope")
    # the returned lists are copies
    conversation.children("a1").append("x")
    conversation.roots.append("x")
    assert conversation.children("a1") == ["u2", "u3"] and conversation.roots == ["u1"]


def test_tree_json(conversation: Session) -> None:
    tree = conversation.tree()
    assert tree["roots"] == ["u1"]
    assert tree["children"] == {"u1": ["a1"], "a1": ["u2", "u3"], "u2": ["a2"], "a2": ["c1"], "u3": ["a3"]}
    assert tree["labels"] == {}


# ---------------------------------------------------------------- resolve
def test_resolve_exact_and_prefix() -> None:
    s = build(msg("abc12345", None, "user", "x", 1), msg("abd00000", "abc12345", "user", "y", 2),
              msg("ffff0000", "abd00000", "user", "z", 3))
    assert s.resolve("abc12345").id == "abc12345"
    assert s.resolve("abc").id == "abc12345"
    assert s.resolve("f").id == "ffff0000"
    with pytest.raises(PikitError, match="ambiguous"):
        s.resolve("ab")
    with pytest.raises(UnknownEntryError):
        s.resolve("zz")


def test_resolve_prefers_an_exact_id_over_longer_matches() -> None:
    s = build(msg("ab", None, "user", "x", 1), msg("abcd", "ab", "user", "y", 2))
    assert s.resolve("ab").id == "ab"


# ---------------------------------------------------------------- labels
def test_labels_set_clear_and_reorder() -> None:
    s = build(
        msg("u1", None, "user", "a", 1),
        msg("u2", "u1", "user", "b", 2),
        msg("u3", "u2", "user", "c", 3),
        label("l1", "u3", "u1", "first", 4),
        label("l2", "l1", "u2", "second", 5),
        label("l3", "l2", "u3", "third", 6),
        label("l4", "l3", "u1", "", 7),  # clears u1
        label("l5", "l4", "u1", "again", 8),  # set after delete: moves to the end
        label("l6", "l5", "u2", "renamed", 9),  # set on an existing key: keeps its place
        label("l7", "l6", "u3", ..., 10),  # absent label clears
        label("l8", "l7", "u3", None, 11),  # null clears (already clear: no error)
    )
    assert s.labels == {"u2": "renamed", "u1": "again"}
    assert list(s.labels) == ["u2", "u1"]
    assert s.label_times == {"u2": ts(9), "u1": ts(8)}
    assert s.tree()["labels"] == {"u1": "again", "u2": "renamed"}


def test_label_on_a_label_and_on_unknown_target() -> None:
    s = build(msg("u1", None, "user", "a", 1), label("l1", "u1", "u1", "x", 2), label("l2", "l1", "l1", "meta", 3),
              label("l3", "l2", "ghost", "nobody", 4))
    assert s.labels == {"u1": "x", "l1": "meta", "ghost": "nobody"}
    # the flat tree only reports labels of entries in the tree
    assert s.tree()["labels"] == {"u1": "x", "l1": "meta"}


# ---------------------------------------------------------------- name
@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ([], None),
        (["first"], "first"),
        (["first", "second"], "second"),
        (["first", ""], None),
        (["first", "   "], None),
        (["first", "\u3000\u00a0"], None),  # JavaScript's trim() removes these too
        (["  padded  "], "padded"),
        (["first", ...], None),
        (["first", None], None),
    ],
)
def test_session_name_from_latest_session_info(names: list[Any], expected: str | None) -> None:
    entries = [msg("u1", None, "user", "a", 1)]
    parent = "u1"
    for i, name in enumerate(names):
        entries.append(info(f"i{i}", parent, name, 2 + i))
        parent = f"i{i}"
    entries.append(msg("u2", parent, "user", "b", 30))
    assert build(*entries).name == expected


def test_name_uses_file_order_not_the_branch() -> None:
    s = build(msg("u1", None, "user", "a", 1), info("i1", "u1", "on branch A", 2),
              info("i2", "u1", "on branch B", 3), msg("u2", "i1", "user", "b", 4))
    s.leaf_id = "u2"
    assert s.name == "on branch B"


# ---------------------------------------------------------------- common ancestor
def test_common_ancestor(conversation: Session) -> None:
    assert conversation.common_ancestor("a2", "a3") == "a1"
    assert conversation.common_ancestor("a3", "a2") == "a1"
    assert conversation.common_ancestor("c1", "u2") == "u2"
    assert conversation.common_ancestor("u2", "c1") == "u2"
    assert conversation.common_ancestor("a2", "a2") == "a2"
    assert conversation.common_ancestor(None, "a2") is None


def test_common_ancestor_of_separate_roots() -> None:
    s = build(msg("r1", None, "user", "a", 1), msg("r2", None, "user", "b", 2))
    assert s.common_ancestor("r1", "r2") is None


# ---------------------------------------------------------------- navigate (/tree selection)
def test_navigate_to_user_message_moves_to_parent_and_returns_text(conversation: Session) -> None:
    text = conversation.navigate("u2")
    assert conversation.leaf_id == "a1"
    assert text == "second question"  # text blocks joined with "" (images skipped)


def test_navigate_to_root_user_message_resets_leaf(conversation: Session) -> None:
    assert conversation.navigate("u1") == "first question"
    assert conversation.leaf_id is None
    assert conversation.leaf is None
    assert conversation.context().messages == []


def test_navigate_to_custom_message_moves_to_parent(conversation: Session) -> None:
    conversation.leaf_id = "a3"  # c1 is the default leaf; selecting the current leaf moves nothing
    assert conversation.navigate("c1") == "custom text"
    assert conversation.leaf_id == "a2"


def test_navigate_to_custom_message_with_string_content() -> None:
    s = build(msg("u1", None, "user", "a", 1), custom_message("c1", "u1", "plain", 2))
    s.leaf_id = "u1"
    assert s.navigate("c1") == "plain"
    assert s.leaf_id == "u1"


@pytest.mark.parametrize("target", ["a1", "a3", "a2"])
def test_navigate_to_other_entries_makes_them_the_leaf(conversation: Session, target: str) -> None:
    assert conversation.navigate(target) is None
    assert conversation.leaf_id == target


def test_navigate_to_non_message_entries() -> None:
    s = build(msg("u1", None, "user", "a", 1), label("l1", "u1", "u1", "x", 2),
              msg("t1", "l1", "toolResult", [{"type": "text", "text": "out"}], 3, toolCallId="c", toolName="read",
                  isError=False),
              {"type": "model_change", "id": "m1", "parentId": "t1", "timestamp": ts(4), "provider": "p",
               "modelId": "m"})
    for target in ("l1", "t1", "m1"):
        assert s.navigate(target) is None
        assert s.leaf_id == target


def test_navigate_unknown_raises_and_keeps_leaf(conversation: Session) -> None:
    with pytest.raises(UnknownEntryError):
        conversation.navigate("nope")
    assert conversation.leaf_id == "c1"


def test_navigate_to_the_current_leaf_is_a_no_op() -> None:
    s = build(msg("u1", None, "user", "a", 1), msg("u2", "u1", "user", "retry me", 2))
    assert s.leaf_id == "u2"
    assert s.navigate("u2") is None
    assert s.leaf_id == "u2"


def test_moving_the_leaf_changes_the_context(conversation: Session) -> None:
    conversation.navigate("a3")
    assert [m["role"] for m in conversation.context().messages] == ["user", "assistant", "user", "assistant"]
    assert conversation.context().sources == ["u1", "a1", "u3", "a3"]


# ---------------------------------------------------------------- from_entries
def test_from_entries_with_dicts_and_entries() -> None:
    dicts = [msg("u1", None, "user", "a", 1), msg("a1", "u1", "assistant", [], 2)]
    s = Session.from_entries([dicts[0], Entry(dicts[1])])
    assert s.branch_ids() == ["u1", "a1"]
    assert s.header["type"] == "session" and s.header["version"] == 3 and isinstance(s.header["id"], str)
    assert s.path is None and s.report.migrated_from is None
    s2 = Session.from_entries(dicts, header=HEADER)
    assert s2.id == "sess-1"


def test_from_entries_migrates_old_entries() -> None:
    old_header = {"type": "session", "id": "old", "timestamp": ts(0), "cwd": "/"}
    v1 = [
        {"type": "message", "timestamp": ts(1), "message": {"role": "user", "content": "a", "timestamp": 1}},
        {"type": "message", "timestamp": ts(2), "message": {"role": "hookMessage", "content": "h", "timestamp": 2}},
    ]
    s = Session.from_entries(v1, header=old_header)
    assert s.report.migrated_from == 1
    first, second = s.entries
    assert isinstance(first.id, str) and first.parent_id is None
    assert second.parent_id == first.id
    assert second.role == "custom"
    assert s.header["version"] == 3


def test_empty_session_from_entries() -> None:
    s = Session.from_entries([])
    assert len(s) == 0 and s.leaf_id is None and s.roots == [] and s.branch() == []
    assert s.context().messages == [] and s.context().tokens == 0
