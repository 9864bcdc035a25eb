"""pandas DataFrames over sessions, projections, compactions and what-if replays.

Every frame's columns are declared as data: a tuple of :class:`Column` (name, dtype,
description, and ``get``, how the value is read from one row) per frame, collected in
:data:`FRAMES`, and one :func:`build` turns rows into a frame. The frames have exactly
those columns, in that order, with those dtypes (nullable pandas dtypes, so a missing
value is ``<NA>`` rather than a silently changed type). Columns belong to groups, which
the ``columns=`` argument selects (names of groups or of single columns)::

    >>> from pikit import frames
    >>> frames.column_table("messages")                   # name / dtype / group / description
    >>> df = frames.messages(session)                      # one row per model-visible message
    >>> frames.messages(session, columns=["core", "usage"])

This package imports pandas; ``import pikit`` never imports it (pandas is an optional
dependency: ``pip install 'pikit[frames]'``).

``leaf`` means the same as in the core: :data:`CURRENT` (the default) is the session's
current leaf, and None is the empty leaf (before the first entry).

Modules: :mod:`~pikit.frames._columns` (the mechanism), :mod:`~pikit.frames._entries`,
:mod:`~pikit.frames._messages`, :mod:`~pikit.frames._compactions`,
:mod:`~pikit.frames._simulations`.
"""

from __future__ import annotations

import pandas as pd

from . import _columns as _columns
from ._columns import CURRENT, Column, ColumnSpec, build, select, shorten
from ._compactions import (
    COMPACTION_COLUMNS,
    CONTEXT_TRACE_COLUMNS,
    SWEEP_COLUMNS,
    compactions,
    context_trace,
    sweep_keep_recent,
)
from ._entries import BRANCH_COLUMNS, ENTRY_COLUMNS, branches, entries
from ._messages import CALIBRATION_COLUMNS, MESSAGE_COLUMNS, calibration, message_segments, messages
from ._simulations import (
    SIMULATION_EVENT_COLUMNS,
    SIMULATION_TOTALS_COLUMNS,
    SIMULATION_TRACE_COLUMNS,
    simulation_events,
    simulation_totals,
    simulation_trace,
)

__all__ = [
    "BRANCH_COLUMNS",
    "CALIBRATION_COLUMNS",
    "COMPACTION_COLUMNS",
    "CONTEXT_TRACE_COLUMNS",
    "CURRENT",
    "ENTRY_COLUMNS",
    "FRAMES",
    "MESSAGE_COLUMNS",
    "SIMULATION_EVENT_COLUMNS",
    "SIMULATION_TOTALS_COLUMNS",
    "SIMULATION_TRACE_COLUMNS",
    "SWEEP_COLUMNS",
    "Column",
    "ColumnSpec",
    "branches",
    "build",
    "calibration",
    "column_table",
    "compactions",
    "context_trace",
    "entries",
    "message_segments",
    "messages",
    "select",
    "shorten",
    "simulation_events",
    "simulation_totals",
    "simulation_trace",
    "sweep_keep_recent",
]

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
}
"""Frame name (the builder function's name) → its declared columns."""


def column_table(frame: str | tuple[Column, ...]) -> pd.DataFrame:
    """The declared columns of ``frame`` (a name from :data:`FRAMES`, or columns) as a DataFrame."""
    if isinstance(frame, str):
        if frame not in FRAMES:
            raise KeyError(f"unknown frame {frame!r}; known frames: {', '.join(FRAMES)}")
        frame = FRAMES[frame]
    return _columns.column_table(frame)
