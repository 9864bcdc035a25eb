"""A small table of well-known models: context window, output budget and list prices.

Keys are ``"provider/modelId"`` (the form Pi uses in ``compaction.modelOverrides``). The HTTP
summarizers ask for ``max_tokens`` = the model's :attr:`ModelInfo.max_output_tokens`, and
fill the ``cost`` part of the usage from :attr:`ModelInfo.pricing` when it is known.

Models that are not in the table get :data:`DEFAULT_CONTEXT_WINDOW` (128000) and
:data:`DEFAULT_MAX_OUTPUT_TOKENS` (8192), and no pricing (cost 0). Prices are the providers'
published list prices in US dollars per million tokens at the time of writing; they are
informative only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pikit.compaction._summarizer import empty_usage

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "MODELS",
    "ModelInfo",
    "Pricing",
    "lookup_model",
    "usage_with_cost",
]

DEFAULT_CONTEXT_WINDOW = 128_000
"""Context window assumed for a model that is not in :data:`MODELS`."""

DEFAULT_MAX_OUTPUT_TOKENS = 8_192
"""Output budget assumed for a model that is not in :data:`MODELS`."""


@dataclass(frozen=True)
class Pricing:
    """List prices in US dollars per million tokens."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0


@dataclass(frozen=True)
class ModelInfo:
    """What pikit knows about one model.

    Attributes:
        provider: Pi's provider name (``"openai"``, ``"anthropic"``, ``"google"``, …).
        model_id: the provider's model id.
        context_window: how many tokens the model accepts (prompt + output).
        max_output_tokens: the most tokens the model may produce in one answer.
        pricing: list prices, or ``None`` when unknown (costs are then 0).
        known: ``False`` for the default returned for a model missing from the table.
    """

    provider: str
    model_id: str
    context_window: int
    max_output_tokens: int
    pricing: Pricing | None = None
    known: bool = True

    @property
    def key(self) -> str:
        """``"provider/modelId"``."""
        return f"{self.provider}/{self.model_id}"


def _entry(provider: str, model_id: str, window: int, output: int, pricing: Pricing | None) -> tuple[str, ModelInfo]:
    info = ModelInfo(provider, model_id, window, output, pricing)
    return info.key, info


MODELS: Mapping[str, ModelInfo] = MappingProxyType(
    dict(
        [
            _entry("openai", "gpt-5", 400_000, 128_000, Pricing(1.25, 10.0, 0.125)),
            _entry("openai", "gpt-5-mini", 400_000, 128_000, Pricing(0.25, 2.0, 0.025)),
            _entry("openai", "gpt-4.1", 1_047_576, 32_768, Pricing(2.0, 8.0, 0.5)),
            _entry("openai", "gpt-4.1-mini", 1_047_576, 32_768, Pricing(0.4, 1.6, 0.1)),
            _entry("openai", "gpt-4o", 128_000, 16_384, Pricing(2.5, 10.0, 1.25)),
            _entry("openai", "gpt-4o-mini", 128_000, 16_384, Pricing(0.15, 0.6, 0.075)),
            _entry("openai", "o3", 200_000, 100_000, Pricing(2.0, 8.0, 0.5)),
            _entry("anthropic", "claude-opus-4-1", 200_000, 32_000, Pricing(15.0, 75.0, 1.5, 18.75)),
            _entry("anthropic", "claude-sonnet-4-5", 200_000, 64_000, Pricing(3.0, 15.0, 0.3, 3.75)),
            _entry("anthropic", "claude-sonnet-4-0", 200_000, 64_000, Pricing(3.0, 15.0, 0.3, 3.75)),
            _entry("anthropic", "claude-haiku-4-5", 200_000, 64_000, Pricing(1.0, 5.0, 0.1, 1.25)),
            _entry("google", "gemini-2.5-pro", 1_048_576, 65_536, None),
            _entry("google", "gemini-2.5-flash", 1_048_576, 65_536, None),
        ]
    )
)
"""The known models, keyed ``"provider/modelId"`` (read-only)."""

# A dated snapshot or a "-latest" alias resolves to its base id:
# claude-sonnet-4-5-20250929 → claude-sonnet-4-5, gpt-4o-2024-08-06 → gpt-4o.
_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


def _by_model_id(model_id: str) -> ModelInfo | None:
    for info in MODELS.values():
        if info.model_id == model_id:
            return info
    return None


def lookup_model(spec: str) -> ModelInfo:
    """Return what is known about ``spec`` (``"provider/modelId"`` or a bare model id).

    Resolution, first match wins:

    1. ``spec`` is a key of :data:`MODELS`;
    2. the model id (``spec`` after its first ``/``, or ``spec`` itself when it has no ``/``)
       is a key of :data:`MODELS` (routers such as OpenRouter use ``provider/model`` ids);
    3. a table entry has that model id, whatever its provider;
    4. steps 1–3 again with a dated-snapshot or ``-latest`` suffix removed;
    5. otherwise a default :class:`ModelInfo` with ``known=False``, a 128000-token window, an
       8192-token output budget and no pricing.
    """
    provider, sep, model_id = spec.partition("/")
    if not sep:
        provider, model_id = "", spec
    for candidate_spec, candidate_id in ((spec, model_id), _strip_snapshot(spec, model_id)):
        if candidate_spec in MODELS:
            return MODELS[candidate_spec]
        if candidate_id in MODELS:
            return MODELS[candidate_id]
        found = _by_model_id(candidate_id)
        if found is not None:
            return found
    return ModelInfo(
        provider or "unknown",
        model_id,
        DEFAULT_CONTEXT_WINDOW,
        DEFAULT_MAX_OUTPUT_TOKENS,
        None,
        known=False,
    )


def _strip_snapshot(spec: str, model_id: str) -> tuple[str, str]:
    return _SNAPSHOT.sub("", spec), _SNAPSHOT.sub("", model_id)


def usage_with_cost(usage: Mapping[str, Any], pricing: Pricing | None) -> dict[str, Any]:
    """A copy of ``usage`` (Pi's shape) with its ``cost`` computed from ``pricing``.

    Without pricing every cost is 0. Token fields are copied as they are.
    """
    out = empty_usage()
    for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
        out[key] = int(usage.get(key, 0) or 0)
    if pricing is not None:
        cost = out["cost"]
        cost["input"] = out["input"] * pricing.input / 1e6
        cost["output"] = out["output"] * pricing.output / 1e6
        cost["cacheRead"] = out["cacheRead"] * pricing.cache_read / 1e6
        cost["cacheWrite"] = out["cacheWrite"] * pricing.cache_write / 1e6
        cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    return out
