"""``pikit export``: a session at one leaf as a self-contained HTML page, or as Markdown."""

from __future__ import annotations

import sys
from argparse import Namespace

from .._context.describe import leaf_text
from .._formatting import fmt_int
from ..errors import PikitError
from ._common import open_session, session_settings


def run(args: Namespace) -> int:
    if args.tree and args.format != "markdown":
        raise PikitError("--tree writes the whole tree in Markdown: add --format markdown")
    session = open_session(args)
    leaf = session.resolve_leaf(args.leaf) if args.leaf else session.leaf_id
    if args.format == "markdown":
        from ..export import write_markdown

        path = write_markdown(session, args.output, leaf, tree=args.tree, overwrite=args.force)
        print(f"wrote {path}: {session.title} at {leaf_text(leaf)} (Markdown)", file=sys.stderr)
        return 0
    from ..export._page import page_settings, write_page

    settings = page_settings(session, leaf, session_settings(args, session), model=args.model,
                             context_window=args.context_window, reserve_tokens=args.reserve_tokens,
                             keep_recent_tokens=args.keep_recent_tokens)
    if settings.context_window is not None and settings.reserve_tokens >= settings.context_window:
        given = "--reserve-tokens" if args.reserve_tokens is not None else "reserveTokens (the settings)"
        raise PikitError(f"{given} {fmt_int(settings.reserve_tokens)} is not below the context window "
                         f"{fmt_int(settings.context_window)}: nothing would be left for the context; give a smaller "
                         "--reserve-tokens or a larger --context-window")
    path = write_page(session, settings, args.output, leaf, tree_filter=args.filter, overwrite=args.force)
    print(f"wrote {path}: {session.title} at {leaf_text(leaf)} (open it in any browser; it loads nothing)",
          file=sys.stderr)
    return 0
