"""Data sets made from a corpus: its index tables as Parquet, its sessions as ATIF trajectories.

:func:`export_parquet` copies each table of :data:`~pikit.corpus.TABLES` out of the
DuckDB index with DuckDB's own ``COPY … TO … (FORMAT parquet)``: the index is only read, except
that the evaluations of recorded compactions (:meth:`Corpus.evaluate`) are filled in first.
:func:`export_atif` writes every session's active branch as one ATIF file
(:func:`pikit.corpus.atif_trajectory`); every session passes through :func:`export_session`
on its way. Both write into a folder that is new or empty (``overwrite=True`` writes into one
that is not, replacing the files of the same names), each file whole or not at all.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import jsjson
from .._format.write import write_new
from .._session import Session, load
from ..errors import PikitError, Wording, WriteError
from ._atif import atif_trajectory
from ._schema import TABLES

if TYPE_CHECKING:
    from .._redaction.redactor import Placeholders, Redactor
    from ._corpus import Corpus

__all__ = ["Exported", "check_folder", "export_atif", "export_parquet", "export_session", "prepare_folder"]

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


def check_folder(out: str | os.PathLike[str], *, overwrite: bool = False) -> str:
    """Check, before any work, that ``out`` may be written into: a new folder in an existing one, an empty
    folder, or (with ``overwrite``) any folder."""
    path = os.fspath(out)
    if os.path.lexists(path) and not os.path.isdir(path):
        raise WriteError(f"{path}: is not a folder; give a new or empty folder to write the export into")
    if os.path.isdir(path):
        if os.listdir(path) and not overwrite:
            raise WriteError(Wording("{path}: is not empty; choose a new or empty folder (or pass {overwrite} to "
                                     "write into it, replacing files of the same names)",
                                     {"overwrite": "overwrite=True"}, path=path))
        return path
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise WriteError(f"{path}: folder {parent} does not exist")
    return path


def prepare_folder(out: str | os.PathLike[str], *, overwrite: bool = False) -> str:
    """:func:`check_folder`, then the folder made when it is missing."""
    path = check_folder(out, overwrite=overwrite)
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
    folder = prepare_folder(out, overwrite=overwrite)
    done = Exported(folder)
    if any(name in EVALUATED for name in tables):
        corpus.evaluate()
    redacting = _Redacting(redactor, placeholders, done.redacted) if redactor is not None else None
    if redacting is not None:
        corpus.connection.create_function(_REDACT_SQL, redacting.text, ["VARCHAR"], "VARCHAR")
    try:
        for name in tables:
            _copy_table(corpus, name, folder, redacting is not None)
            done.files[os.path.join(folder, f"{name}.parquet")] = corpus.rows(f'SELECT count(*) FROM "{name}"')[0][0]
    finally:
        if redacting is not None:
            corpus.connection.remove_function(_REDACT_SQL)
    return done


#: The SQL name of the redaction function an export with a redactor registers while it runs.
_REDACT_SQL = "pikit_export_redact"


def _copy_table(corpus: Corpus, name: str, folder: str, redact: bool) -> None:
    """``OUT/<name>.parquet``, whole or not at all; with ``redact``, text columns but ids redacted."""
    target = os.path.join(folder, f"{name}.parquet")
    partial = os.path.join(folder, f".{name}.parquet.partial")
    columns = ", ".join(f'{_REDACT_SQL}("{c}") AS "{c}"' if redact and _redactable(c, dtype) else f'"{c}"'
                        for c, dtype, _ in TABLES[name])
    try:
        corpus.connection.execute(f'COPY (SELECT {columns} FROM "{name}" ORDER BY {ORDER[name]}) TO '
                                  f"{_sql_text(partial)} (FORMAT parquet)")
        os.replace(partial, target)
    except BaseException:
        if os.path.exists(partial):
            os.remove(partial)
        raise


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
        try:
            session = export_session(path, redacting)
        except PikitError as exc:  # vanished or unreadable since the scan
            done.skipped[path] = str(exc)
            continue
        made = atif_trajectory(session)
        if made is None:
            done.skipped[path] = "its active branch has no message"
            continue
        made["extra"]["pi"]["exported_by"] = f"pikit {__version__}"
        shown = path if redacting is None else redacting.text(path) or ""
        made["extra"]["pi"]["file"] = shown
        target = os.path.join(folder, _name(shown, taken))
        write_new(target, [jsjson.stringify_bytes(made)], overwrite=True)
        done.files[target] = len(made["steps"])
    return done
