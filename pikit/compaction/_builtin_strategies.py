"""The built-in compaction strategies other than Pi's, and the table of every built-in by name.

- ``pi`` and ``pi-percent``: :class:`~pikit.compaction.PiStrategy` (Pi's own compaction);
- ``codex-inline``: :class:`CodexInlineStrategy`, Codex's local compaction;
- ``none``: :class:`NoneStrategy`, no compaction (the ceiling of recall and of cost);
- ``mask-observations``: :class:`MaskObservationsStrategy`, a rolling window of recent tool outputs, the
  older ones replaced by placeholders before every request;
- ``mask-at-threshold``: :class:`MaskAtThresholdStrategy`, the same masking once the context passes Pi's threshold;
- ``truncate``: :class:`TruncateStrategy`, the oldest messages dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from .._context.serialize import serialize_conversation, to_model_messages
from ..errors import Wording
from ._strategy import (
    Check,
    ContextItem,
    Outcome,
    PiPercentStrategy,
    PiStrategy,
    ReplayContext,
    Strategy,
    StrategyError,
    Summarize,
    approx_tokens,
    check_count,
    ids_of,
)
from ._summarizer import SummaryRequest

if TYPE_CHECKING:
    from ._settings import CompactionSettings

__all__ = ["CODEX_RESUME_PREFIX", "CODEX_USER_TOKENS", "STRATEGIES", "CodexInlineStrategy", "MaskAtThresholdStrategy",
           "MaskObservationsStrategy", "NoneStrategy", "TruncateStrategy", "codex_cut", "codex_cut_marker",
           "strategy_named"]

#: The tokens (UTF-8 bytes / 4) of recent user messages Codex keeps verbatim after a compaction.
CODEX_USER_TOKENS = 20_000
#: The text before the summary in the user message a ``codex-inline`` compaction ends with.
CODEX_RESUME_PREFIX = ("[Resuming after compaction] The earlier part of this conversation was condensed. The user "
                       "messages above are the most recent requests, verbatim; below is a handoff summary of the "
                       "work so far. Carry on from it without redoing finished work.")


def _user_text(message: Mapping[str, Any]) -> str:
    """The text of a user message, its text blocks joined by a newline (images left out, as Codex does)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(b["text"] for b in content
                     if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
                     and b["text"])


def codex_cut(text: str, byte_budget: int) -> tuple[str, str, int]:
    """Codex's cut of ``text`` to ``byte_budget`` UTF-8 bytes: ``(head, tail, tokens removed)``.

    The head is the longest run of whole characters from the start that ends within
    ``byte_budget // 2`` bytes; the tail starts at the first character that starts at or after
    ``length - (byte_budget - byte_budget // 2)`` bytes (never before the head's end) and runs to the
    end. The tokens removed are ``ceil((length - byte_budget) / 4)``: the bytes over the budget, not
    the middle actually left out. A text within the budget is its own head, with no tail and nothing
    removed; a budget of 0 keeps nothing. A lone surrogate counts its 3 bytes (``surrogatepass``)
    and stays one whole character, so head and tail are always valid text.
    """
    raw = text.encode("utf-8", "surrogatepass")
    budget = max(byte_budget, 0)
    if len(raw) <= budget:
        return text, "", 0
    removed = approx_tokens(len(raw) - budget)
    left = budget // 2
    end = left
    while end > 0 and raw[end] & 0xC0 == 0x80:  # a continuation byte: the character runs past ``left``
        end -= 1
    start = len(raw) - (budget - left)
    while start < len(raw) and raw[start] & 0xC0 == 0x80:
        start += 1
    start = max(start, end)
    return raw[:end].decode("utf-8", "surrogatepass"), raw[start:].decode("utf-8", "surrogatepass"), removed


def codex_cut_marker(removed_tokens: int) -> str:
    """The marker Codex puts between the head and the tail of a cut text."""
    return f"…{removed_tokens} tokens truncated…"


