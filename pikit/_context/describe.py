"""Short human descriptions of messages and entries (for listings, trees and widgets)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import jsjson
from .._format.content import content_text
from .._format.entry import Entry
from .._format.message import CONTENT_ROLES, MessageView, ToolCall, view
from .._formatting import fmt_int, plural

if TYPE_CHECKING:
    from .._tree.sessiontree import SessionTree

__all__ = ["cut_words", "display_title", "entry_kind", "entry_preview", "first_request", "is_pi_file_name",
           "leaf_text", "message_preview", "session_title", "tool_calls"]

TITLE_WIDTH = 72
# The name Pi gives a session file: the header's timestamp with ':' and '.' as '-', '_', the session id.
_PI_FILE_NAME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:-\d{1,3})?Z_[^/\\]+\.jsonl")


def tool_calls(message: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(name, arguments) of an assistant message's tool calls."""
    v = view(message)
    return [(c.name, c.arguments) for c in v.list_blocks if type(c) is ToolCall] if v.role == "assistant" else []


def _content_preview(v: MessageView) -> str:
    text = v.text(" ")
    if v.images:
        text = f"{text} [{plural(v.images, 'image')}]".strip()
    if v.role == "toolResult":
        return f"{v.tool_name or 'tool'}{' ERROR' if v.is_error else ''}: {text}"
    if v.role == "custom":
        return f"<{v.custom_type}> {text}"
    return text


def _assistant_preview(v: MessageView) -> str:
    parts = [v.text(" ")]
    calls = [f"{c.name}({_args(c.arguments)})" for c in v.list_blocks if type(c) is ToolCall]
    if calls:
        parts.append("→ " + "; ".join(calls))
    if v.stopped_early:
        parts.append(f"[{v.stop_reason}{': ' + v.error_message if v.error_message else ''}]")
    return " ".join(p for p in parts if p)


def _system_preview(v: MessageView) -> str:
    extras = []
    if v.sections:
        extras.append(f"sections: {', '.join(s.name for s in v.sections)}")
    for tools, sign in ((v.tools_added, "+"), (v.tools_removed, "-")):
        if tools:
            extras.append(f"tools {sign}" + ",".join(t.name for t in tools))
    return " ".join([v.text(" "), *(f"[{e}]" for e in extras)]).strip()


def message_preview(message: Mapping[str, Any]) -> str:
    """The gist of a message in one line of text (not shortened)."""
    v = view(message)
    if v.role in CONTENT_ROLES:
        return _content_preview(v)
    if v.role == "assistant":
        return _assistant_preview(v)
    if v.role == "system":
        return _system_preview(v)
    if v.bash is not None:
        return f"$ {v.bash.command} (exit {v.bash.exit_code})"
    if v.summary is not None:
        return v.summary
    return str(v.role)


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
        before = fmt_int(data.get("tokensBefore"))
        return f"compaction: kept from {data.get('firstKeptEntryId')}, {before} tokens before"
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


def leaf_text(leaf_id: Any) -> str:
    """A leaf id as listings show it; ``None`` (the reset leaf of an empty branch) says so."""
    return "none (empty branch)" if leaf_id is None else str(leaf_id)


def first_request(session: SessionTree) -> str | None:
    """The text of the session's first user message (file order, one line), or ``None``."""
    for entry in session.entries:
        if entry.type == "message" and entry.role == "user":
            text = " ".join(content_text((entry.message or {}).get("content"), " ").split())
            if text:
                return text
    return None


def session_title(session: SessionTree, width: int = TITLE_WIDTH) -> str:
    """What to call a session in listings, widgets and pages (one line, at most ``width`` characters).

    See :func:`display_title`: the name (the latest ``session_info``, else the title an oh-my-pi
    file holds), else the first user request (with the file name before it
    when the file is not named the way Pi names its files).
    """
    name = session.name or session.report.title
    return display_title(name, session.path, None if name else first_request(session), width,
                         session_id=session.id)


def is_pi_file_name(path: str) -> bool:
    """Whether a file is named the way Pi names session files (``<timestamp>_<session id>.jsonl``)."""
    return _PI_FILE_NAME.fullmatch(os.path.basename(path)) is not None


def display_title(name: str | None, path: str | None, request: str | None, width: int = TITLE_WIDTH, *,
                  session_id: str | None = None) -> str:
    """A session's title from its name, file and first user request (one line, at most ``width`` characters).

    A named session is called by its name. An unnamed one as Pi's session list shows it, by its
    first user request, when its file has the name Pi gives (``<timestamp>_<session id>.jsonl``;
    or the session id alone, as OpenClaw names it: the name says nothing more); a file named
    otherwise (and a session held in memory: ``session`` and its id's first 8 characters) keeps
    that name (without ``.jsonl``) before the request: ``quick-tour — What does
    src/cart/total.ts compute?``. Without a request: that name alone. Long text is cut at a
    word boundary, with ``…`` (:func:`cut_words`).
    """
    if name and name.split():
        return cut_words(name, width)
    request = " ".join(request.split()) if request else None
    if path:
        base = os.path.basename(path)
        stem = base[:-len(".jsonl")] if base.endswith(".jsonl") else base
        if request and (is_pi_file_name(path) or stem == session_id):  # (OpenClaw names a file by the id alone)
            return cut_words(request, width)
    else:
        stem = f"session {(session_id or '')[:8]}".rstrip()
    if request is None:
        return cut_words(stem, width)
    room = width - len(stem) - 3
    if room < 12:
        return cut_words(stem, width)
    return f"{stem} — {cut_words(request, room)}"


def cut_words(text: str, width: int) -> str:
    """``text`` on one line, at most ``width`` characters: cut after the last whole word that fits, with ``…``
    (mid-word only when the first word alone is longer than half the width)."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    room = max(width - 1, 0)
    head = flat[:room]
    if flat[room] != " ":
        space = head.rfind(" ")
        if space >= room // 2:
            head = head[:space]
    return head.rstrip() + "…"
