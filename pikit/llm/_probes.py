"""Probes: questions a model asks of a replaced span and answers from the compacted context alone.

The deterministic evaluation (:func:`pikit.evaluate`) matches facts by rule; probes measure
what a model can still *do* with the context after a compaction. Four calls per compaction
(three when the context has no summary), each through a client's
``complete``:

1. **questions**: the model reads the replaced span and writes questions of four kinds, each
   with its reference answer taken from the span (:data:`PROBE_KINDS`: ``recall`` — the
   exact error, the exact command, a number or name; ``artifact`` — the files modified,
   created or examined; ``continuation`` — the next step, the failing tests; ``decision`` —
   what was decided and why);
2. **answers**: the model reads only the compacted context (summary and kept messages) and
   answers every question, ``unknown`` when the context does not hold the answer;
3. **answers from the summary alone**: the same, from the summary without the kept messages
   (a continuation question the kept messages answer says nothing of the summary); without a
   summary every answer is ``unknown`` and no call is made;
4. **grades**: the model grades every answer against its reference on pikit's rubric, 0 to
   :data:`MAX_GRADE`. Abstaining beats a wrong answer: ``unknown`` gets 1, a wrong answer 0.

Each text sent is bounded: a span or context longer than :data:`MAX_PROMPT_CHARS` characters
(serialized) keeps its first quarter and its last three quarters of that, with a line saying
how much was left out between them.

:attr:`ProbeResult.scores` maps ``"overall"`` and each kind asked to the mean grade divided by
:data:`MAX_GRADE` (0 to 1), answered from the whole context; :attr:`ProbeResult.summary_scores`
the same, answered from the summary alone. A failed call or an answer that is not the JSON asked
for raises :class:`~pikit.errors.SummarizerError` (the client's own errors pass through unchanged).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pikit import jsjson
from pikit._context.serialize import serialize_conversation, to_model_messages
from pikit._tree.sessiontree import SessionTree
from pikit.compaction._entries import CompactionResult
from pikit.compaction._evaluation import Evaluation, compaction_span
from pikit.compaction._summarizer import SummaryResult
from pikit.errors import SummarizerOutputError

__all__ = ["MAX_GRADE", "MAX_PROMPT_CHARS", "PROBE_KINDS", "Probe", "ProbeClient", "ProbeResult", "probe"]

PROBE_KINDS = ("recall", "artifact", "continuation", "decision")
"""The kinds of probe question, in the order reports list them."""

MAX_GRADE = 5
"""The highest grade of the rubric (a grade is a whole number from 0 to this)."""

MAX_PROMPT_CHARS = 240_000
"""The most characters of a span or a context sent in one prompt (about 60,000 tokens)."""

_SYSTEM = ("You test whether a compacted coding-agent context still holds what the agent needs. "
           "You answer with one JSON object and nothing else: no prose, no code fence.")

_QUESTIONS = """<conversation>
{span}
</conversation>

The conversation above is a span of a coding agent's session that a compaction replaced with a summary.
Write up to {per_kind} questions of each kind below, each answerable from this conversation alone, and
give each its reference answer: short, exact, taken from the conversation.

- recall: a specific detail stated in it (the exact error message, the exact command that was run, a number or a name)
- artifact: the files it modified, created or examined
- continuation: what the agent was about to do next, which tests still fail, what was left in progress
- decision: what was decided, and why

Leave out a kind the conversation gives nothing for. Answer with:
{{"questions": [{{"kind": "recall", "question": "...", "reference": "..."}}]}}"""

_ANSWERS = """<context>
{context}
</context>

You are the agent resuming the session above. Answer each question from this context alone; when the
context does not hold the answer, answer "unknown". Be short and exact.

<questions>
{questions}
</questions>

Answer with one string per question, in their order:
{{"answers": ["...", "..."]}}"""

_GRADES = """Grade each answer against its reference answer on this rubric:

5: it holds everything the reference holds (the exact names, paths, commands, numbers)
4: it holds the essentials; a minor detail is missing or loose
3: partly right; an important detail is missing or vague
2: mostly vague, or mostly missing, but nothing in it is wrong
1: "unknown", or no answer (abstaining is better than a wrong answer)
0: wrong: it states something the reference contradicts

{items}

