"""``pikit tree``: the entry tree, flat JSON or an indented view like Pi's ``/tree``."""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from ..describe import entry_preview
from ..session import Session
from .common import one_line, open_session, print_json, resolve_leaf, width


def run(args: Namespace) -> int:
    session = open_session(args)
    if args.json:
        print_json(session.tree())
        return 0
    leaf = resolve_leaf(session, args.leaf) if args.leaf else session.leaf_id
    print_tree(session, leaf, args.filter, args.search)
    return 0


def print_tree(session: Session, leaf: Any, mode: str, search: str) -> None:
    """The indented tree view (``▶`` leaf, ``•`` active branch, ``⑂n`` a fork into n branches)."""
    rows = session.flatten(leaf, mode=mode, search=search)
    name = session.name
    title = f"{name} — " if name else ""
    print(f"{title}{session.path}: {len(session)} entries, {len(session.roots)} root(s), "
          f"{len(session.labels)} label(s); showing {len(rows)} ({mode})")
    cols = width()
    for row in rows:
        marker = "▶" if row.is_leaf else ("•" if row.on_active_path else " ")
        label = f" [{row.label}]" if row.label else ""
        fork = f" ⑂{row.children}" if row.branch_point else ""
        prefix = f"{'  ' * row.indent}{marker} {str(row.id)[:8]}{label}{fork} "
        entry = row.entry
        text = f"{entry.role}: {entry_preview(entry)}" if entry.type == "message" else entry_preview(entry)
        print(prefix + one_line(text, max(20, cols - len(prefix))))
    if leaf is None:
        print("(leaf reset: the next message starts a new root)")
