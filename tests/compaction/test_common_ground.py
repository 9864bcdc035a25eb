"""Strategies on common ground: none, the rolling observation mask, one fact pool per branch point, sizes
after a simulated compaction taken from what the context holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit import compaction
from pikit.compaction import CompactionSettings
from pikit.compaction._simulate import branch_points
from pikit.llm import get_summarizer
from tests.compaction.test_strategies import HEADER, turns
from tests.entries import asst, call, session_of, text, tool_result, user

OFFLINE = get_summarizer("offline")
FIVE = "pi,none,mask-observations,codex-inline,truncate"


def _runs(session: Any, window: int, strategy: str = FIVE, settings: CompactionSettings | None = None,
          **kw: Any) -> list[compaction.SimulationResult]:
    runs = compaction.simulate(session, OFFLINE, context_window=window,
                               settings=settings or CompactionSettings(True, 16_384, 20_000), strategy=strategy, **kw)
    assert isinstance(runs, list)
    return runs


# ------------------------------------------------------------------ replay sizes without artifacts
def test_large_session_fits_a_64k_window_with_every_compaction_under_half(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "large-session.jsonl")
    settings = CompactionSettings(True, 16_384, 20_000)
    run = compaction.simulate(session, OFFLINE, context_window=64_000, settings=settings, strategy="pi")
    assert isinstance(run, compaction.SimulationResult)
    assert run.events and all(e.tokens_after <= 32_000 for e in run.events)
    assert not run.never_fits and run.request_overflows == 0 and run.overflows == []
    plain = compaction.simulate(session, OFFLINE, context_window=64_000, settings=settings)
    assert [e.tokens_after for e in plain.events] == [e.tokens_after for e in run.events]
    # the compression ratio in one unit: Pi's estimate before over Pi's estimate after
    first = run.events[0]
    assert first.estimated_before is not None and first.estimated_before != first.tokens_before
    assert first.compression == first.estimated_before / first.tokens_after


# ---------------------------------------------------------------------------------------- none
def test_none_never_compacts_and_counts_its_overflows() -> None:
    session = session_of(HEADER, turns(4))
    none, pi = _runs(session, 6_000, "none,pi", CompactionSettings(True, 1_000, 2_000), sizes="estimate")
    assert none.events == [] and none.trace == [] and none.threshold == 6_000
    assert pi.events and none.input_tokens > pi.input_tokens
    assert none.request_overflows == sum(1 for size, _ in none.requests if size > 6_000) > 0
    assert none.peak_tokens == max(size for size, _ in none.requests)


# ----------------------------------------------------------------------------- rolling mask
def _calls(n: int) -> list[dict[str, Any]]:
    """One user message, then ``n`` tool calls each with a result of 4,000 characters, then an answer."""
    out: list[dict[str, Any]] = [user("u1", None, 1, text("go"))]
    parent = "u1"
    for k in range(1, n + 1):
        out += [asst(f"a{k}", parent, 3 * k, [call(f"c{k}", "bash", command=f"step {k}")]),
                tool_result(f"t{k}", f"a{k}", 3 * k + 1, text(chr(96 + k) * 4_000), name="bash", toolCallId=f"c{k}")]
        parent = f"t{k}"
    return [*out, asst("end", parent, 3 * n + 5, text("done"))]


def test_mask_observations_keeps_a_rolling_window_before_every_request() -> None:
    session = session_of(HEADER, _calls(6))
    run = compaction.simulate(session, OFFLINE, context_window=10**6, settings=CompactionSettings(True, 16_384, 20_000),
                              strategy="mask-observations", keep_observations=2, sizes="estimate", points=[13])
    assert isinstance(run, compaction.SimulationResult)
    assert run.events == [] and run.masked_observations == 4  # t1..t4 masked; t5, t6 kept at the last request
    context = run.contexts[13]
    assert context is not None
    results = [m for m in context if m["role"] == "toolResult"]
    assert [m["toolCallId"] for m in results] == [f"c{k}" for k in range(1, 7)]  # every call keeps its result
    assert all("removed from the context" in m["content"][0]["text"] for m in results[:4])
    assert [m["content"][0]["text"][0] for m in results[4:]] == ["e", "f"]
    # masked before the request: the trace of each request check shows the size before and after
    assert sum(1 for _, _, before, after in run.trace if after < before) == 4
    # far under any threshold it still masks: the paper's rule is a window, not a trigger
    assert run.threshold == 10**6
    assert compaction.MaskObservationsStrategy().keep_observations == 10  # the paper's setting


def test_mask_observations_costs_less_than_none_and_reads_the_cache_up_to_the_first_mask() -> None:
    session = session_of(HEADER, _calls(8))
    none, mask = _runs(session, 10**6, "none,mask-observations", sizes="estimate", keep_observations=3)
    assert mask.input_tokens < none.input_tokens
    rewrites = [n for n, (size, cached) in enumerate(mask.requests) if n and cached < mask.requests[n - 1][0]]
    assert rewrites  # a mask rewrites the prefix after the masked result: those requests start partly cold


@pytest.mark.parametrize("kw", [{"keep_observations": -1}, {"keep_observations": True}])
def test_keep_observations_must_be_a_count(kw: dict[str, Any]) -> None:
    with pytest.raises(pikit.errors.PikitError, match="keep_observations must be a whole number"):
        _runs(session_of(HEADER, turns(1)), 6_000, "mask-observations", **kw)


# ----------------------------------------------------------------------------- common ground
def test_branch_points_spread_over_the_requests_and_end_at_the_last() -> None:
    branch = session_of(HEADER, turns(5)).branch()
    requests = [n for n, e in enumerate(branch) if e.type == "message" and e.role == "assistant"]
    assert max(branch_points(branch, 3)) == requests[-1] and len(branch_points(branch, 3)) == 3
    assert branch_points(branch, 100) == frozenset(requests)
    assert branch_points(branch, [requests[0]]) == {requests[0]}
    with pytest.raises(ValueError, match="assistant messages"):
        branch_points(branch, [0])


def test_every_strategy_is_scored_on_one_pool_per_point(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "large-session.jsonl")
    runs = _runs(session, 64_000)
    ground = compaction.common_ground(session, runs)
    points = sorted({p.branch_index for p in ground})
    assert len(points) == 8
    for index in points:
        at = [p for p in ground if p.branch_index == index]
        assert [p.strategy for p in at] == [r.strategy for r in runs]
        pools = {tuple((f.kind, f.text) for f in p.evaluation.facts) for p in at}
        assert len(pools) == 1  # the same facts for every strategy
    by = {r.strategy: compaction.ground_recall(p for p in ground if p.strategy == r.strategy) for r in runs}
    assert by["none"] == 1.0  # the uncompacted context holds the pool: the ceiling
    assert all(value is not None and 0 < value < 1 for name, value in by.items() if name != "none")
    # the pool grows along the branch: a later point holds at least the facts of an earlier one
    sizes = [len(next(p for p in ground if p.branch_index == i).evaluation.facts) for i in points]
    assert sizes == sorted(sizes)
    # a predicate counts a subset: one kind of fact
    pi = [p for p in ground if p.strategy == "pi"]
    assert compaction.ground_recall(pi, lambda f: f.kind == "modified_file") is not None
    assert compaction.pool_recall([], []) is None


def test_cli_reports_recall_over_the_same_pool(capsys: pytest.CaptureFixture[str], sample_sessions: Path) -> None:
    from tests.compaction.test_strategies_cli import run

    path = sample_sessions / "refactor-auth.jsonl"
    argv = ("simulate", path, "--context-window", "16384", "--reserve-tokens", "3000", "--keep-recent-tokens", "4000",
            "--strategy", FIVE)
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    data = json.loads(out)
    grounds = [r["commonGround"] for r in data["runs"]]
    assert [len(g["points"]) for g in grounds] == [len(grounds[0]["points"])] * 5
    facts = {tuple(p["facts"] for p in g["points"]) for g in grounds}
    assert len(facts) == 1  # one pool per point, whatever the strategy
    assert grounds[1]["recall"] == 1.0 and all(0 <= g["recall"] <= 1 for g in grounds)
    # key recall: over each pool's key facts, the headline; none (no compaction) holds them all
    assert grounds[1]["keyRecall"] == 1.0 and all(0 <= g["keyRecall"] <= 1 for g in grounds)
    for g in grounds:
        assert all(p["keyRecall"] is None or 0 <= p["keyRecall"] <= 1 for p in g["points"])
    assert data["runs"][0]["totals"]["cost"]["leftOut"]
    code, out, err = run(capsys, *argv)
    assert code == 0
    lines = out.splitlines()
    assert any(line.startswith("recall (") and line.split()[-4] == "100.0%" for line in lines)
    key = next(i for i, line in enumerate(lines) if line.startswith("key recall ("))
    assert lines[key + 1].startswith("recall (") and lines[key].split()[-4] == "100.0%"


def test_sawtooth_draws_no_threshold_for_strategies_that_fire_at_no_size() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from pikit import charts

    runs = _runs(session_of(HEADER, _calls(6)), 20_000, "pi,none,mask-observations", sizes="estimate",
                 keep_observations=2)
    fig = charts.strategy_sawtooth(runs)
    ax = fig.axes[0]
    thresholds = [line.get_label() for line in ax.get_lines() if line.get_gid() == "threshold"]
    assert thresholds == ["pi: threshold 3,616"]
    labels = [line.get_label() for line in ax.get_lines() if line.get_gid() == "compactions"]
    assert "mask-observations: 4 masks" in labels


def test_cli_evaluate_of_strategies_that_never_compact_points_to_common_ground(sample_sessions: Path) -> None:
    from tests.procs import one_error_line, pikit as run_pikit

    done = run_pikit("evaluate", sample_sessions / "refactor-auth.jsonl", "--strategy", "none,mask-observations")
    assert one_error_line(done, "never compact (no compaction to evaluate): `pikit simulate --strategy` scores them")


def test_a_request_over_the_window_holds_nothing_and_counts_in_no_mean() -> None:
    session = session_of(HEADER, _calls(8))
    none, pi = _runs(session, 6_000, "none,pi", CompactionSettings(True, 1_000, 2_000), sizes="estimate")
    ground = compaction.common_ground(session, [none, pi])
    over = [p for p in ground if p.strategy == "none" and not p.fits]
    assert over and all(p.context_tokens > 6_000 and p.recall() is None and not any(p.evaluation.kept)
                        for p in over)
    assert all(p.fits for p in ground if p.strategy == "pi")
    assert compaction.ground_recall(p for p in ground if p.strategy == "none") == 1.0  # over the points that fit


def test_the_largest_request_and_the_requests_over_the_window_agree(shared_sessions: Path) -> None:
    """One definition beside another: the largest request exceeds the window exactly when some request does
    (the size at a check, measured before a compaction there, may exceed it with no request over it)."""
    session = pikit.load(shared_sessions / "before-compaction.jsonl")
    runs = compaction.simulate(session, get_summarizer("offline"), context_window=64_000,
                               settings=CompactionSettings(True, 16_384, 20_000), strategy=FIVE)
    for run in runs:
        totals = run.totals()
        assert (totals["peakRequestTokens"] > 64_000) == (totals["overflows"] > 0), run.strategy
    assert any(r.totals()["peakTokens"] > 64_000 and r.totals()["overflows"] == 0 for r in runs)
