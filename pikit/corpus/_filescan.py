"""One file's scan, as a worker runs it: read what is new, continue its state, derive its rows as packed columns.

:func:`scan_file` never raises for a bad file: an unreadable, vanished or non-regular file
is a ``problems`` row. It runs in a worker process (local or Dask) as well as in the
calling process, without numpy; everything it returns pickles cheaply (``array.array``
columns as their bytes, lists of plain values, the deflated state).
"""

from __future__ import annotations

import contextlib
import gc
import operator
import os
import stat
import zlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain, count, repeat
from typing import Any

import msgspec

from .._format.reading import open_regular
from .._format.tail import FileMark, mark_at, read_appended
from ..errors import SessionFileError
from ._derive import FileInfo, Rows, derive
from ._discover import is_url, project_of
from ._scan import FileState, Message, feed, feed_usage, new_state
from ._schema import TABLES

__all__ = ["COMPUTED_COLUMNS", "EXTRA_COLUMNS", "MESSAGE_COLUMNS", "Columns", "FileResult", "pack", "scan_file",
           "scan_in_worker", "start_worker", "stored_columns", "to_numpy", "unchanged"]

# Columns the index keeps besides the declared ones (message identity across files, copies).
EXTRA_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "messages": (("usage_key", "string"), ("copied", "boolean")),
}
# Stored columns the index computes as it inserts a batch (SQL over the batch's columns, named in braces):
# a message's identity across files is its timestamp and id (an entry without a string id: timestamp and
# totalTokens), for the messages @ccusage/pi would count.
COMPUTED_COLUMNS: dict[str, dict[str, str]] = {
    "messages": {"usage_key": "CASE WHEN CAST({countable} AS BOOLEAN) THEN CAST({timestamp} AS VARCHAR) || CASE "
                              "WHEN {entry_id} IS NULL THEN ':' || CAST(CAST({total_tokens} AS BIGINT) AS VARCHAR) "
                              "ELSE '#' || CAST({entry_id} AS VARCHAR) END END"},
}
# What a stored state's messages are rebuilt from (``messages_raw``, in entry order).
MESSAGE_COLUMNS = ("entry_index", "role", "provider", "model", "estimate", "input_tokens", "output_tokens",
                   "cache_read_tokens", "cache_write_tokens", "total_tokens", "cost", "countable")
# Columns of a table the index does not store per row (the view adds them from ``files`` and ``sessions``).
_JOINED = {"messages": ("session_id", "path")}
_TYPECODES = {"Int64": "q", "Float64": "d", "boolean": "b"}
_NUMPY = {"q": "int64", "d": "float64", "b": "bool"}
# The values a column of numbers or booleans with missing ones holds as a masked array (others stay objects).
_NULLABLE: dict[str, set[type]] = {"q": {int, type(None)}, "d": {float, int, type(None)}, "b": {bool, type(None)}}
_WORKER_NICENESS = 5
_WHOLE_READ_BYTES = 64 * 1024 * 1024  # files up to this size are read in one go; larger ones in steps
_state_encoder = msgspec.msgpack.Encoder()
_state_decoder = msgspec.msgpack.Decoder(FileState)


@dataclass
class FileResult:
    """One file's scan: its tables (plain columns), and what the index stores to continue it later."""

    path: str
    file_id: int
    tables: dict[str, Columns] = field(default_factory=dict)  # table name → its rows ("texts" included)
    mark: FileMark | None = None
    state: bytes | None = None
    seen: tuple[int, int, int] | None = None  # size, mtime_ns, inode when it was read
    whole: bool = True
    bytes_read: int = 0
    unchanged: bool = False
    usage_only: bool = False  # its rows are those of a usage report alone (the file waits for a full read)

    @property
    def rows(self) -> int:
        """Rows of the largest table (what the writer batches by)."""
        return max((t.num_rows for t in self.tables.values()), default=0)


def stored_columns(table: str) -> list[tuple[str, str]]:
    """(name, dtype) of the columns the index stores for ``table``: ``file_id`` first, extras last."""
    joined = _JOINED.get(table, ())
    return [("file_id", "Int64"), *((c, d) for c, d, _ in TABLES[table] if c not in joined),
            *EXTRA_COLUMNS.get(table, ())]


