"""Token figures: Pi's estimate, the context size rule, and provider-reported usage.

Pi's estimate is ``ceil(chars / 4)`` where chars counts UTF-16 code units (see
:func:`estimate_tokens`). It drives compaction, so it is reproduced exactly. Real token
counts (tiktoken) live in ``pikit._context.counting``; the usage recorded on assistant messages is
read by :func:`message_usage`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..jsjson import js_truthy, stringify_len, utf16_len

__all__ = [
    "IMAGE_CHARS",
    "ContextSize",
    "context_size",
    "estimate_chars",
    "estimate_tokens",
    "message_usage",
    "usage_total",
]

IMAGE_CHARS = 4800


def _text_len(value: Any) -> int:
    return utf16_len(value) if isinstance(value, str) else 0


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return utf16_len(content)
    if not isinstance(content, list):
        return 0
    chars = 0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            chars += _text_len(block.get("text"))
        elif kind == "image":
            chars += IMAGE_CHARS
    return chars


def estimate_chars(message: Mapping[str, Any]) -> int:
    """The character count (UTF-16 units) behind :func:`estimate_tokens`."""
    role = message.get("role")
    if role in ("user", "custom", "toolResult"):
        return _content_chars(message.get("content"))
    if role == "assistant":
        chars = 0
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                chars += _text_len(block.get("text"))
            elif kind == "thinking":
                chars += _text_len(block.get("thinking"))
            elif kind == "toolCall":
                chars += _text_len(block.get("name"))
                if "arguments" in block:
                    chars += stringify_len(block["arguments"])
        return chars
    if role == "system":
        chars = _content_chars(message.get("content"))
        sections = message.get("sections")
        if isinstance(sections, dict):
            for text in sections.values():
                if isinstance(text, str):
                    chars += utf16_len(text)
        tools = message.get("toolsAdded")
        if js_truthy(tools):
            chars += stringify_len(tools)
        return chars
    if role == "bashExecution":
        return _text_len(message.get("command")) + _text_len(message.get("output"))
    if role in ("branchSummary", "compactionSummary"):
        return _text_len(message.get("summary"))
    return 0


def estimate_tokens(message: Mapping[str, Any]) -> int:
    """Pi's token estimate of one message: ``ceil(chars / 4)`` in UTF-16 code units.

    user/custom/toolResult: text (+4800 chars per image); assistant: text, thinking and
    each tool call's name plus its compact JSON arguments; system: content, sections and
    the JSON of added tools; bashExecution: command and output; summaries: the summary.
    """
    return math.ceil(estimate_chars(message) / 4)


def usage_total(usage: Any) -> int:
    """A usage's context size: ``totalTokens``, or the sum of its parts when that is 0."""
    if not isinstance(usage, Mapping):
        return 0
    total = usage.get("totalTokens")
    if js_truthy(total):
        return _num(total)
    parts = [usage.get(k) for k in ("input", "output", "cacheRead", "cacheWrite")]
    if not all(_is_number(p) for p in parts):
        return 0  # JavaScript would get NaN: not a usable size
    return _num(sum(parts))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _num(value: Any) -> int:
    if not _is_number(value):
        return 0
    return int(value) if float(value).is_integer() else value


def message_usage(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The usage of an assistant message when it is usable for the context size.

    Usable means: not aborted or errored, and a size above zero.
    """
    if message.get("role") != "assistant":
        return None
    usage = message.get("usage")
    if message.get("stopReason") in ("aborted", "error") or not js_truthy(usage):
        return None
    return usage if usage_total(usage) > 0 else None


@dataclass(frozen=True)
class ContextSize:
    """The context size of a projection and how it was obtained.

    ``tokens`` = ``usage_tokens`` (the last usable provider usage) + ``trailing_tokens``
    (estimates of the messages after it). When no usage is usable, or an edit or a
    compaction came after it (``stale``), everything is estimated.
    """

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    usage_index: int | None
    stale: bool = False


def context_size(messages: Sequence[Mapping[str, Any]], estimates: Sequence[int],
                 usage_source_position: int = -1, last_invalidation_position: int = -1,
                 system_estimate: int = 0) -> ContextSize:
    """Apply Pi's context size rule.

    ``usage_source_position`` maps to the position (on the branch) of the entry that produced the
    message with the last usable usage; ``last_invalidation_position`` is the position of the last
    ``context_edit`` or ``compaction`` on the branch (-1 if none). ``system_estimate`` is the
    estimate of the replayed system message, used when the usage is stale or absent.
    """
    index = None
    for i in range(len(messages) - 1, -1, -1):
        if message_usage(messages[i]) is not None:
            index = i
            break
    if index is not None and usage_source_position > last_invalidation_position:
        used = usage_total(messages[index]["usage"])
        trailing = sum(estimates[index + 1:])
        return ContextSize(used + trailing, used, trailing, index)
    tokens = system_estimate + sum(e for m, e in zip(messages, estimates, strict=True) if m.get("role") != "system")
    return ContextSize(tokens, 0, tokens, None, stale=index is not None)
