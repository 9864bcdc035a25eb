"""The ``--json`` objects of ``pikit tree`` and ``pikit info`` (documented in ``docs/json.md``)."""

from __future__ import annotations

from typing import Any

from ..._session import Session


def tree(session: Session) -> dict[str, Any]:
    """The flat tree: the roots, the children of every reachable entry, and the labels."""
    flat = session.tree()
    return {"roots": flat["roots"], "children": flat["children"], "labels": flat["labels"]}


def info(session: Session) -> dict[str, Any]:
    """The file, its header, its counts and every problem found reading it."""
    report = session.report
    return {
        "file": session.path,
        "bytes": report.bytes,
        "lines": report.lines,
        "sessionId": session.id,
        "name": session.name,
        "cwd": session.header.get("cwd"),
        "migratedFrom": report.migrated_from,
        "entries": len(session),
        "roots": len(session.roots),
        "leaf": session.leaf_id,
        "labels": len(session.labels),
        "types": entry_types(session),
        "problems": [{"kind": p.kind, "line": p.line, "entryId": p.entry_id, "message": p.message}
                     for p in report.problems],
    }


def entry_types(session: Session) -> dict[str, int]:
    """How many entries of each type (``message/ROLE`` for messages), in the order first seen."""
    kinds: dict[str, int] = {}
    for entry in session.entries:
        key = f"message/{entry.role}" if entry.type == "message" else str(entry.type)
        kinds[key] = kinds.get(key, 0) + 1
    return kinds