class CodexInlineStrategy(Strategy):
    """``codex-inline``: Codex's local ("inline") compaction, replayed on a Pi branch.

    Source: ``openai/codex``, ``codex-rs/core/src/compact.rs`` (``build_compacted_history_with_limit``,
    ``collect_user_messages``, ``COMPACT_USER_MESSAGE_MAX_TOKENS``), ``codex-rs/core/templates/compact/``
    and the auto-compact limit of ``codex-rs/protocol/src/openai_models.rs``.

    - **Trigger**: :attr:`Check.approx_tokens` ``>= limit`` with ``limit = min(auto_compact_limit,
      context_window * 9 // 10)`` (the 90% alone without ``auto_compact_limit``), checked before a
      new user message (pre-turn) and after an assistant message with tool calls (mid-turn).
    - **New context**: the system prompt; the newest real user messages (Pi ``user`` messages, not
      summaries, branch summaries or custom messages) that fit in 20,000 tokens (UTF-8 bytes / 4
      of their text), walked newest to oldest, the first that does not fit cut to the tokens left
      as Codex cuts a text (:func:`codex_cut`: its head and its tail, half the bytes left each,
      with ``…N tokens truncated…`` between them), in chronological order; then one user message:
      :data:`CODEX_RESUME_PREFIX`, a newline and the summary.
    - **Dropped**: every assistant message (text, reasoning, tool calls) and every tool result.
    - **Summary**: Codex's handoff format (``SummaryRequest.format == "handoff"``) of the whole
      context, updating the previous ``codex-inline`` summary.
    """

    name: ClassVar[str] = "codex-inline"
    checks: ClassVar[tuple[str, ...]] = ("pre-turn", "mid-turn")
    counts_bytes: ClassVar[bool] = True

    def __init__(self, auto_compact_limit: int | None = None) -> None:
        if auto_compact_limit is not None:
            check_count(auto_compact_limit, "auto_compact_limit")
        self.auto_compact_limit = auto_compact_limit

    def threshold(self, context_window: int, settings: CompactionSettings) -> int:
        """``min(auto_compact_limit, context_window * 9 // 10)``."""
        limit = context_window * 9 // 10
        return limit if self.auto_compact_limit is None else min(self.auto_compact_limit, limit)

    def should_compact(self, check: Check, settings: CompactionSettings) -> bool:
        """Codex's trigger: ``approx_tokens >= limit``."""
        return check.approx_tokens >= self.threshold(check.context_window, settings)

    def describe(self) -> str:
        """``codex-inline`` and the configured limit."""
        return self.name if self.auto_compact_limit is None else f"{self.name} limit {self.auto_compact_limit}"

    def compact(self, context: ReplayContext, summarize: Summarize) -> Outcome | None:
        """Summarize the context and keep the newest user messages (see the class docstring)."""
        items = context.items
        if all(i.kind == "summary" or (i.role == "user" and i.kind != "masked") for i in items):
            return None  # only user messages and a summary: nothing Codex would drop
        history = [i for i in items if i.kind != "summary"]
        previous = next((_user_text(i.message).removeprefix(CODEX_RESUME_PREFIX + "\n") for i in reversed(items)
                         if i.kind == "summary"), None)
        messages = [i.message for i in history]
        text = lambda: serialize_conversation(to_model_messages(messages))  # noqa: E731  (made if it is read)
        summary = summarize(SummaryRequest("history", text, messages, previous, format="handoff"))
        selected, truncated = self._recent_users([i for i in items if i.role == "user" and i.kind != "summary"])
        kept = {id(i) for i in selected}
        new = [*selected, ContextItem.summary(f"{CODEX_RESUME_PREFIX}\n{summary}")]
        replaced = ids_of([i for i in items if id(i) not in kept and i.kind != "summary"])
        kept_ids = ids_of(selected)
        return Outcome(new, summary, [i for i in replaced if i not in kept_ids], truncated=truncated,
                       first_kept_entry_id=kept_ids[0] if kept_ids else None)

    @staticmethod
    def _recent_users(users: list[ContextItem]) -> tuple[list[ContextItem], tuple[Any, int] | None]:
        """The user messages kept (chronological) and the one cut short ``(entry id, tokens kept)``.

        The tokens kept are those of the cut message's head and tail together (their UTF-8 bytes / 4,
        rounded up), the marker between them not counted.
        """
        selected: list[ContextItem] = []
        truncated = None
        remaining = CODEX_USER_TOKENS
        for item in reversed(users):
            if remaining == 0:
                break
            text = _user_text(item.message)
            tokens = approx_tokens(len(text.encode("utf-8", "surrogatepass")))
            if tokens <= remaining:
                selected.append(item)
                remaining -= tokens
                continue
            head, tail, removed = codex_cut(text, remaining * 4)
            kept_tokens = approx_tokens(len((head + tail).encode("utf-8", "surrogatepass")))
            message = {**item.message, "content": [{"type": "text", "text": head + codex_cut_marker(removed) + tail}]}
            selected.append(ContextItem.of(item.entry_id, message, "truncated"))
            truncated = (item.entry_id, kept_tokens)
            break
        selected.reverse()
        return selected, truncated


