"""A usage report and the problems' counts from a first scan's results in memory, before any index exists.

A first ``pikit usage`` on a directory answers from what its scan read, as the index would
(``pikit.corpus._usage.usage_query`` over the tables a fresh build writes), and writes the
index afterwards. The rules are the index's: a message counts once among the occurrences of its
usage key, the occurrence not copied from another file first, then the file read first, then
the first entry (``pikit.corpus._index.Index.recount``); a summary call counts once per
usage key, in file order; a version-1 file's message is the same message in its migrated
copy. Whenever a report's rows would depend on what only SQL decides (a timestamp DuckDB might
read otherwise, a token count that is not a whole number, a key that is missing),
:func:`usage_rows` gives None and the report comes from the index.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from array import array
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any

from ._filescan import Columns, FileResult

__all__ = ["QUICK_KEYS", "problem_counts", "session_rows", "usage_rows"]

QUICK_KEYS = frozenset(("day", "month", "model", "project"))
# What both Python and DuckDB read the same way (the scan's countable timestamps, but for dates out of range).
_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):\d{2}(?:\.\d{3})?(Z|[+-]\d{2}:\d{2})")
_FORMATS = {"day": "%Y-%m-%d", "month": "%Y-%m"}
_Totals = list[Any]  # input, output, cache write, cache read, costs (messages); total tokens, costs (summaries)


class _Unsure(Exception):
    """A row the index might read otherwise: the report comes from the index."""


def _table(result: FileResult, name: str) -> dict[str, Sequence[Any]]:
    columns: Columns | None = result.tables.get(name)
    return {} if columns is None else dict(zip(columns.names, columns.values, strict=True))


class _Dates:
    """A timestamp's day or month in a time zone, as DuckDB's ``strftime(timezone(tz, ts), …)`` gives it.

    Offsets change on whole minutes, so each minute of each offset is converted once (a message's timestamp
    matched the scan's ``USAGE_TIMESTAMP``, the same pattern as :data:`_TIMESTAMP`; a summary call's is matched).
    """

    def __init__(self, zone: tzinfo | None) -> None:
        self.zone = zone
        self.hours: dict[str, dict[str, str] | None] = {}
        self.minutes: dict[str, dict[str, str]] = {}

    def text(self, stamp: Any, key: str) -> str:
        """The ``key`` (day or month) of a timestamp."""
        if stamp.__class__ is not str or stamp[17:19] > "59":  # (a second out of range: DuckDB reads no time)
            raise _Unsure
        suffix = "Z" if stamp[-1] == "Z" else stamp[-6:]
        hour = stamp[:13] + suffix
        if hour not in self.hours:
            start = self._local(stamp, whole_hour=True)
            end = self._local(stamp, whole_hour=True, last=True)
            self.hours[hour] = self._texts(start) if start.utcoffset() == end.utcoffset() \
                and self._texts(start) == self._texts(end) else None
        found = self.hours[hour]
        if found is None:  # (the hour crosses a local midnight, or its offset changes: by the minute)
            minute = stamp[:16] + suffix
            found = self.minutes.get(minute)
            if found is None:
                found = self.minutes[minute] = self._texts(self._local(stamp))
        return found[key]

    @staticmethod
    def _texts(local: datetime) -> dict[str, str]:
        return {name: local.strftime(form) for name, form in _FORMATS.items()}

    def _local(self, stamp: str, *, whole_hour: bool = False, last: bool = False) -> datetime:
        """The timestamp's minute (``whole_hour``: its hour's first minute, ``last``: its last second) locally."""
        match = _TIMESTAMP.fullmatch(stamp)
        if match is None:
            raise _Unsure
        year, month, day, hour, minutes, offset = match.groups()
        if not 1970 <= int(year) <= 9000 or offset[1:3] > "14":
            raise _Unsure
        zone = UTC if offset == "Z" else timezone(
            (-1 if offset[0] == "-" else 1) * timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6])))
        try:
            at = datetime(int(year), int(month), int(day), int(hour), 0 if whole_hour else int(minutes), tzinfo=zone)
        except ValueError:
            raise _Unsure from None
        at += timedelta(minutes=59, seconds=59) if last else timedelta()
        return at.astimezone(self.zone) if self.zone is not None else at.astimezone()


def _key_maker(keys: list[str], dates: _Dates) -> Any:
    """A function of (timestamp, provider, model, project) giving a row's key (a tuple of several keys' values)."""
    def one(key: str) -> Any:
        if key in _FORMATS:
            text = dates.text
            return lambda stamp, provider, model, project: text(stamp, key)
        if key == "model":
            return lambda stamp, provider, model, project: (
                ("" if provider is None else provider + "/") + ("unknown" if model is None else model))
        return lambda stamp, provider, model, project: project

    makers = [one(key) for key in keys]
    if len(makers) == 1:
        return makers[0]
    return lambda *row: tuple(make(*row) for make in makers)


def _sessions(results: list[FileResult]) -> tuple[dict[int, tuple[str, str, Any]], dict[int, int]]:
    """file id → (session id, path, project) of every file with a session row; version-1 file id → the file id of
    its migrated copy (see ``_index._MIGRATED_TO``: the same session id, start and cwd, the first path)."""
    out: dict[int, tuple[str, str, Any]] = {}
    rows: list[tuple[int, Any, Any, Any, Any, str]] = []
    for result in results:
        row = _table(result, "sessions")
        if not row or row["session_id"][0] is None:
            continue
        out[result.file_id] = (row["session_id"][0], row["path"][0], row["project"][0])
        rows.append((result.file_id, row["session_id"][0], row["version"][0], row["started"][0], row["cwd"][0],
                     row["path"][0]))
    copies: dict[int, int] = {}
    for file_id, session_id, version, started, cwd, _ in rows:
        if version is None or version >= 2:
            continue
        same = [(path, other) for other, sid, v, s, c, path in rows if sid == session_id and other != file_id
                and v is not None and v >= 2 and c == cwd and _same_time(s, started)]
        if same:
            copies[file_id] = min(same)[1]
    return out, copies


def _same_time(one: Any, other: Any) -> bool:
    """Whether two recorded times are the same instant (_Unsure when DuckDB's reading might differ from the text)."""
    if one == other:
        return True
    if one is None or other is None:
        return False
    raise _Unsure


def _copy_keys(results: list[FileResult], copies: dict[int, int]) -> dict[tuple[int, int], str]:
    """(version-1 file id, entry index) → the usage key of the same message in its migrated copy (same entry
    position, timestamp, role, model, tokens and cost: ``_index._SAME_AS_MIGRATED``)."""
    by_id = {result.file_id: result for result in results}
    out: dict[tuple[int, int], str] = {}
    fields = ("timestamp", "role", "model", "input_tokens", "output_tokens", "cache_read_tokens",
              "cache_write_tokens", "total_tokens", "cost")
    for legacy, copy in copies.items():
        mine, theirs = _table(by_id[legacy], "messages"), _table(by_id[copy], "messages")
        if not mine or not theirs:
            continue
        at: dict[int, list[tuple[tuple[Any, ...], str]]] = {}
        for n, entry in enumerate(theirs["entry_index"]):
            key = _usage_key(theirs, n)
            if key is not None:
                at.setdefault(entry, []).append((tuple(theirs[f][n] for f in fields), key))
        for n, entry in enumerate(mine["entry_index"]):
            if _usage_key(mine, n) is None:
                continue
            values = tuple(mine[f][n] for f in fields)
            keys = [key for other, key in at.get(entry, ()) if other == values]
            if keys:
                out[(legacy, entry)] = min(keys)
    return out


def _usage_key(table: dict[str, Sequence[Any]], n: int) -> str | None:
    """A message's usage key (``COMPUTED_COLUMNS``): its timestamp and id, or timestamp and total tokens."""
    if not table["countable"][n]:
        return None
    ts, entry_id, total = table["timestamp"][n], table["entry_id"][n], table["total_tokens"][n]
    if ts.__class__ is not str or (entry_id is None and total is None):
        raise _Unsure
    return f"{ts}#{entry_id}" if entry_id is not None else f"{ts}:{_whole(total)}"


def _whole(value: Any) -> int:
    if value is None:
        return 0
    if value.__class__ is not int:
        raise _Unsure
    return int(value)


def _whole_numbers(column: Sequence[Any]) -> Sequence[Any]:
    """A column of token counts: whole numbers or None (an ``array`` holds nothing else), or _Unsure."""
    if column.__class__ is not array and not all(v is None or v.__class__ is int for v in column):
        raise _Unsure
    return column


def _counted(results: list[FileResult], sessions: dict[int, tuple[str, str, Any]],
             copies: dict[int, int]) -> list[tuple[Any, ...]]:
    """The messages that count: (timestamp, provider, model, project, input, output, cache write, cache read,
    cost; a missing count is None) of the first occurrence of each usage key by (copied, file order, entry)."""
    same = _copy_keys(results, copies) if copies else {}
    best: dict[str, tuple[tuple[bool, int, int], tuple[Any, ...]]] = {}
    for order, result in enumerate(results):
        session = sessions.get(result.file_id)
        table = _table(result, "messages")
        if session is None or not table:
            continue
        project, file_id = session[2], result.file_id
        tokens = [_whole_numbers(table[name]) for name in ("input_tokens", "output_tokens", "cache_write_tokens",
                                                           "cache_read_tokens")]
        for ts, entry, copied, countable, provider, model, i, o, w, r, cost, entry_id, total in zip(
                table["timestamp"], table["entry_index"], table["copied"], table["countable"], table["provider"],
                table["model"], *tokens, table["cost"], table["entry_id"], table["total_tokens"], strict=True):
            if not countable:
                continue
            key = same.get((file_id, entry)) if copies else None
            if key is None:  # (_usage_key, inline: the common case)
                if ts.__class__ is not str or (entry_id is None and total is None):
                    raise _Unsure
                key = f"{ts}#{entry_id}" if entry_id is not None else f"{ts}:{_whole(total)}"
            rank = (bool(copied), order, entry)
            held = best.get(key)
            if held is None or rank < held[0]:
                best[key] = (rank, (ts, provider, model, project, i, o, w, r, cost))
    return [row for _, row in best.values()]


def _summaries(results: list[FileResult], sessions: dict[int, tuple[str, str, Any]]) -> list[tuple[Any, ...]]:
    """The summary calls that count: (timestamp, provider, model, project, total tokens, cost), the first of each
    usage key in file order."""
    seen: set[Any] = set()
    out = []
    for result in results:
        table = _table(result, "summary_calls")
        if not table:
            continue
        for session_id, path, ts, provider, model, total, cost, key, _ in sorted(zip(
                table["session_id"], table["path"], table["timestamp"], table["provider"], table["model"],
                table["total_tokens"], table["cost"], table["usage_key"], table["entry_index"], strict=True),
                key=lambda row: row[-1]):
            if key in seen:
                continue
            seen.add(key)
            session = sessions.get(result.file_id)
            if session is not None and (session_id, path) == session[:2]:
                out.append((ts, provider, model, session[2], total, cost))
    return out


def _cost(values: list[Any]) -> float:
    costs = [float(v) for v in values if v is not None]
    try:
        return math.fsum(costs)
    except ValueError:  # (inf + -inf, as DuckDB's fsum gives it)
        return math.nan


def usage_rows(results: list[FileResult], keys: list[str], zone: tzinfo | None) -> list[dict[str, Any]] | None:
    """The rows :meth:`pikit.corpus.Corpus.usage_rows` gives (``keys`` among :data:`QUICK_KEYS`, no dates, no
    branches) once these results, a fresh scan's in file order, are the index; None when only the index can tell.
    ``zone``: the report's time zone (None: the machine's)."""
    from ._usage import FIELDS

    try:
        sessions, copies = _sessions(results)
        key_of = _key_maker(keys, _Dates(zone))
        groups: dict[Any, tuple[_Totals, _Totals]] = {}
        for ts, provider, model, project, i, o, w, r, cost in _counted(results, sessions, copies):
            key = key_of(ts, provider, model, project)
            group = groups.get(key)
            if group is None:
                group = groups[key] = ([0, 0, 0, 0, []], [0, []])
            mine = group[0]
            mine[0] += i or 0
            mine[1] += o or 0
            mine[2] += w or 0
            mine[3] += r or 0
            mine[4].append(cost)
        for ts, provider, model, project, total, cost in _summaries(results, sessions):
            if ts.__class__ is not str or _TIMESTAMP.fullmatch(ts) is None:
                raise _Unsure
            calls = groups.setdefault(key_of(ts, provider, model, project), ([0, 0, 0, 0, []], [0, []]))[1]
            calls[0] += _whole(total)
            calls[1].append(cost)
        if any(part is None or part.__class__ is not str or not part.isprintable()
               for key in groups for part in (key if len(keys) > 1 else (key,))):
            raise _Unsure  # (a missing key, or one DuckDB might order otherwise)
    except _Unsure:
        return None
    rows = []
    for key in sorted(groups):
        (i, o, w, r, costs), (total, summary_costs) = groups[key]
        row: dict[str, Any] = {"key": key} if len(keys) == 1 else dict(zip(keys, key, strict=True))
        row.update(zip(FIELDS, (i, o, w, r, i + o + w + r, _cost(costs), total, _cost(summary_costs)), strict=True))
        rows.append(row)
    return rows


def problem_counts(results: list[FileResult], listing: list[tuple[str, str, str]]) -> list[tuple[str, int]]:
    """How many problems of each kind these results and the listing's problems make, by kind (as
    :meth:`pikit.corpus.Corpus.problem_counts` gives them once written)."""
    kinds = Counter(kind for _, kind, _ in listing)
    for result in results:
        kinds.update(_table(result, "problems").get("kind", ()))
    return sorted(kinds.items())


def session_rows(results: list[FileResult], fields: Sequence[str], limit: int | None) -> list[tuple[Any, ...]] | None:
    """The rows of ``fields`` (columns of the sessions table) ``pikit sessions`` lists once these results, a fresh
    full scan's in file order, are the index: newest first, then by path, the first ``limit``; None when only the
    index can tell (a version-1 file beside its migrated copy, a value DuckDB might read otherwise)."""
    from ._schema import TABLES

    types = {name: dtype for name, dtype, _ in TABLES["sessions"]}
    try:
        if _sessions(results)[1]:
            raise _Unsure  # (the copy stands for the version-1 file, whose messages count there)
        usage = _recounted_usage(results)
        rows = []
        for result in results:
            table = _table(result, "sessions")
            if not table:
                continue
            row = {name: values[0] for name, values in table.items()}
            if row.get("migrated_to") is not None:
                raise _Unsure
            row.update(usage.get(result.file_id, {}))
            rows.append(tuple(_typed(row[name], types[name]) for name in fields))
    except _Unsure:
        return None
    started, path = fields.index("started"), fields.index("path")
    rows.sort(key=lambda row: row[path])
    dated = [row for row in rows if row[started] is not None]
    dated.sort(key=lambda row: row[started], reverse=True)  # (stable: the same instant by path)
    rows = dated + [row for row in rows if row[started] is None]
    return rows if limit is None else rows[:limit]


def _typed(value: Any, dtype: str) -> Any:
    """A scanned value as DuckDB gives it back from a column of ``dtype`` (_Unsure where it might read otherwise)."""
    if value is None:
        return None
    if dtype == "string":
        if value.__class__ is not str:
            raise _Unsure
        try:
            value.encode()
        except UnicodeEncodeError:  # (a lone surrogate)
            raise _Unsure from None
        return value
    if dtype == "Int64":
        if value.__class__ is not int:
            raise _Unsure
        return value
    if dtype == "Float64":
        if value.__class__ not in (int, float):
            raise _Unsure
        return float(value)
    return _instant(value)


def _instant(stamp: Any) -> datetime:
    """A timestamp as DuckDB's ``TRY_CAST(… AS TIMESTAMPTZ)`` reads it, in the machine's time zone."""
    match = _TIMESTAMP.fullmatch(stamp) if stamp.__class__ is str else None
    if match is None or stamp[17:19] > "59":
        raise _Unsure
    year, month, day, hour, minute, offset = match.groups()
    if not 1970 <= int(year) <= 9000 or offset[1:3] > "14":
        raise _Unsure
    zone = UTC if offset == "Z" else timezone(
        (-1 if offset[0] == "-" else 1) * timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6])))
    millis = stamp[20:23] if stamp[19:20] == "." else "0"
    try:
        at = datetime(int(year), int(month), int(day), int(hour), int(minute), int(stamp[17:19]), int(millis) * 1000,
                      tzinfo=zone)
    except ValueError:
        raise _Unsure from None
    return at.astimezone()


