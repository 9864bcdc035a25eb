"""Reading session files: streaming, tolerant of damage, never writing.

A damaged line (malformed JSON, invalid UTF-8 that breaks the JSON, a value that is not
an object, a line longer than :data:`MAX_LINE_BYTES`) costs that line only and is reported
with its line number; ``strict=True`` raises instead. Lines are split on ``\\n`` only
(U+2028 inside strings is text), so CRLF files load too. The file is opened read-only and
never modified, not even to repair a truncated last line.

Reading is bounded: only regular files are read (a FIFO or a device such as
``/dev/zero`` is refused at once), the file is read in chunks of :data:`CHUNK_SIZE`, and
at most :data:`MAX_LINE_BYTES` of one line are held; the rest of a longer line is read
past and the line reported as damaged.
"""

from __future__ import annotations

import builtins
import contextlib
import itertools
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

import msgspec
import orjson

from .. import jsjson
from .._progress import BYTES, Progress, reporting
from ..errors import DamagedLineError, NotASessionError, SessionFileError
from .entry import Entry
from .migration import CURRENT_VERSION, header_version, migrate
from .reading import NotRegularFileError, open_regular

if TYPE_CHECKING:
    from .._tree.sessiontree import Session
    from .tail import FileMark

__all__ = ["CHUNK_SIZE", "MAX_LINE_BYTES", "LoadReport", "Problem", "load", "loads"]

#: Bytes read from the file at a time.
CHUNK_SIZE = 8 * 1024 * 1024
#: The longest line kept (128 MiB). A longer line is skipped and reported; Pi itself cannot
#: hold a line of more than about 512 MiB (JavaScript's longest string).
MAX_LINE_BYTES = 128 * 1024 * 1024
#: UTF-8's byte order mark: Pi's ``JSON.parse`` refuses a line that starts with it.
BOM = b"\xef\xbb\xbf"
#: Why a file whose first line starts with :data:`BOM` is not a session.
BOM_HEADER = ("line 1 is not a session header: it starts with a UTF-8 byte order mark (BOM), which Pi does not read "
               "either; save the file as UTF-8 without a BOM")
_KEEP_ALL_BELOW = 16 * 1024 * 1024


@dataclass(frozen=True)
class Problem:
    """Something wrong in a session file: a damaged line or an inconsistent entry."""

    kind: str
    message: str
    line: int | None = None
    entry_id: str | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}{self.message}"


@dataclass
class LoadReport:
    """What loading found besides the entries."""

    source: str
    lines: int = 0
    bytes: int = 0
    found: list[Problem] = field(default_factory=list)
    migrated_from: int | None = None
    mtime_ns: int | None = None
    deferred: Callable[[], list[Problem]] | None = field(default=None, repr=False)
    #: Where :meth:`Session.refresh` reads on (after the last complete line read).
    mark: FileMark | None = field(default=None, repr=False)
    #: The last line as read when it had no newline yet (a writer may still be at it).
    unfinished: builtins.bytes | None = field(default=None, repr=False)

    @property
    def problems(self) -> list[Problem]:
        """Everything found: damaged lines, then checks of the tree (run on first access)."""
        if self.deferred is not None:
            check, self.deferred = self.deferred, None
            self.found.extend(check())
        return self.found

    @property
    def damaged_lines(self) -> list[Problem]:
        """Lines that were skipped."""
        return [p for p in self.found if p.kind == "damaged-line"]

    def of_kind(self, kind: str) -> list[Problem]:
        """Problems of one kind (``damaged-line``, ``duplicate-id``, ``orphan``, ``cycle``, ...)."""
        return [p for p in self.problems if p.kind == kind]

    @property
    def ok(self) -> bool:
        """Whether nothing at all was wrong."""
        return not self.problems

    def summary(self) -> str:
        """One line per problem kind, e.g. for a CLI warning."""
        counts: dict[str, int] = {}
        for p in self.problems:
            counts[p.kind] = counts.get(p.kind, 0) + 1
        return ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in counts.items())


