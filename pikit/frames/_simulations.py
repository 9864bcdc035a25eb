"""Frames of what-if replays (``pikit.compaction._simulate``): their compactions, check points and totals.

Each function takes one :class:`~pikit.compaction.SimulationResult` or several (a sweep
over settings); the ``run`` column tells them apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from ..compaction._simulate import SimulationResult, threshold_table
from ._columns import build, table

__all__ = ["SIMULATION_EVENT_COLUMNS", "SIMULATION_TOTALS_COLUMNS", "SIMULATION_TRACE_COLUMNS",
           "STRATEGY_TOTALS_COLUMNS", "simulation_events", "simulation_totals", "simulation_trace", "strategy_totals"]

_RUN_COLUMNS = table("""
    run                 Int64  position of the replay in the list of results given (0 for a single result)
    context_window      Int64  context window of the replay, in tokens
    reserve_tokens      Int64  reserveTokens of the replay
    keep_recent_tokens  Int64  keepRecentTokens of the replay
    threshold           Int64  context_window - reserve_tokens: Pi compacts when the context is larger
""")


SIMULATION_EVENT_COLUMNS = (*_RUN_COLUMNS, *table("""
    after_entry_id       string   the assistant message after which the threshold was crossed
    branch_index         Int64    its position on the original branch
    tokens_before        Int64    simulated context size when the check fired
    tokens_after         Int64    simulated context size after the compaction
    tokens_removed       Int64    tokens_before - tokens_after
    first_kept_entry_id  string   where the simulated compaction cut
    is_split_turn        boolean  whether the cut split a turn
    summarized_messages  Int64    messages folded into the summary (turn prefix included)
    summary_tokens       Int64    Pi's estimate of the summary written
"""))


SIMULATION_TRACE_COLUMNS = (*_RUN_COLUMNS, *table("""
    branch_index   Int64    position of the check point (an assistant message) on the branch
    entry_id       string   the assistant message
    tokens_before  Int64    simulated context size at the check
    tokens         Int64    simulated context size after any compaction there
    compacted      boolean  whether the replay compacted here
"""))


SIMULATION_TOTALS_COLUMNS = (*_RUN_COLUMNS, *table("""
    compactions             Int64   compactions the replay performed
    skipped                 Int64   checks that fired but found nothing to compact
    checks                  Int64   check points (assistant messages) replayed
    peak_tokens             Int64   largest simulated context size at a check
    final_tokens            Int64   simulated context size at the end of the branch
    tokens_removed          Int64   sum of tokens_before - tokens_after over the compactions
    first_trigger_entry_id  string  the assistant message where the first compaction fired
    first_trigger_index     Int64   its position on the branch
