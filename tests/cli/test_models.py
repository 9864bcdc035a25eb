"""``pikit models`` and the window lines of ``context`` and ``compact --dry-run``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.procs import in_agent as _run

REPO = Path(__file__).resolve().parents[2]
QUICK = REPO / "data" / "sample_sessions" / "quick-tour.jsonl"


def test_one_model_as_json(agent: Path) -> None:
    code, out, err = _run(agent, "models", "openai-codex/gpt-6.2-sol", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "provider": "openai-codex", "id": "gpt-6.2-sol", "contextWindow": 500000, "maxTokens": 128000,
        "cost": {"input": 2, "output": 10, "cacheRead": 0.1, "cacheWrite": 2.5,
                 "tiers": [{"inputTokensAbove": 272000, "input": 4, "output": 15, "cacheRead": 0.2, "cacheWrite": 5}]},
        "source": "catalog pi 1.6.0"}


def test_a_query_filters_and_an_unknown_model_is_one_line(agent: Path) -> None:
    code, out, _ = _run(agent, "models", "OPUS-4-5", "--json")
    listing = json.loads(out)
    assert code == 0 and listing["catalog"] == "catalog pi 1.6.0" and listing["problems"] == []
    keys = [f"{m['provider']}/{m['id']}" for m in listing["models"]]
    assert "anthropic/claude-opus-4-5" in keys and all("opus-4-5" in key for key in keys)
    code, out, err = _run(agent, "models", "acme/mystery-1")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert err.startswith("pikit: error: unknown model acme/mystery-1")


def test_models_json_and_agent_dir(agent: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "models.json").write_text(json.dumps({"providers": {"local": {
        "baseUrl": "http://localhost:1/v1", "api": "openai-completions", "models": [{"id": "tiny"}]}}}))
    code, out, _ = _run(agent, "models", "local/tiny", "--agent-dir", str(other), "--json")
    assert code == 0 and json.loads(out)["contextWindow"] == 128000 and json.loads(out)["source"] == "models.json"
    assert _run(agent, "models", "local/tiny")[0] == 1  # not in the default agent folder
    (agent / "models.json").write_text("{broken")
    code, out, err = _run(agent, "models", "anthropic/claude-opus-4-5")
    assert code == 0 and "200,000" in out and "catalog pi 1.6.0" in out
    assert err.count("\n") == 1 and err.startswith("pikit: warning: ") and "is not JSON" in err
    assert (agent / "models.json").read_text() == "{broken"
    code, _, err = _run(agent, "models", "--agent-dir", str(tmp_path / "nope"))
    assert code == 1 and err == f"pikit: error: --agent-dir {tmp_path / 'nope'}: no such folder\n"


def test_context_and_compact_name_the_window_or_say_it_is_unknown(agent: Path) -> None:
    code, out, _ = _run(agent, "context", str(QUICK), "--no-pager", "--limit", "1")
    assert code == 0 and "model anthropic/claude-sonnet-4-5, thinking off; window 200,000 (catalog pi 1.6.0)\n" in out
    unknown = agent / "unknown.jsonl"
    unknown.write_text(QUICK.read_text().replace('"anthropic"', '"acme"').replace("claude-sonnet-4-5", "mystery-1"))
    code, out, _ = _run(agent, "context", str(unknown), "--no-pager", "--limit", "1")
    assert code == 0 and "window unknown: add the model to ~/.pi/agent/models.json" in out
    code, out, _ = _run(agent, "compact", str(unknown), "--dry-run")
    assert code == 0
    assert "  Pi's trigger: window unknown: add the model to ~/.pi/agent/models.json (no threshold)\n" in out
    code, out, _ = _run(agent, "compact", str(QUICK), "--dry-run")
    assert "  Pi's trigger: threshold 183,616 = window 200,000 (catalog pi 1.6.0) − reserveTokens 16,384; " in out
    for argv in (("context", str(unknown), "--no-pager"), ("compact", str(unknown), "--dry-run")):
        assert "128,000" not in _run(agent, *argv)[1]
