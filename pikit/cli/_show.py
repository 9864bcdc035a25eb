"""``pikit show``: one entry in full, as stored and as the model sees it at a leaf."""

from __future__ import annotations

from argparse import Namespace
from dataclasses import dataclass
from typing import Any

from .. import jsjson
from .._context.describe import entry_kind, leaf_text
from .._context.projected import ProjectedEntry, Projection
from .._format.entry import Entry
from .._formatting import fmt_int, plural
from .._session import Session
from ._common import open_session, print_json
from ._json import diff as show_json
from ._pager import paged


@dataclass(frozen=True)
class Seen:
    """What the model sees of one entry at one leaf.

    ``status`` is a context entry's (``kept``, ``replaced``, ``omitted``, ``summary``,
    ``silent``) or ``summarized`` (on the branch, replaced by the head compaction's summary)
    or ``off-branch`` (not on the path to the leaf); ``by`` is the context edit or compaction
    responsible, when there is one.
    """

    entry: Entry
    projection: Projection
    status: str
    by: Any
    context: ProjectedEntry | None


def seen(session: Session, entry: Entry, leaf: Any) -> Seen:
    """How ``entry`` reaches the model in the context at ``leaf``."""
    ctx = session.context(leaf)
    found = next((pe for pe in ctx.entries if pe.entry.id == entry.id), None)
    if found is not None:
        return Seen(entry, ctx, found.status, found.edit.id if found.edit is not None else None, found)
    if entry.id not in {e.id for e in ctx.path}:
        return Seen(entry, ctx, "off-branch", None, None)
    compaction = ctx.compaction.id if ctx.compaction is not None else None
    if compaction is not None and entry.id in ctx.summarized_ids:
        return Seen(entry, ctx, "summarized", compaction, None)
    return Seen(entry, ctx, "silent", None, None)


def run(args: Namespace) -> int:
    session = open_session(args, note_v1=True)
    entry = session.entry(args.id)
    leaf = session.resolve_leaf(args.leaf) if args.leaf else session.leaf_id
    what = seen(session, entry, leaf)
    if args.json:
        print_json(show_json.show(what, label=session.labels.get(entry.id)))
        return 0
    with paged(not args.no_pager):
        print_entry(session, what)
    return 0


_SAYS = {
    "kept": "sent as stored",
    "replaced": "sent with the content context edit {by} put in its place",
    "omitted": "hidden: context edit {by} leaves its messages out",
    "summary": "the head compaction: its summary opens the context",
    "silent": "on the branch, but it contributes no message to the model",
    "summarized": "hidden: compaction {by} replaced it with its summary",
    "off-branch": "not on the branch to this leaf: the model does not see it there",
}


def pretty(value: Any, indent: str = "") -> str:
    """``value`` as JavaScript's ``JSON.stringify(value, null, 2)`` writes it (numbers and escapes as Pi's)."""
    inner = indent + "  "
    if isinstance(value, dict) and value:
        items = (f"{inner}{jsjson.stringify(str(k))}: {pretty(v, inner)}" for k, v in jsjson.js_items(value))
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list) and value:
        return "[\n" + ",\n".join(inner + pretty(v, inner) for v in value) + f"\n{indent}]"
    return jsjson.stringify(value)


def pretty_or_compact(value: Any) -> str:
    """:func:`pretty`, or the compact JSON for a value nested too deep to indent."""
    try:
        return pretty(value)
    except RecursionError:
        return jsjson.stringify(value)


def print_entry(session: Session, what: Seen) -> None:
    """The entry's facts, its stored JSON, then the messages the model sees from it."""
    entry = what.entry
    line = f", line {entry.line}" if entry.line is not None else ""
    print(f"entry {entry.id}: {entry_kind(entry)}{line}")
    parent = entry.parent_id if entry.parent_id is not None else "none (a root)"
    print(f"parent {parent}; timestamp {entry.timestamp}")
    label = session.labels.get(entry.id)
    if label is not None:
        print(f"label {label}")
    children = session.children(entry.id)
    if children:
        print(f"children {', '.join(str(c) for c in children[:10])}" + (" …" if len(children) > 10 else ""))
    print()
    print("as stored:")
    print(pretty_or_compact(entry.data))
    print()
    ctx = what.projection
    print(f"as the model sees it at {leaf_text(ctx.leaf_id)}: {_SAYS[what.status].format(by=what.by)}")
    context = what.context
    if context is None or not context.messages:
        return
    print(f"{plural(len(context.messages), 'message')}, {plural(context.tokens, 'token')} (Pi's estimate)")
    first = ctx.entries.index(context)
    position = sum(len(pe.messages) for pe in ctx.entries[:first])
    for offset, (message, estimate) in enumerate(zip(context.messages, context.estimates, strict=True)):
        print()
        print(f"message {fmt_int(position + offset)} of the context: {message.get('role')}, "
              f"{plural(estimate, 'token')}")
        print(pretty_or_compact(message))
