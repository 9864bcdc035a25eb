"""The summarizer protocol and the values that cross it.

A *summarizer* turns a piece of a Pi session (already serialized as plain text) into a
structured Markdown summary. pikit ships an embedded offline one and HTTP clients
(:mod:`pikit.llm`); the compaction code in the core only depends on the protocol defined
here, so any object with a ``name`` and a ``summarize`` method will do.

Usage follows Pi's shape exactly (keys in this order)::

    {"input": int, "output": int, "cacheRead": int, "cacheWrite": int, "totalTokens": int,
     "cost": {"input": float, "output": float, "cacheRead": float, "cacheWrite": float,
              "total": float}}

``input`` counts the prompt tokens that were *not* read from a cache, so
``totalTokens = input + output + cacheRead + cacheWrite``. Costs are in US dollars and are 0
when unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import FrozenInstanceError, dataclass
from typing import Any, Literal, Protocol, get_args, runtime_checkable

__all__ = [
    "SUMMARY_FORMATS",
    "SUMMARY_KINDS",
    "Summarizer",
    "SummaryKind",
    "SummaryRequest",
    "SummaryResult",
    "combine_usage",
    "empty_usage",
]

SummaryKind = Literal["history", "turn_prefix", "branch"]
"""What is being summarized.

- ``"history"``: the messages a compaction replaces (updating ``previous_summary`` if given);
- ``"turn_prefix"``: the beginning of a turn that was split by the cut point (its end is kept);
- ``"branch"``: a branch the user is leaving.
"""

SUMMARY_KINDS: tuple[str, ...] = get_args(SummaryKind)
"""The valid values of :data:`SummaryKind`, in declaration order."""

SUMMARY_FORMATS: tuple[str, ...] = ("pi", "handoff")
"""The summary layouts a request may ask for.

- ``"pi"``: Pi's structured sections (Goal, Constraints & Preferences, Progress, Key Decisions,
  Next Steps, Critical Context);
- ``"handoff"``: Codex's handoff summary (active task, progress so far, next steps, key context,
  constraints and preferences, completed tasks), asked for by the ``codex-inline`` strategy.
"""

_TOKEN_KEYS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
_COST_KEYS = ("input", "output", "cacheRead", "cacheWrite", "total")


class SummaryRequest:
    """One summarization job (immutable).

    Attributes:
        kind: what is summarized (see :data:`SummaryKind`).
        conversation_text: the conversation, serialized as plain text. It may be given as a
            function that makes it: it is then made when first read, once, so a summarizer that
            reads only ``messages`` (the offline one) never pays for the serialization.
        messages: the raw Pi AgentMessages behind ``conversation_text``; offline summarizers
            use them, HTTP summarizers ignore them.
        previous_summary: for ``kind="history"``, the summary of an earlier compaction that
            the model must update rather than start over.
        instructions: optional extra focus text supplied by the user.
        format: the layout wanted, one of :data:`SUMMARY_FORMATS` (``"pi"`` by default).

    Raises:
        ValueError: ``kind`` is not one of :data:`SUMMARY_KINDS`, or ``format`` not one of
            :data:`SUMMARY_FORMATS` (a programming error).
    """

    __slots__ = ("_text", "format", "instructions", "kind", "messages", "previous_summary")
    _FIELDS = ("kind", "conversation_text", "messages", "previous_summary", "instructions", "format")

    kind: SummaryKind
    _text: str | Callable[[], str]
    messages: Sequence[Mapping[str, Any]]
    previous_summary: str | None
    instructions: str | None
    format: str

    def __init__(self, kind: SummaryKind, conversation_text: str | Callable[[], str],
                 messages: Sequence[Mapping[str, Any]] = (), previous_summary: str | None = None,
                 instructions: str | None = None, format: str = "pi") -> None:
        if kind not in SUMMARY_KINDS:
            raise ValueError(f"unknown summary kind {kind!r}; expected one of {', '.join(SUMMARY_KINDS)}")
        if format not in SUMMARY_FORMATS:
            raise ValueError(f"unknown summary format {format!r}; expected one of {', '.join(SUMMARY_FORMATS)}")
        for name, value in (("kind", kind), ("_text", conversation_text), ("messages", messages),
                            ("previous_summary", previous_summary), ("instructions", instructions),
                            ("format", format)):
            object.__setattr__(self, name, value)

    @property
    def conversation_text(self) -> str:
        """The conversation as plain text (made on first read when it was given as a function)."""
        text = self._text
        if callable(text):
            text = text()
            object.__setattr__(self, "_text", text)
        return text

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SummaryRequest):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._FIELDS)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, name) for name in self._FIELDS))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled (and copied) with its text made."""
        return SummaryRequest, tuple(getattr(self, name) for name in self._FIELDS)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"SummaryRequest({fields})"


@dataclass(frozen=True)
class SummaryResult:
    """What a summarizer produced.

    Attributes:
        text: the summary (Markdown), never empty.
        usage: the tokens and cost of the call(s) in Pi's usage shape, or ``None`` if unknown.
        model: ``"provider/modelId"`` of the model that answered, when known.
    """

    text: str
    usage: dict[str, Any] | None
    model: str | None = None


@runtime_checkable
class Summarizer(Protocol):
    """Anything that can write a summary: a ``name`` and a ``summarize`` method.

    Implementations raise :class:`pikit.errors.SummarizerError` (one line, no secrets) for
    every failure; they never return an empty or truncated summary.
    """

    name: str

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """Summarize ``request`` and return the summary with its usage."""
        ...


def empty_usage() -> dict[str, Any]:
    """A usage record with every count and cost at zero, in Pi's key order."""
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.0},
    }


def _number(value: Any, kind: type) -> Any:
    """``value`` as ``kind`` (int or float) when it is a real number, else 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return kind(0)
    return kind(value)


def combine_usage(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Add two usage records field by field (``None`` + x = x; ``None`` + ``None`` = ``None``).

    The result is a new dict in Pi's key order; missing or non-numeric fields count as 0.
    """
    if a is None and b is None:
        return None
    out = empty_usage()
    for usage in (a, b):
        if usage is None:
            continue
        for key in _TOKEN_KEYS:
            out[key] += _number(usage.get(key), int)
        cost = usage.get("cost")
        if isinstance(cost, Mapping):
            for key in _COST_KEYS:
                out["cost"][key] += _number(cost.get(key), float)
    return out
