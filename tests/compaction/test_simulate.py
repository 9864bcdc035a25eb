"""What-if replay (pikit.compaction._simulate) on the sample session, checked against independent figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit import Entry, Session, estimate_tokens
from pikit._context.projection import project_path
from pikit.cli._json import compaction as compaction_json
from pikit.compaction import (
    CompactionSettings,
    SimulationResult,
    Summarizer,
    build_compaction,
    simulate,
    sweep,
    threshold_table,
)
from pikit.errors import PikitError
from pikit.llm import get_summarizer
from tests.procs import env as child_env

WINDOW, RESERVE, KEEP = 16384, 3000, 4000
SETTINGS = CompactionSettings(True, RESERVE, KEEP)


@pytest.fixture(scope="module")
def offline() -> Summarizer:
    return get_summarizer("offline")


@pytest.fixture(scope="module")
def sample_path(sample_sessions: Path) -> Path:
    return sample_sessions / "refactor-auth.jsonl"


@pytest.fixture(scope="module")
def sample(sample_path: Path) -> Session:
    return pikit.load(sample_path)


@pytest.fixture(scope="module")
def replay(sample: Session, offline: Summarizer) -> SimulationResult:
    return simulate(sample, offline, sizes="estimate", context_window=WINDOW, settings=SETTINGS)


def estimate(path: list[Entry]) -> int:
    """Pi's estimated context size of a path: the replayed system prompt + every other message."""
    projection = project_path(path)
    system = projection.system_message
    return (estimate_tokens(system) if system is not None else 0) + sum(
        e for m, e in zip(projection.messages, projection.estimates, strict=True) if m.get("role") != "system")


def is_assistant(entry: Entry) -> bool:
    return entry.type == "message" and entry.role == "assistant"


# ---------------------------------------------------------------- where the events are


def test_events_where_the_readme_says(sample: Session, replay: SimulationResult) -> None:
    branch_ids = sample.branch_ids()
    # "it also fires twice on the main branch, 12 and 18 entries later than the recorded compactions"
    recorded = [branch_ids.index("3f00573f"), branch_ids.index("f6135720")]
    assert [e.branch_index for e in replay.events] == [recorded[0] + 12, recorded[1] + 18]
    assert [e.after_entry_id for e in replay.events] == [branch_ids[recorded[0] + 12], branch_ids[recorded[1] + 18]]
    assert [e.after_entry_id for e in replay.events] == ["3c1a96da", "8e1344aa"]
    assert all(is_assistant(sample.entry(e.after_entry_id)) for e in replay.events)
    assert replay.skipped == []
    assert replay.leaf_id == sample.leaf_id == "0ce8fc25"
    assert replay.threshold == WINDOW - RESERVE == 13384


def test_every_event_is_over_the_threshold_and_nothing_before_it(replay: SimulationResult) -> None:
    threshold = replay.threshold
    assert replay.events
    for event in replay.events:
        assert event.tokens_before > threshold
        points = [t for t in replay.trace if t[0] == event.branch_index]
        assert len(points) == 1 and points[0][2] == event.tokens_before and points[0][3] == event.tokens_after
    event_points = {e.branch_index for e in replay.events}
    for index, _, before, after in replay.trace:
        if index in event_points:
            continue
        assert before <= threshold, index
        assert before == after


def test_trace_has_one_check_per_assistant_message(sample: Session, replay: SimulationResult) -> None:
    branch = sample.branch()
    assert [(t[0], t[1]) for t in replay.trace] == [(i, e.id) for i, e in enumerate(branch) if is_assistant(e)]


def test_checks_before_the_first_event_match_the_plain_estimate(sample: Session, replay: SimulationResult) -> None:
    """Until the first simulated compaction the size is the estimate of the branch without the file's compactions."""
    branch = sample.branch()
    first = replay.events[0].branch_index
    plain = [e for e in branch[:first + 1] if e.type != "compaction"]
    by_index = {t[0]: t[2] for t in replay.trace}
    for index, entry in enumerate(branch[:first + 1]):
        if is_assistant(entry):
            upto = [e for e in branch[:index + 1] if e.type != "compaction"]
            assert by_index[index] == estimate(upto), index
    assert replay.events[0].tokens_before == estimate(plain)