class NoneStrategy(Strategy):
    """``none``: no compaction. The context holds every message of the branch (a compaction in the file
    left out, unless ``keep_existing``): the ceiling of what a context can hold and of what it costs,
    with every request over the window counted as an overflow. It fires at no size (its threshold is
    the window) and has no check point."""

    name: ClassVar[str] = "none"
    checks: ClassVar[tuple[str, ...]] = ()

    def threshold(self, context_window: int, settings: CompactionSettings) -> int:
        """The window: it never compacts."""
        return context_window

    def compact(self, context: ReplayContext, summarize: Summarize) -> Outcome | None:
        """Nothing: the context stays whole."""
        return None


class MaskObservationsStrategy(Strategy):
    """``mask-observations``: a rolling window of the last ``keep_observations`` tool outputs, the older ones masked.

    Source: Lindenbauer et al., "The Complexity Trap: Simple Observation Masking Is as Efficient
    as LLM Summarization for Agent Context Management" (arXiv 2508.21433): the agent's reasoning
    and actions stay; every observation (tool result) older than the most recent
    ``keep_observations`` is replaced by a short placeholder before every model request; no model
    call. The paper's setting is a window of 10 (SWE-agent's ``last_n_observations`` with
    ``n: 10``: one observation per turn there). Here each tool result is an observation, and a
    masked one becomes a tool result naming the tool and the tokens removed (same ``toolCallId``,
    so each call keeps its result). Continuous: it runs before every request, not at a threshold
    (its threshold is the window), and records no compaction event.
    """

    name: ClassVar[str] = "mask-observations"
    checks: ClassVar[tuple[str, ...]] = ("request",)
    continuous: ClassVar[bool] = True

    def __init__(self, keep_observations: int = 10) -> None:
        self.keep_observations = check_count(keep_observations, "keep_observations")

    def threshold(self, context_window: int, settings: CompactionSettings) -> int:
        """The window: it masks at every request, whatever the size."""
        return context_window

    def describe(self) -> str:
        """``mask-observations`` and the observations kept."""
        return f"{self.name} keep {self.keep_observations}"

    def edit(self, context: ReplayContext) -> dict[int, ContextItem]:
        """The tool results before the newest ``keep_observations``, masked; the walk goes back from the
        newest and stops at the first one masked already (everything before it was masked at an earlier
        request), so a request costs the items since then, not the whole context."""
        items = context.items
        seen = 0
        changes: dict[int, ContextItem] = {}
        for n in range(len(items) - 1, -1, -1):
            item = items[n]
            if item.role != "toolResult":
                continue
            if item.kind == "masked":
                break
            seen += 1
            if seen > self.keep_observations and item.kind == "message":
                changes[n] = _placeholder(item)
        return changes


