"""The compaction-strategy protocol: when a strategy fires and what the next request carries.

A replay (:func:`pikit.compaction.simulate` with ``strategy=``) walks a branch entry by entry and
keeps the context the next model request would carry: the system prompt and a list of
:class:`ContextItem` (one message each, with the entry that produced it). At each of the
strategy's check points it asks :meth:`Strategy.should_compact`; when that says yes it calls
:meth:`Strategy.compact`, which returns an :class:`Outcome`: the new list of items (verbatim,
summarized, masked or dropped, as the strategy decides) and what it did.

Writing a strategy is one small class. Subclass :class:`Strategy` (which triggers like Pi,
``context > context_window - reserveTokens``, after every assistant message) and write
``compact``::

    from pikit.compaction import Outcome, Strategy

    class KeepLastTwenty(Strategy):
        '''Drop everything but the last 20 messages (no model call).'''

        name = "keep-last-20"

        def compact(self, context, summarize):
            kept = context.items[-20:]
            dropped = context.items[:-20]
            if not dropped:
                return None                   # nothing to compact here
            return Outcome(kept, replaced=[i.entry_id for i in dropped])

    compaction.simulate(session, summarizer, context_window=50_000, settings=settings,
                        strategy=["pi", KeepLastTwenty()])

A strategy that changes the context at every request rather than at a threshold (such as the
rolling ``mask-observations``) sets ``continuous = True`` and writes :meth:`Strategy.edit`
instead of ``compact``: the items it replaces, by index, in place. The replay asks it at each of
its check points, with no trigger and no runaway guard, and records no compaction event; its
trace shows the size before and after each edit.

``summarize(request)`` sends a :class:`~pikit.compaction.SummaryRequest` to the replay's
summarizer and returns the summary text (the replay counts the call and its input); a strategy
that summarizes puts the text in an item of its own (``ContextItem.summary(text)``) and in
``Outcome.summary``. Override ``threshold`` (the size above which it fires) or ``should_compact``
for another trigger, and ``checks`` for other check points: ``"assistant"`` (after every
assistant message, Pi's), ``"mid-turn"`` (after an assistant message with tool calls: more work
follows), ``"pre-turn"`` (before a new user message) and ``"request"`` (before every model request:
before each assistant message is added).

A replay checks a strategy when it starts (its ``name``, ``checks``, ``counts_bytes``, that it
defines ``compact`` and that ``threshold`` gives a whole number) and each outcome it returns
(an :class:`Outcome` or ``None``; items that are :class:`ContextItem` with a message and a whole
number of tokens ≥ 0): a mistake is one :class:`StrategyError` naming the strategy and the field.
A returned outcome must keep each tool result with its tool call (the replay does not check that).
``pi`` and ``pi-percent`` (:class:`PiStrategy`) are the exception to this protocol: they compact
the branch itself as Pi does (a compaction entry on the simulated branch), through the same loop
as a replay without a strategy, so their figures are Pi's exactly.
"""

from __future__ import annotations

import difflib
import json
import reprlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from .._context.tokens import estimate_tokens
from ..errors import PikitError, Wording

if TYPE_CHECKING:
    from ._settings import CompactionSettings
    from ._summarizer import SummaryRequest

__all__ = ["CHECK_KINDS", "ITEM_KINDS", "Check", "ContextItem", "Outcome", "PiPercentStrategy", "PiStrategy",
           "ReplayContext", "Strategy", "StrategyError", "approx_tokens", "check_count", "check_fraction",
           "checked_edit", "checked_outcome", "checked_strategy", "checked_threshold", "ids_of", "message_bytes"]

#: The check points a strategy may ask for (see the module docstring).
CHECK_KINDS = ("assistant", "mid-turn", "pre-turn", "request")

#: The kinds of :class:`ContextItem`.
ITEM_KINDS = ("message", "summary", "masked", "truncated")

#: The summarizer a strategy calls: a request in, the summary text out.
Summarize = Callable[["SummaryRequest"], str]


class StrategyError(PikitError, ValueError):
    """A strategy or one of its parameters is not valid (one line, naming the parameter)."""


#: The bytes an inline image counts for in :func:`message_bytes` (Pi's estimate of an image, 1,200 tokens, × 4).
IMAGE_BYTES = 4_800


def message_bytes(message: Any) -> int:
    """The UTF-8 bytes of ``message`` as compact JSON (lone surrogates count as three bytes).

    An inline image counts as :data:`IMAGE_BYTES`, not its base64 data (a model does not read it as text).
    """
    content = message.get("content") if isinstance(message, dict) else None
    images = 0
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "image" for b in content):
        blocks = [b for b in content if not (isinstance(b, dict) and b.get("type") == "image")]
        images = len(content) - len(blocks)
        message = {**message, "content": blocks}
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", "surrogatepass")) + images * IMAGE_BYTES


