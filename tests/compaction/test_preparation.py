"""pikit.compaction._preparation: cut point, split turn, recovery rule, file lists (no model call).

``PI`` holds what Pi 1.5.2's ``prepareCompaction`` returns for every entry of the sessions
below as the leaf and each keepRecentTokens value: ``(firstKeptEntryId, isSplitTurn,
digest)`` where the digest covers every field of ``pikit compact --dry-run --json``
(messages, file lists, texts). Computed once with node while writing this file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pikit import Session, estimate_tokens, jsjson
from pikit._context.fileops import FileOps, format_file_lists
from pikit.cli._json import compaction as compaction_json
from pikit.compaction import Preparation, find_cut_point, prepare_compaction
from tests.entries import asst, call, compaction, edit, m, session_of, text, tool_result, ts, usage, user

HEADER = {"type": "session", "version": 3, "id": "sess-prep", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


PREP: dict[str, list[dict[str, Any]]] = {
    "turns": [
        user("u1", None, 1, "please read the config " * 4),
        asst("a1", "u1", 2, [{"type": "text", "text": "reading"}, call("c1", "read", path="src/config.ts")],
             usage(100, 10), stop="toolUse"),
        tool_result("r1", "a1", 3, text("config body " * 20)),
        asst("a2", "r1", 4, [call("c2", "edit", path="src/config.ts", old="a", new="b"),
                             call("c3", "write", path="src/new.ts", content="x" * 40)], usage(200, 20), stop="toolUse"),
        tool_result("r2", "a2", 5, text("edited " * 10), name="edit"),
        tool_result("r3", "r2", 6, text("written " * 10), name="write"),
        asst("a3", "r3", 7, text("done with step one " * 5), usage(300, 30)),
        user("u2", "a3", 8, "now run the tests " * 3),
        asst("a4", "u2", 9, [call("c4", "bash", command="npm test"), call("c5", "read", path="README.md"),
                             call("c6", "read", path="src/new.ts")], usage(400, 40), stop="toolUse"),
        tool_result("r4", "a4", 10, text("test output " * 30), name="bash"),
        tool_result("r5", "r4", 11, text("readme " * 15)),
        tool_result("r6", "r5", 12, text("new " * 15),
                    nestedCalls={"calls": [{"name": "read", "arguments": {"path": "nested/deep.ts"}},
                                           {"name": "edit", "arguments": {"path": "nested/changed.ts"}}]}),
        asst("a5", "r6", 13, text("tests pass " * 8), usage(500, 50)),
        user("u3", "a5", 14, "thanks"),
        asst("a6", "u3", 15, text("you are welcome"), usage(520, 5)),
    ],
    "recovery": [
        user("u1", None, 1, "first request " * 10),
        asst("a1", "u1", 2, text("first answer " * 10), usage(100, 10)),
        user("u2", "a1", 3, "second request " * 10),
        asst("a2", "u2", 4, text("partial failed answer " * 20), usage(150, 10),
             stop="length"),
        edit("e1", "a2", 5, "a2", None),
    ],
    "metadata": [
        user("u1", None, 1, "alpha " * 20),
        asst("a1", "u1", 2, text("beta " * 20), usage(50, 5)),
        {"type": "model_change", "id": "mc", "parentId": "a1", "timestamp": ts(3), "provider": "openai",
         "modelId": "gpt-5"},
        {"type": "thinking_level_change", "id": "tl", "parentId": "mc", "timestamp": ts(4),
         "thinkingLevel": "low"},
        {"type": "label", "id": "lb", "parentId": "tl", "timestamp": ts(5), "targetId": "u1", "label": "start"},
        user("u2", "lb", 6, "gamma " * 20),
        asst("a2", "u2", 7, text("delta " * 20), usage(120, 12)),
        {"type": "custom_message", "id": "cm", "parentId": "a2", "timestamp": ts(8), "customType": "note",
         "content": "epsilon " * 10, "display": True},
        m("b1", "cm", 9, {"role": "bashExecution", "command": "ls", "output": "zeta " * 10, "exitCode": 0,
                          "cancelled": False, "truncated": False}),
        asst("a3", "b1", 10, text("eta " * 20), usage(200, 20)),
    ],
    "previous": [
        user("u1", None, 1, "old stuff " * 20),
        asst("a1", "u1", 2, [call("c1", "read", path="old/read.ts")], usage(50, 5), stop="toolUse"),
        tool_result("r1", "a1", 3, text("old body " * 10)),
        compaction("c1", "r1", 4, "r1", "previous summary text", 60,
                   details={"readFiles": ["old/read.ts", "b.ts"], "modifiedFiles": ["old/mod.ts"]}),
        user("u2", "c1", 5, "new stuff " * 20),
        asst("a2", "u2", 6, [call("c2", "write", path="b.ts", content="z")], usage(80, 8), stop="toolUse"),
        tool_result("r2", "a2", 7, text("ok")),
        asst("a3", "r2", 8, text("wrote it " * 10), usage(90, 9)),
        user("u3", "a3", 9, "more " * 20),
        asst("a4", "u3", 10, text("fine " * 20), usage(120, 12)),
        compaction("c2", "a4", 11, "u3", "hook summary", 130, fromHook=True,
                   details={"readFiles": ["hook/read.ts"], "modifiedFiles": []}),
        user("u4", "c2", 12, "after hook " * 20),
        asst("a5", "u4", 13, text("answer " * 20), usage(150, 15)),
    ],
}


def build(entries: list[dict[str, Any]]) -> Session:
    return session_of(HEADER, entries)


def digest(obj: Any) -> str:
    canonical = json.dumps(json.loads(jsjson.stringify(obj)), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:12]


# node: prepareCompaction(path, {keepRecentTokens: k}) → (firstKeptEntryId, isSplitTurn, digest of all fields)
PI: dict[str, dict[str, dict[int, tuple[str, bool, str] | None]]] = {
    "turns": {
        "u1": {1: None, 20: None, 50: None, 100: None, 150: None, 200: None, 300: None, 600: None, 100000: None},
        "a1": {1: ("a1", True, "bcdd6fe75f9c"), 20: None, 50: None, 100: None, 150: None, 200: None, 300: None,
            600: None, 100000: None},
        "r1": {1: ("a1", True, "44a3e8370c7d"), 20: ("a1", True, "44a3e8370c7d"), 50: ("a1", True, "44a3e8370c7d"),
            100: None, 150: None, 200: None, 300: None, 600: None, 100000: None},
        "a2": {1: ("a2", True, "2a3b4d46fe57"), 20: ("a2", True, "2a3b4d46fe57"), 50: ("a2", True, "2a3b4d46fe57"),
            100: ("a1", True, "fc724684be9e"), 150: None, 200: None, 300: None, 600: None, 100000: None},
        "r2": {1: ("a2", True, "3e6b1df2a82f"), 20: ("a2", True, "3e6b1df2a82f"), 50: ("a2", True, "3e6b1df2a82f"),
            100: ("a2", True, "3e6b1df2a82f"), 150: None, 200: None, 300: None, 600: None, 100000: None},
        "r3": {1: ("a2", True, "70ffb650fa96"), 20: ("a2", True, "70ffb650fa96"), 50: ("a2", True, "70ffb650fa96"),
            100: ("a2", True, "70ffb650fa96"), 150: None, 200: None, 300: None, 600: None, 100000: None},
        "a3": {1: ("a3", True, "e25996c26649"), 20: ("a3", True, "e25996c26649"), 50: ("a3", True, "e25996c26649"),
            100: ("a2", True, "fe029027a7a1"), 150: ("a2", True, "fe029027a7a1"), 200: None, 300: None, 600: None,
            100000: None},
        "u2": {1: ("u2", False, "5bc004a2a393"), 20: ("a3", True, "80ad3a0150b8"),
            50: ("a3", True, "80ad3a0150b8"), 100: ("a2", True, "5bb6c8fcc671"), 150: ("a2", True, "5bb6c8fcc671"),
            200: None, 300: None, 600: None, 100000: None},
        "a4": {1: ("a4", True, "8dc81791fc81"), 20: ("u2", False, "13164d8fbb96"),
            50: ("a3", True, "55df4a777104"), 100: ("a2", True, "c9eb02fb89a0"), 150: ("a2", True, "c9eb02fb89a0"),
            200: None, 300: None, 600: None, 100000: None},
        "r4": {1: ("a4", True, "59cce31a33ec"), 20: ("a4", True, "59cce31a33ec"), 50: ("a4", True, "59cce31a33ec"),
            100: ("a4", True, "59cce31a33ec"), 150: ("a3", True, "a2b0c7bb4eb3"),
            200: ("a2", True, "da784b401501"), 300: None, 600: None, 100000: None},
        "r5": {1: ("a4", True, "67d553a8bf6f"), 20: ("a4", True, "67d553a8bf6f"), 50: ("a4", True, "67d553a8bf6f"),
            100: ("a4", True, "67d553a8bf6f"), 150: ("u2", False, "b8d3a31defea"),
            200: ("a3", True, "246e6fef2064"), 300: ("a2", True, "70946ec3db3f"), 600: None, 100000: None},
        "r6": {1: ("a4", True, "1666e83e6367"), 20: ("a4", True, "1666e83e6367"), 50: ("a4", True, "1666e83e6367"),
            100: ("a4", True, "1666e83e6367"), 150: ("a4", True, "1666e83e6367"),
            200: ("a3", True, "28f181108b10"), 300: ("a2", True, "80bf6019b444"), 600: None, 100000: None},
        "a5": {1: ("a5", True, "787e14db6eab"), 20: ("a5", True, "787e14db6eab"), 50: ("a5", True, "787e14db6eab"),
            100: ("a5", True, "787e14db6eab"), 150: ("a5", True, "787e14db6eab"),
            200: ("a3", True, "d3382354c98f"), 300: ("a2", True, "8f70acd0d269"), 600: None, 100000: None},
        "u3": {1: ("u3", False, "a9e6838270ce"), 20: ("a5", True, "4cdfd91623b9"),
            50: ("a5", True, "4cdfd91623b9"), 100: ("a5", True, "4cdfd91623b9"), 150: ("a5", True, "4cdfd91623b9"),
            200: ("a3", True, "194b3f12d011"), 300: ("a2", True, "b473c3f5e9d5"), 600: None, 100000: None},
        "a6": {1: ("a6", True, "c8641acba8a5"), 20: ("a5", True, "ab0edbe4524f"), 50: ("a5", True, "ab0edbe4524f"),
            100: ("a5", True, "ab0edbe4524f"), 150: ("a5", True, "ab0edbe4524f"),
            200: ("a3", True, "e236ef2550d6"), 300: ("a2", True, "a4d58ac2b873"), 600: None, 100000: None},
    },
    "recovery": {
        "u1": {1: None, 20: None, 50: None, 100: None, 150: None, 200: None, 300: None, 600: None, 100000: None},
        "a1": {1: ("a1", True, "5e38363dd778"), 20: ("a1", True, "5e38363dd778"), 50: None, 100: None, 150: None,
            200: None, 300: None, 600: None, 100000: None},
        "u2": {1: ("u2", False, "8603bf21e8b1"), 20: ("u2", False, "8603bf21e8b1"),
            50: ("a1", True, "f577629f679b"), 100: None, 150: None, 200: None, 300: None, 600: None, 100000: None},
        "a2": {1: ("a2", True, "7f65c4169f2a"), 20: ("a2", True, "7f65c4169f2a"), 50: ("a2", True, "7f65c4169f2a"),
            100: ("a2", True, "7f65c4169f2a"), 150: ("a1", True, "b63a61076cbc"), 200: None, 300: None, 600: None,
            100000: None},
        "e1": {1: ("a2", True, "75e740741a1c"), 20: ("a2", True, "75e740741a1c"), 50: ("a1", True, "52837ac88499"),
            100: None, 150: None, 200: None, 300: None, 600: None, 100000: None},
    },
    "metadata": {
        "u1": {1: None, 20: None, 50: None, 100: None, 150: None, 200: None, 300: None, 600: None, 100000: None},
        "a1": {1: ("a1", True, "bd2319d7a92b"), 20: ("a1", True, "bd2319d7a92b"), 50: None, 100: None, 150: None,
            200: None, 300: None, 600: None, 100000: None},
        "mc": {1: ("a1", True, "bd2319d7a92b"), 20: ("a1", True, "bd2319d7a92b"), 50: None, 100: None, 150: None,
            200: None, 300: None, 600: None, 100000: None},
        "tl": {1: ("a1", True, "bd2319d7a92b"), 20: ("a1", True, "bd2319d7a92b"), 50: None, 100: None, 150: None,
            200: None, 300: None, 600: None, 100000: None},
        "lb": {1: ("a1", True, "bd2319d7a92b"), 20: ("a1", True, "bd2319d7a92b"), 50: None, 100: None, 150: None,
            200: None, 300: None, 600: None, 100000: None},
        "u2": {1: ("mc", True, "8dc49017e285"), 20: ("mc", True, "8dc49017e285"), 50: ("a1", True, "3efa1db14b66"),
            100: None, 150: None, 200: None, 300: None, 600: None, 100000: None},
        "a2": {1: ("a2", True, "b953c16a62f0"), 20: ("a2", True, "b953c16a62f0"), 50: ("mc", True, "49ffb5cdbf3d"),
            100: None, 150: None, 200: None, 300: None, 600: None, 100000: None},
        "cm": {1: ("cm", False, "69d3c6cf906c"), 20: ("cm", False, "69d3c6cf906c"),
            50: ("a2", True, "fbc1e2d3b702"), 100: ("a1", True, "e72eeb9e522c"), 150: None, 200: None, 300: None,
            600: None, 100000: None},
        "b1": {1: ("b1", False, "285398b73881"), 20: ("cm", False, "7cd976a1b1c9"),
            50: ("a2", True, "84fbf24751be"), 100: ("a1", True, "bb15d71ef782"), 150: None, 200: None, 300: None,
            600: None, 100000: None},
        "a3": {1: ("a3", True, "766556e62a53"), 20: ("a3", True, "766556e62a53"),
            50: ("cm", False, "0394986a5618"), 100: ("mc", True, "3b41c4154137"), 150: None, 200: None, 300: None,
            600: None, 100000: None},
    },
    "previous": {
        "u1": {1: None, 20: None, 50: None, 100: None, 150: None, 200: None, 300: None, 600: None, 100000: None},
        "a1": {1: ("a1", True, "19b5952a3b3c"), 20: None, 50: None, 100: None, 150: None, 200: None, 300: None,
            600: None, 100000: None},
        "r1": {1: ("a1", True, "d11511ece6fc"), 20: ("a1", True, "d11511ece6fc"), 50: None, 100: None, 150: None,
            200: None, 300: None, 600: None, 100000: None},
        "c1": {1: None, 20: None, 50: None, 100: None, 150: None, 200: None, 300: None, 600: None, 100000: None},
        "u2": {1: ("u2", False, "2e96ba83ab6a"), 20: ("u2", False, "2e96ba83ab6a"),
            50: ("u2", False, "2e96ba83ab6a"), 100: ("u2", False, "2e96ba83ab6a"),
            150: ("u2", False, "2e96ba83ab6a"), 200: ("u2", False, "2e96ba83ab6a"),
            300: ("u2", False, "2e96ba83ab6a"), 600: ("u2", False, "2e96ba83ab6a"),
            100000: ("u2", False, "2e96ba83ab6a")},
        "a2": {1: ("a2", True, "204aefbadc77"), 20: ("u2", False, "72fb048a47bd"),
            50: ("u2", False, "72fb048a47bd"), 100: ("u2", False, "72fb048a47bd"),
            150: ("u2", False, "72fb048a47bd"), 200: ("u2", False, "72fb048a47bd"),
            300: ("u2", False, "72fb048a47bd"), 600: ("u2", False, "72fb048a47bd"),
            100000: ("u2", False, "72fb048a47bd")},
        "r2": {1: ("a2", True, "18356fd3a37b"), 20: ("u2", False, "d72cfda9e086"),
            50: ("u2", False, "d72cfda9e086"), 100: ("u2", False, "d72cfda9e086"),
            150: ("u2", False, "d72cfda9e086"), 200: ("u2", False, "d72cfda9e086"),
            300: ("u2", False, "d72cfda9e086"), 600: ("u2", False, "d72cfda9e086"),
            100000: ("u2", False, "d72cfda9e086")},
        "a3": {1: ("a3", True, "f290406832f6"), 20: ("a3", True, "f290406832f6"),
            50: ("u2", False, "a18642770fda"), 100: ("u2", False, "a18642770fda"),
            150: ("u2", False, "a18642770fda"), 200: ("u2", False, "a18642770fda"),
            300: ("u2", False, "a18642770fda"), 600: ("u2", False, "a18642770fda"),
            100000: ("u2", False, "a18642770fda")},
        "u3": {1: ("u3", False, "25275cead838"), 20: ("u3", False, "25275cead838"),
            50: ("a2", True, "8ac9485c23a0"), 100: ("u2", False, "af9e256d62fe"),
            150: ("u2", False, "af9e256d62fe"), 200: ("u2", False, "af9e256d62fe"),
            300: ("u2", False, "af9e256d62fe"), 600: ("u2", False, "af9e256d62fe"),
            100000: ("u2", False, "af9e256d62fe")},
        "a4": {1: ("a4", True, "21da0a2df26e"), 20: ("a4", True, "21da0a2df26e"),
            50: ("u3", False, "09f98cf983e1"), 100: ("u2", False, "f39cc90e0140"),
            150: ("u2", False, "f39cc90e0140"), 200: ("u2", False, "f39cc90e0140"),
            300: ("u2", False, "f39cc90e0140"), 600: ("u2", False, "f39cc90e0140"),
            100000: ("u2", False, "f39cc90e0140")},
        "c2": {1: None, 20: None, 50: None, 100: None, 150: None, 200: None, 300: None, 600: None, 100000: None},
        "u4": {1: ("u4", False, "d3459b6f591d"), 20: ("u4", False, "d3459b6f591d"),
            50: ("u4", False, "d3459b6f591d"), 100: None, 150: None, 200: None, 300: None, 600: None, 100000: None},
        "a5": {1: ("a5", True, "1eeb1f54f4e5"), 20: ("a5", True, "1eeb1f54f4e5"),
            50: ("u4", False, "93ad655b788d"), 100: ("a4", True, "a9432977ec96"), 150: None, 200: None, 300: None,
            600: None, 100000: None},
    },
}
CASES = [(name, leaf, keep) for name, leaves in PI.items() for leaf, per in leaves.items() for keep in per]


@pytest.mark.parametrize(("name", "leaf", "keep"), CASES, ids=[f"{n}:{lf}:{k}" for n, lf, k in CASES])
def test_preparation_matches_pi(name: str, leaf: str, keep: int) -> None:
    expected = PI[name][leaf][keep]
    session = build(PREP[name])
    prep = prepare_compaction(session.branch(leaf), keep)
    if expected is None:
        assert prep is None
        return
    assert prep is not None
    first_kept, split, fields_digest = expected
    assert prep.first_kept_entry_id == first_kept
    assert prep.is_split_turn is split
    assert digest(compaction_json.preparation(prep)) == fields_digest


# ---------------------------------------------------------------- readable checks of the same cases
def test_split_turn_file_lists_and_texts() -> None:
    session = build(PREP["turns"])
    prep = prepare_compaction(session.branch("a6"), 1)
    assert prep is not None
    assert (prep.first_kept_entry_id, prep.is_split_turn, prep.tokens_before) == ("a6", True, 525)
    assert prep.read_files == ["README.md", "nested/deep.ts"]  # nestedCalls count; read − modified
    assert prep.modified_files == ["nested/changed.ts", "src/config.ts", "src/new.ts"]
    assert prep.file_lists_text == ("\n\n<read-files>\nREADME.md\nnested/deep.ts\n</read-files>\n\n"
                                    "<modified-files>\nnested/changed.ts\nsrc/config.ts\nsrc/new.ts\n</modified-files>")
    assert len(prep.messages_to_summarize) == 13 and [m["role"] for m in prep.turn_prefix_messages] == ["user"]
    assert prep.previous_summary is None and prep.previous_compaction is None
    assert prep.kept_entry_ids == ["a6"]
    assert prep.summarized_entry_ids == session.branch_ids("a6")[:-1]
    assert prep.turn_start_index == 13 and prep.first_kept_index == 14
    assert prep.conversation_text.startswith("[User]: please read the config")
    assert "[Assistant tool calls]: read(path=\"src/config.ts\")" in prep.conversation_text
    assert prep.turn_prefix_text == "[User]: thanks"
    assert prep.kept_tokens == estimate_tokens(session.by_id["a6"].data["message"])


def test_everything_before_the_cut_is_a_turn_prefix() -> None:
    prep = prepare_compaction(build(PREP["turns"]).branch("a6"), 300)
    assert prep is not None
    assert prep.first_kept_entry_id == "a2" and prep.is_split_turn
    assert prep.messages_to_summarize == [] and prep.conversation_text == ""
    assert [m["role"] for m in prep.turn_prefix_messages] == ["user", "assistant", "toolResult"]
    assert prep.read_files == ["src/config.ts"] and prep.modified_files == []


def test_cut_at_a_user_message_is_not_split() -> None:
    prep = prepare_compaction(build(PREP["turns"]).branch("a4"), 20)
    assert prep is not None
    assert prep.first_kept_entry_id == "u2" and not prep.is_split_turn
    assert prep.turn_prefix_messages == [] and prep.turn_start_index == -1


def test_recovery_rule_moves_the_cut_past_an_omitted_failed_attempt() -> None:
    session = build(PREP["recovery"])
    # at e1 the failed answer a2 is omitted by a context edit: the cut moves one entry later
    prep = prepare_compaction(session.branch("e1"), 1)
    assert prep is not None and prep.first_kept_entry_id == "a2" and prep.is_split_turn
    assert [m["role"] for m in prep.turn_prefix_messages] == ["user"]
    assert [m["role"] for m in prep.messages_to_summarize] == ["user", "assistant"]


def test_cut_moves_back_over_metadata() -> None:
    session = build(PREP["metadata"])
    prep = prepare_compaction(session.branch("u2"), 1)
    assert prep is not None
    # the cut at u2 is pulled back over the label, thinking and model entries before it
    assert prep.first_kept_entry_id == "mc" and prep.is_split_turn
    assert prep.kept_entry_ids == ["mc", "tl", "lb", "u2"]


def test_previous_compaction_summary_and_files() -> None:
    session = build(PREP["previous"])
    prep = prepare_compaction(session.branch("a4"), 50)
    assert prep is not None
    assert prep.previous_summary == "previous summary text"
    assert prep.previous_compaction is session.by_id["c1"]
    assert prep.first_kept_entry_id == "u3" and not prep.is_split_turn
    assert prep.read_files == ["old/read.ts"]  # b.ts was read before and written now: modified only
    assert prep.modified_files == ["b.ts", "old/mod.ts"]
    assert prep.summarized_entry_ids == ["r1", "u2", "a2", "r2", "a3"]


@pytest.mark.parametrize(("summary", "previous"), [
    ("text", "text"), ("", ""), (None, None), (0, None), (False, None), (1.5, "1.5"), (True, "true"),
    (2 ** 70, "1.1805916207174113e+21"), ([], ""), ([[], []], ","), ([1, [2, [3]]], "1,2,3"), ([1, None, 2], "1,,2"),
    ({"a": 1}, "[object Object]"), ([{"a": 1}, "x"], "[object Object],x"),
])
def test_a_previous_summary_that_is_no_string_is_read_as_javascript_writes_it(summary: Any, previous: Any) -> None:
    """Pi writes the previous summary into its prompt as ``${previousSummary}`` where it is true for JavaScript
    (the expected texts are what Node.js prints)."""
    entries = [e if e["id"] != "c1" else {**e, "summary": summary} for e in PREP["previous"]]
    prep = prepare_compaction(build(entries).branch("a4"), 50)
    assert prep is not None and prep.previous_summary == previous


def test_hook_compaction_details_are_not_carried_over() -> None:
    prep = prepare_compaction(build(PREP["previous"]).branch("a5"), 100)
    assert prep is not None
    assert prep.previous_summary == "hook summary"
    assert prep.read_files == [] and prep.modified_files == []


def test_nothing_to_compact() -> None:
    session = build(PREP["previous"])
    assert prepare_compaction(session.branch("c1"), 1) is None  # the leaf is a compaction
    assert prepare_compaction(session.branch("u1"), 1) is None  # a single entry: nothing before the cut
    assert prepare_compaction([], 1) is None
    assert prepare_compaction(build(PREP["turns"]).branch("a6"), 100_000) is None  # everything fits


def test_json_keys() -> None:
    prep = prepare_compaction(build(PREP["turns"]).branch("a6"), 1)
    assert prep is not None
    assert list(compaction_json.preparation(prep)) == [
        "firstKeptEntryId", "isSplitTurn", "tokensBefore", "previousSummary", "messagesToSummarize",
        "turnPrefixMessages", "readFiles", "modifiedFiles", "fileListsText", "conversationText"]


def test_a_projection_can_be_passed_in() -> None:
    session = build(PREP["turns"])
    projection = session.context("a6")
    prep = prepare_compaction(session.branch("a6"), 1, projection)
    assert prep is not None and prep.projection is projection


# ---------------------------------------------------------------- file operations
def test_file_ops_lists_and_format() -> None:
    ops = FileOps()
    ops.add_call("read", {"path": "b"})
    ops.add_call("read", {"path": "a"})
    ops.add_call("read", {"path": "w"})
    ops.add_call("write", {"path": "w"})
    ops.add_call("edit", {"path": "e"})
    ops.add_call("grep", {"path": "ignored"})
    ops.add_call("read", {"path": 5})
    ops.add_call("read", {"file": "x"})
    ops.add_call("read", {"path": ""})
    ops.add_call("read", {"path": "😀"})
    ops.add_call("read", {"path": "\uff5e"})
    read, modified = ops.lists()
    # UTF-16 order, as Array.prototype.sort: U+FF5E sorts after the surrogate pair of 😀 (0xD83D)
    assert read == ["a", "b", "😀", "\uff5e"]
    assert modified == ["e", "w"]
    assert format_file_lists(read, modified) == (
        "\n\n<read-files>\na\nb\n😀\n\uff5e\n</read-files>\n\n<modified-files>\ne\nw\n</modified-files>")
    assert format_file_lists([], []) == ""
    assert format_file_lists([], ["m"]) == "\n\n<modified-files>\nm\n</modified-files>"


def test_file_ops_from_messages_and_details() -> None:
    ops = FileOps()
    ops.add_details({"readFiles": ["r1"], "modifiedFiles": ["m1"]})
    ops.add_details(None)
    ops.add_message({"role": "assistant", "content": [{"type": "toolCall", "name": "edit", "arguments": {"path": "x"}},
                                                      {"type": "text", "text": "read(path=y)"}]})
    ops.add_message({"role": "toolResult", "nestedCalls": {"calls": [{"name": "write", "arguments": {"path": "n"}}]}})
    ops.add_message({"role": "user", "content": [{"type": "toolCall", "name": "read", "arguments": {"path": "u"}}]})
    assert ops.lists() == (["r1"], ["m1", "n", "x"])


# ---------------------------------------------------------------- properties over random conversations
@st.composite
def conversations(draw: Callable[..., Any]) -> list[dict[str, Any]]:
    n = draw(st.integers(2, 28))
    entries: list[dict[str, Any]] = []
    parent: Any = None
    ids: list[str] = []
    words = st.integers(0, 60).map(lambda k: "w" * k)
    paths = st.sampled_from(["a.ts", "b.ts", "src/c.ts", "é.md"])
    for i in range(n):
        entry_id = f"x{i:02d}"
        kind = draw(st.sampled_from(["user", "assistant", "assistant", "tool", "tool", "bash", "custom", "branch",
                                     "meta", "edit", "compaction", "system"]))
        s = i + 1
        if kind == "user":
            e = user(entry_id, parent, s, draw(words))
        elif kind == "assistant":
            content: list[dict[str, Any]] = []
            if draw(st.booleans()):
                content.append({"type": "text", "text": draw(words)})
            for j in range(draw(st.integers(0, 2))):
                content.append(call(f"c{i}{j}", draw(st.sampled_from(["read", "write", "edit", "bash"])),
                                    path=draw(paths)))
            use = usage(draw(st.integers(0, 500)), 1) if draw(st.booleans()) else None
            e = asst(entry_id, parent, s, content, use, stop=draw(st.sampled_from(["stop", "toolUse", "aborted"])))
        elif kind == "tool":
            e = tool_result(entry_id, parent, s, text(draw(words)))
        elif kind == "bash":
            e = m(entry_id, parent, s, {"role": "bashExecution", "command": "ls", "output": draw(words), "exitCode": 0,
                                        "cancelled": False, "truncated": False})
        elif kind == "custom":
            e = {"type": "custom_message", "id": entry_id, "parentId": parent, "timestamp": ts(s), "customType": "k",
                 "content": draw(words), "display": True}
        elif kind == "branch":
            e = {"type": "branch_summary", "id": entry_id, "parentId": parent, "timestamp": ts(s), "fromId": "z",
                 "summary": draw(words)}
        elif kind == "meta":
            e = {"type": "label", "id": entry_id, "parentId": parent, "timestamp": ts(s), "targetId": "x00",
                 "label": "l"}
        elif kind == "edit" and ids:
            e = edit(entry_id, parent, s, draw(st.sampled_from(ids)),
                     draw(st.sampled_from([None, {"content": "r"}, {"content": text("rr")}])))
        elif kind == "compaction" and ids:
            e = compaction(entry_id, parent, s, draw(st.sampled_from([*ids, entry_id])), "sum " + draw(words), 10,
                           details={"readFiles": [draw(paths)], "modifiedFiles": []})
        elif kind == "system":
            e = m(entry_id, parent, s, {"role": "system", "content": draw(words), "sections": {"s": draw(words)}})
        else:
            e = user(entry_id, parent, s, draw(words))
        entries.append(e)
        ids.append(entry_id)
        parent = entry_id
    return entries


def _tokens(prep: Preparation, start: int, stop: int | None = None) -> int:
    return sum(estimate_tokens(m) for pe in prep.projection.entries[start:stop] for m in pe.messages)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.integers(1, 400))
@pytest.mark.slow
def test_cut_point_invariants(entries: list[dict[str, Any]], keep: int) -> None:
    session = build(entries)
    branch = session.branch()
    prep = prepare_compaction(branch, keep)
    if prep is None:
        return
    projected = prep.projection.entries
    start = 1 if prep.previous_compaction is not None else 0
    cut = prep.first_kept_index
    cut_entry = projected[cut]

    # never at a tool result (nor at a compaction)
    assert cut_entry.entry.type != "compaction"
    roles = [msg["role"] for msg in cut_entry.messages]
    assert not (roles and all(r == "toolResult" for r in roles))

    # the first kept entry is on the branch and in the context
    assert prep.first_kept_entry_id in session.branch_ids()
    assert prep.first_kept_entry_id == cut_entry.id
    assert start <= cut < len(projected)

    # what follows the cut stays under the budget (unless no later entry could be cut at);
    # cutting at the previous cut point would have kept at least the budget
    all_cut_points = [i for i in range(start, len(projected)) if projected[i].entry.type != "compaction" and any(
        msg["role"] in ("user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary")
        for msg in projected[i].messages)]
    # (the cut may have been pulled back over silent metadata entries: measure from the real one)
    real = next((i for i in range(cut, len(projected)) if projected[i].messages), cut)
    if _tokens(prep, real + 1) >= keep:
        assert not [i for i in all_cut_points if i > real]
    earlier = [i for i in all_cut_points if i < cut]
    kept = _tokens(prep, cut)
    if kept < keep and earlier and kept > 0:
        assert _tokens(prep, earlier[-1]) >= keep

    # summarized + turn prefix + kept = every non-system context message after the head, in order, once
    def non_system(pes: list[Any]) -> list[Any]:
        return [msg for pe in pes if pe.entry.type != "compaction" for msg in pe.messages if msg["role"] != "system"]

    covered = prep.messages_to_summarize + prep.turn_prefix_messages + non_system(projected[cut:])
    assert [id(x) for x in covered] == [id(x) for x in non_system(projected[start:])]

    # a split turn starts at the last turn start before the cut
    if prep.is_split_turn:
        turn = prep.turn_start_index
        assert start <= turn < cut
        assert any(msg["role"] in ("user", "bashExecution", "custom", "branchSummary", "compactionSummary")
                   for msg in projected[turn].messages)
        assert prep.turn_prefix_messages == non_system(projected[turn:cut])
    else:
        assert prep.turn_prefix_messages == []

    # tokens before is the projection's context size; file lists are sorted and disjoint
    assert prep.tokens_before == session.context().tokens
    assert set(prep.read_files).isdisjoint(prep.modified_files)
    assert prep.read_files == sorted(prep.read_files, key=lambda p: p.encode("utf-16-be"))
    assert prep.modified_files == sorted(prep.modified_files, key=lambda p: p.encode("utf-16-be"))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=30), st.integers(1, 200))
def test_find_cut_point_on_plain_turns(sizes: list[int], keep: int) -> None:
    # alternate user / assistant entries; any of them is a valid cut point
    entries = []
    parent = None
    for i, size in enumerate(sizes):
        if i % 2 == 0:
            entries.append(user(f"e{i}", parent, i, "x" * size * 4))
        else:
            entries.append(asst(f"e{i}", parent, i, text("y" * size * 4)))
        parent = f"e{i}"
    projection = build(entries).context()
    cut = find_cut_point(projection.entries, 0, len(sizes), keep)
    running = 0
    expected = 0
    for i in range(len(sizes) - 1, -1, -1):
        if sizes[i] == 0:
            continue
        running += sizes[i]
        if running >= keep:
            expected = i
            break
    assert cut.first_kept_index == expected
    assert cut.is_split_turn == (expected % 2 == 1)
    assert cut.turn_start_index == (expected - 1 if expected % 2 == 1 else -1)
