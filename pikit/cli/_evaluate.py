"""``pikit evaluate``: what each compaction kept of the span it replaced, and what it lost."""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from .._formatting import fmt_int, plural
from .._inert import echo
from ..compaction._evaluation import Evaluation, compactions_on_branch, evaluate
from ..errors import EntryError, PikitError
from ._common import open_session, print_json
from ._evaluate_judge import run_judge
from ._evaluate_probes import print_probes, run_probes
from ._json import evaluation as evaluation_json


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _print(item: Evaluation) -> None:
    tokens = ""
    if item.tokens_before is not None and item.tokens_after is not None:
        ratio = f", {item.compression:.1f}× smaller (Pi's estimate: {fmt_int(item.estimated_before)} → " \
                f"{fmt_int(item.tokens_after)})" if item.compression is not None and item.estimated_before else ""
        tokens = f"; {fmt_int(item.tokens_before)} → {fmt_int(item.tokens_after)} tokens{ratio}"
    key = [k for f, k in zip(item.facts, item.kept, strict=True) if f.importance == "key"]
    judged = f", judged by {item.judged_by}" if item.judged_by else ""
    print(f"compaction {item.compaction_id} ({item.strategy}, {item.model or 'model not recorded'}{judged}): "
          f"{fmt_int(sum(key))} of {plural(len(key), 'key fact')} kept ({_share(item.key_recall)}); "
          f"{fmt_int(sum(item.kept))} of {plural(len(item.facts), 'fact')} in all ({_share(item.recall['overall'])})"
          f"{tokens}")
    counts: dict[str, int] = {}
    for fact in item.facts:
        counts[fact.kind] = counts.get(fact.kind, 0) + 1
    for kind, value in item.recall.items():
        if kind != "overall":
            print(f"  {kind:<14} {_share(value):>5}  of {fmt_int(counts[kind])}")
    lost = sorted(item.lost, key=lambda f: f.importance != "key")
    if lost:
        print(f"  lost ({fmt_int(len(lost))}, key facts first):")
        width = max(len(f.kind) for f in lost)
        for fact in lost:
            print(f"    {fact.kind:<{width}}  {fact.importance:<5}  {str(fact.source)[:8]:<8}  {fact.text}")
    else:
        print("  nothing lost")


def _simulated(session: Any, args: Namespace) -> list[Evaluation]:
    """``--strategy``: the compactions each strategy simulates on the branch, evaluated."""
    from ..llm._window import UNKNOWN_WINDOW_HINT, model_window
    from ._simulate_strategies import _branch_model, replays

    leaf = session.resolve_leaf(args.leaf) if args.leaf else session.leaf_id
    model = args.model or _branch_model(session, leaf)
    window = model_window(model, given=args.context_window)
    if window.tokens is None:
        raise PikitError(f"{model or 'the branch'}: {UNKNOWN_WINDOW_HINT}")
    runs = replays(args, session, leaf, window.tokens, reserve=args.reserve_tokens, keep=args.keep_recent_tokens)
    evaluated = evaluate(session, runs) if any(r.events for r in runs) else []
    found = evaluated if isinstance(evaluated, list) else [evaluated]
    if not found:
        if all(r.strategy in ("none", "mask-observations") for r in runs):
            raise EntryError(leaf, f"{', '.join(r.strategy or 'pi' for r in runs)} never compact (no compaction to "
                                   "evaluate): `pikit simulate --strategy` scores them on common ground")
        raise EntryError(leaf, f"{', '.join(r.strategy or 'pi' for r in runs)} simulated no compaction on the branch "
                               f"at {leaf} with a window of {fmt_int(window.tokens)}: nothing to evaluate (a smaller "
                               "--context-window makes them fire)")
    return found


def run(args: Namespace) -> int:
    session = open_session(args)
    if args.strategy:
        items: list[Any] = _simulated(session, args)
    elif args.compaction:
        items = [evaluate(session, compaction) for compaction in args.compaction]
    elif args.all:
        entries = [e for e in session.entries if e.type == "compaction"]
        if not entries:
            raise EntryError(None, f"{echo(session.path)} holds no compaction: nothing to evaluate")
        items = [evaluate(session, e.id) for e in entries]
    else:
        if not compactions_on_branch(session):
            raise EntryError(None, f"the branch at {session.resolve_leaf()} of {echo(session.path)} has no compaction: "
                                   "nothing to evaluate (--all evaluates every compaction in the file)")
        items = [evaluate(session, e.id) for e in compactions_on_branch(session)]
    evaluations = run_judge(session, [i for i in items if isinstance(i, Evaluation)], args)
    probes = run_probes(session, evaluations, args)
    if args.json:
        print_json(evaluation_json.with_probes(evaluation_json.evaluations(evaluations), probes))
        return 0
    for i, item in enumerate(evaluations):
        if i:
            print()
        _print(item)
        if probes is not None:
            print_probes(probes[i])
    return 0
