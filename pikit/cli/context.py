"""``pikit context``: what the model sees at one or more leaves."""

from __future__ import annotations

import sys
from argparse import Namespace
from typing import Any

from ..describe import message_preview
from ..projection import Projection
from .common import one_line, open_session, print_json, resolve_leaf, width


def run(args: Namespace) -> int:
    session = open_session(args)
    leaves = [resolve_leaf(session, leaf) for leaf in args.leaf] if args.leaf else [session.leaf_id]
    if args.json:
        out: dict[str, Any] = {}
        for leaf in leaves:
            out[leaf] = session.context(leaf).to_json()
        print_json({"leaves": out})
        return 0
    counter = None
    if args.count:
        from ..counting import get_counter

        counter = get_counter()
        if counter.notice:
            print(f"pikit: note: {counter.notice}", file=sys.stderr)
    for i, leaf in enumerate(leaves):
        if i:
            print()
        print_context(session.context(leaf), counter)
    return 0


def print_context(ctx: Projection, counter: Any) -> None:
    """The readable context listing: header figures, then one row per message."""
    size = ctx.size
    model = ctx.model or {}
    model_text = f"{model.get('provider')}/{model.get('modelId')}" if model else "unknown model"
    how = (f"{size.usage_tokens:,} reported by the provider + {size.trailing_tokens:,} estimated after it"
           if size.usage_index is not None else
           "estimated" + (" (recorded usage is stale: an edit or compaction came after it)" if size.stale else ""))
    print(f"context at {ctx.leaf_id}  ({len(ctx.path)} entries on the branch, {len(ctx.messages)} messages)")
    print(f"model {model_text}, thinking {ctx.thinking_level}")
    print(f"tokens {size.tokens:,}: {how}")
    if ctx.compaction is not None:
        print(f"compaction {ctx.compaction.id} summarizes {len(ctx.summarized_ids)} earlier entries; "
              f"kept from {ctx.compaction.data.get('firstKeptEntryId')}")
    if ctx.omitted_ids or ctx.replaced_ids:
        print(f"context edits: {len(ctx.omitted_ids)} omitted, {len(ctx.replaced_ids)} replaced")
    counts = counter.count_messages(ctx.messages) if counter is not None else None
    cols = width()
    head = f"{'#':>3}  {'role':<17} {'source':<8} {'est':>6}" + (f" {counter.name[:6]:>6}" if counts else "") + \
        f" {'usage':>7}  text"
    print()
    print(head)
    fixed = len(head) - 4
    for i, (message, source, est) in enumerate(zip(ctx.messages, ctx.sources, ctx.estimates, strict=True)):
        usage = message.get("usage") if message.get("role") == "assistant" else None
        total = usage.get("totalTokens") if isinstance(usage, dict) else None
        role = str(message.get("role"))
        row = f"{i:>3}  {role:<17} {str(source)[:8]:<8} {est:>6}"
        if counts:
            row += f" {counts[i]:>6}"
        row += f" {total if total is not None else '':>7}  "
        print(row + one_line(message_preview(message), max(20, cols - fixed - 2)))
