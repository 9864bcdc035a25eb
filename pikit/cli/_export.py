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
    from ..export import PageSettings, write_page
    from ..llm._window import model_window

    model = args.model
    if model is None and leaf is not None:
        recorded = session.context(leaf).model or {}
        if recorded.get("modelId") is not None:
            provider = recorded.get("provider")
            model = f"{provider}/{recorded['modelId']}" if provider else str(recorded["modelId"])
    effective = session_settings(args, session).for_model(model)
    window = model_window(model, given=args.context_window)
    reserve = effective.reserve_tokens if args.reserve_tokens is None else args.reserve_tokens
    keep = effective.keep_recent_tokens if args.keep_recent_tokens is None else args.keep_recent_tokens
    if window.tokens is not None and reserve >= window.tokens:
        given = "--reserve-tokens" if args.reserve_tokens is not None else "reserveTokens (the settings)"
        raise PikitError(f"{given} {fmt_int(reserve)} is not below the context window {fmt_int(window.tokens)}: "
                         "nothing would be left for the context; give a smaller --reserve-tokens or a larger "
                         "--context-window")
    settings = PageSettings(model or "", window.tokens, reserve, keep, window.source)
    path = write_page(session, settings, args.output, leaf, tree_filter=args.filter, overwrite=args.force)
    print(f"wrote {path}: {session.title} at {leaf_text(leaf)} (open it in any browser; it loads nothing)",
          file=sys.stderr)
    return 0
