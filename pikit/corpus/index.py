"""The corpus index: an embedded DuckDB database kept in step with the files, incrementally.

Per file the index keeps its :class:`~pikit.tail.FileMark` (position after the last complete
line, identity digests) and its :class:`~pikit.corpus.scan.FileState`. A scan then reads:

* a new file, whole;
* a file that only grew, from its mark: the appended complete lines only (a line still being
  written waits for the next scan, so an entry is never read torn);
* a file that shrank, was replaced or changed before its mark, whole again;
* nothing of a file whose size and modification time are unchanged.

The rows of a file that changed are derived again from its state and replace the old ones;
the rows of a file that disappeared are removed. Problems (unreadable, vanished, damaged,
not a session) are rows of the ``problems`` table; none of them stops a scan.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from ..errors import PikitError, SessionFileError
from ..tail import FileMark, read_appended
from .derive import FileInfo, Rows, derive
from .discover import find_files, is_url, order_key, project_of
from .scan import FileState, feed, new_state
from .schema import DUCKDB_TYPES, TABLES, create_sql

__all__ = ["FileResult", "Index", "ScanReport", "scan_file"]

SCHEMA_VERSION = "1"
_EXTRA_MESSAGE_COLUMNS = (("usage_key", "string"), ("copied", "boolean"))
_FLUSH_ROWS = 50_000
_state_encoder = msgspec.msgpack.Encoder()
_state_decoder = msgspec.msgpack.Decoder(FileState)
_TABLE_NAMES = ("sessions", "messages", "compactions", "branches", "summary_calls", "problems")


@dataclass
class ScanReport:
    """What a scan did."""

    files: int = 0
    read_whole: int = 0
    read_appended: int = 0
    unchanged: int = 0
    removed: int = 0
    bytes_read: int = 0
    problems: int = 0

    def __str__(self) -> str:
        return (f"{self.files:,} files: {self.read_whole:,} read whole, {self.read_appended:,} appended to, "
                f"{self.unchanged:,} unchanged, {self.removed:,} gone; {self.bytes_read / 1e6:,.1f} MB read")


@dataclass
class FileResult:
    """One file's scan: its rows, texts, and what to store to continue it later."""

    path: str
    file_id: int
    rows: Rows
    texts: list[tuple[Any, ...]]
    mark: FileMark | None
    state: bytes | None
    size: int
    mtime_ns: int
    whole: bool
    bytes_read: int
    unchanged: bool = False


def _vanished(path: str, file_id: int, kind: str, message: str) -> FileResult:
    rows = Rows([], [], [], [], [], [(file_id, path, None, kind, message)])
    return FileResult(path, file_id, rows, [], None, None, 0, 0, True, 0)


def scan_file(path: str, file_id: int, mark: FileMark | None = None, state_blob: bytes | None = None) -> FileResult:
    """Scan one file from ``mark`` (with its stored state), or whole; never raises for a bad file."""
    if is_url(path):
        return scan_url(path, file_id, mark, state_blob)
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return _vanished(path, file_id, "vanished", "the file disappeared before it could be read")
    except OSError as exc:
        return _vanished(path, file_id, "unreadable", f"cannot be examined ({exc.strerror or exc})")
    if not stat.S_ISREG(status.st_mode):
        return _vanished(path, file_id, "unreadable", "not a regular file")
    if mark is not None and state_blob is not None and status.st_size == mark.size \
            and status.st_mtime_ns == mark.mtime_ns and status.st_ino == mark.inode:
        return FileResult(path, file_id, Rows([], [], [], [], [], []), [], mark, state_blob, status.st_size,
                          status.st_mtime_ns, False, 0, unchanged=True)
    state = _state_decoder.decode(state_blob) if mark is not None and state_blob is not None else None
    start = mark if state is not None and mark is not None else FileMark()
    try:
        result = _read(path, start, state)
    except FileNotFoundError:
        return _vanished(path, file_id, "vanished", "the file disappeared while it was read")
    except (OSError, SessionFileError) as exc:
        return _vanished(path, file_id, "unreadable", str(getattr(exc, "strerror", None) or exc))
    state, new_mark, pending, whole, read = result
    info = FileInfo(file_id, path, project_of(path), new_mark.size, new_mark.mtime_ns // 1_000_000
                    if new_mark.mtime_ns else 0)
    rows = derive(state, info, pending)
    texts = [(file_id, entry, role, text) for entry, role, text in state.texts]
    state.texts = []
    return FileResult(path, file_id, rows, texts, new_mark, _state_encoder.encode(state), new_mark.size,
                      new_mark.mtime_ns or 0, whole, read)


