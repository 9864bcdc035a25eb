"""``pikit evaluate --probes PROVIDER/ID``: each compaction probed by a model, after the deterministic evaluation.

A probe that fails (a timeout, an HTTP error, an answer that is not the JSON asked for) leaves
the deterministic evaluation as it is: one line on stderr, and ``{"error": ...}`` in the JSON.
"""

from __future__ import annotations

import sys
from argparse import Namespace
from collections.abc import Sequence
from typing import Any

from .._formatting import fmt_int
from .._inert import echo, inert
from ..compaction._evaluation import Evaluation
from ..errors import SummarizerError
from ..llm._probes import MAX_GRADE, ProbeResult, probe
from ..llm._select import probe_client

__all__ = ["print_probes", "run_probes"]


def run_probes(session: Any, evaluations: Sequence[Evaluation], args: Namespace) -> list[ProbeResult | str] | None:
    """Each evaluation's probes, or the message of its failure; ``None`` without ``--probes``."""
    if not args.probes:
        return None
    out: list[ProbeResult | str] = []
    with probe_client(args.probes, base_url=args.base_url, timeout=args.timeout, retries=args.retries) as client:
        for item in evaluations:
            try:
                out.append(probe(session, item.compaction_id, client=client))
            except SummarizerError as error:
                print(f"pikit: probes of compaction {echo(item.compaction_id)} failed, the deterministic evaluation "
                      f"stands: {error}", file=sys.stderr)
                out.append(str(error))
    return out


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def print_probes(result: ProbeResult | str) -> None:
    """The probe section of one compaction in the human output."""
    if isinstance(result, str):
        print("  probes: failed (the deterministic figures above stand)")
        return
    scores, alone = result.scores, result.summary_scores
    print(f"  probes ({inert(str(result.model))}): {_share(scores['overall'])} overall from the context, "
          f"{_share(alone['overall'])} from the summary alone, {fmt_int(len(result.probes))} questions")
    for kind, value in scores.items():
        if kind != "overall":
            count = sum(1 for p in result.probes if p.kind == kind)
            print(f"    {kind:<14} {_share(value):>5}  {_share(alone.get(kind)):>5}  of {fmt_int(count)}")
    for p in result.probes:
        print(f"    {p.score}/{MAX_GRADE} {p.summary_score}/{MAX_GRADE}  {p.kind:<12}  {inert(p.question)}")
