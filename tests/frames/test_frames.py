"""pikit.frames: declared columns, dtypes, and values checked against the core."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import pikit
import pikit._columns
from pikit import Session, estimate_tokens, frames, get_counter
from pikit._context.projection import entry_messages, project_path
from pikit._context.tokens import message_usage, usage_total
from pikit.compaction import (
    CompactionSettings,
    SimulationResult,
    SummaryRequest,
    SummaryResult,
    prepare_compaction,
    simulate,
    threshold_table,
)
from pikit.frames._columns import PREVIEW_WIDTH
from tests.conftest import REPO, SAMPLES, SESSIONS

SHARED_NAMES = ["compaction-chain", "context-edits", "tree-basic", "usage", "unicode", "split-turn",
                "retain-none", "system-replay", "multi-root", "before-compaction"]
SAMPLE_NAMES = ["refactor-auth.jsonl", "quick-tour.jsonl", "xss-and-unicode.jsonl", "wide-tree.jsonl", "damaged.jsonl"]


class StubSummarizer:
    """A deterministic stand-in: the frames are under test here, not the summarizer."""

    name = "stub"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        return SummaryResult(f"## Goal\nstub summary of {len(request.messages)} messages", None)


def _session_paths() -> list[Any]:
    paths = [pytest.param(SESSIONS / f"{name}.jsonl", id=name) for name in SHARED_NAMES]
    paths += [pytest.param(SAMPLES / name, id=f"sample:{name}") for name in SAMPLE_NAMES if (SAMPLES / name).exists()]
    return paths


SESSION_PATHS = _session_paths()


@pytest.fixture(scope="module", params=SESSION_PATHS)
def session(request: pytest.FixtureRequest) -> Session:
    return pikit.load(request.param)


def _check_declared(df: pd.DataFrame, name: str) -> None:
    declared = frames.FRAMES[name]
    assert list(df.columns) == [c.name for c in declared]
    for column in declared:
        assert str(df[column.name].dtype) == column.dtype, (name, column.name, df[column.name].dtype)


def _none(value: Any) -> Any:
    return None if value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value) else value


# ------------------------------------------------------------------------------ declarations
def test_every_frame_declares_unique_documented_columns() -> None:
    allowed = {"string", "Int64", "Float64", "boolean", "datetime64[ms, UTC]", "object"}
    for name, columns in frames.FRAMES.items():
        names = [c.name for c in columns]
        assert len(names) == len(set(names)), name
        for column in columns:
            assert column.dtype in allowed, (name, column)
            assert column.description and len(column.description) > 5
        table = frames.column_table(name)
        assert list(table.columns) == ["name", "dtype", "group", "description"]
        assert table["name"].tolist() == names
        assert callable(getattr(frames, name))


def test_column_table_unknown_frame() -> None:
    with pytest.raises(KeyError, match="unknown frame"):
        frames.column_table("nope")


@pytest.mark.parametrize("name", ["entries", "messages", "compactions", "branches", "context_trace", "calibration"])
def test_empty_session_frames_keep_declared_columns(name: str) -> None:
    empty = Session.from_entries([])
    builder: Callable[..., pd.DataFrame] = getattr(frames, name)
    df = builder(empty)
    assert df.empty
    _check_declared(df, name)


def test_import_pikit_does_not_import_pandas_or_matplotlib() -> None:
    code = ("import sys, pikit\n"
            "s = pikit.load(sys.argv[1]); s.context().tokens\n"
            "bad = [m for m in ('pandas', 'matplotlib', 'numpy') if m in sys.modules]\n"
            "print(','.join(bad))\n")
    path = SESSIONS / "compaction-chain.jsonl"
    result = subprocess.run([sys.executable, "-c", code, str(path)], cwd=REPO, capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == ""


def test_shorten() -> None:
    assert frames.shorten("a  b\n c") == "a b c"
    assert frames.shorten("x" * 200, 10) == "x" * 9 + "…"
    assert len(frames.shorten("word " * 100)) <= PREVIEW_WIDTH
    assert frames.shorten(None) == ""


# ------------------------------------------------------------------------------ entries
def test_entries(session: Session) -> None:
    df = frames.entries(session)
    _check_declared(df, "entries")
    assert len(df) == len(session.entries)
    assert [_none(v) for v in df["id"]] == [None if e.id is None else str(e.id) for e in session.entries]
    active = set(session.branch_ids()) if session.leaf_id is not None else set()
    step = max(1, len(session.entries) // 400)  # a sample of the rows of big sessions (branch() is O(depth))
    for number, (row, entry) in enumerate(zip(df.itertuples(index=False), session.entries, strict=True)):
        if number % step or entry.id not in session.by_id or session.by_id[entry.id] is not entry:
            continue
        assert row.depth == len(session.branch(entry.id)) - 1
        assert row.on_active_branch == (entry.id in active)
        assert row.is_leaf == (entry.id == session.leaf_id)
        assert row.children == len(session.children(entry.id))
        assert _none(row.label) == session.labels.get(entry.id)
        assert row.estimate == sum(estimate_tokens(m) for m in entry_messages(entry))
        assert row.line == entry.line
        assert row.kind == (f"message/{entry.role}" if entry.type == "message" else entry.type)
        assert len(row.preview) <= PREVIEW_WIDTH
        if entry.time_ms is not None:
            assert int(row.timestamp.value // 10**6) == entry.time_ms


def test_frames_survive_odd_entries() -> None:
    """Unusable ids, self-parents, orphans, null contents and bad numbers never crash a frame."""
    odd = Session.from_entries([
        {"type": "message", "id": ["x"], "parentId": None, "timestamp": "bad",
         "message": {"role": "user", "content": "hi"}},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": None}},
        {"type": "message", "id": "b", "parentId": "a", "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "assistant", "content": "text", "usage": {"input": "x"}}},
        {"type": "message", "id": "c", "parentId": "c", "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "assistant", "content": [1, None, {"type": "toolCall"}], "stopReason": "error"}},
        {"type": "compaction", "id": "d", "parentId": "b", "timestamp": None, "summary": None,
         "firstKeptEntryId": None, "tokensBefore": "many", "details": "x"},
        {"type": "weird", "id": "e", "parentId": "zz", "timestamp": "2026-01-01T00:00:02Z"},
    ])
    df = frames.entries(odd)
    assert df["depth"].tolist()[1:] == [0, 1, 0, 2, 0] and df["depth"].isna().tolist()[0]
    assert df["children"].tolist() == [0, 1, 1, 0, 0, 0]
    assert set(frames.branches(odd)["leaf_id"]) == {"c", "d", "e"}
    odd.leaf_id = "d"
    row = frames.compactions(odd).iloc[0]
    assert row["tokens_before"] is pd.NA and not row["first_kept_found"] and row["kept_entries"] == 0
    for name in ("messages", "context_trace", "calibration"):
        _check_declared(getattr(frames, name)(odd), name)
    assert not frames.sweep_keep_recent(odd, values=[0])["compactable"].any()


def test_entries_depth_of_a_deep_chain(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "deep-chain.jsonl")
    df = frames.entries(session)
    leaf_row = df[df["id"] == session.leaf_id].iloc[0]
    assert leaf_row["depth"] == len(session.branch()) - 1
    assert df["on_active_branch"].sum() == len(session.branch())


# ------------------------------------------------------------------------------ messages
def test_messages_match_projection(session: Session) -> None:
    projection = session.context()
    df = frames.messages(session)
    _check_declared(df, "messages")
    assert len(df) == len(projection.messages)
    assert df["role"].tolist() == [m.get("role") for m in projection.messages]
    assert df["source_id"].tolist() == [str(s) for s in projection.sources]
    assert df["estimate"].tolist() == projection.estimates
    assert df["index"].tolist() == list(range(len(df)))
    if len(df):
        assert df["cumulative_estimate"].iloc[-1] == sum(projection.estimates)
    assert df["tokens"].isna().all()
    status = {pe.entry.id: pe.status for pe in projection.entries}
    assert df["status"].tolist() == [status[s] for s in projection.sources]
    for row, message in zip(df.itertuples(index=False), projection.messages, strict=True):
        if message.get("role") == "assistant" and isinstance(message.get("usage"), Mapping):
            assert row.usage_total == usage_total(message["usage"])
            assert row.usage_usable == (message_usage(message) is not None)
            assert _none(row.stop_reason) == message.get("stopReason")
        else:
            assert row.usage_total is pd.NA
        assert len(row.preview) <= PREVIEW_WIDTH


def test_messages_from_projection_and_counter(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "compaction-chain.jsonl")
    projection = session.context()
    counter = get_counter()
    df = frames.messages(projection, counter=counter)
    assert df["tokens"].tolist() == counter.count_messages(projection.messages)
    assert df.attrs["counter"] == counter.name
    with pytest.raises(ValueError, match="leaf"):
        frames.messages(projection, leaf=session.leaf_id)
    with pytest.raises(TypeError):
        frames.messages("not a session")  # type: ignore[arg-type]


def test_messages_segments_after_compaction(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "compaction-chain.jsonl")
    projection = session.context()
    df = frames.messages(session)
    head = projection.compaction
    assert head is not None
    assert df.loc[df["segment"] == "summary", "source_id"].tolist() == [head.id]
    before = {e.id for e in projection.path[:projection.path.index(head)]}
    kept = df[df["segment"] == "kept"]
    assert len(kept) > 0 and set(kept["source_id"]) <= before
    assert not (set(df.loc[df["segment"] == "new", "source_id"]) & before)


def test_messages_status_with_edits(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "context-edits.jsonl")
    for leaf in [e.id for e in session.entries if e.type == "message"]:
        df = frames.messages(session, leaf)
        projection = session.context(leaf)
        replaced = set(projection.replaced_ids)
        assert set(df.loc[df["status"] == "replaced", "source_id"]) == {str(r) for r in replaced}


# ------------------------------------------------------------------------------ compactions
def test_compactions(session: Session) -> None:
    df = frames.compactions(session)
    _check_declared(df, "compactions")
    branch = session.branch() if session.leaf_id is not None else []
    positions = [i for i, e in enumerate(branch) if e.type == "compaction"]
    assert df["branch_index"].tolist() == positions
    previous = None
    for row, index in zip(df.itertuples(index=False), positions, strict=True):
        entry = branch[index]
        assert row.id == entry.id
        assert row.tokens_before == entry.data.get("tokensBefore")
        assert row.tokens_after == project_path(branch[:index + 1]).tokens
        assert row.tokens_before_projected == project_path(branch[:index]).tokens
        assert row.first_kept_entry_id == entry.data.get("firstKeptEntryId")
        assert _none(row.previous_id) == previous
        details = entry.data.get("details") or {}
        assert row.read_files == len(details.get("readFiles", []))
        assert row.modified_files == len(details.get("modifiedFiles", []))
        assert row.summary_tokens == estimate_tokens({"role": "compactionSummary", "summary": entry.data["summary"]})
        previous = entry.id


def test_compactions_known_values(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "compaction-chain.jsonl")
    df = frames.compactions(session)
    assert df["id"].tolist() == ["050385be", "799eac36"]
    assert df["tokens_before"].tolist() == [52000, 61000]
    assert df["first_kept_entry_id"].tolist() == ["f1d42f35", "3fc6dd22"]
    assert df["first_kept_found"].all()
    assert (df["tokens_after"] < df["tokens_before"]).all()
    assert df["previous_id"].tolist()[1] == "050385be"


def test_compactions_retain_none(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "retain-none.jsonl")
    df = frames.compactions(session)
    assert len(df) == 2
    # a compaction whose firstKeptEntryId is its own id keeps nothing from before it
    own = df[df["first_kept_entry_id"] == df["id"]]
    assert (own["kept_entries"] == 0).all()
    assert (~own["first_kept_found"]).all()


# ------------------------------------------------------------------------------ branches
def test_branches(session: Session) -> None:
    df = frames.branches(session)
    _check_declared(df, "branches")
    tips = {e.id for e in session.entries if e.id in session.by_id and not session.children(e.id)}
    assert set(df.loc[df["is_tip"], "leaf_id"]) == {str(t) for t in tips}
    if session.leaf_id is not None:
        active = df[df["is_active"]]
        assert active["leaf_id"].tolist() == [session.leaf_id]
    for row in df.iloc[::max(1, len(df) // 20)].itertuples(index=False):
        path = session.branch(row.leaf_id)
        assert row.length == len(path)
        assert row.tokens == session.context(row.leaf_id).tokens
        assert row.has_branch_summary == any(e.type == "branch_summary" for e in path)
        if not row.is_active and session.leaf_id is not None:
            assert _none(row.fork_id) == session.common_ancestor(row.leaf_id, session.leaf_id)


def test_branches_tree_basic(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "tree-basic.jsonl")
    df = frames.branches(session).set_index("leaf_id")
    assert len(df) == 3
    assert df.loc["2397c884", "has_branch_summary"]
    assert df.loc["2397c884", "label"] == "fork-point"
    assert df.loc["2397c884", "fork_id"] == "1e2feb89"
    assert df.loc["f57dd6ab", "is_active"]
    # moving the leaf to the middle of a branch adds it as a non-tip row
    session.leaf_id = "b62ac1fe"
    moved = frames.branches(session)
    assert moved.loc[moved["is_active"], "is_tip"].tolist() == [False]


# ------------------------------------------------------------------------------ context trace
def test_context_trace_matches_projection(session: Session) -> None:
    df = frames.context_trace(session)
    _check_declared(df, "context_trace")
    branch = session.branch() if session.leaf_id is not None else []
    checks = [i for i, e in enumerate(branch) if e.type == "message" and e.role == "assistant"]
    assert df.loc[df["kind"] == "check", "branch_index"].tolist() == checks
    assert df.loc[df["kind"] == "compaction", "branch_index"].tolist() == \
        [i for i, e in enumerate(branch) if e.type == "compaction"]
    if len(branch) > 400:
        df = df.iloc[::25]
    for row in df.itertuples(index=False):
        projection = project_path(branch[:row.branch_index + 1])
        assert row.tokens == projection.tokens, row
        if row.kind == "compaction":
            assert row.tokens_before == project_path(branch[:row.branch_index]).tokens
        size = projection.size
        expected = "estimate" if size.usage_index is None and not size.stale else "stale" if size.stale else "usage"
        assert row.size_source == expected


# ------------------------------------------------------------------------------ simulations
def _results(session: Session) -> list[SimulationResult]:
    stub = StubSummarizer()
    return [simulate(session, stub, context_window=window, settings=CompactionSettings(True, 4000, keep))
            for window, keep in ((20000, 4000), (24000, 8000))]


def test_simulation_frames(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "compaction-chain.jsonl")
    results = _results(session)
    assert sum(len(r.events) for r in results) >= 2
    events = frames.simulation_events(results)
    _check_declared(events, "simulation_events")
    assert len(events) == sum(len(r.events) for r in results)
    expected = [dict(run=run, **e.to_record()) for run, r in enumerate(results) for e in r.events]
    for row, record in zip(events.to_dict("records"), expected, strict=True):
        for key, value in record.items():
            assert row[key] == value
        assert row["tokens_removed"] == record["tokens_before"] - record["tokens_after"]
        assert row["threshold"] == results[row["run"]].threshold

    trace = frames.simulation_trace(results)
    _check_declared(trace, "simulation_trace")
    assert len(trace) == sum(len(r.trace) for r in results)
    single = frames.simulation_trace(results[0])
    assert single["tokens"].tolist() == [t[3] for t in results[0].trace]
    assert single["tokens_before"].tolist() == [t[2] for t in results[0].trace]
    assert single["compacted"].sum() == len(results[0].events)

    totals = frames.simulation_totals(results)
    _check_declared(totals, "simulation_totals")
    table = threshold_table(results)
    assert totals["compactions"].tolist() == [row["compactions"] for row in table]
    assert totals["peak_tokens"].tolist() == [row["peakTokens"] for row in table]
    assert [_none(v) for v in totals["first_trigger_entry_id"]] == [row["firstTriggerEntryId"] for row in table]

    with pytest.raises(TypeError):
        frames.simulation_events([object()])  # type: ignore[list-item]


# ------------------------------------------------------------------------------ calibration
def _entries(*messages: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    parent = None
    for number, message in enumerate(messages):
        entry_id = f"e{number:07d}"
        if message.get("type") == "compaction":
            out.append({**message, "id": entry_id, "parentId": parent,
                        "timestamp": f"2026-01-01T00:00:{number:02d}.000Z"})
        else:
            out.append({"type": "message", "id": entry_id, "parentId": parent,
                        "timestamp": f"2026-01-01T00:00:{number:02d}.000Z", "message": message})
        parent = entry_id
    return out


def _assistant(text: str, total: int) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop",
            "usage": {"input": total - 10, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total}}


def test_calibration_flags_cjk_and_json() -> None:
    english = "The parser now reads every line and reports damaged ones with their line numbers. " * 20
    cjk = "重构认证模块并保持登录流程的行为不变，同时为每个策略写测试。" * 40
    big_json = {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": False,
                "content": [{"type": "text", "text": str([{"id": i, "ok": True, "v": [i, i * 2]} for i in range(300)])
                             .replace("'", '"').replace("True", "true")}]}
    session = Session.from_entries(_entries({"role": "user", "content": english}, _assistant("ok", 500),
                                            {"role": "user", "content": cjk}, _assistant("好", 1700), big_json,
                                            _assistant("done", 4000)))
    df = frames.calibration(session)
    _check_declared(df, "calibration")
    counter = get_counter()
    if not counter.exact:
        pytest.skip("no tiktoken encoding available: counts equal the estimate")
    by_role = df.set_index("index")
    assert not by_role.loc[0, "outlier"]
    assert by_role.loc[2, "outlier"] and by_role.loc[2, "outlier_reason"] == "cjk"
    assert by_role.loc[2, "ratio"] < 1 / 1.5
    assert by_role.loc[4, "json_like"]
    assert by_role.loc[4, "outlier"] and by_role.loc[4, "outlier_reason"] == "json"
    assert df["tokens"].tolist() == counter.count_messages(session.context().messages)
    assert df.attrs["counter"] == counter.name


def test_calibration_turn_usage_deltas() -> None:
    session = Session.from_entries(_entries(
        {"role": "user", "content": "first question " * 10}, _assistant("a", 100),
        {"role": "user", "content": "second"}, _assistant("b", 160),
        {"role": "user", "content": "third"}, _assistant("c", 230),
    ))
    df = frames.calibration(session)
    turns = df.groupby("turn").first()
    assert turns["turn_usage_delta"].tolist() == [100, 60, 70]
    assert df["turn"].tolist() == [0, 0, 1, 1, 2, 2]
    assert turns.loc[1, "turn_estimate"] == df.loc[df["turn"] == 1, "estimate"].sum()


def test_calibration_delta_not_comparable_across_a_compaction() -> None:
    entries = _entries(
        {"role": "user", "content": "first question " * 10}, _assistant("a", 100),
        {"role": "user", "content": "second"}, _assistant("b", 160),
        {"type": "compaction", "summary": "## Goal\nshort", "firstKeptEntryId": "e0000002", "tokensBefore": 160},
        {"role": "user", "content": "third"}, _assistant("c", 90),
    )
    session = Session.from_entries(entries)
    df = frames.calibration(session)
    turns = df.groupby("turn").first()
    # turn 0 ends at "b", measured before the compaction: not comparable with this context
    assert turns["turn_usage_delta"].isna().tolist() == [True, True]


def test_calibration_on_unicode_session(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "unicode.jsonl")
    df = frames.calibration(session, tolerance=1.2, min_tokens=5)
    assert len(df) == len(session.context().messages)
    assert (df.loc[df["outlier"], "outlier_reason"].notna()).all()
    assert df.loc[~df["outlier"], "outlier_reason"].isna().all()


# ------------------------------------------------------------------------------ sweep
def test_sweep_keep_recent_matches_preparation(session: Session) -> None:
    if session.leaf_id is None:
        pytest.skip("reset leaf")
    values = [0, 1, 500, 2000, 8000, 20000, 10**9]
    df = frames.sweep_keep_recent(session, values=values)
    _check_declared(df, "sweep_keep_recent")
    assert df["keep_recent_tokens"].tolist() == values
    branch = session.branch()
    for row in df.itertuples(index=False):
        prep = prepare_compaction(branch, row.keep_recent_tokens)
        assert row.compactable == (prep is not None)
        assert row.tokens_before == session.context().tokens
        if prep is None:
            continue
        assert row.first_kept_entry_id == prep.first_kept_entry_id
        assert row.is_split_turn == prep.is_split_turn
        assert row.summarized_messages == len(prep.messages_to_summarize)
        assert row.turn_prefix_messages == len(prep.turn_prefix_messages)
        assert row.kept_tokens == prep.kept_tokens
        assert row.kept_entries == len(prep.kept_entry_ids)
        assert row.summarized_entries == len(prep.summarized_entry_ids)
        assert row.summarized_tokens == sum(estimate_tokens(m)
                                            for m in prep.messages_to_summarize + prep.turn_prefix_messages)
        assert row.read_files == len(prep.read_files) and row.modified_files == len(prep.modified_files)


def test_sweep_keep_recent_is_monotonic(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "compaction-chain.jsonl")
    df = frames.sweep_keep_recent(session, values=range(0, 40001, 1000))
    compactable = df[df["compactable"]]
    assert compactable["kept_tokens"].is_monotonic_increasing
    assert compactable["first_kept_index"].is_monotonic_decreasing


# ------------------------------------------------------------------------------ columns as data
def test_build_reads_each_column_with_its_getter() -> None:
    cols = (frames.Column("id", "string", "the id", lambda e: e["id"]),
            frames.Column("double", "Int64", "twice n", lambda e: e["n"] * 2, group="math"),
            frames.Column("n", "Int64", "n as is"))
    df = frames.build(iter([{"id": "a", "n": 1}, {"id": "b", "n": 2}]), cols)
    assert list(df.columns) == ["id", "double", "n"]
    assert df["double"].tolist() == [2, 4] and str(df["double"].dtype) == "Int64"
    assert list(frames.build([], cols).columns) == ["id", "double", "n"]
    assert [c.name for c in frames.select(cols, "math")] == ["double"]
    assert [c.name for c in frames.select(cols, ["n", "core"])] == ["id", "n"]
    with pytest.raises(ValueError, match="unknown column or group 'nope'"):
        frames.select(cols, "nope")


def test_frames_pick_column_groups(session: Session) -> None:
    usage = frames.messages(session, columns=["index", "usage"])
    assert list(usage.columns) == ["index"] + [c.name for c in frames.MESSAGE_COLUMNS if c.group == "usage"]
    full = frames.messages(session)
    pd.testing.assert_frame_equal(usage, full[list(usage.columns)])
    assert list(frames.entries(session, columns="tree").columns) == [
        "depth", "on_active_branch", "is_leaf", "label", "children"]
    for name in ("entries", "messages", "compactions", "calibration"):
        declared = frames.FRAMES[name]
        groups = {c.group for c in declared}
        assert "core" in groups and set(frames.column_table(name)["group"]) == groups


def test_leaf_means_the_same_as_in_the_core(shared_sessions: Path) -> None:
    """CURRENT (the default) is the current leaf; None is the empty leaf, as for Session.context."""
    session = pikit.load(shared_sessions / "before-compaction.jsonl")
    assert len(frames.messages(session)) == len(session.context().messages) > 0
    assert len(frames.messages(session, frames.CURRENT)) == len(session.context().messages)
    assert len(frames.messages(session, None)) == len(session.context(None).messages) == 0
    assert not frames.entries(session, None)["on_active_branch"].any()
    assert frames.compactions(session, None).empty and frames.context_trace(session, None).empty
    with pytest.raises(ValueError, match="leaf applies to a Session"):
        frames.messages(session.context(), None)


def test_frames_survive_weird_but_parseable_values() -> None:
    """Objects as timestamps, 30-digit numbers, odd ids and roles, lone surrogates and NUL: no traceback."""
    big = 10**30
    weird = Session.from_entries([
        {"type": "message", "id": "a", "parentId": None, "timestamp": {"at": 1},
         "message": {"role": "user", "content": "lone \ud800 surrogate and NUL \x00", "timestamp": {"x": 1}}},
        {"type": "message", "id": "b", "parentId": "a", "timestamp": big,
         "message": {"role": "assistant", "content": [{"type": "text", "text": "\udfff"}], "timestamp": big,
                     "usage": {"input": big, "output": big, "cacheRead": 0, "cacheWrite": 0, "totalTokens": big},
                     "stopReason": {"x": 1}, "provider": ["p"], "model": 5}},
        {"type": "message", "id": [1, 2], "parentId": "b", "timestamp": 1.5e300,
         "message": {"role": "oracle", "content": "?"}},
        {"type": "message", "id": {"k": "v"}, "parentId": ["b"], "timestamp": -big,
         "message": {"role": 7, "content": [None, 3]}},
        {"type": "message", "id": 42, "parentId": "b", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "toolResult", "toolName": {"n": 1}, "isError": "yes", "content": "\x00"}},
        {"type": "message", "id": "", "parentId": 42, "timestamp": float("nan"),
         "message": {"role": "user", "content": [{"type": "text", "text": big}]}},
        {"type": "compaction", "id": "c", "parentId": "b", "timestamp": big, "summary": "\ud800",
         "firstKeptEntryId": ["a"], "tokensBefore": big, "details": {"readFiles": [{"f": 1}, big]},
         "usage": {"totalTokens": big}},
    ])
    for leaf in (frames.CURRENT, "b", "c", 42, ""):
        if leaf is not frames.CURRENT and leaf not in weird.by_id:
            continue
        weird.leaf_id = weird.leaf_id if leaf is frames.CURRENT else leaf
        for name in ("entries", "messages", "compactions", "context_trace", "calibration"):
            df = getattr(frames, name)(weird)
            _check_declared(df, name)
        frames.branches(weird)
        frames.sweep_keep_recent(weird, values=[0, 10])
    weird.leaf_id = "c"
    row = frames.compactions(weird).iloc[0]
    assert row["tokens_before"] is pd.NA and row["timestamp"] is pd.NaT
    messages = frames.messages(weird, "b")
    assert messages["usage_input"].isna().all() and messages["timestamp"].isna().all()
    assert "\ufffd" in messages["preview"].iloc[0]


def test_column_declarations_need_no_pandas() -> None:
    """pikit._columns (Column, table, select) is core: a schema can use it without importing pandas."""
    code = ("import sys, pikit._columns as c\n"
            "cols = c.table('''\n  a  Int64  the a\n  when  datetime64[ms, UTC]  a time,\n     two spaces apart\n''')\n"
            "assert [(x.name, x.dtype, x.description) for x in cols] == "
            "[('a', 'Int64', 'the a'), ('when', 'datetime64[ms, UTC]', 'a time, two spaces apart')]\n"
            "assert all(x.dtype in c.DTYPES for x in cols)\n"
            "assert 'pandas' not in sys.modules and 'numpy' not in sys.modules\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert frames.Column is pikit._columns.Column


# ------------------------------------------------------------------------------ evaluations
def test_evaluation_frames_have_their_declared_columns() -> None:
    session = pikit.load(SAMPLES / "refactor-auth.jsonl")
    per_compaction = frames.evaluations(session)
    _check_declared(per_compaction, "evaluations")
    facts = frames.evaluation_facts(session)
    _check_declared(facts, "evaluation_facts")
    assert len(per_compaction) == 2 and per_compaction["facts"].sum() == len(facts)
    assert per_compaction["kept"].sum() == facts["kept"].sum()
    first = pikit.evaluate(session)[0]  # type: ignore[index]
    row = per_compaction.iloc[0]
    assert row["compaction_id"] == first.compaction_id and row["recall"] == first.recall["overall"]
    assert row["key_recall"] == first.key_recall and row["key_kept"] / row["key_facts"] == first.key_recall
    assert per_compaction["key_facts"].sum() == (facts["importance"] == "key").sum()
    assert set(facts["importance"]) == {"key", "minor"}
    assert len(frames.evaluation_facts(first)) == len(first.facts)
    with pytest.raises(TypeError, match="Evaluation objects"):
        frames.evaluations(["x"])  # type: ignore[list-item]


def test_show_draws_missing_values_plainly_and_text_on_the_left() -> None:
    """frames.show: a Styler that says "—" for every kind of missing value, aligns text columns (and their headings)
    left, leaves numbers right, escapes every value and label, and does not change the frame."""
    import pandas as pd

    frame = pd.DataFrame({"preview": ["<script>alert(1)</script>", None],
                          "tokens": pd.array([1_200, None], dtype="Int64"),
                          "ratio": [0.5, float("nan")]}, index=["<b>a</b>", "b"])
    html = frames.show(frame).to_html()
    assert "<NA>" not in html and "&lt;NA&gt;" not in html and "nan" not in html and "None" not in html
    assert html.count(">—<") == 3
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>a</b>" not in html
    left = re.findall(r"th\.col(\d+) \{\s*text-align: left", html)
    assert left == ["0"]  # the preview heading; the numbers' headings keep pandas' alignment
    assert frame["tokens"].isna().sum() == 1  # the frame is unchanged
