"""The trade-off of compaction strategies: what each replay sent against what its compactions kept.

One row per replay of :func:`pikit.compaction.simulate` (any strategy, any setting): the
input tokens it sent over the whole branch (the cost proxy), the part a prefix cache would
read, its cost, and the recall of its compactions, every fact of every compaction it
simulated pooled (:func:`pikit.evaluate` on the replay).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from .._tree.sessiontree import SessionTree
from ..compaction._evaluation import Evaluation, evaluate
from ..compaction._simulate import SimulationResult
from ._columns import build, table

__all__ = ["STRATEGY_TRADEOFF_COLUMNS", "strategy_tradeoff"]

STRATEGY_TRADEOFF_COLUMNS = table("""
    strategy             string   the strategy replayed (pi for a replay without one)
    label                string   the replay's label (the strategy, or the one given)
    input_tokens         Int64    the input of every request over the branch, summed
    cached_input_tokens  Int64    the part of it a prefix cache would read
    cost                 Float64  input_tokens priced by the model (<NA> without prices)
    compactions          Int64    compactions the replay simulated
    peak_tokens          Int64    the largest context at a check
    facts                Int64    facts of the spans its compactions replaced, pooled
    kept                 Int64    those the context after each compaction still holds
    recall               Float64  kept / facts (<NA> without facts: nothing was replaced)
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
        found = evaluate(session, run) if run.events else []
        evaluations = found if isinstance(found, list) else [found]
        facts = sum(len(e.facts) for e in evaluations if isinstance(e, Evaluation))
        kept = sum(sum(e.kept) for e in evaluations if isinstance(e, Evaluation))
        cost = run.totals().get("cost") if run.strategy is not None else None
        strategy = run.strategy or "pi"
        rows.append({"strategy": strategy, "label": labels[n] if labels is not None else strategy,
                     "input_tokens": run.input_tokens, "cached_input_tokens": run.cached_input_tokens,
                     "cost": cost["total"] if isinstance(cost, dict) else None, "compactions": len(run.events),
                     "peak_tokens": run.peak_tokens, "facts": facts, "kept": kept,
                     "recall": kept / facts if facts else None})
    return build(rows, STRATEGY_TRADEOFF_COLUMNS)
