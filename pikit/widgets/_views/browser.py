"""The session browser's view model: one compact row per session and the columns that show them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..._formatting import fmt_int
from ..._inert import shell_quote, visible

__all__ = ["BROWSER_COLUMNS", "BrowserColumn", "browser_rows", "resume_command"]


@dataclass(frozen=True)
class BrowserColumn:
    """One column of the browser: the sessions-table field it shows, its heading, how it sorts."""

    field: str
    title: str
    numeric: bool = False
    width: str = "auto"


BROWSER_COLUMNS: tuple[BrowserColumn, ...] = (
    BrowserColumn("started", "started", width="128px"),
    BrowserColumn("project", "project", width="150px"),
    BrowserColumn("title", "session"),
    BrowserColumn("entries", "entries", numeric=True, width="64px"),
    BrowserColumn("leaves", "branches", numeric=True, width="74px"),
    BrowserColumn("compactions", "compactions", numeric=True, width="92px"),
    BrowserColumn("cost", "cost $", numeric=True, width="70px"),
    BrowserColumn("models", "models", width="160px"),
)


def _value(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    try:
        if value != value:  # pandas NA-like
            return None
    except TypeError:
        return None
    return value.item() if hasattr(value, "item") else value


def _shown(field: str, value: Any) -> str:
    if value is None:
        return ""
    if field == "started":
        return str(value)[:16].replace("T", " ")
    if field == "cost":
        return f"{float(value):,.2f}"
    if isinstance(value, int | float):
        return fmt_int(value)
    return visible(" ".join(str(value).split())[:300])


def resume_command(record: Mapping[str, Any]) -> str:
    """The command that resumes a session: its ``resume`` column, else ``pi --session PATH``
    (``shell_quote``)."""
    given = _value(record.get("resume"))
    return str(given) if given else f"pi --session {shell_quote(str(record.get('path')))}"


def browser_rows(sessions: Iterable[Mapping[str, Any]]) -> list[list[Any]]:
    """``[path, sort keys per column..., shown texts per column...]`` for each session row.

    ``sessions`` are records of the corpus ``sessions`` table. The session column shows its
    title (a table without that column: its name, else its first user message). Texts are
    plain, shown with ``pikit._inert.visible`` (control characters, bidi controls and lone
    surrogates made visible): the browser puts
    them in the page with ``textContent`` only. The path stays exact.
    """
    rows = []
    for record in sessions:
        values = {c.field: _value(record.get(c.field)) for c in BROWSER_COLUMNS if c.field != "title"}
        values["title"] = (_value(record.get("title")) or _value(record.get("name"))
                           or _value(record.get("first_user_message")) or "")
        keys = [values[c.field] if c.numeric else visible(str(values[c.field] or "")).lower() for c in BROWSER_COLUMNS]
        shown = [_shown(c.field, values[c.field]) for c in BROWSER_COLUMNS]
        rows.append([str(record.get("path")), *keys, *shown])
    return rows