class _MessageHead(msgspec.Struct):
    role: Any = None
    provider: Any = msgspec.UNSET
    model: Any = msgspec.UNSET


class _EntryHead(msgspec.Struct):
    """The fields of an entry that the index needs; the rest is validated and skipped."""

    type: Any = None
    id: Any = None
    parentId: Any = None
    timestamp: Any = None
    message: _MessageHead | None = None


_index_decoder = msgspec.json.Decoder(_EntryHead)


def _indexed_entry(line: bytes, number: int, head: _EntryHead) -> Entry:
    role = model = None
    message = head.message
    if head.type == "message" and message is not None:
        role = message.role
        if role == "assistant":
            model = {}
            if message.provider is not msgspec.UNSET:
                model["provider"] = message.provider
            if message.model is not msgspec.UNSET:
                model["modelId"] = message.model
    return Entry.indexed(line, number, head.id, head.parentId, head.type, head.timestamp, role, model)


def _is_blank(line: bytes) -> bool:
    stripped = line.strip()
    if not stripped:
        return True
    if stripped.isascii():
        return False
    return not stripped.decode("utf-8", errors="replace").strip(jsjson.JS_WHITESPACE)


class _Builder:
    """Turns numbered lines into a header and entries, recording problems."""

    def __init__(self, source: str, strict: bool, keep_all: bool) -> None:
        self.source = source
        self.strict = strict
        self.keep_all = keep_all
        self.report = LoadReport(source)
        self.header: dict[str, Any] | None = None
        self.entries: list[Entry] = []
        self.objects: list[dict[str, Any]] | None = None  # kept when migration needs them
        self.bom = False  # line 1 was a byte order mark before JSON (and so damaged)

    def damaged(self, number: int, reason: str) -> None:
        if self.strict:
            raise DamagedLineError(self.source, number, reason)
        self.report.found.append(Problem("damaged-line", reason, line=number))

    def feed(self, number: int, line: bytes) -> None:
        if not line.startswith(b"{") and _is_blank(line):
            return
        if not self.keep_all and self.header is not None and self.objects is None:
            # A line of a large file: validate it and read only what the index needs.
            try:
                head = _index_decoder.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                pass  # parsed in full below (odd but valid JSON), or reported as damaged
            else:
                if head.type != "session":
                    self.entries.append(_indexed_entry(line, number, head))
                    return
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            try:
                obj = jsjson.loads(line)  # what orjson refuses but JavaScript accepts, or a damaged line
            except jsjson.JSONParseError as exc:
                self.bom = self.bom or (number == 1 and line.startswith(BOM))
                self.damaged(number, _describe_bad_json(line, str(exc)))
                return
        if not isinstance(obj, dict):
            self.damaged(number, f"a JSON {_js_type(obj)}, not an entry object")
            return
        if self.header is None:
            if obj.get("type") != "session" or not isinstance(obj.get("id"), str):
                raise NotASessionError(
                    self.source,
                    BOM_HEADER if self.bom else f"line {number} is not a session header (expected "
                    '{"type":"session","id":...}); is this a Pi session file?',
                )
            self.header = obj
            if header_version(obj) < CURRENT_VERSION:
                self.objects = [obj]
            return
        if obj.get("type") == "session":
            self.report.found.append(
                Problem("extra-header", "a second session header (ignored)", line=number)
            )
            if self.objects is not None:
                self.objects.append(obj)
            return
        if self.objects is not None:
            self.objects.append(obj)
            self.entries.append(Entry(obj, bytes(line), number))
            return
        self.entries.append(Entry(obj, line, number))

    def finish(self) -> tuple[dict[str, Any], list[Entry], LoadReport]:
        if self.header is None:
            what = "is empty" if not self.report.found else "has no parseable session header"
            raise NotASessionError(self.source, BOM_HEADER if self.bom else f"{what}; not a Pi session file")
        if self.objects is not None:
            renamed = {id(e) for e in self.entries if e.role == "hookMessage"}
            version = self.report.migrated_from = migrate(self.objects)
            for entry in self.entries:
                # Changed entries serialize from their migrated form; the others keep their bytes.
                if version is not None and (version < 2 or id(entry) in renamed):
                    entry.replace_data(entry.data)
        return self.header, self.entries, self.report


