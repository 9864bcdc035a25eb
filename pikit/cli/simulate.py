"""``pikit simulate``: replay a branch under other settings (a sawtooth of context sizes)."""

from __future__ import annotations

import itertools
import sys
from argparse import Namespace

from ..formatting import fmt_int, plural
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
    for window, reserve in sorted({(w, r) for w in args.context_window for r in reserves if r >= w}):
        print(f"pikit: warning: reserveTokens {fmt_int(reserve)} ≥ the context window {fmt_int(window)}: the "
              "threshold is not positive, so Pi would compact after every assistant message", file=sys.stderr)
    runs: list[SimulationResult] = []
    for window, reserve, keep in itertools.product(args.context_window, reserves, keeps):
        settings = CompactionSettings(effective.enabled, reserve, keep, args.model)
        runs.append(simulate(session, summarizer, context_window=window, settings=settings, leaf=leaf,
                             keep_existing=args.keep_existing, sizes=args.sizes))
    for r in runs:
        if r.runaway is not None and r.threshold > 0:  # a threshold ≤ 0 was warned about above
            print(f"pikit: warning: {runaway_note(r)}", file=sys.stderr)
    if args.json:
        print_json({"runs": [r.to_json() for r in runs], "thresholds": threshold_table(runs)})
        return 0
    dropped = 0 if args.keep_existing or leaf is None else \
        sum(1 for e in session.branch(leaf) if e.type == "compaction")
    if len(runs) == 1:
        _print_run(runs[0], dropped)
        return 0
    print(f"replay of {leaf} under {fmt_int(len(runs))} settings (offline summaries)")
    print(sizes_note(runs[0], dropped))
    print(f"{'window':>9} {'reserve':>8} {'keep':>7} {'threshold':>9} {'compactions':>11} {'first at':>9} "
          f"{'peak':>9} {'final':>8}")
    for row in threshold_table(runs):
        first = row["firstTriggerIndex"]
        print(f"{fmt_int(row['contextWindow']):>9} {fmt_int(row['reserveTokens']):>8} "
              f"{fmt_int(row['keepRecentTokens']):>7} {fmt_int(row['threshold']):>9} "
              f"{fmt_int(row['compactions']):>11} {'-' if first is None else fmt_int(first):>9} "
              f"{fmt_int(row['peakTokens']):>9} {fmt_int(row['finalTokens']):>8}")
    return 0


def runaway_note(r: SimulationResult) -> str:
    """Why a replay stopped compacting at every check (one line)."""
    assert r.runaway is not None
    index, entry_id = r.runaway
    s = r.settings
    why = (f"keepRecentTokens {fmt_int(s.keep_recent_tokens)} ≥ the threshold {fmt_int(r.threshold)}: the kept part "
           "alone is over it" if s.keep_recent_tokens >= r.threshold else
           f"compacting did not bring the context under the threshold {fmt_int(r.threshold)}")
    return (f"runaway (window {fmt_int(r.context_window)}, reserve {fmt_int(s.reserve_tokens)}, keep "
            f"{fmt_int(s.keep_recent_tokens)}): from entry {entry_id} (branch index {index}) Pi would compact after "
            f"nearly every assistant message, for little ({why}); the replay stopped compacting at every check "
            f"there ({plural(r.runaway_checks, 'check')} fired without a simulated compaction)")


def sizes_note(r: SimulationResult, dropped: int = 0) -> str:
    """How the replay measured context sizes, and the recorded compactions it left out (one or two lines)."""
    checks = len(r.trace)
    if r.sizes == "estimate":
        note = "sizes: Pi's estimate alone (--sizes estimate); `pikit context` starts from the recorded usage instead"
    elif not r.usage_checks:
        note = "sizes: Pi's estimate (the branch records no usable usage)"
    else:
        share = "every check" if r.usage_checks == checks else \
            f"{fmt_int(r.usage_checks)} of {plural(checks, 'check')}"
        note = f"sizes: the recorded usage as in `pikit context` ({share}), changed by simulated compactions"
    if dropped:
        note += f"\nthe branch's {plural(dropped, 'recorded compaction')} left out (--keep-existing keeps them)"
    return note


def _print_run(r: SimulationResult, dropped: int) -> None:
    t = r.totals()
    print(f"replay of {r.leaf_id}: window {fmt_int(t['contextWindow'])}, reserve {fmt_int(t['reserveTokens'])} "
          f"→ threshold {fmt_int(t['threshold'])}; keepRecentTokens {fmt_int(t['keepRecentTokens'])}")
    print(sizes_note(r, dropped))
    print(f"{plural(t['checks'], 'check')} (after each assistant message), {plural(t['compactions'], 'compaction')}"
          + (f", {plural(t['skipped'], 'trigger')} with nothing to compact" if t["skipped"] else ""))
    if r.events:
        print(f"{'#':>3} {'after entry':<12} {'at':>6} {'before':>9} {'after':>8} {'kept from':<10} split")
        for i, e in enumerate(r.events, 1):
            print(f"{fmt_int(i):>3} {str(e.after_entry_id)[:12]:<12} {fmt_int(e.branch_index):>6} "
                  f"{fmt_int(e.tokens_before):>9} "
                  f"{fmt_int(e.tokens_after):>8} {str(e.first_kept_entry_id)[:10]:<10} "
                  f"{'yes' if e.is_split_turn else 'no'}")
    print(f"peak {fmt_int(t['peakTokens'])} tokens, final {fmt_int(t['finalTokens'])}, removed "
          f"{fmt_int(t['tokensRemoved'])} in total")
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
          + f"  (█ = {fmt_int(top)} tokens)")
