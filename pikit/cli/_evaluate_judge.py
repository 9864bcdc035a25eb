"""``pikit evaluate --judge PROVIDER/ID``: each recorded compaction's facts judged by a model instead of by rule.

A judge call that fails (a timeout, an HTTP error, an answer that is not one verdict per fact)
leaves that compaction's deterministic verdicts as they are: one line on stderr, and
``"judgedBy": null`` in the JSON. A simulated compaction (``--strategy``) has no recorded
context to show a model; its verdicts stay pikit's, and stderr says so once.
"""

from __future__ import annotations

import sys
from argparse import Namespace
from typing import Any

from .._inert import echo
from ..compaction._evaluation import Evaluation
from ..errors import SummarizerConfigError, SummarizerError
from ..llm._judge import judge
from ..llm._select import probe_client, split_model

__all__ = ["run_judge"]


def run_judge(session: Any, evaluations: list[Evaluation], args: Namespace) -> list[Evaluation]:
    """``evaluations`` with a model's verdicts where ``--judge`` names one and its calls succeed."""
    if not args.judge:
        return evaluations
    if split_model(args.judge)[0] is None:
        raise SummarizerConfigError(f"name the judge model as provider/model in --judge, not {args.judge!r}")
    if args.strategy:
        print("pikit: --judge reads recorded compactions; the simulated ones keep pikit's verdicts", file=sys.stderr)
        return evaluations
    out = []
    with probe_client(args.judge, base_url=args.base_url, timeout=args.timeout, retries=args.retries) as client:
        for item in evaluations:
            try:
                out.append(judge(session, item, client=client))
            except SummarizerError as error:
                print(f"pikit: the judge of compaction {echo(item.compaction_id)} failed, pikit's verdicts stand: "
                      f"{error}", file=sys.stderr)
                out.append(item)
    return out
