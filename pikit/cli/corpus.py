"""``pikit sessions`` and ``pikit usage``: a sessions directory through the corpus index."""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Iterator
from typing import Any

from ..errors import PikitError

_SESSION_FIELDS = ("session_id", "path", "project", "cwd", "started", "last_activity", "parent_session", "version",
                   "name", "first_user_message", "size", "entries", "messages", "user_messages",
                   "assistant_messages", "models", "providers", "leaf_id", "leaves", "abandoned_branches",
                   "compactions", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                   "total_tokens", "cost", "damaged_lines")


def _short(text: str, width: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@contextlib.contextmanager
def _client(args: argparse.Namespace) -> Iterator[Any]:
    if args.engine != "dask":
        if args.scheduler:
            raise PikitError("--scheduler goes with --engine dask")
        yield None
        return
    from ..corpus.dask import SchedulerError, connect

    try:
        with connect("local" if args.scheduler is None else args.scheduler) as client:
            yield client
    except SchedulerError as exc:
        plain = exc.address.isprintable() and exc.address.strip() == exc.address != ""
        raise PikitError(f"--scheduler {exc.address if plain else repr(exc.address)}: {exc.reason}") from None


def _open(args: argparse.Namespace, client: Any) -> Any:
    from ..corpus import Corpus

    corpus = Corpus.open(args.dir, index=args.index, client=client)
    report = corpus.last_scan
    query = "SELECT kind, count(*) AS n FROM problems GROUP BY kind ORDER BY kind"
    problems = corpus.connection.execute(query).fetchall() if report is not None and report.problems else []
    if report is not None and report.files == 0:
        where = args.dir or corpus.root or "Pi's sessions directory"
        print(f"pikit: no session files in {where}", file=sys.stderr)
    if problems and (report is None or report.files or any(kind != "no-sessions" for kind, _ in problems)):
        listed = ", ".join(f"{n} {kind}" for kind, n in problems)
        print(f"pikit: note: {listed} (SELECT * FROM problems)", file=sys.stderr)
    return corpus


def _dump(value: Any) -> None:
    from .. import jsjson

    sys.stdout.write(jsjson.stringify(value) + "\n")


def _plain_value(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat().replace("+00:00", "Z")
    if value != value:  # NaN / NA
        return None
    return value


def run_sessions(args: argparse.Namespace) -> int:
    if args.scheduler and args.engine != "dask":
        raise PikitError("--scheduler goes with --engine dask")
    with _client(args) as client:
        corpus = _open(args, client)
        with corpus:
            columns = ", ".join(f'"{c}"' for c in _SESSION_FIELDS)
            where, params = "", None
            if args.search:
                paths = corpus.search(args.search)
                where, params = "WHERE path IN (SELECT unnest($paths))", {"paths": paths}
            rows = corpus.connection.execute(
                f"SELECT {columns} FROM sessions {where} ORDER BY started DESC NULLS LAST, path", params).fetchall()
    if args.json:
        _dump({"sessions": [{_camel(k): _plain_value(v) for k, v in zip(_SESSION_FIELDS, row, strict=True)}
                            for row in rows]})
        return 0
    _print_sessions(rows)
    return 0


def _print_sessions(rows: list[tuple[Any, ...]]) -> None:
    if not rows:
        print("no sessions")
        return
    print(f"{'started':<17} {'project':<24} {'entries':>7} {'branches':>8} {'compact':>7} {'cost $':>9}  session")
    field = {name: i for i, name in enumerate(_SESSION_FIELDS)}
    for row in rows:
        started = row[field["started"]]
        when = started.strftime("%Y-%m-%d %H:%M") if started is not None else "?"
        project = str(row[field["project"]])[:24]
        title = row[field["name"]] or row[field["first_user_message"]] or ""
        print(f"{when:<17} {project:<24} {row[field['entries']]:>7,} {row[field['leaves']]:>8,} "
              f"{row[field['compactions']]:>7,} {row[field['cost']] or 0:>9,.2f}  "
              f"{str(row[field['session_id']])[:8]} {_short(title, 60)}")
    print(f"{len(rows):,} session(s)")


def _check_usage_args(args: argparse.Namespace) -> None:
    """Mistakes in the options, before any scanning."""
    from ..corpus.usage import check_date

    check_date(args.since)
    check_date(args.until)
    if args.timezone:
        import zoneinfo

        try:
            zoneinfo.ZoneInfo(args.timezone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise PikitError(f"unknown time zone {args.timezone!r}; use an IANA name such as Europe/Berlin "
                             "or UTC") from None


def _cost_sum(costs: Iterator[float]) -> float:
    """Costs added with compensated summation; Infinity and -Infinity together make NaN, as in JavaScript."""
    try:
        return math.fsum(costs)
    except ValueError:  # (math.fsum refuses inf + -inf)
        return math.nan


def run_usage(args: argparse.Namespace) -> int:
    from ..corpus.usage import FIELDS

    _check_usage_args(args)
    with _client(args) as client:
        corpus = _open(args, client)
        with corpus:
            rows = corpus.usage_rows(args.by, since=args.since, until=args.until, timezone=args.timezone,
                                     split_branch=args.split == "branch")
    totals = {f: (_cost_sum if f.endswith("Cost") or f == "cost" else sum)(r[f] for r in rows) for f in FIELDS}
    if args.json:
        _dump({"rows": rows, "totals": totals})
        return 0
    _print_usage(rows, totals, args.split == "branch")
    return 0


def _print_usage(rows: list[dict[str, Any]], totals: dict[str, Any], split: bool) -> None:
    width = max([len(str(r["key"])) for r in rows] + [5])
    width = min(width, 44)
    head = f"{'key':<{width}} " + (f"{'branch':<9} " if split else "")
    print(head + f"{'input':>11} {'output':>11} {'cache write':>12} {'cache read':>14} {'total':>14} {'cost $':>10}"
          f" {'summaries':>12} {'summ. $':>8}")

    def line(key: str, branch: str, r: dict[str, Any]) -> str:
        return (f"{_short(key, width):<{width}} " + (f"{branch:<9} " if split else "")
                + f"{r['inputTokens']:>11,} {r['outputTokens']:>11,} {r['cacheWriteTokens']:>12,} "
                f"{r['cacheReadTokens']:>14,} {r['totalTokens']:>14,} {r['cost']:>10,.2f} "
                f"{r['summarizationTokens']:>12,} {r['summarizationCost']:>8,.2f}")

    for r in rows:
        print(line(str(r["key"]), r.get("branch", ""), r))
    print(line("total", "", totals))