class MaskAtThresholdStrategy(Strategy):
    """``mask-at-threshold``: at Pi's threshold, tool outputs older than the last ``keep_turns`` turns become
    placeholders.

    A variant of observation masking that fires like Pi (``context > context_window -
    reserveTokens``, after an assistant message) instead of at every request. A turn begins at a
    user message; every tool result before the ``keep_turns``-th newest one is replaced by a tool
    result naming the tool and the tokens removed (same ``toolCallId``). No model call.
    """

    name: ClassVar[str] = "mask-at-threshold"

    def __init__(self, keep_turns: int = 10) -> None:
        self.keep_turns = check_count(keep_turns, "keep_turns")

    def describe(self) -> str:
        """``mask-at-threshold`` and the turns kept."""
        return f"{self.name} keep {self.keep_turns} turns"

    def compact(self, context: ReplayContext, summarize: Summarize) -> Outcome | None:
        """Mask the tool results before the last ``keep_turns`` turns (``None`` when there are none)."""
        items = context.items
        boundary = len(items)
        if self.keep_turns:
            starts = [n for n, i in enumerate(items) if i.role == "user"]
            if len(starts) < self.keep_turns:
                return None
            boundary = starts[-self.keep_turns]
        new = list(items)
        masked: list[Any] = []
        for n in range(boundary):
            item = items[n]
            if item.role == "toolResult" and item.kind == "message":
                new[n] = _placeholder(item)
                masked.append(item.entry_id)
        if not masked:
            return None
        return Outcome(new, masked=masked)


def _placeholder(item: ContextItem) -> ContextItem:
    """A tool result standing for ``item``: the tool's name and the size removed."""
    tool = item.message.get("toolName")
    name = tool if isinstance(tool, str) and tool else "a tool"
    text = f"[output of {name} removed from the context: about {item.tokens:,} tokens]"
    return ContextItem.of(item.entry_id, {**item.message, "content": [{"type": "text", "text": text}]}, "masked")


class TruncateStrategy(Strategy):
    """``truncate``: the oldest messages dropped until the context is at most the threshold.

    No model call, no summary. Messages go in units (a message and the tool results after it),
    so a tool call never loses its result; the newest unit always stays. Triggers like Pi
    (``context > context_window - reserveTokens``), which it also aims under.
    """

    name: ClassVar[str] = "truncate"

    def compact(self, context: ReplayContext, summarize: Summarize) -> Outcome | None:
        """Drop whole units from the oldest until the context is at most the threshold."""
        items = context.items
        limit = self.threshold(context.context_window, context.settings)
        size = context.check.tokens
        cut = 0
        while size > limit:
            end = cut + 1
            while end < len(items) and items[end].role == "toolResult":
                end += 1
            if end >= len(items):
                break  # the newest unit stays
            size -= sum(i.tokens for i in items[cut:end])
            cut = end
        if cut == 0:
            return None
        kept = items[cut:]
        return Outcome(kept, replaced=ids_of(items[:cut]), first_kept_entry_id=kept[0].entry_id)


#: Every built-in strategy by name: a function of the replay's strategy parameters.
STRATEGIES: Mapping[str, Callable[..., Strategy]] = MappingProxyType({
    "pi": lambda **_: PiStrategy(),
    "pi-percent": lambda threshold=None, **_: PiPercentStrategy(threshold),
    "none": lambda **_: NoneStrategy(),
    "codex-inline": lambda auto_compact_limit=None, **_: CodexInlineStrategy(auto_compact_limit),
    "mask-observations": lambda keep_observations=10, **_: MaskObservationsStrategy(keep_observations),
    "mask-at-threshold": lambda keep_turns=10, **_: MaskAtThresholdStrategy(keep_turns),
    "truncate": lambda **_: TruncateStrategy(),
})


def strategy_named(name: Any, *, threshold: float | None = None, keep_turns: int = 10,
                   auto_compact_limit: int | None = None, keep_observations: int = 10) -> Strategy:
    """The built-in strategy called ``name`` with the given parameters; a :class:`Strategy` passes through.

    Raises:
        StrategyError: an unknown name (the message lists the known ones) or a bad parameter.
    """
    if isinstance(name, Strategy):
        return name
    if isinstance(name, type) and issubclass(name, Strategy):
        raise StrategyError(Wording("{strategy} {cls} is a class: pass an instance of it, {cls}()",
                                    {"strategy": "strategy"}, cls=name.__name__))
    make = STRATEGIES.get(name) if isinstance(name, str) else None
    if make is None:
        raise StrategyError(Wording("unknown {strategy} {name!r}; the built-in strategies are {known}",
                                    {"strategy": "strategy"}, name=name, known=", ".join(STRATEGIES)))
    return make(threshold=threshold, keep_turns=keep_turns, auto_compact_limit=auto_compact_limit,
                keep_observations=keep_observations)