def _read(path: str, start: FileMark, state: FileState | None) -> tuple[FileState, FileMark, int, bool, int]:
    whole = state is None
    state = state or new_state(path)
    mark, read, pending = start, 0, 0
    while True:
        got = read_appended(path, mark)
        if got.rewritten is not None:
            if whole:
                raise SessionFileError(path, f"changed while it was read ({got.rewritten})")
            state, mark, whole, read = new_state(path), FileMark(), True, 0
            continue
        if got.lines:
            feed(state, got.lines, got.first_line)
            read += got.mark.offset - mark.offset
        mark, pending = got.mark, got.pending
        state.offset = mark.offset
        if not got.more:
            return state, mark, pending, whole, read


def _arrow_table(table: str, rows: Sequence[tuple[Any, ...]], extra: Sequence[tuple[str, str]] = ()) -> Any:
    import pyarrow as pa

    # timestamps arrive as text (ISO strings, as in the files) and are cast by DuckDB on insert
    types = {"string": pa.string(), "Int64": pa.int64(), "Float64": pa.float64(), "boolean": pa.bool_(),
             "datetime64[ms, UTC]": pa.string()}
    columns = [("file_id", "Int64"), *((c, d) for c, d, _ in TABLES[table]), *extra]
    values = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    arrays = [pa.array(list(v), type=types[d]) for (_, d), v in zip(columns, values, strict=True)]
    return pa.table(arrays, names=[c for c, _ in columns])


def _insert_columns(table: str, extra: Sequence[tuple[str, str]]) -> str:
    columns = [("file_id", "Int64"), *((c, d) for c, d, _ in TABLES[table]), *extra]
    return ", ".join(f'TRY_CAST("{c}" AS TIMESTAMPTZ)' if d.startswith("datetime") else f'"{c}"' for c, d in columns)


