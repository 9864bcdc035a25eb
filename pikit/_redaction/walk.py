"""Redacting parsed JSON in place, iteratively, leaving the structure Pi reads untouched.

Every string is looked at, and every object key, at any depth, except the fields that make
the tree and the messages what they are (:data:`KEPT`): ids, parent ids, types, timestamps,
roles, tool call ids and names, models, usage. Inline images lose their data (a 1×1 image
takes its place, so Pi still reads an image block and estimates it the same) unless they are kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["BLANK_IMAGE", "HEADER", "KEPT", "redact_in_place"]

#: A transparent 1×1 PNG, the data of an image whose own data was dropped.
BLANK_IMAGE = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")

HEADER, ENTRY, MESSAGE, BLOCKS, BLOCK, REPLACEMENT, FREE = range(7)

#: The fields left as they are, by where they sit: the header, an entry, its message, a content block.
KEPT: dict[int, frozenset[str]] = {
    HEADER: frozenset({"type", "version", "id", "timestamp", "redactedBy"}),
    ENTRY: frozenset({"type", "id", "parentId", "timestamp", "targetId", "fromId", "firstKeptEntryId",
                      "firstKeptEntryIndex", "tokensBefore", "customType", "provider", "modelId", "thinkingLevel",
                      "kind", "model", "usage", "fromHook", "display"}),
    MESSAGE: frozenset({"role", "timestamp", "toolCallId", "toolName", "provider", "model", "api", "usage",
                        "stopReason", "isError", "exitCode", "cancelled", "truncated", "excludeFromContext",
                        "customType", "display", "toolsAdded", "toolsRemoved", "responseId"}),
    BLOCK: frozenset({"type", "id", "name", "mimeType", "thinkingSignature", "textSignature", "signature",
                      "redacted"}),
    REPLACEMENT: frozenset(),
    FREE: frozenset(),
}
_INNER: dict[int, dict[str, int]] = {
    HEADER: {},
    ENTRY: {"message": MESSAGE, "content": BLOCKS, "replacement": REPLACEMENT},
    MESSAGE: {"content": BLOCKS},
    BLOCK: {},
    REPLACEMENT: {"content": BLOCKS},
    FREE: {},
}

Text = Callable[[str], str]


def redact_in_place(root: dict[str, Any], text: Text, *, header: bool = False, keep_images: bool = False) -> int:
    """Redact ``root`` (a parsed entry, or the header) in place with ``text``; return the images dropped.

    ``text(s)`` returns ``s`` itself when it holds no secret. No recursion: a 30,000-level
    deep object is walked like a flat one.
    """
    images = 0
    stack: list[tuple[Any, int]] = [(root, HEADER if header else ENTRY)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, list):
            inner = BLOCK if level == BLOCKS else FREE
            for i, value in enumerate(node):
                if isinstance(value, str):
                    node[i] = text(value)
                elif isinstance(value, dict | list):
                    stack.append((value, inner))
            continue
        kept = KEPT.get(level, KEPT[FREE])
        if node.get("type") == "image" and isinstance(node.get("data"), str):
            kept = kept | {"data", "mimeType"}
            if not keep_images and node["data"] != BLANK_IMAGE:
                node["data"] = BLANK_IMAGE
                node["mimeType"] = "image/png"
                images += 1
        renamed: dict[str, str] = {}
        for key, value in node.items():
            if key in kept:
                continue
            if isinstance(value, str):
                node[key] = text(value)
            elif isinstance(value, dict | list):
                stack.append((value, _INNER.get(level, {}).get(key, FREE)))
            new_key = text(key)
            if new_key is not key:
                renamed[key] = new_key
        if renamed:
            items = [(renamed.get(k, k), v) for k, v in node.items()]
            node.clear()
            node.update(items)
    return images
