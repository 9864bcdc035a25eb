"""Builders of small hand-made session entries, shared by the core tests."""

from __future__ import annotations

import json
from typing import Any

import pikit
from pikit import Session

T0 = 1767225600000  # 2026-01-01T00:00:00.000Z in Unix milliseconds


def ts(s: int) -> str:
    """The ISO timestamp ``s`` seconds after :data:`T0`."""
    return f"2026-01-01T00:{s // 60:02d}:{s % 60:02d}.000Z"


def m(i: str, p: Any, s: int, message: dict[str, Any]) -> dict[str, Any]:
    """A ``message`` entry at second ``s``."""
    return {"type": "message", "id": i, "parentId": p, "timestamp": ts(s),
            "message": {**message, "timestamp": T0 + s * 1000}}


def user(i: str, p: Any, s: int, content: Any) -> dict[str, Any]:
    """A user message entry."""
    return m(i, p, s, {"role": "user", "content": content})


def asst(i: str, p: Any, s: int, content: Any, usage: Any = None, stop: str = "stop", provider: str = "anthropic",
         model: str = "claude") -> dict[str, Any]:
    """An assistant message entry."""
    msg = {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": provider, "model": model,
           "stopReason": stop}
    if usage is not None:
        msg["usage"] = usage
    return m(i, p, s, msg)


def tool_result(i: str, p: Any, s: int, content: Any, name: str = "read", **kw: Any) -> dict[str, Any]:
    """A tool result message entry."""
    return m(i, p, s, {"role": "toolResult", "toolCallId": "c1", "toolName": name, "content": content,
                       "isError": False, **kw})


def usage(inp: int, out: int, cache_read: int = 0, cache_write: int = 0, total: int | None = None) -> dict[str, Any]:
    """A provider usage record."""
    return {"input": inp, "output": out, "cacheRead": cache_read, "cacheWrite": cache_write,
            "totalTokens": inp + out + cache_read + cache_write if total is None else total,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def compaction(i: str, p: Any, s: int, first: Any, summary: str = "SUMMARY", tokens_before: int = 1000,
               **kw: Any) -> dict[str, Any]:
    """A compaction entry."""
    return {"type": "compaction", "id": i, "parentId": p, "timestamp": ts(s), "summary": summary,
            "firstKeptEntryId": first, "tokensBefore": tokens_before, **kw}


def edit(i: str, p: Any, s: int, target: Any, replacement: Any) -> dict[str, Any]:
    """A context edit entry."""
    return {"type": "context_edit", "id": i, "parentId": p, "timestamp": ts(s), "targetId": target,
            "replacement": replacement}


def text(t: str) -> list[dict[str, Any]]:
    """Content made of one text block."""
    return [{"type": "text", "text": t}]


def call(cid: str, name: str, **args: Any) -> dict[str, Any]:
    """A tool call block."""
    return {"type": "toolCall", "id": cid, "name": name, "arguments": args}


def session_of(header: dict[str, Any], entries: list[dict[str, Any]]) -> Session:
    """A session loaded from the JSON lines of ``header`` and ``entries``."""
    return pikit.loads("\n".join(json.dumps(e, ensure_ascii=False, separators=(",", ":"))
                                 for e in [header, *entries]) + "\n")