def approx_tokens(byte_count: int) -> int:
    """Codex's ``approx_token_count``: UTF-8 bytes / 4, rounded up."""
    return (byte_count + 3) // 4


@dataclass
class ContextItem:
    """One message of a replayed context.

    Attributes:
        entry_id: the entry whose message this is (``None`` for a strategy's own message, such as
            a summary).
        message: the Pi message as the model would see it.
        tokens: Pi's estimate of ``message``.
        kind: ``"message"`` (verbatim), ``"summary"`` (a strategy's summary), ``"masked"`` (a
            placeholder for a removed observation) or ``"truncated"`` (a message cut short).
    """

    entry_id: Any
    message: dict[str, Any]
    tokens: int
    kind: str = "message"
    _bytes: int | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, entry_id: Any, message: dict[str, Any], kind: str = "message") -> ContextItem:
        """An item for ``message`` with its estimate."""
        return cls(entry_id, message, estimate_tokens(message), kind)

    @classmethod
    def summary(cls, text: str, role: str = "user") -> ContextItem:
        """A strategy's own message holding ``text`` (a user message by default)."""
        return cls.of(None, {"role": role, "content": [{"type": "text", "text": text}]}, "summary")

    @property
    def role(self) -> Any:
        """The message's role."""
        return self.message.get("role")

    @property
    def bytes(self) -> int:
        """The UTF-8 bytes of the message as JSON (:func:`message_bytes`, computed once)."""
        if self._bytes is None:
            self._bytes = message_bytes(self.message)
        return self._bytes


@dataclass(frozen=True)
class Check:
    """One check point of a replay.

    Attributes:
        kind: ``"assistant"``, ``"mid-turn"``, ``"pre-turn"`` or ``"request"`` (see the module docstring).
        index: the branch index of the entry checked after (or, pre-turn and at a request, before).
        entry_id: that entry's id.
        tokens: the context size the replay measures now (see ``sizes`` of ``simulate``).
        context_window: the replay's window.
        approx_tokens: Codex's total: the last recorded usage plus UTF-8 bytes / 4 of the messages
            after it (each message as compact JSON), while the replayed context is the recorded
            one; once a simulated compaction changed it, or a compaction in the file was left
            out, no recorded usage matches and it is bytes / 4 of the whole context (system
            prompt and items). Only kept for strategies with ``counts_bytes``.
    """

    kind: str
    index: int
    entry_id: Any
    tokens: int
    context_window: int
    approx_tokens: int


@dataclass
class ReplayContext:
    """What a strategy sees when it compacts: the items, the system prompt's size, the settings.

    ``items`` is the replay's own list for a continuous strategy (read it, never change it).
    """

    items: list[ContextItem]
    system_tokens: int
    context_window: int
    settings: CompactionSettings
    check: Check

    @property
    def tokens(self) -> int:
        """The estimate of the items and the system prompt (without the recorded-usage offset)."""
        return self.system_tokens + sum(i.tokens for i in self.items)


@dataclass
class Outcome:
    """What a strategy did at one check.

    Attributes:
        items: the new context (without the system prompt, which stays).
        summary: the summary text it wrote, or ``None``.
        replaced: entry ids whose messages it removed from the context (summarized or dropped).
        masked: entry ids whose messages it replaced by a placeholder.
        truncated: ``(entry id, tokens kept)`` of a message cut short (for ``codex-inline``, the tokens
            of its head and tail together, the marker not counted), or ``None``.
        first_kept_entry_id: the first entry kept verbatim, when that means something.
    """

    items: list[ContextItem]
    summary: str | None = None
    replaced: list[Any] = field(default_factory=list)
    masked: list[Any] = field(default_factory=list)
    truncated: tuple[Any, int] | None = None
    first_kept_entry_id: Any = None


class Strategy:
    """A compaction strategy (see the module docstring for how to write one).

    The defaults trigger like Pi: at every assistant message, when the context is larger than
    ``context_window - reserveTokens``.
    """

    name: ClassVar[str] = "strategy"
    #: The check points this strategy asks for (a subset of :data:`CHECK_KINDS`).
    checks: ClassVar[tuple[str, ...]] = ("assistant",)
    #: Whether the replay keeps UTF-8 byte counts for :attr:`Check.approx_tokens`.
    counts_bytes: ClassVar[bool] = False
    #: Whether it edits the context at every check (:meth:`edit`) instead of compacting at a trigger.
    continuous: ClassVar[bool] = False

    def threshold(self, context_window: int, settings: CompactionSettings) -> int:
        """The context size above which the strategy fires: Pi's ``context_window - reserveTokens``."""
        return settings.threshold(context_window)

    def should_compact(self, check: Check, settings: CompactionSettings) -> bool:
        """Whether to compact at ``check``: Pi's trigger (enabled, size above :meth:`threshold`)."""
        return settings.enabled and check.tokens > self.threshold(check.context_window, settings)

    def compact(self, context: ReplayContext, summarize: Summarize) -> Outcome | None:
        """The next request's context, or ``None`` when there is nothing to compact."""
        raise NotImplementedError(f"{type(self).__name__} must define compact()")

    def edit(self, context: ReplayContext) -> dict[int, ContextItem]:
        """A continuous strategy's change at a check: the items to replace, by index (empty: none)."""
        raise NotImplementedError(f"{type(self).__name__} must define edit()")

    def describe(self) -> str:
        """The strategy and its parameters, in one short phrase."""
        return self.name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()}>"


