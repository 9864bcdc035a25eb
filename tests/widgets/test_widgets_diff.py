"""pikit._context.diff: aligning two projections (two leaves, before/after a compaction, edits)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

import pikit
from pikit import Session, diff_compaction, diff_contexts, diff_leaves
from pikit._context.diff import _content_key, _same_content, message_keys
from tests.entries import asst, call, user


def test_same_leaf_is_all_same(tree_basic: Session) -> None:
    d = diff_leaves(tree_basic, tree_basic.leaf_id, tree_basic.leaf_id)
    assert d.identical
    assert [r.status for r in d.rows] == ["same"] * len(tree_basic.context().messages)
    assert d.totals.tokens_delta == 0 and d.totals.estimate_delta == 0
    assert d.changes() == []


def test_two_leaves_share_their_prefix(tree_basic: Session) -> None:
    main, other = "f57dd6ab", "5c9c1898"
    a, b = tree_basic.context(main), tree_basic.context(other)
    d = diff_contexts(a, b)
    # Every message of each side appears exactly once, in order.
    assert [r.index_a for r in d.rows if r.index_a is not None] == list(range(len(a.messages)))
    assert [r.index_b for r in d.rows if r.index_b is not None] == list(range(len(b.messages)))
    # The root user message is shared; the main branch's answer is removed, the other branch added.
    assert d.rows[0].status == "same" and d.rows[0].source == "1e2feb89"
    removed = [r.source_a for r in d.rows if r.status == "removed"]
    added = [r.source_b for r in d.rows if r.status == "added"]
    assert removed == ["18074ae5"]
    assert "b62ac1fe" in added and "5c9c1898" in added
    t = d.totals
    assert t.added == len(added) and t.removed == 1 and t.same == 1 and t.changed == 0
    assert t.added_tokens == sum(r.estimate_b for r in d.rows if r.status == "added")
    assert t.removed_tokens == sum(r.estimate_a for r in d.rows if r.status == "removed")
    assert t.estimate_a == sum(a.estimates) and t.estimate_b == sum(b.estimates)
    assert (t.tokens_a, t.tokens_b) == (a.tokens, b.tokens)
    assert t.estimate_delta == t.added_tokens - t.removed_tokens + t.changed_delta


def test_reset_leaf_against_a_leaf_is_all_added(tree_basic: Session) -> None:
    d = diff_leaves(tree_basic, None, tree_basic.leaf_id)
    assert {r.status for r in d.rows} == {"added"}
    assert d.totals.tokens_a == 0


def test_compaction_summary_added_and_summarized_removed(compaction_chain: Session) -> None:
    d = diff_compaction(compaction_chain, "799eac36")
    after = compaction_chain.context("799eac36")
    added = [r for r in d.rows if r.status == "added"]
    assert [(r.source_b, r.role_b) for r in added] == [("799eac36", "compactionSummary")]
    removed = {r.source_a for r in d.rows if r.status == "removed"}
    # The previous compaction's summary and every newly summarized entry drop out ...
    assert "050385be" in removed
    for entry_id in after.summarized_ids:
        entry = compaction_chain.by_id[entry_id]
        if entry.type == "message" and entry_id in compaction_chain.context("1bc870e5").sources:
            assert entry_id in removed
    # ... and the kept range is the same on both sides.
    same = [r.source for r in d.rows if r.status == "same"]
    assert same == ["3fc6dd22", "1a5511f3", "1bc870e5"]
    assert d.totals.tokens_b == after.tokens
    assert d.totals.tokens_delta < 0


def test_edit_shows_as_changed(context_edits: Session) -> None:
    # ab2bb424 replaces the content of the tool result dcf6a807 again; compare before/after it.
    d = diff_leaves(context_edits, "6d80c0b3", "ab2bb424")
    changed = [r for r in d.rows if r.status == "changed"]
    assert [r.source for r in changed] == ["dcf6a807"]
    assert changed[0].message_a != changed[0].message_b
    # An omission (1de23150 omits 7e20e3a9) removes the message.
    d2 = diff_leaves(context_edits, "6d80c0b3", "1de23150")
    assert [(r.status, r.source_a) for r in d2.changes()] == [("removed", "7e20e3a9")]


def test_message_keys_number_messages_of_one_entry() -> None:
    keys = message_keys(["c", "c", "x", "c"], [{"role": "system"}, {"role": "compactionSummary"},
                                                {"role": "user"}, {"role": "user"}])
    assert keys == [("c", "system", 0), ("c", "compactionSummary", 1), ("x", "user", 0), ("c", "user", 0)]


def test_totals_and_records(tree_basic: Session) -> None:
    d = diff_leaves(tree_basic, "f57dd6ab", "5c9c1898")
    assert d.a.leaf_id == "f57dd6ab" and d.b.leaf_id == "5c9c1898"
    assert d.totals.tokens_delta == d.totals.tokens_b - d.totals.tokens_a
    assert d.totals.estimate_delta == d.totals.estimate_b - d.totals.estimate_a
    assert len(d.records()) == len(d) == len(d.rows)
    assert set(d.records()[0]) >= {"status", "source_a", "source_b", "delta"}


def test_diff_compaction_rejects_other_entries(tree_basic: Session) -> None:
    with pytest.raises(ValueError, match="not a compaction"):
        diff_compaction(tree_basic, "1e2feb89")


def test_diff_on_10k(big: Session) -> None:
    """Two 10k-entry leaves diff row by row (the 0.2 s target: benchmarks/bench_widgets.py)."""
    rows = big.flatten()
    tips = [r.id for r in rows if r.children == 0 and r.entry.type == "message"]
    a, b = big.context(tips[0]), big.context(tips[-1])
    assert len(a.estimates) == len(a.messages) and len(b.estimates) == len(b.messages)  # the projections' work
    d = diff_contexts(a, b)
    assert len([r for r in d.rows if r.index_a is not None]) == len(a.messages)
    assert len([r for r in d.rows if r.index_b is not None]) == len(b.messages)


def _two_answers(first: dict[str, Any], second: dict[str, Any], **raw: str) -> Session:
    """A root prompt answered twice, on two branches (each ``"NAME"`` string replaced by ``raw[NAME]``)."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    entries = [user("r", None, 0, "go"), asst("a1", "r", 1, [first]), asst("b1", "r", 2, [second])]
    lines = "\n".join(json.dumps(e, separators=(",", ":")) for e in [header, *entries]) + "\n"
    for name, value in raw.items():
        lines = lines.replace(f'"{name}"', value)
    return pikit.loads(lines)


