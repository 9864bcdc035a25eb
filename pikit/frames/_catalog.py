"""Every frame's declared columns by name, and the table that describes them."""

from __future__ import annotations

import pandas as pd

from . import _columns
from ._columns import Column
from ._compactions import COMPACTION_COLUMNS, CONTEXT_TRACE_COLUMNS, SWEEP_COLUMNS
from ._entries import BRANCH_COLUMNS, ENTRY_COLUMNS
from ._evaluations import EVALUATION_COLUMNS, EVALUATION_FACT_COLUMNS
from ._messages import CALIBRATION_COLUMNS, MESSAGE_COLUMNS
from ._simulations import (
    SIMULATION_EVENT_COLUMNS,
    SIMULATION_TOTALS_COLUMNS,
    SIMULATION_TRACE_COLUMNS,
    STRATEGY_TOTALS_COLUMNS,
)
from ._tradeoff import STRATEGY_TRADEOFF_COLUMNS

__all__ = ["FRAMES", "column_table"]

FRAMES: dict[str, tuple[Column, ...]] = {
    "entries": ENTRY_COLUMNS,
    "messages": MESSAGE_COLUMNS,
    "compactions": COMPACTION_COLUMNS,
    "branches": BRANCH_COLUMNS,
    "context_trace": CONTEXT_TRACE_COLUMNS,
    "simulation_events": SIMULATION_EVENT_COLUMNS,
    "simulation_trace": SIMULATION_TRACE_COLUMNS,
    "simulation_totals": SIMULATION_TOTALS_COLUMNS,
    "calibration": CALIBRATION_COLUMNS,
    "sweep_keep_recent": SWEEP_COLUMNS,
    "evaluations": EVALUATION_COLUMNS,
    "evaluation_facts": EVALUATION_FACT_COLUMNS,
    "strategy_totals": STRATEGY_TOTALS_COLUMNS,
    "strategy_tradeoff": STRATEGY_TRADEOFF_COLUMNS,
}
"""Frame name (the builder function's name) → its declared columns."""


def column_table(frame: str | tuple[Column, ...]) -> pd.DataFrame:
    """The declared columns of ``frame`` (a name from :data:`FRAMES`, or columns) as a DataFrame."""
    if isinstance(frame, str):
        if frame not in FRAMES:
            raise KeyError(f"unknown frame {frame!r}; known frames: {', '.join(FRAMES)}")
        frame = FRAMES[frame]
    return _columns.column_table(frame)
