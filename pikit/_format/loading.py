"""Reading session files: streaming, tolerant of damage, never writing.

A damaged line costs that line only (see ``pikit._format.lines``). Lines are split on ``\\n`` only
(U+2028 inside strings is text), so CRLF files load too. The file is opened read-only and
never modified, not even to repair a truncated last line.

Reading is bounded: only regular files are read (a FIFO or a device such as
``/dev/zero`` is refused at once), the file is read in chunks of ``CHUNK_SIZE``, and
at most ``MAX_LINE_BYTES`` of one line are held; the rest of a longer line is read
past and the line reported as damaged.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterable
from typing import Any, NamedTuple

from .._progress import BYTES, Progress, reporting
from ..errors import SessionFileError
from . import reading
from .entry import Entry
from .lines import EntryBuilder, LoadReport
from .reading import open_session_file, too_long
from .tail import mark_at

__all__ = ["Parts", "read_session", "read_session_text"]


class Parts(NamedTuple):
    """A session file as read: its header, its entries in file order, and what was found."""

    header: dict[str, Any]
    entries: list[Entry]
    report: LoadReport


def read_session(path: str | os.PathLike[str], *, strict: bool = False,
                 progress: Progress = None, wait_for_last_line: bool = False) -> Parts:
    """Read a session file (read-only) into its parts; :func:`pikit.load` makes them a session.

    ``progress`` (``pikit._progress``): by default a bar in a notebook for a file of 32 MB or
    more, nothing elsewhere; ``True`` such a bar anywhere; ``False`` none; a callback
    ``(done_bytes, total_bytes)`` is called after each chunk.
    A last line without its newline is read as a line, unless ``wait_for_last_line``: then
    it is left for :meth:`Session.refresh` (a writer is still at it; used when following).
    Raises :class:`SessionFileError` for a missing or unreadable file or one that is not
    a regular file (a FIFO, a device), and :class:`NotASessionError` when the file does
    not start with a session header. A line longer than :data:`MAX_LINE_BYTES` is skipped
    and reported (raised with ``strict``).
    """

    source = os.fspath(path)
    return _load_from(open_session_file(source), source, strict, progress, wait_for_last_line)


def _load_from(handle: Any, source: str, strict: bool, progress: Progress,
               wait_for_last_line: bool = False) -> Parts:
    with handle, contextlib.ExitStack() as stack:
        try:
            stat = os.fstat(handle.fileno())
            total, mtime_ns = stat.st_size, stat.st_mtime_ns
        except OSError:
            total, mtime_ns = 0, None
        builder = EntryBuilder(source, strict, keep_all=total < reading.KEEP_ALL_BELOW)
        callback = stack.enter_context(reporting(progress, f"loading {os.path.basename(source)}", total, BYTES))
        # The unfinished line is kept as pieces (joined once, when its newline arrives), and
        # only up to MAX_LINE_BYTES of it: beyond that its bytes are only counted.
        pending: list[bytes] = []
        pending_size = 0
        number = 0
        done = 0
        feed = builder.feed
        limit = reading.MAX_LINE_BYTES
        while True:
            try:
                chunk = handle.read(reading.CHUNK_SIZE)
            except OSError as exc:
                raise SessionFileError(source, f"cannot be read ({exc.strerror or exc})") from None
            if not chunk:
                break
            done += len(chunk)
            lines = chunk.split(b"\n")
            tail = lines.pop()
            if lines:
                first = lines[0]
                number += 1
                if pending_size + len(first) > limit:
                    builder.damaged(number, too_long(pending_size + len(first)))
                else:
                    feed(number, b"".join((*pending, first)) if pending else first)
                for line in itertools.islice(lines, 1, None):
                    number += 1
                    if len(line) > limit:
                        builder.damaged(number, too_long(len(line)))
                    else:
                        feed(number, line)
                pending, pending_size = [], 0
            if pending_size + len(tail) > limit:
                pending = []  # over the limit: from here on the line is only counted
            elif tail:
                pending.append(tail)
            pending_size += len(tail)
            if callback is not None:
                callback(done, total)
        report = builder.report
        if pending_size > limit:  # refreshing reads past the rest of this line
            report.mark = mark_at(handle, done, number, skipping=pending_size)
        else:
            report.mark = mark_at(handle, done - pending_size, number)
        if pending_size and not wait_for_last_line:
            number += 1
            if pending_size > limit:
                builder.damaged(number, too_long(pending_size))
            else:
                report.unfinished = b"".join(pending)
                feed(number, report.unfinished)
        builder.report.bytes = done
        builder.report.lines = number
        builder.report.mtime_ns = mtime_ns
    return Parts(*builder.finish())


def read_session_text(text: str | bytes | Iterable[str | bytes], *, source: str = "<string>",
                      strict: bool = False) -> Parts:
    """Read a session from its text, its bytes or an iterable of lines."""
    builder = EntryBuilder(source, strict, keep_all=True)
    items = [text] if isinstance(text, str | bytes) else text
    number = 0
    for item in items:
        data = item.encode("utf-8", "surrogatepass") if isinstance(item, str) else item
        # Each item is one or more lines; a final newline ends the last line.
        for line in (data[:-1] if data.endswith(b"\n") else data).split(b"\n"):
            number += 1
            builder.feed(number, line)
    builder.report.lines = number
    return Parts(*builder.finish())
