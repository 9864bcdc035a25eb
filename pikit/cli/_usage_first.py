"""A first ``pikit usage`` or ``pikit sessions`` of a directory: answered from its scan in memory, the index
written afterwards.

Before a directory has an index, the report or the list comes from the files just read
(``pikit.corpus._inmemory``, the index's own rules) without DuckDB: the answer is printed,
then the index is written from the same reads, by the ``pikit`` program in a process of its
own that goes on after the command has ended. A lock beside the index (``INDEX.building``)
stands while it is written, and every command or notebook opening the index waits for it, so
each finds it complete.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

# The options a first answer understands; any other (at a value other than its default) takes the usual way.
_UNDERSTOOD = frozenset(("dir", "agent_dir", "index", "engine", "scheduler", "no_progress", "json", "run", "detach"))
_USAGE_OPTIONS = _UNDERSTOOD | {"by", "timezone"}
_SESSIONS_OPTIONS = _UNDERSTOOD | {"limit"}

__all__ = ["first_sessions", "first_usage"]

# Bytes to read up to which a first report is made in memory (what it holds of them, about 12%, stays while the
# index is written); beyond, the scan writes the index as it reads, its memory bounded whatever the size. Up to
# it the files are read in this process: with two worker processes a first report took longer at every size
# measured, 119 MB and 806 MB (benchmarks/README.md).
_MEMORY_BYTES = 1024 * 1024 * 1024
# The same for a full read (``pikit sessions``): it holds about 40% of what it read (the search text among it).
_FULL_MEMORY_BYTES = 256 * 1024 * 1024
_ROOM_BYTES = 16 * 1024 * 1024  # free bytes an index needs at least (it takes a fifth of the sessions' size or less)


_Note = Callable[[Any, int, list[tuple[str, int]]], None]
# What answers from the results read: the files' results, the root, how many files, the listing's problems; False
# when only the index can tell (nothing shown).
_Answer = Callable[[list[Any], Any, int, list[tuple[str, str, str]]], bool]


def _eligible(args: argparse.Namespace, understood: frozenset[str]) -> bool:
    if os.name != "posix" or args.engine != "local" or (args.dir is not None and args.agent_dir is not None):
        return False
    # (dates, branches, searches, and whatever the command learns later: from the index)
    return not any(value not in (None, False) for name, value in vars(args).items() if name not in understood)


def first_usage(args: argparse.Namespace, show: Callable[[list[dict[str, Any]]], None], note: _Note) -> bool:
    """Answer ``args`` (checked) from a scan in memory when its index does not exist yet: ``show`` the rows and
    ``note`` the files and problems, then write the index; False (nothing shown) when the index must answer."""
    if not _eligible(args, _USAGE_OPTIONS):
        return False
    from ..corpus._inmemory import QUICK_KEYS

    if not set(args.by) <= QUICK_KEYS:
        return False

    def answer(results: list[Any], root: Any, files: int, listing: list[tuple[str, str, str]]) -> bool:
        import zoneinfo

        from ..corpus._inmemory import problem_counts, usage_rows

        rows = usage_rows(results, args.by, zoneinfo.ZoneInfo(args.timezone) if args.timezone else None)
        if rows is None:
            return False
        note(root, files, problem_counts(results, listing))
        show(rows)
        return True

    return _first(args, answer, usage_only=True)


def first_sessions(args: argparse.Namespace, fields: tuple[str, ...],
                   show: Callable[[list[tuple[Any, ...]]], None], note: _Note) -> bool:
    """Answer ``pikit sessions`` (checked) from a scan in memory when its index does not exist yet: ``note`` the
    files and problems and ``show`` the rows of ``fields``, then write the index; False (nothing shown) when the
    index must answer (a version-1 file beside its migrated copy among them)."""
    if not _eligible(args, _SESSIONS_OPTIONS):
        return False

    def answer(results: list[Any], root: Any, files: int, listing: list[tuple[str, str, str]]) -> bool:
        from ..corpus._inmemory import problem_counts, session_rows

        rows = session_rows(results, fields, args.limit)
        if rows is None:
            return False
        note(root, files, problem_counts(results, listing))
        show(rows)
        return True

    return _first(args, answer, usage_only=False)


def _first(args: argparse.Namespace, answer: _Answer, *, usage_only: bool) -> bool:
    """Scan into memory and ``answer`` when the index does not exist yet, then write the index (a usage-only one:
    ``usage_only``); False when the index must answer (written first from what was read, if anything was)."""
    from ..corpus._corpus import default_index_path
    from ..corpus._discover import agent_root
    from ..corpus._indexfile import building, built

    root = agent_root(args.agent_dir) if args.agent_dir is not None else args.dir
    path = args.index if args.index is not None else default_index_path(root)
    absolute = os.path.abspath(path)
    if path == ":memory:" or os.path.lexists(absolute) or os.path.lexists(absolute + ".wal"):
        return False
    try:
        os.makedirs(os.path.dirname(absolute), exist_ok=True)
    except OSError:
        return False  # (the index says why)
    lock = building(absolute)
    if lock is None:
        return False
    if os.path.lexists(absolute):  # (made meanwhile by another process: it answers)
        built(absolute, lock)
        return False
    try:
        read = _read(args, root, path, answer, usage_only)
    except BaseException:
        built(absolute, lock)
        raise
    if read is None:
        built(absolute, lock)
        return False
    results, answered = read
    if not answered:  # (the index answers: written here first, from what was read)
        _write(args, root, path, lock, results, usage_only)
        return False
    _write_after(args, root, path, lock, results, usage_only)
    return True


def _room(folder: str, size: int) -> bool:
    """Whether an index of ``size`` bytes of sessions has room in ``folder`` (free space, and the size a file of
    this process may grow to): a writer that fails after the answer could not say so, so where room is short the
    usual way writes the index first, and names the folder when it fails."""
    import resource

    need = max(_ROOM_BYTES, size // 2)
    try:
        status = os.statvfs(folder)
    except OSError:
        return False
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return status.f_bavail * status.f_frsize >= need and (limit == resource.RLIM_INFINITY or limit >= need)


def _read(args: argparse.Namespace, root: Any, path: str, answer: _Answer,
          usage_only: bool) -> tuple[list[Any], bool] | None:
    """Scan ``root`` into memory (for usage alone: ``usage_only``) and ``answer``; the results read, and whether
    they answered (not when only the index can tell); None (nothing read) when there is more to read than
    :data:`_MEMORY_BYTES` (:data:`_FULL_MEMORY_BYTES`), or too little room for the index beside ``path``."""
    from .._formatting import plural
    from .._progress import BYTES, tracked
    from ..corpus._discover import find_files
    from ..corpus._index import Job, _local_results, _to_read
    from ._common import terminal_progress

    found = find_files(root)
    jobs: list[Job] = [(file, number, None, None, None, [], usage_only) for number, file in enumerate(found.files, 1)]
    size = sum(map(_to_read, jobs))
    bound = _MEMORY_BYTES if usage_only else _FULL_MEMORY_BYTES
    if size > bound or not _room(os.path.dirname(os.path.abspath(path)), size):
        return None
    with terminal_progress(args) as progress:
        results = list(tracked(_local_results(jobs, 1), progress,  # (see _MEMORY_BYTES)
                               f"scanning {plural(len(jobs), 'file')}", size, BYTES, lambda result: result.bytes_read))
    if not answer(results, root, len(found.files), found.problems):
        return results, False
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    return results, True


def _write_after(args: argparse.Namespace, root: Any, path: str, lock: int, results: list[Any],
                 usage_only: bool) -> None:
    """Write the index from ``results``: in a process of its own when the ``pikit`` program runs (``detach``),
    else here."""
    if getattr(args, "detach", False):
        if os.fork():
            os.close(lock)  # (the writer holds the lock now)
            return
        try:
            os.setsid()
            quiet = os.open(os.devnull, os.O_RDWR)
            for stream in (0, 1, 2):
                os.dup2(quiet, stream)
            _write(args, root, path, lock, results, usage_only)
        finally:
            os._exit(0)
    _write(args, root, path, lock, results, usage_only)


def _write(args: argparse.Namespace, root: Any, path: str, lock: int, results: list[Any], usage_only: bool) -> None:
    """The index of ``root`` at ``path`` as a scan writes it (a usage-only one: ``usage_only``), from what was read
    (a file changed since is read again)."""
    from ..corpus import _index
    from ..corpus._filescan import scan_file
    from ..corpus._indexfile import built, is_unwritable, unwritable

    read = {(result.path, result.file_id): result for result in results}

    def reuse(jobs: list[Any]) -> Iterator[Any]:
        for job in jobs:
            known = read.pop((job[0], job[1]), None) if job[2] is None else None
            yield known if known is not None else scan_file(*job)

    import duckdb

    try:
        index = _index.Index(path, owned=args.index is None, builder=True)
        try:
            _index.scan(index, root, runner=reuse, usage_only=usage_only)
        finally:
            index.close()
    except duckdb.Error as exc:
        if is_unwritable(exc):  # (as the usual way says it)
            raise unwritable(os.path.dirname(os.path.abspath(path)), exc) from None
        raise
    finally:
        built(os.path.abspath(path), lock)
