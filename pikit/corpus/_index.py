"""The corpus index: an embedded DuckDB database kept in step with the files, incrementally.

Per file the index keeps its :class:`~pikit.FileMark` (position after the last complete
line, identity digests) and its ``FileState`` (deflated, and without
its messages: they are the file's rows of ``messages_raw``). A scan then reads:

* a new file, whole;
* a file that only grew, from its mark: the appended complete lines only (a line still being
  written waits for the next scan, so an entry is never read torn);
* a file that shrank, was replaced or changed before its mark, whole again;
* nothing of a file whose size, modification time and inode are unchanged.

The rows of a file that changed are derived again from its state and replace the old ones;
the rows of a file that disappeared are removed; then ``messages.counted`` (the
no-double-counting rule, ``pikit.corpus._usage``) is brought up to date for the messages
those files hold. Problems (unreadable, vanished, damaged, not a
session) are rows of the ``problems`` table; none of them stops a scan.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

from .._format.tail import FileMark
from .._formatting import plural
from .._progress import BYTES, Progress, tracked
from ._derive import compaction_windows, models_fingerprint
from ._discover import find_files, is_url
from ._filescan import (
    COMPUTED_COLUMNS,
    MESSAGE_COLUMNS,
    Columns,
    FileResult,
    pack,
    scan_file,
    scan_in_worker,
    start_worker,
    to_numpy,
    unchanged,
)
from ._indexfile import LOCK_WAIT, connect, create_tables, stored_name, transaction
from ._schema import TABLES

__all__ = ["Index", "ScanReport", "default_workers", "scan"]

_FLUSH_ROWS = 20_000  # messages held before they are written (and rows of the other tables)
_STATE_BYTES = 4 * 1024 * 1024  # bytes of states held before they and the other tables are written
_MEMORY_LIMIT = "64MB"  # DuckDB's buffers while scanning (it spills to disk beyond)
_CHECKPOINT_BYTES = 32 * 1024 * 1024
# Rows written between checkpoints during a scan: DuckDB holds what is not checkpointed yet in memory (beyond
# its buffers: about 200 bytes a row), and writes a table in row groups of this many rows.
_CHECKPOINT_ROWS = 122_880
_IN_FLIGHT_BYTES = 48 * 1024 * 1024  # bytes of files the workers may be reading ahead of the writer
# Less than this to read is read in this process: starting worker processes (each imports what it reads with)
# costs about 0.6 CPU-s, which two CPUs win back from about 256 MB on (benchmarks/README.md).
POOL_BYTES = 256 * 1024 * 1024
_SQL = {"string": "VARCHAR", "Int64": "BIGINT", "Float64": "DOUBLE", "boolean": "BOOLEAN", "blob": "BLOB"}
_STATE_COLUMNS = (["file_id", "size", "mtime_ns", "inode", "mark", "state"], ["Int64"] * 4 + ["blob"] * 2)
# (small: written in fewer, larger inserts; the evaluations are written by evaluate, not by a scan)
_OTHER_TABLES = tuple(t for t in TABLES if t not in ("messages", "evaluations", "evaluation_facts"))
_DATA_TABLES = ("sessions", "messages_raw", "compactions", "branches", "summary_calls", "evaluations",
                "evaluation_facts", "evaluated", "problems", "texts", "partial", "states")
_REDERIVED = tuple(t for t in _DATA_TABLES if t != "texts")  # (replaced at every read; texts by a whole read only)
# A version-1 file beside its migrated copy (by ``pikit migrate``, or by Pi, which gives every entry a new random
# id): the same session when both headers have the same id, timestamp and cwd; the copy is the version-1 file's
# ``migrated_to`` (:data:`_MIGRATED_TO`). A message of the version-1 file is the copy's message at the same entry
# position with the same timestamp, role, model and usage (every token count and the cost): rowid of the version-1
# message → usage key of the copy's.
_SAME_AS_MIGRATED = """
    SELECT v.rowid AS row, min(c.usage_key) AS key
    FROM messages_raw v
    JOIN sessions sv ON sv.file_id = v.file_id AND sv.migrated_to IS NOT NULL
    JOIN sessions sc ON sc.path = sv.migrated_to
    JOIN messages_raw c ON c.file_id = sc.file_id AND c.entry_index = v.entry_index
        AND c.timestamp = v.timestamp AND c.role IS NOT DISTINCT FROM v.role AND c.model IS NOT DISTINCT FROM v.model
        AND c.input_tokens = v.input_tokens AND c.output_tokens = v.output_tokens
        AND c.cache_read_tokens = v.cache_read_tokens AND c.cache_write_tokens = v.cache_write_tokens
        AND c.total_tokens = v.total_tokens AND c.cost IS NOT DISTINCT FROM v.cost
    WHERE v.usage_key IS NOT NULL AND c.usage_key IS NOT NULL
    GROUP BY v.rowid"""
# The migrated copy of each version-1 file (set again whenever usage is recounted, before the messages are).
_MIGRATED_TO = """
    UPDATE sessions sv SET migrated_to = (
        SELECT min(sc.path) FROM sessions sc
        WHERE sc.session_id = sv.session_id AND sc.file_id <> sv.file_id AND sc.version >= 2
            AND sc.started IS NOT DISTINCT FROM sv.started AND sc.cwd IS NOT DISTINCT FROM sv.cwd)
    WHERE sv.version < 2"""
_DROPPED_KEYS = "CREATE TEMP TABLE IF NOT EXISTS dropped_keys (usage_key VARCHAR)"  # (see Index.recount)
# The usage a session row shows is what counts of its file: its messages that count (and, of those no report
# counts, the ones not copied from another file), their costs added in entry order as the file's rows add them
# (so a file no copy touches keeps the numbers it was derived with). Brought up to date for the files recounted.
_SESSION_USAGE = """
    UPDATE sessions s SET input_tokens = u.i, output_tokens = u.o, cache_read_tokens = u.r,
        cache_write_tokens = u.w, total_tokens = u.t, cost = u.c
    FROM (SELECT file_id, CAST(coalesce(sum(input_tokens) FILTER (WHERE mine), 0) AS BIGINT) AS i,
                 CAST(coalesce(sum(output_tokens) FILTER (WHERE mine), 0) AS BIGINT) AS o,
                 CAST(coalesce(sum(cache_read_tokens) FILTER (WHERE mine), 0) AS BIGINT) AS r,
                 CAST(coalesce(sum(cache_write_tokens) FILTER (WHERE mine), 0) AS BIGINT) AS w,
                 CAST(coalesce(sum(total_tokens) FILTER (WHERE mine), 0) AS BIGINT) AS t,
                 CASE WHEN count(*) FILTER (WHERE mine) = 0 THEN 0.0
                      ELSE list_reduce(list(cost ORDER BY entry_index) FILTER (WHERE mine), lambda a, b: a + b) END AS c
          FROM (SELECT file_id, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens,
                       cost, entry_index, role = 'assistant' AND input_tokens IS NOT NULL
                       AND CASE WHEN countable THEN counted ELSE NOT copied END AS mine
                FROM messages_raw WHERE file_id IN (SELECT DISTINCT file_id FROM recounted))
          GROUP BY file_id) u
    WHERE s.file_id = u.file_id"""


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


class Index:
    """An open DuckDB index database (``:memory:`` for a throwaway one).

    A file is pikit's own or refused (``pikit.corpus._indexfile``); ``notes`` say what happened
    to a damaged one (moved aside and built again). ``owned``: the path is the default index in
    pikit's cache folder. ``lock_wait``: seconds to wait for a file another process holds. ``builder``: this
    process holds the index's ``pikit.corpus._indexfile.building`` lock (no waiting for it).
    """

    def __init__(self, path: str, *, owned: bool = False, lock_wait: float = LOCK_WAIT,
                 builder: bool = False) -> None:
        self.path = path
        self.notes: list[str] = []
        if path == ":memory:":
            import duckdb

            self.con = duckdb.connect(path)
            self.con.execute("SET enable_progress_bar = false")
            with transaction(self.con):
                create_tables(self.con)
        else:
            self.con, self.notes = connect(path, owned=owned, lock_wait=lock_wait, builder=builder)

    def known(self) -> dict[str, Known]:
        """Path → (file id, stored mark, (size, mtime, inode) when read) for every file in the index."""
        out: dict[str, Known] = {}
        query = "SELECT file_id, path, mark, size, mtime_ns, inode FROM files LEFT JOIN states USING (file_id)"
        for file_id, path, blob, size, mtime_ns, inode in self.con.execute(query).fetchall():
            mark = _decode_mark(blob)
            out[path] = (file_id, mark, (size, mtime_ns, inode) if mark is not None else None)
        return out

    def states(self, file_ids: list[int]) -> dict[int, bytes]:
        """The stored states of these files."""
        if not file_ids:
            return {}
        rows = self.con.execute("SELECT file_id, state FROM states WHERE file_id IN (SELECT unnest($ids))",
                                {"ids": file_ids}).fetchall()
        return dict(rows)

    def messages(self, file_ids: list[int]) -> dict[int, list[tuple[Any, ...]]]:
        """The ``messages_raw`` rows of these files a stored state is continued with, in entry order."""
        out: dict[int, list[tuple[Any, ...]]] = {}
        if not file_ids:
            return out
        columns = ", ".join(MESSAGE_COLUMNS)
        rows = self.con.execute(f"SELECT file_id, {columns} FROM messages_raw WHERE file_id IN (SELECT unnest($ids)) "
                                "ORDER BY file_id, entry_index", {"ids": file_ids}).fetchall()
        for file_id, *row in rows:
            out.setdefault(file_id, []).append(tuple(row))
        return out

    def partial(self) -> set[int]:
        """The files read for usage alone (:func:`scan` with ``usage_only``): their other rows wait for a full read."""
        return {file_id for (file_id,) in self.con.execute("SELECT file_id FROM partial").fetchall()}

    def forget(self, file_ids: Iterable[int], *, keep_file: bool = False,
               tables: tuple[str, ...] = _DATA_TABLES) -> None:
        """Remove the rows of these files from ``tables`` (and the files themselves unless ``keep_file``)."""
        ids = list(file_ids)
        if not ids:
            return
        for table in (*tables, *(() if keep_file else ("files",))):
            self.con.execute(f'DELETE FROM "{table}" WHERE file_id IN (SELECT unnest($ids))', {"ids": ids})

    def write_messages(self, results: list[FileResult], new: frozenset[int] | set[int] = frozenset()) -> None:
        """Replace the rows of these files by their messages (inside the scan's transaction).

        Every earlier row of these files goes (``new``: files with none), state included: their
        other tables and their state follow in :meth:`write_others`, in this or a later transaction.
        The search text of a file read on from its mark stays: a read adds only the text it found.
        """
        if not results:
            return
        known = [r for r in results if r.file_id not in new]
        self.forget([r.file_id for r in known], keep_file=True, tables=_REDERIVED)
        self.forget([r.file_id for r in known if r.whole], keep_file=True, tables=("texts",))
        for table in ("messages", "texts"):
            self._insert(table, [r.tables[table] for r in results if table in r.tables])

    def write_others(self, results: list[FileResult]) -> None:
        """The other tables of these files, and last their states (what makes a file count as read)."""
        if not results:
            return
        for table in _OTHER_TABLES:
            self._insert(table, [r.tables[table] for r in results if table in r.tables])
        kept = [r for r in results if r.state is not None]
        if kept:
            seen = [r.seen or (None, None, None) for r in kept]
            columns: list[list[Any]] = [
                [r.file_id for r in kept], [s[0] for s in seen], [s[1] for s in seen], [s[2] for s in seen],
                [msgspec.msgpack.encode(r.mark) for r in kept], [r.state for r in kept]]
            self._insert("states", [Columns(*_STATE_COLUMNS, [pack(column, dtype) for column, dtype in zip(
                columns, _STATE_COLUMNS[1], strict=True)])])
        partial = [r.file_id for r in kept if r.usage_only]
        if partial:
            self.con.execute("INSERT INTO partial SELECT unnest($ids)", {"ids": partial})

    def _insert(self, table: str, parts: list[Columns]) -> None:
        """Insert a table's parts in one statement, as numpy columns (and its computed columns).

        (DuckDB reads numpy columns directly; Arrow would import pandas, a second and 45 MB.)
        """
        if not parts:
            return
        import numpy as np

        first = parts[0]
        batch = {f"c{i}": to_numpy(np, [part.values[i] for part in parts], dtype)
                 for i, dtype in enumerate(first.dtypes)}
        select = [f"TRY_CAST(c{i} AS TIMESTAMPTZ)" if d.startswith("datetime") else f"CAST(c{i} AS {_SQL[d]})"
                  for i, d in enumerate(first.dtypes)]
        computed = COMPUTED_COLUMNS.get(table, {})
        given = {name: f"c{i}" for i, name in enumerate(first.names)}
        names = ", ".join(f'"{c}"' for c in (*first.names, *computed))
        select += [expression.format_map(given) for expression in computed.values()]
        self.con.register("_rows", batch)
        try:
            self.con.execute(f'INSERT INTO "{stored_name(table)}" ({names}) SELECT {", ".join(select)} FROM _rows')
        except BaseException:
            with contextlib.suppress(Exception):  # (an aborted transaction refuses this too: the error counts)
                self.con.unregister("_rows")
            raise
        self.con.unregister("_rows")

    def recount(self, keys_of: list[int] | None, *, fresh: bool = False) -> None:
        """Set ``counted`` for every message sharing a usage key with these files' messages (None: all).

        The keys these files held before they were read again count too (table ``dropped_keys``,
        :meth:`note_keys`): a key a file no longer holds may now count in another file. ``fresh``:
        every row was just written (counted where countable), so only the keys found more than
        once need looking at, and copies (one without its original counts, in its session row
        too). A message's key is its ``usage_key``, or for a version-1 file's message the key of
        the same message in its migrated copy (:data:`_SAME_AS_MIGRATED`). Among the occurrences
        of one key, the one not copied from another file counts (the original), then the first
        in file order. Every version-1 file's ``migrated_to`` (:data:`_MIGRATED_TO`) is set first;
        the session rows of the files recounted follow (:data:`_SESSION_USAGE`).
        """
        self.con.execute(_DROPPED_KEYS)
        if keys_of is not None and not keys_of \
                and not self.con.execute("SELECT count(*) FROM dropped_keys").fetchall()[0][0]:
            return
        self.con.execute(_MIGRATED_TO)
        if fresh:
            scope = "copied OR eff IN (SELECT eff FROM keyed GROUP BY eff HAVING count(*) > 1)"
        elif keys_of is None:
            scope = "true"
        else:  # (the messages of version-1 files and their copies are few: looked at every time)
            scope = """eff IN (SELECT eff FROM keyed WHERE own IN (
                           SELECT usage_key FROM messages_raw WHERE file_id IN (SELECT unnest($ids))
                           UNION ALL SELECT usage_key FROM dropped_keys)
                       OR legacy OR eff <> own)"""
        # (joined on rowid: several times faster than on file_id and entry_index)
        self.con.execute(f"""
            CREATE OR REPLACE TEMP TABLE recounted AS
            WITH same AS ({_SAME_AS_MIGRATED}),
            keyed AS (
                SELECT r.rowid AS row, r.file_id, r.usage_key AS own, coalesce(same.key, r.usage_key) AS eff,
                       r.file_id IN (SELECT file_id FROM sessions WHERE version < 2) AS legacy,
                       r.countable, r.copied, f.path_order, r.entry_index
                FROM messages_raw r JOIN files f USING (file_id) LEFT JOIN same ON same.row = r.rowid
                WHERE r.usage_key IS NOT NULL)
            SELECT row, file_id, countable AND row_number() OVER (
                PARTITION BY eff ORDER BY copied, path_order, entry_index) = 1 AS first
            FROM keyed WHERE {scope}""", {"ids": keys_of} if keys_of is not None and not fresh else None)
        self.con.execute("UPDATE messages_raw m SET counted = w.first FROM recounted w WHERE m.rowid = w.row")
        self.con.execute(_SESSION_USAGE)
        self.con.execute("DELETE FROM dropped_keys; DROP TABLE recounted")

    def note_keys(self, file_ids: list[int]) -> None:
        """Remember the usage keys these files hold now (before their rows are replaced or removed)."""
        self.con.execute(_DROPPED_KEYS)
        if file_ids:
            self.con.execute("INSERT INTO dropped_keys SELECT DISTINCT usage_key FROM messages_raw "
                             "WHERE usage_key IS NOT NULL AND file_id IN (SELECT unnest($ids))", {"ids": file_ids})

    def close(self) -> None:
        """Close the database."""
        self.con.close()


def _decode_mark(blob: bytes | None) -> FileMark | None:
    """A stored mark; None when there is none, or it does not decode (the file is then read whole again)."""
    if blob is None:
        return None
    try:
        return msgspec.msgpack.decode(blob, type=FileMark)
    except msgspec.DecodeError:  # (ValidationError included)
        return None


def default_workers() -> int:
    """Processes a local scan reads files in: one per CPU, at most four (one CPU: this process).

    The workers read, decode and derive; this process writes the index meanwhile. Rows cross
    as packed columns (typed ones as their bytes), so even two CPUs pay for a pool
    (``benchmarks/bench_corpus.py``).
    """
    cpus = os.cpu_count() or 1
    return 1 if cpus < 2 else min(cpus, 4)


Known = tuple[int, FileMark | None, tuple[int, int, int] | None]
Job = tuple[str, int, FileMark | None, bytes | None, tuple[int, int, int] | None, list[tuple[Any, ...]], bool]
Todo = tuple[str, int, FileMark | None, tuple[int, int, int] | None]


def plan(index: Index, root: Any) -> tuple[list[Todo], list[tuple[str, str, str]], list[int], set[int]]:
    """The corpus's files: (path, id, mark, how it looked) per file, listing problems, removed ids, new ids."""
    found = find_files(root)
    known = index.known()
    wanted = set(found.files)
    gone = [file_id for path, (file_id, _, _) in known.items() if path not in wanted]
    next_id = max((file_id for file_id, _, _ in known.values()), default=0) + 1
    todo: list[Todo] = []
    new: set[int] = set()
    for path in found.files:
        if path in known:
            todo.append((path, *known[path]))
        else:
            todo.append((path, next_id, None, None))
            new.add(next_id)
            next_id += 1
    return todo, found.problems, gone, new


def _register_files(index: Index, todo: list[Todo]) -> None:
    index.con.execute("DELETE FROM files")
    if todo:
        index.con.execute("INSERT INTO files SELECT unnest($ids), unnest($paths), unnest($orders)",
                          {"ids": [t[1] for t in todo], "paths": [t[0] for t in todo],
                           "orders": list(range(len(todo)))})


def _local_results(jobs: list[Job], workers: int) -> Iterator[FileResult]:
    """The jobs' results, in order, read by a pool of ``workers`` processes (with less than :data:`POOL_BYTES` to
    read, or fewer than 8 files, in this process).

    forkserver: the workers start from a clean process, not a copy of one holding DuckDB's threads;
    they run at a lower priority than this process, which writes the index (all wait for it).
    Enough files are in flight that the workers go on while this process writes a batch, few
    enough (by bytes to read) that results never pile up in memory. Should the pool break (its
    workers cannot start: say, a main module they cannot import), the rest is read here.
    """
    sizes = [_to_read(job) for job in jobs]
    if workers <= 1 or len(jobs) < 8 or sum(sizes) < POOL_BYTES or not _workers_can_start():
        for each in jobs:
            yield scan_file(*each)
        return
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pending: deque[tuple[Future[FileResult], int]] = deque()
    held, given, broken = 0, 0, False
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver"),
                             initializer=start_worker) as pool:
        for job in jobs:
            try:
                while not broken and given < len(jobs) and (len(pending) < 2 * workers
                                                            or held + sizes[given] <= _IN_FLIGHT_BYTES):
                    pending.append((pool.submit(scan_in_worker, *jobs[given]), sizes[given]))
                    held += sizes[given]
                    given += 1
                if not broken:
                    future, size = pending.popleft()
                    held -= size
                    result = future.result()
            except BrokenProcessPool:  # (when submitting, or waiting for a result)
                broken = True
            if broken:
                result = scan_file(*job)
            yield result


