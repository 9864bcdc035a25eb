"""pikit's model facts against Pi's own ModelRuntime (Pi 1.6.0 from npm, run offline)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pikit.llm import model_catalog, usage_with_cost
from pikit.llm._modelsjson import strip_json_comments
from tests.llm.conftest import PI_VERSION

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).with_name("pi_models.mjs")
REPO = Path(__file__).resolve().parents[2]


def _pi(install: Path, agent: Path, usages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """What Pi resolves with the agent folder ``agent`` (run on a copy: Pi writes its stores)."""
    copy = agent.parent / f"{agent.name}-for-pi"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(agent, copy)
    env = {**os.environ, "PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(copy)}
    out = subprocess.run(["node", str(SCRIPT), str(copy), json.dumps(usages or [])], cwd=install, env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _number(value: float | None) -> float:
    return math.inf if value is None else float(value)  # (JSON.stringify writes Infinity as null)


def _cost(cost: dict[str, Any] | None) -> dict[str, Any] | None:
    if cost is None:
        return None
    rates = ("input", "output", "cacheRead", "cacheWrite")
    tiers = [{key: _number(tier[key]) for key in ("inputTokensAbove", *rates)} for tier in cost.get("tiers", [])]
    return {**{key: float(cost[key]) for key in rates}, "tiers": tiers}


def _pikit(agent: Path) -> list[dict[str, Any]]:
    return [{"provider": info.provider, "id": info.model_id, "type": info.type, "contextWindow": info.context_window,
             "maxTokens": info.max_output_tokens, "cost": _cost(info.pricing.to_json() if info.pricing else None)}
            for info in model_catalog(agent)]


def _normalized(models: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**model, "cost": _cost(model["cost"])} for model in models]


def _compare(install: Path, agent: Path) -> list[dict[str, Any]]:
    theirs = _normalized(_pi(install, agent)["models"])
    ours = _pikit(agent)
    assert len(ours) == len(theirs)
    for mine, pis in zip(ours, theirs, strict=True):
        assert mine == pis
    return ours


def test_every_catalog_model_as_pi_resolves_it(pi_install: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    ours = _compare(pi_install, agent)
    assert len(ours) == 1853
    sol = next(m for m in ours if (m["provider"], m["id"]) == ("openai-codex", "gpt-6.2-sol"))
    assert sol["contextWindow"] == 500_000


def test_models_json_and_models_store_as_pi_resolves_them(pi_install: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps({"providers": {
        "local": {"baseUrl": "http://localhost:8080/v1", "api": "openai-completions", "apiKey": "none",
                  "models": [{"id": "small"},
                             {"id": "big", "contextWindow": 262_144, "maxTokens": 32_768,
                              "cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 0,
                                       "tiers": [{"inputTokensAbove": 100_000, "input": 2, "output": 4,
                                                  "cacheRead": 0.2, "cacheWrite": 0}]}}]},
        "anthropic": {"modelOverrides": {"claude-opus-4-5": {"contextWindow": 1_000_000, "cost": {"input": 4}},
                                         "claude-haiku-4-5": {"maxTokens": 1000}},
                      "models": [{"id": "claude-opus-4-1", "name": "mine"}, {"id": "claude-house"}]},
    }}))
    stored = {"id": "claude-sonnet-4-5", "provider": "anthropic", "name": "stored", "api": "anthropic-messages",
              "baseUrl": "https://api.anthropic.com", "input": ["text"], "contextWindow": 333_000, "maxTokens": 999,
              "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}
    (agent / "models-store.json").write_text(json.dumps({
        "anthropic": {"lastModified": 1_900_000_000_000, "checkedAt": 1_900_000_000_000,
                      "models": [stored, {**stored, "id": "claude-from-store"}]},
        "openai": {"lastModified": 1_000, "checkedAt": 1_000, "models": [{**stored, "provider": "openai"}]},
    }))
    ours = {(m["provider"], m["id"]): m for m in _compare(pi_install, agent)}
    assert ours["anthropic", "claude-sonnet-4-5"]["contextWindow"] == 333_000
    assert ours["anthropic", "claude-opus-4-5"]["contextWindow"] == 1_000_000
    assert ours["local", "small"]["contextWindow"] == 128_000
    assert ("openai", "claude-sonnet-4-5") not in ours


def test_tiered_costs_as_pi_computes_them(pi_install: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    usages = [{"provider": "openai-codex", "id": "gpt-6.2-sol", "usage": usage} for usage in (
        {"input": 1_000, "output": 500},
        {"input": 200_000, "output": 1_000, "cacheRead": 72_000},
        {"input": 200_000, "output": 1_000, "cacheRead": 72_001, "cacheWrite": 10},
        {"input": 500_000, "output": 20_000, "cacheWrite": 4_000, "cacheWrite1h": 1_000},
    )] + [{"provider": "anthropic", "id": "claude-opus-4-5", "usage": {"input": 10, "output": 3, "cacheRead": 7,
                                                                          "cacheWrite": 20, "cacheWrite1h": 5}}]
    catalog = model_catalog(agent)
    for case in _pi(pi_install, agent, usages)["costs"]:
        info = catalog.get(case["provider"], case["id"])
        assert info is not None
        ours = usage_with_cost(case["usage"], info.pricing)["cost"]
        theirs = case["cost"]
        for key in ("input", "output", "cacheRead", "cacheWrite", "total"):
            assert ours[key] == pytest.approx(theirs[key], rel=1e-12, abs=1e-15), (case, key)


@pytest.mark.parametrize("config", [
    {"providers": {"anthropic": {"modelOverrides": {"claude-opus-4-5": {"contextWindow": -5}}}}},  # refused whole
    {"providers": {"anthropic": {"name": "a name only"}, "fresh": {"models": [{"id": "m"}]},  # not composable
                   "openai": {"headers": {}, "modelOverrides": {"gpt-6.2-sol": {"contextWindow": 9}}}}},
])
def test_what_pi_ignores_pikit_ignores(pi_install: Path, tmp_path: Path, config: dict[str, Any]) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps(config))
    _compare(pi_install, agent)
    assert model_catalog(agent).problems


RATES = '"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0'
TIER = '"tiers": [{"inputTokensAbove": %s, "input": 9, "output": 9, "cacheRead": 0, "cacheWrite": 0}]'


def _store(threshold: str) -> str:
    return ('{"anthropic": {"lastModified": 1900000000000, "checkedAt": 1, "models": [{"id": "far", '
            '"provider": "anthropic", "contextWindow": 1000, "maxTokens": 10, "cost": {' + RATES + ", "
            + TIER % threshold + "}}]}}")


def _custom(threshold: str) -> str:
    return ('{"providers": {"local": {"baseUrl": "http://x", "api": "openai-completions", "models": [{"id": "big", '
            '"cost": {' + RATES + ", " + TIER % threshold + "}}]}}}")


@pytest.mark.parametrize(("name", "text", "used"), [
    ("models-store.json", _store("NaN"), False),  # JSON.parse refuses NaN: the store is not read
    ("models-store.json", _store("1e999"), True),  # Infinity: the model is kept, its tier never applies
    ("models.json", _custom("Infinity"), False),  # not JSON
    ("models.json", _custom("1e999"), False),  # JSON, but TypeBox's numbers are finite
], ids=["store-nan", "store-1e999", "models-json-infinity", "models-json-1e999"])
def test_non_finite_numbers_as_pi_reads_them(pi_install: Path, tmp_path: Path, name: str, text: str,
                                             used: bool) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / name).write_text(text, encoding="utf-8")
    ours = {(m["provider"], m["id"]) for m in _compare(pi_install, agent)}
    assert (("anthropic", "far") in ours or ("local", "big") in ours) == used
    assert bool(model_catalog(agent).problems) != used
    if used:
        usage = {"input": 10**9, "output": 1}
        [theirs] = _pi(pi_install, agent, [{"provider": "anthropic", "id": "far", "usage": usage}])["costs"]
        info = model_catalog(agent).get("anthropic", "far")
        assert info is not None
        assert usage_with_cost(usage, info.pricing)["cost"]["total"] == pytest.approx(theirs["cost"]["total"])
        assert theirs["cost"]["input"] == pytest.approx(1000.0)  # the base price: no tier applied


_STRIP = """
import { join } from "node:path";
import { pathToFileURL } from "node:url";
const url = pathToFileURL(join(process.cwd(), "node_modules/@earendil-works/pi-coding-agent/dist/utils/json.js"));
const { stripJsonComments } = await import(url.href);
let input = "";
for await (const chunk of process.stdin) input += chunk;
process.stdout.write(JSON.stringify(JSON.parse(input).map(stripJsonComments)));
"""


def test_comments_are_stripped_as_pi_strips_them(pi_install: Path) -> None:
    """Random texts of the characters that matter (quotes, backslashes, slashes, commas, brackets, JavaScript's
    line terminators and whitespace) through Pi's stripJsonComments and pikit's."""
    pieces = ['"', "\\", "/", "/", ",", "}", "]", " ", "\n", "\r", "\u2028", "\u2029", "\ufeff", "\x1c", "\x85",
              "\u00a0", "a", "{", "[", ":", "1", "\t"]
    chance = random.Random(31)
    texts = ["".join(chance.choice(pieces) for _ in range(chance.randint(0, 40))) for _ in range(5_000)]
    out = subprocess.run(["node", "--input-type=module", "-e", _STRIP], cwd=pi_install, input=json.dumps(texts),
                         capture_output=True, text=True, timeout=120, check=True)
    theirs = json.loads(out.stdout)
    assert [strip_json_comments(text) for text in texts] == theirs


def test_the_snapshot_is_what_the_generator_writes_for_pi_1_6_0(pi_install: Path) -> None:
    spec = importlib.util.spec_from_file_location("generate", REPO / "data" / "model_catalog" / "generate.py")
    assert spec is not None and spec.loader is not None
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    catalog = generate.catalog_of(pi_install, PI_VERSION)
    assert catalog["pi"] == catalog["piAi"] == PI_VERSION
    written = pi_install / "snapshot.json.gz"
    generate.write(catalog, written)
    assert written.read_bytes() == (REPO / "pikit" / "llm" / "_catalog.json.gz").read_bytes()
