"""``pikit simulate --strategy`` and the ``pi`` strategy's parity with a replay without a strategy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit.cli._json import compaction as compaction_json
from pikit.compaction import CompactionSettings, simulate
from pikit.llm import get_summarizer
from tests.cli.test_cli import assert_one_error_line, run
from tests.entries import asst, text, user
from tests.llm.servers import TEST_KEY, FakeLLMServer

SETTINGS = CompactionSettings(True, 3_000, 4_000)
NEW_TOTALS = ("strategy", "requests", "inputTokens", "cachedInputTokens", "freshInputTokens", "outputTokens",
              "abortedRequests", "maskedObservations", "summarizerCalls", "summarizerInputTokens",
              "summarizerOutputTokens", "peakRequestTokens", "overflows", "neverFits", "cost")
NEW_EVENT_KEYS = ("strategy", "compression", "kept", "masked", "truncated")


def _sessions(sample_sessions: Path, shared_sessions: Path) -> list[Path]:
    return sorted(sample_sessions.glob("*.jsonl")) + sorted(shared_sessions.glob("*.jsonl"))


def _today(run_json: dict[str, Any]) -> dict[str, Any]:
    """A ``--strategy pi`` run as a run without a strategy would show it: the new keys left out."""
    out = {k: v for k, v in run_json.items() if k not in ("strategy", "commonGround")}
    out["totals"] = {k: v for k, v in out["totals"].items() if k not in NEW_TOTALS}
    out["events"] = [{k: v for k, v in e.items() if k not in NEW_EVENT_KEYS} for e in out["events"]]
    return out


@pytest.mark.parametrize("sizes", ["usage", "estimate"])
def test_pi_strategy_replays_exactly_as_without_a_strategy(sample_sessions: Path, shared_sessions: Path,
                                                           sizes: str) -> None:
    offline = get_summarizer("offline")
    fired = 0
    for path in _sessions(sample_sessions, shared_sessions):
        session = pikit.load(path)
        if not any(e.type == "message" and e.role == "assistant" for e in session.branch(session.leaf_id)):
            continue  # nothing to replay (a strategy says so; checked below)
        for window in (16_384, 60_000):
            plain = simulate(session, offline, context_window=window, settings=SETTINGS, sizes=sizes)
            as_pi = simulate(session, offline, context_window=window, settings=SETTINGS, sizes=sizes, strategy="pi")
            assert not isinstance(plain, list) and not isinstance(as_pi, list)
            assert _today(compaction_json.replay(as_pi)) == compaction_json.replay(plain), (path.name, window)
            assert [e.summary for e in as_pi.events] == [e.summary for e in plain.events]
            assert len(as_pi.requests) == sum(1 for e in session.branch(session.leaf_id)
                                              if e.type == "message" and e.role == "assistant")
            fired += len(plain.events)
    assert fired > 10  # the comparison covers real compactions


def test_cli_without_strategy_is_unchanged_and_pi_adds_only_keys(capsys: pytest.CaptureFixture[str],
                                                                  sample_sessions: Path) -> None:
    path = sample_sessions / "refactor-auth.jsonl"
    argv = ("simulate", path, "--context-window", "16384", "--reserve-tokens", "3000", "--keep-recent-tokens", "4000",
            "--json")
    code, plain, _ = run(capsys, *argv)
    assert code == 0
    code, with_pi, _ = run(capsys, *argv, "--strategy", "pi")
    assert code == 0
    plain_json, pi_json = json.loads(plain), json.loads(with_pi)
    assert [_today(r) for r in pi_json["runs"]] == plain_json["runs"]
    assert pi_json["runs"][0]["strategy"] == "pi"
    assert set(NEW_TOTALS) <= set(pi_json["runs"][0]["totals"])
    assert pi_json["runs"][0]["events"][0]["kept"][0] == pi_json["runs"][0]["events"][0]["firstKeptEntryId"]


def test_cli_strategies_side_by_side(capsys: pytest.CaptureFixture[str], sample_sessions: Path) -> None:
    path = sample_sessions / "refactor-auth.jsonl"
    argv = ("simulate", path, "--context-window", "16384", "--reserve-tokens", "3000", "--keep-recent-tokens", "4000",
            "--strategy", "pi,codex-inline,mask-at-threshold,truncate", "--keep-turns", "2")
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [r["strategy"] for r in data["runs"]] == ["pi", "codex-inline", "mask-at-threshold", "truncate"]
    codex = data["runs"][1]
    assert codex["totals"]["threshold"] == 16384 * 9 // 10
    assert all(e["strategy"] == "codex-inline" and e["masked"] == [] for e in codex["events"])
    mask = data["runs"][2]
    assert mask["events"] and all(e["masked"] for e in mask["events"]) and mask["totals"]["summarizerCalls"] == 0
    assert data["runs"][0]["totals"]["cost"]["total"] > 0  # the sample's model has Pi's catalog prices
    code, out, err = run(capsys, *argv)
    assert code == 0 and not err
    lines = out.splitlines()
    assert lines[1].split() == ["pi", "codex-inline", "mask-at-threshold", "truncate"]
    assert any(line.startswith("input tokens ") and len(line.split()) == 6 for line in lines)


FRACTION = "expected a fraction of the window (above 0 and at most 1)"


@pytest.mark.parametrize(("flags", "needle"), [
    (("--strategy", "pi,codex"), "unknown --strategy 'codex'; the built-in strategies are pi, pi-percent, "
                                 "none, codex-inline, mask-observations, mask-at-threshold, truncate"),
    (("--strategy", "pi-percent", "--threshold", "1.2"), f"argument --threshold: {FRACTION}"),
    (("--strategy", "pi-percent", "--threshold", "0"), f"argument --threshold: {FRACTION}"),
    (("--strategy", "mask-at-threshold", "--keep-turns", "-2"), "argument --keep-turns: expected a whole number (0 to"),
    (("--strategy", "pi", "--context-window", "9000,10000"), "give one value of --context-window"),
])
def test_cli_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], sample_sessions: Path,
                                   flags: tuple[str, ...], needle: str) -> None:
    argv = ["simulate", str(sample_sessions / "refactor-auth.jsonl")]
    if "--context-window" not in flags:
        argv += ["--context-window", "16384"]
    code, _, err = run(capsys, *argv, *flags)
    assert_one_error_line(code, err, needle)


def test_cli_nothing_to_compact_and_never_fits(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    lonely = tmp_path / "lonely.jsonl"
    lonely.write_text("\n".join(json.dumps(e) for e in [header, user("u1", None, 1, text("hi"))]) + "\n")
    code, _, err = run(capsys, "simulate", lonely, "--context-window", "9000", "--strategy", "truncate")
    assert_one_error_line(code, err, "has no assistant message: there is nothing to compact")
    entries: list[dict[str, Any]] = [header]  # answers too large alone, and no tool output to mask
    for n in range(1, 6):
        entries += [user(f"u{n}", f"a{n - 1}" if n > 1 else None, 2 * n, text("go on")),
                    asst(f"a{n}", f"u{n}", 2 * n + 1, text("z" * 40_000))]
    big = tmp_path / "big.jsonl"
    big.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    code, out, err = run(capsys, "simulate", big, "--context-window", "9000", "--reserve-tokens", "1000",
                         "--strategy", "mask-at-threshold", "--keep-turns", "0")
    assert code == 0
    (line,) = err.strip().splitlines()
    assert line.startswith("pikit: warning: mask-at-threshold never keeps the context under its threshold 8,000")
    assert "up to entry a3 (branch index 5) there was nothing to compact, so after it" in line
    assert "keepRecentTokens" not in line  # (it keeps turns, not Pi's recent tokens)
    assert "never fits" in out


def test_cli_warns_of_a_reserve_as_large_as_the_window_and_says_why_each_run_never_fits(
        capsys: pytest.CaptureFixture[str], sample_sessions: Path) -> None:
    code, _, err = run(capsys, "simulate", sample_sessions / "refactor-auth.jsonl", "--context-window", "16384",
                       "--reserve-tokens", "16384", "--keep-recent-tokens", "20000",
                       "--strategy", "pi,none,truncate")
    assert code == 0
    warning, pi, truncate = err.strip().splitlines()
    assert warning == ("pikit: warning: reserveTokens 16,384 ≥ the context window 16,384: the threshold is not "
                       "positive, so Pi's compaction trigger fires after every assistant message (--reserve-tokens "
                       "sets it)")
    assert pi.startswith("pikit: warning: pi never keeps the context under its threshold 0 (window 16,384): up to "
                         "entry ")
    assert "there was nothing to compact (keepRecentTokens 20,000 ≥ the threshold 0: the kept part alone can be " \
           "over it), so after it the replay tried only now and then; 14 requests over the window" in pi
    assert truncate.startswith("pikit: warning: truncate never keeps the context under its threshold 0")
    assert truncate.endswith("compacting did not bring the context under the threshold 0, so after it the replay "
                             "tried only now and then; 0 requests over the window")


@pytest.mark.parametrize("sizes", ["usage", "estimate"])
def test_strategies_that_never_fire_see_the_contexts_pi_sees(sample_sessions: Path, shared_sessions: Path,
                                                             sizes: str) -> None:
    """With a window nothing reaches, every strategy's context is the projection's: same checks, same requests."""
    offline = get_summarizer("offline")
    for path in _sessions(sample_sessions, shared_sessions):
        session = pikit.load(path)
        if not any(e.type == "message" and e.role == "assistant" for e in session.branch(session.leaf_id)):
            continue
        runs = simulate(session, offline, context_window=10**9, settings=SETTINGS, sizes=sizes,
                        strategy=["pi", "none", "mask-at-threshold", "truncate"])
        assert isinstance(runs, list)
        pi, *others = runs
        for other in others:
            if other.strategy != "none":  # none has no check point
                assert [t[2] for t in other.trace] == [t[2] for t in pi.trace], (path.name, other.strategy)
            assert other.requests == pi.requests, (path.name, other.strategy)
            assert other.final_tokens == pi.final_tokens, (path.name, other.strategy)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_real_model_writes_the_simulated_summaries(wire: str, sample_sessions: Path) -> None:
    env = {k: v for k, v in os.environ.items() if "PROXY" not in k.upper() and not k.endswith("_API_KEY")}
    env[f"{wire.upper()}_API_KEY"] = TEST_KEY
    with FakeLLMServer(wire, api_key=TEST_KEY) as server:
        done = subprocess.run([sys.executable, "-m", "pikit", "simulate", str(sample_sessions / "refactor-auth.jsonl"),
                               "--context-window", "16384", "--reserve-tokens", "3000", "--keep-recent-tokens",
                               "4000", "--strategy", "pi,codex-inline", "--summarizer", wire, "--base-url",
                               server.base_url, "--model", f"{wire}/test-model", "--retries", "0", "--json"],
                              capture_output=True, text=True, timeout=120, env=env, check=False)
        calls = len(server.requests)
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)["runs"]
    assert calls == sum(r["totals"]["summarizerCalls"] for r in runs) > 0  # every summary came from the server
    assert TEST_KEY not in done.stdout + done.stderr
