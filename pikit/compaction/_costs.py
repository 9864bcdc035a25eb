"""What a replay costs: every request of the branch and the summarizer's calls, priced by a model's catalog entry.

A replay meters one *request* per assistant message of the branch (aborted and failed ones
included: they were sent, and billed for their input): its input is the context the replay
measures just before the message, split by the cache model of
``RequestMeter`` into cache reads and fresh input. The price of
each request follows the tier its whole input falls in, as Pi's ``calculateCost`` does:

- **cache reads** at the catalog's cache-read price;
- **fresh input** is written to the prefix cache: at the catalog's cache-write price when the
  model has one (Anthropic's models: a premium over input), else at the input price (OpenAI's
  and others, whose caches charge no write);
- **output**: the output tokens the recorded turn reports, at the output price. A replayed
  request is the recorded one until the first simulated compaction; after it the context
  differs, and the model's answer to it is unknown: the recorded turn's output stands for it;
- **the summarizer**: its input (reported, or Pi's chars/4) at the input price, and its output
  (reported, or chars/4 of the summary) at the output price.

:data:`LEFT_OUT` lists what the figures leave out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .._format.entry import Entry
    from ._summarizer import SummaryResult

__all__ = ["LEFT_OUT", "PricingLike", "RequestMeter", "RunCost", "answer_tokens", "price_run", "recorded_output"]

#: What a replay's cost leaves out, one phrase each (``cost.leftOut`` in ``pikit simulate --json``).
LEFT_OUT = (
    "a changed answer: after a simulated compaction each request's output is the recorded turn's",
    "requests the agent would have added or saved after a different context (retries, re-reads)",
    "cache expiry: a prefix stays cached however long the gap between two requests",
    "one-hour cache writes and provider-specific minimum cacheable sizes",
    "tool declarations and a system prompt the session file does not hold, once a simulated compaction "
    "changed the context (sizes are then Pi's estimate of what the context holds)",
)


class Run(Protocol):
    """What the meter and the price need of a replay's result (a ``SimulationResult`` is one)."""

    requests: list[tuple[int, int]]
    outputs: list[int]
    aborted_requests: int
    summarizer_input_tokens: int
    summarizer_output_tokens: int


class PricingLike(Protocol):
    """What a replay needs of a model's prices (:class:`pikit.llm.Pricing` is one)."""

    def rates(self, input_tokens: float) -> Any:
        """The prices of a request with ``input_tokens`` of input: an object with ``input``, ``output``,
        ``cache_read`` and ``cache_write`` ($ per million tokens)."""
        ...


@dataclass(frozen=True)
class RunCost:
    """A replay's cost in US dollars, by part (see the module docstring)."""

    input: float  # fresh input not written to a cache (a model without a cache-write price)
    cache_write: float  # fresh input written to the cache, at the cache-write price
    cache_read: float
    output: float
    summarizer: float  # the summarizer's input and output

    @property
    def requests(self) -> float:
        """The requests' input: fresh, written and read."""
        return self.input + self.cache_write + self.cache_read

    @property
    def total(self) -> float:
        """Everything counted."""
        return self.requests + self.output + self.summarizer

    def to_record(self) -> dict[str, Any]:
        """``pikit simulate --json``'s ``cost``: ``input`` (the requests' input, as before), its parts,
        ``output``, ``summarizer``, ``total`` and ``leftOut``."""
        return {"input": round(self.requests, 9), "freshInput": round(self.input, 9),
                "cacheWrite": round(self.cache_write, 9), "cacheRead": round(self.cache_read, 9),
                "output": round(self.output, 9), "summarizer": round(self.summarizer, 9),
                "total": round(self.total, 9), "leftOut": list(LEFT_OUT)}


def recorded_output(message: Mapping[str, Any]) -> int:
    """The output tokens an assistant message's usage records (0 when it records none)."""
    usage = message.get("usage")
    output = usage.get("output") if isinstance(usage, Mapping) else None
    return output if isinstance(output, int) and not isinstance(output, bool) and output > 0 else 0


def answer_tokens(answer: SummaryResult) -> int:
    """A summary's output tokens: reported by the summarizer, else Pi's chars/4 of its text."""
    reported = recorded_output({"usage": answer.usage}) if answer.usage else 0
    return reported or -(-len(answer.text) // 4)


class RequestMeter:
    """The input of each model request of a replay and the part a prefix cache would read.

    A *request* is the model call that produced an assistant message; its input is the context
    size the replay measures just before that message is added (the size after the previous
    check, and any compaction there, plus the messages since). Cache model: the prefix the
    previous request sent is a cache read, as long as nothing in it changed; a compaction or a
    mask rewrites the context from its first changed message (:meth:`rewrite`), and only what
    comes before that (the system prompt at least) is still read from the cache. The first
    request reads nothing.
    """

    def __init__(self, result: Run) -> None:
        self.result = result
        self.stable: int | None = None  # tokens of the current context a cache still holds

    def request(self, size: int, entry: Entry) -> None:
        """A request of ``size`` input tokens, the one that produced ``entry``'s assistant message (its
        recorded output tokens, and whether it was aborted or failed)."""
        size = max(size, 0)
        cached = 0 if self.stable is None else min(self.stable, size)
        self.result.requests.append((size, cached))
        message = entry.message if isinstance(entry.message, dict) else {}
        self.result.outputs.append(recorded_output(message))
        if message.get("stopReason") in ("aborted", "error"):
            self.result.aborted_requests += 1
        self.stable = size

    def rewrite(self, prefix: int) -> None:
        """The context changed after its first ``prefix`` tokens."""
        if self.stable is not None:
            self.stable = min(self.stable, max(prefix, 0))


def price_run(run: Run, pricing: PricingLike) -> RunCost:
    """The cost of ``run`` (see the module docstring)."""
    fresh = written = read = output = 0.0
    for (size, cached), out in zip(run.requests, run.outputs, strict=True):
        rates = pricing.rates(size)
        if rates.cache_write > 0:
            written += (size - cached) * rates.cache_write
        else:
            fresh += (size - cached) * rates.input
        read += cached * rates.cache_read
        output += out * rates.output
    tokens = run.summarizer_input_tokens
    rates = pricing.rates(tokens)
    summarizer = tokens * rates.input + run.summarizer_output_tokens * rates.output
    return RunCost(fresh / 1e6, written / 1e6, read / 1e6, output / 1e6, summarizer / 1e6)
