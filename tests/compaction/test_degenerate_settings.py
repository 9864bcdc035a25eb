"""Degenerate settings stay cheap and say so: runaway replays, summaries larger than what they replace."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pikit
from pikit.compaction import CompactionSettings, SummaryRequest, SummaryResult, simulate
from pikit.compaction._simulate import RUNAWAY_AFTER
from pikit.errors import SummarizerOutputError
from pikit.llm import OfflineSummarizer
from tests.llm.servers import TEST_KEY, FakeLLMServer
from tests.procs import env, one_error_line, pikit as run_pikit

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample_sessions" / "refactor-auth.jsonl"


@pytest.fixture(scope="module")
def long_branch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated 3,000-entry linear session (deterministic)."""
    path = tmp_path_factory.mktemp("long") / "long.jsonl"
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_session.py"), "--entries", "3000",
                    "--no-compaction", "-o", str(path), "-q"], check=True, timeout=300, env=env())
    return path


def _attempts(result: pikit.compaction.SimulationResult) -> int:
    return len(result.events) + len(result.skipped)


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("window", "reserve", "keep"), [(100_000, 16_384, 90_000), (40_000, 0, 60_000)])
def test_a_runaway_replay_is_detected_and_stays_cheap(long_branch: Path, window: int, reserve: int,
                                                      keep: int) -> None:
    session = pikit.load(long_branch)
    settings = CompactionSettings(True, reserve, keep)
    start = time.monotonic()
    result = simulate(session, OfflineSummarizer(), context_window=window, settings=settings)
    took = time.monotonic() - start
    assert result.runaway is not None
    index, entry_id = result.runaway
    assert session.branch()[index].id == entry_id
    checks_after = sum(1 for i, _, before, _ in result.trace if i > index and before > result.threshold)
    # Every check that fired after the runaway is either counted or one of the few probes.
    assert result.runaway_checks + (_attempts(result) - RUNAWAY_AFTER) >= checks_after - RUNAWAY_AFTER
    # Compactions tried: a few before the runaway, then a logarithmic number of probes, not one per check.
    assert _attempts(result) <= 2 * RUNAWAY_AFTER + 2 * math.log2(len(result.trace) + 2), _attempts(result)
    assert took < 120
    totals = result.totals()
    assert totals["runawayAt"] == {"branchIndex": index, "entryId": entry_id}
    assert totals["checksNotCompacted"] == result.runaway_checks > 0


def test_sane_settings_are_not_a_runaway() -> None:
    session = pikit.load(SAMPLE)
    result = simulate(session, OfflineSummarizer(), context_window=16384,
                      settings=CompactionSettings(True, 3000, 4000))
    assert result.runaway is None and result.runaway_checks == 0 and len(result.events) == 2


@pytest.mark.timeout(300)
def test_the_command_line_warns_once_per_runaway_and_says_where(long_branch: Path) -> None:
    proc = run_pikit("simulate", long_branch, "--context-window", "100000", "--reserve-tokens", "16384",
                     "--keep-recent-tokens", "90000,20000", "--json", timeout=240)
    assert proc.returncode == 0
    warnings = [line for line in proc.stderr.decode().splitlines() if line.startswith("pikit: warning:")]
    assert len(warnings) >= 1 and "runaway" in warnings[0] and "keepRecentTokens 90,000 ≥ the threshold 83,616" \
        in warnings[0]
    runs = json.loads(proc.stdout)["runs"]
    assert runs[0]["totals"]["runawayAt"] is not None


# ---------------------------------------------------------------- oversized summaries
class _Verbose:
    """A summarizer whose summary is far larger than anything it summarizes."""

    name = "verbose"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        return SummaryResult(text="## Goal\n" + "word " * 400_000, usage=None)


def test_a_summary_larger_than_what_it_replaces_is_refused_with_the_numbers() -> None:
    session = pikit.load(SAMPLE)
    result = pikit.compaction.build_compaction(session, keep_recent_tokens=4000, summarizer=_Verbose())
    assert result.summary_tokens > result.replaced_tokens and result.tokens_after > result.tokens_before
    with pytest.raises(SummarizerOutputError) as info:
        result.check_size()
    message = str(info.value)
    assert f"({result.summary_tokens:,} tokens)" in message and f"({result.replaced_tokens:,} tokens)" in message
    # Like with like: the context before and after both by Pi's estimate (tokensBefore starts from the recorded
    # usage, which counts a system prompt the file does not hold), so they differ by summary minus replaced.
    assert result.tokens_before != result.estimated_before
    assert result.tokens_after - result.estimated_before == result.summary_tokens - result.replaced_tokens
    assert (f"by Pi's estimate, the context would grow from {result.estimated_before:,} to {result.tokens_after:,} "
            "tokens") in message
    normal = pikit.compaction.build_compaction(session, keep_recent_tokens=4000, summarizer=OfflineSummarizer())
    normal.check_size()  # a usual summary passes


@pytest.mark.timeout(120)
def test_the_command_line_refuses_an_oversized_summary_unless_allowed(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with FakeLLMServer("openai", api_key=TEST_KEY, summary="## Goal\n" + "word " * 400_000) as server:
        argv = ["compact", SAMPLE, "--keep-recent-tokens", "4000", "--summarizer", "openai", "--base-url",
                server.base_url, "--model", "local/m", "-o", out]
        proc = run_pikit(*argv, extra_env={"OPENAI_API_KEY": TEST_KEY}, timeout=60)
        one_error_line(proc, "is larger than what it replaces", "--allow-larger-summary")
        assert not out.exists()
        proc = run_pikit(*argv, "--allow-larger-summary", extra_env={"OPENAI_API_KEY": TEST_KEY}, timeout=60)
        assert proc.returncode == 0, proc.stderr
    assert pikit.load(out).leaf.type == "compaction"
