"""What a compaction kept and what it lost: the facts of the replaced span, matched against the context after it.

One core, :func:`evaluate_span`, takes what any compaction leaves behind: the replaced
messages (each with its source entry id), the messages of the context after it, the tokens
before and after, and the strategy's name. Its adapters:

- a compaction recorded in a session (:func:`evaluate` with an id, or every compaction on
  the branch): the replaced span is what the context held just before the compaction (the
  projection at its parent) and no longer holds after it (the projection at the compaction
  itself). That is the messages from the previous compaction's kept point (or the start of
  the branch) up to ``firstKeptEntryId``, plus the previous compaction's summary: what an
  earlier summary carried is a fact the new one has to carry again. ``tokensBefore`` is the
  recorded one; tokens after is the context size at the compaction, as ``pikit context``
  measures it (Pi's estimate: no request has been made since); the compression ratio is
  Pi's estimate of the context before over that, one unit on both sides;
- a compaction pikit ran (a :class:`~pikit.compaction.CompactionResult` of
  :func:`~pikit.compaction.build_compaction`): the same, from its preparation and its entry;
- the compactions a replay simulated (a :class:`~pikit.compaction.SimulationResult` of
  :func:`~pikit.compaction.simulate`, with any strategy): each event says which entries it
  replaced, masked, kept and cut short, and holds its summary. The replaced span is the
  messages of the entries it replaced, of those it newly masked (a placeholder holds none of
  their facts) and the whole of a message it cut short, plus the previous simulated summary
  when this one takes its place (its source is the entry the previous compaction came after);
  the context after is its summary, the kept messages that are not masked, and the kept head
  and tail of the message cut short (cut as Codex cuts a text to ``keptTokens × 4`` UTF-8 bytes,
  ``codex_cut``: the strategy's own cut for ASCII
  text, a few bytes off at either edge otherwise). The evaluation's id is the entry after
  which the compaction fired, its strategy the replay's.

Facts are extracted by :mod:`._facts` and matched by :mod:`._kept`; their docstrings are
the rules.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence, Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

import orjson

from .._context.projected import ProjectedEntry, Projection
from .._context.projection import entry_messages, project, project_path, project_prefixes
from .._format.entry import Entry
from .._tree.sessiontree import CURRENT, SessionTree
from .._tree.tree import path_to
from ..errors import EntryError, Wording
from ._builtin_strategies import codex_cut
from ._context_text import context_text, prose_text
from ._entries import CompactionResult
from ._facts import FACT_KINDS, Fact, extract_facts
from ._kept import Haystack, literals, vocabulary
from ._simulate import SimulationEvent, SimulationResult

__all__ = [
    "Evaluation",
    "SpanMemo",
    "compaction_entry",
    "compaction_span",
    "evaluate",
    "evaluate_span",
    "recorded_evaluations",
]


@dataclass(repr=False)
class Evaluation:
    """The facts of one compaction's replaced span and whether each survives in the context after it.

    ``kept[i]`` tells whether ``facts[i]`` survives. ``key_recall``, the headline, is the
    fraction of the key facts kept (``None`` when the span has no key fact); ``recall`` maps
    ``"overall"`` (every fact) and each kind present to the fraction of facts kept (``None`` when
    the span has no fact); ``compression`` is how many times smaller the compaction made the context, in one
    unit: ``estimated_before / tokens_after``, Pi's estimate of the context before over Pi's estimate after
    (``tokens_before`` is the recorded ``tokensBefore``, which may start from a request's recorded usage, so
    ``tokens_before / tokens_after`` would mix units). A model judge
    (:func:`pikit.llm.judge`) may replace ``kept`` with its verdicts; ``judged_by`` then names it.
    """

    compaction_id: Any
    strategy: str
    tokens_before: int | None
    tokens_after: int | None
    facts: list[Fact]
    kept: list[bool]
    model: str | None = None
    replaced_ids: list[Any] = field(default_factory=list)
    judged_by: str | None = None
    estimated_before: int | None = None

    def __repr__(self) -> str:
        """``<Evaluation of 'c1' (pi): 8/10 key facts kept (80%), 12/20 facts (60%), 9,800 → 1,200 tokens>``."""
        from .._formatting import fmt_int

        def share(value: float | None) -> str:
            return f" ({value:.0%})" if value is not None else ""

        key = [k for f, k in zip(self.facts, self.kept, strict=True) if f.importance == "key"]
        tokens = ""
        if self.tokens_before is not None and self.tokens_after is not None:
            tokens = f", {fmt_int(self.tokens_before)} → {fmt_int(self.tokens_after)} tokens"
        return (f"<Evaluation of {self.compaction_id!r} ({self.strategy}): {sum(key)}/{len(key)} key facts kept"
                f"{share(self.key_recall)}, {sum(self.kept)}/{len(self.facts)} facts{share(self.recall['overall'])}"
                f"{tokens}>")

    def _repr_html_(self) -> str:
        """A card: strategy, model, tokens, recall per kind, the first lost facts."""
        return _evaluation_html(self)

    @property
    def recall(self) -> dict[str, float | None]:
        """``"overall"`` and each kind present → the fraction of its facts kept (``None``: no fact)."""
        out: dict[str, float | None] = {"overall": sum(self.kept) / len(self.kept) if self.kept else None}
        for kind in FACT_KINDS:
            flags = [k for f, k in zip(self.facts, self.kept, strict=True) if f.kind == kind]
            if flags:
                out[kind] = sum(flags) / len(flags)
        return out

    @property
    def key_recall(self) -> float | None:
        """The fraction of the key facts kept (``None``: the span has no key fact): the headline figure."""
        flags = [k for f, k in zip(self.facts, self.kept, strict=True) if f.importance == "key"]
        return sum(flags) / len(flags) if flags else None

    @property
    def lost(self) -> list[Fact]:
        """The facts the context after the compaction no longer holds."""
        return [f for f, k in zip(self.facts, self.kept, strict=True) if not k]

    @property
    def tokens_saved(self) -> int | None:
        """``tokens_before - tokens_after`` (``None`` when either is unknown)."""
        if self.tokens_before is None or self.tokens_after is None:
            return None
        return self.tokens_before - self.tokens_after

    @property
    def compression(self) -> float | None:
        """``estimated_before / tokens_after``: Pi's estimate before over Pi's estimate after (``None`` when either
        is unknown or after is 0)."""
        if self.estimated_before is None or not self.tokens_after:
            return None
        return self.estimated_before / self.tokens_after

    def records(self) -> list[dict[str, Any]]:
        """One dict per fact: ``kind``, ``importance``, ``text``, ``source``, ``kept``."""
        return [{"kind": f.kind, "importance": f.importance, "text": f.text, "source": f.source, "kept": k}
                for f, k in zip(self.facts, self.kept, strict=True)]


def evaluate_span(replaced: Iterable[tuple[Any, Mapping[str, Any]]], context: Iterable[Mapping[str, Any]], *,
                  tokens_before: int | None, tokens_after: int | None, strategy: str, compaction_id: Any = None,
                  model: str | None = None, cwd: str | None = None,
                  estimated_before: int | None = None) -> Evaluation:
    """Evaluate any compaction: ``replaced`` holds ``(source entry id, message)`` pairs of what it
    removed, ``context`` the messages of the context after it (summary and kept messages).

    ``cwd`` (the session's working directory) lets a path inside it match its relative form.
    ``estimated_before`` is the context size before in the unit of ``tokens_after`` (Pi's estimate):
    ``compression`` is ``None`` without it.
    """
    pairs = [(source, message) for source, message in replaced]
    context = list(context)
    return _span(pairs, _facts_kept(pairs, context, cwd), tokens_before=tokens_before, tokens_after=tokens_after,
                 strategy=strategy, compaction_id=compaction_id, model=model, estimated_before=estimated_before)


def _span(pairs: list[tuple[Any, Mapping[str, Any]]], found: tuple[list[Fact], list[bool]], *,
          tokens_before: int | None, tokens_after: int | None, strategy: str, compaction_id: Any, model: str | None,
          estimated_before: int | None) -> Evaluation:
    """The evaluation of a span whose facts and verdicts are ``found``, with its figures."""
    facts, kept = found
    return Evaluation(compaction_id, strategy, tokens_before, tokens_after, facts, kept, model,
                      list(dict.fromkeys(source for source, _ in pairs)), estimated_before=estimated_before)


def _facts_kept(pairs: list[tuple[Any, Mapping[str, Any]]], context: Sequence[Mapping[str, Any]], cwd: str | None
                ) -> tuple[list[Fact], list[bool]]:
    """The facts of the span and whether the context keeps each: all of an evaluation but its figures."""
    facts = extract_facts(pairs)
    names = Counter(f.text.rsplit("/", 1)[-1] for f in facts if f.kind in ("read_file", "modified_file"))
    haystack = Haystack(context_text(context), cwd, [name for name, count in names.items() if count > 1],
                        vocabulary(facts), prose_text(context), literals(facts))
    return facts, [haystack.holds(f) for f in facts]


class SpanMemo:
    """The facts and verdicts of compactions that several sessions hold (a session and its forks), so that each
    is worked out once: ``ids`` names the compactions worth remembering. The key is a hash of everything the
    facts and verdicts are read from (the replaced messages with their sources, the context after, the working
    directory), so a copy whose span or context differs in any byte is evaluated on its own."""

    def __init__(self, ids: AbstractSet[Any]) -> None:
        self.ids = ids
        self.found: dict[bytes, tuple[list[Fact], list[bool]]] = {}

    @staticmethod
    def key(pairs: list[tuple[Any, Mapping[str, Any]]], context: Sequence[Mapping[str, Any]], cwd: str | None
            ) -> bytes | None:
        """The hash of what the facts and verdicts are read from (``None`` for what JSON cannot hold, such as
        an integer wider than 64 bits or a lone surrogate: not remembered)."""
        try:
            text = orjson.dumps([cwd, pairs, context])
        except TypeError:
            return None
        return hashlib.blake2b(text, digest_size=20).digest()

    def facts_kept(self, pairs: list[tuple[Any, Mapping[str, Any]]], context: Sequence[Mapping[str, Any]],
                   cwd: str | None) -> tuple[list[Fact], list[bool]]:
        """The facts of the span and their verdicts, worked out the first time this span and context are seen
        (each call gets lists of its own)."""
        key = self.key(pairs, context, cwd)
        found = self.found.get(key) if key is not None else None
        if found is None:
            found = _facts_kept(pairs, context, cwd)
            if key is not None:
                self.found[key] = found
        return list(found[0]), list(found[1])


def _model_name(model: Any) -> str | None:
    if not isinstance(model, dict) or model.get("modelId") is None:
        return None
    provider = model.get("provider")
    return f"{provider}/{model['modelId']}" if provider else str(model["modelId"])


def _replaced(before: Projection, after: Projection) -> list[tuple[Any, Mapping[str, Any]]]:
    kept = set(after.context_ids)
    return [(pe.entry.id, m) for pe in before.entries if pe.entry.id not in kept for m in pe.messages]


def _between(before: Projection, after: Projection, *, compaction_id: Any, tokens_before: int | None,
             strategy: str, cwd: Any, memo: SpanMemo | None = None) -> Evaluation:
    pairs, context, folder = _replaced(before, after), list(after.messages), cwd if isinstance(cwd, str) else None
    found = memo.facts_kept(pairs, context, folder) if memo is not None and compaction_id in memo.ids \
        else _facts_kept(pairs, context, folder)
    return _span(pairs, found, tokens_before=tokens_before, tokens_after=after.tokens, strategy=strategy,
                 compaction_id=compaction_id, model=_model_name(before.model), estimated_before=sum(before.estimates))


def _before(session: SessionTree, entry: Entry) -> Projection:
    parent = entry.parent_id
    return project(session, parent) if parent in session else project_path([])  # (an id no entry can have: none)


def _recorded(session: SessionTree, entry: Entry, projections: tuple[Projection, Projection] | None = None,
              memo: SpanMemo | None = None) -> Evaluation:
    before, after = projections or (_before(session, entry), project(session, entry.id))
    recorded = entry.data.get("tokensBefore")
    tokens_before = recorded if isinstance(recorded, int) and not isinstance(recorded, bool) else before.tokens
    strategy = "pi (hook)" if entry.data.get("fromHook") is True else "pi"
    return _between(before, after, compaction_id=entry.id, tokens_before=tokens_before,
                    strategy=strategy, cwd=session.header.get("cwd"), memo=memo)


def _rooted(by_id: Mapping[Any, Entry], path: list[Entry]) -> bool:
    """Whether ``path`` starts at a root (no usable parent), not where a parent cycle stopped it."""
    parent = path[0].parent_id
    return not parent or parent == path[0].id or not isinstance(parent, str | int | float) or parent not in by_id


def _along_branches(session: SessionTree, entries: list[Entry]) -> dict[int, tuple[Projection, Projection]]:
    """The projections before and after each compaction of ``entries`` (by ``id()``), one pass per branch.

    A branch is walked once for all its compactions (the deepest first), each prefix projected
    by :func:`project_prefixes` with one cache of projected entries for the whole session: a
    kept entry or one after a compaction is projected once, not at each compaction that holds
    it. The projections are :func:`project_path`'s of the branch prefixes, which equal
    :func:`project`'s at the compaction and at its parent. A compaction whose branch a parent
    cycle cuts is left out (the caller projects it the usual way).
    """
    by_id = session.by_id
    wanted = {id(e) for e in entries}
    cache: dict[Any, ProjectedEntry] = {}
    out: dict[int, tuple[Projection, Projection]] = {}
    for entry in reversed(entries):
        if id(entry) in out or by_id.get(entry.id) is not entry:
            continue
        path = path_to(by_id, entry)
        if not _rooted(by_id, path):
            continue
        points = [i for i, e in enumerate(path) if id(e) in wanted and id(e) not in out
                  and (i > 0 or e.parent_id is None)]  # a root with an odd parent: projected the usual way
        projected = project_prefixes(path, [n for i in points for n in (i, i + 1)], cache)
        for i in points:
            out[id(path[i])] = (projected[i], projected[i + 1])
    return out


def recorded_evaluations(session: SessionTree, entries: list[Entry], memo: SpanMemo | None = None
                         ) -> list[Evaluation]:
    """The evaluation of each compaction entry of ``entries`` (each ``session.by_id``'s), as
    :func:`evaluate` gives it for the entry's id, with the branches walked once (see :func:`_along_branches`);
    ``memo`` carries the verdicts of compactions other sessions share with this one (:class:`SpanMemo`)."""
    along = _along_branches(session, entries)
    return [_recorded(session, e, along.get(id(e)), memo) for e in entries]


def _ran(result: CompactionResult, cwd: Any) -> Evaluation:
    before = result.preparation.projection
    after = project_path([*before.path, Entry(result.entry)])
    return _between(before, after, compaction_id=result.entry.get("id"), tokens_before=result.tokens_before,
                    strategy="pikit", cwd=cwd)


def compaction_entry(session: SessionTree, compaction: Any) -> Entry:
    """The compaction entry ``compaction`` names (an id or a unique prefix); another entry is an EntryError."""
    entry = session.entry(compaction)
    if entry.type != "compaction":
        raise EntryError(entry.id, Wording("entry {entry} is a {type} entry, not a compaction: pass {compaction} "
                                           "the id of a compaction entry", {"compaction": "compaction="},
                                           entry=entry.id, type=entry.type))
    return entry


def compaction_span(session: SessionTree, compaction: Any) -> tuple[list[tuple[Any, Mapping[str, Any]]],
                                                                     list[Mapping[str, Any]]]:
    """What :func:`evaluate` reads of one compaction: the replaced ``(source entry id, message)``
    pairs and the messages of the context after it (summary and kept messages).

    ``compaction`` is a compaction entry's id (or a unique prefix of one), or a
    :class:`~pikit.compaction.CompactionResult` pikit built for ``session``.
    """
    if isinstance(compaction, CompactionResult):
        before = compaction.preparation.projection
        after = project_path([*before.path, Entry(compaction.entry)])
    else:
        entry = compaction_entry(session, compaction)
        before, after = _before(session, entry), project(session, entry.id)
    return _replaced(before, after), list(after.messages)


def _own_messages(session: SessionTree, entry_id: Any) -> list[dict[str, Any]]:
    """The messages an entry of ``session`` contributes (none for an id the replay made up)."""
    entry = session.by_id.get(entry_id)
    return entry_messages(entry) if entry is not None else []


def _head_and_tail(message: Mapping[str, Any], kept_tokens: int) -> dict[str, Any]:
    """``message``'s text cut as Codex cuts it to ``kept_tokens × 4`` UTF-8 bytes, head and tail, as a user message."""
    content = message.get("content")
    text = content if isinstance(content, str) else "\n".join(
        b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)) \
        if isinstance(content, list) else ""
    head, tail, _ = codex_cut(text, kept_tokens * 4)
    return {"role": "user", "content": f"{head}\n{tail}"}


def _leaf_model(session: SessionTree, leaf_id: Any) -> str | None:
    """``provider/modelId`` of the branch at ``leaf_id`` (``None``: no leaf, or no model recorded)."""
    return _model_name(project(session, leaf_id).model) if leaf_id is not None else None


def _simulated(session: SessionTree, result: SimulationResult, model: str | None) -> list[Evaluation]:
    """The evaluation of each compaction ``result`` simulated (see the module docstring); ``model`` is the
    model name of the branch it replayed (projected once for all the replays of one leaf)."""
    cwd = session.header.get("cwd")
    strategy = result.strategy or "pi"
    masked: set[Any] = set()
    previous: SimulationEvent | None = None
    out = []
    for event in result.events:
        newly = [i for i in event.masked if i not in masked]
        masked.update(event.masked)
        replaced = [(i, m) for i in (*event.replaced, *newly) for m in _own_messages(session, i)]
        if event.truncated is not None:
            replaced += [(event.truncated[0], m) for m in _own_messages(session, event.truncated[0])]
        if event.summary is not None and previous is not None and previous.summary is not None:
            replaced.append((previous.after_entry_id, {"role": "compactionSummary", "summary": previous.summary}))
        context: list[Mapping[str, Any]] = []
        if event.summary is not None:
            context.append({"role": "compactionSummary", "summary": event.summary})
        for i in event.kept:
            if i in masked:
                continue
            messages = _own_messages(session, i)
            if event.truncated is not None and i == event.truncated[0]:
                messages = [_head_and_tail(m, event.truncated[1]) for m in messages]
            context += messages
        out.append(evaluate_span(replaced, context, tokens_before=event.tokens_before,
                                 tokens_after=event.tokens_after, strategy=strategy,
                                 compaction_id=event.after_entry_id, model=model,
                                 cwd=cwd if isinstance(cwd, str) else None, estimated_before=event.estimated_before))
        if event.summary is not None:
            previous = event
    return out


def compactions_on_branch(session: SessionTree, leaf: Any = CURRENT) -> list[Entry]:
    """The compaction entries on the branch at ``leaf``, oldest first."""
    leaf_id = session.resolve_leaf(leaf)
    return [e for e in session.branch(leaf_id) if e.type == "compaction"] if leaf_id is not None else []


def evaluate(session: SessionTree, compaction: Any = None, *,
             leaf: Any = CURRENT) -> Evaluation | list[Evaluation]:
    """What a compaction of ``session`` kept and lost (see :class:`Evaluation`).

    ``compaction`` is a compaction entry's id (or a unique prefix of one): its evaluation;
    a :class:`~pikit.compaction.CompactionResult` pikit built for this session: its
    evaluation; a :class:`~pikit.compaction.SimulationResult` of a replay of this session
    (or a list of them, as ``simulate(..., strategy=[...])`` returns): the evaluations of every
    compaction it simulated, in order (none when it simulated none); ``None``: the evaluations
    of every compaction on the branch at ``leaf``, oldest first. An id that is not a
    compaction, or a branch with no compaction, is an :class:`~pikit.errors.EntryError`.
    """
    if isinstance(compaction, CompactionResult):
        return _ran(compaction, session.header.get("cwd"))
    if isinstance(compaction, SimulationResult):
        return _simulated(session, compaction, _leaf_model(session, compaction.leaf_id))
    if isinstance(compaction, list | tuple) and compaction and all(isinstance(r, SimulationResult)
                                                                   for r in compaction):
        models = {leaf: _leaf_model(session, leaf) for leaf in dict.fromkeys(r.leaf_id for r in compaction)}
        return [e for result in compaction for e in _simulated(session, result, models[result.leaf_id])]
    if compaction is not None:
        return _recorded(session, compaction_entry(session, compaction))
    entries = compactions_on_branch(session, leaf)
    if not entries:
        leaf_id = session.resolve_leaf(leaf)
        raise EntryError(leaf_id, f"the branch at {leaf_id} has no compaction: nothing to evaluate")
    return recorded_evaluations(session, entries)


def _evaluation_html(evaluation: Evaluation) -> str:
    from .._card import TABLE_ROWS, card, code, cut, esc, note, table
    from .._formatting import fmt_int, plural

    def share(value: float | None) -> str:
        return "–" if value is None else f"{value:.0%}"

    rows = [("strategy", esc(evaluation.strategy)), ("model", esc(evaluation.model or "not recorded"))]
    if evaluation.tokens_before is not None and evaluation.tokens_after is not None:
        ratio = evaluation.compression
        rows.append(("tokens", f"{fmt_int(evaluation.tokens_before)} → {fmt_int(evaluation.tokens_after)}"
                               + (f" ({ratio:.1f}× smaller by Pi's estimate, "
                                  f"{fmt_int(evaluation.estimated_before or 0)} → {fmt_int(evaluation.tokens_after)})"
                                  if ratio is not None else "")))
    key = [k for f, k in zip(evaluation.facts, evaluation.kept, strict=True) if f.importance == "key"]
    rows.append(("key facts", f"{fmt_int(sum(key))} of {fmt_int(len(key))} kept ({share(evaluation.key_recall)})"))
    rows.append(("facts", f"{fmt_int(sum(evaluation.kept))} of {fmt_int(len(evaluation.facts))} kept "
                          f"({share(evaluation.recall['overall'])}) from "
                          f"{plural(len(evaluation.replaced_ids), 'replaced entry')}"))
    by_kind = [(esc(kind), share(value), fmt_int(sum(1 for f in evaluation.facts if f.kind == kind)))
               for kind, value in evaluation.recall.items() if kind != "overall"]
    recall = table(("kind", "recall", "facts"), by_kind, numeric=(1, 2)) if by_kind else ""
    lost = evaluation.lost
    lost = sorted(lost, key=lambda f: f.importance != "key")
    listing = table(("lost", "importance", "text", "source"),
                    ((esc(f.kind), f.importance, esc(cut(f.text, 90)), code(str(f.source)[:8]))
                     for f in lost[:TABLE_ROWS])) \
        if lost else note("nothing lost")
    more = note(f"… {plural(len(lost) - TABLE_ROWS, 'more lost fact')} (evaluation.lost lists all)") \
        if len(lost) > TABLE_ROWS else ""
    return card("Evaluation", code(evaluation.compaction_id), rows, recall, listing, more)
