"""Frames of a session's tree: :func:`entries` (one row per entry) and :func:`branches` (one per tip)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .._context.describe import entry_kind, entry_preview, message_preview
from .._context.projection import entry_messages, project_path
from .._context.tokens import estimate_tokens
from .._format.entry import Entry
from .._session import Session
from .._tree.sessiontree import CURRENT
from ._columns import Column, ColumnSpec, build, hashable, select, shorten

__all__ = ["BRANCH_COLUMNS", "ENTRY_COLUMNS", "branches", "entries"]


def _depths(session: Session) -> dict[Any, int]:
    """Number of ancestors of every reachable id, computed without recursion."""
    by_id = session.by_id
    depth: dict[Any, int] = {}
    for start in by_id:
        if start in depth:
            continue
        chain: list[Any] = []
        on_chain: set[Any] = set()
        current: Any = start
        base = -1
        while True:
            if current in depth:
                base = depth[current]
                break
            if current in on_chain:  # a parent cycle: treat the repeated node as a root
                base = -1
                break
            chain.append(current)
            on_chain.add(current)
            parent = by_id[current].parent_id
            if parent is None or parent == current or not hashable(parent) or parent not in by_id:
                break
            current = parent
        for node in reversed(chain):
            base += 1
            depth[node] = base
    return depth


def _child_counts(session: Session) -> dict[Any, int]:
    """Number of children of each entry id, as the tree counts them (orphans are roots)."""
    by_id = session.by_id
    counts: dict[Any, int] = {}
    for entry in session.entries:
        entry_id, parent = entry.id, entry.parent_id
        if not hashable(entry_id) or entry_id not in by_id:
            continue
        if hashable(parent) and parent != entry_id and parent in by_id:
            counts[parent] = counts.get(parent, 0) + 1
    return counts


@dataclass
class _EntryRow:
    """One entry with the session-wide facts the entry columns read."""

    entry: Entry
    known: bool
    session: Session
    depths: dict[Any, int]
    children: dict[Any, int]
    active: set[Any]
    leaf: Any


def _estimate(entry: Entry) -> int:
    return sum(estimate_tokens(m) for m in entry_messages(entry))


ENTRY_COLUMNS = (
    Column("id", "string", "entry id", lambda r: r.entry.id),
    Column("parent_id", "string", "parent entry id (<NA> for a root)", lambda r: r.entry.parent_id),
    Column("type", "string", "entry type (message, compaction, label, ...)", lambda r: r.entry.type),
    Column("role", "string", "message role for a message entry, else <NA>", lambda r: r.entry.role),
    Column("kind", "string", "type, or message/role for messages", lambda r: entry_kind(r.entry)),
    Column("timestamp", "datetime64[ms, UTC]", "entry timestamp (<NaT> when it does not parse)",
           lambda r: r.entry.time_ms),
    Column("line", "Int64", "line number in the file (the header is line 1)", lambda r: r.entry.line),
    Column("depth", "Int64", "number of ancestors (0 for a root; <NA> for an entry without a usable id)",
           lambda r: r.depths.get(r.entry.id) if r.known else None, "tree"),
    Column("on_active_branch", "boolean", "whether the entry is on the path root → leaf",
           lambda r: r.known and r.entry.id in r.active, "tree"),
    Column("is_leaf", "boolean", "whether the entry is the leaf", lambda r: r.known and r.entry.id == r.leaf, "tree"),
    Column("label", "string", "the entry's resolved label, if any",
           lambda r: r.session.labels.get(r.entry.id) if r.known else None, "tree"),
    Column("children", "Int64", "number of child entries", lambda r: r.children.get(r.entry.id, 0) if r.known else 0,
           "tree"),
    Column("estimate", "Int64", "Pi's token estimate of the messages the entry projects to (edits not applied)",
           lambda r: _estimate(r.entry), "size"),
    Column("bytes", "Int64", "size of the entry's JSON line in bytes", lambda r: len(r.entry.raw), "size"),
    Column("preview", "string", "one-line gist of the entry, shortened", lambda r: shorten(entry_preview(r.entry)),
           "text"),
)
"""Columns of :func:`entries`; groups: core, tree, size, text."""


def branch_at(session: Session, leaf: Any) -> list[Entry]:
    """The entries root → ``leaf`` (CURRENT: the current leaf; None: the empty leaf, no entries)."""
    target = session.resolve_leaf(leaf)
    return session.branch(target) if target is not None else []


def entries(session: Session, leaf: Any = CURRENT, *, columns: ColumnSpec = None) -> pd.DataFrame:
    """One row per entry in file order (see :data:`ENTRY_COLUMNS`).

    ``on_active_branch`` and ``is_leaf`` refer to ``leaf`` (:data:`~pikit.CURRENT`:
    the current leaf; None: the empty leaf, so no entry is on the branch). ``columns`` picks
    column groups or columns (default: all).
    """
    depths = _depths(session)
    children = _child_counts(session)
    active = {e.id for e in branch_at(session, leaf) if hashable(e.id)}
    target = session.resolve_leaf(leaf)
    by_id = session.by_id
    rows = (_EntryRow(e, hashable(e.id) and e.id in by_id, session, depths, children, active, target)
            for e in session.entries)
    return build(rows, select(ENTRY_COLUMNS, columns))


# ---------------------------------------------------------------------------------- branches
def _last_user(path: Sequence[Entry]) -> str | None:
    for entry in reversed(path):
        if entry.type == "message" and entry.role == "user":
            return shorten(message_preview(entry.message or {}))
    return None


@dataclass
class _BranchRow:
    """A branch tip, its path and where it leaves the active branch."""

    tip: Any
    path: list[Entry]
    is_active: bool
    fork_index: int
    session: Session
    children: dict[Any, int]

    @property
    def fork_id(self) -> Any:
        return self.path[self.fork_index].id if self.fork_index >= 0 else None

    @property
    def own(self) -> list[Entry]:
        return self.path if self.is_active else self.path[self.fork_index + 1:]

    @property
    def label(self) -> str | None:
        labels = self.session.labels
        return next((labels[e.id] for e in reversed(self.own) if hashable(e.id) and e.id in labels), None)


BRANCH_COLUMNS = (
    Column("leaf_id", "string", "the tip of the branch (an entry without children), or the current leaf",
           lambda r: r.tip),
    Column("is_active", "boolean", "whether this is the session's current leaf", lambda r: r.is_active),
    Column("is_tip", "boolean", "whether the entry has no children", lambda r: not r.children.get(r.tip)),
    Column("length", "Int64", "entries on the path root → leaf", lambda r: len(r.path)),
    Column("fork_id", "string", "common ancestor with the current leaf (<NA> for the active branch)",
           lambda r: r.fork_id),
    Column("own_entries", "Int64", "entries after the fork point (the whole path for the active branch)",
           lambda r: len(r.own)),
    Column("label", "string", "label of the leaf, else of the nearest labelled entry after the fork point",
           lambda r: r.label),
    Column("has_branch_summary", "boolean", "whether a branch_summary entry is on the path",
           lambda r: any(e.type == "branch_summary" for e in r.path)),
    Column("compactions", "Int64", "compaction entries on the path",
           lambda r: sum(1 for e in r.path if e.type == "compaction")),
    Column("tokens", "Int64", "context size at the leaf (Pi's rule)", lambda r: project_path(r.path, r.tip).tokens,
           "tokens"),
    Column("last_timestamp", "datetime64[ms, UTC]", "timestamp of the leaf entry",
           lambda r: r.session.by_id[r.tip].time_ms),
    Column("last_user", "string", "the last user message on the path, shortened", lambda r: _last_user(r.path),
           "text"),
)
"""Columns of :func:`branches`; groups: core, tokens, text."""


def branches(session: Session, *, columns: ColumnSpec = None) -> pd.DataFrame:
    """One row per branch tip (an entry without children) plus the current leaf if it is not a tip.

    See :data:`BRANCH_COLUMNS`. The fork point is the common ancestor with the current leaf.
    """
    current = session.leaf_id
    active_path = branch_at(session, CURRENT)
    active_index = {e.id for e in active_path if hashable(e.id)}
    children = _child_counts(session)
    tips = [e.id for e in session.entries if hashable(e.id) and session.by_id.get(e.id) is e
            and not children.get(e.id)]
    if hashable(current) and current in session.by_id and current not in tips:
        tips.append(current)

    def row(tip: Any) -> _BranchRow:
        path = session.branch(tip)
        is_active = tip == current
        fork = -1
        if not is_active and active_path:
            fork = next((i for i in range(len(path) - 1, -1, -1)
                         if hashable(path[i].id) and path[i].id in active_index), -1)
        return _BranchRow(tip, path, is_active, fork, session, children)

    return build(map(row, tips), select(BRANCH_COLUMNS, columns))
