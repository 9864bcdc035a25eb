"""``pikit simulate``: replay a branch under other settings (a sawtooth of context sizes)."""

from __future__ import annotations

import itertools
from argparse import Namespace

from ..settings import CompactionSettings
from ..simulate import SimulationResult, simulate, threshold_table
from .common import open_session, print_json, resolve_leaf, session_settings


def run(args: Namespace) -> int:
    session = open_session(args)
    leaf = resolve_leaf(session, args.leaf) if args.leaf else session.leaf_id
    effective = session_settings(args, session).for_model(args.model)
    reserves = args.reserve_tokens or [effective.reserve_tokens]
    keeps = args.keep_recent_tokens or [effective.keep_recent_tokens]
    from ..llm.select import get_summarizer

    summarizer = get_summarizer("offline")
    runs: list[SimulationResult] = []
    for window, reserve, keep in itertools.product(args.context_window, reserves, keeps):
        settings = CompactionSettings(effective.enabled, reserve, keep, args.model)
        runs.append(simulate(session, summarizer, context_window=window, settings=settings, leaf=leaf,
                             keep_existing=args.keep_existing))
    if args.json:
        print_json({"runs": [r.to_json() for r in runs], "thresholds": threshold_table(runs)})
        return 0
    if len(runs) == 1:
        _print_run(runs[0])
        return 0
    print(f"replay of {leaf} under {len(runs)} settings (estimated context sizes, offline summaries)")
    print(f"{'window':>9} {'reserve':>8} {'keep':>7} {'threshold':>9} {'compactions':>11} {'first at':>9} "
          f"{'peak':>9} {'final':>8}")
    for row in threshold_table(runs):
        print(f"{row['contextWindow']:>9,} {row['reserveTokens']:>8,} {row['keepRecentTokens']:>7,} "
              f"{row['threshold']:>9,} {row['compactions']:>11} {row['firstTriggerIndex'] or '-':>9} "
              f"{row['peakTokens']:>9,} {row['finalTokens']:>8,}")
    return 0


def _print_run(r: SimulationResult) -> None:
    t = r.totals()
    print(f"replay of {r.leaf_id}: window {t['contextWindow']:,}, reserve {t['reserveTokens']:,} "
          f"→ threshold {t['threshold']:,}; keepRecentTokens {t['keepRecentTokens']:,}")
    print(f"{t['checks']} checks (after each assistant message), {t['compactions']} compaction(s)"
          + (f", {t['skipped']} trigger(s) with nothing to compact" if t["skipped"] else ""))
    if r.events:
        print(f"{'#':>3} {'after entry':<12} {'at':>6} {'before':>9} {'after':>8} {'kept from':<10} split")
        for i, e in enumerate(r.events, 1):
            print(f"{i:>3} {str(e.after_entry_id)[:12]:<12} {e.branch_index:>6} {e.tokens_before:>9,} "
                  f"{e.tokens_after:>8,} {str(e.first_kept_entry_id)[:10]:<10} {'yes' if e.is_split_turn else 'no'}")
    print(f"peak {t['peakTokens']:,} tokens, final {t['finalTokens']:,}, removed {t['tokensRemoved']:,} in total")
    _sparkline(r)


def _sparkline(r: SimulationResult, width: int = 72) -> None:
    sizes = [after for _, _, _, after in r.trace]
    if len(sizes) < 2:
        return
    bars = "▁▂▃▄▅▆▇█"
    step = max(1, len(sizes) // width)
    sampled = [max(sizes[i:i + step]) for i in range(0, len(sizes), step)]
    top = max(max(sampled), r.threshold, 1)
    print("context: " + "".join(bars[min(7, int(s / top * 7.999))] for s in sampled)
          + f"  (█ = {top:,} tokens)")
