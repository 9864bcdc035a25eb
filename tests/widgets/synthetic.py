"""Synthetic Pi sessions for the widget tests and benchmarks.

:func:`big_session_lines` builds a deterministic session of any size with a realistic shape:
turns of user → assistant (tool calls) → tool results → assistant answer, abandoned branches
forking off earlier user messages, labels, a session name and compactions on the main branch.
:func:`hostile_session_lines` builds a small session whose every text field carries HTML that
would run script if it were inserted unescaped.

Both return JSON lines (without newlines); :func:`write_session` writes them to a file.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = ["PAYLOAD", "big_session_lines", "deep_session_lines", "hostile_session_lines", "write_session"]

#: HTML that runs script when inserted unescaped: sets ``window.__pikit_pwned``.
PAYLOAD = '<script>window.__pikit_pwned=1</script><img src=x onerror="window.__pikit_pwned=2">'

_WORDS = ("auth", "login", "token", "session", "refactor", "parser", "queue", "cache", "budget", "window",
          "compaction", "tree", "branch", "fork", "leaf", "summary", "module", "test", "fixture", "retry",
          "header", "context", "strategy", "pattern")
_START = datetime(2026, 5, 1, 9, 0, 0, tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lines: list[str] = []
        self.clock = _START
        self.counter = 0
        self.last_id: str | None = None

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(n))

    def new_id(self) -> str:
        self.counter += 1
        return f"{self.counter:08x}"

    def add(self, kind: str, parent: str | None, **fields: Any) -> str:
        self.clock += timedelta(seconds=self.rng.randint(1, 20))
        entry_id = self.new_id()
        entry = {"type": kind, "id": entry_id, "parentId": parent, "timestamp": _iso(self.clock), **fields}
        if kind == "message":
            entry["message"] = {**fields["message"], "timestamp": _ms(self.clock)}
        self.lines.append(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
        self.last_id = entry_id
        return entry_id

    def message(self, parent: str | None, message: dict[str, Any]) -> str:
        return self.add("message", parent, message=message)

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
    """A small branched session with script-bearing HTML in every field that reaches a widget."""
    b = _Builder(1)
    b.lines.append(json.dumps({"type": "session", "version": 3, "id": "hostile", "timestamp": _iso(_START),
                               "cwd": "/tmp/" + PAYLOAD}))
    root = b.add("model_change", None, provider="anthropic", modelId="claude-sonnet-4-5")
    system = b.message(root, {"role": "system", "content": "system " + PAYLOAD})
    b.add("session_info", system, name="name " + PAYLOAD)
    user = b.message(b.last_id, {"role": "user", "content": "user " + PAYLOAD})
    assistant = b.message(user, {
        "role": "assistant",
        "content": [{"type": "text", "text": "assistant " + PAYLOAD},
                    {"type": "toolCall", "id": "c1", "name": "bash<img src=x onerror=1>",
                     "arguments": {"command": PAYLOAD}}],
        "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "toolUse",
        "usage": b.usage(1200)})
    result = b.message(assistant, {"role": "toolResult", "toolCallId": "c1", "toolName": "bash" + PAYLOAD,
                                   "content": [{"type": "text", "text": ("tool " + PAYLOAD + " ") * 40}],
                                   "isError": False})
    answer = b.message(result, {"role": "assistant", "content": [{"type": "text", "text": "done " + PAYLOAD}],
                                "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
                                "usage": b.usage(1500)})
    second = b.message(answer, {"role": "user", "content": "again " + PAYLOAD})
    b.message(second, {"role": "assistant", "content": [{"type": "text", "text": "ok " + PAYLOAD}],
                       "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
                       "usage": b.usage(1700)})
    b.add("custom_message", b.last_id, customType="note" + PAYLOAD, content="custom " + PAYLOAD, display=True)
    b.add("compaction", b.last_id, summary="summary " + PAYLOAD, firstKeptEntryId=second, tokensBefore=1800,
          details={"readFiles": [PAYLOAD], "modifiedFiles": []})
    b.add("branch_summary", b.last_id, fromId=answer, summary="branch " + PAYLOAD)
    b.add("context_edit", b.last_id, targetId=second, replacement={"content": "edited " + PAYLOAD})
    # An abandoned branch from the first answer.
    alt = b.message(answer, {"role": "user", "content": "alt " + PAYLOAD})
    b.message(alt, {"role": "assistant", "content": [{"type": "text", "text": "alt answer " + PAYLOAD}],
                    "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop"})
    b.add("label", b.last_id, targetId=alt, label="label " + PAYLOAD)
    return b.lines


def write_session(path: str | Path, lines: Iterable[str]) -> Path:
    """Write session ``lines`` to ``path`` (one per line) and return the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
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
