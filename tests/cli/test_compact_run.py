"""`pikit compact` / `pikit branch-summary` writing for real, against local OpenAI and Anthropic servers.

Each test runs the command line as a separate process (as a user would) with the API key
in its environment, and checks the file written, the requests the server received, and
that the key appears nowhere in what pikit wrote or printed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import pikit
from pikit.compaction import prepare_compaction
from pikit.compaction._entries import SPLIT_TURN_HEADING
from tests.llm.servers import (
    DEFAULT_SUMMARY,
    HANG,
    LENGTH,
    MALFORMED,
    OK,
    RATE_LIMITED,
    SERVER_ERROR,
    TEST_KEY,
    TOOL_CALL,
    FakeLLMServer,
)

REPO = Path(__file__).resolve().parents[2]
TREE = "tree-basic.jsonl"
SPLIT_LEAF = "fcad3888"  # keepRecentTokens=150 cuts this branch inside a turn
CHAIN = "compaction-chain.jsonl"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "PROXY" not in k.upper() and not k.endswith("_API_KEY")}
    env["OPENAI_API_KEY"] = TEST_KEY
    env["ANTHROPIC_API_KEY"] = TEST_KEY
    env["PYTHONPATH"] = str(REPO)
    return env


def pikit_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pikit", *args], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(params=["openai", "anthropic"])
def server(request: pytest.FixtureRequest) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(request.param, api_key=TEST_KEY, hang_seconds=4.0) as srv:
        yield srv


@pytest.fixture
def session_copy(tmp_path: Path, shared_sessions: Path) -> Path:
    target = tmp_path / TREE
    shutil.copyfile(shared_sessions / TREE, target)
    return target


@pytest.fixture
def chain_copy(tmp_path: Path, shared_sessions: Path) -> Path:
    """A session with a compaction already: keepRecentTokens=5000 updates its summary in one call."""
    target = tmp_path / CHAIN
    shutil.copyfile(shared_sessions / CHAIN, target)
    return target


def _compact(server: FakeLLMServer, source: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return pikit_cli("compact", str(source), "--summarizer", server.wire, "--base-url", server.base_url,
                     "--model", f"{server.wire}/test-model", "--retries", "2", "--timeout", "1", *extra,
                     cwd=source.parent)


def test_compact_appends_exactly_one_correct_entry(server: FakeLLMServer, session_copy: Path) -> None:
    before = session_copy.read_bytes()
    out = session_copy.parent / "out.jsonl"
    result = _compact(server, session_copy, "--leaf", SPLIT_LEAF, "--keep-recent-tokens", "150", "-o", str(out),
                      "--json")
    assert result.returncode == 0, result.stderr
    assert session_copy.read_bytes() == before, "the source must never change with -o"
    written = out.read_bytes()
    assert written.startswith(before) and written.count(b"\n") == before.count(b"\n") + 1
    entry = json.loads(written[len(before):])
    report = json.loads(result.stdout)
    assert report["entry"] == entry and report["output"] == str(out)

    session = pikit.load(session_copy)
    prep = prepare_compaction(session.branch(SPLIT_LEAF), 150)
    assert prep is not None and prep.is_split_turn
    assert entry["type"] == "compaction" and entry["parentId"] == SPLIT_LEAF
    assert entry["firstKeptEntryId"] == prep.first_kept_entry_id
    assert entry["tokensBefore"] == prep.tokens_before == report["tokensBefore"]
    assert entry["details"] == {"readFiles": prep.read_files, "modifiedFiles": prep.modified_files}
    # A split turn takes two calls: the history, then the turn's beginning.
    assert len(server.requests) == 2
    assert entry["summary"] == DEFAULT_SUMMARY + SPLIT_TURN_HEADING + DEFAULT_SUMMARY + prep.file_lists_text
    assert entry["usage"]["totalTokens"] > 0 and set(entry["usage"]) >= {"input", "output", "cacheRead",
                                                                         "cacheWrite", "totalTokens", "cost"}
    after = pikit.load(out)
    assert after.report.ok
    assert after.context(entry["id"]).tokens == report["tokensAfter"] < report["tokensBefore"]
    assert TEST_KEY not in written.decode() + result.stdout + result.stderr


def test_in_place_appends_one_line_and_nothing_else(server: FakeLLMServer, chain_copy: Path) -> None:
    before = chain_copy.read_bytes()
    result = _compact(server, chain_copy, "--keep-recent-tokens", "5000", "--in-place")
    assert result.returncode == 0, result.stderr
    assert len(server.requests) == 1
    body = server.requests[0].body
    assert "<previous-summary>" in json.dumps(body), "an earlier summary is updated, not restarted"
    written = chain_copy.read_bytes()
    assert written[: len(before)] == before
    tail = written[len(before):]
    assert tail.count(b"\n") == 1 and tail.endswith(b"\n")
    assert json.loads(tail)["type"] == "compaction"
    assert TEST_KEY not in written.decode()


def test_transient_failures_are_retried(server: FakeLLMServer, chain_copy: Path) -> None:
    server.script(SERVER_ERROR, RATE_LIMITED, OK)
    out = chain_copy.parent / "out.jsonl"
    result = _compact(server, chain_copy, "--keep-recent-tokens", "5000", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert len(server.requests) == 3
    assert out.exists()


@pytest.mark.parametrize("step", [LENGTH, TOOL_CALL, MALFORMED, HANG], ids=["length", "tool-call", "malformed", "hang"])
def test_bad_answers_write_nothing(server: FakeLLMServer, chain_copy: Path, step: object) -> None:
    before = chain_copy.read_bytes()
    server.script(step, step, step)  # type: ignore[arg-type]
    out = chain_copy.parent / "out.jsonl"
    result = _compact(server, chain_copy, "--keep-recent-tokens", "5000", "-o", str(out))
    assert result.returncode == 1
    assert not out.exists()
    assert chain_copy.read_bytes() == before
    assert not [p for p in chain_copy.parent.iterdir() if p.name.startswith(".pikit-")], "no temporary file left"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pikit: error:"), result.stderr
    assert "Traceback" not in result.stderr and TEST_KEY not in result.stderr


def test_branch_summary_written_at_the_new_position(server: FakeLLMServer, session_copy: Path) -> None:
    session = pikit.load(session_copy)
    old, target = "5c9c1898", "b3df44a4"
    out = session_copy.parent / "out.jsonl"
    args = ("branch-summary", str(session_copy), "--pair", f"{old}:{target}", "--summarizer", server.wire,
            "--base-url", server.base_url, "--model", f"{server.wire}/test-model", "-o", str(out), "--json")
    unknown = pikit_cli(*args, cwd=session_copy.parent)  # no source knows test-model: no budget is guessed
    assert unknown.returncode == 1 and not out.exists() and server.requests == []
    assert unknown.stderr == (f"pikit: error: window unknown for {server.wire}/test-model: pass --budget N or add "
                              "the model to ~/.pi/agent/models.json\n")
    result = pikit_cli(*args, "--budget", "100000", cwd=session_copy.parent)
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)["entry"]
    # Selecting a user message puts the leaf on its parent: the summary goes there.
    assert entry["parentId"] == session.entry(target).parent_id
    assert entry["fromId"] == old and entry["type"] == "branch_summary"
    assert DEFAULT_SUMMARY in entry["summary"]
    assert len(server.requests) == 1
    assert json.loads(out.read_bytes().splitlines()[-1]) == entry


def test_offline_compaction_needs_no_network_and_shrinks_the_context(session_copy: Path) -> None:
    out = session_copy.parent / "out.jsonl"
    env_free = pikit_cli("compact", str(session_copy), "--leaf", SPLIT_LEAF, "--keep-recent-tokens", "150",
                         "-o", str(out), "--json", cwd=session_copy.parent)
    assert env_free.returncode == 0, env_free.stderr
    report = json.loads(env_free.stdout)
    assert report["tokensAfter"] < report["tokensBefore"]
    assert "## Goal" in report["entry"]["summary"]


def test_write_target_is_required_before_any_call(server: FakeLLMServer, session_copy: Path) -> None:
    result = _compact(server, session_copy, "--leaf", SPLIT_LEAF)
    assert result.returncode == 1 and "-o OUT" in result.stderr
    assert server.requests == []