def _recounted_usage(results: list[FileResult]) -> dict[int, dict[str, Any]]:
    """file id → its session row's usage columns, for the files whose messages a fresh index counts again
    (``Index.recount`` with ``fresh``: a file holding a copied message, or one whose usage key occurs more than
    once); the other files keep the numbers their scan derived."""
    tables = {result.file_id: (order, _table(result, "messages")) for order, result in enumerate(results)}
    keys: dict[tuple[int, int], str] = {}
    seen: Counter[str] = Counter()
    for file_id, (_, table) in tables.items():
        for n in range(len(table.get("countable", ()))):
            key = _usage_key(table, n)  # (None: not countable)
            if key is not None:
                keys[(file_id, n)] = key
                seen[key] += 1
    scoped = {(file_id, n): key for (file_id, n), key in keys.items()
              if seen[key] > 1 or tables[file_id][1]["copied"][n]}
    first: dict[str, tuple[bool, int, int]] = {}
    for (file_id, n), key in scoped.items():
        order, table = tables[file_id]
        rank = (bool(table["copied"][n]), order, table["entry_index"][n])
        if key not in first or rank < first[key]:
            first[key] = rank
    return {file_id: _file_usage(*tables[file_id], file_id, scoped, first) for file_id in {f for f, _ in scoped}}


def _file_usage(order: int, table: dict[str, Sequence[Any]], file_id: int, scoped: dict[tuple[int, int], str],
                first: dict[str, tuple[bool, int, int]]) -> dict[str, Any]:
    """The usage columns of a file's session row from its messages that count (``_index._SESSION_USAGE``)."""
    names = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "total_tokens")
    columns = [_whole_numbers(table[name]) for name in names]
    sums = [0] * len(names)
    costs: list[tuple[int, Any]] = []
    for n, (role, countable, counted, copied, entry) in enumerate(zip(
            table["role"], table["countable"], table["counted"], table["copied"], table["entry_index"], strict=True)):
        key = scoped.get((file_id, n))
        if key is not None:
            counted = first[key] == (bool(copied), order, entry)
        if role != "assistant" or columns[0][n] is None or not (counted if countable else not copied):
            continue
        for i, column in enumerate(columns):
            sums[i] += column[n] or 0
        if table["cost"][n] is None:
            raise _Unsure
        costs.append((entry, float(table["cost"][n])))
    cost = functools.reduce(operator.add, [c for _, c in sorted(costs, key=lambda item: item[0])]) if costs else 0.0
    return {**dict(zip(names, sums, strict=True)), "cost": cost}