class PiStrategy(Strategy):
    """Pi's own compaction: the cut point at ``keepRecentTokens``, a structured summary, file lists.

    ``threshold=None`` is Pi's trigger (``context > context_window - reserveTokens``, the
    ``pi`` strategy, and a replay without a strategy); a fraction in (0, 1] fires when
    ``context > threshold × context_window`` instead (``pi-percent``). Source: Pi's compaction,
    ``compaction.md`` of pikit's specification.
    """

    name: ClassVar[str] = "pi"

    def __init__(self, threshold: float | None = None) -> None:
        if threshold is not None:
            check_fraction(threshold)
        self.fraction = threshold

    def threshold(self, context_window: int, settings: CompactionSettings) -> int:
        """Pi's threshold, or ``int(fraction × context_window)``."""
        if self.fraction is None:
            return settings.threshold(context_window)
        return int(self.fraction * context_window)

    def describe(self) -> str:
        """``pi`` or ``pi-percent 0.8``."""
        return self.name if self.fraction is None else f"{self.name} {self.fraction:g}"

    def compact(self, context: ReplayContext, summarize: Summarize) -> Outcome | None:
        """Not called: the replay compacts the simulated branch itself, as Pi does."""
        raise NotImplementedError("PiStrategy compacts the simulated branch in the replay itself")


class PiPercentStrategy(PiStrategy):
    """``pi-percent``: Pi's cut point, triggered at a fraction of the window (default 0.8)."""

    name: ClassVar[str] = "pi-percent"

    def __init__(self, threshold: float | None = None) -> None:
        super().__init__(0.8 if threshold is None else threshold)


def check_fraction(threshold: Any) -> float:
    """``threshold`` when it is a number in (0, 1]; otherwise a :class:`StrategyError`."""
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 < threshold <= 1:
        raise StrategyError(Wording("{threshold} must be a fraction of the window in (0, 1], not {value!r}",
                                    {"threshold": "threshold"}, value=threshold))
    return float(threshold)


