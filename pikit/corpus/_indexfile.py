"""The index file: a DuckDB database pikit made, and no other.

pikit writes only into a database it made:

* where nothing is yet, the index is made beside the path under a temporary name (its tables
  and pikit's mark in one transaction, then a checkpoint) and linked into place whole: a file
  at the path is never a half-made index;
* an existing file must start with DuckDB's header (read before DuckDB opens it), and, opened
  read-only first (nothing in it changes, its write-ahead log neither), carry pikit's mark in
  its ``meta`` table, or be the index of a pikit from before the mark (``meta`` with a schema
  version, and the ``files``, ``states`` and ``messages_raw`` tables). pikit's index of another
  schema version is built again; any other database is refused as it is;
* a damaged index (DuckDB cannot read it, or its write-ahead log) is pikit's when its bytes
  hold the mark, or when it is the default index in pikit's cache folder: it is moved aside
  with its log and built again, and a note says where it went. Any other damaged file is
  refused;
* DuckDB lets one process write a database and none read it meanwhile: a file another process
  holds is waited for, a bounded time, then refused naming that process.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .._format.reading import file_signature, kind_of, open_regular
from .._limits import check_seconds
from ..errors import PikitError, Wording
from ._filescan import stored_columns
from ._schema import DUCKDB_TYPES, TABLES

__all__ = ["LOCK_WAIT", "MARK", "SCHEMA_VERSION", "CorpusIndexError", "IndexHeldError", "IndexRebuiltWarning",
           "building", "built", "carries_mark", "connect", "copy_quietly", "create_tables", "holder", "is_damage",
           "is_full", "is_unwritable", "move_aside", "stored_name", "transaction", "unwritable", "unwritable_reason",
           "words"]

SCHEMA_VERSION = "11"
MARK = "pikit corpus index 6f1d0c2e9b7a4385"  # meta's 'format' row: the index is pikit's
LOCK_WAIT = 10.0  # seconds to wait for an index another process holds
_POLL = 0.1
_BUILDING = ".building"  # beside an index a first `pikit usage` writes after its answer (see building)
_BUILD_POLL = 0.01
_BUILD_WAIT = 120.0  # seconds to wait for an index being built
_MAGIC = b"DUCK"  # bytes 8 to 11 of every DuckDB database file (after the header's checksum)
_EARLIER = frozenset("123456")  # schema versions before the mark
_PLAIN = "USING COMPRESSION uncompressed"
# Strings that are nearly all different (ids, keys, message text) are stored as they are: compressing
# them at a checkpoint costs more time than the space it saves is worth to a cache.
_UNIQUE_STRINGS = frozenset(("entry_id", "usage_key"))
# Every table an index of any schema version holds (and the view ``messages``).
_OWN_TABLES = ("meta", "files", "states", "texts", "evaluated", "partial", "messages_raw",
               *(t for t in TABLES if t != "messages"))
_LOCKED = "Could not set lock on file"
_SAME_PROCESS = "different configuration than existing connections"  # (this process has the database open)
_HOLDER = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")
_DAMAGE = ("Corrupt", "Could not read enough bytes", "WAL does not match", "Failure while replaying WAL",
           "not a valid DuckDB database")
_UNWRITABLE = ("No space left on device", "Disk quota exceeded", "File too large", "Read-only file system",
               "Permission denied", "Operation not permitted")
_FULL = _UNWRITABLE[:3]
_ONLY_OWN = "pikit writes only into its own index: pass a new path or an index pikit made to {index}"


class CorpusIndexError(PikitError):
    """The corpus index cannot be used: not a DuckDB database, a database pikit did not make, damaged and not
    recognisably pikit's, held by another process, or in a folder pikit cannot write. Nothing was changed.

    The message reads ``subject: problem; fix``, where ``{index}`` in ``fix`` stands for the parameter
    (``index=``): :meth:`~pikit.errors.PikitError.worded` names it otherwise (the command line's flag).
    """

    def __init__(self, subject: str, problem: str, fix: str) -> None:
        super().__init__(Wording("{subject}: {problem}; " + fix, {"index": "index="}, subject=subject,
                                 problem=problem))


class IndexHeldError(CorpusIndexError):
    """Another process holds the index (``pid`` and ``program`` as DuckDB names them, when it does)."""

    def __init__(self, path: str, pid: int | None, program: str | None, problem: str) -> None:
        self.path, self.pid, self.program = path, pid, program
        super().__init__(path, problem, "close it there (a notebook: corpus.close()) or pass another {index}")

    @classmethod
    def from_lock(cls, path: str, message: str, waited: float) -> IndexHeldError:
        """From DuckDB's lock error, after waiting ``waited`` seconds."""
        found = _HOLDER.search(message)
        pid, program = (int(found.group(2)), found.group(1)) if found else (None, None)
        return cls(path, pid, program, f"in use by {holder(pid, program)}, after a wait of {waited:g} s")


class IndexRebuiltWarning(UserWarning):
    """A damaged index was moved aside (the message says where) and built again."""


def holder(pid: int | None, program: str | None) -> str:
    """The process holding an index, in words."""
    return f"another process (PID {pid}, {program})" if pid is not None else "another process"


def words(exc: BaseException) -> str:
    """The first line of an error's message."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def is_damage(exc: BaseException) -> bool:
    """Whether DuckDB failed because the database file or its write-ahead log is damaged."""
    text = str(exc)
    return any(sign in text for sign in _DAMAGE) and _LOCKED not in text


def is_unwritable(exc: BaseException) -> bool:
    """Whether DuckDB (or the file system) failed to write: no room, no permission, a read-only file system."""
    text = str(exc)
    return any(sign in text for sign in _UNWRITABLE)


def unwritable_reason(exc: BaseException) -> str:
    """Why DuckDB or the file system could not write, in a few words (``"No space left on device"``…)."""
    text = str(exc)
    return next((sign for sign in _UNWRITABLE if sign in text), None) or getattr(exc, "strerror", None) \
        or words(exc)


def is_full(reason: str) -> bool:
    """Whether :func:`unwritable_reason` says there is no room (a full disk, a quota, a file-size limit)."""
    return reason in _FULL


def unwritable(folder: str, exc: BaseException) -> CorpusIndexError:
    """The error for an index that cannot be written in ``folder``."""
    reason = unwritable_reason(exc)
    fix = "make room there or pass another {index}" if is_full(reason) \
        else "pass another {index} (in a folder you can write)"
    return CorpusIndexError(folder or ".", f"cannot write the corpus index there ({reason})", fix)


def stored_name(table: str) -> str:
    """The DuckDB table holding a declared table's rows (the view ``messages`` adds the joined columns)."""
    return "messages_raw" if table == "messages" else table


def create_tables(con: Any) -> None:
    """Create what an index holds that is not there yet, and mark it pikit's (inside the caller's transaction)."""
    con.execute(f"CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR {_PLAIN})")
    con.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?), ('schema', ?)", [MARK, SCHEMA_VERSION])
    con.execute("CREATE TABLE IF NOT EXISTS files (file_id BIGINT, path VARCHAR, path_order BIGINT)")
    con.execute("CREATE TABLE IF NOT EXISTS states (file_id BIGINT, size BIGINT, mtime_ns BIGINT, inode BIGINT, "
                "mark BLOB, state BLOB)")
    con.execute("CREATE TABLE IF NOT EXISTS texts (file_id BIGINT, entry_index BIGINT, kind VARCHAR, "
                f"text VARCHAR {_PLAIN})")
    con.execute("CREATE TABLE IF NOT EXISTS evaluated (file_id BIGINT)")  # files whose compactions are evaluated
    con.execute("CREATE TABLE IF NOT EXISTS partial (file_id BIGINT)")  # files read for usage alone (see scan)
    for table in TABLES:
        columns = ", ".join(f'"{c}" {DUCKDB_TYPES[d]}{f" {_PLAIN}" if c in _UNIQUE_STRINGS else ""}'
                            for c, d in stored_columns(table))
        con.execute(f'CREATE TABLE IF NOT EXISTS "{stored_name(table)}" ({columns})')
    declared = ", ".join(f'"{c}"' for c, _, _ in TABLES["messages"])
    con.execute(f"""CREATE OR REPLACE VIEW messages AS SELECT {declared} FROM messages_raw
                    JOIN files USING (file_id)
                    LEFT JOIN (SELECT file_id, session_id FROM sessions) USING (file_id)""")