Answer with one whole number from 0 to 5 per question, in their order:
{{"grades": [5, 0]}}"""


class ProbeClient(Protocol):
    """What the probes need of a model: :class:`~pikit.llm.OpenAISummarizer` and
    :class:`~pikit.llm.AnthropicSummarizer` both have it."""

    def complete(self, system_prompt: str, user_prompt: str) -> SummaryResult:
        """The model's answer to one system and one user prompt."""
        ...


@dataclass(frozen=True, slots=True)
class Probe:
    """One question: its ``kind`` (one of :data:`PROBE_KINDS`), the ``question``, the ``reference``
    answer from the replaced span, the ``answer`` from the compacted context and its ``score``
    (the rubric's grade, 0 to :data:`MAX_GRADE`), the ``summary_answer`` from the summary alone and
    its ``summary_score``."""

    kind: str
    question: str
    reference: str
    answer: str
    score: int
    summary_answer: str = "unknown"
    summary_score: int = 1


@dataclass(frozen=True)
class ProbeResult:
    """The probes of one compaction: the ``model`` that asked, answered and graded, and every probe."""

    compaction_id: Any
    model: str | None
    probes: list[Probe]

    def _scores(self, summary: bool) -> dict[str, float | None]:
        def mean(grades: list[int]) -> float | None:
            return sum(grades) / (len(grades) * MAX_GRADE) if grades else None

        def grade(p: Probe) -> int:
            return p.summary_score if summary else p.score

        out: dict[str, float | None] = {"overall": mean([grade(p) for p in self.probes])}
        for kind in PROBE_KINDS:
            grades = [grade(p) for p in self.probes if p.kind == kind]
            if grades:
                out[kind] = mean(grades)
        return out

    @property
    def scores(self) -> dict[str, float | None]:
        """``"overall"`` and each kind asked → mean grade / :data:`MAX_GRADE`, answered from the whole compacted
        context (``None``: no question)."""
        return self._scores(False)

    @property
    def summary_scores(self) -> dict[str, float | None]:
        """The same as :attr:`scores`, answered from the summary alone."""
        return self._scores(True)

    def records(self) -> list[dict[str, Any]]:
        """One dict per probe: ``kind``, ``question``, ``reference``, ``answer``, ``score``, ``summaryAnswer``,
        ``summaryScore``."""
        return [{"kind": p.kind, "question": p.question, "reference": p.reference, "answer": p.answer,
                 "score": p.score, "summaryAnswer": p.summary_answer, "summaryScore": p.summary_score}
                for p in self.probes]


_FENCE_OPENING = re.compile(r"```[\w-]*[ \t]*")


def _unfenced(text: str) -> str:
    """What one code fence around the whole answer holds (its first and last lines are the fence), else ``text``.

    Found with string operations, in time linear in the answer's length, whatever the answer holds.
    """
    head, opened, rest = text.strip().partition("\n")
    body, closed, tail = rest.rpartition("\n")
    if opened and closed and _FENCE_OPENING.fullmatch(head) and tail.strip() == "```":
        return body
    return text


def _json_list(text: str, key: str, phase: str) -> list[Any]:
    """The list under ``key`` of the JSON object a model answered (one code fence around it is allowed).

    The answer is parsed without recursion, so a value nested however deep is only a value of the wrong kind.
    """
    try:
        data = jsjson.loads(_unfenced(text))
    except ValueError:
        raise SummarizerOutputError(f"probes: the {phase} answer is not JSON") from None
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, list):
        raise SummarizerOutputError(f'probes: the {phase} answer has no "{key}" list')
    return value


def _questions(text: str) -> list[tuple[str, str, str]]:
    out = []
    for item in _json_list(text, "questions", "questions"):
        if not isinstance(item, dict):
            raise SummarizerOutputError("probes: a question is not an object")
        kind, question, reference = item.get("kind"), item.get("question"), item.get("reference")
        if kind not in PROBE_KINDS:
            shown = repr(kind[:40]) if isinstance(kind, str) else f"of type {type(kind).__name__}"
            raise SummarizerOutputError(f"probes: unknown question kind {shown}")
        if not isinstance(question, str) or not question.strip() or not isinstance(reference, str):
            raise SummarizerOutputError("probes: a question without its text or reference")
        out.append((kind, question.strip(), reference.strip()))
    return sorted(out, key=lambda q: PROBE_KINDS.index(q[0]))


def _answers(text: str, count: int) -> list[str]:
    answers = _json_list(text, "answers", "answers")
    if len(answers) != count or not all(isinstance(a, str) for a in answers):
        raise SummarizerOutputError(f"probes: {len(answers)} answers to {count} questions, or not all strings")
    return [a.strip() for a in answers]


