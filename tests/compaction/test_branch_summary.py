"""pikit.compaction._branch_summary: what leaving a branch would summarize (entries, budget, files).

``PI`` holds Pi 1.5.2's ``collectEntriesForBranchSummary`` + ``prepareBranchEntries`` for
pairs of positions and budgets on the session below, as (commonAncestorId, number of
entries, message roles U/A/C/B/S, totalTokens, digest of every field). Computed once
with node while writing this file.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from pikit import Session, UnknownEntryError, estimate_tokens, jsjson
from pikit._context.serialize import BRANCH_SUMMARY_PREFIX
from pikit.cli._json import compaction as compaction_json
from pikit.compaction import collect_branch, prepare_branch
from pikit.compaction._branch_summary import summary_details
from tests.entries import T0, asst, call, compaction, edit, session_of, text, tool_result, ts, usage, user

HEADER = {"type": "session", "version": 3, "id": "sess-bs", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


BRANCHY: list[dict[str, Any]] = [
    user("u1", None, 1, "root question " * 5),
    asst("a1", "u1", 2, text("root answer " * 5), usage(10, 1)),
    user("u2", "a1", 3, "branch A start " * 5),
    asst("a2", "u2", 4, [call("c1", "read", path="p/a.ts"), call("c2", "edit", path="p/b.ts", old="x", new="y")],
         usage(20, 2), stop="toolUse"),
    tool_result("r2", "a2", 5, text("result " * 30),
                nestedCalls={"calls": [{"name": "write", "arguments": {"path": "p/n.ts"}}]}),
    asst("a3", "r2", 6, [call("c3", "read", path="p/omitted.ts"), {"type": "text", "text": "failed " * 20}],
         usage(30, 3), stop="length"),
    edit("e1", "a3", 7, "a3", None),
    {"type": "custom_message", "id": "cm", "parentId": "e1", "timestamp": ts(8), "customType": "note",
     "content": "a note " * 10, "display": True},
    edit("e2", "cm", 9, "cm", {"content": "edited note"}),
    {"type": "branch_summary", "id": "bs1", "parentId": "e2", "timestamp": ts(10), "fromId": "zz",
     "summary": "old branch " * 12, "details": {"readFiles": ["d/r.ts"], "modifiedFiles": ["d/m.ts"]}},
    {"type": "branch_summary", "id": "bs2", "parentId": "bs1", "timestamp": ts(11), "fromId": "yy", "summary": "",
     "fromHook": True, "details": {"readFiles": ["hook.ts"], "modifiedFiles": []}},
    compaction("c1", "bs2", 12, "a2", "compacted summary " * 8, 99),
    {"type": "label", "id": "lb", "parentId": "c1", "timestamp": ts(13), "targetId": "u2", "label": "A"},
    user("u3", "lb", 14, "tail question " * 4),
    asst("a4", "u3", 15, [call("c4", "write", path="p/final.ts", content="z"),
                          {"type": "text", "text": "final answer " * 6}], usage(40, 4)),
    user("u4", "a1", 16, "branch B " * 5),
    asst("a5", "u4", 17, text("branch B answer " * 3), usage(50, 5)),
]


def build() -> Session:
    return session_of(HEADER, BRANCHY)


def digest(obj: Any) -> str:
    canonical = json.dumps(json.loads(jsjson.stringify(obj)), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


CODE = {"user": "U", "assistant": "A", "custom": "C", "branchSummary": "B", "compactionSummary": "S"}

# node: (from, to, budget) → (commonAncestorId, len(entries), roles, totalTokens, digest)
PI: dict[tuple[str | None, str, int], tuple[str | None, int, str, int, str]] = {
    ("a4", "a5", 0): ("a1", 13, "UACBBSUA", 151, "1f66b2988fd9"),
    ("a4", "a5", 5): ("a1", 13, "", 0, "70d6502ab962"),
    ("a4", "a5", 20): ("a1", 13, "", 0, "70d6502ab962"),
    ("a4", "a5", 50): ("a1", 13, "SUA", 80, "39566f4c3c8d"),
    ("a4", "a5", 60): ("a1", 13, "SUA", 80, "39566f4c3c8d"),
    ("a4", "a5", 100): ("a1", 13, "BBSUA", 113, "fe7114acbeb8"),
    ("a4", "a5", 1000): ("a1", 13, "UACBBSUA", 151, "1f66b2988fd9"),
    ("a5", "a4", 0): ("a1", 2, "UA", 24, "71cdc0c28051"),
    ("a5", "a4", 5): ("a1", 2, "", 0, "adc8af23d538"),
    ("a5", "a4", 20): ("a1", 2, "A", 12, "d5f64caad61c"),
    ("a5", "a4", 50): ("a1", 2, "UA", 24, "71cdc0c28051"),
    ("a5", "a4", 60): ("a1", 2, "UA", 24, "71cdc0c28051"),
    ("a5", "a4", 100): ("a1", 2, "UA", 24, "71cdc0c28051"),
    ("a5", "a4", 1000): ("a1", 2, "UA", 24, "71cdc0c28051"),
    ("a4", "u1", 0): ("u1", 14, "AUACBBSUA", 166, "6bce1187efe0"),
    ("a4", "u1", 5): ("u1", 14, "", 0, "e72ee5fe9081"),
    ("a4", "u1", 20): ("u1", 14, "", 0, "e72ee5fe9081"),
    ("a4", "u1", 50): ("u1", 14, "SUA", 80, "f3a9cd785fc8"),
    ("a4", "u1", 60): ("u1", 14, "SUA", 80, "f3a9cd785fc8"),
    ("a4", "u1", 100): ("u1", 14, "BBSUA", 113, "c2334238c0a3"),
    ("a4", "u1", 1000): ("u1", 14, "AUACBBSUA", 166, "6bce1187efe0"),
    ("a4", "a1", 0): ("a1", 13, "UACBBSUA", 151, "1f66b2988fd9"),
    ("a4", "a1", 5): ("a1", 13, "", 0, "70d6502ab962"),
    ("a4", "a1", 20): ("a1", 13, "", 0, "70d6502ab962"),
    ("a4", "a1", 50): ("a1", 13, "SUA", 80, "39566f4c3c8d"),
    ("a4", "a1", 60): ("a1", 13, "SUA", 80, "39566f4c3c8d"),
    ("a4", "a1", 100): ("a1", 13, "BBSUA", 113, "fe7114acbeb8"),
    ("a4", "a1", 1000): ("a1", 13, "UACBBSUA", 151, "1f66b2988fd9"),
    ("a4", "u4", 0): ("a1", 13, "UACBBSUA", 151, "1f66b2988fd9"),
    ("a4", "u4", 5): ("a1", 13, "", 0, "70d6502ab962"),
    ("a4", "u4", 20): ("a1", 13, "", 0, "70d6502ab962"),
    ("a4", "u4", 50): ("a1", 13, "SUA", 80, "39566f4c3c8d"),
    ("a4", "u4", 60): ("a1", 13, "SUA", 80, "39566f4c3c8d"),
    ("a4", "u4", 100): ("a1", 13, "BBSUA", 113, "fe7114acbeb8"),
    ("a4", "u4", 1000): ("a1", 13, "UACBBSUA", 151, "1f66b2988fd9"),
    ("u3", "a4", 0): ("u3", 0, "", 0, "bfc9461a453e"),
    ("u3", "a4", 5): ("u3", 0, "", 0, "bfc9461a453e"),
    ("u3", "a4", 20): ("u3", 0, "", 0, "bfc9461a453e"),
    ("u3", "a4", 50): ("u3", 0, "", 0, "bfc9461a453e"),
    ("u3", "a4", 60): ("u3", 0, "", 0, "bfc9461a453e"),
    ("u3", "a4", 100): ("u3", 0, "", 0, "bfc9461a453e"),
    ("u3", "a4", 1000): ("u3", 0, "", 0, "bfc9461a453e"),
    ("a4", "c1", 0): ("c1", 3, "UA", 44, "5251d60fa14e"),
    ("a4", "c1", 5): ("c1", 3, "", 0, "3ddeae31fd5c"),
    ("a4", "c1", 20): ("c1", 3, "", 0, "3ddeae31fd5c"),
    ("a4", "c1", 50): ("c1", 3, "UA", 44, "5251d60fa14e"),
    ("a4", "c1", 60): ("c1", 3, "UA", 44, "5251d60fa14e"),
    ("a4", "c1", 100): ("c1", 3, "UA", 44, "5251d60fa14e"),
    ("a4", "c1", 1000): ("c1", 3, "UA", 44, "5251d60fa14e"),
    ("a5", "u1", 0): ("u1", 3, "AUA", 39, "d1a9c3c7fdd7"),
    ("a5", "u1", 5): ("u1", 3, "", 0, "c3d51e0909d0"),
    ("a5", "u1", 20): ("u1", 3, "A", 12, "980bff3228ec"),
    ("a5", "u1", 50): ("u1", 3, "AUA", 39, "d1a9c3c7fdd7"),
    ("a5", "u1", 60): ("u1", 3, "AUA", 39, "d1a9c3c7fdd7"),
    ("a5", "u1", 100): ("u1", 3, "AUA", 39, "d1a9c3c7fdd7"),
    ("a5", "u1", 1000): ("u1", 3, "AUA", 39, "d1a9c3c7fdd7"),
    (None, "a4", 0): (None, 0, "", 0, "19952264d293"),
    (None, "a4", 5): (None, 0, "", 0, "19952264d293"),
    (None, "a4", 20): (None, 0, "", 0, "19952264d293"),
    (None, "a4", 50): (None, 0, "", 0, "19952264d293"),
    (None, "a4", 60): (None, 0, "", 0, "19952264d293"),
    (None, "a4", 100): (None, 0, "", 0, "19952264d293"),
    (None, "a4", 1000): (None, 0, "", 0, "19952264d293"),
    ("cm", "a5", 0): ("a1", 6, "UAC", 53, "6f4615bb9979"),
    ("cm", "a5", 5): ("a1", 6, "", 0, "b83d58566ed3"),
    ("cm", "a5", 20): ("a1", 6, "C", 18, "fa509e5abbc7"),
    ("cm", "a5", 50): ("a1", 6, "AC", 34, "eee02800a528"),
    ("cm", "a5", 60): ("a1", 6, "UAC", 53, "6f4615bb9979"),
    ("cm", "a5", 100): ("a1", 6, "UAC", 53, "6f4615bb9979"),
    ("cm", "a5", 1000): ("a1", 6, "UAC", 53, "6f4615bb9979"),
}


@pytest.mark.parametrize("key", list(PI), ids=[f"{f}->{t}@{b}" for f, t, b in PI])
def test_branch_preparation_matches_pi(key: tuple[str | None, str, int]) -> None:
    old, target, budget = key
    ancestor, n_entries, roles, total, fields_digest = PI[key]
    session = build()
    entries, common = collect_branch(session, old, target)
    prep = prepare_branch(entries, budget, common)
    assert common == ancestor
    assert len(entries) == n_entries
    assert "".join(CODE[msg["role"]] for msg in prep.messages) == roles
    assert prep.total_tokens == total
    out = compaction_json.branch_preparation(prep, old, target)
    assert digest({k: v for k, v in out.items() if k not in ("from", "to", "budget")}) == fields_digest
    assert (out["from"], out["to"], out["budget"]) == (old, target, budget)


# ---------------------------------------------------------------- readable checks
def test_collect_branch() -> None:
    session = build()
    entries, ancestor = collect_branch(session, "a4", "a5")
    assert ancestor == "a1"
    assert [e.id for e in entries] == ["u2", "a2", "r2", "a3", "e1", "cm", "e2", "bs1", "bs2", "c1", "lb", "u3", "a4"]
    assert collect_branch(session, None, "a4") == ([], None)
    assert collect_branch(session, "", "a4") == ([], None)
    assert collect_branch(session, "u3", "a4") == ([], "u3")  # moving down the same branch leaves nothing


def test_collect_branch_unknown_ids_raise() -> None:
    session = build()
    with pytest.raises(UnknownEntryError):
        collect_branch(session, "nope", "a4")
    with pytest.raises(UnknownEntryError):
        collect_branch(session, "a4", "nope")


def test_messages_skip_tool_results_apply_edits_and_keep_empty_summaries() -> None:
    entries, ancestor = collect_branch(build(), "a4", "a5")
    prep = prepare_branch(entries, 0, ancestor)
    roles = [msg["role"] for msg in prep.messages]
    assert roles == ["user", "assistant", "custom", "branchSummary", "branchSummary", "compactionSummary", "user",
                     "assistant"]
    custom = prep.messages[2]
    assert custom["content"] == "edited note"  # the latest edit of cm
    assert prep.messages[4] == {"role": "branchSummary", "summary": "", "fromId": "yy", "timestamp": T0 + 11000}
    assert prep.messages[5] == {"role": "compactionSummary", "summary": "compacted summary " * 8, "tokensBefore": 99,
                                "timestamp": T0 + 12000}
    assert prep.total_tokens == sum(estimate_tokens(msg) for msg in prep.messages)
    # a3 was omitted by e1: neither its text nor its read count; r2's nested write is on a skipped tool result
    assert prep.file_ops.lists() == (["d/r.ts", "p/a.ts"], ["d/m.ts", "p/b.ts", "p/final.ts"])
    assert "hook.ts" not in prep.file_ops.lists()[0]  # a hook's branch summary details are not carried
    assert summary_details(prep) == {"readFiles": ["d/r.ts", "p/a.ts"], "modifiedFiles": ["d/m.ts", "p/b.ts",
                                                                                          "p/final.ts"]}
    assert prep.file_lists_text.startswith("\n\n<read-files>\nd/r.ts\np/a.ts\n</read-files>")
    assert BRANCH_SUMMARY_PREFIX in prep.conversation_text  # summaries are framed for the model
    assert prep.conversation_text.startswith("[User]: branch A start")


def test_budget_keeps_the_newest_messages_and_lets_summaries_squeeze_in() -> None:
    entries, ancestor = collect_branch(build(), "a4", "a5")
    tight = prepare_branch(entries, 5, ancestor)
    assert tight.messages == [] and tight.total_tokens == 0
    # the file operations of a message are gathered before the budget test
    assert tight.file_ops.lists() == (["d/r.ts"], ["d/m.ts", "p/final.ts"])
    roomy = prepare_branch(entries, 100, ancestor)
    # u3+a4+compaction = 80 < 90% of 100: the next summary still goes in although it overshoots
    assert [msg["role"] for msg in roomy.messages] == ["branchSummary", "branchSummary", "compactionSummary", "user",
                                                       "assistant"]
    assert roomy.total_tokens == 113 > roomy.budget
    unlimited = prepare_branch(entries, 0, ancestor)
    assert unlimited.budget == 0 and len(unlimited.messages) == 8
