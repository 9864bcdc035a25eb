#!/usr/bin/env python3
"""A model judge against the lab's gold set: how often its kept/lost verdicts agree with a careful reader's.

    python benchmarks/judge_agreement.py --judge anthropic/claude-sonnet-4-5
    python benchmarks/judge_agreement.py --judge openai/gpt-4.1-mini --base-url URL

Every compaction of ``tests/data/lab-gold/gold`` is evaluated, judged by the model
(``pikit.llm.judge``) and compared, fact by fact, with the gold labels (``kept``/``lost``; facts
the reader found to be no fact are left out), next to pikit's own rules on the same facts:
accuracy and Cohen's κ, over all compactions and over the real-model and sample ones (the public
recordings among them).
A compaction whose judge call fails is reported and left out of the judge's figures. The key
comes from ``OPENAI_API_KEY`` or ``ANTHROPIC_API_KEY``; the shared sessions from ``PIKIT_SHARED``
(default: ``../shared`` beside the repository).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pikit  # noqa: E402
from pikit.compaction import Evaluation  # noqa: E402
from pikit.errors import SummarizerError  # noqa: E402
from pikit.llm import judge  # noqa: E402
from pikit.llm._select import probe_client  # noqa: E402

GOLD = ROOT / "tests" / "data" / "lab-gold" / "gold"
SHARED = Path(os.environ.get("PIKIT_SHARED", ROOT.parent / "shared")) / "sessions"
REAL = ("00-", "01-", "08-", "09-")


def _figures(pairs: list[tuple[bool, bool]]) -> str:
    if not pairs:
        return "no facts"
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    expected = sum((sum(a == v for a, _ in pairs) / n) * (sum(b == v for _, b in pairs) / n) for v in (True, False))
    kappa = (observed - expected) / (1 - expected) if expected < 1 else 1.0
    return f"accuracy {observed:.3f}, kappa {kappa:.3f} over {n} facts"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judge", required=True, metavar="PROVIDER/ID")
    parser.add_argument("--base-url", metavar="URL")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    rules: dict[str, list[tuple[bool, bool]]] = {"all": [], "real": []}
    model: dict[str, list[tuple[bool, bool]]] = {"all": [], "real": []}
    with probe_client(args.judge, base_url=args.base_url, timeout=args.timeout) as client:
        for path in sorted(GOLD.glob("*.jsonl")):
            lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            head, gold = lines[0], {(r["kind"], r["text"]): r["label"] for r in lines[1:] if not r.get("missed")}
            reference = head["session"]
            session = pikit.load(SHARED / reference.removeprefix("shared:") if reference.startswith("shared:")
                                 else GOLD.parent / "public" / reference.removeprefix("public:")
                                 if reference.startswith("public:") else ROOT / reference)
            evaluation = pikit.evaluate(session, head["compaction"])
            assert isinstance(evaluation, Evaluation)
            try:
                judged: Evaluation | None = judge(session, evaluation, client=client)
            except SummarizerError as error:
                print(f"{path.stem}: the judge failed ({error})")
                judged = None
            real = path.name.startswith(REAL) or reference.startswith("public:")
            groups = ("all", "real") if real else ("all",)
            for i, fact in enumerate(evaluation.facts):
                label = gold.get((fact.kind, fact.text))
                if label not in ("kept", "lost"):
                    continue
                for group in groups:
                    rules[group].append((label == "kept", evaluation.kept[i]))
                    if judged is not None:
                        model[group].append((label == "kept", judged.kept[i]))
    for group, title in (("all", "all compactions"), ("real", "the real-model and sample compactions")):
        print(f"{title}: judge {_figures(model[group])}; pikit's rules {_figures(rules[group])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
