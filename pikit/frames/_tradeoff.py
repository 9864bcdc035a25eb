"""The trade-off of compaction strategies: what each replay sent against what its context kept, on common ground.

One row per replay of :func:`pikit.compaction.simulate` (any strategy, any setting) of one
branch: the input tokens it sent over the whole branch, the part a prefix cache would read, its
cost, its requests over the window, and its recall on common ground
(:func:`pikit.compaction.common_ground`): at each branch point, the share of one fact pool (every
fact the uncompacted context held there) that its context at the same request still holds,
averaged over the points. Every replay of the same branch with the same ``points`` is scored
against the same pools.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from .._tree.sessiontree import SessionTree
from ..compaction._common_ground import common_ground, ground_recall, key_fact
from ..compaction._simulate import SimulationResult
from ._columns import build, table

__all__ = ["STRATEGY_TRADEOFF_COLUMNS", "strategy_tradeoff"]

STRATEGY_TRADEOFF_COLUMNS = table("""
    strategy             string   the strategy replayed (pi for a replay without one)
    label                string   the replay's label (the strategy, or the one given)
    input_tokens         Int64    the input of every request over the branch, summed
    cached_input_tokens  Int64    the part of it a prefix cache would read
    cost                 Float64  the replay's cost at the model's prices (<NA> without prices)
    compactions          Int64    compactions the replay simulated
    masked               Int64    tool results a rolling mask replaced by a placeholder
    peak_tokens          Int64    the largest context at a check (the largest request without checks)
    overflows            Int64    requests over the context window
    points               Int64    branch points scored
    points_over_window   Int64    those where its request did not fit the window (left out of recall)
    facts                Int64    facts of the pool at the last branch point (everything the branch held)
    kept                 Int64    those the replay's context at that request holds
    key_recall           Float64  the same over the key facts of each pool (the headline)
    recall               Float64  the share of each point's pool its context holds, averaged over the points that fit
""")


def strategy_tradeoff(session: SessionTree, results: SimulationResult | Iterable[SimulationResult], *,
                      labels: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per replay of ``session`` (see :data:`STRATEGY_TRADEOFF_COLUMNS`); ``labels``
    names each replay (for several settings of one strategy), by default its strategy."""
    runs = [results] if isinstance(results, SimulationResult) else list(results)
    if labels is not None and len(labels) != len(runs):
        raise ValueError(f"labels must name every replay: {len(labels)} labels for {len(runs)} replays")
    rows: list[dict[str, Any]] = []
    for n, run in enumerate(runs):
        points = common_ground(session, run)
        last = points[-1].evaluation if points else None
        cost = run.totals().get("cost") if run.strategy is not None else None
        strategy = run.strategy or "pi"
        rows.append({"strategy": strategy, "label": labels[n] if labels is not None else strategy,
                     "input_tokens": run.input_tokens, "cached_input_tokens": run.cached_input_tokens,
                     "cost": cost["total"] if isinstance(cost, dict) else None, "compactions": len(run.events),
                     "masked": run.masked_observations, "peak_tokens": run.peak_tokens,
                     "overflows": run.request_overflows, "points": len(points),
                     "points_over_window": sum(1 for p in points if not p.fits),
                     "facts": len(last.facts) if last is not None else None,
                     "kept": sum(last.kept) if last is not None else None,
                     "key_recall": ground_recall(points, key_fact), "recall": ground_recall(points)})
    return build(rows, STRATEGY_TRADEOFF_COLUMNS)
