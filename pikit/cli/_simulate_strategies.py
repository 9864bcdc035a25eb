"""``pikit simulate --strategy``: compaction strategies replayed side by side on one branch."""

from __future__ import annotations

import sys
from argparse import Namespace
from typing import Any

from .._context.describe import leaf_text
from .._formatting import fmt_int, plural
from ..compaction._replay import simulate
from ..compaction._settings import CompactionSettings
from ..compaction._simulate import SimulationResult
from ..errors import PikitError
from ._common import open_session, print_json, session_settings, terminal_progress
from ._json import compaction as compaction_json
from ._simulate_notes import degenerate_note, runaway_outcome


def run(args: Namespace) -> int:
    """Replay each strategy of ``--strategy`` with one window, reserve and keep."""
    for flag, values in (("--context-window", args.context_window), ("--reserve-tokens", args.reserve_tokens),
                         ("--keep-recent-tokens", args.keep_recent_tokens)):
        if values is not None and len(values) > 1:
            raise PikitError(f"--strategy replays one setting: give one value of {flag}, not {len(values):,}")
    session = open_session(args)
    leaf = session.resolve_leaf(args.leaf) if args.leaf else session.leaf_id
    model = args.model or _branch_model(session, leaf)
    pricing = _pricing(model)
    runs = replays(args, session, leaf, args.context_window[0], pricing,
                   reserve=args.reserve_tokens[0] if args.reserve_tokens else None,
                   keep=args.keep_recent_tokens[0] if args.keep_recent_tokens else None)
    from ..compaction._common_ground import common_ground

    ground = common_ground(session, runs)
    if args.json:
        print_json(compaction_json.simulate(runs, ground))
        return 0
    print_table(runs, leaf, model if pricing is not None else None, args.summarizer or "offline", ground)
    return 0


def replays(args: Namespace, session: Any, leaf: Any, context_window: int, pricing: Any = None, *,
            reserve: int | None = None, keep: int | None = None) -> list[SimulationResult]:
    """The replays of ``--strategy`` at ``leaf`` under one window, ``reserve`` and ``keep`` (``None``: the
    session's settings) and the other flags (a warning line for a strategy that never fits)."""
    effective = session_settings(args, session).for_model(args.model)
    settings = CompactionSettings(effective.enabled, effective.reserve_tokens if reserve is None else reserve,
                                  effective.keep_recent_tokens if keep is None else keep, args.model)
    from ._compact_run import summarizer_from

    with terminal_progress(args) as progress:
        runs = simulate(session, summarizer_from(args), context_window=context_window, settings=settings,
                        leaf=leaf, keep_existing=args.keep_existing, sizes=args.sizes, progress=progress,
                        strategy=[s.strip() for s in args.strategy.split(",")], threshold=args.threshold,
                        keep_turns=args.keep_turns, auto_compact_limit=args.auto_compact_limit,
                        keep_observations=args.keep_observations, pricing=pricing)
    assert isinstance(runs, list)
    if settings.enabled and settings.reserve_tokens >= context_window:
        print(f"pikit: warning: {degenerate_note(context_window, settings.reserve_tokens)}", file=sys.stderr)
    for r in runs:
        if r.never_fits:
            print(f"pikit: warning: {never_fits_note(r)}", file=sys.stderr)
    return runs


def _branch_model(session: Any, leaf: Any) -> str | None:
    """``provider/modelId`` of the branch's model, or ``None`` when it records none."""
    model = session.context(leaf).model if leaf is not None else None
    if not isinstance(model, dict) or not isinstance(model.get("modelId"), str):
        return None
    provider = model.get("provider")
    return f"{provider}/{model['modelId']}" if isinstance(provider, str) else model["modelId"]


def _pricing(model: str | None) -> Any:
    """The prices of ``model`` from Pi's model facts, or ``None`` (unknown model, no prices)."""
    if model is None:
        return None
    from ..llm._models import lookup_model

    info = lookup_model(model)
    return None if info is None else info.pricing