def _js_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array"


def _describe_bad_json(line: bytes, reason: str) -> str:
    if line.startswith(BOM):
        return "a UTF-8 byte order mark (BOM) before the JSON, which Pi does not read (line skipped)"
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid UTF-8 that breaks the JSON (line skipped)"
    if line.lstrip().startswith(b"{") and not line.rstrip().endswith(b"}"):
        return "truncated JSON (line skipped; an interrupted write?)"
    return f"malformed JSON: {reason} (line skipped)"


def load(path: str | os.PathLike[str], *, strict: bool = False,
         progress: Progress = None, wait_for_last_line: bool = False) -> Session:
    """Load a session file (read-only).

    ``progress`` (:mod:`pikit._progress`): by default a bar in a notebook for a file of 32 MB or
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


def _too_long(size: int) -> str:
    return (f"a line of {size:,} bytes, longer than the {MAX_LINE_BYTES // (1024 * 1024)} MiB limit "
            "(line skipped)")


def _load_from(handle: Any, source: str, strict: bool, progress: Progress,
               wait_for_last_line: bool = False) -> Session:
    from .._tree.sessiontree import Session
    from .tail import mark_at

    with handle, contextlib.ExitStack() as stack:
        try:
            stat = os.fstat(handle.fileno())
            total, mtime_ns = stat.st_size, stat.st_mtime_ns
        except OSError:
            total, mtime_ns = 0, None
        builder = _Builder(source, strict, keep_all=total < _KEEP_ALL_BELOW)
        callback = stack.enter_context(reporting(progress, f"loading {os.path.basename(source)}", total, BYTES))
        # The unfinished line is kept as pieces (joined once, when its newline arrives), and
        # only up to MAX_LINE_BYTES of it: beyond that its bytes are only counted.
        pending: list[bytes] = []
        pending_size = 0
        number = 0
        done = 0
        feed = builder.feed
        limit = MAX_LINE_BYTES
        while True:
            try:
                chunk = handle.read(CHUNK_SIZE)
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
                    builder.damaged(number, _too_long(pending_size + len(first)))
                else:
                    feed(number, b"".join((*pending, first)) if pending else first)
                for line in itertools.islice(lines, 1, None):
                    number += 1
                    if len(line) > limit:
                        builder.damaged(number, _too_long(len(line)))
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
                builder.damaged(number, _too_long(pending_size))
            else:
                report.unfinished = b"".join(pending)
                feed(number, report.unfinished)
        builder.report.bytes = done
        builder.report.lines = number
        builder.report.mtime_ns = mtime_ns
    header, entries, report = builder.finish()
    session = Session(header, entries, path=source, report=report)
    session._strict = strict
    return session


def loads(text: str | bytes | Iterable[str | bytes], *, source: str = "<string>",
          strict: bool = False) -> Session:
    """Load a session from its text, its bytes or an iterable of lines."""
    from .._tree.sessiontree import Session

    builder = _Builder(source, strict, keep_all=True)
    items = [text] if isinstance(text, str | bytes) else text
    number = 0
    for item in items:
        data = item.encode("utf-8", "surrogatepass") if isinstance(item, str) else item
        # Each item is one or more lines; a final newline ends the last line.
        for line in (data[:-1] if data.endswith(b"\n") else data).split(b"\n"):
            number += 1
            builder.feed(number, line)
    builder.report.lines = number
    header, entries, report = builder.finish()
    return Session(header, entries, path=None, report=report)
