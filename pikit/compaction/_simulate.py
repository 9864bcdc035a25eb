"""What-if replay: where would Pi have compacted under other settings?

The branch is replayed entry by entry. After every assistant message (the point where Pi
checks, before the next model call or the next prompt) the context size of the *simulated*
projection is compared with ``context_window - reserve_tokens``; when it is larger, a
compaction is prepared exactly as Pi would (``keep_recent_tokens``), summarized (by default
with the offline summarizer) and inserted into the simulated branch, and the replay goes on.

Context sizes (``sizes``):

- ``"usage"`` (the default) starts from what the file recorded, as Pi's context size rule
  does: at each check, the size of the history as it really happened (the last usable
  provider usage plus the estimates of the messages after it, ``pikit context``'s figure)
  changed by what the simulation changed, by Pi's estimate (messages that simulated
  compactions replaced, their summaries, compactions left out). Until the first simulated
  compaction the replay therefore sees exactly the sizes Pi saw; what the provider counted
  beyond the messages (a system prompt and tool declarations the file does not hold,
  tokenizer differences) stays counted after it. Without recorded usage this is the estimate.
- ``"estimate"``: Pi's estimate alone (the replayed system prompt + every other message),
  as Pi computes it when no usage is usable.

The compactions already in the file are left out by default (they were taken under the real
settings); ``keep_existing=True`` keeps them.

A check whose context size (before any compaction there) exceeds the context window itself is
an *overflow* (:attr:`SimulationResult.overflows`): under these settings that context would not
have fit. :attr:`SimulationResult.final_tokens` is the size at the end of the branch, after the
entries that follow the last check.

Degenerate settings (``keepRecentTokens`` at or above the threshold, a threshold at or below
zero) make Pi's trigger fire after nearly every assistant message, each compaction leaving the
context above the threshold or even larger than before, or finding nothing to compact. The
replay detects this *runaway*:
after :data:`RUNAWAY_AFTER` ineffective compactions in a row (still above the threshold, not
smaller, or nothing to compact) it records where (:attr:`SimulationResult.runaway`) and stops
compacting at every check: it counts the checks that fire, and tries a real compaction only
at the 1st, 2nd, 4th, 8th… of them, resuming as soon as one pays. Each compaction projects
the whole simulated context, so this keeps a runaway replay near linear in the branch length
(a logarithmic number of compactions instead of one per message).

The replay is linear in the branch length: its contexts are projected as they grow
(``GrowingProjection``: an entry costs its own messages, a context
edit its target's, a compaction the entries it keeps), and an entry it parsed is released again
once it has moved past it (what the context still holds of it, it holds itself).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._context.growing import GrowingProjection
from .._context.projected import ProjectedEntry
from .._context.projection import entry_messages, replay_system
from .._context.tokens import estimate_tokens, message_usage, usage_total
from .._format.entry import Entry
from .._format.migration import new_id
from .._formatting import plural
from .._progress import ENTRIES, Progress, ProgressCallback, reporting, tracked
from .._tree.sessiontree import CURRENT
from ._costs import RequestMeter, answer_tokens
from ._entries import compaction_entry, summarize_preparation
from ._preparation import prepare_compaction
from ._settings import CompactionSettings
from ._summarizer import Summarizer, SummaryRequest, SummaryResult

if TYPE_CHECKING:
    from .._context.projected import Projection
    from .._tree.sessiontree import SessionTree
    from ._costs import RunCost

__all__ = ["POINTS", "RUNAWAY_AFTER", "SIZES", "CountingSummarizer", "SimulationEvent",
           "SimulationResult", "branch_points", "replay_pi", "simulate", "sweep", "threshold_table"]

#: How a replay measures context sizes (see the module docstring).
SIZES = ("usage", "estimate")
#: Ineffective compactions in a row after which a replay is a runaway (see the module docstring).
RUNAWAY_AFTER = 3
#: The branch points a replay with a strategy keeps the context at, by default (:func:`branch_points`).
POINTS = 8


@dataclass(frozen=True)
class SimulationEvent:
    """One simulated compaction.

    Attributes:
        after_entry_id: the entry checked at (after it; before it for a pre-turn check).
        branch_index: that entry's index in the branch.
        tokens_before: the context size when the check fired.
        tokens_after: the context size after the compaction.
        first_kept_entry_id: the first entry kept verbatim (Pi's ``firstKeptEntryId``).
        is_split_turn: whether Pi's cut split a turn.
        summarized_messages: messages the compaction summarized, masked or dropped.
        summary_tokens: Pi's estimate of the summary (0 without one).
        summary: the summary text, or ``None`` (a strategy that writes none).
        replaced: entry ids whose messages the compaction removed from the context (summarized
            or dropped), in branch order.
        kept: entry ids whose messages the next request carries, in order (a message cut
            short included); filled in by a replay with a strategy.
        masked: entry ids whose messages a placeholder replaced.
        truncated: ``(entry id, tokens kept)`` of a message cut short (for ``codex-inline``, the tokens
            of its head and tail together, the marker not counted), or ``None``.
        strategy: the strategy's name in a replay with a strategy, else ``None``.
        estimated_before: Pi's estimate of the context before the compaction (``tokens_before`` may
            start from recorded usage; ``tokens_after`` is always an estimate), or ``None``.
    """

    after_entry_id: Any
    branch_index: int
    tokens_before: int
    tokens_after: int
    first_kept_entry_id: Any
    is_split_turn: bool
    summarized_messages: int
    summary_tokens: int
    summary: str | None = None
    replaced: tuple[Any, ...] = ()
    kept: tuple[Any, ...] = ()
    masked: tuple[Any, ...] = ()
    truncated: tuple[Any, int] | None = None
    strategy: str | None = None
    estimated_before: int | None = None

    @property
    def compression(self) -> float | None:
        """How many times smaller the compaction made the context, in one unit: Pi's estimate of the
        context before over Pi's estimate after (``None`` when unknown or after is 0)."""
        if self.estimated_before is None or not self.tokens_after:
            return None
        return self.estimated_before / self.tokens_after

    def to_record(self) -> dict[str, Any]:
        """A flat dict for a DataFrame row."""
        return {
            "after_entry_id": self.after_entry_id, "branch_index": self.branch_index,
            "tokens_before": self.tokens_before, "tokens_after": self.tokens_after,
            "first_kept_entry_id": self.first_kept_entry_id, "is_split_turn": self.is_split_turn,
            "summarized_messages": self.summarized_messages, "summary_tokens": self.summary_tokens,
        }


