"""``pikit diff``: what changes in the model's context between two leaves, or across a compaction."""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from .._context.describe import leaf_text, message_preview
from .._context.diff import DiffRow, ProjectionDiff, diff_compaction, diff_leaves
from .._formatting import fmt_delta, fmt_int, plural
from .._session import Session
from ..errors import EntryError
from ._common import one_line, open_session, print_json, width
from ._json import diff as diff_json
from ._pager import paged

FOLD = 4  # unchanged runs longer than this are folded to their first and last message (as the notebook does)
_SYMBOL = {"added": "+", "removed": "\u2212", "changed": "~", "same": "="}


def run(args: Namespace) -> int:
    session = open_session(args, note_v1=True)
    result, compaction = compare(session, args.a, args.b, args.compaction)
    ancestor = shared_end(result) if compaction is None else None
    if args.json:
        print_json(diff_json.diff(result, compaction=compaction, ancestor=ancestor))
        return 0
    with paged(not args.no_pager):
        print_diff(result, compaction, ancestor, every=args.all)
    return 0


def compare(session: Session, a: Any, b: Any, compaction: Any) -> tuple[ProjectionDiff, Any]:
    """The diff the arguments ask for, and the compaction's full id (``None`` for two leaves)."""
    if compaction is not None:
        if a is not None or b is not None:
            raise EntryError(None, "give either A and B or --compaction ID, not both")
        entry = session.entry(compaction)
        if entry.type != "compaction":
            raise EntryError(entry.id, f"--compaction {entry.id} is a {entry.type} entry, not a compaction")
        return diff_compaction(session, entry.id), entry.id
    if a is None or b is None:
        raise EntryError(None, "give two entries, A and B, or --compaction ID")
    leaf_a, leaf_b = session.resolve_leaf(a), session.resolve_leaf(b)
    roots = [session.branch(leaf)[0].id for leaf in (leaf_a, leaf_b)]
    if roots[0] != roots[1]:
        raise EntryError(leaf_b, f"{leaf_a} and {leaf_b} are on different trees of the file (roots {roots[0]} and "
                                 f"{roots[1]}): their contexts share no entry")
    return diff_leaves(session, leaf_a, leaf_b), None


def shared_end(result: ProjectionDiff) -> Any:
    """The last entry both branches hold (``None`` when they share none)."""
    on_a = {e.id for e in result.a.path}
    return next((e.id for e in reversed(result.b.path) if e.id in on_a), None)


def print_diff(result: ProjectionDiff, compaction: Any, ancestor: Any, *, every: bool = False) -> None:
    """The readable diff: what is compared, the totals, then one row per message (long unchanged runs folded)."""
    t = result.totals
    if compaction is not None:
        print(f"compaction {compaction}: the context at {leaf_text(result.a.leaf_id)} (before) → at {compaction} "
              "(after)")
    else:
        shared = f"branches share the path up to {ancestor}" if ancestor is not None else "no shared entry"
        print(f"context diff: a {leaf_text(result.a.leaf_id)} → b {leaf_text(result.b.leaf_id)}  ({shared})")
    print(f"context size {fmt_int(t.tokens_a)} → {fmt_int(t.tokens_b)} ({fmt_delta(t.tokens_delta)}); "
          f"estimates {fmt_int(t.estimate_a)} → {fmt_int(t.estimate_b)} ({fmt_delta(t.estimate_delta)})")
    if not result.rows:
        print("both contexts are empty")
        return
    head = f"   {'role':<17} {'source a':<8} {'source b':<8} {'est a':>7} {'est b':>7} {'Δ':>7}  {'note':<16} text"
    print()
    print(head)
    room = max(40, width() - len(head) + 4)
    for run in _runs(result.rows):
        if every or len(run) <= FOLD or run[0].status != "same":
            for row in run:
                print(_line(row, room))
            continue
        print(_line(run[0], room))
        print(f"   … {plural(len(run) - 2, 'identical message')} ({fmt_int(sum(r.estimate_b for r in run[1:-1]))} "
              "tokens) …")
        print(_line(run[-1], room))
    print()
    print(f"+{fmt_int(t.added)} added ({fmt_delta(t.added_tokens)}), \u2212{fmt_int(t.removed)} removed "
          f"({fmt_delta(-t.removed_tokens)}), ~{fmt_int(t.changed)} changed ({fmt_delta(t.changed_delta)}), "
          f"={fmt_int(t.same)} same; {plural(len(result.rows), 'message')}")


def _runs(rows: list[DiffRow]) -> list[list[DiffRow]]:
    runs: list[list[DiffRow]] = []
    for row in rows:
        if row.status == "same" and runs and runs[-1][0].status == "same":
            runs[-1].append(row)
        else:
            runs.append([row])
    return runs


def _side(value: Any, present: bool) -> str:
    return str(value)[:8] if present else ""


def _line(row: DiffRow, room: int) -> str:
    try:
        text = message_preview(row.message or {})
    except Exception as exc:  # a message of a shape no preview reads: the row still prints
        text = f"<unreadable message: {type(exc).__name__}>"
    if row.status == "changed" and row.message_a is not None:
        text = f"was: {one_line(message_preview(row.message_a), room // 2)} now: {text}"
    return (f"{_SYMBOL[row.status]}  {str(row.role)[:17]:<17} {_side(row.source_a, row.index_a is not None):<8} "
            f"{_side(row.source_b, row.index_b is not None):<8} "
            f"{fmt_int(row.estimate_a) if row.index_a is not None else '':>7} "
            f"{fmt_int(row.estimate_b) if row.index_b is not None else '':>7} {fmt_delta(row.delta):>7}  "
            f"{row.note:<16} {one_line(text, room)}")