def scan_url(url: str, file_id: int, mark: FileMark | None, state_blob: bytes | None) -> FileResult:
    """Scan a file that fsspec serves (read whole when it changed: stores cannot append in place)."""
    import fsspec

    try:
        fs, path = fsspec.core.url_to_fs(url)
        info = fs.info(path)
        size, stamp = int(info.get("size") or 0), _remote_stamp(info)
        if mark is not None and state_blob is not None and (size, stamp) == (mark.size, mark.mtime_ns):
            return FileResult(url, file_id, Rows([], [], [], [], [], []), [], mark, state_blob, size, stamp, False,
                              0, unchanged=True)
        data = fs.cat_file(path)
    except FileNotFoundError:
        return _vanished(url, file_id, "vanished", "the file disappeared before it could be read")
    except OSError as exc:
        return _vanished(url, file_id, "unreadable", f"cannot be read ({exc})")
    end = data.rfind(b"\n") + 1
    lines = data[:end].split(b"\n")[:-1]
    state = feed(new_state(url), lines, 1)
    new_mark = FileMark(end, len(lines), None, None, None, None, size, stamp)
    rows = derive(state, FileInfo(file_id, url, project_of(url), size, stamp // 1_000_000), len(data) - end)
    texts = [(file_id, entry, role, text) for entry, role, text in state.texts]
    state.texts = []
    return FileResult(url, file_id, rows, texts, new_mark, _state_encoder.encode(state), size, stamp, True, len(data))


def _remote_stamp(info: dict[str, Any]) -> int:
    """A number that changes when a stored object changes (modification time in ns, or a hash of its ETag)."""
    for key in ("mtime", "LastModified", "last_modified", "updated", "created"):
        value = info.get(key)
        if isinstance(value, int | float):
            return int(value * 1_000_000_000)
        if value is not None and hasattr(value, "timestamp"):
            return int(value.timestamp() * 1_000_000_000)
    etag = str(info.get("ETag") or info.get("etag") or "")
    return int.from_bytes(etag.encode()[:7].ljust(7, b"\0"), "big") if etag else 0


def remote_unchanged(url: str, mark: FileMark) -> bool:
    import fsspec

    try:
        fs, path = fsspec.core.url_to_fs(url)
        info = fs.info(path)
    except OSError:
        return False
    return (int(info.get("size") or 0), _remote_stamp(info)) == (mark.size, mark.mtime_ns)


class Index:
    """An open DuckDB index database (``:memory:`` for a throwaway one)."""

    def __init__(self, path: str) -> None:
        import duckdb

        self.path = path
        if path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        try:
            self.con = duckdb.connect(path)
        except duckdb.Error as exc:
            raise PikitError(f"{path}: cannot open the corpus index ({str(exc).splitlines()[0]}); "
                             "is another pikit using it? Pass another --index / index=") from None
        self.con.execute("SET enable_progress_bar = false")
        self._schema()

    def _schema(self) -> None:
        con = self.con
        con.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
        found = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchall()
        if found and found[0][0] != SCHEMA_VERSION:
            for name in ("files", "states", "texts", "messages_raw", *(t for t in _TABLE_NAMES if t != "messages")):
                con.execute(f'DROP TABLE IF EXISTS "{name}"')
            con.execute("DROP VIEW IF EXISTS messages")
        con.execute("CREATE TABLE IF NOT EXISTS files (file_id BIGINT, path VARCHAR, path_order BIGINT)")
        con.execute("CREATE TABLE IF NOT EXISTS states (file_id BIGINT, size BIGINT, mtime_ns BIGINT, mark BLOB, "
                    "state BLOB)")
        con.execute("CREATE TABLE IF NOT EXISTS texts (file_id BIGINT, entry_index BIGINT, role VARCHAR, text VARCHAR)")
        for table in _TABLE_NAMES:
            if table == "messages":
                extra = ", ".join(f'"{c}" {DUCKDB_TYPES[d]}' for c, d in _EXTRA_MESSAGE_COLUMNS)
                con.execute(create_sql("messages", "messages_raw")[:-1] + f", {extra})")
            else:
                con.execute(create_sql(table))
        declared = ", ".join(f'm."{c}"' for c, _, _ in TABLES["messages"] if c != "counted")
        con.execute(f"""CREATE OR REPLACE VIEW messages AS
            SELECT {declared}, m.countable AND row_number() OVER (
                PARTITION BY m.usage_key ORDER BY f.path_order, m.entry_index) = 1 AS counted
            FROM messages_raw m JOIN files f USING (file_id)""")
        con.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", [SCHEMA_VERSION])

    def known(self) -> dict[str, tuple[int, FileMark | None]]:
        """Path → (file id, stored mark) for every file in the index."""
        out: dict[str, tuple[int, FileMark | None]] = {}
        query = "SELECT file_id, path, mark FROM files LEFT JOIN states USING (file_id)"
        for file_id, path, mark in self.con.execute(query).fetchall():
            out[path] = (file_id, msgspec.msgpack.decode(mark, type=FileMark) if mark is not None else None)
        return out

    def state(self, file_id: int) -> bytes | None:
        found = self.con.execute("SELECT state FROM states WHERE file_id = ?", [file_id]).fetchall()
        return found[0][0] if found else None

    def forget(self, file_ids: Iterable[int], *, keep_file: bool = False) -> None:
        ids = list(file_ids)
        if not ids:
            return
        import pyarrow as pa

        self.con.register("_gone", pa.table({"file_id": pa.array(ids, type=pa.int64())}))
        for table in ("messages_raw", "sessions", "compactions", "branches", "summary_calls", "problems", "texts",
                      "states", *(() if keep_file else ("files",))):
            self.con.execute(f'DELETE FROM "{table}" WHERE file_id IN (SELECT file_id FROM _gone)')
        self.con.unregister("_gone")

    def write(self, results: list[FileResult]) -> None:
        """Replace the rows of these files (inside the scan's transaction)."""
        import pyarrow as pa

        con = self.con
        changed = [r for r in results if not r.unchanged]
        self.forget([r.file_id for r in changed], keep_file=True)
        for table in _TABLE_NAMES:
            rows = [row for r in changed for row in getattr(r.rows, table)]
            if not rows:
                continue
            name = "messages_raw" if table == "messages" else table
            extra = _EXTRA_MESSAGE_COLUMNS if table == "messages" else ()
            con.register("_rows", _arrow_table(table, rows, extra))
            con.execute(f'INSERT INTO "{name}" SELECT {_insert_columns(table, extra)} FROM _rows')
            con.unregister("_rows")
        texts = [t for r in changed for t in r.texts]
        if texts:
            cols = list(zip(*texts, strict=True))
            con.register("_texts", pa.table({"file_id": pa.array(cols[0], pa.int64()),
                                             "entry_index": pa.array(cols[1], pa.int64()),
                                             "role": pa.array(cols[2], pa.string()),
                                             "text": pa.array(cols[3], pa.string())}))
            con.execute("INSERT INTO texts SELECT * FROM _texts")
            con.unregister("_texts")
        kept = [r for r in changed if r.state is not None]
        if kept:
            con.register("_states", pa.table({
                "file_id": pa.array([r.file_id for r in kept], pa.int64()),
                "size": pa.array([r.size for r in kept], pa.int64()),
                "mtime_ns": pa.array([r.mtime_ns for r in kept], pa.int64()),
                "mark": pa.array([msgspec.msgpack.encode(r.mark) for r in kept], pa.binary()),
                "state": pa.array([r.state for r in kept], pa.binary())}))
            con.execute("INSERT INTO states SELECT * FROM _states")
            con.unregister("_states")

    def close(self) -> None:
        self.con.close()


ProgressCallback = Callable[[int, int], None]


def plan(index: Index, root: Any) -> tuple[list[tuple[str, int, FileMark | None]], list[tuple[str, str, str]], int]:
    """Register the corpus's files in the index; return (path, file id, mark) to scan, listing problems, removed."""
    found = find_files(root)
    known = index.known()
    wanted = set(found.files)
    gone = [file_id for path, (file_id, _) in known.items() if path not in wanted]
    index.forget(gone)
    next_id = max((file_id for file_id, _ in known.values()), default=0) + 1
    todo: list[tuple[str, int, FileMark | None]] = []
    new_rows = []
    for order, path in enumerate(found.files):
        if path in known:
            file_id, mark = known[path]
        else:
            file_id, mark = next_id, None
            next_id += 1
        new_rows.append((file_id, path, order))
        todo.append((path, file_id, mark))
    import pyarrow as pa

    cols: list[Any] = list(zip(*new_rows, strict=True)) if new_rows else [(), (), ()]
    index.con.register("_files", pa.table({"file_id": pa.array(cols[0], pa.int64()),
                                           "path": pa.array(cols[1], pa.string()),
                                           "path_order": pa.array(cols[2], pa.int64())}))
    index.con.execute("BEGIN")
    index.con.execute("DELETE FROM files")
    index.con.execute("INSERT INTO files SELECT * FROM _files")
    index.con.execute("COMMIT")
    index.con.unregister("_files")
    assert all(order_key(a) <= order_key(b) for a, b in zip(found.files, found.files[1:], strict=False))
    return todo, found.problems, len(gone)


def unchanged(path: str, mark: FileMark | None) -> bool:
    """Whether the file still has the size, modification time and inode it had when ``mark`` was taken."""
    if mark is None:
        return False
    if is_url(path):
        return remote_unchanged(path, mark)
    try:
        status = os.stat(path)
    except OSError:
        return False
    return (status.st_size, status.st_mtime_ns, status.st_ino) == (mark.size, mark.mtime_ns, mark.inode)


def default_workers() -> int:
    """Processes a local scan uses: one per CPU, at most four."""
    return max(1, min(os.cpu_count() or 1, 4))


def _results(index: Index, todo: list[tuple[str, int, FileMark | None]], workers: int) -> Iterator[FileResult]:
    jobs = [(path, file_id, mark, index.state(file_id) if mark is not None else None) for path, file_id, mark in todo]
    if workers <= 1 or len(jobs) < 8:
        for job in jobs:
            yield scan_file(*job)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # forkserver: the workers start from a clean process, not a copy of one holding DuckDB's threads
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
        yield from pool.map(scan_file, *zip(*jobs, strict=True), chunksize=4)


def scan(index: Index, root: Any, progress: ProgressCallback | None = None, workers: int = 1) -> ScanReport:
    """Bring the index in step with the files of ``root``; ``workers`` processes read the changed files."""
    todo, listing, removed = plan(index, root)
    report = ScanReport(files=len(todo), removed=removed)
    changed = [job for job in todo if not unchanged(job[0], job[2])]
    report.unchanged = len(todo) - len(changed)
    index.con.execute("BEGIN")  # one transaction: a scan lands whole or not at all
    try:
        collect(index, report, _results(index, changed, workers), progress, len(changed))
        record_listing(index, listing)
        index.con.execute("COMMIT")
    except BaseException:
        index.con.execute("ROLLBACK")
        raise
    report.problems = index.con.execute("SELECT count(*) FROM problems").fetchall()[0][0]
    return report


def collect(index: Index, report: ScanReport, results: Iterable[FileResult], progress: ProgressCallback | None,
             total: int) -> None:
    batch: list[FileResult] = []
    pending_rows = 0
    for done, result in enumerate(results, 1):
        _count(report, result)
        if not result.unchanged:
            batch.append(result)
            pending_rows += len(result.rows.messages) + 1
        if pending_rows >= _FLUSH_ROWS:
            index.write(batch)
            batch, pending_rows = [], 0
        if progress is not None:
            progress(done, total)
    index.write(batch)


def _count(report: ScanReport, result: FileResult) -> None:
    if result.unchanged:
        report.unchanged += 1
    elif result.whole:
        report.read_whole += 1
    else:
        report.read_appended += 1
    report.bytes_read += result.bytes_read


def record_listing(index: Index, listing: list[tuple[str, str, str]]) -> None:
    """Problems found while listing the corpus (file id 0: they belong to no file)."""
    index.con.execute("DELETE FROM problems WHERE file_id = 0")
    for path, kind, message in listing:
        index.con.execute("INSERT INTO problems VALUES (0, ?, NULL, ?, ?)", [path, kind, message])
