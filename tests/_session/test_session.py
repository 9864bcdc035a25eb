"""pikit.Session: indexes, labels, name, look-ups, leaf moves (Pi's /tree selection), ids as on the command line."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pikit
from pikit import Entry, EntryError, PikitError, Session, UnknownEntryError
from tests.conftest import SESSIONS

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
    assert s.entry("abc12345").id == "abc12345"
    assert s.entry("abc").id == "abc12345"
    assert s.entry("f").id == "ffff0000"
    with pytest.raises(PikitError, match="ambiguous"):
        s.entry("ab")
    with pytest.raises(UnknownEntryError):
        s.entry("zz")


def test_resolve_prefers_an_exact_id_over_longer_matches() -> None:
    s = build(msg("ab", None, "user", "x", 1), msg("abcd", "ab", "user", "y", 2))
    assert s.entry("ab").id == "ab"


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


# ---------------------------------------------------------------- ids as on the command line
def _shared_session(name: str) -> Session:
    path = SESSIONS / name
    if not path.is_file():
        pytest.fail(f"shared session {path} not found; set PIKIT_SHARED to the shared/ folder", pytrace=False)
    return pikit.load(path)


@pytest.fixture
def forked() -> Session:
    """tree-basic: a fork, a label, a branch summary; ids such as 2397c884."""
    return _shared_session("tree-basic.jsonl")


@pytest.fixture
def chain() -> Session:
    """compaction-chain: a linear session with two compactions."""
    return _shared_session("compaction-chain.jsonl")


def _prefix(session: Session, entry_id: str) -> str:
    """The shortest prefix of ``entry_id`` that no other id of ``session`` starts with."""
    others = [k for k in session.by_id if k != entry_id]
    size = next(n for n in range(1, len(entry_id)) if not any(k.startswith(entry_id[:n]) for k in others))
    return entry_id[:size]


def _forms(session: Session, entry_id: str) -> list[Any]:
    """The ways a caller names an entry: its id, a unique prefix, the Entry itself."""
    prefix = _prefix(session, entry_id)
    assert prefix != entry_id and prefix not in session.by_id
    return [entry_id, prefix, session.entry(prefix)]


def _fresh(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry made now, without what differs between two makings (its new id and time)."""
    return {k: v for k, v in entry.items() if k not in ("id", "timestamp")}


def test_context_takes_a_unique_prefix_as_the_command_line_does(forked: Session) -> None:
    assert forked.context("2397").leaf_id == "2397c884"
    assert forked.context("2397").messages == forked.context("2397c884").messages
    assert forked.context("2397").messages != forked.context().messages  # not the current leaf


def test_an_ambiguous_prefix_names_it_and_what_matched(forked: Session) -> None:
    with pytest.raises(EntryError) as caught:
        forked.context("1e")
    assert not isinstance(caught.value, UnknownEntryError)
    message = str(caught.value)
    assert "'1e'" in message and "2 entries" in message and "1e2feb89" in message and "1e39ef8e" in message
    assert "\n" not in message


def test_an_unknown_prefix_names_it_and_says_nothing_matched(forked: Session) -> None:
    with pytest.raises(UnknownEntryError) as caught:
        forked.context("77")
    assert str(caught.value) == f"no entry id is or starts with '77' in {forked.path}"


def test_errors_name_the_id_not_an_object(forked: Session, chain: Session) -> None:
    stranger = chain.entries[0]  # an Entry of another session
    for call in (forked.entry, forked.context, forked.branch, forked.children, forked.navigate, forked.flatten):
        with pytest.raises(UnknownEntryError) as caught:
            call(stranger)
        assert str(caught.value) == f"no entry id is or starts with {stranger.id!r} in {forked.path}"


def test_an_entry_is_in_the_session_that_holds_its_id(forked: Session, chain: Session) -> None:
    assert forked.entries[3] in forked and forked.entries[3].id in forked
    assert chain.entries[0] not in forked
    assert "2397" not in forked  # membership is exact; prefixes are for look-ups


def test_current_and_none_keep_their_meaning(forked: Session) -> None:
    assert forked.resolve_leaf() == forked.resolve_leaf(pikit._tree.sessiontree.CURRENT) == forked.leaf_id
    assert forked.resolve_leaf(None) is None
    assert forked.branch(None) == [] and forked.context(None).messages == []
    forked.navigate("2397")
    assert forked.leaf_id == "2397c884" and forked.context().leaf_id == "2397c884"


_SESSION_CALLS: dict[str, Any] = {
    "entry": lambda s, ref: s.entry(ref).id,
    "getitem": lambda s, ref: s[ref].id,
    "resolve_leaf": lambda s, ref: s.resolve_leaf(ref),
    "branch": lambda s, ref: [e.id for e in s.branch(ref)],
    "branch_ids": lambda s, ref: s.branch_ids(ref),
    "children": lambda s, ref: s.children(ref),
    "common_ancestor a": lambda s, ref: s.common_ancestor(ref, "f57dd6ab"),
    "common_ancestor b": lambda s, ref: s.common_ancestor("f57dd6ab", ref),
    "navigate": lambda s, ref: (s.navigate(ref), s.leaf_id),
    "flatten": lambda s, ref: [(r.id, r.is_leaf, r.on_active_path) for r in s.flatten(ref)],
    "context": lambda s, ref: (s.context(ref).leaf_id, s.context(ref).sources, s.context(ref).tokens),
}


