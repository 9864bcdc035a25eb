"""``pikit branch-summary``: what leaving a branch would summarize (``--dry-run``), or write it."""

from __future__ import annotations

import sys
from argparse import Namespace
from typing import Any

from .._formatting import fmt_int, plural
from .._inert import echo
from .._session import Session
from ..compaction._branch_summary import BranchPreparation, collect_branch, prepare_branch
from ..errors import PikitError
from ._common import open_session, print_json
from ._json import compaction as compaction_json


def parse_pair(session: Session, text: str) -> tuple[Any, Any]:
    """``FROM:TO`` → two entry ids."""
    if ":" not in text:
        raise PikitError(f"--pair takes FROM:TO (two entry ids), got {echo(text)}")
    old, _, target = text.partition(":")
    return session.resolve_leaf(old), session.resolve_leaf(target)


def run(args: Namespace) -> int:
    session = open_session(args)
    pairs = [parse_pair(session, p) for p in args.pair]
    if not args.dry_run:
        from ._compact_run import run_branch_summary

        if len(pairs) != 1 or (args.budget and len(args.budget) != 1):
            raise PikitError("writing a branch summary takes one --pair and one --budget; use --dry-run to compare")
        return run_branch_summary(session, pairs[0], args.budget[0] if args.budget else None, args)
    budgets = list(args.budget) if args.budget else [0]
    items: list[tuple[Any, Any, BranchPreparation]] = []
    for old, target in pairs:
        entries, ancestor = collect_branch(session, old, target)
        for budget in budgets:
            items.append((old, target, prepare_branch(entries, budget, ancestor)))
    if args.json:
        print_json(compaction_json.branch_dry_run(items))
        return 0
    for old, target, prep in items:
        read, modified = prep.file_ops.lists()
        budget = f"budget {fmt_int(prep.budget)}" if prep.budget else "no budget"
        print(f"{old} → {target} (common ancestor {prep.common_ancestor_id}, {budget}): "
              f"{plural(len(prep.entries), 'entry')} left behind, {plural(len(prep.messages), 'message')} gathered, "
              f"{plural(prep.total_tokens, 'token')}; files read {fmt_int(len(read))}, "
              f"modified {fmt_int(len(modified))}")
    print("(dry run: nothing written)", file=sys.stderr)
    return 0
