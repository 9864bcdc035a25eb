"""From numbered lines to a header and entries: what a damaged line costs, and what is kept.

A damaged line (malformed JSON, invalid UTF-8 that breaks the JSON, a value that is not
an object, a line longer than ``MAX_LINE_BYTES``) costs that line
only and is reported with its line number; ``strict=True`` raises instead. Below
:data:`KEEP_ALL_BELOW` bytes every entry is kept parsed; in a larger file only the fields the
index needs are read, and the rest is parsed when first used.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import orjson

from .. import jsjson
from ..errors import DamagedLineError, NotASessionError
from .entry import Entry
from .migration import CURRENT_VERSION, header_version, migrate

if TYPE_CHECKING:
    from .tail import FileMark

__all__ = ["BOM", "BOM_HEADER", "EntryBuilder", "LoadReport", "Problem"]

#: UTF-8's byte order mark: Pi's ``JSON.parse`` refuses a line that starts with it.
BOM = b"\xef\xbb\xbf"
#: Why a file whose first line starts with :data:`BOM` is not a session.
BOM_HEADER = ("line 1 is not a session header: it starts with a UTF-8 byte order mark (BOM), which Pi does not read "
               "either; save the file as UTF-8 without a BOM")


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
    #: Whether a refresh keeps the entries it reads parsed (decided on the first refresh:
    #: a file past ``KEEP_ALL_BELOW`` keeps only what the index needs, as loading does).
    keeps_parsed: bool | None = field(default=None, repr=False)
    #: The title of an oh-my-pi file: its first line, a fixed-width ``{"type":"title"}`` slot
    #: before the header, else the header's ``title`` (``None`` for Pi's own files).
    title: str | None = None
    #: Whether the session is a redacted copy held in memory (:func:`pikit.redact`): it is never
    #: refreshed, since what its source's file gains is not redacted.
    redacted: bool = field(default=False, repr=False)

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


class EntryBuilder:
    """Turns numbered lines into a header and entries, recording problems.

    Loading feeds it a file's lines; a refresh feeds it the lines appended since (its
    ``header`` set to the session's). :meth:`damaged` records a line that was skipped
    (raised with ``strict``), :meth:`feed` reads one line, :meth:`finish` gives the header,
    the entries and the report, the old formats migrated.
    """

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
        """Record line ``number`` as skipped for ``reason`` (raise :class:`DamagedLineError` when strict)."""
        if self.strict:
            raise DamagedLineError(self.source, number, reason)
        self.report.found.append(Problem("damaged-line", reason, line=number))

    def feed(self, number: int, line: bytes) -> None:
        """Read line ``number`` (without its newline): the header, an entry, or a problem."""
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
            if number == 1 and obj.get("type") == "title":  # oh-my-pi's title slot, then Pi's header
                self.report.title = _text(obj.get("title"))
                return
            if obj.get("type") != "session" or not isinstance(obj.get("id"), str):
                raise NotASessionError(
                    self.source,
                    BOM_HEADER if self.bom else f"line {number} is not a session header (expected "
                    '{"type":"session","id":...}); is this a Pi session file?',
                )
            self.header = obj
            self.report.title = self.report.title or _text(obj.get("title"))
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
        """The header, the entries and the report (:class:`NotASessionError` without a header)."""
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


def _text(value: Any) -> str | None:
    """A title as given, or ``None`` when it is not a string with something in it."""
    return value.strip(jsjson.JS_WHITESPACE) or None if isinstance(value, str) else None


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