def check_count(value: Any, parameter: str) -> int:
    """``value`` when it is an integer ≥ 0; otherwise a :class:`StrategyError` naming ``parameter``
    (``"auto_compact_limit"``, ``"keep_turns"`` or ``"keep_observations"``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        if parameter == "auto_compact_limit":
            raise StrategyError(Wording("{auto_compact_limit} must be a whole number ≥ 0, not {value!r}",
                                        {"auto_compact_limit": "auto_compact_limit"}, value=value))
        if parameter == "keep_observations":
            raise StrategyError(Wording("{keep_observations} must be a whole number ≥ 0, not {value!r}",
                                        {"keep_observations": "keep_observations"}, value=value))
        raise StrategyError(Wording("{keep_turns} must be a whole number ≥ 0, not {value!r}",
                                    {"keep_turns": "keep_turns"}, value=value))
    return value


_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 40
_SCALAR = (str, int, float, type(None))  # values an error quotes (others it names by their type)


def _invalid(strategy: Any, where: str, rule: str, value: Any) -> StrategyError:
    """One line naming the strategy, its class and the field ``where`` that breaks ``rule``."""
    name: Any = getattr(strategy, "name", None)
    cls = type(strategy).__name__
    who = f"{_SHOWN.repr(name)} ({cls})" if isinstance(name, str) and name and name != cls else cls
    plain = isinstance(value, _SCALAR) or (isinstance(value, tuple | list)
                                           and all(isinstance(v, _SCALAR) for v in value))
    shown = _SHOWN.repr(value) if plain else f"a {type(value).__name__}"
    return StrategyError(Wording("{strategy} {who}: {where} {rule}, not {value}", {"strategy": "strategy"},
                                 who=who, where=where, rule=rule, value=shown))


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def checked_strategy(strategy: Strategy) -> Strategy:
    """``strategy`` when a replay can use it: a non-empty ``name``, ``checks`` among :data:`CHECK_KINDS` (none
    for a strategy that never compacts),
    a boolean ``counts_bytes`` and its own ``compact``; otherwise a :class:`StrategyError` naming the field."""
    name: Any = strategy.name
    if not isinstance(name, str) or not name.strip():
        raise _invalid(strategy, "name", "must be a non-empty string", name)
    checks: Any = strategy.checks
    kinds = ", ".join(map(repr, CHECK_KINDS))
    if not isinstance(checks, tuple | list | set | frozenset):  # (none: a strategy that never compacts)
        raise _invalid(strategy, "checks", f"must be a tuple of check points among {kinds}", checks)
    for check in checks:
        if check not in CHECK_KINDS:
            close = difflib.get_close_matches(check, CHECK_KINDS, 1) if isinstance(check, str) else []
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise _invalid(strategy, "checks", f"must name check points among {kinds}{hint}", checks)
    counts: Any = strategy.counts_bytes
    if not isinstance(counts, bool):
        raise _invalid(strategy, "counts_bytes", "must be True or False", counts)
    if strategy.continuous is True:
        if type(strategy).edit is Strategy.edit:
            raise _invalid(strategy, "edit", "must be defined by a continuous strategy (the method that returns "
                           "the items it replaces)", None)
    elif not isinstance(strategy, PiStrategy) and type(strategy).compact is Strategy.compact:
        raise _invalid(strategy, "compact", "must be defined (the method that returns an Outcome)", None)
    return strategy


def checked_threshold(strategy: Strategy, context_window: int, settings: CompactionSettings) -> int:
    """``strategy.threshold(context_window, settings)`` when it is a whole number (below 0 when the reserve is
    larger than the window, as Pi's is); otherwise a :class:`StrategyError`."""
    value: Any = strategy.threshold(context_window, settings)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid(strategy, "threshold()", "must return a whole number of tokens", value)
    return value


def checked_outcome(strategy: Strategy, outcome: Any) -> Outcome | None:
    """What ``strategy.compact`` returned, when a replay can take it (see the module docstring); otherwise a
    :class:`StrategyError` naming the field."""
    if outcome is None:
        return None
    if not isinstance(outcome, Outcome):
        raise _invalid(strategy, "compact()", "must return an Outcome or None", outcome)
    items: Any = outcome.items
    if not isinstance(items, list | tuple):
        raise _invalid(strategy, "Outcome.items", "must be a list of ContextItem", items)
    for k, item in enumerate(items):
        _check_item(strategy, f"Outcome.items[{k}]", item)
    summary: Any = outcome.summary
    if summary is not None and not isinstance(summary, str):
        raise _invalid(strategy, "Outcome.summary", "must be a string or None", summary)
    for name in ("replaced", "masked"):
        ids = getattr(outcome, name)
        if not isinstance(ids, list | tuple):
            raise _invalid(strategy, f"Outcome.{name}", "must be a list of entry ids", ids)
    truncated: Any = outcome.truncated
    if truncated is not None and not (isinstance(truncated, tuple | list) and len(truncated) == 2
                                      and _whole(truncated[1])):
        raise _invalid(strategy, "Outcome.truncated", "must be None or (entry id, tokens kept ≥ 0)", truncated)
    return outcome


def checked_edit(strategy: Strategy, changes: Any, count: int) -> dict[int, ContextItem]:
    """What a continuous ``strategy.edit`` returned, when a replay can take it: a dict from indexes of the
    ``count`` items to ``ContextItem`` s; otherwise a :class:`StrategyError` naming the field."""
    if changes is None:
        return {}
    if not isinstance(changes, dict):
        raise _invalid(strategy, "edit()", "must return a dict of index → ContextItem", changes)
    for index, item in changes.items():
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise _invalid(strategy, "edit()", f"must key its items by an index from 0 to {count - 1}", index)
        _check_item(strategy, f"edit()[{index}]", item)
    return changes


def _check_item(strategy: Strategy, where: str, item: Any) -> None:
    if not isinstance(item, ContextItem):
        raise _invalid(strategy, where, "must be a ContextItem", item)
    if not _whole(item.tokens):
        raise _invalid(strategy, f"{where}.tokens", "must be a whole number ≥ 0", item.tokens)
    if not isinstance(item.message, dict):
        raise _invalid(strategy, f"{where}.message", "must be a dict (a Pi message)", item.message)
    if item.kind not in ITEM_KINDS:
        raise _invalid(strategy, f"{where}.kind", f"must be one of {', '.join(map(repr, ITEM_KINDS))}", item.kind)


def ids_of(items: Sequence[ContextItem]) -> list[Any]:
    """The entry ids of ``items`` in order, each once, strategies' own messages left out."""
    out: list[Any] = []
    for item in items:
        if item.entry_id is not None and (not out or out[-1] != item.entry_id):
            out.append(item.entry_id)
    return out