@dataclass(frozen=True)
class Columns:
    """A table's rows, column by column: ``array.array`` where typed and complete, else a list.

    Typed columns pickle as their bytes and become numpy arrays without a copy (:func:`to_numpy`);
    a worker process builds them without importing numpy.
    """

    names: list[str]
    dtypes: list[str]
    values: list[Any]

    @property
    def num_rows(self) -> int:
        return len(self.values[0]) if self.values else 0


def _columns(rows: Rows, texts: list[list[Any]], file_id: int) -> dict[str, Columns]:
    out: dict[str, Columns] = {}
    for table in TABLES:
        computed = COMPUTED_COLUMNS.get(table, {})
        columns = [(c, d) for c, d in stored_columns(table) if c not in computed]
        value = getattr(rows, table, None)  # (the evaluations are not the scan's: see _evaluated.evaluate)
        if not value:
            continue
        if isinstance(value, dict):
            data = [value[name] for name, _ in columns]
        else:
            every = [("file_id", "Int64"), *((c, d) for c, d, _ in TABLES[table]), *EXTRA_COLUMNS.get(table, ())]
            transposed = dict(zip((c for c, _ in every), zip(*value, strict=True), strict=True))
            data = [transposed[name] for name, _ in columns]
        out[table] = Columns([c for c, _ in columns], [d for _, d in columns],
                             [pack(column, dtype) for column, (_, dtype) in zip(data, columns, strict=True)])
    if texts:  # what a search looks through: one row per entry and kind of text (see _searchtext)
        entries, kinds, values = zip(*texts, strict=True)
        out["texts"] = Columns(["file_id", "entry_index", "kind", "text"], ["Int64", "Int64", "string", "string"],
                               [pack([file_id] * len(texts), "Int64"), pack(entries, "Int64"), list(kinds),
                                list(values)])
    return out


def pack(column: Sequence[Any], dtype: str) -> Any:
    """A column as an ``array.array`` when its dtype is numeric or boolean and it has no None, else a list."""
    code = _TYPECODES.get(dtype)
    if code is not None and None not in column:
        with contextlib.suppress(TypeError, OverflowError):  # (a float among integers, say: kept as values)
            return array(code, column)
    return column if isinstance(column, list) else list(column)


def to_numpy(np: Any, parts: list[Any], dtype: str | None = None) -> Any:
    """One column of several packed parts as a numpy array DuckDB reads as is.

    A column of ``dtype`` numbers or booleans with missing values is a masked array: as Python
    objects, DuckDB would type it by a sample of its values (a count beyond 2**31 after a
    thousand small ones would not fit the type it chose).
    """
    first = parts[0]
    if all(isinstance(part, array) and part.typecode == first.typecode for part in parts):
        joined = first if len(parts) == 1 else array(first.typecode, b"".join(parts))
        return np.frombuffer(joined, dtype=_NUMPY[first.typecode])  # (no copy)
    values = np.empty(sum(map(len, parts)), dtype=object)  # (np.array would make a list of lists two-dimensional)
    values[:] = parts[0] if len(parts) == 1 else list(chain.from_iterable(parts))
    code = _TYPECODES.get(dtype or "")
    if code is not None and set(map(type, values)) <= _NULLABLE[code]:
        missing = np.fromiter(map(operator.is_, values, repeat(None)), dtype=bool, count=len(values))
        values[missing] = 0
        with contextlib.suppress(OverflowError):  # (a whole number beyond int64: kept as values)
            return np.ma.masked_array(values.astype(_NUMPY[code]), mask=missing)
        values[missing] = None
    return values


def _problem(path: str, file_id: int, kind: str, message: str) -> FileResult:
    rows = Rows([], {}, [], [], [], [(file_id, path, None, kind, message)])
    return FileResult(path, file_id, _columns(rows, [], file_id))


def start_worker() -> None:
    """Prepare a pool worker (a process pikit started for its scan): a lower priority than the process
    writing the index (the one all wait for), and no cyclic garbage collector running while it reads:
    a file's objects hold no cycles, and the collector would only traverse them again and again (a
    tenth of a worker's time). :func:`scan_in_worker` collects between files now and then."""
    with contextlib.suppress(OSError):  # (not allowed here: run as is)
        os.nice(_WORKER_NICENESS)
    gc.disable()


