"""In-memory migration of old session formats to version 3.

* v1 → v2: entries had no ids. Every non-header entry gets an id and the previous entry as
  parent; a compaction's ``firstKeptEntryIndex`` (a position in the whole file, header = 0)
  becomes ``firstKeptEntryId``. Pi makes random ids and rewrites the file once; pikit never
  writes its sources, so it derives each id from the entry's position and content
  (:func:`derived_id`): the same file gives the same ids in every run, on every machine, and
  ``pikit migrate`` writes a copy that keeps them.
* v2 → v3: the message role ``hookMessage`` is now ``custom``.

The source file is never rewritten; ``pikit._tree.fork.migrated_lines`` are the lines of a copy.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Container
from typing import Any

from .. import jsjson

__all__ = ["CURRENT_VERSION", "derived_id", "header_version", "migrate", "new_id"]

CURRENT_VERSION = 3


def new_id(taken: Container[Any]) -> str:
    """A fresh 8-hex-digit entry id not in ``taken``."""
    for _ in range(100):
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate
    return secrets.token_hex(16)


def derived_id(position: int, obj: dict[str, Any], taken: Container[Any]) -> str:
    """A stable 8-hex-digit id for the entry at ``position`` (in the file, header = 0) holding
    ``obj``, not in ``taken``: a hash of both, so identical lines still get distinct ids."""
    digest = hashlib.blake2b(jsjson.stringify_bytes(obj), digest_size=16, person=b"pikit-v1-ids",
                             salt=position.to_bytes(16, "little")).hexdigest()
    for start in range(0, len(digest) - 7):
        candidate = digest[start:start + 8]
        if candidate not in taken:
            return candidate
    counter = 0
    while f"{digest[:8]}{counter:x}" in taken:  # 25 collisions in a row: practically never
        counter += 1
    return f"{digest[:8]}{counter:x}"


def header_version(header: dict[str, Any]) -> int:
    """The header's format version (absent means 1)."""
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int | float):
        return 1 if version is None else _loose_number(version)
    return int(version)


def _loose_number(value: Any) -> int:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return 1


IdFactory = Callable[[int, dict[str, Any], set[str]], str]


def migrate(objects: list[dict[str, Any]], id_factory: IdFactory = derived_id) -> int | None:
    """Bring parsed file objects (header first) to the current version, in place.

    ``id_factory(position, obj, taken)`` names the entries of a version-1 file (default:
    :func:`derived_id`, stable across runs). Returns the version migrated from, or ``None``
    when nothing needed migrating.
    """
    header = next((o for o in objects if o.get("type") == "session"), None)
    version = header_version(header) if header is not None else 1
    if version >= CURRENT_VERSION:
        return None
    if version < 2:
        _v1_to_v2(objects, id_factory)
    if version < 3:
        _v2_to_v3(objects)
    return version


def _v1_to_v2(objects: list[dict[str, Any]], id_factory: IdFactory) -> None:
    taken: set[str] = set()
    previous: str | None = None
    for position, obj in enumerate(objects):
        if obj.get("type") == "session":
            obj["version"] = 2
            continue
        entry_id = id_factory(position, obj, taken)
        taken.add(entry_id)
        obj["id"] = entry_id
        obj["parentId"] = previous
        previous = entry_id
        if obj.get("type") == "compaction":
            index = obj.get("firstKeptEntryIndex")
            if isinstance(index, int | float) and not isinstance(index, bool):
                target = objects[int(index)] if index == int(index) and 0 <= index < len(objects) else None
                if target is not None and target.get("type") != "session" and "id" in target:
                    obj["firstKeptEntryId"] = target["id"]
                del obj["firstKeptEntryIndex"]


def _v2_to_v3(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        if obj.get("type") == "session":
            obj["version"] = 3
            continue
        if obj.get("type") == "message":
            message = obj.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"
