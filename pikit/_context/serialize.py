"""The conversation as a summarizer reads it: model messages serialized as plain text.

Messages are first converted to what a model accepts (a shell execution becomes a user
message unless excluded, a custom message a user message, a summary a user message
wrapped in its summary frame), then written as blocks joined by a blank line:
``[User]: …``, ``[Assistant]: …``, ``[Assistant tool calls]: name(k=json, …); …`` and
``[Tool result]: …`` (long results cut at 2000 UTF-16 units). Thinking is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .._format.message import MODEL_ROLES, MessageView, ToolCall, view
from ..jsjson import js_items, stringify, utf16_len

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "TOOL_RESULT_LIMIT",
    "bash_execution_text",
    "serialize_conversation",
    "to_model_messages",
]

TOOL_RESULT_LIMIT = 2000
# The frames Pi puts around summaries when it sends them to a model (part of the format).
COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"


def bash_execution_text(message: Mapping[str, Any]) -> str:
    """How a shell command the user ran reaches the model."""
    text = f"Ran `{message.get('command')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message.get('fullOutputPath')}]"
    return text


def _user(text: str, message: Mapping[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": message.get("timestamp")}


def to_model_messages(messages: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Convert session messages to the roles a model accepts (system/user/assistant/toolResult)."""
    out: list[Mapping[str, Any]] = []
    for m in messages:
        role = m.get("role")
        if role == "bashExecution":
            if not m.get("excludeFromContext"):
                out.append(_user(bash_execution_text(m), m))
        elif role == "custom":
            content = m.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            out.append({"role": "user", "content": content, "timestamp": m.get("timestamp")})
        elif role == "branchSummary":
            out.append(_user(BRANCH_SUMMARY_PREFIX + str(m.get("summary")) + BRANCH_SUMMARY_SUFFIX, m))
        elif role == "compactionSummary":
            out.append(_user(COMPACTION_SUMMARY_PREFIX + str(m.get("summary")) + COMPACTION_SUMMARY_SUFFIX, m))
        elif isinstance(role, str) and role in MODEL_ROLES:  # (an array or object as a role: no role, left out)
            out.append(m)
    return out


def _head(text: str, units: int) -> str:
    """The first ``units`` UTF-16 units of ``text``, never splitting a surrogate pair."""
    if text.isascii():
        return text[:units]
    encoded = text.encode("utf-16-le", "surrogatepass")
    end = units * 2
    if end >= 2 and end + 2 <= len(encoded):
        last = int.from_bytes(encoded[end - 2:end], "little")
        following = int.from_bytes(encoded[end:end + 2], "little")
        if 0xD800 <= last <= 0xDBFF and 0xDC00 <= following <= 0xDFFF:
            end -= 2
    return encoded[:end].decode("utf-16-le", "surrogatepass")


def _truncate(text: str, limit: int) -> str:
    length = utf16_len(text)
    if length <= limit:
        return text
    return f"{_head(text, limit)}\n\n[... {length - limit} more characters truncated]"


def _call_text(call: ToolCall) -> str:
    args = call.arguments
    pairs = ", ".join(f"{k}={stringify(v)}" for k, v in js_items(args)) if isinstance(args, Mapping) else ""
    return f"{call.name}({pairs})"


def _serialize(v: MessageView) -> list[str]:
    if v.role == "user":
        text = v.text("")
        return [f"[User]: {text}"] if text else []
    if v.role == "assistant":
        parts = []
        if v.has_text_block:
            parts.append(f"[Assistant]: {v.text()}")
        calls = [_call_text(b) for b in v.list_blocks if type(b) is ToolCall]
        if calls:
            parts.append(f"[Assistant tool calls]: {'; '.join(calls)}")
        return parts
    if v.role == "toolResult":
        text = v.text("")
        return [f"[Tool result]: {_truncate(text, TOOL_RESULT_LIMIT)}"] if text else []
    return []


def serialize_conversation(messages: Iterable[Mapping[str, Any]]) -> str:
    """Serialize model messages (see :func:`to_model_messages`) to the summarizer's text."""
    return "\n\n".join(part for m in messages for part in _serialize(view(m)))
