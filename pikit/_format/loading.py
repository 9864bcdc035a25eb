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
import operator
import os
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

import orjson

from .._progress import BYTES, Progress, reporting
from ..errors import SessionFileError
from . import reading
from .entry import Entry
from .lines import EntryBuilder, LoadReport
from .reading import open_session_file, too_long
from .tail import mark_at

__all__ = ["Parts", "read_session", "read_session_text", "read_session_through"]


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
            # (each line found with ``bytes.find``: several times faster than ``bytes.split`` on long lines)
            find = chunk.find
            end = find(b"\n")
            start = 0
            if end >= 0:
                number += 1
                if pending_size + end > limit:
                    builder.damaged(number, too_long(pending_size + end))
                else:
                    feed(number, b"".join((*pending, chunk[:end])) if pending else chunk[:end])
                start = end + 1
                while (end := find(b"\n", start)) >= 0:
                    number += 1
                    if end - start > limit:
                        builder.damaged(number, too_long(end - start))
                    else:
                        feed(number, chunk[start:end])
                    start = end + 1
                pending, pending_size = [], 0
            tail = chunk[start:]
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


_ID_OF = operator.attrgetter("id")
_PARENT_OF = operator.attrgetter("parent_id")
#: An ``"id"`` member (at any depth) with a string value, written as JSON writers write it (no space, no escape).
_COMPACT_ID = re.compile(rb'"id":"([^"\\]*)"')
#: The value of an ``"id"`` member (at any depth) after its name, read to see whether it names an entry read
#: already.
_ID_VALUE = re.compile(rb'\s*:\s*("(?:[^"\\]|\\.)*"|[^\s,}\]]+)')


def read_session_through(path: str | os.PathLike[str], entry_type: str) -> Parts:
    """Read a session file (read-only) as far as its last entry of type ``entry_type`` where what follows
    cannot change those entries or the branches they end: the same entries, up to there, as
    :func:`read_session` gives, at a part of the cost when the file goes on after them.

    The lines after the last one naming ``entry_type`` are read as well when they could change what comes
    before: where one may be an entry of that type or name its id in a way only parsing shows (an escaped
    letter), where one names the id of an entry read already (the later entry of an id wins) or of a parent
    such an entry names (a file written out of order), where one writes an id only parsing compares exactly (a
    number, bytes outside ASCII), and where the header is of an older version (migrating reads every entry). A
    file of ``KEEP_ALL_BELOW`` bytes or more is read whole, as :func:`read_session`
    reads it. The report covers the lines read and marks no place to read on from: a session made of these
    parts is read, not followed.
    """
    source = os.fspath(path)
    handle = open_session_file(source)
    try:
        size = os.fstat(handle.fileno()).st_size
    except OSError:
        size = reading.KEEP_ALL_BELOW
    if size >= min(reading.KEEP_ALL_BELOW, reading.MAX_LINE_BYTES):  # (below both, no line is too long)
        return _load_from(handle, source, False, False, False)
    with handle:
        pieces = []
        try:  # (reads of the size known, then on to the end: faster than reading all at once unbuffered)
            while piece := handle.read(size + 1):
                pieces.append(piece)
        except OSError as exc:
            raise SessionFileError(source, f"cannot be read ({exc.strerror or exc})") from None
    data = b"".join(pieces)
    at = data.rfind(b'"' + entry_type.encode() + b'"')
    cut = data.find(b"\n", at) + 1 if at >= 0 else 0
    if cut <= 0:
        cut = len(data)
    builder = EntryBuilder(source, False, keep_all=True)
    number = _feed(builder, data, 0, 0, cut)
    if cut < len(data) and _may_change(builder, data, cut):
        number = _feed(builder, data, number, cut)
        cut = len(data)
    builder.report.bytes = cut
    builder.report.lines = number
    return Parts(*builder.finish())


def _feed(builder: EntryBuilder, data: bytes, number: int, start: int = 0, stop: int | None = None) -> int:
    """Feed the lines of ``data[start:stop]`` (a last one without its newline included) after line ``number``;
    the last line's number. (Each line is found with ``bytes.find``, several times faster than ``bytes.split``
    on lines of thousands of bytes.)"""
    stop = len(data) if stop is None else stop
    find, feed = data.find, builder.feed
    while start < stop:
        end = find(b"\n", start, stop)
        if end < 0:
            end = stop
        number += 1
        feed(number, data[start:end])
        start = end + 1
    return number


def _escapes_a_letter(data: bytes, start: int) -> bool:
    """Whether ``data`` from ``start`` on writes a printable ASCII character as an escape (``\\u0063``): JSON
    writers spell letters as they are, so a type or a key hidden this way is only found by parsing the line.
    (``bytes.find``, much faster than a regular expression over the whole text.)"""
    at = data.find(b"\\u00", start)
    while at >= 0:
        if data[at + 4:at + 5] in (b"2", b"3", b"4", b"5", b"6", b"7"):
            return True
        at = data.find(b"\\u00", at + 4)
    return False


def _may_change(builder: EntryBuilder, data: bytes, start: int) -> bool:
    """Whether the lines of ``data`` from ``start`` on, after the entries ``builder`` has read, could change those
    entries or the branches they end (see :func:`read_session_through`)."""
    if builder.objects is not None or _escapes_a_letter(data, start):
        return True
    try:
        named = set(map(_ID_OF, builder.entries))
        named.update(map(_PARENT_OF, builder.entries))
    except TypeError:  # (an id that is an array or an object, which no value read here equals)
        named = {value for entry in builder.entries for value in (entry.id, entry.parent_id)
                 if isinstance(value, str | int | float)}
    compact = _COMPACT_ID.findall(data, start)
    if len(compact) == data.count(b'"id"', start) and b"".join(compact).isascii():
        # (every id written compactly and in ASCII, which every reading decodes alike: compared at once)
        return not named.isdisjoint(value.decode("ascii") for value in compact)
    at = data.find(b'"id"', start)
    while at >= 0:
        match = _ID_VALUE.match(data, at + 4)
        if match is not None:
            if not match[1].startswith(b'"') or not match[1].isascii():
                return True  # (a number, or bytes the loader may read otherwise: parsing the line tells)
            try:
                value = orjson.loads(match[1])
            except orjson.JSONDecodeError:
                return True  # (an escape only JavaScript's rules read, such as a lone surrogate)
            if value in named:
                return True
        at = data.find(b'"id"', at + 4)
    return False


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
