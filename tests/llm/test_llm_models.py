"""pikit.llm._models: the model table and lookup_model."""

from __future__ import annotations

import pytest

from pikit.llm import DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT_TOKENS, MODELS, ModelInfo, Pricing, lookup_model
from pikit.llm._models import usage_with_cost


def test_table_is_well_formed() -> None:
    assert len(MODELS) >= 12
    assert {info.provider for info in MODELS.values()} >= {"openai", "anthropic", "google"}
    for key, info in MODELS.items():
        assert key == f"{info.provider}/{info.model_id}" == info.key
        assert info.known
        assert 0 < info.max_output_tokens < info.context_window
    with pytest.raises(TypeError):
        MODELS["x/y"] = MODELS["openai/gpt-4o"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ("openai/gpt-4o", "openai/gpt-4o"),
        ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
        ("gpt-4o-mini", "openai/gpt-4o-mini"),  # bare id
        ("anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5"),  # dated snapshot
        ("openai/gpt-4o-2024-08-06", "openai/gpt-4o"),
        ("anthropic/claude-haiku-4-5-latest", "anthropic/claude-haiku-4-5"),
        ("openrouter/anthropic/claude-haiku-4-5", "anthropic/claude-haiku-4-5"),  # router-style id
        ("openrouter/gpt-4o", "openai/gpt-4o"),  # another provider serving a known id
        ("google/gemini-2.5-pro", "google/gemini-2.5-pro"),
    ],
)
def test_lookup(spec: str, key: str) -> None:
    assert lookup_model(spec) is MODELS[key]


def test_well_known_budgets() -> None:
    assert lookup_model("openai/gpt-4o").context_window == 128_000
    assert lookup_model("openai/gpt-4o").max_output_tokens == 16_384
    assert lookup_model("anthropic/claude-sonnet-4-5").context_window == 200_000
    assert lookup_model("anthropic/claude-sonnet-4-5").max_output_tokens == 64_000


@pytest.mark.parametrize(
    ("spec", "provider", "model_id"),
    [
        ("ollama/llama3.1:8b", "ollama", "llama3.1:8b"),
        ("mystery", "unknown", "mystery"),
        ("openai/gpt-99", "openai", "gpt-99"),
    ],
)
def test_unknown_models_get_the_documented_default(spec: str, provider: str, model_id: str) -> None:
    info = lookup_model(spec)
    assert info == ModelInfo(provider, model_id, 128_000, 8_192, None, known=False)
    assert (DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT_TOKENS) == (128_000, 8_192)


def test_usage_with_cost() -> None:
    usage = {
        "input": 2_000_000,
        "output": 1_000_000,
        "cacheRead": 500_000,
        "cacheWrite": 100_000,
        "totalTokens": 3_600_000,
    }
    priced = usage_with_cost(usage, Pricing(input=1.0, output=2.0, cache_read=0.5, cache_write=4.0))
    assert priced["cost"] == {
        "input": 2.0,
        "output": 2.0,
        "cacheRead": 0.25,
        "cacheWrite": 0.4,
        "total": 4.65,
    }
    assert priced["totalTokens"] == 3_600_000
    unpriced = usage_with_cost(usage, None)
    assert unpriced["cost"]["total"] == 0.0
    assert "cost" not in usage  # the argument is not modified