@pytest.mark.parametrize("name", list(_SESSION_CALLS))
@pytest.mark.parametrize("target", ["2397c884", "b62ac1fe", "1e39ef8e"])
def test_every_session_method_takes_an_id_a_prefix_or_an_entry(name: str, target: str) -> None:
    call = _SESSION_CALLS[name]
    results = []
    for form in _forms(_shared_session("tree-basic.jsonl"), target):
        results.append(call(_shared_session("tree-basic.jsonl"), form))  # a fresh session: navigate moves the leaf
    assert results[0] == results[1] == results[2]


def _diff_figures(diff: Any) -> tuple[Any, ...]:
    """What a diff says: its two leaves, its totals and its rows."""
    return diff.a.leaf_id, diff.b.leaf_id, diff.totals, diff.records()


def _replay_figures(result: Any) -> tuple[Any, ...]:
    """What a replay says: its leaf, its totals, its events and its checks."""
    return result.leaf_id, result.totals(), result.event_records(), result.trace_records()


def _forked_lines(s: Session, ref: Any) -> list[Any]:
    from pikit._tree.fork import fork_lines

    return [_fresh(json.loads(line)) for line in fork_lines(s, ref)[1:]]


def _core_calls() -> dict[str, tuple[str, str, Any]]:
    """name: (shared session, target entry, call(session, ref)) of each core function taking an id or a leaf."""
    from pikit import diff_compaction, diff_leaves
    from pikit._context.projection import project
    from pikit.compaction import (
        CompactionSettings,
        build_branch_summary,
        build_compaction,
        collect_branch,
        context_edit_entry,
        label_entry,
        simulate,
    )
    from pikit.llm import OfflineSummarizer

    offline = OfflineSummarizer()
    forked, chain = "tree-basic.jsonl", "compaction-chain.jsonl"
    return {
        "label_entry": (forked, "2397c884", lambda s, ref: _fresh(label_entry(s, ref, "here", leaf=ref))),
        "context_edit_entry": (forked, "5c9c1898", lambda s, ref: _fresh(context_edit_entry(s, ref, None, leaf=ref))),
        "collect_branch old": (forked, "2397c884", lambda s, ref: collect_branch(s, ref, "f57dd6ab")),
        "collect_branch target": (forked, "b8e7df9b", lambda s, ref: collect_branch(s, "f57dd6ab", ref)),
        "build_branch_summary old": (forked, "2397c884", lambda s, ref: _fresh(
            build_branch_summary(s, ref, "18074ae5", summarizer=offline).entry)),
        "build_branch_summary target": (forked, "b8e7df9b", lambda s, ref: _fresh(
            build_branch_summary(s, "2397c884", ref, summarizer=offline).entry)),
        "diff_leaves": (forked, "2397c884", lambda s, ref: _diff_figures(diff_leaves(s, ref, "f57dd6ab"))),
        "fork_lines": (forked, "2397c884", _forked_lines),
        "project": (forked, "2397c884", lambda s, ref: (project(s, ref).leaf_id, project(s, ref).sources)),
        "diff_compaction": (chain, "799eac36", lambda s, ref: _diff_figures(diff_compaction(s, ref))),
        "build_compaction": (chain, "f796ffa1", lambda s, ref: _fresh(
            build_compaction(s, ref, keep_recent_tokens=2000, summarizer=offline).entry)),
        "simulate": (chain, "f796ffa1", lambda s, ref: _replay_figures(simulate(
            s, offline, context_window=30_000, leaf=ref, settings=CompactionSettings(True, 4000, 2000)))),
    }


@pytest.mark.parametrize("name", list(_core_calls()))
def test_every_core_function_takes_an_id_a_prefix_or_an_entry(name: str) -> None:
    file, target, call = _core_calls()[name]
    session = _shared_session(file)
    results = [call(session, form) for form in _forms(session, target)]
    assert results[0] == results[1] == results[2]


def test_every_frame_chart_and_page_takes_an_id_a_prefix_or_an_entry(chain: Session) -> None:
    from pikit import charts, frames
    from pikit.export import PageSettings, render_page
    from pikit.export._tree import render_tree

    settings = PageSettings("anthropic/claude", 200_000, 16_384, 20_000)
    calls: list[Any] = [
        lambda ref: frames.entries(chain, ref).to_dict("records"),
        lambda ref: frames.messages(chain, ref).to_dict("records"),
        lambda ref: frames.compactions(chain, ref).to_dict("records"),
        lambda ref: frames.context_trace(chain, ref).to_dict("records"),
        lambda ref: frames.sweep_keep_recent(chain, ref, [2000, 8000]).to_dict("records"),
        lambda ref: [line.get_ydata().tolist() for line in charts.context_growth(chain, leaf=ref).axes[0].lines],
        lambda ref: render_tree(chain, ref),
        lambda ref: render_page(chain, settings, ref),
    ]
    for call in calls:
        results = [call(form) for form in _forms(chain, "0f021ea5")]
        assert results[0] == results[1] == results[2]
        assert results[0] != call(None)  # the leaf mattered