"""))


def _results(results: SimulationResult | Iterable[SimulationResult]) -> list[SimulationResult]:
    if isinstance(results, SimulationResult):
        return [results]
    out = list(results)
    for r in out:
        if not isinstance(r, SimulationResult):
            raise TypeError(f"expected SimulationResult objects, got {type(r).__name__}")
    return out


def _run_info(run: int, result: SimulationResult) -> dict[str, Any]:
    return {"run": run, "context_window": result.context_window, "reserve_tokens": result.settings.reserve_tokens,
            "keep_recent_tokens": result.settings.keep_recent_tokens, "threshold": result.threshold}


def simulation_events(results: SimulationResult | Iterable[SimulationResult]) -> pd.DataFrame:
    """The simulated compactions of one or several replays (see :data:`SIMULATION_EVENT_COLUMNS`)."""
    rows: list[dict[str, Any]] = []
    for run, result in enumerate(_results(results)):
        info = _run_info(run, result)
        for record in result.event_records():
            rows.append({**info, **record, "tokens_removed": record["tokens_before"] - record["tokens_after"]})
    return build(rows, SIMULATION_EVENT_COLUMNS)


def simulation_trace(results: SimulationResult | Iterable[SimulationResult]) -> pd.DataFrame:
    """The check points of one or several replays (see :data:`SIMULATION_TRACE_COLUMNS`)."""
    rows: list[dict[str, Any]] = []
    for run, result in enumerate(_results(results)):
        info = _run_info(run, result)
        for record in result.trace_records():
            rows.append({**info, "branch_index": record["branch_index"], "entry_id": record["entry_id"],
                         "tokens_before": record["tokens_before_check"], "tokens": record["tokens"],
                         "compacted": record["compacted"]})
    return build(rows, SIMULATION_TRACE_COLUMNS)


def simulation_totals(results: SimulationResult | Iterable[SimulationResult]) -> pd.DataFrame:
    """One row per replay: settings, threshold, compactions, peak (see :data:`SIMULATION_TOTALS_COLUMNS`)."""
    items = _results(results)
    rows: list[dict[str, Any]] = []
    for run, (result, row) in enumerate(zip(items, threshold_table(items), strict=True)):
        rows.append({**_run_info(run, result), "compactions": row["compactions"], "skipped": row["skipped"],
                     "checks": row["checks"], "peak_tokens": row["peakTokens"], "final_tokens": row["finalTokens"],
                     "tokens_removed": row["tokensRemoved"], "first_trigger_entry_id": row["firstTriggerEntryId"],
                     "first_trigger_index": row["firstTriggerIndex"]})
    return build(rows, SIMULATION_TOTALS_COLUMNS)




STRATEGY_TOTALS_COLUMNS = (*table("""
    strategy                 string   the strategy replayed (compaction.simulate(..., strategy=...))
"""), *SIMULATION_TOTALS_COLUMNS, *table("""
    requests                 Int64    model requests of the branch (one per assistant message)
    input_tokens             Int64    the input of every request, summed
    cached_input_tokens      Int64    the part a prefix cache would read (unchanged since the previous request)
    fresh_input_tokens       Int64    input_tokens - cached_input_tokens
    output_tokens            Int64    the output the recorded turns report, one per request
    aborted_requests         Int64    requests whose recorded turn was aborted or failed
    masked_observations      Int64    tool results a rolling mask replaced by a placeholder
    summarizer_calls         Int64    calls to the summarizer
    summarizer_input_tokens  Int64    their input
    summarizer_output_tokens  Int64    their output
    overflows                Int64    requests larger than the context window
    never_fits               boolean  whether compacting stopped paying (a runaway)
    cost                     Float64  the cost in US dollars: input, cache writes, output, summarizer (<NA>: no prices)
"""))


def strategy_totals(results: SimulationResult | Iterable[SimulationResult]) -> pd.DataFrame:
    """One row per strategy run: the totals of :func:`simulation_totals` and the request figures
    (see :data:`STRATEGY_TOTALS_COLUMNS`); a replay without a strategy has no ``strategy``."""
    items = _results(results)
    totals = simulation_totals(items).to_dict("records")
    rows = []
    for result, row in zip(items, totals, strict=True):
        t = result.totals() if result.strategy is not None else {}
        cost = t.get("cost")
        rows.append({**row, "strategy": result.strategy, "requests": len(result.requests),
                     "input_tokens": result.input_tokens, "cached_input_tokens": result.cached_input_tokens,
                     "fresh_input_tokens": result.input_tokens - result.cached_input_tokens,
                     "output_tokens": sum(result.outputs), "aborted_requests": result.aborted_requests,
                     "masked_observations": result.masked_observations,
                     "summarizer_calls": result.summarizer_calls,
                     "summarizer_input_tokens": result.summarizer_input_tokens,
                     "summarizer_output_tokens": result.summarizer_output_tokens,
                     "overflows": result.request_overflows, "never_fits": result.never_fits,
                     "cost": None if cost is None else cost["total"]})
    return build(rows, STRATEGY_TOTALS_COLUMNS)
