"""pikit._context.tokens: Pi's estimate (chars/4 in UTF-16 units) and the context size rule.

Every expected number here was computed once with Pi 1.5.2 (``estimateTokens`` and
``estimateProjectedContextTokens``) under node while writing this file.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import pikit
from pikit import ContextSize, Session, estimate_chars, estimate_tokens
from pikit._context.tokens import IMAGE_CHARS, context_size, message_usage, usage_total
from pikit.jsjson import js_truthy

IMG = {"type": "image", "data": "AAAA", "mimeType": "image/png"}

# (name, message, Pi's estimateTokens)
ESTIMATES: list[tuple[str, dict[str, Any], int]] = [
    ("user string", {"role": "user", "content": "abcde"}, 2),
    ("user emoji", {"role": "user", "content": "😀😀😀"}, 2),
    ("user cjk", {"role": "user", "content": "中文字符"}, 1),
    ("user blocks", {"role": "user", "content": [{"type": "text", "text": "abc"}, IMG,
                                                 {"type": "text", "text": "defgh"}]}, 1202),
    ("user one image", {"role": "user", "content": [IMG]}, 1200),
    ("user empty", {"role": "user", "content": ""}, 0),
    ("user empty list", {"role": "user", "content": []}, 0),
    ("user unknown block", {"role": "user", "content": [{"type": "audio", "data": "x" * 100}]}, 0),
    ("custom string", {"role": "custom", "content": "x" * 9}, 3),
    ("toolResult", {"role": "toolResult", "content": [{"type": "text", "text": "y" * 17}, IMG, IMG]}, 2405),
    ("assistant text+thinking", {"role": "assistant", "content": [{"type": "text", "text": "abcd"},
                                                                  {"type": "thinking", "thinking": "efghi"}]}, 3),
    ("assistant toolcall ints", {"role": "assistant", "content": [
        {"type": "toolCall", "id": "x", "name": "bash", "arguments": {"command": "ls", "n": 1}}]}, 7),
    ("assistant toolcall floats", {"role": "assistant", "content": [
        {"type": "toolCall", "id": "x", "name": "t",
         "arguments": {"a": 1.0, "b": 2.5, "c": 1e21, "d": 1e-7, "e": -0.0, "f": 100.0}}]}, 13),
    ("assistant toolcall unicode", {"role": "assistant", "content": [
        {"type": "toolCall", "id": "x", "name": "write",
         "arguments": {"path": "é/😀.txt", "content": "line\nnext\t\"q\"\u2028"}}]}, 14),
    ("assistant toolcall empty args", {"role": "assistant", "content": [
        {"type": "toolCall", "id": "x", "name": "noop", "arguments": {}}]}, 2),
    ("assistant toolcall nested", {"role": "assistant", "content": [
        {"type": "toolCall", "id": "x", "name": "e",
         "arguments": {"edits": [{"old": "a", "new": "b"}], "flags": [True, False, None]}}]}, 15),
    ("assistant empty", {"role": "assistant", "content": []}, 0),
    ("assistant image ignored", {"role": "assistant", "content": [IMG, {"type": "text", "text": "ab"}]}, 1),
    ("system plain", {"role": "system", "content": "You are helpful."}, 4),
    ("system sections", {"role": "system", "content": "", "sections": {"a": "12345", "b": None, "c": ""}}, 2),
    ("system tools", {"role": "system", "content": "x", "toolsAdded": [
        {"name": "read", "description": "é", "parameters": {"type": "object", "n": 1.0}}]}, 19),
    ("system empty tools", {"role": "system", "content": "x", "toolsAdded": []}, 1),  # "[]" counts in JS
    ("system blocks", {"role": "system", "content": [{"type": "text", "text": "abc"}, IMG]}, 1201),
    ("bash", {"role": "bashExecution", "command": "ls -la", "output": "total 0\n😀", "exitCode": 0}, 4),
    ("branchSummary", {"role": "branchSummary", "summary": "s" * 41, "fromId": "x"}, 11),
    ("compactionSummary", {"role": "compactionSummary", "summary": "😀" * 3, "tokensBefore": 1}, 2),
    ("unknown role", {"role": "other", "content": "x" * 100}, 0),
    ("hookMessage role", {"role": "hookMessage", "content": "x" * 100}, 0),
]


@pytest.mark.parametrize(("name", "message", "expected"), ESTIMATES, ids=[c[0] for c in ESTIMATES])
def test_estimate_matches_pi(name: str, message: dict[str, Any], expected: int) -> None:
    assert estimate_tokens(message) == expected


def test_estimate_chars_details() -> None:
    assert IMAGE_CHARS == 4800
    assert estimate_chars({"role": "user", "content": [IMG, IMG]}) == 9600
    assert estimate_chars({"role": "user", "content": "😀"}) == 2  # UTF-16 units, not code points
    # tool call: len(name) + len(JSON.stringify(arguments)) with JavaScript number formatting
    call = {"role": "assistant", "content": [{"type": "toolCall", "name": "ab", "arguments": {"x": 1.0}}]}
    assert estimate_chars(call) == 2 + len('{"x":1}')
    no_args = {"role": "assistant", "content": [{"type": "toolCall", "name": "ab"}]}
    assert estimate_chars(no_args) == 2
    assert estimate_chars({"role": "bashExecution", "command": "ab", "output": "cde"}) == 5
    assert estimate_chars({"role": "system", "content": "ab", "sections": {"s": "cd"},
                           "toolsAdded": [{"name": "t"}]}) == 4 + len('[{"name":"t"}]')


@pytest.mark.parametrize("chars", [0, 1, 3, 4, 5, 8, 9])
def test_estimate_rounds_up(chars: int) -> None:
    assert estimate_tokens({"role": "user", "content": "x" * chars}) == -(-chars // 4)


def test_estimates_tolerate_missing_fields() -> None:
    # Pi would throw on these; pikit must not crash on a hand-edited file.
    messages: list[dict[str, Any]] = [
        {"role": "user"}, {"role": "assistant"}, {"role": "assistant", "content": [{"type": "text"}]},
        {"role": "bashExecution"}, {"role": "branchSummary"}, {"role": "system", "content": None},
        {"role": "toolResult", "content": [None, 3, "x"]}, {},
    ]
    for message in messages:
        assert estimate_tokens(message) == 0


# ---------------------------------------------------------------- usage helpers
@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, False), (False, False), (0, False), (0.0, False), (float("nan"), False), ("", False), (True, True),
     (1, True), (-1, True), ("0", True), ([], True), ({}, True)],
)
def test_js_truthy(value: Any, expected: bool) -> None:
    assert js_truthy(value) is expected


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "totalTokens": 100}, 100),
        ({"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "totalTokens": 0}, 10),
        ({"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4}, 10),
        ({"input": 5, "output": 1}, 0),  # undefined parts: NaN in JavaScript, not usable
        ({"input": 1.0, "output": 2, "cacheRead": 0, "cacheWrite": 0}, 3),
        (None, 0),
        ("usage", 0),
    ],
)
def test_usage_total(usage: Any, expected: int) -> None:
    assert usage_total(usage) == expected


def test_message_usage() -> None:
    good = {"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 11}
    assert message_usage({"role": "assistant", "usage": good, "stopReason": "stop"}) is good
    assert message_usage({"role": "assistant", "usage": good, "stopReason": "toolUse"}) is good
    assert message_usage({"role": "assistant", "usage": good, "stopReason": "length"}) is good
    assert message_usage({"role": "assistant", "usage": good}) is good
    assert message_usage({"role": "assistant", "usage": good, "stopReason": "aborted"}) is None
    assert message_usage({"role": "assistant", "usage": good, "stopReason": "error"}) is None
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    assert message_usage({"role": "assistant", "usage": zero}) is None
    assert message_usage({"role": "assistant"}) is None
    assert message_usage({"role": "user", "usage": good}) is None


def test_context_size_function() -> None:
    usage = {"input": 40, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 42}
    messages: list[dict[str, Any]] = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                {"role": "assistant", "content": [], "usage": usage}, {"role": "user", "content": "v"}]
    estimates = [5, 2, 3, 4]
    fresh = context_size(messages, estimates, usage_source_position=2, last_invalidation_position=-1)
    assert fresh == ContextSize(46, 42, 4, 2, stale=False)
    stale = context_size(messages, estimates, usage_source_position=2, last_invalidation_position=2,
                         system_estimate=7)
    assert stale == ContextSize(7 + 2 + 3 + 4, 0, 16, None, stale=True)
    none = context_size(messages[:2], estimates[:2], system_estimate=5)
    assert none == ContextSize(7, 0, 7, None, stale=False)


# ---------------------------------------------------------------- the rule on whole sessions
T0 = 1767225600000
HEADER = {"type": "session", "version": 3, "id": "sess-tokens", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"}


def _ts(s: int) -> str:
    return f"2026-01-01T00:00:{s:02d}.000Z"


def _msg(i: str, p: Any, s: int, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": i, "parentId": p, "timestamp": _ts(s),
            "message": {**message, "timestamp": T0 + s * 1000}}


def _user(i: str, p: Any, s: int, content: Any) -> dict[str, Any]:
    return _msg(i, p, s, {"role": "user", "content": content})


def _usage(inp: int, out: int, cache_read: int = 0, cache_write: int = 0, total: int | None = None) -> dict[str, Any]:
    return {"input": inp, "output": out, "cacheRead": cache_read, "cacheWrite": cache_write,
            "totalTokens": inp + out + cache_read + cache_write if total is None else total}


def _asst(i: str, p: Any, s: int, text: str, usage: Any, stop: str = "stop") -> dict[str, Any]:
    return _msg(i, p, s, {"role": "assistant", "content": [{"type": "text", "text": text}], "provider": "anthropic",
                          "model": "claude", "stopReason": stop, "usage": usage})


def _edit(i: str, p: Any, s: int, target: str, replacement: Any) -> dict[str, Any]:
    return {"type": "context_edit", "id": i, "parentId": p, "timestamp": _ts(s), "targetId": target,
            "replacement": replacement}


USAGE_RULES = [
    _user("u1", None, 1, "a" * 40),
    _asst("a1", "u1", 2, "b" * 8, _usage(100, 20)),
    _user("u2", "a1", 3, "c" * 12),
    _asst("a2", "u2", 4, "d" * 4, _usage(999, 1), stop="error"),
    _asst("a3", "a2", 5, "e" * 4, _usage(888, 1), stop="aborted"),
    _asst("a4", "a3", 6, "f" * 4, _usage(0, 0)),
    _asst("a5", "a4", 7, "g" * 4, _usage(30, 5, 7, 9, total=0)),
    _user("u3", "a5", 8, "h" * 20),
    _msg("a6", "u3", 9, {"role": "assistant", "content": [{"type": "text", "text": "i"}], "stopReason": "stop",
                         "usage": {"input": 5, "output": 1}}),
    _asst("a7", "a6", 10, "j" * 4, _usage(60, 6)),
    _edit("e1", "a7", 11, "u1", {"content": "short"}),
    _user("u4", "e1", 12, "k" * 8),
    _asst("a8", "u4", 13, "l" * 4, _usage(70, 7)),
    {"type": "compaction", "id": "c1", "parentId": "a8", "timestamp": _ts(14), "summary": "summary!",
     "firstKeptEntryId": "u4", "tokensBefore": 77},
    _user("u5", "c1", 15, "m" * 4),
]
EDIT_BEFORE_USAGE = [
    _msg("s1", None, 1, {"role": "system", "content": "sys " * 10}),
    _user("u1", "s1", 2, "a" * 40),
    _edit("e1", "u1", 3, "u1", {"content": "tiny"}),
    _asst("a1", "e1", 4, "b" * 8, _usage(50, 5)),
    _user("u2", "a1", 5, "c" * 12),
    _edit("e2", "u2", 6, "a1", {"content": "rewritten answer"}),
    _user("u3", "e2", 7, "d" * 8),
]


def _session(entries: list[dict[str, Any]]) -> Session:
    return pikit.loads("\n".join(json.dumps(e) for e in [HEADER, *entries]))


# node: estimateProjectedContextTokens → (tokens, usageTokens, trailingTokens, lastUsageIndex); stale is pikit's
SIZES = {
    "usage-rules": {
        "u1": (10, 0, 10, None, False),
        "a1": (120, 120, 0, 1, False),
        "u2": (123, 120, 3, 1, False),
        "a2": (124, 120, 4, 1, False),  # an errored call's usage is skipped
        "a3": (125, 120, 5, 1, False),  # so is an aborted one's
        "a4": (126, 120, 6, 1, False),  # and an all-zero usage
        "a5": (51, 51, 0, 6, False),  # totalTokens 0: the sum of the parts
        "u3": (56, 51, 5, 6, False),
        "a6": (57, 51, 6, 6, False),  # parts missing: NaN in JavaScript, skipped
        "a7": (66, 66, 0, 9, False),
        "e1": (18, 0, 18, None, True),  # an edit after the usage makes it stale
        "u4": (20, 0, 20, None, True),
        "a8": (77, 77, 0, 11, False),
        "c1": (5, 0, 5, None, True),  # so does a compaction
        "u5": (6, 0, 6, None, True),
    },
    "edit-before-usage": {
        "s1": (10, 0, 10, None, False),
        "u1": (20, 0, 20, None, False),
        "e1": (11, 0, 11, None, False),
        "a1": (55, 55, 0, 2, False),  # an edit before the usage does not
        "u2": (58, 55, 3, 2, False),
        "e2": (18, 0, 18, None, True),
        "u3": (20, 0, 20, None, True),
    },
}
_SESSIONS = {"usage-rules": USAGE_RULES, "edit-before-usage": EDIT_BEFORE_USAGE}
_SIZE_CASES = [(name, leaf) for name, leaves in SIZES.items() for leaf in leaves]


@pytest.mark.parametrize(("name", "leaf"), _SIZE_CASES, ids=[f"{n}:{leaf}" for n, leaf in _SIZE_CASES])
def test_context_size_rule_matches_pi(name: str, leaf: str) -> None:
    tokens, usage_tokens, trailing, usage_index, stale = SIZES[name][leaf]
    ctx = _session(_SESSIONS[name]).context(leaf)
    size = ctx.size
    assert (size.tokens, size.usage_tokens, size.trailing_tokens, size.usage_index, size.stale) == \
        (tokens, usage_tokens, trailing, usage_index, stale)
    assert ctx.tokens == tokens


def test_stale_size_uses_the_replayed_system_message() -> None:
    ctx = _session(EDIT_BEFORE_USAGE).context("u3")
    assert ctx.size.stale
    system = ctx.system_message
    assert system is not None
    non_system = sum(e for m, e in zip(ctx.messages, ctx.estimates, strict=True) if m["role"] != "system")
    assert ctx.tokens == estimate_tokens(system) + non_system


def test_usage_tokens_when_the_usage_is_the_last_message() -> None:
    ctx = _session(USAGE_RULES).context("a1")
    assert ctx.size.trailing_tokens == 0 and ctx.tokens == 120
    assert ctx.estimates == [10, 2]  # the estimates stay available beside the usage