@dataclass
class _Found:
    """What an existing database holds, as far as telling pikit's index from another goes."""

    tables: list[str] = field(default_factory=list)
    marked: bool = False
    version: str | None = None
    earlier: bool = False  # an index of a pikit from before the mark

    @property
    def pikits(self) -> bool:
        return self.marked or self.earlier

    @property
    def current(self) -> bool:
        wanted = {*_OWN_TABLES, "messages"}
        return self.marked and self.version == SCHEMA_VERSION and wanted <= set(self.tables)

    def describe(self) -> str:
        if not self.tables:
            return "it holds no tables"
        shown = ", ".join(sorted(self.tables)[:6])
        return f"it holds {shown}{', …' if len(self.tables) > 6 else ''}"


def connect(path: str, *, owned: bool = False, lock_wait: float = LOCK_WAIT,
            builder: bool = False) -> tuple[Any, list[str]]:
    """A read-write DuckDB connection to the index at ``path``, made, marked or built again as needed, and
    notes on what happened to a damaged index.

    ``owned``: the path is pikit's own (the default index in its cache folder), so whatever is there
    is pikit's to move aside. Raises :class:`CorpusIndexError` (nothing changed) for a path pikit
    does not write into, and :class:`IndexHeldError` after ``lock_wait`` seconds for one another
    process holds.
    """
    deadline = time.monotonic() + check_seconds("lock_wait", lock_wait)
    notes: list[str] = []
    if not builder:
        _wait_built(path)
    while True:
        try:
            return _connect_once(path, owned, notes), notes
        except _Locked as locked:
            left = deadline - time.monotonic()
            if left <= 0:
                raise IndexHeldError.from_lock(path, str(locked), lock_wait) from None
            time.sleep(min(_POLL, left))


