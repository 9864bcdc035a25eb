"""``pikit compact``: prepare a compaction (``--dry-run``, a sweep) or run one."""

from __future__ import annotations

import sys
from argparse import Namespace
from typing import Any

from .._context.describe import leaf_text
from .._context.projection import Projection
from .._formatting import fmt_int, plural
from .._session import Session
from ..compaction._preparation import CompactionTrace, trace_compaction
from ..compaction._settings import Settings
from ..errors import PikitError
from ._common import one_line, open_session, print_json, session_settings
from ._context import NO_FLAG_HINT
from ._json import compaction as compaction_json


def run(args: Namespace) -> int:
    session = open_session(args)
    leaves = [session.resolve_leaf(leaf) for leaf in args.leaf] if args.leaf else [session.leaf_id]
    if args.dry_run:
        return _dry_run(session, leaves, args)
    from ._compact_run import run_compaction

    if len(leaves) != 1 or (args.keep_recent_tokens and len(args.keep_recent_tokens) != 1):
        raise PikitError("a real compaction takes one --leaf and one --keep-recent-tokens value; "
                         "use --dry-run to compare several")
    return run_compaction(session, leaves[0], args)


def keep_values(args: Namespace, session: Session) -> list[int]:
    """The keepRecentTokens values to try: the option, or the effective setting."""
    if args.keep_recent_tokens:
        return list(args.keep_recent_tokens)
    return [session_settings(args, session).for_model(args.model).keep_recent_tokens]


def nothing_reason(trace: CompactionTrace) -> str:
    """Why there is nothing to compact, with the figures of Pi's preparation (one phrase)."""
    walk = trace.cut
    if walk is None:
        return "the leaf is a compaction (Pi compacts nothing right after one)"
    since = "since the last compaction" if walk.start > 0 else "in the context"
    entries = trace.projection.entries
    if walk.start >= walk.end:
        return f"no entry {since}" if entries else "the branch is empty"
    if walk.nearest_cut_index < 0:
        return (f"no entry {since} where Pi may cut (a user, assistant, shell, custom or summary message; "
                "never a tool result)")
    if trace.reason == "the first kept entry has no id":
        return f"the first kept entry (context entry #{walk.cut.first_kept_index}) has no id"
    if not walk.reached:
        return (f"only {fmt_int(walk.running_sum(walk.start))} tokens {since}, under keepRecentTokens "
                f"{fmt_int(walk.keep_recent_tokens)}: all of it is kept")
    kept = entries[walk.cut.first_kept_index].entry.id
    first = f", the first entry {since}" if walk.reached_index == walk.start else ""
    return (f"the newest {fmt_int(walk.running_sum(walk.reached_index))} tokens reach keepRecentTokens "
            f"{fmt_int(walk.keep_recent_tokens)} only at {entries[walk.reached_index].entry.id}{first}: the cut "
            f"falls at {kept}, with no message before it to summarize")


def _trigger(ctx: Projection, settings: Settings) -> str:
    """Where Pi's compaction threshold is for the leaf's model, with the window's source, or that it is unknown."""
    from ..llm._window import model_spec, model_window  # (the model facts: read on first use)

    model = model_spec(ctx.model)
    window = model_window(model)
    if window.tokens is None:
        return f"{window.describe(NO_FLAG_HINT)} (no threshold)"
    reserve = settings.for_model(model).reserve_tokens
    threshold = window.tokens - reserve
    where = ("above it: Pi compacts at its next check" if ctx.tokens > threshold
             else f"{plural(threshold - ctx.tokens, 'token')} below it")
    return (f"threshold {fmt_int(threshold)} = window {fmt_int(window.tokens)} ({window.source}) − reserveTokens "
            f"{fmt_int(reserve)}; {where}")


def _dry_run(session: Session, leaves: list[Any], args: Namespace) -> int:
    keeps = keep_values(args, session)
    results: dict[Any, dict[str, CompactionTrace]] = {}
    for leaf in leaves:
        branch = session.branch(leaf)
        projection = session.context(leaf) if branch else None
        results[leaf] = {str(k): trace_compaction(branch, k, projection) for k in keeps}
    if args.json:
        print_json(compaction_json.dry_run({leaf: {keep: trace.preparation for keep, trace in per.items()}
                                            for leaf, per in results.items()}))
        return 0
    for leaf, per in results.items():
        ctx = session.context(leaf)
        print(f"compaction preparation at {leaf_text(leaf)}: {plural(len(ctx.messages), 'message')}, "
              f"{fmt_int(ctx.tokens)} tokens in context")
        print(f"  Pi's trigger: {_trigger(ctx, session_settings(args, session))}")
        print(f"{'keepRecent':>10}  {'firstKept':<9} {'split':<5} {'summarize':>9} {'prefix':>6} "
              f"{'kept≈':>8}  files (read/modified)")
        for keep, trace in per.items():
            prep = trace.preparation
            if prep is None:
                print(f"{fmt_int(int(keep)):>10}  nothing to compact: {nothing_reason(trace)}")
                continue
            split = "yes" if prep.is_split_turn else "no"
            print(f"{fmt_int(int(keep)):>10}  {str(prep.first_kept_entry_id)[:9]:<9} {split:<5} "
                  f"{fmt_int(len(prep.messages_to_summarize)):>9} {fmt_int(len(prep.turn_prefix_messages)):>6} "
                  f"{fmt_int(prep.kept_tokens):>8}  "
                  f"{fmt_int(len(prep.read_files))}/{fmt_int(len(prep.modified_files))}")
        last = next((t.preparation for t in reversed(list(per.values())) if t.preparation is not None), None)
        if last is not None and last.previous_summary:
            print(f"updates the previous summary: {one_line(last.previous_summary, 90)}")
        print()
    how = "drop --dry-run to append the compaction to FILE" if args.in_place else \
        "drop --dry-run and add -o OUT to compact"
    print(f"(dry run: nothing written; {how})", file=sys.stderr)
    return 0
