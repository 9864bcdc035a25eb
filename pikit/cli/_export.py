"""``pikit export``: a session at one leaf as a self-contained HTML page."""

from __future__ import annotations

import sys
from argparse import Namespace

from .._context.describe import leaf_text
from ._common import open_session, session_settings


def run(args: Namespace) -> int:
    from ..export import PageSettings, write_page
    from ..llm._window import model_window

    session = open_session(args)
    leaf = session.resolve_leaf(args.leaf) if args.leaf else session.leaf_id
    model = args.model
    if model is None and leaf is not None:
        recorded = session.context(leaf).model or {}
        if recorded.get("modelId") is not None:
            provider = recorded.get("provider")
            model = f"{provider}/{recorded['modelId']}" if provider else str(recorded["modelId"])
    effective = session_settings(args, session).for_model(model)
    window = model_window(model, given=args.context_window)
    settings = PageSettings(model or "", window.tokens, effective.reserve_tokens, effective.keep_recent_tokens,
                            window.source)
    path = write_page(session, settings, args.output, leaf, tree_filter=args.filter, overwrite=args.force)
    print(f"wrote {path}: {session.title} at {leaf_text(leaf)} (open it in any browser; it loads nothing)",
          file=sys.stderr)
    return 0
