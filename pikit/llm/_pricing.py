"""Prices of a model (US dollars per million tokens) and the cost of one request, as Pi computes it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pikit.compaction._summarizer import empty_usage

__all__ = ["CostTier", "Pricing", "usage_with_cost"]


@dataclass(frozen=True)
class CostTier:
    """Prices that replace the base ones for a request whose input exceeds ``input_tokens_above``."""

    input_tokens_above: float
    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0

    def to_json(self) -> dict[str, float]:
        """Pi's shape: ``{"inputTokensAbove", "input", "output", "cacheRead", "cacheWrite"}``."""
        return {"inputTokensAbove": self.input_tokens_above, "input": self.input, "output": self.output,
                "cacheRead": self.cache_read, "cacheWrite": self.cache_write}


@dataclass(frozen=True)
class Pricing:
    """A model's prices in US dollars per million tokens, with Pi's request-wide tiers."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0
    tiers: tuple[CostTier, ...] = ()

    def rates(self, input_tokens: float) -> Pricing | CostTier:
        """The prices of a request with ``input_tokens`` of input (input + cache read + cache write).

        Like Pi's ``calculateCost``: the tier with the highest ``inputTokensAbove`` that the input
        exceeds, else the base prices.
        """
        rates: Pricing | CostTier = self
        matched = -1.0
        for tier in self.tiers:
            if input_tokens > tier.input_tokens_above and tier.input_tokens_above > matched:
                rates, matched = tier, tier.input_tokens_above
        return rates

    def to_json(self) -> dict[str, Any]:
        """Pi's ``cost`` shape: ``{"input", "output", "cacheRead", "cacheWrite", "tiers": [...]}``."""
        return {"input": self.input, "output": self.output, "cacheRead": self.cache_read,
                "cacheWrite": self.cache_write, "tiers": [tier.to_json() for tier in self.tiers]}


def usage_with_cost(usage: Mapping[str, Any], pricing: Pricing | None) -> dict[str, Any]:
    """A copy of ``usage`` (Pi's shape) with its ``cost`` computed from ``pricing`` as Pi does.

    The tier is chosen by the request's whole input (``input + cacheRead + cacheWrite``); a
    ``cacheWrite1h`` count (Anthropic's one-hour cache writes) is priced at twice the input
    price. Without pricing (the model is unknown) the costs stay 0, since Pi's usage shape has
    numbers only: the caller knows the cost is unknown from ``pricing`` being ``None`` and says so.
    """
    out = empty_usage()
    for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
        out[key] = int(usage.get(key, 0) or 0)
    cost = out["cost"]
    if pricing is None:
        return out
    rates = pricing.rates(out["input"] + out["cacheRead"] + out["cacheWrite"])
    long_write = int(usage.get("cacheWrite1h", 0) or 0)
    short_write = out["cacheWrite"] - long_write
    cost["input"] = rates.input / 1e6 * out["input"]
    cost["output"] = rates.output / 1e6 * out["output"]
    cost["cacheRead"] = rates.cache_read / 1e6 * out["cacheRead"]
    cost["cacheWrite"] = (rates.cache_write * short_write + rates.input * 2 * long_write) / 1e6
    cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    return out
