"""Opening files to read: regular files only, and never blocking on the open itself.

A FIFO, a terminal, ``/dev/zero`` or ``/dev/urandom`` given where a session or settings
file is expected would hang the reader or feed it bytes without end. :func:`open_regular`
opens without blocking (a FIFO with no writer does not stall the open) and refuses
anything that is not a regular file, saying what it is instead.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from ..errors import SessionFileError

__all__ = [
    "CHUNK_SIZE",
    "KEEP_ALL_BELOW",
    "MAX_LINE_BYTES",
    "NotRegularFileError",
    "file_signature",
    "kind_of",
    "open_regular",
    "open_session_file",
    "too_long",
]

#: Bytes read from the file at a time.
CHUNK_SIZE = 8 * 1024 * 1024
#: The longest line kept (128 MiB). A longer line is skipped and reported; Pi itself cannot
#: hold a line of more than about 512 MiB (JavaScript's longest string).
MAX_LINE_BYTES = 128 * 1024 * 1024
#: Below this size a file's entries are kept parsed; above it only what the index needs is.
KEEP_ALL_BELOW = 16 * 1024 * 1024


class NotRegularFileError(OSError):
    """The path exists but is not a regular file (a directory, FIFO, device, socket)."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(f"{path} is {kind}, not a regular file")
        self.path = path
        self.kind = kind


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words (``"a directory"``, ``"a FIFO (named pipe)"``…)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a special file"


def open_regular(path: str) -> BinaryIO:
    """Open ``path`` for unbuffered binary reading if it is a regular file.

    Raises :class:`NotRegularFileError` for anything else, and the usual ``OSError``
    (``FileNotFoundError``, ``PermissionError``…) when it cannot be opened.
    """
    # A socket cannot be opened at all, so look first; the descriptor is checked again
    # below, in case the path was replaced in between.
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(path, kind_of(mode))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, kind_of(mode))
        # O_NONBLOCK means nothing for a regular file; clear it anyway for a clean descriptor.
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def open_session_file(source: str) -> BinaryIO:
    """Open ``source`` for reading as a session file; :class:`SessionFileError` (one line
    saying what to do) when it is missing, not a regular file, or unreadable."""
    try:
        return open_regular(source)
    except FileNotFoundError:
        raise SessionFileError(source, "no such file; check the path") from None
    except NotRegularFileError as exc:
        raise SessionFileError(source, f"is {exc.kind}, not a regular file; give the path of a session file "
                                       "(.jsonl)") from None
    except OSError as exc:
        raise SessionFileError(source, f"cannot be read ({exc.strerror or exc})") from None


def too_long(size: int) -> str:
    """Why a line of ``size`` bytes was skipped (longer than :data:`MAX_LINE_BYTES`)."""
    return (f"a line of {size:,} bytes, longer than the {MAX_LINE_BYTES // (1024 * 1024)} MiB limit "
            "(line skipped)")


def file_signature(path: str) -> tuple[int, int, int] | None:
    """``(size, mtime_ns, inode)`` of the file at ``path``, to notice a change; ``None`` when it cannot be read."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_size, status.st_mtime_ns, status.st_ino
