"""Synthetic Pi sessions for the widget tests and benchmarks.

:func:`big_session_lines` builds a deterministic session of any size with a realistic shape:
turns of user → assistant (tool calls) → tool results → assistant answer, abandoned branches
forking off earlier user messages, labels, a session name and compactions on the main branch.
:func:`hostile_session_lines` builds a small session whose every text field carries HTML that
would run script if it were inserted unescaped, and the characters no widget or JSON stream may
pass on as they are (:data:`UNSAFE`: lone surrogates, NUL, terminal escapes, bidi overrides),
in the text, the ids, the labels, the name, the cwd, tool names, file paths and model names.

Both return JSON lines (without newlines); :func:`write_session` writes them to a file.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pikit.jsjson import stringify

__all__ = ["PAYLOAD", "TWINS", "UNSAFE", "big_session_lines", "deep_session_lines", "hostile_session_lines",
           "write_session"]

#: HTML that runs script when inserted unescaped: sets ``window.__pikit_pwned``.
PAYLOAD = '<script>window.__pikit_pwned=1</script><img src=x onerror="window.__pikit_pwned=2">'
#: Characters that are valid in a Pi session (JSON) but must never reach a widget, a page or a
#: terminal as they are: lone surrogates (valid JSON escapes, not valid UTF-8), NUL, an OSC 52
#: clipboard write, a clear-screen, a title change, a C1 CSI, bidi overrides and isolates.
UNSAFE = ("lone \ud800 and \udfff NUL \x00 ESC \x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J\x1b]0;owned\x07 "
          "C1 \x9b31m bidi \u202eevil\u202c \u2066iso\u2069 \u200f")
#: Two sibling entry ids that differ only in a lone surrogate (the same once it is replaced).
TWINS = ("twin \ud800", "twin \ud801")

_WORDS = ("auth", "login", "token", "session", "refactor", "parser", "queue", "cache", "budget", "window",
          "compaction", "tree", "branch", "fork", "leaf", "summary", "module", "test", "fixture", "retry",
          "header", "context", "strategy", "pattern")
_START = datetime(2026, 5, 1, 9, 0, 0, tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


class _Builder:
    def __init__(self, seed: int, encode: Callable[[Any], str] | None = None) -> None:
        self.rng = random.Random(seed)
        self.encode = encode or (lambda entry: json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
        self.lines: list[str] = []
        self.clock = _START
        self.counter = 0
        self.last_id: str | None = None

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(n))

    def new_id(self) -> str:
        self.counter += 1
        return f"{self.counter:08x}"

    def add(self, kind: str, parent: str | None, entry_id: str | None = None, **fields: Any) -> str:
        self.clock += timedelta(seconds=self.rng.randint(1, 20))
        entry_id = entry_id or self.new_id()
        entry = {"type": kind, "id": entry_id, "parentId": parent, "timestamp": _iso(self.clock), **fields}
        if kind == "message":
            entry["message"] = {**fields["message"], "timestamp": _ms(self.clock)}
        self.lines.append(self.encode(entry))
        self.last_id = entry_id
        return entry_id

    def message(self, parent: str | None, message: dict[str, Any], entry_id: str | None = None) -> str:
        return self.add("message", parent, entry_id, message=message)

    def usage(self, context: int) -> dict[str, Any]:
        return {"input": context // 10, "output": 150, "cacheRead": context - context // 10, "cacheWrite": 0,
                "totalTokens": context + 150,
                "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.0}}

    def turn(self, parent: str | None, context: int, tools: int) -> tuple[str, str, int]:
        """One user turn; returns (user entry id, last entry id, context estimate)."""
        user = self.message(parent, {"role": "user", "content": self.words(self.rng.randint(5, 25))})
        last = user
        for _ in range(tools):
            call_id = f"call_{self.counter:06x}"
            name = self.rng.choice(("read", "edit", "bash", "grep", "write"))
            args: dict[str, Any] = {"path": f"src/{self.rng.choice(_WORDS)}.ts"}
            if name == "bash":
                args = {"command": f"pytest -q tests/test_{self.rng.choice(_WORDS)}.py"}
            context += 400
            last = self.message(last, {
                "role": "assistant",
                "content": [{"type": "text", "text": self.words(8)},
                            {"type": "toolCall", "id": call_id, "name": name, "arguments": args}],
                "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "usage": self.usage(context), "stopReason": "toolUse"})
            output = self.words(self.rng.randint(20, 400))
            context += len(output) // 4
            last = self.message(last, {"role": "toolResult", "toolCallId": call_id, "toolName": name,
                                       "content": [{"type": "text", "text": output}],
                                       "isError": self.rng.random() < 0.05})
        context += 200
        last = self.message(last, {
            "role": "assistant", "content": [{"type": "text", "text": self.words(self.rng.randint(10, 60))}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": self.usage(context), "stopReason": "stop"})
        return user, last, context


def big_session_lines(entries: int = 10_000, *, seed: int = 7, fork_every: int = 120,
                      compact_every: int = 2_500) -> list[str]:
    """A session of about ``entries`` entries with abandoned branches, labels and compactions."""
    b = _Builder(seed)
    b.lines.append(json.dumps({"type": "session", "version": 3, "id": f"synthetic-{entries}",
                               "timestamp": _iso(_START), "cwd": "/workspace/synthetic"}))
    root = b.add("model_change", None, provider="anthropic", modelId="claude-sonnet-4-5")
    leaf = b.message(root, {"role": "system", "content": "You are a careful coding agent.",
                            "toolsAdded": [{"name": n, "description": f"{n} a file"}
                                           for n in ("read", "edit", "bash", "grep", "write")]})
    leaf = b.add("session_info", leaf, name=f"Synthetic session ({entries} entries)")
    context = 2_000
    users: list[tuple[str, str | None]] = []  # (user id, its parent)
    since_fork = since_compaction = 0
    labels = 0
    while len(b.lines) - 1 < entries:
        parent = leaf
        user, leaf, context = b.turn(leaf, context, b.rng.randint(0, 4))
        users.append((user, parent))
        since_fork += 1
        since_compaction += 1
        if since_fork * 6 >= fork_every and len(users) > 3:
            since_fork = 0
            # Abandon a short branch: re-ask an earlier question differently.
            _, fork_parent = users[-b.rng.randint(2, 3)]
            side = fork_parent
            side_context = context
            for _ in range(b.rng.randint(1, 3)):
                _, side, side_context = b.turn(side, side_context, b.rng.randint(0, 2))
            if labels < 40:
                labels += 1
                leaf = b.add("label", leaf, targetId=side, label=f"attempt-{labels}")
        if since_compaction * 6 >= compact_every and len(users) > 10:
            since_compaction = 0
            first_kept = users[-3][0]
            leaf = b.add("compaction", leaf, summary="## Goal\n" + b.words(60), firstKeptEntryId=first_kept,
                         tokensBefore=context, details={"readFiles": ["src/auth.ts"], "modifiedFiles": []})
            context = context // 5
    return b.lines


def hostile_session_lines() -> list[str]:
    """A small branched session with script-bearing HTML and :data:`UNSAFE` characters in every field
    that reaches a widget, a page or a JSON stream, written as Pi writes JSON (lone surrogates as
    ``\\udXXX`` escapes). The compaction's id carries :data:`UNSAFE`; so does the id of the entry
    an abandoned branch starts at, which ends in the two :data:`TWINS` (the first with an unsafe
    model name); the session's leaf is a label with an unsafe id."""
    bad = PAYLOAD + UNSAFE
    b = _Builder(1, stringify)
    b.lines.append(stringify({"type": "session", "version": 3, "id": "hostile" + UNSAFE, "timestamp": _iso(_START),
                              "cwd": "/tmp/" + bad}))
    root = b.add("model_change", None, provider="anthropic", modelId="claude-sonnet-4-5")
    system = b.message(root, {"role": "system", "content": "system " + bad})
    b.add("session_info", system, name="name " + bad)
    user = b.message(b.last_id, {"role": "user", "content": "user " + bad})
    assistant = b.message(user, {
        "role": "assistant",
        "content": [{"type": "text", "text": "assistant " + bad}, {"type": "thinking", "thinking": "think " + bad},
                    {"type": "toolCall", "id": "c1", "name": "bash<img src=x onerror=1>" + UNSAFE,
                     "arguments": {"command": bad, "path": "src/" + bad}}],
        "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "toolUse",
        "usage": b.usage(1200)})
    result = b.message(assistant, {"role": "toolResult", "toolCallId": "c1", "toolName": "bash" + bad,
                                   "content": [{"type": "text", "text": ("tool " + bad + " ") * 40}],
                                   "isError": False})
    answer = b.message(result, {"role": "assistant", "content": [{"type": "text", "text": "done " + bad}],
                                "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
                                "usage": b.usage(1500)})
    second = b.message(answer, {"role": "user", "content": "again " + bad})
    b.message(second, {"role": "assistant", "content": [{"type": "text", "text": "ok " + bad}],
                       "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
                       "usage": b.usage(1700)})
    b.add("custom_message", b.last_id, customType="note" + bad, content="custom " + bad, display=True)
    b.add("compaction", b.last_id, "compaction " + UNSAFE, summary="summary " + bad, firstKeptEntryId=second,
          tokensBefore=1800, details={"readFiles": [bad], "modifiedFiles": ["src/" + bad]})
    b.add("branch_summary", b.last_id, fromId=answer, summary="branch " + bad)
    b.add("context_edit", b.last_id, targetId=second, replacement={"content": "edited " + bad})
    # An abandoned branch from the first answer, on entries whose ids are unsafe too.
    alt = b.message(answer, {"role": "user", "content": "alt " + bad}, "alt " + UNSAFE)
    twin = b.message(alt, {"role": "assistant", "content": [{"type": "text", "text": "alt answer " + bad}],
                           "provider": "provider " + UNSAFE, "model": "model " + bad, "stopReason": "error",
                           "errorMessage": "error " + bad}, TWINS[0])
    b.message(alt, {"role": "assistant", "content": [{"type": "text", "text": "the other twin"}],
                    "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop"}, TWINS[1])
    b.add("label", twin, "label " + UNSAFE, targetId=alt, label="label " + bad)
    return b.lines


def write_session(path: str | Path, lines: Iterable[str]) -> Path:
    """Write session ``lines`` to ``path`` (one per line) and return the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")  # lone surrogates are escapes: valid UTF-8
    return target


def deep_session_lines(depth: int = 60, *, seed: int = 3) -> list[str]:
    """A comb: every answer forks (a continuing prompt and a side prompt), so the tree is ``depth`` levels deep."""
    b = _Builder(seed)
    b.lines.append(json.dumps({"type": "session", "version": 3, "id": f"deep-{depth}",
                               "timestamp": _iso(_START), "cwd": "/workspace/deep"}))
    leaf = b.add("model_change", None, provider="anthropic", modelId="claude-sonnet-4-5")
    for level in range(depth):
        user = b.message(leaf, {"role": "user", "content": f"step {level}: {b.words(12)}"})
        leaf = b.message(user, {"role": "assistant", "content": [{"type": "text", "text": b.words(20)}],
                                "stopReason": "stop"})
        b.message(leaf, {"role": "user", "content": f"side question {level}: {b.words(10)}"})
    b.message(leaf, {"role": "user", "content": "the end of the deepest branch"})
    return b.lines