_jobs = count(1)  # the files this worker was given
_COLLECT_EVERY = 64  # files a worker reads between two collections (of garbage that should not exist)


def scan_in_worker(*job: Any) -> FileResult:
    """:func:`scan_file` in a pool worker prepared by :func:`start_worker`."""
    if next(_jobs) % _COLLECT_EVERY == 0:
        gc.collect()
    return scan_file(*job)


def unchanged(path: str, mark: FileMark | None, seen: tuple[int, int, int] | None) -> bool:
    """Whether the file still has the size, modification time and inode it had when last read (``seen``)."""
    if mark is None or seen is None:
        return False
    if is_url(path):
        return _remote_unchanged(path, mark)
    try:
        status = os.stat(path)
    except OSError:
        return False
    return (status.st_size, status.st_mtime_ns, status.st_ino) == tuple(seen)


def scan_file(path: str, file_id: int, mark: FileMark | None = None, state_blob: bytes | None = None,
              seen: tuple[int, int, int] | None = None, messages: Sequence[tuple[Any, ...]] = (),
              usage_only: bool = False) -> FileResult:
    """Scan one file from ``mark`` (with its stored state, how it looked then, ``seen``, and its rows of
    ``messages_raw``: see ``messages``), or whole.

    ``usage_only``: a file read whole is read for usage alone (``feed_usage``);
    a stored state is continued the way it was read.
    """
    if is_url(path):
        return _scan_url(path, file_id, mark, state_blob)
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return _problem(path, file_id, "vanished", "the file disappeared before it could be read")
    except OSError as exc:
        return _problem(path, file_id, "unreadable", f"cannot be examined ({exc.strerror or exc})")
    if not stat.S_ISREG(status.st_mode):
        return _problem(path, file_id, "unreadable", "not a regular file")
    if state_blob is not None and unchanged(path, mark, seen):
        return FileResult(path, file_id, mark=mark, state=state_blob, seen=seen, whole=False, unchanged=True)
    state = _decode_state(state_blob, messages) if mark is not None and state_blob is not None else None
    if state is None:  # (none stored, or it does not decode: the file is read whole)
        mark = None
    try:
        if state is None and status.st_size <= _WHOLE_READ_BYTES:
            state, new_mark, pending, whole, read = _read_whole(path, usage_only)
        else:
            state, new_mark, pending, whole, read = _read(path, mark or FileMark(), state, usage_only)
    except FileNotFoundError:
        return _problem(path, file_id, "vanished", "the file disappeared while it was read")
    except (OSError, SessionFileError) as exc:
        return _problem(path, file_id, "unreadable", str(getattr(exc, "strerror", None) or exc))
    return _finish(path, file_id, state, new_mark, pending, whole, read,
                   (status.st_size, status.st_mtime_ns, status.st_ino))


