"""Usage and cost reports over the corpus index (the numbers ``@ccusage/pi`` shows, and more).

**No double counting.** Pi's fork and clone copy entries into a new file with the same ids,
timestamps and usage. A report counts each assistant message once: among the occurrences
of one message (same entry timestamp and id; a version-1 entry's id is the one pikit's
migration gives it, and a version-1 file's message is the same message in its migrated
copy: ``pikit.corpus._index``) the original counts, the occurrence not copied from
another file (a copy is older than the header of a file that has a ``parentSession``),
else the one in the file read first (``pikit.corpus._discover.order_key``). This is the
``messages.counted`` column; it credits a copy to the session ccusage 20 credits it to where
``parentSession`` paths resolve, and its per-day and per-month totals are ``@ccusage/pi``
18's (which credits a copy to the file it read first).

Which lines count at all follows ``@ccusage/pi`` too (an assistant message entry with numeric
``usage.input`` and ``usage.output`` and an ISO entry timestamp); days and months are the
timestamp's date in the report's time zone, the machine's by default.

Deliberately more exact than ``@ccusage/pi``:

* two *different* messages that share a timestamp and a token total are both counted
  (``@ccusage/pi`` 18 keys messages by timestamp and total only and drops the second);
* copies are recognised by content, wherever the files are (ccusage 20 follows the header's
  absolute ``parentSession`` path and counts copies again where it does not resolve, and
  copies of a branch that is not the parent's active one);
* a date range (``since``, ``until``) keeps the usage of the messages of those days, whatever
  the key, so a session's row is its usage in the range (``@ccusage/pi`` 18's session report
  keeps a session whole, or drops it, by the date of its last activity);
* costs are summed with compensated summation (``fsum``), not accumulated in file order;
  the two differ by floating-point rounding only;
* a ``.jsonl`` file that is not a Pi session (no session header) counts nothing and is
  listed in ``problems``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["BY", "FIELDS", "check_date", "last_days", "usage_keys", "usage_query"]

BY = ("day", "week", "month", "session", "model", "project")
FIELDS = ("inputTokens", "outputTokens", "cacheWriteTokens", "cacheReadTokens", "totalTokens", "cost",
          "summarizationTokens", "summarizationCost")

_KEYS = {
    "day": "strftime(timezone($tz, timestamp), '%Y-%m-%d')",
    "week": "strftime(date_trunc('week', timezone($tz, timestamp)), '%Y-%m-%d')",  # its Monday (ISO 8601)
    "month": "strftime(timezone($tz, timestamp), '%Y-%m')",
    "session": "session_id",
    "model": "coalesce(provider || '/', '') || coalesce(model, 'unknown')",
    "project": "project",
}


def check_date(value: str | None) -> str | None:
    """A ``--since``/``--until`` date as ``YYYYMMDD`` (``YYYY-MM-DD`` or ``YYYYMMDD`` accepted)."""
    if value is None:
        return None
    digits = value.replace("-", "")
    if len(digits) != 8 or not digits.isdigit():
        from .._inert import echo
        from ..errors import PikitError

        raise PikitError(f"{echo(value)} is not a date: use YYYY-MM-DD or YYYYMMDD")
    return digits


def last_days(days: int, timezone: str | None = None) -> str:
    """The ``since`` date (``YYYYMMDD``) of a report over the last ``days`` days, today included, in ``timezone``
    (default: the machine's)."""
    import datetime
    import zoneinfo

    if days < 1:
        from ..errors import PikitError, Wording

        raise PikitError(Wording("{last} is a number of days, 1 or more", {"last": "last"}))
    now = datetime.datetime.now(zoneinfo.ZoneInfo(timezone)) if timezone else datetime.datetime.now().astimezone()
    return (now.date() - datetime.timedelta(days=days - 1)).strftime("%Y%m%d")


def usage_keys(by: str | Sequence[str]) -> list[str]:
    """The grouping keys of a report: one (``"day"``) or several (``["day", "model"]``, ``"day,model"``), checked."""
    from ..errors import PikitError, Wording

    keys = [k.strip() for k in by.split(",")] if isinstance(by, str) else list(by)
    for key in keys:
        if key not in _KEYS:
            raise PikitError(Wording("{by} must be one of {choices} (or several, comma-separated), not {value}",
                                     {"by": "by"}, choices=", ".join(BY), value=repr(key)))
    if not keys or len(set(keys)) < len(keys):
        raise PikitError(Wording("{by} needs one key or several different ones, not {value}", {"by": "by"},
                                 value=repr(",".join(keys))))
    return keys


def usage_query(by: str | Sequence[str], *, since: str | None = None, until: str | None = None,
                timezone: str | None = None, split_branch: bool = False) -> tuple[str, dict[str, Any]]:
    """The SQL of a usage report and its parameters (rows: key, [branch,] the FIELDS, last activity).

    ``by`` several keys: the key is the list of their values.
    """
    keys = usage_keys(by) if not isinstance(by, str) else [by]
    if keys[0] not in _KEYS:
        from ..errors import PikitError

        raise PikitError(f"by must be one of {', '.join(BY)}, not {by!r}")
    params: dict[str, Any] = {"tz": timezone or "", "since": check_date(since), "until": check_date(until)}
    key = _KEYS[keys[0]]
    if not isinstance(by, str):  # several keys: a list of their values
        key = f"[{', '.join(_KEYS[k] for k in keys)}]"
    day = "strftime(timezone($tz, timestamp), '%Y%m%d')"
    branch = "CASE WHEN on_active_branch THEN 'active' ELSE 'abandoned' END" if split_branch else "''"
    # a range filters usage message by message, whatever the key: a session's row is its usage in the range
    date_filter = "WHERE last_day BETWEEN coalesce($since, '0') AND coalesce($until, '9')"
    sql = f"""
    WITH m AS (
        SELECT {key} AS key, {branch} AS branch, input_tokens, output_tokens, cache_write_tokens,
               cache_read_tokens, cost, timestamp, {day} AS last_day
        FROM messages JOIN (SELECT session_id, path, project FROM sessions) USING (session_id, path)
        WHERE counted),
    s AS (
        SELECT {key} AS key, {branch} AS branch, total_tokens, cost, timestamp, {day} AS last_day
        FROM (SELECT c.*, row_number() OVER (PARTITION BY usage_key ORDER BY f.path_order, c.entry_index) AS nth
              FROM summary_calls c JOIN files f USING (file_id)) c
        JOIN (SELECT session_id, path, project, true AS on_active_branch FROM sessions) USING (session_id, path)
        WHERE nth = 1),
    mf AS (SELECT * FROM m {date_filter}),
    sf AS (SELECT * FROM s {date_filter}),
    ma AS (
        SELECT key, branch, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cache_write_tokens) AS w,
               sum(cache_read_tokens) AS r, fsum(cost) AS c, max(timestamp) AS last
        FROM mf GROUP BY key, branch),
    sa AS (SELECT key, branch, sum(total_tokens) AS t, fsum(cost) AS c, max(timestamp) AS last
           FROM sf GROUP BY key, branch)
    SELECT coalesce(ma.key, sa.key) AS key, coalesce(ma.branch, sa.branch) AS branch,
           coalesce(i, 0), coalesce(o, 0), coalesce(w, 0), coalesce(r, 0),
           coalesce(i, 0) + coalesce(o, 0) + coalesce(w, 0) + coalesce(r, 0), coalesce(ma.c, 0),
           coalesce(t, 0), coalesce(sa.c, 0), greatest(ma.last, sa.last) AS last
    FROM ma FULL OUTER JOIN sa ON ma.key = sa.key AND ma.branch = sa.branch
    ORDER BY {"last, key" if by == "session" else "key"}, branch
    """
    return sql, params
