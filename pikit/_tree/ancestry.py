"""What every entry inherits from its ancestors, computed once per session.

For each entry: its depth, and the nearest entry at or above it that is a compaction, that
invalidates recorded usage (a compaction or a context edit), that sets the thinking level,
or that sets the model (a model change or an assistant message). With these, projecting
at a leaf costs the size of its context instead of the depth of its branch, so moving the
leaf in a session of 100,000 entries stays fast.

Sessions whose parent links form a cycle (damaged files) are not indexed: the projection
then walks the branch instead, which handles the cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._format.entry import Entry

__all__ = ["Ancestry", "build_ancestry", "extend_ancestry"]

_KEYS = (str, int, float)


@dataclass
class Ancestry:
    """Per-entry inherited facts (entry id → value)."""

    depth: dict[Any, int]
    compaction: dict[Any, Entry | None]
    invalidation: dict[Any, Entry | None]
    thinking: dict[Any, Entry | None]
    model: dict[Any, Entry | None]


def _parent(by_id: Mapping[Any, Entry], entry: Entry) -> Any:
    parent = entry.parent_id
    if not parent or parent == entry.id or not isinstance(parent, _KEYS) or parent not in by_id:
        return None
    return parent


def build_ancestry(by_id: Mapping[Any, Entry]) -> Ancestry | None:
    """Index every entry of ``by_id``; ``None`` when a parent cycle makes paths ambiguous."""
    ancestry = Ancestry({}, {}, {}, {}, {})
    return ancestry if extend_ancestry(ancestry, by_id, by_id) else None


def extend_ancestry(ancestry: Ancestry, by_id: Mapping[Any, Entry], starts: Iterable[Any]) -> bool:
    """Index the entries ``starts`` (and their ancestors not yet indexed) in place.

    Entries already indexed are not looked at again, so adding the entries appended to a
    session costs their number. ``False`` when a parent cycle makes paths ambiguous (the
    index is then incomplete and must not be used).
    """
    depth, compaction, invalidation = ancestry.depth, ancestry.compaction, ancestry.invalidation
    thinking, model = ancestry.thinking, ancestry.model
    for start in starts:
        if start in depth:
            continue
        chain: list[Any] = []
        on_chain: set[Any] = set()
        current: Any = start
        while current is not None and current not in depth:
            if current in on_chain:
                return False
            on_chain.add(current)
            chain.append(current)
            current = _parent(by_id, by_id[current])
        above = current  # an indexed ancestor, or None at a root
        for entry_id in reversed(chain):
            entry = by_id[entry_id]
            kind = entry.type
            if above is None:
                d, comp, inv, think, mod = 0, None, None, None, None
            else:
                d = depth[above] + 1
                comp, inv, think, mod = compaction[above], invalidation[above], thinking[above], model[above]
            if kind == "compaction":
                comp = inv = entry
            elif kind == "context_edit":
                inv = entry
            elif kind == "thinking_level_change":
                think = entry
            elif kind == "model_change" or entry.model is not None:
                mod = entry
            depth[entry_id] = d
            compaction[entry_id] = comp
            invalidation[entry_id] = inv
            thinking[entry_id] = think
            model[entry_id] = mod
            above = entry_id
    return True
