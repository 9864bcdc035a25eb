"""``pikit simulate``: replay a branch under other settings (a sawtooth of context sizes)."""

from __future__ import annotations

import itertools
import sys
from argparse import Namespace
from typing import Any

from .._context.describe import leaf_text
from .._formatting import fmt_int, plural
from ..compaction._settings import CompactionSettings
from ..compaction._simulate import RUNAWAY_AFTER, SimulationResult, sweep, threshold_table
from ..errors import PikitError
from ._common import open_session, print_json, session_settings, terminal_progress
from ._json import compaction as compaction_json
from ._simulate_notes import degenerate_note, runaway_outcome

#: The most replays one run makes (a sweep replays every window × reserve × keep).
MAX_RUNS = 1_000


def run(args: Namespace) -> int:
    if args.strategy is not None:
        from ._simulate_strategies import run as run_strategies

        return run_strategies(args)
    asked = len(args.context_window) * len(args.reserve_tokens or [0]) * len(args.keep_recent_tokens or [0])
    if asked > MAX_RUNS:
        raise PikitError(f"the lists of --context-window, --reserve-tokens and --keep-recent-tokens make {asked:,} "
                         f"replays; sweep at most {MAX_RUNS:,} at once")
    session = open_session(args)
    leaf = session.resolve_leaf(args.leaf) if args.leaf else session.leaf_id
    effective = session_settings(args, session).for_model(args.model)
    reserves = args.reserve_tokens or [effective.reserve_tokens]
    keeps = args.keep_recent_tokens or [effective.keep_recent_tokens]
    from ._compact_run import summarizer_from

    summarizer = summarizer_from(args)
    degenerate = {(w, r) for w in args.context_window for r in reserves if r >= w} if effective.enabled else set()
    for window, reserve in sorted(degenerate):
        print(f"pikit: warning: {degenerate_note(window, reserve)}", file=sys.stderr)
    settings = [CompactionSettings(effective.enabled, reserve, keep, args.model)
                for reserve, keep in itertools.product(reserves, keeps)]
    with terminal_progress(args) as progress:
        runs = sweep(session, summarizer, context_windows=args.context_window, settings=settings, leaf=leaf,
                     keep_existing=args.keep_existing, sizes=args.sizes, progress=progress)
    for r in runs:
        if r.runaway is not None and r.threshold > 0:  # a threshold ≤ 0 was warned about above
            print(f"pikit: warning: {runaway_note(r)}", file=sys.stderr)
    if args.json:
        print_json(compaction_json.simulate(runs))
        return 0
    dropped = 0 if args.keep_existing or leaf is None else \
        sum(1 for e in session.branch(leaf) if e.type == "compaction")
    if len(runs) == 1:
        _print_run(runs[0], dropped)
        return 0
    _print_sweep(runs, leaf, dropped, summarizer.name)
    return 0


def _print_sweep(runs: list[SimulationResult], leaf: Any, dropped: int, summaries: str) -> None:
    """The threshold table of a sweep, one row per setting (``summaries``: the summarizer's name)."""
    print(f"replay of {leaf_text(leaf)} under {fmt_int(len(runs))} settings ({summaries} summaries)")
    print(sizes_note(runs[0], dropped))
    print(f"{'window':>9} {'reserve':>8} {'keep':>7} {'threshold':>9} {'compactions':>11} {'first at':>9} "
          f"{'peak':>9} {'final':>8} {'over window':>11}")
    for row in threshold_table(runs):
        first = row["firstTriggerIndex"]
        print(f"{fmt_int(row['contextWindow']):>9} {fmt_int(row['reserveTokens']):>8} "
              f"{fmt_int(row['keepRecentTokens']):>7} {fmt_int(row['threshold']):>9} "
              f"{fmt_int(row['compactions']):>11} {'-' if first is None else fmt_int(first):>9} "
              f"{fmt_int(row['peakTokens']):>9} {fmt_int(row['finalTokens']):>8} "
              f"{fmt_int(row['checksOverWindow']):>11}")
    if any(r.overflows for r in runs):
        print("over window: checks where the context exceeds the context window (it would not have fit)")


def _fired(r: SimulationResult, after: int = -1) -> list[tuple[int, Any, int, int]]:
    """The checks after branch index ``after`` where Pi's trigger fired."""
    return [t for t in r.trace if t[0] > after and r.settings.should_compact(t[2], r.context_window)]


