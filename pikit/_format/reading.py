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

__all__ = ["NotRegularFileError", "kind_of", "open_regular"]


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