def building(path: str) -> int | None:
    """A lock saying the index at ``path`` is being built (a first ``pikit usage`` writes it after its answer): the
    descriptor of ``PATH.building``, locked, or None when another process holds it or it cannot be made. The
    builder removes the file when done (:func:`built`); :func:`connect` waits for it meanwhile."""
    import fcntl

    try:
        handle = os.open(os.path.abspath(path) + _BUILDING, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(handle)
        return None
    return handle


def built(path: str, handle: int) -> None:
    """The index at ``path`` is written: its :func:`building` lock goes."""
    with contextlib.suppress(OSError):
        os.unlink(os.path.abspath(path) + _BUILDING)
    os.close(handle)


def _wait_built(path: str) -> None:
    """Wait while another process builds the index at ``path`` (:func:`building`), for up to :data:`_BUILD_WAIT`
    seconds (it goes on writing what it has read; should it stop, its lock goes with it)."""
    lock = os.path.abspath(path) + _BUILDING
    if os.name != "posix" or not os.path.lexists(lock):
        return
    import fcntl

    deadline = time.monotonic() + _BUILD_WAIT
    try:
        handle = os.open(lock, os.O_RDONLY)
    except OSError:  # (gone meanwhile: built)
        return
    try:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except OSError:
                if time.monotonic() >= deadline:
                    return  # (then DuckDB's own lock tells who holds the index)
                time.sleep(_BUILD_POLL)
    finally:
        os.close(handle)


class _Locked(Exception):
    """DuckDB's lock error: another process holds the file."""


class _NotOwn(Exception):
    """Something other than pikit's index at pikit's own path (moved aside like a damaged index)."""


def _connect_once(path: str, owned: bool, notes: list[str], *, again: bool = False) -> Any:
    import duckdb

    absolute = os.path.abspath(path)
    try:
        if not _exists(path, absolute):
            if os.path.lexists(absolute + ".wal"):  # (DuckDB would replay it into the new index)
                if not owned:
                    raise CorpusIndexError(path + ".wal", "is a write-ahead log without its database",
                                           "remove it or pass another {index}")
                raise _NotOwn("a write-ahead log without its database")
            if _create(path, absolute):
                return _open(absolute)  # (made here, just now: pikit's, of this schema)
        _check_file(path, absolute, owned)
        return _open_own(path, absolute, owned)
    except (duckdb.Error, _NotOwn) as exc:
        if _LOCKED in str(exc):
            raise _Locked(str(exc)) from None
        if isinstance(exc, duckdb.Error) and is_unwritable(exc) and not is_damage(exc):
            raise unwritable(_folder(path), exc) from None
        if again or not (isinstance(exc, _NotOwn) or is_damage(exc)):
            raise CorpusIndexError(path, f"cannot be opened as the corpus index ({words(exc)})",
                                   "pass another {index}") from None
        if not (owned or carries_mark(absolute)):
            raise CorpusIndexError(path, f"is a damaged DuckDB database pikit cannot tell as its own ({words(exc)})",
                                   "move it away or pass another {index}") from None
        moved = move_aside(absolute)
        notes.append(f"{path}: the index was damaged ({words(exc)}); moved to {moved} and built again"
                     if isinstance(exc, duckdb.Error) else f"{path}: moved to {moved} ({exc}); a new index made in "
                     "its place")
        return _connect_once(path, owned, notes, again=True)


def _open_own(path: str, absolute: str, owned: bool) -> Any:
    """A read-write connection to the database at ``absolute`` once it is known as pikit's index (built
    again when it is of another schema version).

    Without a write-ahead log beside it, the database is looked at through the read-write connection itself
    (opening it once): DuckDB writes nothing to a file it only read from. With a log, which DuckDB would replay
    into the file, the database is looked at read-only first.
    """
    wal = os.path.lexists(absolute + ".wal")
    found = _inspect(absolute) if wal else None
    if found is not None:
        _refuse_foreign(path, found, owned)
    con = _open(absolute)
    try:
        if found is None:
            found = _found(con)
            _refuse_foreign(path, found, owned)
        if not found.current:
            _build_again(con)
    except BaseException:
        con.close()
        raise
    return con


def _refuse_foreign(path: str, found: _Found, owned: bool) -> None:
    if not found.pikits:
        if not owned:
            raise CorpusIndexError(path, f"is a DuckDB database pikit did not make ({found.describe()})", _ONLY_OWN)
        raise _NotOwn(f"a database pikit did not make: {found.describe()}")


def _folder(path: str) -> str:
    return os.path.dirname(path) or "."


def _exists(path: str, absolute: str) -> bool:
    try:
        os.stat(absolute)
    except FileNotFoundError:
        if os.path.lexists(absolute):
            raise CorpusIndexError(path, "is a symbolic link to nothing", "pass another {index}") from None
        return False
    except OSError as exc:  # (a path under a regular file, a folder that cannot be searched…)
        raise unwritable(_folder(path), exc) from None
    return True


def _check_file(path: str, absolute: str, owned: bool) -> None:
    """Refuse what is not a DuckDB database file (before DuckDB opens it); a file at pikit's own path is moved aside."""
    mode = os.stat(absolute).st_mode
    if not stat.S_ISREG(mode):
        raise CorpusIndexError(path, f"is {kind_of(mode)}, not an index file",
                               "pass the path of an index file (or of a new one) to {index}")
    try:
        with open_regular(absolute) as handle:
            head = handle.read(12)
    except OSError as exc:
        raise CorpusIndexError(path, f"cannot be read ({exc.strerror or exc})", "pass another {index}") from None
    if head[8:12] == _MAGIC:
        return
    if owned:
        raise _NotOwn("not a DuckDB database")
    what = "is an empty file, not" if not head else \
        "is a JSON Lines file (a session?), not" if head.lstrip()[:1] in (b"{", b"[") else \
        "is not"
    raise CorpusIndexError(path, f"{what} a DuckDB database", _ONLY_OWN)


def _inspect(absolute: str) -> _Found:
    """What the database holds, read through a read-only connection (which changes nothing in the files).

    (A database this process has open already is read through a connection to that open database.)
    """
    import duckdb

    try:
        con = duckdb.connect(absolute, read_only=True)
    except duckdb.ConnectionException as exc:
        if _SAME_PROCESS not in str(exc):
            raise
        con = duckdb.connect(absolute)
    try:
        return _found(con)
    finally:
        con.close()


def _found(con: Any) -> _Found:
    """What the database of ``con`` holds (read only)."""
    found = _Found([name for (name,) in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() "
        "ORDER BY table_schema, table_name").fetchall()])
    if "meta" not in found.tables or _columns(con, "meta") != ["key", "value"]:
        return found
    meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('format', 'schema')").fetchall())
    found.marked, found.version = meta.get("format") == MARK, meta.get("schema")
    found.earlier = not found.marked and found.version in _EARLIER \
        and {"files", "states", "messages_raw"} <= set(found.tables) \
        and _columns(con, "files") == ["file_id", "path", "path_order"]
    return found