def test_tokens_after_recomputed_from_a_synthetic_compaction(sample: Session, replay: SimulationResult) -> None:
    branch = sample.branch()
    for event in replay.events:
        path = [e for e in branch[:event.branch_index + 1] if e.type != "compaction"]
        kept_from = next(i for i, e in enumerate(path) if e.id == event.first_kept_entry_id)
        summary = "x" * (4 * event.summary_tokens)  # estimates to exactly summary_tokens
        system = project_path(path).system_message  # a compaction carries the replayed system message
        assert system is not None
        compaction = Entry({"type": "compaction", "id": "sim00000", "parentId": path[-1].id,
                            "timestamp": "2026-03-10T12:00:00.000Z", "summary": summary,
                            "firstKeptEntryId": event.first_kept_entry_id, "tokensBefore": event.tokens_before,
                            "systemMessage": system})
        assert event.tokens_after == estimate([*path, compaction])
        kept = sum(estimate_tokens(m) for e in path[kept_from:] for m in project_path([e]).messages
                   if m.get("role") != "system")
        assert kept + estimate_tokens(system) + event.summary_tokens == event.tokens_after
        assert kept < event.tokens_after < event.tokens_before
        assert event.summarized_messages > 0
        assert event.is_split_turn is (sample.entry(event.first_kept_entry_id).role != "user")


def reference_replay(session: Session, summarizer: Summarizer, window: int, settings: CompactionSettings,
                     keep_existing: bool = False) -> tuple[list[tuple[int, Any, int, int]], list[tuple[Any, ...]]]:
    """The replay done the slow way: estimate every prefix, compact with build_compaction on a rebuilt session."""
    path: list[Entry] = []
    trace: list[tuple[int, Any, int, int]] = []
    events: list[tuple[Any, ...]] = []
    for index, entry in enumerate(session.branch()):
        if entry.type == "compaction" and not keep_existing:
            continue
        path.append(entry)
        if not is_assistant(entry):
            continue
        before = after = estimate(path)
        if settings.should_compact(before, window):
            chained = [{**e.data, "parentId": path[j - 1].id if j else None} for j, e in enumerate(path)]
            rebuilt = Session.from_entries(chained, header=session.header)
            try:
                result = build_compaction(rebuilt, entry.id, keep_recent_tokens=settings.keep_recent_tokens,
                                          summarizer=summarizer)
            except PikitError:
                result = None
            if result is not None:
                path.append(Entry(result.entry))
                after = estimate(path)
                events.append((entry.id, index, before, after, result.entry["firstKeptEntryId"],
                               result.preparation.is_split_turn))
        trace.append((index, entry.id, before, after))
    return trace, events


@pytest.mark.parametrize(("window", "reserve", "keep", "keep_existing"), [
    (WINDOW, RESERVE, KEEP, False),
    (WINDOW, RESERVE, KEEP, True),
    (9000, 1000, 2000, False),
    (9000, 1000, 2000, True),
])
def test_replay_matches_a_slow_reference(sample: Session, offline: Summarizer, window: int, reserve: int, keep: int,
                                         keep_existing: bool) -> None:
    settings = CompactionSettings(True, reserve, keep)
    result = simulate(sample, offline, sizes="estimate", context_window=window, settings=settings,
                      keep_existing=keep_existing)
    trace, events = reference_replay(sample, offline, window, settings, keep_existing)
    assert result.trace == trace
    assert [(e.after_entry_id, e.branch_index, e.tokens_before, e.tokens_after, e.first_kept_entry_id,
             e.is_split_turn) for e in result.events] == events


# ---------------------------------------------------------------- settings and options


def test_no_events_with_a_huge_window(sample: Session, offline: Summarizer, replay: SimulationResult) -> None:
    result = simulate(sample, offline, sizes="estimate", context_window=10**7, settings=SETTINGS)
    assert result.events == [] and result.skipped == []
    assert all(before == after for _, _, before, after in result.trace)
    assert len(result.trace) == len(replay.trace)
    assert result.peak_tokens == max(t[2] for t in result.trace) > replay.peak_tokens


