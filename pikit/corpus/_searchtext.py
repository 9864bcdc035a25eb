"""What a corpus search looks through: the kinds of text the scan keeps, and a message's text blocks.

The scan (``pikit.corpus._scan``) keeps one row per entry and kind of text: a user
message's text, an assistant message's text and its thinking, a tool result's text, the
summary of a compaction or branch summary; each cut to its first ``TEXT_LIMIT`` characters.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SEARCH_KINDS", "block_text", "content_text"]

SEARCH_KINDS = ("user", "assistant", "thinking", "tool", "summary")


def content_text(content: Any) -> str:
    """A message's text: a string as is, its text blocks (typed, or plain dicts) joined; text that is not a string
    is left out."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(text for text in map(block_text, content) if text is not None)


def block_text(block: Any, kind: str = "text") -> str | None:
    """A block's text (``kind`` "thinking": a thinking block's), a typed block or a plain dict; None for any other
    block."""
    if isinstance(block, dict):
        found = block.get(kind) if block.get("type") == kind else None
    else:
        found = getattr(block, kind, None) if getattr(block, "type", None) == kind else None
    return found if isinstance(found, str) else None
