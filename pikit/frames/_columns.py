"""The one function that builds frames from columns declared as data (``pikit._columns``).

A :class:`Column` names a column, its pandas dtype, a description and ``get``: how the
value is read from one row object (a dict's key of the same name when ``get`` is None).
:func:`build` turns rows into a DataFrame with exactly the columns asked for, in their
declared order and dtypes; :func:`select` picks columns by group or name for the
``columns=`` argument the frame functions take::

    >>> LENGTHS = (Column("id", "string", "entry id", lambda e: e.id),
    ...            Column("bytes", "Int64", "line size", lambda e: len(e.raw), group="size"))
    >>> build(session.entries, LENGTHS)

Values are coerced defensively, whatever JSON they came from: a non-number, NaN, infinity
or an integer outside the 64-bit range in an ``Int64`` column is ``<NA>``, a timestamp
outside pandas' range is ``<NaT>``, and any value in a ``string`` column is its ``str``
(lone surrogates, which Arrow-backed strings cannot hold, become U+FFFD).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._columns import Column, ColumnSpec, select, table
from .._tree.sessiontree import CURRENT
from ..jsjson import without_lone_surrogates

__all__ = ["CURRENT", "Column", "ColumnSpec", "build", "column_table", "select", "shorten", "table"]

PREVIEW_WIDTH = 80
_INT64 = 2**63 - 1
# pandas keeps datetimes as nanoseconds: milliseconds beyond this cannot be represented.
_MAX_MS = (2**63 - 1) // 1_000_000


def build(rows: Iterable[Any], columns: Sequence[Column]) -> pd.DataFrame:
    """A DataFrame with exactly ``columns``, one row per item of ``rows`` (read once, in order)."""
    values: list[list[Any]] = [[] for _ in columns]
    readers = [(c.get, c.name, out) for c, out in zip(columns, values, strict=True)]
    for row in rows:
        for get, name, out in readers:
            out.append(get(row) if get is not None else row.get(name))
    data = {c.name: series(v, c.dtype) for c, v in zip(columns, values, strict=True)}
    return pd.DataFrame(data, columns=[c.name for c in columns])


def column_table(columns: Sequence[Column]) -> pd.DataFrame:
    """Declared columns as a DataFrame (name, dtype, group, description)."""
    return pd.DataFrame([{"name": c.name, "dtype": c.dtype, "group": c.group, "description": c.description}
                         for c in columns], columns=["name", "dtype", "group", "description"])


# ---------------------------------------------------------------------------------- values
def to_int(value: Any) -> int | None:
    """``value`` as an integer that fits in 64 bits, else None (booleans and NaN are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        value = int(value)
    return value if -_INT64 <= value <= _INT64 else None


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _text(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else str(value)


def _without_surrogates(value: str | None) -> str | None:
    """Lone surrogates (valid JSON escapes) as U+FFFD: Arrow-backed strings cannot hold them."""
    return None if value is None else without_lone_surrogates(value)


def _timestamps(values: list[Any], dtype: str) -> pd.Series:
    nat = np.iinfo(np.int64).min  # how numpy stores NaT
    ms = [to_int(v) for v in values]
    raw = np.array([v if v is not None and -_MAX_MS <= v <= _MAX_MS else nat for v in ms], dtype=np.int64)
    return pd.Series(raw.view("datetime64[ms]")).dt.tz_localize("UTC").astype(dtype)


def series(values: list[Any], dtype: str) -> pd.Series:
    """``values`` as a Series of ``dtype``, each value coerced (an unusable value becomes missing)."""
    if dtype.startswith("datetime64"):
        return _timestamps(values, dtype)
    if dtype == "object":
        return pd.Series(values, dtype=object)
    if dtype == "string":
        values = [_text(v) for v in values]
        try:
            return pd.Series(pd.array(values, dtype=dtype))
        except UnicodeEncodeError:
            return pd.Series(pd.array([_without_surrogates(v) for v in values], dtype=dtype))
    if dtype == "Int64":
        values = [to_int(v) for v in values]
    elif dtype == "Float64":
        values = [_float(v) for v in values]
    elif dtype == "boolean":
        values = [None if v is None else bool(v) for v in values]
    return pd.Series(pd.array(values, dtype=dtype))


def shorten(text: Any, width: int = PREVIEW_WIDTH) -> str:
    """``text`` on one line (whitespace collapsed), cut to ``width`` characters with ``…``."""
    one_line = " ".join(str(text).split()) if text is not None else ""
    if width < 2 or len(one_line) <= width:
        return one_line[:max(width, 0)] if width < 2 else one_line
    return one_line[:width - 1].rstrip() + "…"


def hashable(value: Any) -> bool:
    """Whether ``value`` can be an entry id in a lookup (ids may be any JSON)."""
    return isinstance(value, str | int | float | bool)


def mapping(value: Any) -> Mapping[str, Any] | None:
    """``value`` when it is a JSON object, else None."""
    return value if isinstance(value, Mapping) else None
