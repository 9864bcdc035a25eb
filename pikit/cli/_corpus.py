"""``pikit sessions``, ``pikit usage`` and ``pikit problems``: a sessions directory through the corpus index."""

from __future__ import annotations

import argparse
import contextlib
import math
import shlex
import sys
import time
import warnings
from collections.abc import Iterator
from typing import Any

from .._formatting import fmt_int, plural
from .._inert import echo
from ..errors import PikitError
from ._common import terminal_progress
from ._json import corpus as corpus_json
from ._json.corpus import PROBLEM_FIELDS, SESSION_FIELDS


def _short(text: str, width: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _home(path: str) -> str:
    """A path with the home folder as ``~``."""
    import os

    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home not in ("", "/") and (path == home or path.startswith(home + "/")) else path


@contextlib.contextmanager
def _client(args: argparse.Namespace) -> Iterator[Any]:
    if args.engine != "dask":
        if args.scheduler is not None:
            raise PikitError("--scheduler goes with --engine dask")
        yield None
        return
    from ..corpus._dask import SchedulerError, connect

    try:
        with connect("local" if args.scheduler is None else args.scheduler) as client:
            yield client
    except SchedulerError as exc:
        plain = exc.address.isprintable() and exc.address.strip() == exc.address != ""
        raise PikitError(f"--scheduler {exc.address if plain else echo(exc.address)}: {exc.reason}") from None


@contextlib.contextmanager
def _opened(args: argparse.Namespace, client: Any, *, note_problems: bool = True,
            usage_only: bool = False) -> Iterator[Any]:
    """The corpus, scanned (``usage_only``: for a usage report, see ``Corpus.open``), with a note on its problems."""
    from ..corpus._indexfile import IndexRebuiltWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", IndexRebuiltWarning)
        try:
            with _held_or_copied(args, client, usage_only) as corpus:
                _notes(caught)
                if note_problems:
                    _problems_note(args, corpus)
                yield corpus
        finally:
            _notes(caught)


def _notes(caught: list[warnings.WarningMessage]) -> None:
    """Print what happened to the index (a damaged one moved aside) as notes, other warnings as Python would."""
    from ..corpus._indexfile import IndexRebuiltWarning

    for each in caught:
        if issubclass(each.category, IndexRebuiltWarning):
            print(f"pikit: note: {each.message}", file=sys.stderr)
        else:
            sys.stderr.write(warnings.formatwarning(each.message, each.category, each.filename, each.lineno,
                                                    each.line))
    caught.clear()


@contextlib.contextmanager
def _held_or_copied(args: argparse.Namespace, client: Any, usage_only: bool = False) -> Iterator[Any]:
    """The corpus on its index; when another process holds the index (a notebook with it open), on a copy of it
    brought up to date, which goes afterwards.

    DuckDB lets no other process read a file one holds for writing: the index is copied once it
    has not changed for a second (its holder is not writing it), for up to :data:`LOCK_WAIT` seconds.
    """
    import shutil

    from ..corpus._indexfile import LOCK_WAIT, IndexHeldError, copy_quietly, holder

    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            corpus = _scanned(args, args.index, client, lock_wait=1.0, usage_only=usage_only)
            break
        except IndexHeldError as held:
            try:
                copied = copy_quietly(held.path)
            except OSError as exc:
                raise IndexHeldError(held.path, held.pid, held.program, f"in use by {holder(held.pid, held.program)}"
                                     f", and it cannot be copied ({exc.strerror or exc})") from None
            if copied is not None:
                folder, copy = copied
                try:
                    with _scanned(args, copy, client, usage_only=usage_only) as corpus:
                        print(f"pikit: note: {held.path} is in use by {holder(held.pid, held.program)}; the answer "
                              "comes from a copy of it brought up to date (the index itself stays as it was)",
                              file=sys.stderr)
                        yield corpus
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
                return
            if time.monotonic() >= deadline:
                raise IndexHeldError(held.path, held.pid, held.program, f"in use by {holder(held.pid, held.program)}"
                                     f", which kept writing it for {LOCK_WAIT:g} s") from None
    with corpus:
        yield corpus


def _scanned(args: argparse.Namespace, index: str | None, client: Any, **options: Any) -> Any:
    """``Corpus.open`` on ``index``, with a progress line on a terminal while it scans."""
    from ..corpus import Corpus

    with terminal_progress(args) as progress:
        return Corpus.open(args.dir, agent_dir=args.agent_dir, index=index, client=client, progress=progress,
                           **options)


def _problems_note(args: argparse.Namespace, corpus: Any) -> None:
    report = corpus.last_scan
    problems = corpus.problem_counts() if report is not None and report.problems else []
    _note(args, corpus.root, None if report is None else report.files, problems)


def _note(args: argparse.Namespace, root: Any, files: int | None, problems: list[tuple[str, int]]) -> None:
    """The notes on a scan of ``files`` files (None: no scan) with these problems (kind, count)."""
    if files == 0:
        root = root if isinstance(root, str | None) else ", ".join(map(str, root))
        where = args.dir or root or "Pi's sessions directory"
        print(f"pikit: no session files in {where}", file=sys.stderr)
    if problems and (files is None or files or any(kind != "no-sessions" for kind, _ in problems)):
        listed = ", ".join(f"{fmt_int(n)} {kind}" for kind, n in problems)
        command = " ".join(["pikit problems", *([shlex.quote(args.dir)] if args.dir else []),
                            *(f"--agent-dir {shlex.quote(d)}" for d in args.agent_dir or ()),
                            *(["--index", shlex.quote(args.index)] if args.index else [])])
        print(f"pikit: note: {listed} (`{command}` lists them)", file=sys.stderr)


def _dump(value: Any) -> None:
    from .. import jsjson

    sys.stdout.buffer.write(jsjson.stringify_bytes(value) + b"\n")  # exact: not through the inert stream
    sys.stdout.flush()


def _order(sort: str | None) -> str:
    """The ORDER BY of ``--sort COLUMN[:asc|:desc]``: numbers and dates largest first, text A to Z by default."""
    from ..corpus._schema import TABLES

    if sort is None:
        return "started DESC NULLS LAST, path"
    name, _, way = sort.partition(":")
    types = {column: dtype for column, dtype, _ in TABLES["sessions"]}
    if name not in types:
        raise PikitError(f"--sort: no column {echo(name)}; columns: {', '.join(types)}")
    if way not in ("", "asc", "desc"):
        raise PikitError(f"--sort {echo(sort)}: after the column, :asc or :desc")
    descending = way == "desc" or (not way and types[name] in ("Int64", "Float64", "datetime64[ms, UTC]"))
    return f'"{name}" {"DESC" if descending else "ASC"} NULLS LAST, path'


def session_rows(corpus: Any, search: str | None, sort: str | None, limit: int | None,
                 offset: int = 0) -> list[tuple[Any, ...]]:
    """The rows of :data:`SESSION_FIELDS` ``pikit sessions`` lists (``search``: words, as ``--search``)."""
    order = _order(sort)
    columns = ", ".join(f'"{c}"' for c in SESSION_FIELDS)
    where, params = "", None
    if search:
        paths = corpus.search_sessions(search)
        where, params = "WHERE path IN (SELECT unnest($paths))", {"paths": paths}
    page = (f" LIMIT {int(limit)}" if limit is not None else "") + (f" OFFSET {int(offset)}" if offset else "")
    # A version-1 file beside its migrated copy is the same session: the copy stands for both.
    where = f"{where} AND migrated_to IS NULL" if where else "WHERE migrated_to IS NULL"
    rows: list[tuple[Any, ...]] = corpus.rows(f"SELECT {columns} FROM sessions {where} ORDER BY {order}{page}", params)
    return rows


def run_sessions(args: argparse.Namespace) -> int:
    if args.scheduler is not None and args.engine != "dask":
        raise PikitError("--scheduler goes with --engine dask")
    _order(args.sort)
    from ._usage_first import first_sessions

    if first_sessions(args, SESSION_FIELDS, lambda rows: _show_sessions(args, rows, 0),
                      lambda root, files, problems: _note(args, root, files, problems)):
        return 0
    with _client(args) as client, _opened(args, client) as corpus:
        rows = session_rows(corpus, args.search, args.sort, args.limit)
        merged = corpus.rows("SELECT count(*) FROM sessions WHERE migrated_to IS NOT NULL")[0][0]
    _show_sessions(args, rows, merged)
    return 0


def _show_sessions(args: argparse.Namespace, rows: list[tuple[Any, ...]], merged: int) -> None:
    if args.json:
        _dump(corpus_json.sessions(rows))
    else:
        _print_sessions(rows, merged)


def _print_sessions(rows: list[tuple[Any, ...]], merged: int) -> None:
    """Two lines a session: when, project, counts, cost and title; below, its id and file in full (``merged``:
    version-1 files not listed, their migrated copy standing for them)."""
    if not rows:
        print("no sessions")
        return
    print(f"{'started':<17} {'project':<24} {'entries':>7} {'branches':>8} {'compact':>7} {'cost $':>9}  title")
    print(f"{'':<17} session id · file")
    field = {name: i for i, name in enumerate(SESSION_FIELDS)}
    for row in rows:
        started = row[field["started"]]
        when = started.strftime("%Y-%m-%d %H:%M") if started is not None else "?"
        project = _home(str(row[field["project"]] or ""))
        project = project if len(project) <= 24 else "…" + project[-23:]
        print(f"{when:<17} {project:<24} {row[field['entries']]:>7,} {row[field['leaves']]:>8,} "
              f"{row[field['compactions']]:>7,} {row[field['cost']] or 0:>9,.2f}  {row[field['title']] or ''}")
        print(f"{'':<17} {row[field['session_id']]} · {row[field['path']]}")
    also = (f" (and {plural(merged, 'version-1 file')} not listed: the same session as "
            f"{'its migrated copy' if merged == 1 else 'their migrated copies'})") if merged else ""
    print(f"{len(rows):,} session(s){also}")


def run_problems(args: argparse.Namespace) -> int:
    with _client(args) as client, _opened(args, client, note_problems=False) as corpus:
        columns = ", ".join(f'"{c}"' for c in PROBLEM_FIELDS)
        rows = corpus.rows(f"SELECT {columns} FROM problems ORDER BY path, line, kind, message")
    if args.json:
        _dump(corpus_json.problems(rows))
        return 0
    if not rows:
        print("no problems")
        return 0
    width = min(max(len(str(kind)) for _, _, kind, _ in rows), 16)
    for path, line, kind, message in rows:
        where = f"{path}:{line}" if line is not None else str(path)
        print(f"{kind!s:<{width}}  {where}: {message}")
    print(f"{len(rows):,} problem(s)")
    return 0


def _check_usage_args(args: argparse.Namespace) -> None:
    """Mistakes in the options, before any scanning."""
    from ..corpus._usage import check_date, usage_keys

    args.by = usage_keys(args.by)
    if args.scheduler is not None and args.engine != "dask":  # (before a first report answers from memory)
        raise PikitError("--scheduler goes with --engine dask")
    if args.csv and args.json:
        raise PikitError("--csv and --json: choose one")
    if args.last is not None and (args.since is not None or args.last < 1):
        raise PikitError("--last takes 1 or more days, and goes without --since")
    check_date(args.since)
    check_date(args.until)
    if args.timezone:
        import zoneinfo

        try:
            zoneinfo.ZoneInfo(args.timezone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder, a name too long
            raise PikitError(f"unknown time zone {echo(args.timezone)}; use an IANA name such as Europe/Berlin "
                             "or UTC") from None


def _cost_sum(costs: Iterator[float]) -> float:
    """Costs added with compensated summation; Infinity and -Infinity together make NaN, as in JavaScript."""
    try:
        return math.fsum(costs)
    except ValueError:  # (math.fsum refuses inf + -inf)
        return math.nan


def run_usage(args: argparse.Namespace) -> int:
    from ._usage_first import first_usage

    _check_usage_args(args)
    if first_usage(args, lambda rows: _show_usage(args, rows),
                   lambda root, files, problems: _note(args, root, files, problems)):
        return 0
    with _client(args) as client, _opened(args, client, usage_only=True) as corpus:
        rows = corpus.usage_rows(args.by, since=args.since, until=args.until, timezone=args.timezone,
                                 split_branch=args.split == "branch", last=args.last)
    _show_usage(args, rows)
    return 0


def _show_usage(args: argparse.Namespace, rows: list[dict[str, Any]]) -> None:
    from ..corpus._usage import FIELDS

    totals = {f: (_cost_sum if f.endswith("Cost") or f == "cost" else sum)(r[f] for r in rows) for f in FIELDS}
    if args.json:
        _dump(corpus_json.usage(rows, totals))
        return
    if args.csv:
        columns = [*(args.by if len(args.by) > 1 else ["key"]), *(["branch"] if args.split == "branch" else []),
                   *FIELDS]
        sys.stdout.buffer.write(corpus_json.usage_csv(rows, columns).encode("utf-8", "replace"))
        sys.stdout.flush()
        return
    _print_usage(rows, totals, args.split == "branch", args.by if len(args.by) > 1 else ["key"])


def _print_usage(rows: list[dict[str, Any]], totals: dict[str, Any], split: bool, keys: list[str]) -> None:
    """One line a row; with several keys one column each, a key shown once until it changes."""
    widths = [min(max([len(str(r[k])) for r in rows] + [5, len(k)]), 44) for k in keys]
    head = "".join(f"{k:<{w}} " for k, w in zip(keys, widths, strict=True)) + (f"{'branch':<9} " if split else "")
    print(head + f"{'input':>11} {'output':>11} {'cache write':>12} {'cache read':>14} {'total':>14} {'cost $':>10}"
          f" {'summaries':>12} {'summ. $':>8}")

    def line(values: list[str], branch: str, r: dict[str, Any]) -> str:
        return ("".join(f"{_short(v, w):<{w}} " for v, w in zip(values, widths, strict=True))
                + (f"{branch:<9} " if split else "")
                + f"{r['inputTokens']:>11,} {r['outputTokens']:>11,} {r['cacheWriteTokens']:>12,} "
                f"{r['cacheReadTokens']:>14,} {r['totalTokens']:>14,} {r['cost']:>10,.2f} "
                f"{r['summarizationTokens']:>12,} {r['summarizationCost']:>8,.2f}")

    before: list[str] = []
    for r in rows:
        values = [str(r[k]) for k in keys]
        shown = [v if len(keys) == 1 or values[:i + 1] != before[:i + 1] else "" for i, v in enumerate(values)]
        print(line(shown, r.get("branch", ""), r))
        before = values
    print(line(["total", *[""] * (len(keys) - 1)], "", totals))
