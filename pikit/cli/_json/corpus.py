"""The ``--json`` objects of ``pikit sessions``, ``pikit usage`` and ``pikit problems`` (documented in
``docs/json.md``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: The columns of the ``sessions`` table ``pikit sessions`` reads, in the order of its JSON keys
#: (each key is the column's name in camel case).
SESSION_FIELDS = ("session_id", "path", "resume", "store", "project", "folder", "cwd", "started", "last_activity",
                  "parent_session", "version", "name", "title", "first_user_message", "size", "entries", "messages",
                  "user_messages", "assistant_messages", "models", "providers", "leaf_id", "leaves",
                  "abandoned_branches", "compactions", "input_tokens", "output_tokens", "cache_read_tokens",
                  "cache_write_tokens", "total_tokens", "cost", "damaged_lines")

#: The columns of the ``problems`` table ``pikit problems`` reads, and its JSON keys.
PROBLEM_FIELDS = ("path", "line", "kind", "message")


def sessions(rows: Iterable[Sequence[Any]]) -> dict[str, Any]:
    """One object per row of :data:`SESSION_FIELDS` values: camel-case keys, dates in ISO form, NaN as ``null``."""
    return {"sessions": [{_camel(k): _plain_value(v) for k, v in zip(SESSION_FIELDS, row, strict=True)}
                         for row in rows]}


def problems(rows: Iterable[Sequence[Any]]) -> dict[str, Any]:
    """One object per row of :data:`PROBLEM_FIELDS` values."""
    return {"problems": [dict(zip(PROBLEM_FIELDS, row, strict=True)) for row in rows]}


def usage(rows: list[dict[str, Any]], totals: Mapping[str, Any]) -> dict[str, Any]:
    """The report's rows as the corpus gives them (``Corpus.usage_rows``: ``key``, or with several keys each under
    its name) and their totals."""
    return {"rows": rows, "totals": totals}


def usage_csv(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    """The report's rows as CSV: a header of ``columns`` (the JSON keys), then one line per row. A text value
    that a spreadsheet would read as a formula (it starts with =, +, -, @, a tab or a carriage return) gets a
    leading apostrophe."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["'" + v if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r") else v
                         for v in (row[c] for c in columns)])
    return out.getvalue()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _plain_value(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat().replace("+00:00", "Z")
    if value != value:  # NaN / NA
        return None
    return value
