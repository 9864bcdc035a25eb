"""Data sets made from a corpus: its index tables as Parquet, its sessions as ATIF trajectories.

:func:`export_parquet` copies each table of :data:`~pikit.corpus.TABLES` out of the
DuckDB index with DuckDB's own ``COPY … TO … (FORMAT parquet)``: the index is only read, except
that the evaluations of recorded compactions (:meth:`Corpus.evaluate`) are filled in first.
:func:`export_atif` writes every session's active branch as one ATIF file
(:func:`pikit.corpus.atif_trajectory`); every session passes through :func:`export_session`
on its way. Both write into a folder that is new or empty (``overwrite=True`` writes into one
that is not, replacing the files of the same names), each file whole or not at all. The Parquet
tables are all or none: each is written under a temporary name in the folder, and only when every
one is written are they renamed; a write that fails (no room, no permission) removes them all.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import jsjson
from .._format.write import write_new
from .._session import Session, load
from ..errors import PikitError, Wording, WriteError
from ._atif import atif_trajectory
from ._indexfile import is_full, unwritable_reason
from ._schema import TABLES

if TYPE_CHECKING:
    from .._redaction.redactor import Placeholders, Redactor
    from ._corpus import Corpus

__all__ = ["Exported", "check_folder", "export_atif", "export_parquet", "export_session", "parquet_files",
           "prepare_folder"]

#: The order rows are written in (stable across runs), per table.
ORDER = {"sessions": "path", "messages": "path, entry_index", "compactions": "path, timestamp, entry_id",
         "branches": "path, leaf_id, is_active, length", "summary_calls": "path, entry_index",
         "problems": "path, line, kind, message", "evaluations": "path, entry_id",
         "evaluation_facts": "path, entry_id, kind, text, source"}
#: The tables :meth:`Corpus.evaluate` fills in on demand: an export of one evaluates first.
EVALUATED = ("evaluations", "evaluation_facts")


@dataclass
class Exported:
    """What an export wrote: ``files`` (path → rows or steps) and ``skipped`` (what → why)."""

    folder: str
    files: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    redacted: dict[str, int] = field(default_factory=dict)  # with a redactor: kind → strings replaced


class _Redacting:
    """One redaction for a whole export: a :class:`~pikit.Redactor`, one numbering, the counts per kind."""

    def __init__(self, redactor: Redactor, placeholders: Placeholders | None, counts: dict[str, int]) -> None:
        from .._redaction.redactor import Placeholders

        self.redactor = redactor
        self.placeholders = placeholders if placeholders is not None else Placeholders()
        self.counts = counts

    def text(self, value: str | None) -> str | None:
        return None if value is None else self.redactor.redact_text(value, self.placeholders, self.counts)

    def session(self, session: Session) -> Session:
        from .._redaction.session import redact

        copy, report = redact(session, self.redactor, placeholders=self.placeholders)
        for kind, n in report.counts.items():
            self.counts[kind] = self.counts.get(kind, 0) + n
        return copy


def check_folder(out: str | os.PathLike[str], *, overwrite: bool = False, files: Sequence[str] = ()) -> str:
    """Check, before any work, that ``out`` may be written into: a new folder in an existing one, an empty
    folder, or (with ``overwrite``) any folder in which none of ``files`` (the names the export will write) is a
    folder in the way."""
    path = os.fspath(out)
    if os.path.lexists(path) and not os.path.isdir(path):
        raise WriteError(f"{path}: is not a folder; give a new or empty folder to write the export into")
    if os.path.isdir(path):
        if os.listdir(path) and not overwrite:
            raise WriteError(Wording("{path}: is not empty; choose a new or empty folder (or pass {overwrite} to "
                                     "write into it, replacing files of the same names)",
                                     {"overwrite": "overwrite=True"}, path=path))
        for name in files:
            target = os.path.join(path, name)
            if os.path.isdir(target) and not os.path.islink(target):
                raise WriteError(f"{target}: is a folder, in the way of the export; move it or choose another "
                                 "folder")
        return path
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise WriteError(f"{path}: folder {parent} does not exist")
    return path


def prepare_folder(out: str | os.PathLike[str], *, overwrite: bool = False, files: Sequence[str] = ()) -> str:
    """:func:`check_folder`, then the folder made when it is missing."""
    path = check_folder(out, overwrite=overwrite, files=files)
    if not os.path.isdir(path):
        try:
            os.mkdir(path)
        except OSError as exc:
            raise WriteError(f"{path}: cannot make the folder ({exc.strerror or exc})") from None
    return path


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def export_parquet(corpus: Corpus, out: str | os.PathLike[str], *, overwrite: bool = False,
                   tables: Sequence[str] = tuple(TABLES), redactor: Redactor | None = None,
                   placeholders: Placeholders | None = None) -> Exported:
    """Write each of ``tables`` (default: all) as ``OUT/<table>.parquet``, with its declared columns and types.

    With a ``redactor`` (:class:`~pikit.Redactor`), every text column but the ids goes through it
    on its way out (``placeholders`` numbers the secrets, shared with another export to give the
    same secret the same placeholder in both); the index keeps its own values.
    """
    unknown = [name for name in tables if name not in TABLES]
    if unknown:
        raise PikitError(f"no table {unknown[0]!r}; tables: {', '.join(TABLES)}")
    if any(name in EVALUATED for name in tables):
        corpus.evaluate()  # (before the folder is made: an index that cannot grow leaves nothing behind)
    made = not os.path.isdir(out)
    folder = prepare_folder(out, overwrite=overwrite, files=parquet_files(tables))
    done = Exported(folder)
    redacting = _Redacting(redactor, placeholders, done.redacted) if redactor is not None else None
    functions = _functions(redacting) if redacting is not None else {}
    for sql_name, (function, arguments) in functions.items():
        corpus.connection.create_function(sql_name, function, ["VARCHAR"] * arguments, "VARCHAR",
                                          null_handling="special")
    written: dict[str, str] = {}  # target → its temporary name
    try:
        for name in tables:
            target = os.path.join(folder, f"{name}.parquet")
            written[target] = _copy_table(corpus, name, folder, redacting is not None)
            done.files[target] = corpus.rows(f'SELECT count(*) FROM "{name}"')[0][0]
        _rename_all(written, folder)
    except BaseException as exc:
        _remove_partials(folder, tables, made)
        if isinstance(exc, OSError) or _is_duckdb_io(exc):
            raise _write_failed(folder, exc) from None
        raise
    finally:
        for sql_name in functions:
            corpus.connection.remove_function(sql_name)
    return done


def parquet_files(tables: Sequence[str] = tuple(TABLES)) -> list[str]:
    """The names :func:`export_parquet` writes the ``tables`` under."""
    return [f"{name}.parquet" for name in tables]


def _rename_all(written: dict[str, str], folder: str) -> None:
    """Every table from its temporary name to its own; the temporary names go as they are renamed."""
    renamed = 0
    try:
        for target, partial in written.items():
            os.replace(partial, target)
            renamed += 1
    except OSError as exc:
        done = f"; {renamed} of {len(written)} tables were in place" if renamed else ""
        raise WriteError(f"{folder}: cannot put the Parquet tables in place ({exc.strerror or exc}){done}") from None


def _partial(folder: str, name: str) -> str:
    """The temporary name of the table ``name`` while an export writes it."""
    return os.path.join(folder, f".{name}.parquet.partial")


def _remove_partials(folder: str, tables: Sequence[str], made: bool) -> None:
    """Remove the temporary files of an export (a write that failed may have left its own half-written), and the
    folder it ``made`` when nothing else is in it."""
    for name in tables:
        with contextlib.suppress(OSError):
            os.remove(_partial(folder, name))
    if made:
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def _is_duckdb_io(exc: BaseException) -> bool:
    import duckdb

    return isinstance(exc, duckdb.IOException | duckdb.PermissionException)


def _write_failed(folder: str, exc: BaseException) -> WriteError:
    """One line: where and why the export could not be written, and how to fix it; nothing was left behind."""
    reason = unwritable_reason(exc)
    fix = "make room there or choose another folder" if is_full(reason) else "choose a folder you can write"
    return WriteError(f"{folder}: cannot write the Parquet tables there ({reason}); nothing was written: {fix}")


#: The SQL name of the redaction function an export with a redactor registers while it runs.
_REDACT_SQL = "pikit_export_redact"
#: The columns the index holds cut short: redacted whole, then cut (:mod:`._recut`), by the SQL expression.
_RECUT = {("sessions", "first_user_message"): 'pikit_export_first_user("path", "first_user_message")',
          ("sessions", "title"): 'pikit_export_title("title", "name", "path", "first_user_message", "session_id")',
          ("evaluation_facts", "text"): 'pikit_export_fact("text")'}


def _functions(redacting: _Redacting) -> dict[str, tuple[Any, int]]:
    """The SQL functions a redacting export registers: name → (function, number of arguments)."""
    from ._recut import Recut

    recut = Recut(redacting.text)
    return {_REDACT_SQL: (redacting.text, 1), "pikit_export_first_user": (recut.first_user, 2),
            "pikit_export_title": (recut.title, 5), "pikit_export_fact": (recut.fact, 1)}


def _copy_table(corpus: Corpus, name: str, folder: str, redact: bool) -> str:
    """``OUT/.<name>.parquet.partial``, the table under its temporary name (its path); with ``redact``, text
    columns but ids redacted."""
    partial = _partial(folder, name)
    columns = ", ".join(f'{_redacted(name, c)} AS "{c}"' if redact and _redactable(c, dtype) else f'"{c}"'
                        for c, dtype, _ in TABLES[name])
    corpus.connection.execute(f'COPY (SELECT {columns} FROM "{name}" ORDER BY {ORDER[name]}) TO '
                              f"{_sql_text(partial)} (FORMAT parquet)")
    return partial


def _redacted(table: str, column: str) -> str:
    """The SQL expression of a redacted column: redacted whole, then cut (:data:`_RECUT`), or redacted as it is."""
    return _RECUT.get((table, column), f'{_REDACT_SQL}("{column}")')


def _redactable(column: str, dtype: str) -> bool:
    """Whether a redacting export passes ``column`` through the redactor: text, and not an entry or session id."""
    return dtype == "string" and not column.endswith("_id") and column not in ("source", "usage_key")


def export_session(path: str, redacting: _Redacting | None = None) -> Session:
    """One session as an export reads it: the file loaded, damaged lines skipped, and redacted when the
    export redacts (every export passes each session through here)."""
    session = load(path)
    return session if redacting is None else redacting.session(session)


def _name(path: str, taken: set[str]) -> str:
    stem = os.path.basename(path)
    stem = stem[:-len(".jsonl")] if stem.endswith(".jsonl") else stem
    name, n = f"{stem}.json", 2
    while name in taken:
        name, n = f"{stem}-{n}.json", n + 1
    taken.add(name)
    return name


def export_atif(corpus: Corpus, out: str | os.PathLike[str], *, overwrite: bool = False,
                redactor: Redactor | None = None, placeholders: Placeholders | None = None) -> Exported:
    """Write every session's active branch as ``OUT/<session file name>.json``, an ATIF trajectory.

    A version-1 file whose migrated copy the corpus holds is left out (the copy is the same
    session), and so is a session whose branch has no step; ``skipped`` says why. With a
    ``redactor``, every session is redacted first (:func:`pikit.redact`, numbered by
    ``placeholders``), and so are the file names and paths the trajectories record.
    """
    from .._version import __version__

    folder = prepare_folder(out, overwrite=overwrite)
    done = Exported(folder)
    redacting = _Redacting(redactor, placeholders, done.redacted) if redactor is not None else None
    taken: set[str] = set()
    paths = [row[0] for row in corpus.rows("SELECT path FROM sessions WHERE migrated_to IS NULL ORDER BY path")]
    for path in paths:
        shown = path if redacting is None else redacting.text(path) or ""  # the name skipped and written
        try:
            session = export_session(path, redacting)
        except PikitError as exc:  # vanished or unreadable since the scan
            done.skipped[shown] = str(exc) if redacting is None else redacting.text(str(exc)) or ""
            continue
        made = atif_trajectory(session)
        if made is None:
            done.skipped[shown] = "its active branch has no message"
            continue
        made["extra"]["pi"]["exported_by"] = f"pikit {__version__}"
        made["extra"]["pi"]["file"] = shown
        target = os.path.join(folder, _name(shown, taken))
        write_new(target, [jsjson.stringify_bytes(made)], overwrite=True)
        done.files[target] = len(made["steps"])
    return done