def _grades(text: str, count: int) -> list[int]:
    grades = _json_list(text, "grades", "grades")
    if len(grades) != count or not all(type(g) is int and 0 <= g <= MAX_GRADE for g in grades):
        raise SummarizerOutputError(f"probes: {len(grades)} grades for {count} answers, or not all whole numbers "
                                    f"from 0 to {MAX_GRADE}")
    return grades


def _numbered(lines: Sequence[str]) -> str:
    return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))


def bounded(text: str, limit: int = MAX_PROMPT_CHARS) -> str:
    """``text`` cut to about ``limit`` characters: its first quarter and last three quarters of that, and a line
    saying how many characters were left out between them."""
    if len(text) <= limit:
        return text
    head, tail = limit // 4, limit - limit // 4
    return f"{text[:head]}\n\n[… {len(text) - head - tail:,} characters left out …]\n\n{text[-tail:]}"


def _conversation(messages: Sequence[Mapping[str, Any]]) -> str:
    return bounded(serialize_conversation(to_model_messages(messages)))


def _answered(client: ProbeClient, context: Sequence[Mapping[str, Any]], questions: list[str]) -> list[str]:
    text = client.complete(_SYSTEM, _ANSWERS.format(context=_conversation(context), questions=_numbered(questions)))
    return _answers(text.text, len(questions))


def run_probes(span: Sequence[Mapping[str, Any]], context: Sequence[Mapping[str, Any]], *, client: ProbeClient,
               per_kind: int = 2, compaction_id: Any = None) -> ProbeResult:
    """Probe one compaction from its replaced messages (``span``) and the messages after it (``context``)."""
    if isinstance(per_kind, bool) or not isinstance(per_kind, int) or per_kind < 1:
        raise ValueError(f"per_kind must be a whole number of at least 1, not {per_kind!r}")
    asked = client.complete(_SYSTEM, _QUESTIONS.format(span=_conversation(span), per_kind=per_kind))
    questions = _questions(asked.text)
    if not questions:
        return ProbeResult(compaction_id, asked.model, [])
    texts = [q for _, q, _ in questions]
    answers = _answered(client, context, texts)
    summary = [m for m in context if m.get("role") in ("compactionSummary", "branchSummary")]
    alone = _answered(client, summary, texts) if summary else ["unknown"] * len(questions)
    items = "\n\n".join(f"Question {i}: {q}\nReference: {r}\nAnswer: {a}"
                        for i, ((_, q, r), a) in enumerate(zip([*questions, *questions], [*answers, *alone],
                                                                strict=True), 1))
    grades = _grades(client.complete(_SYSTEM, _GRADES.format(items=items)).text, 2 * len(questions))
    count = len(questions)
    return ProbeResult(compaction_id, asked.model, [
        Probe(k, q, r, a, g, s, h) for (k, q, r), a, g, s, h
        in zip(questions, answers, grades[:count], alone, grades[count:], strict=True)])


def probe(session: SessionTree, compaction: Any, *, client: ProbeClient, per_kind: int = 2) -> ProbeResult:
    """Ask ``client``'s model about what one compaction of ``session`` replaced, answer from what it left.

    ``compaction`` is a compaction entry's id (or a unique prefix of one), the
    :class:`~pikit.compaction.Evaluation` of a recorded one, or a :class:`~pikit.compaction.CompactionResult`
    pikit built for ``session``; the span and the context are those :func:`pikit.evaluate`
    reads. ``per_kind`` is the most questions asked of each kind. Four calls; a failed one, or
    an answer that is not the JSON asked for, raises :class:`~pikit.errors.SummarizerError`.

    >>> result = probe(session, "c1", client=OpenAISummarizer("gpt-4.1-mini"))   # doctest: +SKIP
    >>> result.scores                                                             # doctest: +SKIP
    {'overall': 0.6, 'recall': 0.5, 'artifact': 0.9, 'continuation': 0.4, 'decision': 0.6}
    """
    if isinstance(compaction, Evaluation):
        compaction = compaction.compaction_id
    replaced, context = compaction_span(session, compaction)
    compaction_id = compaction.entry.get("id") if isinstance(compaction, CompactionResult) \
        else session.entry(compaction).id
    return run_probes([m for _, m in replaced], context, client=client, per_kind=per_kind,
                      compaction_id=compaction_id)
