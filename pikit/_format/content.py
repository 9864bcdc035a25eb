"""Message content helpers: a content value is a string or a list of typed blocks."""

from __future__ import annotations

from typing import Any

__all__ = ["content_text", "text_blocks"]


def text_blocks(content: Any) -> list[str]:
    """The texts of a content value's text blocks (a string is one block)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    out = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            out.append(text if isinstance(text, str) else "" if text is None else str(text))
    return out


def content_text(content: Any, separator: str = "\n") -> str:
    """A content value's text: a string as is, text blocks joined by ``separator``."""
    if isinstance(content, str):
        return content
    return separator.join(text_blocks(content))
