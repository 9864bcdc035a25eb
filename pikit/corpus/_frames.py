"""The corpus tables as pandas DataFrames with their declared columns (``pikit.frames.Column``)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..frames import Column
from ._schema import TABLES

__all__ = ["COLUMNS", "typed"]

COLUMNS: dict[str, tuple[Column, ...]] = {
    table: tuple(Column(name, dtype, description) for name, dtype, description in specs)
    for table, specs in TABLES.items()
}
"""Every corpus table's declared columns: name, pandas dtype, description."""


def typed(arrow: Any, table: str) -> pd.DataFrame:
    """An Arrow result of ``SELECT <declared columns> FROM table`` as a DataFrame with the declared dtypes."""
    df = arrow.to_pandas()
    for column in COLUMNS[table]:
        series = df[column.name]
        if column.dtype.startswith("datetime64"):
            df[column.name] = pd.to_datetime(series, utc=True).astype(column.dtype)
        else:
            df[column.name] = series.astype(column.dtype)
    return df[[c.name for c in COLUMNS[table]]]