def _columns(con: Any, table: str) -> list[str]:
    return [name for (name,) in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() "
        "AND table_schema = 'main' AND table_name = ? ORDER BY ordinal_position", [table]).fetchall()]


def _open(absolute: str) -> Any:
    import duckdb

    con = duckdb.connect(absolute)
    con.execute("SET enable_progress_bar = false")
    return con


def _build_again(con: Any) -> None:
    """Empty an index of another schema version (a pikit's from before the mark included: every one of those is
    of an earlier schema), or missing a table, and make its tables anew; the user's own tables stay."""
    with transaction(con):
        con.execute("DROP VIEW IF EXISTS messages")
        for name in _OWN_TABLES:
            con.execute(f'DROP TABLE IF EXISTS "{name}"')
        create_tables(con)


def _create(path: str, absolute: str) -> bool:
    """Make a new index at ``absolute``: built under a temporary name beside it, then linked into place. False
    when another process put a file there meanwhile (which is then looked into like any other)."""
    import duckdb

    folder = os.path.dirname(absolute)
    temporary = os.path.join(folder, f".{os.path.basename(absolute)}.{secrets.token_hex(6)}.new")
    try:
        os.makedirs(folder, exist_ok=True)
        con = duckdb.connect(temporary)
        try:
            with transaction(con):
                create_tables(con)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        return _link(temporary, absolute)
    except (OSError, duckdb.Error) as exc:
        raise unwritable(_folder(path), exc) from None
    finally:
        for leftover in (temporary, temporary + ".wal"):
            with contextlib.suppress(OSError):
                os.remove(leftover)


