"""The tree's rows, as data: Pi's ``/tree`` layout in the compact form the browser view draws.

:func:`tree_layout` lays a session out for a leaf, a filter mode and a search (the rows of
:meth:`pikit.Session.flatten`, made one at a time: active branch first, single-child chains flat) and gives each row
its nearest shown ancestor row, so the browser marks the active path itself. Widgets keep only
the encoded bytes (:meth:`TreeLayout.encode`), not the row lists. No kernel needed.

A row's badge, label and text are shown with ``pikit._inert.visible`` (control characters,
bidi controls and lone surrogates made visible); its id stays exact, lone surrogates included
(as JSON escapes), so that a click sends back the very id of the row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from ... import jsjson
from ..._format.entry import Entry
from ..._inert import visible

if TYPE_CHECKING:
    from ..._session import Session

__all__ = ["TreeLayout", "anchor_rows", "json_id", "row_kind", "tree_layout"]

_MESSAGE_KINDS = {
    "user": ("user", "user"), "assistant": ("assistant", "assistant"), "toolResult": ("tool", "tool"),
    "system": ("system", "system"), "bashExecution": ("bash", "bash"), "custom": ("custom", "custom"),
    "branchSummary": ("branch-summary", "branch summary"), "compactionSummary": ("compaction", "summary"),
}
_ENTRY_KINDS = {
    "compaction": ("compaction", "compaction"), "branch_summary": ("branch-summary", "branch summary"),
    "custom_message": ("custom", "custom"), "label": ("meta", "label"), "model_change": ("meta", "model"),
    "thinking_level_change": ("meta", "thinking"), "session_info": ("meta", "title"),
    "context_edit": ("meta", "edit"), "custom": ("meta", "custom"), "usage": ("meta", "usage"),
}


def row_kind(entry: Any) -> tuple[str, str]:
    """``(css kind, badge text)`` of an entry in the tree."""
    if entry.type == "message":
        message = entry.message or {}
        role = entry.role
        kind = _MESSAGE_KINDS.get(role, ("meta", str(role))) if isinstance(role, str) else ("meta", str(role))
        if entry.role == "toolResult" and message.get("isError"):
            return "tool-error", "tool ✗"
        if entry.role == "assistant" and message.get("stopReason") in ("error", "aborted"):
            return "tool-error", f"assistant ✗ {message.get('stopReason')}"
        return kind
    return _ENTRY_KINDS.get(entry.type, ("meta", str(entry.type)))


def _link(value: Any) -> Any:
    """A parent id as the tree links it: a JSON list or object links nothing (the session
    leaves such ids out of its index, so the entry is a root there)."""
    return value if isinstance(value, str | int | float) else None


def json_id(value: Any) -> Any:
    """An entry id as it can travel to the browser (strings and numbers as they are)."""
    return value if isinstance(value, str | int | float) and not isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class TreeLayout:
    """The rows ``[id, indent, parent_row, kind, badge, label, text, children]``, the row of each id,
    the ids in order, and the rows of the leaf's mark (``anchor_row``) and of the leaf itself."""

    rows: list[list[Any]]
    index: dict[Any, int]
    ids: list[Any]
    anchor_row: int
    leaf_row: int

    def encode(self) -> bytes:
        """The rows as compact UTF-8 JSON (lone surrogates in ids as escapes): one binary buffer,
        cheap for ipywidgets to send."""
        try:
            return orjson.dumps(self.rows)
        except TypeError:  # a lone surrogate in an id, which orjson refuses: written as JavaScript writes it
            return jsjson.stringify_bytes(self.rows)


def anchor_rows(by_id: Mapping[Any, Entry], index: Mapping[Any, int], leaf: Any) -> tuple[int, int]:
    """(row of the leaf or of its nearest shown ancestor, row of the leaf itself or -1)."""
    if leaf is None:
        return -1, -1
    if leaf in index:
        row = index[leaf]
        return row, row
    current = _link(by_id[leaf].parent_id) if leaf in by_id else None
    steps = 0
    while current is not None and current in by_id and steps <= len(by_id):
        if current in index:
            return index[current], -1
        current = _link(by_id[current].parent_id)
        steps += 1
    return -1, -1


class _Ancestors:
    """The nearest shown ancestor row of hidden entries, remembered along the way."""

    def __init__(self, by_id: Mapping[Any, Entry], index: Mapping[Any, int]) -> None:
        self.by_id, self.index = by_id, index
        self.nearest: dict[Any, int] = {}

    def row(self, entry_id: Any) -> int:
        by_id, index = self.by_id, self.index
        chain: list[Any] = []
        current = _link(by_id[entry_id].parent_id) if entry_id in by_id else None
        found = -1
        while current is not None and len(chain) <= len(by_id):
            if current in index:
                found = index[current]
                break
            if current in self.nearest:
                found = self.nearest[current]
                break
            if current not in by_id or by_id[current].parent_id == current:
                break
            chain.append(current)
            current = _link(by_id[current].parent_id)
        for hidden in chain:
            self.nearest[hidden] = found
        return found


def tree_layout(session: Session, leaf: Any, mode: str, search: str, *,
                describe: Callable[[Entry, Callable[[Entry], tuple[str, str]]], tuple[str, str, str]]) -> TreeLayout:
    """Lay ``session`` out for ``leaf``, ``mode`` and ``search``; ``describe(entry, row_kind)`` gives
    ``(kind, badge, one-line text)`` of a row (the widgets pass a per-session cache)."""
    leaf = session.resolve_leaf(leaf)
    flat = session.tree_rows(leaf, mode, search)  # made one at a time: the layout holds its compact rows only
    ids = [row.id for row in flat.window(0, len(flat))]
    index = {row_id: i for i, row_id in enumerate(ids)}
    by_id = session.by_id
    ancestors = _Ancestors(by_id, index)
    rows: list[list[Any]] = []
    for row in flat.window(0, len(flat)):
        entry = row.entry
        kind, badge, text = describe(entry, row_kind)
        parent = _link(entry.parent_id)
        parent_row = index[parent] if parent in index and parent != row.id else ancestors.row(row.id)
        rows.append([json_id(row.id), row.indent, parent_row, kind, visible(badge), visible(row.label or ""),
                     visible(text), row.children])
    anchor, leaf_row = anchor_rows(by_id, index, leaf)
    return TreeLayout(rows, index, ids, anchor, leaf_row)