@dataclass(repr=False)
class SimulationResult:
    """The replay's events and the context size at every check point."""

    leaf_id: Any
    context_window: int
    settings: CompactionSettings
    events: list[SimulationEvent] = field(default_factory=list)
    trace: list[tuple[int, Any, int, int]] = field(default_factory=list)  # (index, entry id, before, after)
    skipped: list[tuple[int, Any, int]] = field(default_factory=list)  # fired, but nothing to compact
    sizes: str = "estimate"  # "usage": sizes start from the recorded usage; "estimate": Pi's estimate alone
    usage_checks: int = 0  # checks whose size started from a recorded usage
    runaway: tuple[int, Any] | None = None  # (branch index, entry id) where compacting stopped paying
    runaway_checks: int = 0  # checks after it that fired but were not simulated
    overflows: list[tuple[int, Any, int]] = field(default_factory=list)  # checks over the window: (index, id, size)
    final_tokens: int = 0  # the simulated context size at the end of the branch (after its last entry)
    strategy: str | None = None  # the strategy's name (a replay with a strategy), else None
    strategy_threshold: int | None = None  # the size above which the strategy fires, when not Pi's
    requests: list[tuple[int, int]] = field(default_factory=list)  # per model request: (input tokens, cache reads)
    outputs: list[int] = field(default_factory=list)  # per model request: the recorded output tokens of its turn
    aborted_requests: int = 0  # requests whose recorded turn was aborted or failed (counted in requests)
    summarizer_calls: int = 0
    summarizer_input_tokens: int = 0
    summarizer_output_tokens: int = 0
    costs: RunCost | None = None  # in US dollars, when priced (see pikit.compaction._replay)
    masked_observations: int = 0  # tool results a continuous strategy masked
    # the messages (system prompt left out) of the request at each branch point: branch index → messages,
    # or None where the context is still the uncompacted one (every message of the branch before it)
    contexts: dict[int, list[dict[str, Any]] | None] = field(default_factory=dict)
    verbatim: dict[int, frozenset[Any]] = field(default_factory=dict)  # the entries each one holds unchanged

    def __repr__(self) -> str:
        """One line: the settings and what the replay found."""
        from ._simulation_card import simulation_repr

        return simulation_repr(self)

    def _repr_html_(self) -> str:
        """A card: settings, totals, the first compactions and a sparkline of the context size."""
        from ._simulation_card import simulation_html

        return simulation_html(self)

    @property
    def threshold(self) -> int:
        """``context_window - reserve_tokens``, or the strategy's own threshold."""
        if self.strategy_threshold is not None:
            return self.strategy_threshold
        return self.settings.threshold(self.context_window)

    @property
    def input_tokens(self) -> int:
        """The input of every model request of the branch, summed."""
        return sum(inp for inp, _ in self.requests)

    @property
    def cached_input_tokens(self) -> int:
        """The part of :attr:`input_tokens` a prefix cache would read."""
        return sum(cached for _, cached in self.requests)

    @property
    def request_overflows(self) -> int:
        """Requests whose input exceeds the context window."""
        return sum(1 for inp, _ in self.requests if inp > self.context_window)

    @property
    def never_fits(self) -> bool:
        """Whether compacting stopped paying (a runaway: the strategy cannot keep the context under its threshold)."""
        return self.runaway is not None

    @property
    def peak_request_tokens(self) -> int:
        """The largest request's input (what :attr:`request_overflows` counts against the window); 0 without any."""
        return max((inp for inp, _ in self.requests), default=0)

    @property
    def peak_tokens(self) -> int:
        """The largest simulated context size seen at a check point (for a strategy without one, ``none``:
        the largest request)."""
        return max((t[2] for t in self.trace), default=max((r[0] for r in self.requests), default=0))

    def totals(self) -> dict[str, Any]:
        """Summary figures of the replay."""
        return {
            "contextWindow": self.context_window, "reserveTokens": self.settings.reserve_tokens,
            "keepRecentTokens": self.settings.keep_recent_tokens, "threshold": self.threshold,
            "compactions": len(self.events), "skipped": len(self.skipped), "checks": len(self.trace),
            "peakTokens": self.peak_tokens, "finalTokens": self.final_tokens,
            "tokensRemoved": sum(e.tokens_before - e.tokens_after for e in self.events),
            "sizes": self.sizes, "checksFromUsage": self.usage_checks,
            "runawayAt": None if self.runaway is None else {"branchIndex": self.runaway[0],
                                                             "entryId": self.runaway[1]},
            "checksNotCompacted": self.runaway_checks, "checksOverWindow": len(self.overflows),
        } if self.strategy is None else self._strategy_totals()

    def _strategy_totals(self) -> dict[str, Any]:
        """:meth:`totals` of a replay with a strategy: today's keys, then the request figures."""
        base = dataclasses.replace(self, strategy=None).totals()
        return {**base, "strategy": self.strategy, "requests": len(self.requests), "inputTokens": self.input_tokens,
                "cachedInputTokens": self.cached_input_tokens,
                "freshInputTokens": self.input_tokens - self.cached_input_tokens,
                "outputTokens": sum(self.outputs), "abortedRequests": self.aborted_requests,
                "maskedObservations": self.masked_observations,
                "summarizerCalls": self.summarizer_calls, "summarizerInputTokens": self.summarizer_input_tokens,
                "summarizerOutputTokens": self.summarizer_output_tokens,
                "peakRequestTokens": self.peak_request_tokens, "overflows": self.request_overflows,
                "neverFits": self.never_fits,
                "cost": None if self.costs is None else self.costs.to_record()}

    def event_records(self) -> list[dict[str, Any]]:
        """Events as DataFrame-ready rows."""
        return [e.to_record() for e in self.events]

    def trace_records(self) -> list[dict[str, Any]]:
        """Check points as DataFrame-ready rows (``tokens`` is the size after any compaction there)."""
        return [{"branch_index": i, "entry_id": eid, "tokens_before_check": before, "tokens": after,
                 "compacted": before != after} for i, eid, before, after in self.trace]