def test_disabled_never_compacts(sample: Session, offline: Summarizer) -> None:
    result = simulate(sample, offline, sizes="estimate", context_window=5000,
                      settings=CompactionSettings(False, RESERVE, KEEP))
    assert result.events == [] and result.skipped == []
    assert result.peak_tokens > result.threshold


def test_smaller_windows_compact_at_least_as_often(sample: Session, offline: Summarizer) -> None:
    counts = [len(simulate(sample, offline, sizes="estimate", context_window=w, settings=SETTINGS).events)
              for w in (60000, 20000, 16384, 12000, 9000)]
    assert counts == sorted(counts)
    assert counts[0] == 0 and counts[2] == 2 and counts[-1] > counts[2]


def test_keep_existing_keeps_the_files_compactions(sample: Session, offline: Summarizer,
                                                   replay: SimulationResult) -> None:
    kept = simulate(sample, offline, sizes="estimate", context_window=WINDOW, settings=SETTINGS, keep_existing=True)
    branch = sample.branch()
    after_first = {t[0]: t[2] for t in kept.trace}
    # right after the recorded compaction 1 the size is the estimate of the file's own projection there
    first_check = min(i for i in after_first if i > branch.index(sample.entry("3f00573f")))
    assert after_first[first_check] == estimate(branch[:first_check + 1])
    assert after_first[first_check] < {t[0]: t[2] for t in replay.trace}[first_check]
    # with the recorded compactions in place the trigger never fires on this branch
    assert kept.events == []
    assert max(t[2] for t in kept.trace) <= kept.threshold
    # without them, the first check after compaction 1 sees the uncompacted size
    assert replay.trace != kept.trace


def test_leaf_option(sample: Session, offline: Summarizer) -> None:
    result = simulate(sample, offline, sizes="estimate", context_window=WINDOW, settings=SETTINGS, leaf="10b305af")
    assert result.leaf_id == "10b305af"
    on_branch = set(sample.branch_ids("10b305af"))
    assert all(t[1] in on_branch for t in result.trace)
    assert result.trace[-1][1] == "10b305af"


def test_sweep_is_one_result_per_combination(sample: Session, offline: Summarizer) -> None:
    windows = [WINDOW, 12000]
    combos = [CompactionSettings(True, RESERVE, KEEP), CompactionSettings(True, 2000, 3000),
              CompactionSettings(False, RESERVE, KEEP)]
    results = sweep(sample, offline, context_windows=windows, settings=iter(combos), sizes="estimate")
    assert len(results) == len(windows) * len(combos)
    assert [(r.context_window, r.settings) for r in results] == [(w, s) for w in windows for s in combos]
    for result in results:
        alone = simulate(sample, offline, sizes="estimate", context_window=result.context_window,
                         settings=result.settings)
        assert compaction_json.replay(result) == compaction_json.replay(alone)
    table = threshold_table(results)
    assert len(table) == len(results)
    for row, result in zip(table, results, strict=True):
        assert row["contextWindow"] == result.context_window
        assert row["reserveTokens"] == result.settings.reserve_tokens
        assert row["keepRecentTokens"] == result.settings.keep_recent_tokens
        assert row["threshold"] == result.context_window - result.settings.reserve_tokens
        assert row["compactions"] == len(result.events)
        if result.events:
            assert row["firstTriggerEntryId"] == result.events[0].after_entry_id
            assert row["firstTriggerIndex"] == result.events[0].branch_index
        else:
            assert row["firstTriggerEntryId"] is None and row["firstTriggerIndex"] is None


