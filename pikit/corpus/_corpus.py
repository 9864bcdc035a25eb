"""A directory of Pi sessions as data: :class:`Corpus`."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .._inert import echo
from .._progress import Progress
from ..errors import PikitError, Wording
from ..jsjson import without_lone_surrogates
from . import _index as _index
from ._discover import agent_root, default_root
from ._indexfile import (
    LOCK_WAIT,
    CorpusIndexError,
    IndexRebuiltWarning,
    is_damage,
    is_unwritable,
    move_aside,
    unwritable,
    words,
)
from ._schema import TABLES
from ._usage import FIELDS, last_days, usage_keys, usage_query

if TYPE_CHECKING:
    import pandas as pd

    from .._redaction.redactor import Redactor
    from ._search import SearchHit

__all__ = ["Corpus", "default_index_path"]

Root = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None
T = TypeVar("T")


def _cache_dir() -> str:
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~"), "Library", "Caches", "pikit")
    if os.name == "nt":
        return os.path.join(os.environ.get("LOCALAPPDATA") or os.path.expanduser("~"), "pikit", "Cache")
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "pikit")


def _root_key(root: Root) -> str:
    if root is None:
        root = default_root()
    if isinstance(root, str | os.PathLike):
        text = os.path.abspath(os.path.expanduser(os.fspath(root)))
    else:
        text = "\n".join(sorted(os.path.abspath(os.fspath(p)) for p in root))
    return text


def default_index_path(root: Root = None) -> str:
    """Where the index of ``root`` lives by default: one DuckDB file per corpus in the user's cache folder."""
    digest = hashlib.sha256(_root_key(root).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return os.path.join(_cache_dir(), f"corpus-{digest}.duckdb")


class _Table:
    """A declared table as a read-only attribute: ``corpus.sessions`` is ``corpus.table("sessions")``."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, corpus: Corpus | None, owner: type | None = None) -> Any:
        return self if corpus is None else corpus.table(self.name)


class Corpus:
    """Every session below a directory (or matching a glob, or listed), indexed in DuckDB.

    Open one with :meth:`open`. The tables (``sessions``, ``messages``, ``compactions``,
    ``branches``, ``summary_calls``, ``evaluations``, ``evaluation_facts``, ``problems``; columns in
    :data:`pikit.corpus.TABLES`)
    are DuckDB tables or views of :attr:`connection` and pandas DataFrames through the
    properties of the same names; :meth:`sql` runs any query over them.
    """

    def __init__(self, root: Root, index: _index.Index, client: Any = None, workers: int | None = None, *,
                 owned: bool = False, lock_wait: float = LOCK_WAIT, usage_only: bool = False) -> None:
        self.root = root
        self._index = index
        self.client = client
        self.workers = _index.default_workers() if workers is None else workers
        self.last_scan: _index.ScanReport | None = None
        self._owned, self._lock_wait = owned, lock_wait
        self._progress: Progress = None
        self._usage_only = usage_only and client is None  # (the Dask engine builds every table)

    @classmethod
    def open(cls, root: Root = None, *, agent_dir: Root = None, index: str | os.PathLike[str] | None = None,
             client: Any = None, workers: int | None = None, scan: bool = True, progress: Progress = None,
             lock_wait: float = LOCK_WAIT, usage_only: bool = False) -> Corpus:
        """Open (and bring up to date) the corpus of ``root``.

        ``root``: a directory (default: Pi's sessions directory, ``$PI_CODING_AGENT_DIR/sessions``
        or ``~/.pi/agent/sessions``), a glob pattern, or a list of files and folders. ``agent_dir``
        (instead of ``root``): an agent directory of Pi's layout (its sessions in ``DIR/sessions/``),
        or a store pikit knows by name (``STORES``: ``"pi"``, oh-my-pi's
        ``"omp"``, ``"openclaw"`` for every OpenClaw agent), or a list of them. The ``store`` column
        of ``sessions`` says which each session came from. ``index``: the DuckDB
        file to keep the index in (default: :func:`default_index_path`; ``":memory:"`` for none):
        a path where nothing is yet, or an index pikit made. Anything else (another database, a
        file that is not a database) is refused with :class:`~pikit.corpus.CorpusIndexError`,
        unchanged; a damaged index pikit made is moved aside and built again, with an
        :class:`~pikit.corpus.IndexRebuiltWarning` saying where it went. ``lock_wait``:
        seconds to wait for an index another process holds (DuckDB lets one process at a time
        open it), then :class:`~pikit.corpus.IndexHeldError` naming that process.
        ``client``: a ``distributed.Client`` to scan the files on its workers
        (:func:`~pikit.corpus.connect` makes one whose scheduler was checked first); the tables are the same
        as a local scan's, and the scan is bounded in time (a :class:`~pikit.errors.PikitError` when
        the cluster has no workers or the results stop coming). ``workers``: processes
        a local scan reads changed files with (default: one per CPU, at most four; on one CPU,
        and with 1, this process). ``progress``: see :meth:`scan`.

        ``usage_only``: a scan reads a file it has not read yet for what :meth:`usage_rows` needs
        alone (its assistant messages' usage, summary calls, the tree; not the content of messages),
        which makes a first scan several times cheaper. The first call that needs anything more
        (any table, :meth:`sql`, :meth:`rows`, :meth:`search`, :attr:`connection`, ...) reads those
        files again in full first, so what a table holds is always what a full scan gives. ``pikit
        usage`` opens the corpus so.
        """
        if agent_dir is not None:
            if root is not None:
                raise PikitError(Wording("give {root} or {agent_dir}, not both", {"root": "root",
                                                                                 "agent_dir": "agent_dir"}))
            root = agent_root(agent_dir)
        path = os.fspath(index) if index is not None else default_index_path(root)
        opened = _index.Index(path, owned=index is None, lock_wait=lock_wait)
        corpus = cls(root, opened, client, workers, owned=index is None, lock_wait=lock_wait, usage_only=usage_only)
        _warn(opened.notes)
        if scan:
            try:
                corpus.scan(progress)
            except BaseException:  # (a scan that stopped: the index keeps what it read, for the next one)
                corpus.close()
                raise
        return corpus

    def scan(self, progress: Progress = None) -> _index.ScanReport:
        """Read what changed since the last scan (new files, appended lines, rewritten files).

        ``progress``: by default a bar in a notebook when there are 32 MB
        or more to read, nothing elsewhere; ``True`` such a bar anywhere; ``False`` none; a
        callback is called ``(bytes read, bytes to read)`` as each file's result arrives (from the
        Dask workers too).
        """
        self._progress = progress  # (a scan again on an index built anew reports the same way)
        return self._guarded(lambda: self._scan(progress), scan=False)

    def _scan(self, progress: Progress) -> _index.ScanReport:
        if self.client is not None:
            from ._dask import scan_distributed

            self.last_scan = scan_distributed(self._index, self.root, self.client, progress)
        else:
            self.last_scan = _index.scan(self._index, self.root, progress, self.workers, usage_only=self._usage_only)
        return self.last_scan

    def _whole(self) -> None:
        """Read again in full the files a scan read for usage alone (``usage_only``), once, before anything but a
        usage report reads the index."""
        if self._usage_only:
            self._usage_only = False
            if self._guarded(self._index.partial, scan=False):
                self._guarded(lambda: self._scan(self._progress), scan=False)

    def _guarded(self, run: Callable[[], T], *, scan: bool = True) -> T:
        """``run()``; once more on an index built anew when DuckDB finds the index damaged (``scan``: a query,
        run again after a scan).

        A write that fails for want of room or permission is a :class:`CorpusIndexError` naming the folder.
        A query's own error (the caller's SQL, a file it reads) is raised as it is: the index is only
        taken for damaged when a full read of its own tables fails too.
        """
        import duckdb

        try:
            return run()
        except duckdb.Error as exc:
            if scan and self._writing_index(exc):
                self._recover(exc)  # (raises: the index's folder has no room or no permission)
            if scan and not (is_damage(exc) and self._damaged()):
                raise
            self._recover(exc)
        try:
            if scan:
                self._scan(self._progress)
            return run()
        except duckdb.Error as exc:
            self._recover(exc, again=True)
            raise  # (not reached)

    def _damaged(self) -> bool:
        """Whether reading every row of the index's own tables fails on damage."""
        import duckdb

        cursor = self._index.con.cursor()  # (its own catalog: not what the caller's query may have attached or used)
        try:
            names = [row[0] for row in cursor.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall()]
            for name in names:
                cursor.execute(f'SELECT sum(hash(t)) FROM "{name}" AS t').fetchall()
        except duckdb.Error as exc:
            return is_damage(exc)
        finally:
            cursor.close()
        return False

    def _writing_index(self, exc: Exception) -> bool:
        """Whether ``exc`` is a write of the index's own files that failed (a query's error names other files)."""
        path = self._index.path
        return path != ":memory:" and is_unwritable(exc) and not is_damage(exc) and os.path.basename(path) in str(exc)

    def _recover(self, exc: Exception, *, again: bool = False) -> None:
        """Move a damaged index aside and open a new one in its place; raise for any other failure."""
        path = self._index.path
        if is_unwritable(exc) and not is_damage(exc) and path != ":memory:":
            raise unwritable(os.path.dirname(path) or ".", exc) from None
        if not is_damage(exc) or path == ":memory:":
            raise exc
        if again:
            raise CorpusIndexError(path, f"damaged again once built anew ({words(exc)})", "pass another {index}") \
                from None
        self.close()
        moved = move_aside(os.path.abspath(path))
        self._index = _index.Index(path, owned=self._owned, lock_wait=self._lock_wait)
        _warn([f"{path}: the index was damaged ({words(exc)}); moved to {moved} and built again",
               *self._index.notes])

    @property
    def connection(self) -> Any:
        """The DuckDB connection holding the tables."""
        self._whole()
        return self._index.con

    @property
    def index_path(self) -> str:
        """The DuckDB file of the index."""
        return self._index.path

    def sql(self, query: str, params: Any = None) -> pd.DataFrame:
        """Run a query over the tables; the result as a DataFrame."""
        import duckdb

        self._whole()
        try:
            return self._guarded(lambda: self._index.con.execute(query, params).df())
        except duckdb.Error as exc:
            raise PikitError(f"query failed: {words(exc)}") from None

    def rows(self, query: str, params: Any = None) -> list[tuple[Any, ...]]:
        """Run a query over the tables; the rows as tuples."""
        self._whole()
        return self._own_rows(query, params)

    def _own_rows(self, query: str, params: Any = None) -> list[tuple[Any, ...]]:
        """:meth:`rows` of a query pikit wrote that reads only what a usage-only scan keeps whole."""
        return self._guarded(lambda: self._index.con.execute(query, params).fetchall())

    def problem_counts(self) -> list[tuple[str, int]]:
        """How many problems of each kind the index holds, by kind (a usage-only scan lists every one)."""
        return [(kind, int(n)) for kind, n in self._own_rows(
            "SELECT kind, count(*) AS n FROM problems GROUP BY kind ORDER BY kind")]

    def evaluate(self) -> int:
        """Evaluate the recorded compactions of every file not evaluated since the scan last read it (tables
        ``evaluations`` and ``evaluation_facts``, what :func:`pikit.evaluate` gives); the number of files
        evaluated. Those two tables' properties call it; an SQL query over them sees what it filled in."""
        self._whole()
        from ._evaluated import evaluate

        return self._guarded(lambda: evaluate(self._index, self.workers))

    def table(self, name: str) -> pd.DataFrame:
        """One declared table as a DataFrame with its declared columns and dtypes (the evaluations filled in
        first: :meth:`evaluate`)."""
        if name not in TABLES:
            raise PikitError(f"no table {name!r}; tables: {', '.join(TABLES)}")
        self._whole()
        if name in ("evaluations", "evaluation_facts"):
            self.evaluate()
        from ._frames import typed

        order = {"sessions": "started DESC, path", "problems": "path, line, kind, message",
                 "branches": "path, leaf_id, is_active, length, own_entries",
                 "compactions": "path, timestamp, entry_id, tokens_before",
                 "evaluations": "path, entry_id", "evaluation_facts": "path, entry_id, kind, text, source"
                 }.get(name, "path, entry_index")
        columns = ", ".join(f'"{c}"' for c, _, _ in TABLES[name])
        query = f'SELECT {columns} FROM "{name}" ORDER BY {order}'
        return typed(self._guarded(lambda: self._index.con.sql(query).to_arrow_table()), name)

    sessions = _Table("One row per session file (see ``TABLES[\"sessions\"]``), newest first.")
    messages = _Table("One row per message entry, with usage, Pi's estimate and the counting flags.")
    compactions = _Table("One row per compaction entry.")
    branches = _Table("One row per branch tip (and current leaf) of every session.")
    summary_calls = _Table("The recorded usage of compaction and branch-summary calls.")
    evaluations = _Table("One row per compaction: what it kept of the span it replaced (pikit evaluate's recall).")
    evaluation_facts = _Table("One row per fact of each compaction's replaced span, kept or lost.")
    problems = _Table("Everything that went wrong: unreadable, damaged, vanished files, non-sessions.")

    def timezone(self, timezone: str | None = None) -> str:
        """``timezone`` checked, or the machine's time zone."""
        name = timezone or self._index.con.execute("SELECT current_setting('TimeZone')").fetchall()[0][0]
        try:
            probe = "SELECT timezone($tz, TIMESTAMPTZ '2000-01-01 00:00:00+00')"
            self._index.con.execute(probe, {"tz": name}).fetchall()
        except Exception:
            raise PikitError(f"unknown time zone {echo(name)}; use an IANA name such as Europe/Berlin or UTC") from None
        return str(name)

    def usage_rows(self, by: str | Sequence[str] = "day", *, since: str | None = None, until: str | None = None,
                   timezone: str | None = None, split_branch: bool = False,
                   last: int | None = None) -> list[dict[str, Any]]:
        """A usage report as JSON-ready rows (``key``, ``branch`` with ``split_branch``, the usage fields).

        ``by``: ``day``, ``week`` (the date of its Monday), ``month``, ``session``, ``model`` or
        ``project``. ``last``: the last ``last`` days, today included (instead of ``since``).

        ``by`` several keys (``["day", "model"]``, or ``"day,model"``): one row per combination that has
        usage, each key under its own name in place of ``key`` (``{"day": …, "model": …, …}``), ordered by
        the keys in turn; the totals are those of any one key.
        """
        keys = usage_keys(by)
        if last is not None:
            if since is not None:
                raise PikitError(Wording("give {last} or {since}, not both", {"last": "last", "since": "since"}))
            since = last_days(last, self.timezone(timezone))
        sql, params = usage_query(keys[0] if len(keys) == 1 else keys, since=since, until=until,
                                  timezone=self.timezone(timezone), split_branch=split_branch)
        rows = []
        for key, branch, *values, _last in self._own_rows(sql, params):
            row: dict[str, Any] = {"key": key} if len(keys) == 1 else dict(zip(keys, key, strict=True))
            if split_branch:
                row["branch"] = branch
            row.update(zip(FIELDS, (int(v) if i not in (5, 7) else float(v) for i, v in enumerate(values)),
                           strict=True))
            rows.append(row)
        return rows

    def usage(self, by: str | Sequence[str] = "day", **options: Any) -> pd.DataFrame:
        """A usage report (see :meth:`usage_rows`) as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.usage_rows(by, **options))

    def search_sessions(self, words: str) -> list[str]:
        """Paths of the sessions whose messages hold every word (each somewhere in them, in any case, also
        inside a longer word), sorted.

        What is searched is the text of every user and assistant message (the first 4,000
        characters of each), in any entry of the file, on any branch. Not searched: thinking,
        tool calls, tool results, summaries, custom messages, and the columns of ``sessions``
        (project, name, models). ``pikit sessions --search`` and the search box of
        :class:`pikit.widgets.SessionBrowser` call this; :meth:`search` says which entries match. A
        lone surrogate in a word is read as U+FFFD, as the index holds it in the text.
        """
        terms = [without_lone_surrogates(w).lower() for w in words.split() if w]
        if not terms:
            return []
        conditions = " AND ".join(f"bool_or(contains(lower(text), $w{i}))" for i in range(len(terms)))
        params = {f"w{i}": t for i, t in enumerate(terms)}
        sql = (f"SELECT f.path FROM texts t JOIN files f USING (file_id) WHERE t.kind IN ('user', 'assistant') "
               f"GROUP BY f.path HAVING {conditions} ORDER BY f.path")
        return [p for (p,) in self.rows(sql, params)]

    def search(self, query: str, *, kinds: str | Sequence[str] | None = None, regex: bool = False,
               limit: int = 100, offset: int = 0, redactor: Redactor | None = None) -> list[SearchHit]:
        """The entries whose text matches ``query``: one :class:`~pikit.corpus.SearchHit` per entry and kind
        of text (where it is: file, session, entry id, timestamp, on the active branch or not; a snippet).

        ``query``: words, each of which the entry's text holds (in any case, also inside a longer
        word); with ``regex=True`` a regular expression instead (DuckDB's RE2 finds the entries,
        case-sensitive unless it starts with ``(?i)``; it must also be one Python reads, which cuts
        the snippets). ``kinds``: which texts to look through (comma-separated or a list; default
        all): ``user``, ``assistant`` (message text), ``thinking``, ``tool`` (a tool result's first
        500 characters), ``summary`` (compactions and branch summaries); a message's text counts up
        to its first 4,000 characters. Hits come newest session first, in entry order within a
        session; ``limit`` and ``offset`` page through them. ``redactor``: each hit's text has its
        secrets replaced (placeholders numbered within this call) before its snippet is cut.
        """
        import duckdb

        from ._search import hits, search_query

        sql, params, pattern = search_query(query, kinds=kinds, regex=regex, limit=limit, offset=offset)
        try:
            rows = self.rows(sql, params)
        except duckdb.InvalidInputException as exc:  # (a pattern Python reads and RE2 does not)
            raise PikitError(Wording("{query} is not a regular expression RE2 reads: {why}", {"query": "query"},
                                     why=words(exc))) from None
        return self._guarded(lambda: hits(rows, self._index.states, pattern, redactor))

    def close(self) -> None:
        """Close the index (the DuckDB file stays for the next :meth:`open`)."""
        import duckdb

        with contextlib.suppress(duckdb.Error):  # (an index DuckDB gave up on closes all the same)
            self._index.close()

    def __enter__(self) -> Corpus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Corpus({self.root!r}, index={self.index_path!r})"


def _warn(notes: list[str]) -> None:
    for note in notes:
        warnings.warn(note, IndexRebuiltWarning, stacklevel=3)
