"""Reading session files: streaming, tolerant of damage, never writing.

A damaged line (malformed JSON, invalid UTF-8 that breaks the JSON, a value that is not
an object) costs that line only and is reported with its line number; ``strict=True``
raises instead. Lines are split on ``\\n`` only (U+2028 inside strings is text), so CRLF
files load too. The file is opened read-only and never modified, not even to repair a
truncated last line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import jsjson
from .entry import Entry
from .errors import DamagedLineError, NotASessionError, SessionFileError
from .migration import CURRENT_VERSION, header_version, migrate

if TYPE_CHECKING:
    from .session import Session

__all__ = ["LoadReport", "Problem", "load", "loads"]

CHUNK_SIZE = 8 * 1024 * 1024
_BAR_MIN_BYTES = 32 * 1024 * 1024
# Lines longer than this keep only their index after loading a large file (parsed again on demand).
_KEEP_LINE_BYTES = 2048
_KEEP_ALL_BELOW = 16 * 1024 * 1024

ProgressCallback = Callable[[int, int], None]


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
    problems: list[Problem] = field(default_factory=list)
    migrated_from: int | None = None

    @property
    def damaged_lines(self) -> list[Problem]:
        """Lines that were skipped."""
        return [p for p in self.problems if p.kind == "damaged-line"]

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

    def damaged(self, number: int, reason: str) -> None:
        if self.strict:
            raise DamagedLineError(self.source, number, reason)
        self.report.problems.append(Problem("damaged-line", reason, line=number))

    def feed(self, number: int, line: bytes) -> None:
        self.report.lines = number
        if _is_blank(line):
            return
        try:
            obj = jsjson.loads(line)
        except jsjson.JSONParseError as exc:
            self.damaged(number, _describe_bad_json(line, str(exc)))
            return
        if not isinstance(obj, dict):
            self.damaged(number, f"a JSON {_js_type(obj)}, not an entry object")
            return
        if self.header is None:
            if obj.get("type") != "session" or not isinstance(obj.get("id"), str):
                raise NotASessionError(
                    self.source,
                    f"line {number} is not a session header (expected "
                    '{"type":"session","id":...}); is this a Pi session file?',
                )
            self.header = obj
            if header_version(obj) < CURRENT_VERSION:
                self.objects = [obj]
            return
        if obj.get("type") == "session":
            self.report.problems.append(
                Problem("extra-header", "a second session header (ignored)", line=number)
            )
            if self.objects is not None:
                self.objects.append(obj)
            return
        if self.objects is not None:
            self.objects.append(obj)
            self.entries.append(Entry(obj, bytes(line), number))
            return
        keep = self.keep_all or len(line) <= _KEEP_LINE_BYTES
        self.entries.append(Entry(obj, bytes(line), number, keep=keep))

    def finish(self) -> tuple[dict[str, Any], list[Entry], LoadReport]:
        if self.header is None:
            what = "is empty" if not self.report.problems else "has no parseable session header"
            raise NotASessionError(self.source, f"{what}; not a Pi session file")
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
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid UTF-8 that breaks the JSON (line skipped)"
    if line.lstrip().startswith(b"{") and not line.rstrip().endswith(b"}"):
        return "truncated JSON (line skipped; an interrupted write?)"
    return f"malformed JSON: {reason} (line skipped)"


def _progress_bar(total: int, name: str) -> tuple[ProgressCallback, Callable[[], None]]:
    """A tqdm bar (notebook-aware) when tqdm is installed, else a line on stderr."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        import sys

        def line(done: int, total: int) -> None:
            sys.stderr.write(f"\rloading {name}: {done / 1e6:,.0f} / {total / 1e6:,.0f} MB")

        def end() -> None:
            sys.stderr.write("\n")

        return line, end
    bar = tqdm(total=total, unit="B", unit_scale=True, desc=f"loading {name}", leave=False)

    def update(done: int, total: int) -> None:
        bar.update(done - bar.n)

    return update, bar.close


def load(path: str | os.PathLike[str], *, strict: bool = False,
         progress: ProgressCallback | bool | None = None) -> Session:
    """Load a session file (read-only).

    ``progress`` is a callback ``(done_bytes, total_bytes)`` called after each chunk, or
    ``True`` for a progress bar on files of 32 MB and more (tqdm in notebooks).
    Raises :class:`SessionFileError` for a missing or unreadable file and
    :class:`NotASessionError` when the file does not start with a session header.
    """
    from .session import Session

    source = os.fspath(path)
    try:
        handle = open(source, "rb")  # noqa: SIM115 - closed below, streamed in chunks
    except FileNotFoundError:
        raise SessionFileError(source, "no such file; check the path") from None
    except IsADirectoryError:
        raise SessionFileError(source, "is a directory, not a session file") from None
    except OSError as exc:
        raise SessionFileError(source, f"cannot be read ({exc.strerror or exc})") from None
    with handle:
        try:
            total = os.fstat(handle.fileno()).st_size
        except OSError:
            total = 0
        builder = _Builder(source, strict, keep_all=total < _KEEP_ALL_BELOW)
        close: Callable[[], None] | None = None
        callback: ProgressCallback | None = None
        if progress is True and total >= _BAR_MIN_BYTES:
            callback, close = _progress_bar(total, os.path.basename(source))
        elif callable(progress):
            callback = progress
        pending = b""
        number = 0
        done = 0
        while True:
            chunk = handle.read(CHUNK_SIZE)
            if not chunk:
                break
            done += len(chunk)
            data = pending + chunk if pending else chunk
            start = 0
            find = data.find
            feed = builder.feed
            while True:
                end = find(b"\n", start)
                if end < 0:
                    break
                number += 1
                feed(number, data[start:end])
                start = end + 1
            pending = data[start:]
            if callback is not None:
                callback(done, total)
        if pending:
            number += 1
            builder.feed(number, pending)
        builder.report.bytes = done
        if close is not None:
            close()
    header, entries, report = builder.finish()
    return Session(header, entries, path=source, report=report)


def loads(text: str | bytes | Iterable[str | bytes], *, source: str = "<string>",
          strict: bool = False) -> Session:
    """Load a session from its text, its bytes or an iterable of lines."""
    from .session import Session

    builder = _Builder(source, strict, keep_all=True)
    if isinstance(text, str | bytes):
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        for number, line in jsjson.iter_lines(data):
            builder.feed(number, line)
    else:
        number = 0
        for item in text:
            data = item.encode("utf-8", "surrogatepass") if isinstance(item, str) else item
            if data.endswith(b"\n"):
                data = data[:-1]
            for line in data.split(b"\n"):
                number += 1
                builder.feed(number, line)
    header, entries, report = builder.finish()
    return Session(header, entries, path=None, report=report)
