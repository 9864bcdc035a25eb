"""Reading only what was appended to a file: complete lines since a position, never a torn one.

A session file grows by whole lines, but a reader can look at it while a line is half
written. :func:`read_appended` returns the complete lines after a position and the position
after the last of them; an unfinished last line stays in the file for the next read.

A :class:`FileMark` remembers, besides the position, enough of the file to notice that it
was replaced or rewritten rather than appended to (a migration, a repair, a rotation): its
device and inode, and digests of its first and last few kilobytes before the position. When
the file no longer matches, nothing is read and :attr:`Appended.rewritten` says why; the
caller then reads the file again from the start.

>>> mark = FileMark()                      # the start of the file
>>> got = read_appended("session.jsonl", mark)
>>> got.lines, got.mark.offset, got.mark.line
"""

from __future__ import annotations

import hashlib
import os
import stat as _stat
from dataclasses import dataclass
from typing import BinaryIO

from .errors import SessionFileError

__all__ = ["Appended", "FileMark", "read_appended"]

# How much of the file's start, and of the bytes just before the mark, the digests cover.
DIGEST_BYTES = 4096
# The default for one read: more stays in the file for the next call.
READ_BYTES = 64 * 1024 * 1024


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(frozen=True)
class FileMark:
    """A position in a file after a complete line, and the file's identity up to there.

    ``line`` counts the lines before ``offset`` (the number of the last complete line read),
    from the mark the reading started with: absolute when it started at the file's start.
    ``head`` and ``tail`` are digests of the first and of the last (up to) 4 KiB before
    ``offset`` (``None``: not known, not checked); ``size`` and ``mtime_ns`` are the file's
    when it was last looked at (a file seen unchanged is not read again).
    """

    offset: int = 0
    line: int = 0
    device: int | None = None
    inode: int | None = None
    head: str | None = None
    tail: str | None = None
    size: int = 0
    mtime_ns: int | None = None

    @property
    def started(self) -> bool:
        """Whether the mark is past the start of the file."""
        return self.offset > 0

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
    ran out first). ``rewritten`` is set (and nothing is read) when the file is no
    longer the marked one: the caller reads it again from the start.
    """

    lines: list[bytes]
    mark: FileMark
    pending: int = 0
    more: bool = False
    rewritten: str | None = None

    @property
    def first_line(self) -> int:
        """The line number of ``lines[0]`` (1-based when the reading started at the file's start)."""
        return self.mark.line - len(self.lines) + 1


def _read_at(handle: BinaryIO, position: int, size: int) -> bytes:
    handle.seek(position)
    return handle.read(size) if size > 0 else b""


def _open_regular(source: str) -> BinaryIO:
    # Without blocking: opening a named pipe for reading would wait for a writer.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(source, flags)
    except FileNotFoundError:
        raise SessionFileError(source, "no such file; check the path") from None
    except IsADirectoryError:
        raise SessionFileError(source, "is a directory, not a session file") from None
    except OSError as exc:
        raise SessionFileError(source, f"cannot be read ({exc.strerror or exc})") from None
    if not _stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        what = "a directory" if os.path.isdir(source) else "not a regular file"
        raise SessionFileError(source, f"is {what}; give the path of a session file")
    return os.fdopen(descriptor, "rb")


def read_appended(path: str | os.PathLike[str], since: FileMark | int = 0, *,
                  max_bytes: int = READ_BYTES) -> Appended:
    """The complete lines appended to ``path`` since ``since``, and the mark to read on from.

    ``since`` is a :class:`FileMark` from an earlier call (or ``FileMark()`` for the start),
    or a plain byte offset that must sit just after a line's ``\\n`` (line numbers then count
    from it, and only a file shorter than the offset counts as rewritten). Bytes after the
    last ``\\n`` are an unfinished line: they are left for the next call. At most about
    ``max_bytes`` are read per call (a single longer line is still read whole); ``more``
    says when complete lines remain. The file is opened read-only; it must be a regular file.
    """
    source = os.fspath(path)
    mark = since if isinstance(since, FileMark) else FileMark(offset=since)
    if mark.offset < 0:
        raise ValueError(f"a file offset is never negative (got {mark.offset})")
    with _open_regular(source) as handle:
        status = os.fstat(handle.fileno())
        reason = mark.mismatch(handle, status)
        if reason is not None:
            return Appended([], FileMark(), rewritten=reason)
        size = status.st_size
        if size == mark.offset or (size == mark.size and status.st_mtime_ns == mark.mtime_ns):
            seen = FileMark(mark.offset, mark.line, status.st_dev, status.st_ino, mark.head, mark.tail, size,
                            status.st_mtime_ns)
            return Appended([], seen, pending=size - mark.offset)
        data, more = _complete_lines(handle, mark.offset, size, max_bytes)
        end = mark.offset + len(data)
        lines = data.split(b"\n")[:-1] if data else []
        head, tail = mark.head, mark.tail
        if data:
            if mark.offset < DIGEST_BYTES or head is None:
                head = _digest(_read_at(handle, 0, min(end, DIGEST_BYTES)))
            start = max(0, end - DIGEST_BYTES)
            tail = _digest(data[start - mark.offset:] if start >= mark.offset else _read_at(handle, start, end - start))
        # The size is that of the file only when every complete line in it was read.
        new = FileMark(end, mark.line + len(lines), status.st_dev, status.st_ino, head, tail, end if more else size,
                       status.st_mtime_ns)
        return Appended(lines, new, pending=size - end, more=more)


def _complete_lines(handle: BinaryIO, offset: int, size: int, max_bytes: int) -> tuple[bytes, bool]:
    """The bytes from ``offset`` up to the last ``\\n`` within the budget, and whether more follow."""
    handle.seek(offset)
    data = handle.read(min(size - offset, max(max_bytes, 1)))
    cut = data.rfind(b"\n")
    if cut >= 0:
        return data[:cut + 1], offset + len(data) < size
    # No complete line within the budget: read on to the end of this one line, if it has one.
    parts = [data]
    position = offset + len(data)
    while position < size:
        chunk = handle.read(min(size - position, 8 * 1024 * 1024))
        if not chunk:
            break
        position += len(chunk)
        cut = chunk.find(b"\n")
        if cut >= 0:
            parts.append(chunk[:cut + 1])
            return b"".join(parts), position < size or b"\n" in chunk[cut + 1:]
        parts.append(chunk)
    return b"", False

