"""A frame drawn for reading in a notebook: what is missing said plainly, text aligned as text."""

from __future__ import annotations

from typing import Any

__all__ = ["MISSING", "show"]

#: How :func:`show` draws a missing value (pandas draws ``<NA>``, ``NaN`` or ``None``).
MISSING = "—"


def show(frame: Any, *, missing: str = MISSING) -> Any:
    """``frame`` as a pandas ``Styler`` for a notebook: missing values drawn as ``missing``, and text columns (and
    their headings) aligned left, where pandas aligns every cell right; every value and label HTML-escaped.

    The frame itself is not changed; every row is drawn, so pass the rows to show (``frame.head(20)``)."""
    import pandas as pd

    text = [column for column in frame.columns
            if pd.api.types.is_object_dtype(frame[column]) or pd.api.types.is_string_dtype(frame[column])]
    styler = (frame.style.format(na_rep=missing, escape="html")  # session text is shown, never interpreted
              .format_index(escape="html", axis=0).format_index(escape="html", axis=1))
    if text:
        styler = styler.set_properties(subset=text, **{"text-align": "left"})
        styler = styler.set_table_styles({column: [{"selector": "th", "props": "text-align: left"}]
                                          for column in text}, overwrite=False)
    return styler
