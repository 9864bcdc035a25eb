"""Replays of compaction strategies side by side: :func:`simulate` with ``strategy=``.

Without ``strategy`` :func:`simulate` is Pi's what-if replay (``pikit.compaction._simulate``),
unchanged. With one (a name, a :class:`~pikit.compaction.Strategy`, or a list of them), each
strategy replays the same branch with the same summarizer and gives a
:class:`~pikit.compaction.SimulationResult` whose ``strategy`` is its name.

``pi`` and ``pi-percent`` run through Pi's own replay loop (a compaction entry on the simulated
branch). Every other strategy runs through :func:`replay_strategies` (all of them in one walk of
the branch): the replay keeps the next request's context as a list of
:class:`~pikit.compaction.ContextItem`, appends each entry's messages (a context edit in the
file omits or replaces the items of the entry it targets; a recorded compaction kept with
``keep_existing=True`` starts the list again from its projection), and at each of the strategy's
check points asks it whether to compact and what the context becomes. Context sizes are measured
as in Pi's replay (``sizes``): Pi's estimate of the system prompt and the items, plus, with
``sizes="usage"``, what the recorded usage counts beyond the estimate of the history as it
happened.

The figures of each run (:meth:`SimulationResult.totals`):

- **requests**: one per assistant message (the model call that produced it); its input is the
  context size just before the message is added. ``inputTokens`` sums them over the branch;
  ``overflows`` counts the requests larger than the window.
- **cache**: ``RequestMeter``: what the previous request sent is
  read from a prefix cache unless a compaction rewrote it; after a rewrite only the part before
  the first changed message (the system prompt, and the items a strategy left in place) is a
  read. ``cachedInputTokens`` sums the reads.
- **summarizer**: its calls and their input (reported, or Pi's chars/4 of the request).
- **cost**: with ``pricing`` (a model's :class:`pikit.llm.Pricing`, the tier of each request's
  input as Pi chooses it): fresh input at the input price, cache reads at the cache-read price,
  the summarizer's input at the input price; ``None`` without prices, never a guess.

A strategy whose compactions leave the context above its threshold, or find nothing to compact,
three times in a row is a *runaway* (``never_fits``): the replay then compacts only now and then
(the 1st, 2nd, 4th, 8th… firing check after it), as Pi's replay does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._context.growing import GrowingProjection
from .._context.projection import apply_edit, entry_messages, replay_system
from .._context.tokens import estimate_tokens, message_usage, usage_total
from .._formatting import plural
from .._progress import ENTRIES, Progress, tracked
from .._tree.sessiontree import CURRENT
from ..errors import Wording
from ._builtin_strategies import strategy_named
from ._costs import PricingLike, RequestMeter, price_run
from ._settings import CompactionSettings
from ._simulate import (
    POINTS,
    CountingSummarizer,
    SimulationEvent,
    SimulationResult,
    _estimates,
    _Recorded,
    _RunawayGuard,
    branch_points,
    parsed_in_turn,
    replay_pi,
    simulate as _simulate_pi,
)
from ._strategy import (
    Check,
    ContextItem,
    Outcome,
    PiStrategy,
    ReplayContext,
    Strategy,
    StrategyError,
    checked_edit,
    checked_outcome,
    checked_strategy,
    checked_threshold,
    ids_of,
)
from ._summarizer import Summarizer, SummaryRequest

if TYPE_CHECKING:
    from .._format.entry import Entry
    from .._tree.sessiontree import SessionTree

__all__ = ["replay_strategies", "resolve_strategies", "simulate"]


def resolve_strategies(strategy: Any, *, threshold: float | None = None, keep_turns: int = 10,
                       auto_compact_limit: int | None = None, keep_observations: int = 10) -> list[Strategy]:
    """``strategy`` (a name, a :class:`Strategy`, or a list or comma-separated string of them) as strategies,
    each checked (``pikit.compaction._strategy.checked_strategy``)."""
    items = strategy.split(",") if isinstance(strategy, str) else \
        list(strategy) if isinstance(strategy, Iterable) and not isinstance(strategy, Strategy) else [strategy]
    if not items:
        raise StrategyError(Wording("{strategy} names no strategy", {"strategy": "strategy"}))
    return [checked_strategy(strategy_named(s.strip() if isinstance(s, str) else s, threshold=threshold,
                                            keep_turns=keep_turns, auto_compact_limit=auto_compact_limit,
                                            keep_observations=keep_observations))
            for s in items]


def simulate(session: SessionTree, summarizer: Summarizer, *, context_window: int, settings: CompactionSettings,
             leaf: Any = CURRENT, keep_existing: bool = False, sizes: str = "usage", progress: Progress = None,
             strategy: Any = None, threshold: float | None = None, keep_turns: int = 10,
             auto_compact_limit: int | None = None, keep_observations: int = 10, points: Any = POINTS,
             pricing: PricingLike | None = None) -> SimulationResult | list[SimulationResult]:
    """Replay the branch at ``leaf``: Pi's what-if replay, or each of the strategies in ``strategy``.

    Without ``strategy``, Pi's replay under ``settings`` and ``context_window``, as before:
    ``sizes`` is ``"usage"`` (start from the recorded usage, as Pi's context size rule does) or
    ``"estimate"`` (Pi's estimate alone); the compactions already in the file are left out
    unless ``keep_existing``; ``progress`` is a bar in a notebook for a long branch by default,
    ``True`` a bar anywhere, ``False`` none, or a callback ``(entries replayed, entries)``.
    ``strategy`` is a built-in's name (``"pi"``, ``"pi-percent"``, ``"codex-inline"``,
    ``"mask-observations"``, ``"truncate"``), a :class:`~pikit.compaction.Strategy`, or a list
    (or comma-separated names): one result per strategy, a list when a list was given. Their
    parameters: ``threshold`` (``pi-percent``'s fraction of the window, in (0, 1], default 0.8),
    ``keep_turns`` (``mask-observations``, ≥ 0, default 10), ``auto_compact_limit``
    (``codex-inline``, tokens). ``pricing`` (a model's prices) adds the cost of each run.

    Raises:
        StrategyError: an unknown strategy, a bad parameter, or (with ``strategy``) a branch with
            no assistant message (nothing to compact).
    """
    if strategy is None:
        return _simulate_pi(session, summarizer, context_window=context_window, settings=settings, leaf=leaf,
                            keep_existing=keep_existing, sizes=sizes, progress=progress)
    strategies = resolve_strategies(strategy, threshold=threshold, keep_turns=keep_turns,
                                    auto_compact_limit=auto_compact_limit, keep_observations=keep_observations)
    leaf_id = session.resolve_leaf(leaf)
    if not any(e.type == "message" and e.role == "assistant" for e in session.branch(leaf_id)):
        where = "the empty branch" if leaf_id is None else f"the branch at entry {leaf_id}"
        raise StrategyError(f"{where} has no assistant message: there is nothing to compact")
    at = branch_points(session.branch(leaf_id), points)
    others = [s for s in strategies if not isinstance(s, PiStrategy)]
    replayed = iter(replay_strategies(session, summarizer, others, context_window=context_window, settings=settings,
                                      leaf=leaf_id, keep_existing=keep_existing, sizes=sizes, progress=progress,
                                      points=at)
                    if others else [])
    runs = []
    for s in strategies:
        if isinstance(s, PiStrategy):
            run = replay_pi(session, summarizer, context_window=context_window, settings=settings, leaf=leaf_id,
                            keep_existing=keep_existing, sizes=sizes, progress=progress, strategy=s, points=at)
        else:
            run = next(replayed)
        if pricing is not None:
            run.costs = price_run(run, pricing)
        runs.append(run)
    single = isinstance(strategy, Strategy) or (isinstance(strategy, str) and "," not in strategy)
    return runs[0] if single else runs


class _Items:
    """The context of the next request (system prompt + items), its sizes kept up to date."""

    def __init__(self, counts_bytes: bool) -> None:
        self.items: list[ContextItem] = []
        self.tokens = 0  # Pi's estimate of the items
        self.system_messages: list[dict[str, Any]] = []
        self.system_tokens = 0
        self.system_bytes = 0
        self.counts_bytes = counts_bytes
        self.bytes = 0  # UTF-8 bytes of the items (when counted)
        self.messages_of: dict[Any, int] = {}  # how many items of kind "message" each entry id has

    def append(self, item: ContextItem) -> None:
        self.items.append(item)
        self._count(item, 1)

    def _count(self, item: ContextItem, sign: int) -> None:
        self.tokens += sign * item.tokens
        if self.counts_bytes:
            self.bytes += sign * item.bytes
        if item.kind == "message":
            self.messages_of[item.entry_id] = self.messages_of.get(item.entry_id, 0) + sign

    def system(self, message: dict[str, Any]) -> None:
        self.system_messages.append(message)
        system = replay_system(self.system_messages)
        self.system_tokens = estimate_tokens(system) if system is not None else 0
        if self.counts_bytes:
            from ._strategy import message_bytes

            self.system_bytes = message_bytes(system) if system is not None else 0

    def replace(self, items: list[ContextItem]) -> None:
        self.items = items
        self.tokens = 0
        self.bytes = 0
        self.messages_of = {}
        for item in items:
            self._count(item, 1)

    def set(self, index: int, item: ContextItem) -> None:
        """Replace the item at ``index`` (the sizes change by the difference)."""
        self._count(self.items[index], -1)
        self.items[index] = item
        self._count(item, 1)

    def splice(self, start: int, items: list[ContextItem]) -> None:
        """Replace the items from index ``start`` on with ``items`` (the sizes change by the difference)."""
        for item in self.items[start:]:
            self._count(item, -1)
        self.items[start:] = items
        for item in items:
            self._count(item, 1)


class _Replay:
    """One strategy's replay of one branch (see the module docstring)."""

    def __init__(self, strategy: Strategy, summarizer: Summarizer, result: SimulationResult,
                 history: GrowingProjection | None,
                 keep_existing: bool, recorded: _Recorded | None, points: frozenset[int] = frozenset()) -> None:
        self.strategy = strategy
        self.points = points
        self.result = result
        self.summarizer = CountingSummarizer(summarizer, result)
        self.ctx = _Items(strategy.counts_bytes)
        self.history = history  # the branch so far, projected (needed to restart at a recorded compaction)
        self.by_id: dict[Any, Entry] = {}
        self.keep_existing = keep_existing
        self.recorded = recorded
        self.meter = RequestMeter(result)
        self.guard = _RunawayGuard(result)
        self.compacted = False  # the context differs from the recorded one: no recorded usage matches any more
        self.changed = False  # the context differs from the uncompacted one (every message of the branch so far)
        self.usage: int | None = None  # the last recorded usage (Codex's total starts from it)
        self.bytes_since = 0  # UTF-8 bytes of the messages after that usage

    @property
    def offset(self) -> int:
        """What the recorded usage adds to the estimate, while the context is the recorded one (else 0)."""
        return self.recorded.offset if self.recorded is not None and not self.compacted else 0

    @property
    def size(self) -> int:
        return self.ctx.system_tokens + self.ctx.tokens + self.offset

    def approx(self) -> int:
        """Codex's total (see :attr:`Check.approx_tokens`)."""
        if self.usage is not None and not self.compacted:
            return self.usage + (self.bytes_since + 3) // 4
        return (self.ctx.system_bytes + self.ctx.bytes + 3) // 4

    def before(self, index: int, entry: Entry) -> None:
        """The next branch entry, before it is added (and before the recorded history takes it):
        a pre-turn check, the request of an assistant message."""
        if entry.type != "message":
            return
        if entry.role == "user" and "pre-turn" in self.strategy.checks and self.result.requests:
            self.check("pre-turn", index, entry)
        elif entry.role == "assistant":
            if "request" in self.strategy.checks:
                self.check("request", index, entry)
            self.meter.request(self.size, entry)
            if index in self.points:
                self.keep_context(index)

    def keep_context(self, index: int) -> None:
        """The context of the request at a branch point (``None``: still the uncompacted one)."""
        if not self.changed:
            self.result.contexts[index] = None
            return
        items = self.ctx.items
        self.result.contexts[index] = [i.message for i in items]
        self.result.verbatim[index] = frozenset(i.entry_id for i in items
                                                if i.kind == "message" and i.entry_id is not None)

    def after(self, index: int, entry: Entry, messages: list[dict[str, Any]], estimates: list[int]) -> None:
        """Take the entry (``messages`` and their ``estimates``), then the checks after it."""
        self.by_id[entry.id] = entry
        if entry.type == "compaction":
            if self.keep_existing:
                self.restart()
            else:
                self.compacted = True  # the recorded usage after it measures a context the replay does not hold
            return
        if entry.type == "context_edit":
            self.edit(entry)
            return
        self.take(entry, messages, estimates)
        if entry.type == "message" and entry.role == "assistant":
            if self.recorded is not None and self.recorded.usage is not None and not self.compacted:
                self.result.usage_checks += 1
            if self.size > self.result.context_window:
                self.result.overflows.append((index, entry.id, self.size))
            if "assistant" in self.strategy.checks:
                self.check("assistant", index, entry)
            elif "mid-turn" in self.strategy.checks and _has_tool_calls(entry):
                self.check("mid-turn", index, entry)

    def take(self, entry: Entry, messages: list[dict[str, Any]], estimates: list[int]) -> None:
        for message, estimate in zip(messages, estimates, strict=True):
            if message.get("role") == "system":
                self.ctx.system(message)
                continue
            item = ContextItem(entry.id, message, estimate)
            self.ctx.append(item)
            if message_usage(message) is not None:
                self.usage, self.bytes_since = usage_total(message["usage"]), 0
            elif self.strategy.counts_bytes:
                self.bytes_since += item.bytes

    def restart(self) -> None:
        """A recorded compaction kept: the context starts again from the projection of the path."""
        assert self.history is not None
        projection = self.history.projection()
        items = [ContextItem(pe.entry.id, m, e) for pe in projection.entries
                 for m, e in zip(pe.messages, pe.estimates, strict=True) if m.get("role") != "system"]
        self.ctx.replace(items)
        self.usage = None
        self.compacted = False  # the recorded context again
        self.changed = True
    def edit(self, edit: Entry) -> None:
        """A context edit in the file: the items of the entry it targets are omitted or replaced (those
        a strategy already masked, cut or dropped stay as the strategy left them). Only the items from
        the target's first one on are looked at (an edit mostly targets a recent entry)."""
        target_id = edit.data.get("targetId")
        target = self.by_id.get(target_id) if isinstance(target_id, str | int | float | bool) else None
        count = self.ctx.messages_of.get(target.id, 0) if target is not None and target.type != "compaction" else 0
        if target is not None and count:
            items = self.ctx.items
            first = len(items)
            while count:  # back to the target's first message item
                first -= 1
                if items[first].entry_id == target.id and items[first].kind == "message":
                    count -= 1
            messages = [m for m in apply_edit(entry_messages(target), edit) if m.get("role") != "system"]
            tail: list[ContextItem] = []
            done = False
            for item in items[first:]:
                if item.entry_id != target.id or item.kind != "message":
                    tail.append(item)
                elif not done:
                    done = True
                    tail.extend(ContextItem.of(target.id, m) for m in messages)
            self.ctx.splice(first, tail)
        self.usage = None

    def check(self, kind: str, index: int, entry: Entry) -> None:
        before = self.size
        check = Check(kind, index, entry.id, before, self.result.context_window, self.approx())
        if self.strategy.continuous:
            self.edit_in_place(check)
            self.result.trace.append((index, entry.id, before, self.size))
            return
        if self.strategy.should_compact(check, self.result.settings) and self.guard.tries():
            outcome = checked_outcome(self.strategy, self.strategy.compact(
                ReplayContext(list(self.ctx.items), self.ctx.system_tokens, self.result.context_window,
                              self.result.settings, check), self._summarize))
            event = None if outcome is None else self.apply(outcome, index, entry.id, before)
            if event is None:
                self.result.skipped.append((index, entry.id, before))
            else:
                self.result.events.append(event)
            self.guard.record(index, entry.id, before, event)
        self.result.trace.append((index, entry.id, before, self.size))

    def edit_in_place(self, check: Check) -> None:
        """A continuous strategy's edit: the items it replaces, in place (no event, no runaway guard)."""
        changes = checked_edit(self.strategy, self.strategy.edit(ReplayContext(
            self.ctx.items, self.ctx.system_tokens, self.result.context_window, self.result.settings, check)),
            len(self.ctx.items))
        if not changes:
            return
        first = min(changes)
        after_first = sum(i.tokens for i in self.ctx.items[first:])
        self.meter.rewrite(self.ctx.system_tokens + self.ctx.tokens - after_first)
        for n, item in changes.items():
            self.ctx.set(n, item)
            if item.kind == "masked":
                self.result.masked_observations += 1
        self.compacted = self.changed = True

    def _summarize(self, request: SummaryRequest) -> str:
        return self.summarizer.summarize(request).text

    def apply(self, outcome: Outcome, index: int, after_id: Any, before: int) -> SimulationEvent:
        old = self.ctx.items
        estimated = self.ctx.system_tokens + self.ctx.tokens
        same = 0
        for a, b in zip(old, outcome.items, strict=False):
            if a is not b:
                break
            same += 1
        self.ctx.replace(list(outcome.items))
        self.compacted = self.changed = True
        self.meter.rewrite(self.ctx.system_tokens + sum(i.tokens for i in old[:same]))
        summary = outcome.summary
        kept = ids_of([i for i in outcome.items if i.kind != "summary"])
        first = outcome.first_kept_entry_id if outcome.first_kept_entry_id is not None else (kept[0] if kept else None)
        return SimulationEvent(after_id, index, before, self.size, first, False,
                               len(outcome.replaced) + len(outcome.masked),
                               0 if summary is None else estimate_tokens({"role": "compactionSummary",
                                                                          "summary": summary}),
                               summary, tuple(outcome.replaced), tuple(kept), tuple(outcome.masked),
                               outcome.truncated, self.strategy.name, estimated)


def _has_tool_calls(entry: Entry) -> bool:
    content = entry.message.get("content") if isinstance(entry.message, dict) else None
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "toolCall" for b in content)


def replay_strategies(session: SessionTree, summarizer: Summarizer, strategies: list[Strategy], *,
                      context_window: int, settings: CompactionSettings, leaf: Any = CURRENT,
                      keep_existing: bool = False, sizes: str = "usage", progress: Progress = None,
                      points: frozenset[int] = frozenset()) -> list[SimulationResult]:
    """Replay the branch at ``leaf`` with each of ``strategies`` (none a :class:`PiStrategy`; see the
    module docstring), all in one walk of the branch: the recorded history, each entry's messages and
    their estimates are read once for all of them. ``points``: the branch indexes of the assistant
    messages whose request's context each run keeps (``SimulationResult.contexts``)."""
    from ._simulate import SIZES

    if sizes not in SIZES:
        raise ValueError(f"sizes must be one of {', '.join(SIZES)}, not {sizes!r}")
    leaf_id = session.resolve_leaf(leaf)
    branch = session.branch(leaf_id)
    recorded = _Recorded() if sizes == "usage" else None
    # What a kept recorded compaction restarts from: the recorded history's projection, or one of its own.
    history = recorded.live if recorded is not None else GrowingProjection() if keep_existing else None
    replays = [_Replay(s, summarizer, SimulationResult(leaf_id, context_window, settings, sizes=sizes,
                                                       strategy=s.name,
                                                       strategy_threshold=checked_threshold(s, context_window,
                                                                                            settings)),
                       history, keep_existing, recorded, points) for s in strategies]
    names = ", ".join(s.name for s in strategies)
    for index, entry in enumerate(tracked(parsed_in_turn(branch), progress,
                                          f"replaying {plural(len(branch), 'entry')} with {names}", len(branch),
                                          ENTRIES)):
        for replay in replays:
            replay.before(index, entry)
        if recorded is not None:
            recorded.add(entry)
        elif history is not None:
            history.append(entry)
        messages = entry_messages(entry) if entry.type not in ("compaction", "context_edit") else []
        estimates = _estimates(entry, messages) if messages else []
        for replay in replays:
            replay.after(index, entry, messages, estimates)
    for replay in replays:
        replay.result.final_tokens = replay.size
    return [replay.result for replay in replays]