def never_fits_note(r: SimulationResult) -> str:
    """Why a strategy's replay stopped compacting at every check (one line)."""
    assert r.runaway is not None
    index, entry_id = r.runaway
    return (f"{r.strategy} never keeps the context under its threshold {fmt_int(r.threshold)} (window "
            f"{fmt_int(r.context_window)}): up to entry {entry_id} (branch index {index}) {runaway_outcome(r)}, so "
            f"after it the replay tried only now and then; {plural(r.request_overflows, 'request')} over the window")


_ROWS: tuple[tuple[str, str], ...] = (
    ("threshold", "threshold"), ("compactions", "compactions"), ("masked observations", "maskedObservations"),
    ("requests", "requests"), ("aborted requests", "abortedRequests"),
    ("input tokens", "inputTokens"), ("cache reads", "cachedInputTokens"), ("fresh input", "freshInputTokens"),
    ("output tokens", "outputTokens"),
    ("summarizer calls", "summarizerCalls"), ("summarizer input", "summarizerInputTokens"),
    ("summarizer output", "summarizerOutputTokens"),
    ("largest at a check", "peakTokens"), ("final context", "finalTokens"),
    ("largest request", "peakRequestTokens"), ("over the window", "overflows"),
)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"${value:,.4f}"
    return fmt_int(value)


def _ground_rows(runs: list[SimulationResult], ground: list[Any]) -> list[tuple[str, list[str]]]:
    """The rows of the runs on common ground: recall over the points that fit, and the points that do not."""
    from ..compaction._common_ground import ground_recall, key_fact

    points = len({p.branch_index for p in ground})
    names = [r.strategy or "pi" for r in runs]
    return [(f"key recall ({points} points)", [_share(ground_recall((p for p in ground if p.strategy == name),
                                                                    key_fact)) for name in names]),
            (f"recall ({points} points)", [_share(ground_recall(p for p in ground if p.strategy == name))
                                           for name in names]),
            ("points over the window", [_cell(sum(1 for p in ground if p.strategy == name and not p.fits))
                                        for name in names])]


def print_table(runs: list[SimulationResult], leaf: Any, model: str | None, summaries: str = "offline",
                ground: list[Any] | None = None) -> None:
    """The strategies side by side: one column per strategy, one row per figure (``summaries``: who wrote them;
    ``ground``: the runs on common ground, :func:`~pikit.compaction.common_ground`)."""
    first = runs[0]
    s = first.settings
    print(f"strategies on {leaf_text(leaf)}: window {fmt_int(first.context_window)}, reserve "
          f"{fmt_int(s.reserve_tokens)}, keepRecentTokens {fmt_int(s.keep_recent_tokens)} ({summaries} summaries)")
    totals = [r.totals() for r in runs]
    rows = [(label, [_cell(t[key]) for t in totals]) for label, key in _ROWS]
    cost = [t["cost"] for t in totals]
    rows.append((f"cost ({model})" if model else "cost", [_cell(c and c["total"]) for c in cost]))
    rows.append(("never fits", [_cell(t["neverFits"]) for t in totals]))
    if ground is not None:
        rows += _ground_rows(runs, ground)
    names = [r.strategy or "" for r in runs]
    label_width = max(len(label) for label, _ in rows)
    widths = [max(len(name), *(len(cells[n]) for _, cells in rows)) for n, name in enumerate(names)]
    print(" " * label_width + "".join(f"  {name:>{w}}" for name, w in zip(names, widths, strict=True)))
    for label, cells in rows:
        print(f"{label:<{label_width}}" + "".join(f"  {c:>{w}}" for c, w in zip(cells, widths, strict=True)))
    print("requests: one per assistant message, its input the context just before it; cache reads: the prefix "
          "unchanged since the previous request; largest at a check: before any compaction there (never sent); "
          "largest request and over the window: what the model would have received")
    if ground is not None:
        print("recall: the share of one fact pool per branch point (every fact the uncompacted context held there) "
              "that each strategy's context at the same request still holds, averaged over the points where its "
              "request fits the window")
    print("cost: cache reads, fresh input (at the cache-write price where the model has one), the recorded output "
          "and the summarizer; it leaves out a changed answer after a compaction, cache expiry and requests the "
          "agent would have made differently (--json: cost.leftOut)")
    if model is None:
        print("input cost: no prices for the branch's model (--model names one)")