def test_threshold_table_row(replay: SimulationResult) -> None:
    (row,) = threshold_table([replay])
    assert row == {
        "contextWindow": WINDOW, "reserveTokens": RESERVE, "keepRecentTokens": KEEP, "threshold": 13384,
        "compactions": 2, "skipped": 0, "checks": len(replay.trace), "peakTokens": replay.peak_tokens,
        "finalTokens": replay.trace[-1][3],  # the leaf is the last check's assistant message
        "tokensRemoved": sum(e.tokens_before - e.tokens_after for e in replay.events),
        "runawayAt": None, "checksNotCompacted": 0, "checksOverWindow": 0,
        "sizes": "estimate", "checksFromUsage": 0,
        "firstTriggerEntryId": "3c1a96da", "firstTriggerIndex": replay.events[0].branch_index,
    }
    assert replay.peak_tokens == max(e.tokens_before for e in replay.events)


def test_json_shape(replay: SimulationResult) -> None:
    data = compaction_json.replay(replay)
    assert list(data) == ["leaf", "totals", "events", "trace", "overflows"]
    assert data["overflows"] == []
    assert data["leaf"] == "0ce8fc25"
    assert data["totals"] == replay.totals()
    assert len(data["events"]) == 2
    for event, obj in zip(replay.events, data["events"], strict=True):
        assert list(obj) == ["afterEntryId", "branchIndex", "tokensBefore", "tokensAfter", "firstKeptEntryId",
                             "isSplitTurn", "summarizedMessages", "summaryTokens"]
        assert obj["afterEntryId"] == event.after_entry_id
        assert obj["tokensAfter"] == event.tokens_after
    assert [t["branchIndex"] for t in data["trace"]] == [t[0] for t in replay.trace]
    assert [t["compacted"] for t in data["trace"]] == [t[0] in {e.branch_index for e in replay.events}
                                                      for t in replay.trace]
    assert all(list(t) == ["branchIndex", "entryId", "tokens", "compacted"] for t in data["trace"])
    json.dumps(data)  # plain JSON


