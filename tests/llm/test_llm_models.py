"""pikit.llm._models: model facts from the bundled catalogs, models-store.json and models.json."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from pikit.errors import PikitError
from pikit.llm import CostTier, ModelInfo, Pricing, lookup_model, model_catalog, model_window, usage_with_cost
from pikit.llm._models import catalog_source

SNAPSHOT = Path(__file__).resolve().parents[2] / "pikit" / "llm" / "_catalog.json.gz"


def _write(path: Path, value: Any) -> None:
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")


def test_the_snapshot_records_pi_and_its_catalogs() -> None:
    snapshot = json.loads(gzip.decompress(SNAPSHOT.read_bytes()))
    assert (snapshot["pi"], snapshot["piAi"], snapshot["generatedAt"]) == ("1.6.0", "1.6.0", "2026-11-20T10:48:49.496Z")
    assert len(snapshot["providers"]) == 43
    assert catalog_source() == "catalog pi 1.6.0"
    assert SNAPSHOT.stat().st_size < 100_000


def test_catalog_models(agent: Path) -> None:
    opus = lookup_model("anthropic/claude-opus-4-5", agent_dir=agent)
    assert opus == ModelInfo("anthropic", "claude-opus-4-5", "Claude Opus 4.5 (latest)", 200_000, 64_000,
                             Pricing(5, 25, 0.5, 6.25), "catalog pi 1.6.0", "catalog pi 1.6.0")
    sol = lookup_model("openai-codex/gpt-6.2-sol", agent_dir=agent)
    assert sol is not None and sol.context_window == 500_000
    assert sol.pricing is not None and sol.pricing.tiers == (CostTier(272_000, 4, 15, 0.2, 5),)
    # A provider id followed by a model id with slashes of its own; a bare id of one provider only.
    assert lookup_model("openrouter/anthropic/claude-opus-4.5", agent_dir=agent) is not None
    assert lookup_model("claude-opus-4-5", agent_dir=agent) is None  # several providers have it
    only = lookup_model("claude-opus-4-5-20251101", agent_dir=agent)  # anthropic's alone
    assert only is not None and only.provider == "anthropic"


@pytest.mark.parametrize("spec", ["acme/mystery-1", "mystery", "openai/gpt-99", "anthropic/claude-opus-4-5-x", ""])
def test_an_unknown_model_is_unknown(agent: Path, spec: str) -> None:
    assert lookup_model(spec, agent_dir=agent) is None
    window = model_window(spec, agent_dir=agent)
    assert (window.tokens, window.source, window.known) == (None, None, False)
    assert window.describe() == "window unknown: pass --context-window or add the model to ~/.pi/agent/models.json"
    assert window.threshold(16_384) is None


def test_a_window_given_names_its_source(agent: Path) -> None:
    assert model_window("acme/x", given=64_000, agent_dir=agent).describe() == "window 64,000 (--context-window)"
    assert model_window("anthropic/claude-opus-4-5", agent_dir=agent).describe() == "window 200,000 (catalog pi 1.6.0)"


def test_models_json_custom_provider_and_overrides(agent: Path) -> None:
    _write(agent / "models.json", """{
      // Pi strips comments and trailing commas
      "providers": {
        "local": {"baseUrl": "http://localhost:8080/v1", "api": "openai-completions",
                  "models": [{"id": "small"}, {"id": "big", "contextWindow": 262144, "maxTokens": 32768,
                              "cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 0}},]},
        "anthropic": {"modelOverrides": {"claude-opus-4-5": {"contextWindow": 1000000, "cost": {"input": 4}},
                                         "claude-haiku-4-5": {"cost": {"output": 9}}},
                      "models": [{"id": "claude-opus-4-1", "name": "mine"}]}
      }
    }""")
    catalog = model_catalog(agent)
    assert catalog.problems == ()
    small = catalog.get("local", "small")
    assert small is not None
    assert (small.context_window, small.max_output_tokens, small.pricing, small.source) == (
        128_000, 16_384, Pricing(0, 0, 0, 0), "models.json")  # Pi's schema defaults
    big = catalog.get("local", "big")
    assert big is not None and (big.context_window, big.pricing) == (262_144, Pricing(1, 2, 0.1, 0))
    opus = catalog.get("anthropic", "claude-opus-4-5")
    assert opus is not None
    assert (opus.context_window, opus.window_source, opus.source) == (1_000_000, "models.json", "models.json")
    assert opus.pricing == Pricing(4, 25, 0.5, 6.25)  # one price changed, the others kept
    haiku = catalog.get("anthropic", "claude-haiku-4-5")
    assert haiku is not None and (haiku.window_source, haiku.source) == ("catalog pi 1.6.0", "models.json")
    replaced = catalog.get("anthropic", "claude-opus-4-1")  # a custom model replaces the built-in one whole
    assert replaced is not None and (replaced.name, replaced.context_window) == ("mine", 128_000)


@pytest.mark.parametrize(("text", "reason"), [
    ("{not json", "is not JSON"),
    ('{"providers": {"x": {"models": [{"id": "m", "contextWindow": -1}]}}}', "providers.x.models.0.contextWindow"),
    ('{"providers": {"x": {"modelOverrides": {"m": {"cost": {"input": "1"}}}}}}', "modelOverrides.m.cost.input"),
    ("[]", "root: not an object"),
])
def test_a_broken_models_json_is_ignored_with_one_line(agent: Path, text: str, reason: str) -> None:
    _write(agent / "models.json", text)
    catalog = model_catalog(agent)
    assert len(catalog.problems) == 1 and reason in catalog.problems[0] and "\n" not in catalog.problems[0]
    assert catalog.get("anthropic", "claude-opus-4-5") is not None  # the catalogs still stand
    assert (agent / "models.json").read_text() == text  # read only


def test_a_provider_pi_cannot_compose_keeps_its_models(agent: Path) -> None:
    _write(agent / "models.json", {"providers": {
        "anthropic": {"name": "only a name"},  # nothing Pi can apply
        "fresh": {"models": [{"id": "m"}]},  # no api and no baseUrl, and no built-in model to take them from
    }})
    catalog = model_catalog(agent)
    assert len(catalog.problems) == 2
    assert catalog.get("anthropic", "claude-opus-4-5") is not None and catalog.get("fresh", "m") is None


def test_models_store_newer_than_the_catalogs(agent: Path) -> None:
    newer = {"lastModified": 1_900_000_000_000, "checkedAt": 1, "models": [
        {"id": "claude-opus-4-5", "provider": "anthropic", "contextWindow": 300_000, "maxTokens": 1000,
         "cost": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0}},
        {"id": "brand-new", "provider": "anthropic", "contextWindow": 50_000, "maxTokens": 500,
         "cost": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0}}]}
    older = {**newer, "lastModified": 1_000}
    _write(agent / "models-store.json", {"anthropic": newer, "openai": {**older, "models": [
        {**newer["models"][1], "provider": "openai"}]}})
    catalog = model_catalog(agent)
    opus = catalog.get("anthropic", "claude-opus-4-5")
    assert opus is not None and (opus.context_window, opus.source) == (300_000, "models-store.json")
    assert catalog.get("anthropic", "brand-new") is not None
    assert catalog.get("openai", "brand-new") is None  # older than the built-in data: not used


def test_openrouter_takes_its_stored_list_whatever_its_time(agent: Path) -> None:
    _write(agent / "models-store.json", {"openrouter": {"checkedAt": 1, "models": [
        {"id": "only/this", "provider": "openrouter", "contextWindow": 10_000, "maxTokens": 100,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}})
    catalog = model_catalog(agent)
    assert [info.model_id for info in catalog if info.provider == "openrouter"] == ["only/this"]


def test_the_agent_dir_comes_from_the_environment(agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(agent / "models.json", {"providers": {"envprov": {"baseUrl": "http://x", "api": "openai-completions",
                                                              "models": [{"id": "m"}]}}})
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    assert lookup_model("envprov/m") is not None
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent / "elsewhere"))
    assert lookup_model("envprov/m") is None
    with pytest.raises(PikitError, match=r"agent_dir .*elsewhere: no such folder"):
        model_catalog(agent / "elsewhere")


def test_the_catalog_follows_changes_of_models_json(agent: Path) -> None:
    assert model_catalog(agent).get("later", "m") is None
    _write(agent / "models.json", {"providers": {"later": {"baseUrl": "http://x", "api": "a",
                                                            "models": [{"id": "m", "contextWindow": 7}]}}})
    assert model_catalog(agent).get("later", "m") is not None


def test_usage_with_cost_applies_pis_tiers() -> None:
    pricing = Pricing(2, 10, 0.1, 2.5, (CostTier(272_000, 4, 15, 0.2, 5),))
    below = usage_with_cost({"input": 200_000, "output": 1_000, "cacheRead": 72_000, "totalTokens": 0}, pricing)
    assert below["cost"]["input"] == pytest.approx(0.4) and below["cost"]["cacheRead"] == pytest.approx(0.0072)
    above = usage_with_cost({"input": 200_000, "output": 1_000, "cacheRead": 72_001}, pricing)
    assert above["cost"]["input"] == pytest.approx(0.8) and above["cost"]["output"] == pytest.approx(0.015)
    unpriced = usage_with_cost(above, None)
    assert unpriced["cost"]["total"] == 0.0 and unpriced["input"] == 200_000


def test_a_catalog_reads_the_facts_of_the_models_asked_for_only(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from pikit.llm import _models

    read: list[str] = []
    real = _models._info

    def info(provider: str, model: dict[str, object]) -> _models.ModelInfo:
        read.append(f"{provider}/{model['id']}")
        return real(provider, model)

    monkeypatch.setattr(_models, "_info", info)
    catalog = _models.ModelCatalog(tmp_path)
    assert read == []
    spec = "anthropic/claude-sonnet-4-5"
    found = catalog.lookup(spec)
    assert found is not None and read == [spec]
    assert catalog.lookup(spec) is found and read == [spec]  # (read once)
    every = list(catalog)
    assert len(every) > 100 and len(read) == len(every) and found in every
