"""Table columns declared as data, each owning its extraction (no pandas here).

A :class:`Column` names a column, its dtype, a description and ``get``: how the value is
read from one row object. :func:`table` reads plain declarations from a text table, and
:func:`select` picks columns by group or name (the ``columns=`` argument of the frame
functions). :mod:`pikit.frames` builds pandas DataFrames from these declarations; tables
elsewhere (a database schema) can be declared with the same objects without importing
pandas.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["DTYPES", "Column", "ColumnSpec", "select", "table"]

DTYPES = ("string", "Int64", "Float64", "boolean", "datetime64[ms, UTC]", "object")
"""The dtypes a column may have: pandas' nullable dtype names."""


@dataclass(frozen=True)
class Column:
    """One declared column and how its value is read from a row.

    ``dtype`` is a pandas dtype name: ``"string"``, ``"Int64"``, ``"Float64"``,
    ``"boolean"`` (all nullable), ``"datetime64[ms, UTC]"`` (epoch milliseconds in) or
    ``"object"``. ``get`` reads the value from one row object; without it the row is a
    mapping and the value is ``row.get(name)``. ``group`` names the column group that
    ``columns=`` selects it with.
    """

    name: str
    dtype: str
    description: str
    get: Callable[[Any], Any] | None = None
    group: str = "core"

    def value(self, row: Any) -> Any:
        """This column's value in ``row``."""
        return self.get(row) if self.get is not None else row.get(self.name)


def table(text: str, group: str = "core") -> tuple[Column, ...]:
    """Columns read from a text table, one a line: name, dtype and description, two spaces apart.

    A line indented deeper than the first continues the description above it. For frames
    whose rows are dicts keyed by column name (no ``get``)::

        table('''
            run        Int64   position of the replay
            entry_id   string  the assistant message after which the
                               threshold was crossed
        ''')
    """
    rows: list[list[str]] = []
    lines = [line for line in text.splitlines() if line.strip()]
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    for line in lines:
        if rows and len(line) - len(line.lstrip()) > indent:
            rows[-1][2] += " " + line.strip()
        else:
            rows.append(re.split(r"\s{2,}", line.strip(), maxsplit=2))
    return tuple(Column(name, dtype, description, group=group) for name, dtype, description in rows)


ColumnSpec = str | Column | Iterable[str | Column] | None
"""What ``columns=`` accepts: None (every column), a group or column name, a Column, or a list of these."""


def select(declared: Sequence[Column], spec: ColumnSpec = None) -> tuple[Column, ...]:
    """The columns of ``declared`` chosen by ``spec``, in declared order.

    Names are group names or column names; a :class:`Column` object not among the
    declared ones is appended (a column of the caller's own).

    Raises:
        ValueError: a name is neither a group nor a column of the frame.
    """
    if spec is None:
        return tuple(declared)
    items = [spec] if isinstance(spec, str | Column) else list(spec)
    groups = {c.group for c in declared}
    names = {c.name for c in declared}
    wanted: set[str] = set()
    extra: list[Column] = []
    for item in items:
        if isinstance(item, Column) and item not in declared:
            extra.append(item)
        elif isinstance(item, Column):
            wanted.add(item.name)
        elif item in groups:
            wanted.update(c.name for c in declared if c.group == item)
        elif item in names:
            wanted.add(item)
        else:
            raise ValueError(f"unknown column or group {item!r}; groups: {', '.join(sorted(groups))}; "
                             f"columns: {', '.join(c.name for c in declared)}")
    return (*(c for c in declared if c.name in wanted), *extra)
