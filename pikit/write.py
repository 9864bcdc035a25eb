"""Writing sessions: new files, or whole lines appended with fsync. Never a rewrite.

* :func:`write_new` writes a complete file next to its target and renames it into place,
  so a crash leaves either nothing or the whole file; it refuses to overwrite the source
  or (unless ``overwrite``) an existing file.
* :func:`append_lines` appends whole lines to an existing session and fsyncs; a file
  whose last line is unterminated gets its newline first, so no entry is glued to it.
* :func:`fork` and :func:`migrated_lines` build the content of a fork/clone and of a
  migrated copy.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from . import jsjson
from .errors import WriteError
from .migration import CURRENT_VERSION, new_id
from .timestamps import iso_now

if TYPE_CHECKING:
    from .session import Session

__all__ = ["append_lines", "copy_with_lines", "fork", "fork_lines", "migrated_lines", "uuid7", "write_new"]


def uuid7() -> str:
    """A time-ordered UUID (version 7), as Pi uses for session ids."""
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(secrets.token_bytes(10), "big")
    value = (millis & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 68 & 0xFFF) << 64
    value |= 0b10 << 62 | (rand & ((1 << 62) - 1))
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def write_new(target: str | os.PathLike[str], lines: Iterable[bytes], *, source: str | None = None,
              overwrite: bool = False) -> str:
    """Write ``lines`` (each without newline) as a new file; return its path."""
    path = os.fspath(target)
    if source is not None and _same_file(path, source):
        raise WriteError(f"{path}: refusing to write over the source file; choose another output path")
    if os.path.exists(path) and not overwrite:
        raise WriteError(f"{path}: already exists; choose a new output path (or pass --force to replace it)")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise WriteError(f"{path}: folder {directory} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=".pikit-", suffix=".jsonl.tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            for line in lines:
                out.write(line)
                out.write(b"\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def copy_with_lines(source: str, target: str | os.PathLike[str], lines: Iterable[bytes], *,
                    overwrite: bool = False) -> str:
    """Write a copy of ``source`` (its bytes unchanged) followed by ``lines``."""
    with open(source, "rb") as handle:
        data = handle.read()
    head: list[bytes] = []
    if data:
        # The source's bytes go out unchanged; only a missing final newline is supplied.
        head.append(data[:-1] if data.endswith(b"\n") else data)
    return write_new(target, [*head, *lines], source=source, overwrite=overwrite)


def append_lines(path: str, lines: Iterable[bytes]) -> None:
    """Append whole lines to ``path`` and fsync (the explicit in-place write)."""
    payload = b"".join(line + b"\n" for line in lines)
    try:
        with open(path, "rb+") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            if size:
                handle.seek(size - 1)
                if handle.read(1) != b"\n":
                    payload = b"\n" + payload
            handle.seek(0, os.SEEK_END)
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise WriteError(f"{path}: cannot append ({exc.strerror or exc})") from None


def _header(session: Session, parent_session: str | None) -> dict[str, Any]:
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


def fork_lines(session: Session, leaf_id: Any, parent_session: str | None = None) -> list[bytes]:
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


def fork(session: Session, leaf_id: Any, target: str | os.PathLike[str], *, overwrite: bool = False) -> str:
    """Write the branch at ``leaf_id`` as a new session file whose header points at the source."""
    source = os.path.abspath(session.path) if session.path else None
    return write_new(target, fork_lines(session, leaf_id, source), source=session.path, overwrite=overwrite)


def migrated_lines(session: Session) -> list[bytes]:
    """The lines of the session in the current format (header first)."""
    header = dict(session.header)
    header["version"] = CURRENT_VERSION
    return [jsjson.stringify_bytes(header), *(e.raw for e in session.entries)]