def test_the_same_content_on_two_branches_is_one_same_row() -> None:
    # Another entry, another timestamp, the keys of the arguments in another order: the model sees the same call.
    session = _two_answers(call("c1", "bash", command="ls", timeout=5), call("c1", "bash", timeout=5, command="ls"))
    d = diff_leaves(session, "a1", "b1")
    assert [(r.status, r.source_a, r.source_b) for r in d.rows] == [("same", "r", "r"), ("same", "a1", "b1")]
    other = _two_answers(call("c1", "bash", command="ls", timeout=5), call("c1", "bash", command="ls", timeout=5.5))
    assert [r.status for r in diff_leaves(other, "a1", "b1").rows] == ["same", "removed", "added"]


def test_deeply_nested_content_is_compared_without_recursion() -> None:
    deep = "[" * 5000 + "{}" + "]" * 5000
    session = _two_answers(call("c1", "bash", x="DEEP"), call("c1", "bash", x="DEEP"), DEEP=deep)
    d = diff_leaves(session, "a1", "b1")
    assert [(r.status, r.source_a, r.source_b) for r in d.rows] == [("same", "r", "r"), ("same", "a1", "b1")]
    unlike = _two_answers(call("c1", "bash", x="DEEP"), call("c1", "bash", x="OTHER"), DEEP=deep,
                          OTHER=deep.replace("{}", "[]"))
    assert [r.status for r in diff_leaves(unlike, "a1", "b1").rows] == ["same", "removed", "added"]


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.0, -0.0, 1.0, 2.5])
                     | st.sampled_from(["", "a", "b"]),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner,
                                                                                  max_size=3),
                     max_leaves=8)
_MESSAGES = st.dictionaries(st.sampled_from(["role", "content", "timestamp"]), _JSON, max_size=3)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(_MESSAGES, _MESSAGES)
def test_content_keys_are_equal_exactly_when_contents_are(x: dict[str, Any], y: dict[str, Any]) -> None:
    # Keys differ on no equal contents (a pair is never missed) and agree on no unequal ones (no wasted checks).
    assert (_content_key(x, 1) == _content_key(y, 1)) == _same_content(x, y)
    assert _content_key(x, 1) == _content_key(dict(reversed(list(x.items()))), 1)
