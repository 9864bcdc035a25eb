"""A branch as a new session, and an old session in the current format: the lines of a copy.

:func:`fork_lines` builds what Pi writes when it forks or clones a session at a leaf;
:func:`migrated_lines` the lines of a migrated copy. :func:`fork` writes the fork to a new
file (never the source) through ``pikit._format.write``.
"""

from __future__ import annotations

import os
from typing import Any

from .. import jsjson
from .._format.migration import CURRENT_VERSION, new_id
from .._format.timestamps import iso_now
from .._format.write import uuid7, write_new
from .sessiontree import SessionTree

__all__ = ["fork", "fork_lines", "migrated_lines"]


def _header(session: SessionTree, parent_session: str | None) -> dict[str, Any]:
    header: dict[str, Any] = {
        "type": "session",
        "version": CURRENT_VERSION,
        "id": uuid7(),
        "timestamp": iso_now(),
        "cwd": session.header.get("cwd", ""),
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


def fork_lines(session: SessionTree, leaf_id: Any, parent_session: str | None = None) -> list[bytes]:
    """The lines of a new session holding the branch root→``leaf_id`` (Pi's fork/clone).

    Label entries are dropped and the kept entries re-chained; a compaction whose
    ``firstKeptEntryId`` named a dropped label points at the next kept entry; the labels
    of entries on the branch are appended as fresh label entries.
    """
    path = session.branch(leaf_id)
    kept_ids: set[Any] = set()
    lines: list[bytes] = []
    pending_labels: list[Any] = []
    label_successor: dict[Any, Any] = {}
    previous: Any = None
    for entry in path:
        if entry.type == "label":
            pending_labels.append(entry.id)
            continue
        # Labels seen so far now have a successor; a label further down is not known yet.
        for label_id in pending_labels:
            label_successor[label_id] = entry.id
        pending_labels.clear()
        data = entry.data
        new: dict[str, Any] | None = None
        if previous != entry.parent_id or "parentId" not in data:
            new = {**data, "parentId": previous}
        if entry.type == "compaction":
            first = data.get("firstKeptEntryId")
            remapped = first if first == entry.id else label_successor.get(first, first)
            if remapped != first:
                new = {**(new or data), "firstKeptEntryId": remapped}
        lines.append(entry.raw if new is None else jsjson.stringify_bytes(new))
        kept_ids.add(entry.id)
        previous = entry.id
    parent = previous
    taken = set(kept_ids)
    for target, label in session.labels.items():
        if target not in kept_ids:
            continue
        label_id = new_id(taken)
        taken.add(label_id)
        label_entry = {"type": "label", "id": label_id, "parentId": parent,
                       "timestamp": session.label_times.get(target), "targetId": target, "label": label}
        lines.append(jsjson.stringify_bytes(label_entry))
        parent = label_id
    header = _header(session, parent_session)
    return [jsjson.stringify_bytes(header), *lines]


def fork(session: SessionTree, leaf_id: Any, target: str | os.PathLike[str], *, overwrite: bool = False) -> str:
    """Write the branch at ``leaf_id`` as a new session file whose header points at the source."""
    source = os.path.abspath(session.path) if session.path else None
    return write_new(target, fork_lines(session, leaf_id, source), source=session.path, overwrite=overwrite)


def migrated_lines(session: SessionTree) -> list[bytes]:
    """The lines of the session in the current format (header first)."""
    header = dict(session.header)
    header["version"] = CURRENT_VERSION
    return [jsjson.stringify_bytes(header), *(e.raw for e in session.entries)]
