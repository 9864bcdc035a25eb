"""pikit._context.projection: context entries, edits, system replay, model/thinking, provenance.

``PI`` holds, for every entry of the hand-built sessions below used as the leaf, what Pi
1.5.2 computes (``buildSessionProjection`` + ``estimateTokens`` +
``estimateProjectedContextTokens``): sources, estimates, context tokens, model, thinking
level and a digest of the messages (sha256 of canonical JSON, as the conformance kit does).
They were computed once with node while writing this file; the suite never runs node.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit import Entry, Projection, Session, jsjson
from pikit._context.projection import (
    apply_edit,
    context_entries,
    entry_messages,
    project_path,
    project_prefixes,
    replay_system,
)
from pikit.cli._json import context as context_json
from tests.entries import T0, asst, compaction, edit, m, session_of, text, tool_result, ts, usage, user

HEADER = {"type": "session", "version": 3, "id": "sess-proj", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}

def system(i: str, p: Any, s: int, content: Any, **kw: Any) -> dict[str, Any]:
    return m(i, p, s, {"role": "system", "content": content, **kw})


IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
READ = {"name": "read", "description": "Read a file", "parameters": {"type": "object"}}
WRITE = {"name": "write", "description": "Write a file", "parameters": {"type": "object"}}

SESSIONS = {
    "kept-range": [
        system("s0", None, 1, "You are Pi", sections={"env": "linux", "rules": "be brief"}, toolsAdded=[READ]),
        {"type": "thinking_level_change", "id": "tl", "parentId": "s0", "timestamp": ts(2), "thinkingLevel": "high"},
        user("u1", "tl", 3, "first question"),
        asst("a1", "u1", 4, text("first answer"), usage(100, 10)),
        user("u2", "a1", 5, "second question"),
        system("s1", "u2", 6, "", sections={"env": None, "extra": "more"}, toolsAdded=[WRITE], toolsRemoved=[READ]),
        asst("a2", "s1", 7, text("second answer"), usage(200, 20)),
        {"type": "model_change", "id": "mc", "parentId": "a2", "timestamp": ts(8), "provider": "openai",
         "modelId": "gpt-5"},
        compaction("c1", "mc", 9, "u2", "what happened before", 220,
                   systemMessage={"role": "system", "content": "You are Pi (replayed)",
                                  "sections": {"rules": "be brief"}, "toolsAdded": [WRITE], "timestamp": T0}),
        user("u3", "c1", 10, "third question"),
        asst("a3", "u3", 11, text("third answer"), usage(300, 30)),
        user("u4", "a3", 12, "fourth question 😀"),
    ],
    "retain-none": [
        user("u1", None, 1, "first"),
        asst("a1", "u1", 2, text("answer"), usage(50, 5)),
        compaction("c1", "a1", 3, "c1", "everything so far", 55),
        user("u2", "c1", 4, "after"),
        asst("a2", "u2", 5, text("reply"), usage(70, 7)),
    ],
    "nested-compactions": [
        user("u1", None, 1, "one"),
        asst("a1", "u1", 2, text("two"), usage(10, 1)),
        compaction("c1", "a1", 3, "a1", "first summary", 11),
        user("u2", "c1", 4, "three"),
        asst("a2", "u2", 5, text("four"), usage(20, 2)),
        compaction("c2", "a2", 6, "a1", "second summary", 22),
        user("u3", "c2", 7, "five"),
    ],
    "edits": [
        user("u1", None, 1, "question"),
        asst("a1", "u1", 2, [{"type": "text", "text": "long answer"},
                             {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.txt"}}],
             usage(50, 5), stop="toolUse"),
        tool_result("r1", "a1", 3, text("file contents that are long")),
        asst("a2", "r1", 4, text("done"), usage(80, 8)),
        edit("e1", "a2", 5, "r1", {"content": "short"}),
        edit("e2", "e1", 6, "a1", {"content": "replaced"}),
        edit("e3", "e2", 7, "r1", {"content": text("shorter")}),
        edit("e4", "e3", 8, "u1", {"content": "q2"}),
        {"type": "custom_message", "id": "cm", "parentId": "e4", "timestamp": ts(9), "customType": "note",
         "content": "a note", "display": True},
        edit("e5", "cm", 10, "cm", {"content": text("n2")}),
        edit("e6", "e5", 11, "a2", None),
        user("u2", "e6", 12, "next"),
    ],
    "edit-outside": [
        user("u1", None, 1, "one"),
        asst("a1", "u1", 2, text("two"), usage(10, 1)),
        edit("e1", "a1", 3, "u2", None),
        user("u2", "e1", 4, "three"),
        asst("a2", "u2", 5, text("four"), usage(20, 2)),
        compaction("c1", "a2", 6, "u2", "sum", 22),
        user("u3", "c1", 7, "five"),
        edit("x1", "a1", 8, "a1", None),
        user("v1", "x1", 9, "other branch"),
    ],
    "estimates": [
        user("u1", None, 1, [{"type": "text", "text": "héllo 😀"}, IMAGE, IMAGE]),
        asst("a1", "u1", 2, [{"type": "thinking", "thinking": "think"}, {"type": "text", "text": "t"},
                             {"type": "toolCall", "id": "c1", "name": "edit",
                              "arguments": {"path": "ä.txt", "n": 1.0, "big": 1e21, "neg": -0.0,
                                            "list": [1.5, 2.0], "10": "k", "2": "j"}}],
             usage(40, 2, 3, 4, total=0), stop="toolUse"),
        tool_result("r1", "a1", 3, [{"type": "text", "text": "x" * 10}, IMAGE], name="edit"),
        m("b1", "r1", 4, {"role": "bashExecution", "command": "ls -la", "output": "out😀", "exitCode": 0,
                          "cancelled": False, "truncated": False}),
        {"type": "branch_summary", "id": "bs", "parentId": "b1", "timestamp": ts(5), "fromId": "zz",
         "summary": "branch summary text"},
        {"type": "custom_message", "id": "cm", "parentId": "bs", "timestamp": ts(6), "customType": "note",
         "content": [{"type": "text", "text": "hi"}, IMAGE], "display": False, "details": {"k": 1}},
        system("sy", "cm", 7, text("sys"), sections={"a": "12345", "b": None}, toolsAdded=[READ]),
        asst("a2", "sy", 8, text("err"), usage(999, 1), stop="error"),
        asst("a3", "a2", 9, text("abort"), usage(500, 1), stop="aborted"),
        user("u2", "a3", 10, "end"),
        {"type": "branch_summary", "id": "bs0", "parentId": "u2", "timestamp": ts(11), "fromId": "zz", "summary": ""},
        {"type": "usage", "id": "us", "parentId": "bs0", "timestamp": ts(12), "kind": "cache_warm",
         "provider": "anthropic", "model": "claude", "usage": usage(7, 7)},
    ],
}

SESSIONS.update({
    "edge-edits": [
        user("u1", None, 1, "one"),
        m("b1", "u1", 2, {"role": "bashExecution", "command": "make", "output": "ok", "exitCode": 0, "cancelled": False,
                          "truncated": False}),
        edit("e1", "b1", 3, "b1", {"content": "ignored for bash"}),
        system("s1", "e1", 4, "system text"),
        edit("e2", "s1", 5, "s1", {"content": "new system"}),
        asst("a1", "e2", 6, text("two"), usage(10, 1)),
        edit("e3", "a1", 7, "u1", {"content": [IMAGE]}),
        user("u2", "e3", 8, "three"),
        edit("e4", "u2", 9, "u2", {"content": "three (edited)"}),
        user("u3", "e4", 10, "four"),
        edit("e5", "u3", 11, "u3", {"content": "x", "extra": 1}),
        edit("e6", "e5", 12, "u3", None),
        edit("e7", "e6", 13, "u3", {"content": "back"}),
    ],
    "edge-nulls": [
        m("u1", None, 1, {"role": "user", "content": None}),
        m("s1", "u1", 2, {"role": "system", "content": None}),
        m("a1", "s1", 3, {"role": "assistant", "content": None, "stopReason": "stop"}),
        m("r1", "a1", 4, {"role": "toolResult", "content": None, "toolCallId": "x", "toolName": "t", "isError": True}),
        {"type": "custom_message", "id": "cm", "parentId": "r1", "timestamp": ts(5), "customType": "n", "content": None,
         "display": True},
        {"type": "custom_message", "id": "cm2", "parentId": "cm", "timestamp": ts(6), "customType": "n", "content": "x",
         "display": False, "details": None},
        {"type": "branch_summary", "id": "bs", "parentId": "cm2", "timestamp": ts(7), "fromId": "q", "summary": ""},
        {"type": "model_change", "id": "mc", "parentId": "bs", "timestamp": ts(8), "provider": "p"},
        m("a2", "mc", 9, {"role": "assistant", "content": [], "model": "only-model", "stopReason": "stop"}),
        {"type": "custom", "id": "cu", "parentId": "a2", "timestamp": ts(10), "customType": "k", "data": {"a": 1}},
        {"type": "label", "id": "lb", "parentId": "cu", "timestamp": ts(11), "targetId": "u1", "label": "L"},
    ],
    "edge-compaction": [
        user("u1", None, 1, "one"),
        asst("a1", "u1", 2, text("two"), usage(10, 1)),
        compaction("c1", "a1", 3, "nowhere", "lost kept", 11, systemMessage=None),
        user("u2", "c1", 4, "three"),
        edit("e1", "u2", 5, "c1", None),
        user("u3", "e1", 6, "four"),
        compaction("c2", "u3", 7, "u3", "kept u3", 20, details={"readFiles": ["a"], "modifiedFiles": []}),
        edit("e2", "c2", 8, "c2", {"content": "replaced summary?"}),
        asst("a2", "e2", 9, text("five"), usage(30, 3)),
    ],
    "edge-system": [
        system("s1", None, 1, [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}],
               sections={"b": "B", "a": "A", "2": "two", "1": "one"}, toolsAdded=[READ, WRITE]),
        user("u1", "s1", 2, "hello"),
        system("s2", "u1", 3, "", sections={"a": None, "c": "C"}, toolsRemoved=[{"name": "read"}],
               toolsAdded=[{"name": "read", "description": "Read v2", "parameters": {}}]),
        system("s3", "s2", 4, "addendum", toolsRemoved=[{"name": "write"}]),
        asst("a1", "s3", 5, text("hi"), usage(5, 1)),
    ],
})


def build(name: str) -> Session:
    return session_of(HEADER, SESSIONS[name])


def digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


# node: (sources, estimates, tokens, model, thinkingLevel, digest(messages)) per leaf
CLAUDE = {"provider": "anthropic", "modelId": "claude"}
GPT5 = {"provider": "openai", "modelId": "gpt-5"}
PI: dict[str, dict[str, tuple[list[str], list[int], int, dict[str, str] | None, str, str]]] = {
    "kept-range": {
        "s0": (["s0"], [25], 25, None, "off", "e8519e9688367959"),
        "tl": (["s0"], [25], 25, None, "high", "e8519e9688367959"),
        "u1": (["s0", "u1"], [25, 4], 29, None, "high", "ab066792a91e0f68"),
        "a1": (["s0", "u1", "a1"], [25, 4, 3], 110, CLAUDE, "high", "d74cb279968a5a2d"),
        "u2": (["s0", "u1", "a1", "u2"], [25, 4, 3, 4], 114, CLAUDE, "high", "2569dbb81153064a"),
        "s1": (["s0", "u1", "a1", "u2", "s1"], [25, 4, 3, 4, 21], 135, CLAUDE, "high", "ced497fb44075adf"),
        "a2": (["s0", "u1", "a1", "u2", "s1", "a2"], [25, 4, 3, 4, 21, 4], 220, CLAUDE, "high", "19fa3cfe5f462680"),
        "mc": (["s0", "u1", "a1", "u2", "s1", "a2"], [25, 4, 3, 4, 21, 4], 220, GPT5, "high", "19fa3cfe5f462680"),
        "c1": (["c1", "c1", "u2", "a2"], [27, 5, 4, 4], 40, GPT5, "high", "7b68e31a5f8e9fdd"),
        "u3": (["c1", "c1", "u2", "a2", "u3"], [27, 5, 4, 4, 4], 44, GPT5, "high", "11d0e1955af9a4b5"),
        "a3": (["c1", "c1", "u2", "a2", "u3", "a3"], [27, 5, 4, 4, 4, 3], 330, CLAUDE, "high", "b760273564fe12d9"),
        "u4": (
            ["c1", "c1", "u2", "a2", "u3", "a3", "u4"],
            [27, 5, 4, 4, 4, 3, 5], 335, CLAUDE, "high", "ed90b3b78578307d",
        ),
    },
    "retain-none": {
        "u1": (["u1"], [2], 2, None, "off", "1c620dd3cb57aa98"),
        "a1": (["u1", "a1"], [2, 2], 55, CLAUDE, "off", "10facaa317d90ac4"),
        "c1": (["c1"], [5], 5, CLAUDE, "off", "547230e0b1f6d183"),
        "u2": (["c1", "u2"], [5, 2], 7, CLAUDE, "off", "d40e16c18da045b0"),
        "a2": (["c1", "u2", "a2"], [5, 2, 2], 77, CLAUDE, "off", "46a4c7ca69c9dcbe"),
    },
    "nested-compactions": {
        "u1": (["u1"], [1], 1, None, "off", "37ecd87d8455c17c"),
        "a1": (["u1", "a1"], [1, 1], 11, CLAUDE, "off", "739e09026a4190c9"),
        "c1": (["c1", "a1"], [4, 1], 5, CLAUDE, "off", "25ae7ec641b90688"),
        "u2": (["c1", "a1", "u2"], [4, 1, 2], 7, CLAUDE, "off", "79e3b9f054f59bcd"),
        "a2": (["c1", "a1", "u2", "a2"], [4, 1, 2, 1], 22, CLAUDE, "off", "6fa25174bcf4b6a8"),
        "c2": (["c2", "a1", "u2", "a2"], [4, 1, 2, 1], 8, CLAUDE, "off", "b626ecd32a940b3f"),
        "u3": (["c2", "a1", "u2", "a2", "u3"], [4, 1, 2, 1, 1], 9, CLAUDE, "off", "715b21bd7a7cfc8b"),
    },
    "edits": {
        "u1": (["u1"], [2], 2, None, "off", "607710a7792b0ae5"),
        "a1": (["u1", "a1"], [2, 8], 55, CLAUDE, "off", "1c8d073c72749caa"),
        "r1": (["u1", "a1", "r1"], [2, 8, 7], 62, CLAUDE, "off", "fb844fc0d94fcd1c"),
        "a2": (["u1", "a1", "r1", "a2"], [2, 8, 7, 1], 88, CLAUDE, "off", "e42a744b22252499"),
        "e1": (["u1", "a1", "r1", "a2"], [2, 8, 2, 1], 13, CLAUDE, "off", "3c9c1b74e2f13be0"),
        "e2": (["u1", "a1", "r1", "a2"], [2, 2, 2, 1], 7, CLAUDE, "off", "d11d48da588c7719"),
        "e3": (["u1", "a1", "r1", "a2"], [2, 2, 2, 1], 7, CLAUDE, "off", "c23ab204b24bf87c"),
        "e4": (["u1", "a1", "r1", "a2"], [1, 2, 2, 1], 6, CLAUDE, "off", "22ddfe08b9ccb149"),
        "cm": (["u1", "a1", "r1", "a2", "cm"], [1, 2, 2, 1, 2], 8, CLAUDE, "off", "867ffc5ced43e979"),
        "e5": (["u1", "a1", "r1", "a2", "cm"], [1, 2, 2, 1, 1], 7, CLAUDE, "off", "f2a67f68ff3db55d"),
        "e6": (["u1", "a1", "r1", "cm"], [1, 2, 2, 1], 6, CLAUDE, "off", "402c5e9e7f34b168"),
        "u2": (["u1", "a1", "r1", "cm", "u2"], [1, 2, 2, 1, 1], 7, CLAUDE, "off", "40e4878fa8edbed6"),
    },
    "edit-outside": {
        "u1": (["u1"], [1], 1, None, "off", "37ecd87d8455c17c"),
        "a1": (["u1", "a1"], [1, 1], 11, CLAUDE, "off", "739e09026a4190c9"),
        "e1": (["u1", "a1"], [1, 1], 2, CLAUDE, "off", "739e09026a4190c9"),
        "u2": (["u1", "a1"], [1, 1], 2, CLAUDE, "off", "739e09026a4190c9"),
        "a2": (["u1", "a1", "a2"], [1, 1, 1], 22, CLAUDE, "off", "e1ca20abcf326505"),
        "c1": (["c1", "u2", "a2"], [1, 2, 1], 4, CLAUDE, "off", "70d7b623630118a8"),
        "u3": (["c1", "u2", "a2", "u3"], [1, 2, 1, 1], 5, CLAUDE, "off", "ca8d75d1e0aa250f"),
        "x1": (["u1"], [1], 1, CLAUDE, "off", "37ecd87d8455c17c"),
        "v1": (["u1", "v1"], [1, 3], 4, CLAUDE, "off", "cff58c5204f2b99b"),
    },
    "estimates": {
        "u1": (["u1"], [2402], 2402, None, "off", "7ab174277ce21651"),
        "a1": (["u1", "a1"], [2402, 21], 49, CLAUDE, "off", "274bb7b51c4f98e0"),
        "r1": (["u1", "a1", "r1"], [2402, 21, 1203], 1252, CLAUDE, "off", "74f3c30791d05a06"),
        "b1": (["u1", "a1", "r1", "b1"], [2402, 21, 1203, 3], 1255, CLAUDE, "off", "acb92c851e6bdf67"),
        "bs": (["u1", "a1", "r1", "b1", "bs"], [2402, 21, 1203, 3, 5], 1260, CLAUDE, "off", "fa3f37f43d3adee7"),
        "cm": (
            ["u1", "a1", "r1", "b1", "bs", "cm"],
            [2402, 21, 1203, 3, 5, 1201], 2461, CLAUDE, "off", "411bf329a7fdef9a",
        ),
        "sy": (
            ["u1", "a1", "r1", "b1", "bs", "cm", "sy"],
            [2402, 21, 1203, 3, 5, 1201, 21], 2482, CLAUDE, "off", "5a6b883e6cf7bd89",
        ),
        "a2": (
            ["u1", "a1", "r1", "b1", "bs", "cm", "sy", "a2"],
            [2402, 21, 1203, 3, 5, 1201, 21, 1], 2483, CLAUDE, "off", "6f8c4e415f7f4e34",
        ),
        "a3": (
            ["u1", "a1", "r1", "b1", "bs", "cm", "sy", "a2", "a3"],
            [2402, 21, 1203, 3, 5, 1201, 21, 1, 2], 2485, CLAUDE, "off", "bf6856a77630dbf5",
        ),
        "u2": (
            ["u1", "a1", "r1", "b1", "bs", "cm", "sy", "a2", "a3", "u2"],
            [2402, 21, 1203, 3, 5, 1201, 21, 1, 2, 1], 2486, CLAUDE, "off", "cd8b31e2a3db839a",
        ),
        "bs0": (
            ["u1", "a1", "r1", "b1", "bs", "cm", "sy", "a2", "a3", "u2"],
            [2402, 21, 1203, 3, 5, 1201, 21, 1, 2, 1], 2486, CLAUDE, "off", "cd8b31e2a3db839a",
        ),
        "us": (
            ["u1", "a1", "r1", "b1", "bs", "cm", "sy", "a2", "a3", "u2"],
            [2402, 21, 1203, 3, 5, 1201, 21, 1, 2, 1], 2486, CLAUDE, "off", "cd8b31e2a3db839a",
        ),
    },
    "edge-edits": {
        "u1": (["u1"], [1], 1, None, "off", "37ecd87d8455c17c"),
        "b1": (["u1", "b1"], [1, 2], 3, None, "off", "3844ca3354916d93"),
        "e1": (["u1", "b1"], [1, 2], 3, None, "off", "3844ca3354916d93"),
        "s1": (["u1", "b1", "s1"], [1, 2, 3], 6, None, "off", "1d4c3f19eeaf5507"),
        "e2": (["u1", "b1", "s1"], [1, 2, 3], 6, None, "off", "1d4c3f19eeaf5507"),
        "a1": (["u1", "b1", "s1", "a1"], [1, 2, 3, 1], 11, CLAUDE, "off", "f488a8558ae46c54"),
        "e3": (["u1", "b1", "s1", "a1"], [1200, 2, 3, 1], 1206, CLAUDE, "off", "57a13336f7a02070"),
        "u2": (["u1", "b1", "s1", "a1", "u2"], [1200, 2, 3, 1, 2], 1208, CLAUDE, "off", "06c1117c611cdf97"),
        "e4": (["u1", "b1", "s1", "a1", "u2"], [1200, 2, 3, 1, 4], 1210, CLAUDE, "off", "a38c98df85d10f25"),
        "u3": (["u1", "b1", "s1", "a1", "u2", "u3"], [1200, 2, 3, 1, 4, 1], 1211, CLAUDE, "off", "52e938ea83ee5501"),
        "e5": (["u1", "b1", "s1", "a1", "u2", "u3"], [1200, 2, 3, 1, 4, 1], 1211, CLAUDE, "off", "015886b2e1ddea42"),
        "e6": (["u1", "b1", "s1", "a1", "u2"], [1200, 2, 3, 1, 4], 1210, CLAUDE, "off", "a38c98df85d10f25"),
        "e7": (["u1", "b1", "s1", "a1", "u2", "u3"], [1200, 2, 3, 1, 4, 1], 1211, CLAUDE, "off", "71f50a0889823ee1"),
    },
    "edge-nulls": {
        "u1": (["u1"], [0], 0, None, "off", "5a6a6661ea5dfc6c"),
        "s1": (["u1", "s1"], [0, 0], 0, None, "off", "3564537f82361df6"),
        "a1": (["u1", "s1", "a1"], [0, 0, 0], 0, {}, "off", "48927d92b91fb334"),
        "r1": (["u1", "s1", "a1", "r1"], [0, 0, 0, 0], 0, {}, "off", "b98702b30b97d9f6"),
        "cm": (["u1", "s1", "a1", "r1", "cm"], [0, 0, 0, 0, 0], 0, {}, "off", "45210ab977381753"),
        "cm2": (["u1", "s1", "a1", "r1", "cm", "cm2"], [0, 0, 0, 0, 0, 1], 1, {}, "off", "2474c9c9bade426b"),
        "bs": (["u1", "s1", "a1", "r1", "cm", "cm2"], [0, 0, 0, 0, 0, 1], 1, {}, "off", "2474c9c9bade426b"),
        "mc": (
            ["u1", "s1", "a1", "r1", "cm", "cm2"],
            [0, 0, 0, 0, 0, 1], 1, {"provider": "p"}, "off", "2474c9c9bade426b",
        ),
        "a2": (
            ["u1", "s1", "a1", "r1", "cm", "cm2", "a2"],
            [0, 0, 0, 0, 0, 1, 0], 1, {"modelId": "only-model"}, "off", "1c6d5256128bef38",
        ),
        "cu": (
            ["u1", "s1", "a1", "r1", "cm", "cm2", "a2"],
            [0, 0, 0, 0, 0, 1, 0], 1, {"modelId": "only-model"}, "off", "1c6d5256128bef38",
        ),
        "lb": (
            ["u1", "s1", "a1", "r1", "cm", "cm2", "a2"],
            [0, 0, 0, 0, 0, 1, 0], 1, {"modelId": "only-model"}, "off", "1c6d5256128bef38",
        ),
    },
    "edge-compaction": {
        "u1": (["u1"], [1], 1, None, "off", "37ecd87d8455c17c"),
        "a1": (["u1", "a1"], [1, 1], 11, CLAUDE, "off", "739e09026a4190c9"),
        "c1": (["c1"], [3], 3, CLAUDE, "off", "54b4dbe102fbb9e9"),
        "u2": (["c1", "u2"], [3, 2], 5, CLAUDE, "off", "e2245cede1f8e461"),
        "e1": (["u2"], [2], 2, CLAUDE, "off", "f543b5af294393ea"),
        "u3": (["u2", "u3"], [2, 1], 3, CLAUDE, "off", "e95bdae4f7874ef8"),
        "c2": (["c2", "u3"], [2, 1], 3, CLAUDE, "off", "7620984f93af3fbb"),
        "e2": (["c2", "u3"], [2, 1], 3, CLAUDE, "off", "7620984f93af3fbb"),
        "a2": (["c2", "u3", "a2"], [2, 1, 1], 33, CLAUDE, "off", "bfb78b32c194e94c"),
    },
    "edge-system": {
        "s1": (["s1"], [45], 45, None, "off", "3e79bb4d0c537386"),
        "u1": (["s1", "u1"], [45, 2], 47, None, "off", "cd17d24d255b1a1f"),
        "s2": (["s1", "u1", "s2"], [45, 2, 15], 42, None, "off", "9fe864c1b5ca82cd"),
        "s3": (["s1", "u1", "s2", "s3"], [45, 2, 15, 2], 25, None, "off", "9b3d75e861aa08c8"),
        "a1": (["s1", "u1", "s2", "s3", "a1"], [45, 2, 15, 2, 1], 6, CLAUDE, "off", "edf9796a1d625406"),
    },
}
CASES = [(name, leaf) for name, leaves in PI.items() for leaf in leaves]


@pytest.mark.parametrize(("name", "leaf"), CASES, ids=[f"{n}:{leaf}" for n, leaf in CASES])
def test_projection_matches_pi(name: str, leaf: str) -> None:
    sources, estimates, tokens, model, thinking, messages_digest = PI[name][leaf]
    ctx = build(name).context(leaf)
    assert ctx.sources == sources
    assert ctx.estimates == estimates
    assert ctx.tokens == tokens
    assert ctx.model == model
    assert ctx.thinking_level == thinking
    assert digest(json.loads(jsjson.stringify(ctx.messages))) == messages_digest  # as printed, like check.py


def test_every_leaf_is_covered() -> None:
    for name in SESSIONS:
        assert set(PI[name]) == {e["id"] for e in SESSIONS[name]}


# ---------------------------------------------------------------- context entries and compaction
def test_kept_range_drops_system_messages_and_uses_the_compaction_system_message() -> None:
    s = build("kept-range")
    ctx = s.context("u4")
    assert ctx.compaction is s.by_id["c1"]
    assert ctx.context_ids == ["c1", "u2", "a2", "mc", "u3", "a3", "u4"]  # s1 (system, in the kept range) is left out
    assert [m["role"] for m in ctx.messages] == ["system", "compactionSummary", "user", "assistant", "user",
                                                 "assistant", "user"]
    assert ctx.messages[0] == SESSIONS["kept-range"][8]["systemMessage"]
    assert ctx.messages[1] == {"role": "compactionSummary", "summary": "what happened before", "tokensBefore": 220,
                               "timestamp": T0 + 9000}
    assert ctx.summarized_ids == ["s0", "tl", "u1", "a1", "s1"]
    assert [pe.status for pe in ctx.entries] == ["summary", "kept", "kept", "silent", "kept", "kept", "kept"]
    assert [e.id for e in ctx.path][-1] == "u4" and len(ctx.path) == 12


def test_retain_none_compaction_keeps_nothing_before_it() -> None:
    ctx = build("retain-none").context("a2")
    assert ctx.context_ids == ["c1", "u2", "a2"]
    assert ctx.summarized_ids == ["u1", "a1"]
    assert build("retain-none").context("c1").messages == [
        {"role": "compactionSummary", "summary": "everything so far", "tokensBefore": 55, "timestamp": T0 + 3000}]


def test_older_compaction_inside_the_kept_range_projects_nothing() -> None:
    ctx = build("nested-compactions").context("u3")
    assert ctx.context_ids == ["c2", "a1", "c1", "u2", "a2", "u3"]
    assert ctx.sources == ["c2", "a1", "u2", "a2", "u3"]
    statuses = {pe.id: pe.status for pe in ctx.entries}
    assert statuses["c1"] == "silent" and statuses["c2"] == "summary"
    assert ctx.messages[0]["summary"] == "second summary"


def test_first_kept_entry_not_on_the_path_keeps_nothing() -> None:
    ctx = build("edge-compaction").context("u2")
    assert ctx.context_ids == ["c1", "u2"]


def test_context_entries_function() -> None:
    s = build("kept-range")
    entries, head = context_entries(s.branch("u4"))
    assert head is s.by_id["c1"]
    assert [e.id for e in entries] == ["c1", "u2", "a2", "mc", "u3", "a3", "u4"]
    plain, none = context_entries(s.branch("a2"))
    assert none is None and [e.id for e in plain] == s.branch_ids("a2")
    assert context_entries([]) == ([], None)


# ---------------------------------------------------------------- context edits
def test_edits_latest_wins_omit_and_replace() -> None:
    ctx = build("edits").context("u2")
    by_source = dict(zip(ctx.sources, ctx.messages, strict=True))
    assert by_source["u1"]["content"] == "q2"  # a user message keeps a string
    assert by_source["a1"]["content"] == [{"type": "text", "text": "replaced"}]  # assistant: string → text block
    assert by_source["r1"]["content"] == [{"type": "text", "text": "shorter"}]  # the latest edit of r1 wins
    assert by_source["cm"] == {"role": "custom", "customType": "note", "content": [{"type": "text", "text": "n2"}],
                               "display": True, "timestamp": T0 + 9000}
    assert "a2" not in by_source
    assert ctx.omitted_ids == ["a2"]
    assert ctx.replaced_ids == ["u1", "a1", "r1", "cm"]
    # all other fields of an edited message are kept, in their order
    original = SESSIONS["edits"][1]["message"]
    assert list(by_source["a1"]) == list(original)
    assert {k: v for k, v in by_source["a1"].items() if k != "content"} == \
        {k: v for k, v in original.items() if k != "content"}
    # the source entries are not modified
    assert build("edits").by_id["a1"].message == original


def test_edit_of_a_tool_result_to_a_string_becomes_a_text_block() -> None:
    ctx = build("edits").context("e1")
    assert ctx.messages[2]["content"] == [{"type": "text", "text": "short"}]


def test_edits_outside_the_context_entries_have_no_effect() -> None:
    s = build("edit-outside")
    assert s.context("u2").sources == ["u1", "a1"]  # e1 omits u2 on this branch
    assert s.context("c1").sources == ["c1", "u2", "a2"]  # e1 was summarized away: no effect
    assert s.context("u3").omitted_ids == []
    assert s.context("v1").sources == ["u1", "v1"]  # x1 omits a1 only on its own branch


def test_edits_leave_non_editable_roles_alone() -> None:
    ctx = build("edge-edits").context("e7")
    by_source = dict(zip(ctx.sources, ctx.messages, strict=True))
    assert by_source["b1"]["output"] == "ok" and "ignored for bash" not in json.dumps(by_source["b1"])
    assert by_source["s1"]["content"] == "system text"
    assert by_source["u3"]["content"] == "back"  # replace, omit, replace: the last one counts
    assert by_source["u1"]["content"] == [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]


def test_edits_of_the_compaction_head() -> None:
    s = build("edge-compaction")
    assert s.context("e1").sources == ["u2"]  # omitting the compaction removes its summary
    assert s.context("e2").messages[0]["summary"] == "kept u3"  # a replacement leaves a summary alone


def test_apply_edit_unit() -> None:
    messages: list[dict[str, Any]] = [{"role": "toolResult", "content": [], "x": 1}, {"role": "system", "content": "s"}]
    edit = Entry({"type": "context_edit", "id": "e", "targetId": "t", "replacement": {"content": "new"}})
    assert apply_edit(messages, edit) == [{"role": "toolResult", "content": [{"type": "text", "text": "new"}], "x": 1},
                                          {"role": "system", "content": "s"}]
    assert apply_edit(messages, Entry({"type": "context_edit", "id": "e", "replacement": None})) == []
    assert apply_edit(messages, None) is messages
    assert messages[0]["content"] == []  # not modified in place
    odd = [{"role": ["user"], "content": "a"}, {"role": {"r": 1}, "content": "b"}]
    assert apply_edit(odd, edit) == odd  # (an array or object as a role is no role an edit changes)


# ---------------------------------------------------------------- per-entry messages
def test_entry_messages_per_type() -> None:
    s = build("edge-nulls")
    assert entry_messages(s.by_id["u1"]) == [{"role": "user", "content": [], "timestamp": T0 + 1000}]
    assert entry_messages(s.by_id["s1"]) == [{"role": "system", "content": "", "timestamp": T0 + 2000}]
    assert entry_messages(s.by_id["cm"]) == [{"role": "custom", "customType": "n", "content": [], "display": True,
                                              "timestamp": T0 + 5000}]  # no details key when absent
    assert entry_messages(s.by_id["cm2"])[0]["details"] is None  # an explicit null stays
    assert entry_messages(s.by_id["bs"]) == []  # empty summary
    for silent in ("mc", "cu", "lb"):
        assert entry_messages(s.by_id[silent]) == []
    summary = build("estimates").by_id["bs"]
    assert entry_messages(summary) == [{"role": "branchSummary", "summary": "branch summary text", "fromId": "zz",
                                        "timestamp": T0 + 5000}]


def test_unchanged_messages_serialize_like_the_file() -> None:
    s = build("estimates")
    ctx = s.context("us")
    for source, message in zip(ctx.sources, ctx.messages, strict=True):
        entry = s.by_id[source]
        if entry.type == "message":
            assert message is entry.message or message == entry.message
            assert jsjson.stringify(message) == jsjson.stringify(entry.data["message"])
            assert jsjson.stringify_bytes(message) in entry.raw or b"1e21" in entry.raw or b"1.0" in entry.raw


# ---------------------------------------------------------------- model, thinking, system replay
def test_model_and_thinking_come_from_the_whole_path() -> None:
    s = build("kept-range")
    assert s.context("c1").model == {"provider": "openai", "modelId": "gpt-5"}  # model_change was summarized away
    assert s.context("c1").thinking_level == "high"
    assert s.context("a3").model == {"provider": "anthropic", "modelId": "claude"}  # the assistant message sets it
    assert s.context("s0").thinking_level == "off" and s.context("s0").model is None
    nulls = build("edge-nulls")
    assert nulls.context("mc").model == {"provider": "p"}
    assert nulls.context("a2").model == {"modelId": "only-model"}


def test_system_replay() -> None:
    s = build("edge-system")
    system_message = s.context("a1").system_message
    assert system_message == {
        "role": "system",
        "content": "part one\npart two\n\naddendum",
        "sections": {"b": "B", "2": "two", "1": "one", "c": "C"},
        "toolsAdded": [{"name": "read", "description": "Read v2", "parameters": {}}],
        "timestamp": T0 + 1000,
    }
    assert jsjson.stringify(system_message["sections"]) == '{"1":"one","2":"two","b":"B","c":"C"}'
    first = s.context("s1").system_message
    assert first is not None and first["toolsAdded"] == [READ, WRITE]
    assert build("edits").context("u2").system_message is None


def test_replay_system_unit() -> None:
    assert replay_system([]) is None
    assert replay_system([{"role": "user", "content": "x"}]) is None
    # Pi: no timestamp on any system message and no tools → no system message at all
    assert replay_system([{"role": "system", "content": "a"}]) is None
    assert replay_system([{"role": "system", "content": "a", "timestamp": 3}]) == {"role": "system", "content": "a",
                                                                                  "timestamp": 3}
    later = replay_system([{"role": "system", "content": "", "timestamp": None},
                           {"role": "system", "content": "b", "timestamp": 7}])
    assert later is not None and later["timestamp"] == 7
    only_tools = replay_system([{"role": "system", "content": "", "toolsAdded": [READ]}])
    assert only_tools == {"role": "system", "content": "", "toolsAdded": [READ], "timestamp": 0}
    removed = replay_system([{"role": "system", "content": "x", "toolsAdded": [READ], "timestamp": 1},
                             {"role": "system", "content": "", "toolsRemoved": [READ], "timestamp": 2}])
    assert removed == {"role": "system", "content": "x", "timestamp": 1}


# ---------------------------------------------------------------- projection object
def test_projection_json_and_reset_leaf() -> None:
    s = build("kept-range")
    out = context_json.projection(s.context("u4"))
    assert list(out) == ["path", "model", "thinkingLevel", "messages", "sources", "estimates", "tokens"]
    assert out["path"] == s.branch_ids("u4") and out["tokens"] == 335
    s.leaf_id = None
    empty = s.context()
    assert isinstance(empty, Projection)
    assert empty.messages == [] and empty.path == [] and empty.tokens == 0 and empty.model is None
    assert empty.thinking_level == "off"
    assert s.context("u4").leaf_id == "u4"


def test_project_path_directly() -> None:
    s = build("retain-none")
    proj = project_path(s.branch("a2"))
    assert proj.leaf_id == "a2" and proj.sources == ["c1", "u2", "a2"]


def _shape(p: Projection) -> tuple[Any, ...]:
    return (p.leaf_id, p.messages, p.sources, p.context_ids, p.model, p.thinking_level, p.tokens,
            p.compaction.id if p.compaction is not None else None, [e.id for e in p.path])


def _forked_with_compactions() -> Session:
    """Two branches, each compacted twice; an edit before a compaction targets an entry it keeps."""
    return session_of(HEADER, [
        user("u1", None, 1, "first"),
        asst("a1", "u1", 2, text("one"), usage=usage(500, 10)),
        {"type": "thinking_level_change", "id": "th", "parentId": "a1", "timestamp": ts(3), "thinkingLevel": "high"},
        user("u2", "th", 4, "second"),
        edit("e1", "u2", 5, "u2", {"content": "second, edited"}),
        asst("a2", "e1", 6, text("two"), usage=usage(900, 10)),
        compaction("c1", "a2", 7, "u2"),
        user("u3", "c1", 8, "third"),
        asst("a3", "u3", 9, text("three"), usage=usage(300, 10)),
        compaction("c2", "a3", 10, "u3"),
        {"type": "model_change", "id": "mc", "parentId": "a1", "timestamp": ts(11), "provider": "p",
         "modelId": "m2"},
        user("v1", "mc", 12, "fork"),
        compaction("c3", "v1", 13, "v1"),
        user("v2", "c3", 14, "after"),
        compaction("c4", "v2", 15, "missing"),
    ])


def test_prefixes_of_a_branch_project_as_the_branch_cut_there() -> None:
    session = _forked_with_compactions()
    cache: dict[Any, Any] = {}
    for leaf in ("c2", "c4"):
        path = session.branch(leaf)
        ends = range(len(path) + 1)
        projected = project_prefixes(path, reversed(ends), cache)
        assert sorted(projected) == list(ends)
        for n in ends:
            assert _shape(projected[n]) == _shape(project_path(path[:n])), (leaf, n)
            if n:
                assert _shape(projected[n]) == _shape(session.context(path[n - 1].id)), (leaf, n)
    shared = project_prefixes(session.branch("c4"), [2], cache)[2].entries
    assert shared[0] is project_prefixes(session.branch("c2"), [2], cache)[2].entries[0]  # projected once


def test_prefixes_of_a_sample_session_project_as_the_session() -> None:
    session = pikit.load(Path(__file__).resolve().parents[2] / "data" / "sample_sessions" / "refactor-auth.jsonl")
    assert any(e.type == "compaction" for e in session.entries)
    cache: dict[Any, Any] = {}
    for entry in session.entries:
        if entry.type != "compaction":
            continue
        path = session.branch(entry.id)
        projected = project_prefixes(path, [len(path) - 1, len(path)], cache)
        assert _shape(projected[len(path)]) == _shape(session.context(entry.id))
        assert _shape(projected[len(path) - 1]) == _shape(project_path(path[:-1]))