def parsed_in_turn(entries: Iterable[Entry]) -> Iterator[Entry]:
    """``entries`` one by one, each one's parsed form dropped again once the replay has moved on to
    the next (unless it was parsed before): what a replay keeps of an entry (its messages, while the
    context holds them) it keeps itself, so a long branch is never held parsed whole."""
    for entry in entries:
        parsed = entry.is_parsed
        yield entry
        if not parsed:
            entry.release()


def branch_points(branch: Sequence[Entry], points: int | Iterable[int] = POINTS) -> frozenset[int]:
    """The branch indexes of the assistant messages whose requests a replay keeps the context of.

    ``points`` is a count (the requests at 1/n, 2/n … n/n of the branch's requests: the last one
    always) or the branch indexes themselves (each must be an assistant message's).
    """
    requests = [n for n, e in enumerate(branch) if e.type == "message" and e.role == "assistant"]
    if not isinstance(points, int):
        chosen = frozenset(points)
        if not chosen <= set(requests):
            raise ValueError("points must be branch indexes of assistant messages")
        return chosen
    if points < 0:
        raise ValueError(f"points must be a count ≥ 0 or branch indexes, not {points!r}")
    count = min(points, len(requests))
    return frozenset(requests[-(-(k * len(requests)) // count) - 1] for k in range(1, count + 1))


def _estimates(entry: Entry, messages: list[dict[str, Any]]) -> list[int]:
    """Pi's estimate of each of ``entry``'s own messages, cached on the entry as projections do."""
    cached = entry._estimates
    if cached is None:
        cached = entry._estimates = [estimate_tokens(m) for m in messages]
    return cached


class _Context:
    """The estimated size of a context (replayed system prompt + every other message), kept up to
    date incrementally as entries are appended to its path.

    After a context edit or a compaction the sizes are the projection's (``live``, kept up to date
    as the path grows: no projection of the whole path); after any other entry they grow by that
    entry's own messages, as they always have (an edit that targets an entry appended after it
    counts from the next edit or compaction on).
    """

    def __init__(self) -> None:
        self.live = GrowingProjection()
        self.system_messages: list[dict[str, Any]] = []
        self.other_tokens = 0
        self.system_tokens = 0

    @property
    def path(self) -> list[Entry]:
        return self.live.path

    def add(self, entry: Entry, plain: ProjectedEntry | None = None) -> tuple[list[dict[str, Any]], list[int]]:
        """Append ``entry`` (``plain``: see :meth:`GrowingProjection.append`); returns its own messages
        (before edits; none for an edit or a compaction) and their estimates."""
        projected = self.live.append(entry, plain)
        if projected is None or entry.type == "context_edit":
            live = self.live
            self.system_messages = list(live.system_messages)
            self.other_tokens = live.other_tokens
            self.system_tokens = live.system_tokens
            return [], []
        messages = projected.messages if projected.plain else entry_messages(entry)
        estimates = projected.estimates if projected.plain else _estimates(entry, messages)
        for message, estimate in zip(messages, estimates, strict=True):
            if message.get("role") == "system":
                self.system_messages.append(message)
                system = replay_system(self.system_messages)
                self.system_tokens = estimate_tokens(system) if system is not None else 0
            else:
                self.other_tokens += estimate
        return messages, estimates

    @property
    def tokens(self) -> int:
        return self.system_tokens + self.other_tokens


class _Recorded(_Context):
    """The history as recorded, with Pi's context size rule: the last usable usage plus the
    estimates after it; an edit or a compaction makes earlier usage stale."""

    def __init__(self) -> None:
        super().__init__()
        self.usage: int | None = None
        self.trailing = 0

    def add(self, entry: Entry, plain: ProjectedEntry | None = None) -> tuple[list[dict[str, Any]], list[int]]:
        messages, estimates = super().add(entry, plain)
        if entry.type in ("context_edit", "compaction"):
            self.usage = None
            return messages, estimates
        for message, estimate in zip(messages, estimates, strict=True):
            if message_usage(message) is not None:
                self.usage, self.trailing = usage_total(message["usage"]), 0
            elif self.usage is not None:
                self.trailing += estimate
        return messages, estimates

    @property
    def offset(self) -> int:
        """What Pi's rule adds to the estimate (0 when no usage is usable)."""
        return 0 if self.usage is None else self.usage + self.trailing - self.tokens


def simulate(session: SessionTree, summarizer: Summarizer, *, context_window: int, settings: CompactionSettings,
             leaf: Any = CURRENT, keep_existing: bool = False, sizes: str = "usage",
             progress: Progress = None) -> SimulationResult:
    """Replay the branch at ``leaf`` under ``settings`` and a ``context_window``.

    ``sizes`` is ``"usage"`` (start from the recorded usage, as Pi's context size rule does)
    or ``"estimate"`` (Pi's estimate alone); see the module docstring. ``progress``:
    by default a bar in a notebook for a branch of 5,000 entries or more,
    nothing elsewhere; ``True`` such a bar anywhere; ``False`` none; a callback is called
    ``(entries replayed, entries)`` after each entry.
    """
    return replay_pi(session, summarizer, context_window=context_window, settings=settings, leaf=leaf,
                     keep_existing=keep_existing, sizes=sizes, progress=progress)


def replay_pi(session: SessionTree, summarizer: Summarizer, *, context_window: int, settings: CompactionSettings,
              leaf: Any = CURRENT, keep_existing: bool = False, sizes: str = "usage", progress: Progress = None,
              strategy: Any = None, points: frozenset[int] = frozenset()) -> SimulationResult:
    """:func:`simulate`, and with a :class:`~pikit.compaction.PiStrategy` its replay as a
    strategy: its trigger, each request metered (``RequestMeter``), the summarizer counted, the
    context kept at each of ``points`` (:func:`branch_points`)."""
    if sizes not in SIZES:
        raise ValueError(f"sizes must be one of {', '.join(SIZES)}, not {sizes!r}")
    leaf_id = session.resolve_leaf(leaf)
    branch = session.branch(leaf_id)
    result = SimulationResult(leaf_id, context_window, settings, sizes=sizes)
    meter = None
    if strategy is not None:
        meter, summarizer = _as_strategy(result, strategy, summarizer)
    threshold = result.threshold
    ctx = _Context()
    recorded = _Recorded() if sizes == "usage" else None
    same = True  # the simulated context is the recorded one: the recorded usage measures it (module docstring)
    changed = False  # the simulated context is no longer the uncompacted one (every message so far)
    taken = set(session.by_id)
    runaway = _RunawayGuard(result)
    for index, entry in enumerate(tracked(parsed_in_turn(branch), progress, f"replaying {plural(len(branch), 'entry')}",
                                          len(branch), ENTRIES)):
        assistant = entry.type == "message" and entry.role == "assistant"
        if assistant:
            _request(result, meter, entry, index, ctx.tokens + _offset(recorded, same),
                     ctx.live.projection() if changed and index in points else None, index in points)
        plain = None if entry.type in ("compaction", "context_edit") else \
            ProjectedEntry(entry, entry_messages(entry), None, True)  # (one for both contexts)
        if recorded is not None:
            recorded.add(entry, plain)
        if entry.type == "compaction":
            same = changed = keep_existing  # kept, the context is the recorded one again; left out, it is not
            if not keep_existing:
                continue
        ctx.add(entry, plain)
        if not assistant:
            continue
        offset = _offset(recorded, same)
        if recorded is not None and recorded.usage is not None and same:
            result.usage_checks += 1
        before = ctx.tokens + offset
        if before > context_window:
            result.overflows.append((index, entry.id, before))
        fires = settings.should_compact(before, context_window) if result.strategy_threshold is None else \
            settings.enabled and before > threshold
        if fires and runaway.tries():
            event = _compact(ctx, summarizer, settings, index, entry.id, before, taken, result.strategy)
            if event is None:
                result.skipped.append((index, entry.id, before))
            else:
                result.events.append(event)
                same, changed, offset = False, True, 0
                if meter is not None:
                    meter.rewrite(ctx.system_tokens)
            runaway.record(index, entry.id, before, event)
        result.trace.append((index, entry.id, before, ctx.tokens + offset))
    result.final_tokens = ctx.tokens + _offset(recorded, same)
    return result


def _request(result: SimulationResult, meter: RequestMeter | None, entry: Entry, index: int, size: int,
             projection: Projection | None, point: bool) -> None:
    """The request of an assistant message: metered, and at a branch point its context kept."""
    if meter is not None:
        meter.request(size, entry)
    if point:
        _keep_context(result, index, projection)


def _keep_context(result: SimulationResult, index: int, projection: Projection | None) -> None:
    """The context of the request at a branch point (``None``: still the uncompacted one)."""
    if projection is None:
        result.contexts[index] = None
        return
    result.contexts[index] = [m for m in projection.messages if m.get("role") != "system"]
    result.verbatim[index] = frozenset(pe.entry.id for pe in projection.entries
                                       if pe.messages and pe.entry.type != "compaction")


def _offset(recorded: _Recorded | None, same: bool) -> int:
    """What the recorded usage adds to the estimate: only while the simulated context is the recorded one."""
    return recorded.offset if recorded is not None and same else 0


def _as_strategy(result: SimulationResult, strategy: Any, summarizer: Summarizer) -> tuple[RequestMeter, Summarizer]:
    """Mark ``result`` as ``strategy``'s run: its name and threshold, a meter, a counted summarizer."""
    result.strategy = strategy.name
    if strategy.fraction is not None:
        result.strategy_threshold = strategy.threshold(result.context_window, result.settings)
    return RequestMeter(result), CountingSummarizer(summarizer, result)


class CountingSummarizer:
    """A summarizer that counts its calls and their input in a replay's result.

    The input of a call is its reported usage (input, cache reads and writes) when the
    summarizer reports one, else Pi's chars/4 estimate of the conversation text and the previous
    summary (the offline summarizer reports none).
    """

    def __init__(self, summarizer: Summarizer, result: SimulationResult) -> None:
        self.summarizer = summarizer
        self.result = result
        self.name = summarizer.name

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """Summarize through the wrapped summarizer, counting the call."""
        answer = self.summarizer.summarize(request)
        self.result.summarizer_calls += 1
        self.result.summarizer_input_tokens += _request_tokens(request, answer)
        self.result.summarizer_output_tokens += answer_tokens(answer)
        return answer


def _request_tokens(request: SummaryRequest, answer: SummaryResult) -> int:
    usage = answer.usage
    if usage:
        reported = sum(v for k in ("input", "cacheRead", "cacheWrite")
                       if isinstance(v := usage.get(k), int) and not isinstance(v, bool))
        if reported:
            return reported
    chars = len(request.conversation_text) + len(request.previous_summary or "")
    return -(-chars // 4)


class _RunawayGuard:
    """Detects a runaway (see the module docstring) and, during one, lets only probes through."""

    def __init__(self, result: SimulationResult) -> None:
        self.result = result
        self.threshold = result.threshold
        self.ineffective = 0  # firing checks in a row whose compaction did not bring the context under the threshold
        self.halted = False  # in a runaway: firing checks are counted, and only probed now and then
        self.next_probe = 0

    def tries(self) -> bool:
        """Whether a check that fired gets a real compaction (otherwise it is only counted)."""
        if self.halted and self.result.runaway_checks + 1 < self.next_probe:
            self.result.runaway_checks += 1  # Pi would compact (for little) again here: not replayed
            return False
        return True

    def record(self, index: int, entry_id: Any, before: int, event: SimulationEvent | None) -> None:
        """Take the outcome of a compaction tried after a check that fired."""
        if event is not None and event.tokens_after <= self.threshold and event.tokens_after < before:
            self.ineffective, self.halted = 0, False  # compacting pays (again)
            return
        self.ineffective += 1
        if self.halted:  # a probe that did not pay: wait twice as long for the next one
            self.result.runaway_checks += 1
            self.next_probe *= 2
        elif self.ineffective >= RUNAWAY_AFTER:
            self.halted, self.next_probe = True, self.result.runaway_checks + 2
            if self.result.runaway is None:
                self.result.runaway = (index, entry_id)


def _compact(ctx: _Context, summarizer: Summarizer, settings: CompactionSettings, index: int, after_id: Any,
             before: int, taken: set[Any], strategy: str | None = None) -> SimulationEvent | None:
    path = ctx.path
    estimated = ctx.tokens
    # The projection of the context alone (never the whole path); a compaction as the leaf has nothing to compact.
    prep = prepare_compaction(path, settings.keep_recent_tokens,
                              ctx.live.projection() if path and path[-1].type != "compaction" else None)
    if prep is None:
        return None
    summary, usage = summarize_preparation(prep, summarizer)
    entry_id = new_id(taken)
    taken.add(entry_id)
    ctx.add(Entry(compaction_entry(prep, entry_id, path[-1].id, summary, usage)))
    summarized = len(prep.messages_to_summarize) + len(prep.turn_prefix_messages)
    replaced = tuple(pe.entry.id for pe in prep.projection.entries[:prep.first_kept_index]
                     if pe.messages and pe.entry.type != "compaction")
    kept = tuple(pe.entry.id for pe in ctx.live.entries if pe.messages and pe.entry.type != "compaction")
    return SimulationEvent(after_id, index, before, ctx.tokens, prep.first_kept_entry_id, prep.is_split_turn,
                           summarized, estimate_tokens({"role": "compactionSummary", "summary": summary}),
                           summary, replaced, kept, strategy=strategy, estimated_before=estimated)


def sweep(session: SessionTree, summarizer: Summarizer, *, context_windows: Sequence[int],
          settings: Iterable[CompactionSettings], leaf: Any = CURRENT, keep_existing: bool = False,
          sizes: str = "usage", progress: Progress = None) -> list[SimulationResult]:
    """:func:`simulate` for every combination of context window and settings (``progress`` counts
    each entry once per combination)."""
    chosen = list(settings)
    combos = [(w, s) for w in context_windows for s in chosen]
    leaf_id = session.resolve_leaf(leaf)
    entries = len(session.branch(leaf_id)) if leaf_id is not None else 0
    total = entries * len(combos)
    with reporting(progress, f"replaying {plural(entries, 'entry')} under {plural(len(combos), 'setting')}",
                   total, ENTRIES) as callback:
        return [simulate(session, summarizer, context_window=w, settings=s, leaf=leaf_id, keep_existing=keep_existing,
                         sizes=sizes, progress=_part(callback, i * entries, total))
                for i, (w, s) in enumerate(combos)]


def _part(callback: ProgressCallback | None, before: int, total: int) -> ProgressCallback | bool:
    """The progress of one replay of a sweep, as part of the sweep's."""
    if callback is None:
        return False
    return lambda done, _entries: callback(before + done, total)


def threshold_table(results: Iterable[SimulationResult]) -> list[dict[str, Any]]:
    """One row per replay: window, reserve, keep, threshold, compactions, first trigger, peak."""
    rows = []
    for r in results:
        first = r.events[0] if r.events else None
        rows.append({**r.totals(), "firstTriggerEntryId": first.after_entry_id if first else None,
                     "firstTriggerIndex": first.branch_index if first else None})
    return rows
