"""Strategies scored on common ground: one fact pool per branch point, every strategy's context at that request.

A per-compaction evaluation scores each compaction over what *it* replaced, so two strategies
are judged on different spans (masking a few tool results against summarizing hundreds of
messages). Here every replay of one branch is judged on the same facts:

- **branch points**: the requests at which each replay kept the context it sent
  (``SimulationResult.contexts``; ``points`` of :func:`~pikit.compaction.simulate`, by default
  eight requests spread evenly over the branch, the last one included);
- **the fact pool** of a point: the facts of everything the uncompacted context held up to that
  request: every message of the branch before it (compactions recorded in the file left out,
  the system prompt and context edits not applied), extracted once by
  :func:`~pikit.compaction.extract_facts`;
- **kept**: whether the strategy's context at that same request (its summary, its kept and
  masked messages) still holds each fact of the pool, by :func:`~pikit.compaction.evaluate_span`'s
  matching rules; a fact from an entry the context still holds verbatim is held (its text came
  from there), and a context no compaction has changed yet is the uncompacted one and holds the
  whole pool.

A strategy's recall is the mean, over the branch points where its request fits the window, of
the share of the pool its context holds (:func:`ground_recall`); ``none`` holds everything and
is the ceiling. A request over the window cannot be sent (a real run fails there): such a point
holds nothing the model reads, and counts in no mean (``GroundPoint.fits``). Recall over a
subset of facts is one call of :func:`pool_recall` with a predicate on the fact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._context.projection import entry_messages
from .._tree.sessiontree import SessionTree
from ._context_text import context_text
from ._evaluation import Evaluation
from ._facts import Fact, extract_facts
from ._kept import Haystack, literals
from ._simulate import SimulationResult

__all__ = ["GroundPoint", "common_ground", "ground_recall", "pool_recall"]

#: A predicate on facts: which of them a recall counts.
FactFilter = Callable[[Fact], bool]


def pool_recall(facts: Sequence[Fact], kept: Sequence[bool], where: FactFilter | None = None) -> float | None:
    """The share of ``facts`` (those ``where`` accepts, all without it) whose ``kept`` flag is set;
    ``None`` when none is counted."""
    flags = [k for f, k in zip(facts, kept, strict=True) if where is None or where(f)]
    return sum(flags) / len(flags) if flags else None


@dataclass(frozen=True, repr=False)
class GroundPoint:
    """One replay at one branch point: the pool's facts and which of them its context holds.

    Attributes:
        strategy: the replay's strategy (``pi`` for a replay without one).
        branch_index: the branch index of the request's assistant message.
        entry_id: that message's entry id.
        context_tokens: the size of the request the replay measured.
        evaluation: the pool's facts and the kept flags (``evaluation.facts``, ``evaluation.kept``).
        fits: whether the request fits the context window; one that does not cannot be sent, so the
            model reads nothing of it: every ``kept`` flag is false and :meth:`recall` is ``None``.
    """

    strategy: str
    branch_index: int
    entry_id: Any
    context_tokens: int | None
    evaluation: Evaluation
    fits: bool = True

    def recall(self, where: FactFilter | None = None) -> float | None:
        """The share of the pool (or of its facts ``where`` accepts) the context holds (``None`` over the window)."""
        return pool_recall(self.evaluation.facts, self.evaluation.kept, where) if self.fits else None

    def __repr__(self) -> str:
        recall = self.recall()
        share = "over the window" if not self.fits else "no facts" if recall is None else \
            f"{recall:.0%} of {len(self.evaluation.facts):,} facts"
        return f"<GroundPoint {self.strategy} at branch index {self.branch_index}: {share}>"


def key_fact(fact: Fact) -> bool:
    """Whether ``fact`` is a key fact (``importance == "key"``): the facts key recall is measured over."""
    return fact.importance == "key"


def ground_recall(points: Iterable[GroundPoint], where: FactFilter | None = None) -> float | None:
    """The mean over ``points`` (one replay's) of the share of each pool its context holds
    (``where``: of the facts it accepts); points with no such fact, and points over the window, are left out."""
    values = [r for p in points if (r := p.recall(where)) is not None]
    return sum(values) / len(values) if values else None


def common_ground(session: SessionTree, runs: SimulationResult | Iterable[SimulationResult]) -> list[GroundPoint]:
    """Every replay of ``runs`` scored at every branch point it kept a context at, against one fact pool
    per point (see the module docstring); the points of one replay follow each other, in branch order.

    The replays are those of one branch of ``session`` (``simulate(..., strategy=[...])``). A
    point's pool is extracted once for every replay; a fact whose source entry the replay's context
    still holds verbatim is held (its text came from there), every other one is matched against the
    context's text.
    """
    items = [runs] if isinstance(runs, SimulationResult) else list(runs)
    cwd = session.header.get("cwd")
    cwd = cwd if isinstance(cwd, str) else None
    out: list[GroundPoint] = []
    pools: dict[tuple[Any, int], tuple[list[Fact], list[Any]]] = {}
    for run in items:
        branch = session.branch(run.leaf_id) if run.leaf_id is not None else []
        sizes = {i: size for i, (size, _) in zip(_requests(branch), run.requests, strict=False)}
        for index in sorted(run.contexts):
            key = (run.leaf_id, index)
            if key not in pools:
                pairs = _pool(branch, index)
                pools[key] = extract_facts(pairs), list(dict.fromkeys(source for source, _ in pairs))
            facts, sources = pools[key]
            context = run.contexts[index]
            size = sizes.get(index)
            fits = size is None or size <= run.context_window
            kept = [False] * len(facts) if not fits else [True] * len(facts) if context is None else \
                _held(facts, context, run.verbatim.get(index, frozenset()), cwd)
            evaluation = Evaluation(branch[index].id, run.strategy or "pi", None, size, facts, kept, None, sources)
            out.append(GroundPoint(run.strategy or "pi", index, branch[index].id, size, evaluation, fits))
    return out


def _held(facts: list[Fact], context: list[dict[str, Any]], verbatim: frozenset[Any], cwd: str | None) -> list[bool]:
    """Which of ``facts`` the ``context`` holds: those from an entry it holds ``verbatim``, and those its text
    matches (the text normalized and matched once, only when a fact needs it)."""
    haystack: Haystack | None = None
    kept = []
    for fact in facts:
        if fact.source in verbatim:
            kept.append(True)
            continue
        if haystack is None:
            haystack = Haystack(context_text(context), cwd,
                                literals=literals(f for f in facts if f.source not in verbatim))
        kept.append(haystack.holds(fact))
    return kept


def _requests(branch: Sequence[Any]) -> list[int]:
    return [n for n, e in enumerate(branch) if e.type == "message" and e.role == "assistant"]


def _pool(branch: Sequence[Any], index: int) -> list[tuple[Any, Mapping[str, Any]]]:
    """What the uncompacted context held at the request of ``branch[index]``: every message before it."""
    return [(e.id, m) for e in branch[:index] if e.type not in ("compaction", "context_edit")
            for m in entry_messages(e) if m.get("role") != "system"]