def _link(temporary: str, absolute: str) -> bool:
    """Put the new index in place, never over a file another process put there meanwhile; whether it went."""
    try:
        os.link(temporary, absolute)
    except FileExistsError:
        return False
    except OSError:  # (a file system without hard links)
        if os.path.lexists(absolute):
            return False
        os.replace(temporary, absolute)
    return True


def move_aside(absolute: str) -> str:
    """Rename a damaged index (and its write-ahead log) to ``NAME.damaged-TIME.EXT`` beside it; the new name."""
    stem, ext = os.path.splitext(absolute)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    target, n = f"{stem}.damaged-{stamp}{ext}", 1
    while os.path.lexists(target) or os.path.lexists(target + ".wal"):
        n += 1
        target = f"{stem}.damaged-{stamp}-{n}{ext}"
    if os.path.lexists(absolute):
        os.rename(absolute, target)
    if os.path.lexists(absolute + ".wal"):
        os.rename(absolute + ".wal", target + ".wal")
    return target


def carries_mark(absolute: str) -> bool:
    """Whether pikit's mark is among the bytes of the file or of its write-ahead log (read in bounded steps)."""
    mark = MARK.encode()
    for name in (absolute, absolute + ".wal"):
        with contextlib.suppress(OSError), open_regular(name) as handle:
            tail = b""
            while chunk := handle.read(1 << 20):
                if mark in tail + chunk:
                    return True
                tail = chunk[-len(mark):]
    return False


@contextlib.contextmanager
def transaction(con: Any) -> Iterator[None]:
    """A DuckDB transaction: committed when the block ends, rolled back when it raises."""
    con.execute("BEGIN")
    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception):  # (a database DuckDB gave up on cannot roll back: the first error counts)
            con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def copy_quietly(path: str, quiet: float = 1.0) -> tuple[str, str] | None:
    """A copy of the index at ``path`` (with its write-ahead log) in a new temporary folder, beside the index or
    else in the system's: (the folder, the copy). None while the files change: when one of them changed in
    the last ``quiet`` seconds, or while they were copied. (For an index another process holds: DuckDB
    writes it only while it commits or checkpoints.)
    """
    absolute = os.path.abspath(path)
    names = (absolute, absolute + ".wal")
    before = [file_signature(name) for name in names]
    if before[0] is None or time.time_ns() - max(b[1] for b in before if b is not None) < quiet * 1e9:
        return None
    try:
        folder = tempfile.mkdtemp(prefix=".pikit-copy-", dir=os.path.dirname(absolute))
    except OSError:
        folder = tempfile.mkdtemp(prefix="pikit-copy-")
    try:
        copy = os.path.join(folder, os.path.basename(absolute))
        for name, looked, target in zip(names, before, (copy, copy + ".wal"), strict=True):
            if looked is not None:
                shutil.copyfile(name, target)
        if [file_signature(name) for name in names] == before:
            return folder, copy
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    shutil.rmtree(folder, ignore_errors=True)
    return None
