"""``pikit context``: what the model sees at one or more leaves."""

from __future__ import annotations

import sys
from argparse import Namespace
from typing import Any

from .._context.describe import leaf_text, message_preview
from .._context.projection import Projection
from .._context.tokens import message_usage, usage_total
from .._formatting import fmt_int, plural
from ._common import one_line, open_session, print_json, width
from ._json import context as context_json
from ._pager import paged
from ._tree import window


def run(args: Namespace) -> int:
    session = open_session(args, note_v1=True)
    leaves = [session.resolve_leaf(leaf) for leaf in args.leaf] if args.leaf else [session.leaf_id]
    if args.json:
        print_json(context_json.context(session, leaves))
        return 0
    counter = None
    if args.count:
        from .._context.counting import get_counter

        counter = get_counter()
        if counter.notice:
            print(f"pikit: note: {counter.notice}", file=sys.stderr)
    with paged(not args.no_pager):
        for i, leaf in enumerate(leaves):
            if i:
                print()
            print_context(session.context(leaf), counter, limit=args.limit, tail=args.tail)
    return 0


#: What to do about an unknown window, for a command without ``--context-window``.
NO_FLAG_HINT = "add the model to ~/.pi/agent/models.json"


def model_text(model: Any) -> str:
    """``model provider/id`` of a projection, or that the branch records none."""
    if not isinstance(model, dict) or model.get("modelId") is None:
        return "model not recorded on this branch"
    provider = model.get("provider")
    return f"model {provider}/{model['modelId']}" if provider else f"model {model['modelId']}"


def size_text(ctx: Projection) -> str:
    """``tokens N: how Pi's context size rule obtained it``."""
    size = ctx.size
    if size.usage_index is not None:
        how = (f"{fmt_int(size.usage_tokens)} reported by the provider + {fmt_int(size.trailing_tokens)} "
               "estimated after it")
    elif size.stale:
        how = "estimated (recorded usage is stale: an edit or compaction came after it)"
    else:
        how = "estimated (no usage recorded)"
    return f"tokens {fmt_int(size.tokens)}: {how}"


def print_context(ctx: Projection, counter: Any, *, limit: int | None = None, tail: int | None = None) -> None:
    """The readable context listing: header figures, then one row per message."""
    from ..llm._window import model_spec, model_window  # (the model facts: read on first use)

    print(f"context at {leaf_text(ctx.leaf_id)}  ({plural(len(ctx.path), 'entry')} on the branch, "
          f"{plural(len(ctx.messages), 'message')})")
    print(f"{model_text(ctx.model)}, thinking {ctx.thinking_level}; "
          f"{model_window(model_spec(ctx.model)).describe(NO_FLAG_HINT)}")
    print(size_text(ctx))
    if ctx.compaction is not None:
        print(f"compaction {ctx.compaction.id} summarizes {plural(len(ctx.summarized_ids), 'earlier entry')}; "
              f"kept from {ctx.compaction.data.get('firstKeptEntryId')}")
    if ctx.omitted_ids or ctx.replaced_ids:
        print(f"context edits: {fmt_int(len(ctx.omitted_ids))} omitted, {fmt_int(len(ctx.replaced_ids))} replaced")
    counts = counter.count_messages(ctx.messages) if counter is not None else None
    cols = width()
    head = f"{'#':>3}  {'role':<17} {'source':<8} {'est':>7}" + (f" {counter.name[:6]:>7}" if counts else "") + \
        f" {'usage':>8}  text"
    print()
    print(head)
    fixed = len(head) - 4
    shown = window(len(ctx.messages), limit, tail)
    if shown.start:
        print(f"  … {plural(shown.start, 'earlier message')}")
    for i in shown:
        message, source, est = ctx.messages[i], ctx.sources[i], ctx.estimates[i]
        # The header's rule: a usable usage (not aborted or errored, above zero), totalTokens or its parts.
        usage = message_usage(message)
        total = usage_total(usage) if usage is not None else None
        role = str(message.get("role"))
        row = f"{fmt_int(i):>3}  {role:<17} {str(source)[:8]:<8} {fmt_int(est):>7}"
        if counts:
            row += f" {fmt_int(counts[i]):>7}"
        row += f" {fmt_int(total) if total is not None else '':>8}  "
        print(row + one_line(message_preview(message), max(20, cols - fixed - 2)))
    if shown.stop < len(ctx.messages):
        print(f"  … {plural(len(ctx.messages) - shown.stop, 'more message')}")
