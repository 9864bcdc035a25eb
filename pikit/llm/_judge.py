"""A model as the judge of what a compaction kept: per fact, does the context after it still hold it?

:func:`pikit.evaluate` decides by fixed rules (``pikit/compaction/_kept.py``), which err towards
"lost" when a summary rewords heavily. :func:`judge` asks a model instead, through a client's
``pikit.llm._client.HTTPSummarizer.complete``: the context after the compaction (summary and
kept messages, bounded as the probes bound it) and the numbered facts of the evaluation, at most
:data:`FACTS_PER_CALL` per call; the model answers one ``true`` or ``false`` per fact. The
result is the same evaluation with the model's verdicts in ``kept`` and its name in
``judged_by``. A failed call, or an answer that is not one boolean per fact, raises
:class:`~pikit.errors.SummarizerError` and changes nothing: the caller keeps the deterministic
verdicts (``pikit evaluate --judge`` says so on stderr).

How far to trust a judge is measured, not assumed: ``benchmarks/judge_agreement.py`` runs one
over the gold set in ``tests/data/lab-gold`` and reports its accuracy and Cohen's κ.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from pikit._tree.sessiontree import SessionTree
from pikit.compaction._entries import CompactionResult
from pikit.compaction._evaluation import Evaluation, compaction_span
from pikit.compaction._facts import Fact
from pikit.errors import SummarizerOutputError

from ._probes import ProbeClient, _conversation, _json_list, _numbered

__all__ = ["FACTS_PER_CALL", "judge", "judge_span"]

FACTS_PER_CALL = 80
"""The most facts one call asks about (more facts take more calls)."""

_SYSTEM = ("You check whether a compacted coding-agent context still holds facts from the part it replaced. "
           "You answer with one JSON object and nothing else: no prose, no code fence.")

_PROMPT = """<context>
{context}
</context>

Each fact below comes from the part of a coding agent's session that a compaction replaced. For each,
answer whether the context above still holds it: true when the context states the same thing, in any
words (a function by another qualified form of its name, a path by its base name, a command by what it
ran); false when it does not, or states something else. A file counts as changed only where the context
says it changed; a list of files read is not a change.

<facts>
{facts}
</facts>

Answer with one boolean per fact, in their order:
{{"held": [true, false]}}"""


def _verdicts(text: str, count: int) -> list[bool]:
    held = _json_list(text, "held", "judge")
    if len(held) != count or not all(isinstance(v, bool) for v in held):
        raise SummarizerOutputError(f"judge: {len(held)} verdicts for {count} facts, or not all true or false")
    return held


def judge_span(facts: Sequence[Fact], context: Sequence[Mapping[str, Any]], *, client: ProbeClient
               ) -> tuple[list[bool], str | None]:
    """The model's verdict on each of ``facts`` against the messages of ``context``, and the model's name."""
    text = _conversation(context)
    out: list[bool] = []
    model: str | None = None
    for start in range(0, len(facts), FACTS_PER_CALL):
        batch = facts[start:start + FACTS_PER_CALL]
        listed = _numbered([f"[{f.kind}] {f.text}" for f in batch])
        answer = client.complete(_SYSTEM, _PROMPT.format(context=text, facts=listed))
        out += _verdicts(answer.text, len(batch))
        model = model or answer.model
    return out, model


def judge(session: SessionTree, evaluation: Evaluation, *, client: ProbeClient,
          compaction: CompactionResult | None = None) -> Evaluation:
    """``evaluation`` (of a compaction recorded in ``session``, or of ``compaction`` pikit built for it) with a
    model's verdicts in ``kept`` and its name in ``judged_by``; the context is the one :func:`pikit.evaluate`
    read. A failed call raises :class:`~pikit.errors.SummarizerError`.

    >>> judged = judge(session, pikit.evaluate(session, "c1"), client=probe_client("openai/gpt-4.1-mini"))
    ...                                                                        # doctest: +SKIP
    >>> judged.key_recall, judged.judged_by                                    # doctest: +SKIP
    (0.91, 'openai/gpt-4.1-mini')
    """
    _, context = compaction_span(session, compaction if compaction is not None else evaluation.compaction_id)
    if not evaluation.facts:
        return evaluation
    verdicts, model = judge_span(evaluation.facts, context, client=client)
    return dataclasses.replace(evaluation, kept=verdicts, judged_by=model or "model")