def test_cli_agrees_with_the_api(sample_path: Path, sample: Session, offline: Summarizer,
                                 replay: SimulationResult, tmp_path: Path) -> None:
    env = child_env(PI_CODING_AGENT_DIR=str(tmp_path / "agent"))  # this checkout's pikit, from any folder
    done = subprocess.run(
        [sys.executable, "-m", "pikit", "simulate", str(sample_path), "--context-window", str(WINDOW),
         "--reserve-tokens", str(RESERVE), "--keep-recent-tokens", str(KEEP), "--sizes", "estimate", "--json"],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["runs"] == [compaction_json.replay(replay)]
    assert out["thresholds"] == threshold_table([replay])


# ---------------------------------------------------------------- sizes from the recorded usage


@pytest.mark.parametrize("name", ["refactor-auth.jsonl", "wide-tree.jsonl", "xss-and-unicode.jsonl"])
@pytest.mark.slow
def test_usage_sizes_are_the_context_sizes_until_the_first_compaction(sample_sessions: Path, offline: Summarizer,
                                                                      name: str) -> None:
    """Without simulated compactions, every check sees exactly what `pikit context` reports there."""
    session = pikit.load(sample_sessions / name)
    result = simulate(session, offline, context_window=10**9, settings=SETTINGS, keep_existing=True)
    assert result.sizes == "usage" and result.events == []
    assert result.trace
    for _, entry_id, before, after in result.trace:
        assert before == after == session.context(entry_id).tokens, entry_id
    assert result.usage_checks == len(result.trace)


def test_usage_sizes_count_the_recorded_usage_only_while_the_contexts_are_the_same(sample: Session,
                                                                                  offline: Summarizer) -> None:
    usage = simulate(sample, offline, context_window=WINDOW, settings=SETTINGS)
    estimate_only = simulate(sample, offline, context_window=WINDOW, settings=SETTINGS, sizes="estimate")
    branch = sample.branch()
    recorded_compaction = next(n for n, e in enumerate(branch) if e.type == "compaction")
    first = usage.events[0].branch_index
    assert recorded_compaction < first
    same = 0
    for index, entry_id, before, after in usage.trace:
        own = estimate([e for e in branch[:index + 1] if e.type != "compaction"])
        if index < recorded_compaction:
            # the replayed context is the recorded one: the provider's count beyond Pi's estimate is added
            assert before - own == sample.context(entry_id).tokens - estimate(branch[:index + 1]), index
            same += 1
        else:
            # left out, the file's compaction makes the contexts differ: Pi's estimate of what the replay holds
            if index < first:
                assert before == own, index
        if index == first:
            assert after == usage.events[0].tokens_after  # sizes after a simulated compaction: estimates
    assert [t[2] for t in usage.trace[:same]] != [t[2] for t in estimate_only.trace[:same]]
    assert usage.totals()["sizes"] == "usage" and usage.totals()["checksFromUsage"] == same > 0


def test_usage_sizes_without_recorded_usage_are_estimates(offline: Summarizer) -> None:
    from entries import asst, user

    text = [{"type": "text", "text": "y" * 40}]
    session = Session.from_entries([user("u1", None, 1, "x" * 400), asst("a1", "u1", 2, text),
                                    user("u2", "a1", 3, "z" * 400), asst("a2", "u2", 4, text)])
    usage = simulate(session, offline, context_window=10**6, settings=SETTINGS)
    estimated = simulate(session, offline, context_window=10**6, settings=SETTINGS, sizes="estimate")
    assert usage.trace == estimated.trace and usage.usage_checks == 0


def test_unknown_sizes_mode_is_refused(sample: Session, offline: Summarizer) -> None:
    with pytest.raises(ValueError, match="sizes"):
        simulate(sample, offline, context_window=WINDOW, settings=SETTINGS, sizes="tokens")


# ---------------------------------------------------------------- the end of the branch, overflows


def test_final_tokens_are_the_size_at_the_end_of_the_branch(sample: Session, offline: Summarizer) -> None:
    """Entries after the last check count: the final size is `pikit context`'s at the leaf, not the last check's."""
    branch = sample.branch()
    leaf = next(e for i, e in enumerate(branch) if i > 40 and is_assistant(branch[i - 1])
                and e.type == "message" and e.role == "user")
    for sizes in ("usage", "estimate"):
        result = simulate(sample, offline, context_window=10**9, settings=SETTINGS, leaf=leaf.id, keep_existing=True,
                          sizes=sizes)
        path = sample.branch(leaf.id)
        expected = sample.context(leaf.id).tokens if sizes == "usage" else estimate(path)
        assert result.final_tokens == result.totals()["finalTokens"] == expected
        assert result.trace[-1][1] != leaf.id and result.final_tokens > result.trace[-1][3]
        # peakTokens and the trace stay what the checks saw
        assert result.peak_tokens == max(t[2] for t in result.trace)


def test_final_tokens_after_a_simulated_compaction(sample: Session, offline: Summarizer) -> None:
    result = simulate(sample, offline, sizes="estimate", context_window=WINDOW, settings=SETTINGS, leaf="10b305af")
    # with nothing after the last check, the end of the branch is that check
    assert sample.branch("10b305af")[-1].id == result.trace[-1][1]
    assert result.final_tokens == result.trace[-1][3]
    empty = simulate(Session.from_entries([]), offline, context_window=WINDOW, settings=SETTINGS)
    assert empty.final_tokens == 0 and empty.overflows == [] and empty.totals()["checksOverWindow"] == 0


def test_every_check_over_the_window_is_an_overflow(shared_sessions: Path, offline: Summarizer) -> None:
    session = pikit.load(shared_sessions / "before-compaction.jsonl")
    window = 40_000
    result = simulate(session, offline, context_window=window, settings=CompactionSettings(True, 16384, 20000))
    over = [(i, eid, before) for i, eid, before, _ in result.trace if before > window]
    assert over and result.overflows == over
    assert max(tokens for _, _, tokens in result.overflows) == result.peak_tokens > window
    data = compaction_json.replay(result)
    assert data["overflows"] == [{"branchIndex": i, "entryId": eid, "tokens": t} for i, eid, t in over]
    assert data["totals"]["checksOverWindow"] == len(over)
    assert threshold_table([result])[0]["checksOverWindow"] == len(over)
    roomy = simulate(session, offline, context_window=10**6, settings=CompactionSettings(True, 16384, 20000))
    assert roomy.overflows == [] and roomy.peak_tokens < 10**6