def _finish(path: str, file_id: int, state: FileState, mark: FileMark, pending: int, whole: bool,
            read: int, seen: tuple[int, int, int]) -> FileResult:
    size = mark.offset + pending
    info = FileInfo(file_id, path, project_of(path), size, (mark.mtime_ns or 0) // 1_000_000)
    rows = derive(state, info, pending)
    tables = _columns(rows, state.texts, file_id)
    state.texts = []
    return FileResult(path, file_id, tables, mark, _encode_state(state), seen, whole, read,
                      usage_only=state.usage_only)


def _encode_state(state: FileState) -> bytes | None:
    """The stored form of a state: msgpack, deflated, without its messages (the index has them: ``messages_raw``).
    None where msgpack cannot hold it (an id that is an integer wider than 64 bits): with no state stored, the
    next scan reads the file whole again."""
    try:
        return zlib.compress(_state_encoder.encode(msgspec.structs.replace(state, messages=[])), 1)
    except OverflowError:
        return None


def _decode_state(blob: bytes, messages: Sequence[tuple[Any, ...]]) -> FileState | None:
    """A stored state with its messages again, from their rows in the index (:data:`MESSAGE_COLUMNS`); None
    when it does not decode."""
    try:
        state = _state_decoder.decode(zlib.decompress(blob))
    except (zlib.error, msgspec.DecodeError):  # (ValidationError included)
        return None
    state.messages = [Message(entry, role, provider, model, estimate,
                              None if usage[0] is None else list(usage), countable)
                      for entry, role, provider, model, estimate, *usage, countable in messages]
    return state


def _complete_lines(data: bytes) -> tuple[list[memoryview], int]:
    """The complete lines of ``data`` (views of it: nothing is copied) and the offset after the last one."""
    view, find, lines, start = memoryview(data), data.find, [], 0
    while (end := find(b"\n", start)) >= 0:
        lines.append(view[start:end])
        start = end + 1
    return lines, start


def _feed(state: FileState, lines: Sequence[Any], first_line: int) -> FileState:
    return (feed_usage if state.usage_only else feed)(state, lines, first_line)


def _read_whole(path: str, usage_only: bool) -> tuple[FileState, FileMark, int, bool, int]:
    """A file not indexed yet, in one read: the complete lines, the mark after the last one."""
    with open_regular(path) as handle:
        data = handle.read()
        lines, end = _complete_lines(data)
        state = _feed(new_state(path, usage_only=usage_only), lines, 1)
        state.offset = end
        return state, mark_at(handle, end, len(lines)), len(data) - end, True, end


def _read(path: str, start: FileMark, state: FileState | None,
          usage_only: bool) -> tuple[FileState, FileMark, int, bool, int]:
    """From ``start`` with ``state`` (whole again when the file was rewritten), in bounded steps."""
    whole = state is None
    state = state or new_state(path, usage_only=usage_only)
    mark, read, pending = start, 0, 0
    while True:
        got = read_appended(path, mark)
        if got.rewritten is not None:
            if whole:
                raise SessionFileError(path, f"changed while it was read ({got.rewritten})")
            state, mark, whole, read = new_state(path, usage_only=usage_only), FileMark(), True, 0
            continue
        if got.lines:
            _feed(state, got.lines, got.first_line)
            read += got.mark.offset - mark.offset
        mark, pending = got.mark, got.pending
        state.offset = mark.offset
        if not got.more:
            return state, mark, pending, whole, read


# ------------------------------------------------------------------------------ fsspec URLs
def _scan_url(url: str, file_id: int, mark: FileMark | None, state_blob: bytes | None) -> FileResult:
    """A file that fsspec serves, read whole when it changed (stores do not append in place)."""
    import fsspec

    try:
        fs, path = fsspec.core.url_to_fs(url)
        info = fs.info(path)
        size, stamp = int(info.get("size") or 0), _remote_stamp(info)
        if mark is not None and state_blob is not None and (size, stamp) == (mark.size, mark.mtime_ns):
            return FileResult(url, file_id, mark=mark, state=state_blob, seen=(size, stamp, 0), whole=False,
                              unchanged=True)
        data = fs.cat_file(path)
    except FileNotFoundError:
        return _problem(url, file_id, "vanished", "the file disappeared before it could be read")
    except OSError as exc:
        return _problem(url, file_id, "unreadable", f"cannot be read ({exc})")
    lines, end = _complete_lines(data)
    state = feed(new_state(url), lines, 1)
    state.offset = end
    new_mark = FileMark(end, len(lines), None, None, None, None, size, stamp)
    return _finish(url, file_id, state, new_mark, len(data) - end, True, len(data), (size, stamp, 0))


def _remote_stamp(info: dict[str, Any]) -> int:
    """A number that changes when a stored object changes (modification time in ns, or from its ETag)."""
    for key in ("mtime", "LastModified", "last_modified", "updated", "created"):
        value = info.get(key)
        if isinstance(value, int | float):
            return int(value * 1_000_000_000)
        if value is not None and hasattr(value, "timestamp"):
            return int(value.timestamp() * 1_000_000_000)
    etag = str(info.get("ETag") or info.get("etag") or "")
    return int.from_bytes(etag.encode()[:7].ljust(7, b"\0"), "big") if etag else 0


def _remote_unchanged(url: str, mark: FileMark) -> bool:
    import fsspec

    try:
        fs, path = fsspec.core.url_to_fs(url)
        info = fs.info(path)
    except OSError:
        return False
    return (int(info.get("size") or 0), _remote_stamp(info)) == (mark.size, mark.mtime_ns)

