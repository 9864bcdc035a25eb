"""Real compactions and branch summaries from the command line (they write)."""

from __future__ import annotations

import contextlib
import sys
from argparse import Namespace
from collections.abc import Iterator
from typing import Any

from .._format.write import Appender, check_target
from .._formatting import fmt_int, plural
from .._session import Session
from ..compaction._entries import build_branch_summary, build_compaction, last_line_is_whole, write_entry
from ..errors import PikitError, WriteError
from ._common import print_json, session_settings
from ._json import compaction as compaction_json


@contextlib.contextmanager
def _write_target(args: Namespace, session: Session) -> Iterator[Appender | None]:
    """Decide where to write before spending a model call: check ``-o OUT``, or take the
    in-place lock (held until the line is written, so a second run refuses)."""
    if bool(args.output) == bool(args.in_place):
        raise WriteError("choose where to write: -o OUT (a new copy) or --in-place (append to FILE)")
    if not args.in_place:
        check_target(args.output, source=session.path, overwrite=args.force)
        yield None
        return
    assert session.path is not None
    with Appender(session.path) as appender:
        appender.check_unchanged(session.report.bytes, session.report.mtime_ns)
        appender.needs_newline(end_last_line=last_line_is_whole(session))
        yield appender
        if appender.added_newline:
            print(f"pikit: note: {session.path}: its last line had no newline; one was added before the new entry",
                  file=sys.stderr)


def summarizer_from(args: Namespace) -> Any:
    """The summarizer ``--summarizer``, ``--model``, ``--base-url``, ``--timeout`` and ``--retries`` choose
    (offline by default)."""
    from ..llm._select import get_summarizer

    return get_summarizer(args.summarizer or "offline", model=args.model, base_url=args.base_url,
                          timeout=args.timeout, retries=args.retries)


def _model_spec(args: Namespace, session: Session, leaf: Any) -> str | None:
    if args.model:
        return str(args.model)
    model = session.context(leaf).model if leaf is not None else None
    if model and model.get("provider") and model.get("modelId"):
        return f"{model['provider']}/{model['modelId']}"
    return None


def run_compaction(session: Session, leaf: Any, args: Namespace) -> int:
    with _write_target(args, session) as appender:
        return _compaction(session, leaf, args, appender)


def _compaction(session: Session, leaf: Any, args: Namespace, appender: Appender | None) -> int:
    settings = session_settings(args, session).for_model(_model_spec(args, session, leaf))
    keep = args.keep_recent_tokens[0] if args.keep_recent_tokens else settings.keep_recent_tokens
    summarizer = summarizer_from(args)
    if not args.json and sys.stderr.isatty():
        print(f"compacting at {leaf} (keepRecentTokens={fmt_int(keep)}) with the {summarizer.name} summarizer…",
              file=sys.stderr)
    result = build_compaction(session, leaf, keep_recent_tokens=keep, summarizer=summarizer,
                              instructions=args.instructions)
    if not args.allow_larger_summary:
        result.check_size("--allow-larger-summary writes it anyway")
    path = write_entry(session, result.entry, output=args.output, in_place=args.in_place, overwrite=args.force,
                       appender=appender)
    if args.json:
        print_json(compaction_json.compaction(result, path))
        return 0
    prep = result.preparation
    print(f"appended compaction {result.entry['id']} to {path}")
    print(f"  summarized {plural(len(prep.messages_to_summarize), 'message')}"
          + (f" + a split turn's first {fmt_int(len(prep.turn_prefix_messages))}" if prep.is_split_turn else "")
          + f"; kept from {prep.first_kept_entry_id}")
    print(f"  tokens {fmt_int(result.tokens_before)} → {fmt_int(result.tokens_after)}; "
          f"files read {fmt_int(len(prep.read_files))}, modified {fmt_int(len(prep.modified_files))}")
    return 0


def run_branch_summary(session: Session, pair: tuple[Any, Any], budget: int | None, args: Namespace) -> int:
    with _write_target(args, session) as appender:
        return _branch_summary(session, pair, budget, args, appender)


def _branch_summary(session: Session, pair: tuple[Any, Any], budget: int | None, args: Namespace,
                    appender: Appender | None) -> int:
    old, target = pair
    if budget is None:
        from ..llm._window import model_window

        spec = _model_spec(args, session, old)
        window = model_window(spec)
        if window.tokens is None:
            raise PikitError(f"window unknown for {spec or 'a model not recorded'}: pass --budget N or add the model "
                             "to ~/.pi/agent/models.json")
        budget = max(0, window.tokens - session_settings(args, session).branch_summary_reserve_tokens)
    summarizer = summarizer_from(args)
    result = build_branch_summary(session, old, target, summarizer=summarizer, budget=budget,
                                  instructions=args.instructions)
    path = write_entry(session, result.entry, output=args.output, in_place=args.in_place, overwrite=args.force,
                       appender=appender)
    if args.json:
        print_json(compaction_json.branch_summary(result, path))
        return 0
    print(f"appended branch summary {result.entry['id']} to {path} (leaf now {result.new_leaf}; "
          f"{plural(len(result.preparation.messages), 'message')} of the abandoned branch summarized)")
    return 0