def runaway_note(r: SimulationResult) -> str:
    """Why a replay stopped compacting at every check (one line)."""
    assert r.runaway is not None
    index, entry_id = r.runaway
    s = r.settings
    outcome = runaway_outcome(r)
    checks_after = sum(1 for t in r.trace if t[0] > index)
    fired = len(_fired(r, index))
    compacted = sum(1 for e in r.events if e.branch_index > index)
    return (f"runaway (window {fmt_int(r.context_window)}, reserve {fmt_int(s.reserve_tokens)}, keep "
            f"{fmt_int(s.keep_recent_tokens)}): at entry {entry_id} (branch index {index}) the trigger had fired "
            f"{RUNAWAY_AFTER} times in a row without paying: {outcome}; after it, the trigger fired at "
            f"{fmt_int(fired)} of the {plural(checks_after, 'check')} that followed, and the replay compacted only now "
            f"and then ({fmt_int(fired - compacted)} of them fired without a simulated compaction)")


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
        note = (f"sizes: the recorded usage as in `pikit context` while the replay holds the recorded context "
                f"({share}), else Pi's estimate of what it holds")
    if dropped:
        note += f"\nthe branch's {plural(dropped, 'recorded compaction')} left out (--keep-existing keeps them)"
    return note


def _print_run(r: SimulationResult, dropped: int) -> None:
    t = r.totals()
    print(f"replay of {leaf_text(r.leaf_id)}: window {fmt_int(t['contextWindow'])}, reserve "
          f"{fmt_int(t['reserveTokens'])} → threshold {fmt_int(t['threshold'])}; keepRecentTokens "
          f"{fmt_int(t['keepRecentTokens'])}")
    print(sizes_note(r, dropped))
    untried = len(_fired(r)) - t["compactions"] - t["skipped"]
    print(f"{plural(t['checks'], 'check')} (after each assistant message), {plural(t['compactions'], 'compaction')}"
          + (f", {plural(t['skipped'], 'trigger')} with nothing to compact" if t["skipped"] else "")
          + (f", {plural(untried, 'trigger')} not replayed (a runaway from entry {r.runaway[1]})"
             if r.runaway is not None and untried else ""))
    if r.events:
        print(f"{'#':>3} {'after entry':<12} {'at':>6} {'before':>9} {'after':>8} {'kept from':<10} split")
        for i, e in enumerate(r.events, 1):
            print(f"{fmt_int(i):>3} {str(e.after_entry_id)[:12]:<12} {fmt_int(e.branch_index):>6} "
                  f"{fmt_int(e.tokens_before):>9} "
                  f"{fmt_int(e.tokens_after):>8} {str(e.first_kept_entry_id)[:10]:<10} "
                  f"{'yes' if e.is_split_turn else 'no'}")
    print(f"peak {fmt_int(t['peakTokens'])} tokens (at a check), final {fmt_int(t['finalTokens'])} (at the end of "
          f"the branch), removed {fmt_int(t['tokensRemoved'])} in total")
    if r.overflows:
        first, largest = r.overflows[0], max(r.overflows, key=lambda o: o[2])
        print(f"over the window: at {plural(len(r.overflows), 'check')} the context exceeds the context window "
              f"{fmt_int(r.context_window)} (it would not have fit); the first after entry {first[1]} (at "
              f"{fmt_int(first[0])}, {fmt_int(first[2])} tokens), the largest after {largest[1]} "
              f"(at {fmt_int(largest[0])}, {fmt_int(largest[2])})")
    _sparkline(r)


def _sparkline(r: SimulationResult, width: int = 72) -> None:
    """The context size after each check as bars of eight heights, each an eighth of the scale."""
    sizes = [after for _, _, _, after in r.trace]
    if len(sizes) < 2:
        return
    bars = "▁▂▃▄▅▆▇█"
    step = max(1, len(sizes) // width)
    sampled = [max(sizes[i:i + step]) for i in range(0, len(sizes), step)]
    top = max(max(sampled), r.threshold, 1)
    scale = "the threshold" if top == r.threshold else "the largest size after a check"
    each = "the size after one check" if step == 1 else \
        f"the largest size after {'up to ' if len(sizes) % step else ''}{step} checks"
    print("context after each check: " + "".join(bars[min(7, s * 8 // top)] for s in sampled))
    print(f"  each bar: {each} (and any compaction there); heights in eighths of {fmt_int(top)} tokens ({scale}): "
          f"█ = {fmt_int(-(-7 * top // 8))} to {fmt_int(top)}")