def _workers_can_start() -> bool:
    """Whether a worker process can prepare itself: it runs the main module again, which must be a file
    (a script read from standard input is not)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return getattr(main, "__spec__", None) is not None or path is None or os.path.isfile(path)


def _to_read(job: Job) -> int:
    """About how many bytes of a file a scan reads (what grew since its mark)."""
    path, _, mark = job[:3]
    try:
        size = os.stat(path).st_size if not is_url(path) else 0
    except OSError:
        return 0
    return max(size - (mark.offset if mark is not None else 0), 0)


Runner = Callable[[list[Job]], Iterable[FileResult]]


def scan(index: Index, root: Any, progress: Progress = None, workers: int = 1,
         runner: Runner | None = None, *, usage_only: bool = False) -> ScanReport:
    """Bring the index in step with the files of ``root``.

    ``workers`` processes read the changed files (``runner`` replaces them: the Dask engine).
    ``progress`` (``pikit._progress``) is told the bytes read as each file's result arrives, of
    the bytes there were to read (of local files: a URL's size is not looked up).

    ``usage_only``: a file not read yet is read for what a usage report needs alone
    (``feed_usage``: its assistant messages, summary calls, problems and
    a sessions row as far as the report reads it), and listed in ``partial``; a file read so
    is continued so when it grows. Without it, every file of ``partial`` is read again whole,
    in full: afterwards every table is what a full build gives.
    """
    todo, listing, gone, new = plan(index, root)
    report = ScanReport(files=len(todo), removed=len(gone))
    partial = set() if usage_only else index.partial()
    # (a file read for usage alone is read again whole for the rest of its rows)
    todo_read = [(path, file_id, None, None) if file_id in partial else (path, file_id, mark, seen)
                 for path, file_id, mark, seen in todo]
    changed = [job for job in todo_read if not unchanged(job[0], job[2], job[3])]  # (no mark: never unchanged)
    report.unchanged = len(todo) - len(changed)
    listed = {(p, k, m) for p, k, m in index.con.execute(
        "SELECT path, kind, message FROM problems WHERE file_id = 0").fetchall()}
    if not changed and not gone and listed == set(listing) and _same_files(index, todo):
        report.problems = index.con.execute("SELECT count(*) FROM problems").fetchall()[0][0]
        refresh_windows(index)
        return report  # nothing else to write
    continued = [t[1] for t in changed if t[2] is not None]
    blobs, messages = index.states(continued), index.messages(continued)
    jobs: list[Job] = [(path, file_id, mark, blobs.get(file_id), seen, messages.get(file_id, []), usage_only)
                       for path, file_id, mark, seen in changed]
    results = runner(jobs) if runner is not None else _local_results(jobs, workers)
    results = tracked(results, progress, f"scanning {plural(len(jobs), 'file')}", sum(map(_to_read, jobs)), BYTES,
                      lambda result: result.bytes_read)
    with _scanning(index):
        _write_scan(index, report, todo, listing, gone, new, [job[1] for job in jobs], results)
    refresh_windows(index)
    report.problems = index.con.execute("SELECT count(*) FROM problems").fetchall()[0][0]
    return report


def _write_scan(index: Index, report: ScanReport, todo: list[Todo], listing: list[tuple[str, str, str]],
                gone: list[int], new: set[int], changed: list[int], results: Iterable[FileResult]) -> None:
    """Write what a scan read, in steps that are transactions, then checkpoint."""
    # Batches are committed as they come (memory stays bounded). A scan that was interrupted leaves
    # a mark: the next one then counts every message again.
    with transaction(index.con):
        interrupted = index.con.execute("SELECT count(*) FROM meta WHERE key = 'scanning'").fetchall()[0][0] > 0
        index.note_keys([*changed, *gone])
        index.forget(gone)
        _register_files(index, todo)
        index.con.execute("INSERT OR REPLACE INTO meta VALUES ('scanning', '1')")
    _collect(index, report, results, new)
    with transaction(index.con):
        record_listing(index, listing)
        if report.read_whole == len(todo):  # every row is new (counted where countable): settle the copies
            index.recount(None, fresh=True)
        else:
            index.recount(None if interrupted else changed)
        index.con.execute("DELETE FROM meta WHERE key = 'scanning'")
    if report.bytes_read > _CHECKPOINT_BYTES or report.read_whole or gone:
        # (small appends stay in the write-ahead log until it grows; the workers are done: every CPU helps)
        index.con.execute(f"SET threads = {os.cpu_count() or 1}; CHECKPOINT")


def refresh_windows(index: Index) -> None:
    """Derive the compactions' windows and thresholds again when the model facts changed since they were
    derived (the user's ``models.json`` or ``models-store.json``, or pikit's catalog snapshot)."""
    if not index.con.execute("SELECT count(*) FROM compactions WHERE model IS NOT NULL").fetchall()[0][0]:
        return  # (nothing to derive: new rows are derived with the facts of their scan)
    fingerprint = models_fingerprint()
    if index.con.execute("SELECT value FROM meta WHERE key = 'model_facts'").fetchall() == [(fingerprint,)]:
        return
    keys = index.con.execute("""SELECT DISTINCT s.cwd, c.provider, c.model FROM compactions c
                                JOIN sessions s USING (file_id) WHERE c.model IS NOT NULL""").fetchall()
    with transaction(index.con):
        for cwd, provider, model, window, reserve, threshold in compaction_windows(keys):
            index.con.execute("""
                UPDATE compactions SET context_window = $window, reserve_tokens = $reserve, threshold = $threshold,
                    over_threshold = tokens_before - $threshold
                WHERE provider IS NOT DISTINCT FROM $provider AND model = $model
                    AND file_id IN (SELECT file_id FROM sessions WHERE cwd IS NOT DISTINCT FROM $cwd)""",
                {"window": window, "reserve": reserve, "threshold": threshold, "provider": provider, "model": model,
                 "cwd": cwd})
        index.con.execute("INSERT OR REPLACE INTO meta VALUES ('model_facts', $f)", {"f": fingerprint})


@contextlib.contextmanager
def _scanning(index: Index) -> Iterator[None]:
    """DuckDB as a scan has it: bounded buffers, one thread (the workers have the CPUs), checkpoints when the scan
    asks (:func:`_collect`), not when the log grows.

    Queries afterwards run with DuckDB's defaults (every CPU, most of the memory).
    """
    index.con.execute(f"SET memory_limit = '{_MEMORY_LIMIT}'; SET threads = 1; SET checkpoint_threshold = '1GB'")
    reset = "RESET memory_limit; RESET threads; RESET checkpoint_threshold"
    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception):  # (a database DuckDB gave up on: the first error counts)
            index.con.execute(reset)
        raise
    index.con.execute(reset)


def _same_files(index: Index, todo: list[Todo]) -> bool:
    stored = index.con.execute("SELECT file_id FROM files ORDER BY path_order").fetchall()
    return [row[0] for row in stored] == [t[1] for t in todo]


def _collect(index: Index, report: ScanReport, results: Iterable[FileResult], new: set[int]) -> None:
    """Write the results as they come: messages by :data:`_FLUSH_ROWS`, the other tables less often.

    Each insert costs a few milliseconds whatever its size, so the small tables wait until they
    hold as many rows (or :data:`_STATE_BYTES` of states). A file's state is written with its
    other tables, after its messages: a scan cut short leaves no file looking read. Every
    :data:`_CHECKPOINT_ROWS` messages, a checkpoint: memory does not grow with the corpus.
    """
    pending: list[FileResult] = []  # messages not written yet
    others: list[FileResult] = []  # messages written; the other tables and the state not yet
    held = other_rows = state_bytes = unsaved = 0
    for result in results:
        if result.unchanged:
            report.unchanged += 1
        elif result.whole:
            report.read_whole += 1
        else:
            report.read_appended += 1
        report.bytes_read += result.bytes_read
        if not result.unchanged:
            pending.append(result)
            held += result.rows + 1
        if held >= _FLUSH_ROWS:
            with transaction(index.con):
                index.write_messages(pending, new)
            for each in pending:
                each.tables.pop("messages", None)  # (written: not held any longer)
                each.tables.pop("texts", None)
                other_rows += each.rows + 1
                state_bytes += len(each.state or b"")
            others += pending
            unsaved += held
            pending, held = [], 0
            if other_rows >= _FLUSH_ROWS or state_bytes >= _STATE_BYTES:
                with transaction(index.con):
                    index.write_others(others)
                others, other_rows, state_bytes = [], 0, 0
            if unsaved >= _CHECKPOINT_ROWS:
                index.con.execute("CHECKPOINT")
                unsaved = 0
    with transaction(index.con):
        index.write_messages(pending, new)
        index.write_others(others + pending)


def record_listing(index: Index, listing: list[tuple[str, str, str]]) -> None:
    """Problems found while listing the corpus (file id 0: they belong to no file)."""
    index.con.execute("DELETE FROM problems WHERE file_id = 0")
    for path, kind, message in listing:
        index.con.execute("INSERT INTO problems VALUES (0, ?, NULL, ?, ?)", [path, kind, message])
