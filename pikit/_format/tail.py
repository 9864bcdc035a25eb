"""Reading only what was appended to a file: complete lines since a position, never a torn one.

A session file grows by whole lines, but a reader can look at it while a line is half
written. :func:`read_appended` returns the complete lines after a position and the position
after the last of them; an unfinished last line stays in the file for the next read.

A :class:`FileMark` remembers, besides the position, enough of the file to notice that it
was replaced or rewritten rather than appended to (a migration, a repair, a rotation): its
device and inode, and digests of its first and last few kilobytes before the position. When
the file no longer matches, nothing is read and :attr:`Appended.rewritten` says why; the
caller then reads the file again from the start.

Reading is bounded like loading: only regular files, at most about ``max_bytes`` per call,
and no line longer than ``max_line`` is held: such a line is read past and reported in
:attr:`Appended.too_long` (even while it is still being written).

>>> mark = FileMark()                      # the start of the file
>>> got = read_appended("session.jsonl", mark)
>>> got.lines, got.mark.offset, got.mark.line
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import BinaryIO

from .reading import MAX_LINE_BYTES, open_session_file

__all__ = ["Appended", "FileMark", "mark_at", "read_appended"]

# How much of the file's start, and of the bytes just before the mark, the digests cover.
DIGEST_BYTES = 4096
# The default byte budget of one read: what is beyond stays in the file for the next call.
READ_BYTES = 64 * 1024 * 1024
_SCAN_BYTES = 8 * 1024 * 1024


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(frozen=True)
class FileMark:
    """A position in a file after a complete line, and the file's identity up to there.

    ``line`` counts the lines before ``offset`` (the number of the last complete line read),
    from the mark the reading started with: absolute when it started at the file's start.
    ``head`` and ``tail`` are digests of the first and of the last (up to) 4 KiB before
    ``offset`` (``None``: not known, not checked); ``size`` and ``mtime_ns`` are the file's
    when it was last looked at (a file seen unchanged is not read again). ``skipping`` is
    non-zero while an over-long line is being read past: its bytes before ``offset``.
    """

    offset: int = 0
    line: int = 0
    device: int | None = None
    inode: int | None = None
    head: str | None = None
    tail: str | None = None
    size: int = 0
    mtime_ns: int | None = None
    skipping: int = 0

    def mismatch(self, handle: BinaryIO, status: os.stat_result) -> str | None:
        """Why the open file is not the marked file grown by appends (``None`` when it is)."""
        if self.inode is not None and (status.st_ino, status.st_dev) != (self.inode, self.device):
            return "the file was replaced (a new inode)"
        if status.st_size < self.offset:
            return f"the file shrank from at least {self.offset:,} to {status.st_size:,} bytes"
        if not self.offset or (status.st_size == self.size and status.st_mtime_ns == self.mtime_ns):
            return None
        if self.head is not None and _digest(_read_at(handle, 0, min(self.offset, DIGEST_BYTES))) != self.head:
            return "the start of the file changed"
        start = max(0, self.offset - DIGEST_BYTES)
        if self.tail is not None and _digest(_read_at(handle, start, self.offset - start)) != self.tail:
            return "the file changed before the last read position"
        return None


@dataclass(frozen=True)
class Appended:
    """What :func:`read_appended` found.

    ``lines`` are the complete lines after the given mark (each without its ``\\n``, a
    ``\\r`` kept), ``mark`` is where the next read starts, ``pending`` the bytes left in the
    file after it (an unfinished line, or more when ``more`` says this read's byte budget
    ran out first). A line longer than the limit is in ``too_long`` (line number → its
    size) and stands in ``lines`` as an empty line. ``rewritten`` is set (and nothing is
    read) when the file is no longer the marked one: the caller reads it again from the start.
    """

    lines: list[bytes]
    mark: FileMark
    pending: int = 0
    more: bool = False
    rewritten: str | None = None
    too_long: dict[int, int] = field(default_factory=dict)

    @property
    def first_line(self) -> int:
        """The line number of ``lines[0]`` (1-based when the reading started at the file's start)."""
        return self.mark.line - len(self.lines) + 1


def _read_at(handle: BinaryIO, position: int, size: int) -> bytes:
    if size <= 0:
        return b""
    handle.seek(position)
    parts = []
    while size > 0:
        chunk = handle.read(size)
        if not chunk:
            break
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def mark_at(handle: BinaryIO, offset: int, line: int, *, skipping: int = 0) -> FileMark:
    """The mark of an open file at ``offset`` (just after line ``line``), with its digests."""
    status = os.fstat(handle.fileno())
    start = max(0, offset - DIGEST_BYTES)
    head = _digest(_read_at(handle, 0, min(offset, DIGEST_BYTES)))
    tail = _digest(_read_at(handle, start, offset - start))
    size = status.st_size if offset == status.st_size else -1  # "unchanged" only when all was read
    return FileMark(offset, line, status.st_dev, status.st_ino, head, tail, size, status.st_mtime_ns, skipping)


def read_appended(path: str | os.PathLike[str], since: FileMark | int = 0, *, max_bytes: int = READ_BYTES,
                  max_line: int = MAX_LINE_BYTES) -> Appended:
    """The complete lines appended to ``path`` since ``since``, and the mark to read on from.

    ``since`` is a :class:`FileMark` from an earlier call (or ``FileMark()`` for the start),
    or a plain byte offset that must sit just after a line's ``\\n`` (line numbers then count
    from it, and only a file shorter than the offset counts as rewritten). Bytes after the
    last ``\\n`` are an unfinished line: they are left for the next call. At most about
    ``max_bytes`` are read per call (a longer line is still read whole, up to ``max_line``);
    ``more`` says when complete lines may remain. The file is opened read-only; it must be
    a regular file (:class:`~pikit.SessionFileError` otherwise).
    """
    source = os.fspath(path)
    mark = since if isinstance(since, FileMark) else FileMark(offset=since)
    if mark.offset < 0:
        raise ValueError(f"a file offset is never negative (got {mark.offset})")
    with open_session_file(source) as handle:
        status = os.fstat(handle.fileno())
        reason = mark.mismatch(handle, status)
        if reason is not None:
            return Appended([], FileMark(), rewritten=reason)
        size = status.st_size
        if size == mark.offset or (size == mark.size and status.st_mtime_ns == mark.mtime_ns):
            seen = FileMark(mark.offset, mark.line, status.st_dev, status.st_ino, mark.head, mark.tail, size,
                            status.st_mtime_ns, mark.skipping)
            return Appended([], seen, pending=size - mark.offset)
        scan = _Scan(handle, mark, size, max(max_bytes, 1), max(max_line, 1))
        scan.run()
        end = scan.offset
        head, tail = mark.head, mark.tail
        if end != mark.offset:
            if mark.offset < DIGEST_BYTES or head is None:
                head = _digest(_read_at(handle, 0, min(end, DIGEST_BYTES)))
            start = max(0, end - DIGEST_BYTES)
            tail = _digest(_read_at(handle, start, end - start))
        # The size is the file's only when everything in it was read (the "unchanged" shortcut).
        new = FileMark(end, scan.line, status.st_dev, status.st_ino, head, tail, -1 if scan.more else size,
                       status.st_mtime_ns, scan.skipping)
        return Appended(scan.lines, new, pending=size - end, more=scan.more, too_long=scan.too_long)


class _Scan:
    """One bounded pass over the bytes after a mark, line by line."""

    def __init__(self, handle: BinaryIO, mark: FileMark, size: int, budget: int, limit: int) -> None:
        self.handle = handle
        self.size = size
        self.budget = budget
        self.limit = limit
        self.offset = mark.offset
        self.line = mark.line
        self.skipping = mark.skipping
        self.lines: list[bytes] = []
        self.too_long: dict[int, int] = {}
        self.more = False

    def run(self) -> None:
        handle, size = self.handle, self.size
        handle.seek(self.offset)
        if self.skipping and not self._skip():
            return
        block = handle.read(min(size - self.offset, self.budget))
        cut = block.rfind(b"\n")
        if cut >= 0:
            for line in block[:cut].split(b"\n"):
                self._add(line)
            self.offset += cut + 1
            self.more = self.offset + len(block) - cut - 1 < size
            return
        # No line ends within the budget: read on to this line's end, holding at most the limit.
        parts = [block]
        held = len(block)
        while held <= self.limit and self.offset + held < size:
            chunk = handle.read(min(size - self.offset - held, _SCAN_BYTES))
            if not chunk:
                break
            cut = chunk.find(b"\n")
            if cut >= 0:
                parts.append(chunk[:cut])
                self._add(b"".join(parts))
                read_to = self.offset + held + len(chunk)
                self.offset += held + cut + 1
                self.more = read_to < size or b"\n" in chunk[cut + 1:]
                return
            parts.append(chunk)
            held += len(chunk)
        if held > self.limit:
            # Too long to hold: read past it from here on, counting its bytes.
            self.skipping = held
            self.offset += held
            self.more = self.offset < size

    def _add(self, line: bytes) -> None:
        self.line += 1
        if len(line) > self.limit:
            self.too_long[self.line] = len(line)
            line = b""
        self.lines.append(line)

    def _skip(self) -> bool:
        """Read past the rest of an over-long line; whether its end was found."""
        handle = self.handle
        while self.offset < self.size:
            chunk = handle.read(min(self.size - self.offset, _SCAN_BYTES))
            if not chunk:
                break
            cut = chunk.find(b"\n")
            if cut >= 0:
                self.line += 1
                self.too_long[self.line] = self.skipping + cut
                self.lines.append(b"")
                self.skipping = 0
                self.offset += cut + 1
                handle.seek(self.offset)
                return True
            self.skipping += len(chunk)
            self.offset += len(chunk)
        return False
