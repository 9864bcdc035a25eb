"""``pikit tree``: the entry tree, flat JSON or an indented view like Pi's ``/tree``."""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from .._context.describe import entry_preview
from .._formatting import fmt_int, plural
from .._session import Session
from .._tree.tree import describe_hidden
from ._common import one_line, open_session, print_json, width
from ._json import tree as tree_json
from ._pager import paged


def run(args: Namespace) -> int:
    session = open_session(args, note_v1=True)
    if args.json:
        print_json(tree_json.tree(session))
        return 0
    leaf = session.resolve_leaf(args.leaf) if args.leaf else session.leaf_id
    with paged(not args.no_pager):
        print_tree(session, leaf, args.filter, args.search, limit=args.limit, tail=args.tail)
    return 0


def window(count: int, limit: int | None, tail: int | None) -> range:
    """The positions ``--limit N`` (the first N) or ``--tail N`` (the last N) keep of ``count``."""
    if limit is not None:
        return range(min(limit, count))
    if tail is not None:
        return range(max(count - tail, 0), count)
    return range(count)


def print_tree(session: Session, leaf: Any, mode: str, search: str, *, limit: int | None = None,
               tail: int | None = None) -> None:
    """The indented tree view (``▶`` leaf, ``•`` active branch, ``⑂n`` a fork into n branches)."""
    rows = session.tree_rows(leaf, mode=mode, search=search)
    name = session.name
    title = f"{name} — " if name else ""
    hidden = rows.hidden
    why = f"; {fmt_int(sum(hidden.values()))} hidden: {describe_hidden(hidden)}" if hidden else ""
    print(f"{title}{session.path}: {plural(len(session), 'entry')}, {plural(len(session.roots), 'root')}, "
          f"{plural(len(session.labels), 'label')}; showing {fmt_int(len(rows))} ({mode}){why}")
    shown = window(len(rows), limit, tail)
    if shown.start:
        print(f"… {plural(shown.start, 'earlier row')} (--limit N shows the first rows)")
    cols = width()
    for row in rows.window(shown.start, shown.stop):
        marker = "▶" if row.is_leaf else ("•" if row.on_active_path else " ")
        label = f" [{row.label}]" if row.label else ""
        fork = f" ⑂{fmt_int(row.children)}" if row.branch_point else ""
        prefix = f"{'  ' * row.indent}{marker} {str(row.id)[:8]}{label}{fork} "
        entry = row.entry
        text = f"{entry.role}: {entry_preview(entry)}" if entry.type == "message" else entry_preview(entry)
        print(prefix + one_line(text, max(20, cols - len(prefix))))
    if shown.stop < len(rows):
        print(f"… {plural(len(rows) - shown.stop, 'more row')} (--tail N shows the last rows)")
    if leaf is None:
        print("(leaf reset: the next message starts a new root)")
