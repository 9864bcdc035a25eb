"""Short human descriptions of messages and entries (for listings, trees and widgets)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import jsjson
from .content import content_text
from .entry import Entry

if TYPE_CHECKING:
    from .session import Session

__all__ = ["entry_kind", "entry_preview", "first_request", "message_preview", "session_title", "tool_calls"]

TITLE_WIDTH = 72


def tool_calls(message: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(name, arguments) of an assistant message's tool calls."""
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return []
    return [(str(b.get("name")), b.get("arguments")) for b in content
            if isinstance(b, dict) and b.get("type") == "toolCall"]


def message_preview(message: Mapping[str, Any]) -> str:
    """The gist of a message in one line of text (not shortened)."""
    role = message.get("role")
    if role in ("user", "custom", "toolResult"):
        text = content_text(message.get("content"), " ")
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        images = sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "image")
        if images:
            text = f"{text} [{images} image{'s' if images > 1 else ''}]".strip()
        if role == "toolResult":
            prefix = f"{message.get('toolName') or 'tool'}"
            if message.get("isError"):
                prefix += " ERROR"
            return f"{prefix}: {text}"
        if role == "custom":
            return f"<{message.get('customType')}> {text}"
        return text
    if role == "assistant":
        parts = [content_text(message.get("content"), " ")]
        calls = [f"{name}({_args(args)})" for name, args in tool_calls(message)]
        if calls:
            parts.append("→ " + "; ".join(calls))
        stop = message.get("stopReason")
        if stop in ("error", "aborted", "length"):
            parts.append(f"[{stop}{': ' + str(message.get('errorMessage')) if message.get('errorMessage') else ''}]")
        return " ".join(p for p in parts if p)
    if role == "system":
        text = content_text(message.get("content"), " ")
        extras = []
        if message.get("sections"):
            extras.append(f"sections: {', '.join(map(str, message['sections']))}")
        for key, sign in (("toolsAdded", "+"), ("toolsRemoved", "-")):
            tools = message.get(key)
            if isinstance(tools, list) and tools:
                extras.append(f"tools {sign}" + ",".join(str(t.get("name")) for t in tools if isinstance(t, dict)))
        return " ".join([text, *(f"[{e}]" for e in extras)]).strip()
    if role == "bashExecution":
        return f"$ {message.get('command')} (exit {message.get('exitCode')})"
    if role in ("branchSummary", "compactionSummary"):
        return str(message.get("summary") or "")
    return str(role)


def _args(args: Any) -> str:
    if isinstance(args, Mapping) and isinstance(args.get("path"), str) and len(args) <= 3:
        return str(args["path"])
    text = jsjson.stringify(args) if args is not None else ""
    return text if len(text) <= 60 else text[:59] + "…"


def entry_kind(entry: Entry) -> str:
    """``type`` or ``message/role`` of an entry."""
    return f"message/{entry.role}" if entry.type == "message" else str(entry.type)


def entry_preview(entry: Entry) -> str:
    """The gist of an entry in one line of text (not shortened)."""
    kind = entry.type
    data = entry.data
    if kind == "message":
        return message_preview(entry.message or {})
    if kind == "custom_message":
        return f"<{data.get('customType')}> {content_text(data.get('content'), ' ')}"
    if kind == "compaction":
        return f"compaction: kept from {data.get('firstKeptEntryId')}, {data.get('tokensBefore')} tokens before"
    if kind == "branch_summary":
        return f"branch summary from {data.get('fromId')}: {data.get('summary') or ''}"
    if kind == "context_edit":
        rep = data.get("replacement")
        what = "omit" if rep is None else "replace"
        return f"context edit: {what} {data.get('targetId')}"
    if kind == "label":
        return f"label {data.get('targetId')}: {data.get('label') or '(cleared)'}"
    if kind == "model_change":
        return f"model → {data.get('provider')}/{data.get('modelId')}"
    if kind == "thinking_level_change":
        return f"thinking → {data.get('thinkingLevel')}"
    if kind == "session_info":
        return f"title: {data.get('name') or '(cleared)'}"
    if kind == "usage":
        return f"usage ({data.get('kind')}): {data.get('provider')}/{data.get('model')}"
    if kind == "custom":
        return f"custom <{data.get('customType')}>"
    return str(kind)


def first_request(session: Session) -> str | None:
    """The text of the session's first user message (file order, one line), or ``None``."""
    for entry in session.entries:
        if entry.type == "message" and entry.role == "user":
            text = " ".join(content_text((entry.message or {}).get("content"), " ").split())
            if text:
                return text
    return None


def session_title(session: Session, width: int = TITLE_WIDTH) -> str:
    """What to call a session in listings, widgets and pages (one line, at most ``width`` characters).

    A named session is called by its name. An unnamed one by its file name (without
    ``.jsonl``; the session id for one held in memory) and its first user request:
    ``2026-01-05_a1b2 — Refactor the auth module…``.
    """
    name = session.name
    if name:
        return _cut(" ".join(name.split()), width)
    if session.path:
        base = os.path.basename(session.path)
        stem = base[:-len(".jsonl")] if base.endswith(".jsonl") else base
    else:
        stem = f"session {session.id[:8]}"
    request = first_request(session)
    if request is None:
        return _cut(stem, width)
    room = width - len(stem) - 3
    if room < 12:
        return _cut(stem, width)
    return f"{stem} — {_cut(request, room)}"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 1, 0)].rstrip() + "…"
