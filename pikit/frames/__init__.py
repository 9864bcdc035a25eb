"""pandas DataFrames over sessions, projections, compactions and what-if replays.

Every frame's columns are declared as data: a tuple of :class:`Column` (name, dtype,
description, and ``get``, how the value is read from one row) per frame, collected in
:data:`FRAMES`, and one :func:`build` turns rows into a frame. The frames have exactly
those columns, in that order, with those dtypes (nullable pandas dtypes, so a missing
value is ``<NA>`` rather than a silently changed type; :func:`show` draws it as ``—`` in a
notebook, with text columns aligned left). Columns belong to groups, which
the ``columns=`` argument selects (names of groups or of single columns)::

    >>> from pikit import frames
    >>> frames.column_table("messages")                   # name / dtype / group / description
    >>> df = frames.messages(session)                      # one row per model-visible message
    >>> frames.messages(session, columns=["core", "usage"])

This package imports pandas; ``import pikit`` never imports it (pandas is an optional
dependency: ``pip install 'pikit[frames]'``).

``leaf`` means the same as in the core: :data:`CURRENT` (the default) is the session's
current leaf, and None is the empty leaf (before the first entry).

"""

from __future__ import annotations

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ._catalog import FRAMES as FRAMES, column_table as column_table
    from ._columns import (
        CURRENT as CURRENT,
        Column as Column,
        ColumnSpec as ColumnSpec,
        build as build,
        select as select,
        shorten as shorten,
    )
    from ._compactions import (
        COMPACTION_COLUMNS as COMPACTION_COLUMNS,
        CONTEXT_TRACE_COLUMNS as CONTEXT_TRACE_COLUMNS,
        SWEEP_COLUMNS as SWEEP_COLUMNS,
        compactions as compactions,
        context_trace as context_trace,
        sweep_keep_recent as sweep_keep_recent,
    )
    from ._entries import (
        BRANCH_COLUMNS as BRANCH_COLUMNS,
        ENTRY_COLUMNS as ENTRY_COLUMNS,
        branches as branches,
        entries as entries,
    )
    from ._evaluations import (
        EVALUATION_COLUMNS as EVALUATION_COLUMNS,
        EVALUATION_FACT_COLUMNS as EVALUATION_FACT_COLUMNS,
        evaluation_facts as evaluation_facts,
        evaluations as evaluations,
    )
    from ._messages import (
        CALIBRATION_COLUMNS as CALIBRATION_COLUMNS,
        MESSAGE_COLUMNS as MESSAGE_COLUMNS,
        calibration as calibration,
        message_segments as message_segments,
        messages as messages,
    )
    from ._show import MISSING as MISSING, show as show
    from ._simulations import (
        SIMULATION_EVENT_COLUMNS as SIMULATION_EVENT_COLUMNS,
        SIMULATION_TOTALS_COLUMNS as SIMULATION_TOTALS_COLUMNS,
        SIMULATION_TRACE_COLUMNS as SIMULATION_TRACE_COLUMNS,
        STRATEGY_TOTALS_COLUMNS as STRATEGY_TOTALS_COLUMNS,
        simulation_events as simulation_events,
        simulation_totals as simulation_totals,
        simulation_trace as simulation_trace,
        strategy_totals as strategy_totals,
    )
    from ._tradeoff import (
        STRATEGY_TRADEOFF_COLUMNS as STRATEGY_TRADEOFF_COLUMNS,
        strategy_tradeoff as strategy_tradeoff,
    )

if not typing.TYPE_CHECKING:  # (type checkers read the declaration above)
    __getattr__, __dir__, __all__ = _lazy.exports(__name__)
