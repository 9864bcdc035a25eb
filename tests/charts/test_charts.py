"""pikit.charts: every chart is a Figure with the expected artists, drawn headless (Agg)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

import pikit
from pikit import Session, charts, estimate_tokens, frames
from pikit.compaction import CompactionSettings, SimulationResult, SummaryRequest, SummaryResult, simulate
from tests.conftest import REPO, SESSIONS


class StubSummarizer:
    """A deterministic stand-in summarizer (the charts are under test, not the summary)."""

    name = "stub"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        return SummaryResult(f"## Goal\nstub summary of {len(request.messages)} messages", None)


@pytest.fixture(scope="module")
def chain() -> Session:
    return pikit.load(SESSIONS / "compaction-chain.jsonl")


@pytest.fixture(scope="module")
def results(chain: Session) -> list[SimulationResult]:
    return [simulate(chain, StubSummarizer(), context_window=window, settings=CompactionSettings(True, 4000, keep))
            for window, keep in ((20000, 4000), (24000, 8000))]


def _by_gid(fig: Figure, gid: str) -> list[Any]:
    return [a for a in fig.findobj() if getattr(a, "get_gid", lambda: None)() == gid]


def _render(fig: Figure) -> None:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=40)
    assert buffer.getvalue().startswith(b"\x89PNG")


def _marker_points(fig: Figure) -> list[int]:
    return [int(np.size(line.get_xdata())) for line in _by_gid(fig, "compactions") if isinstance(line, Line2D)]


def _texts(fig: Figure) -> list[str]:
    out = []
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None:
            out += [t.get_text() for t in legend.get_texts()]
        out += [t.get_text() for t in ax.get_xticklabels()]
    return out


# ------------------------------------------------------------------------------ context growth
def test_context_growth_recorded(chain: Session) -> None:
    fig = charts.context_growth(chain)
    assert isinstance(fig, Figure)
    compactions_on_branch = sum(1 for e in chain.branch() if e.type == "compaction")
    assert _marker_points(fig) == [compactions_on_branch]
    assert _by_gid(fig, "usage") and _by_gid(fig, "estimate")
    assert not _by_gid(fig, "threshold")
    _render(fig)


def test_context_growth_simulated_markers_equal_events(chain: Session, results: list[SimulationResult]) -> None:
    assert all(r.events for r in results)
    fig = charts.context_growth(*results)
    assert _marker_points(fig) == [len(r.events) for r in results]
    single = charts.context_growth(results[0])
    assert _marker_points(single) == [len(results[0].events)]
    threshold = _by_gid(single, "threshold")
    assert len(threshold) == 1 and threshold[0].get_ydata()[0] == results[0].threshold
    # the sawtooth: one point per check, plus one per compaction
    context = _by_gid(single, "context")[0]
    assert len(context.get_xdata()) == len(results[0].trace) + len(results[0].events)
    _render(fig)


def test_context_growth_mixed_and_frames(chain: Session, results: list[SimulationResult]) -> None:
    fig = charts.context_growth(chain, results, context_window=20000, reserve_tokens=4000)
    assert _marker_points(fig) == [2] + [len(r.events) for r in results]
    assert len(_by_gid(fig, "threshold")) == 1 and len(_by_gid(fig, "window")) == 1
    from_frame = charts.context_growth(frames.simulation_trace(results))
    assert _marker_points(from_frame) == [len(r.events) for r in results]
    recorded_frame = charts.context_growth(frames.context_trace(chain))
    assert _marker_points(recorded_frame) == [2]
    assert all(len(t) <= 60 for t in _texts(fig))


def test_context_growth_errors_and_empty() -> None:
    with pytest.raises(TypeError):
        charts.context_growth()
    with pytest.raises(TypeError):
        charts.context_growth(42)
    fig = charts.context_growth(Session.from_entries([]))
    assert _marker_points(fig) == [0]
    _render(fig)


# ------------------------------------------------------------------------------ compactions
def test_compactions_bars(chain: Session, results: list[SimulationResult]) -> None:
    df = frames.compactions(chain)
    fig = charts.compactions(df)
    ax = fig.axes[0]
    assert len(ax.containers) == 2
    heights = [[p.get_height() for p in container] for container in ax.containers]
    assert heights == [df["tokens_before"].tolist(), df["tokens_after"].tolist()]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["#1 050385be", "#2 799eac36"]
    events = frames.simulation_events(results)
    fig2 = charts.compactions(events)
    assert sum(len(c) for c in fig2.axes[0].containers) == 2 * len(events)
    _render(fig)


def test_compactions_empty() -> None:
    fig = charts.compactions(frames.compactions(Session.from_entries([])))
    assert fig.axes[0].texts and "no compactions" in fig.axes[0].texts[0].get_text()
    _render(fig)


# ------------------------------------------------------------------------------ calibration
def test_calibration_chart() -> None:
    session = pikit.load(SESSIONS / "unicode.jsonl")
    df = frames.calibration(session, tolerance=1.2, min_tokens=5)
    fig = charts.calibration(df)
    assert len(fig.axes) == 2
    outliers = _by_gid(fig, "outliers")
    assert len(outliers) == 1 and len(outliers[0].get_offsets()) == int(df["outlier"].sum())
    messages = _by_gid(fig, "messages")[0]
    assert len(messages.get_offsets()) == int((~df["outlier"]).sum())
    turns = df["turn"].nunique()
    assert len(_by_gid(fig, "turn_estimate")) == turns
    assert len(fig.axes[1].containers[0]) == turns
    _render(fig)
    empty = charts.calibration(frames.calibration(Session.from_entries([])))
    _render(empty)


# ------------------------------------------------------------------------------ budget
def test_budget(chain: Session) -> None:
    projection = chain.context()
    fig = charts.budget(projection, 80000, 16384, 20000)
    segments = charts.budget_segments(projection)
    assert set(segments) == {"system", "summary", "kept", "new"}
    system = projection.system_message
    expected_total = (estimate_tokens(system) if system else 0) + sum(
        e for m, e in zip(projection.messages, projection.estimates, strict=True) if m.get("role") != "system")
    assert sum(segments.values()) == expected_total
    for key, value in segments.items():
        bars = _by_gid(fig, f"budget:{key}")
        assert len(bars) == 1
        assert bars[0].get_width() == value
    threshold = _by_gid(fig, "threshold")[0]
    assert threshold.get_xdata()[0] == 80000 - 16384
    assert _by_gid(fig, "window")[0].get_xdata()[0] == 80000
    keep = _by_gid(fig, "keep_recent")[0]
    assert keep.get_x() + keep.get_width() == sum(segments.values())
    assert segments["summary"] > 0 and segments["kept"] > 0 and segments["new"] > 0
    _render(fig)


def test_budget_without_compaction() -> None:
    session = pikit.load(SESSIONS / "system-replay.jsonl")
    leaf = next(e.id for e in session.branch() if e.type == "compaction")
    projection = session.context(session.by_id[leaf].parent_id)
    segments = charts.budget_segments(projection)
    assert segments["summary"] == 0 and segments["kept"] == 0
    assert segments["system"] > 0
    _render(charts.budget(projection, 200000, 16384, 20000))


# ------------------------------------------------------------------------------ sweep
def test_keep_recent_sweep(chain: Session) -> None:
    df = frames.sweep_keep_recent(chain, values=range(0, 30001, 500))
    fig = charts.keep_recent_sweep(df)
    compactable = df[df["compactable"]]
    kept = _by_gid(fig, "kept_tokens")[0]
    assert list(kept.get_xdata()) == compactable["keep_recent_tokens"].tolist()
    assert list(kept.get_ydata()) == compactable["kept_tokens"].tolist()
    split = _by_gid(fig, "split_turn")[0]
    assert len(split.get_xdata()) == int(compactable["is_split_turn"].sum())
    assert len(fig.axes) == 2
    _render(fig)
    nothing = charts.keep_recent_sweep(frames.sweep_keep_recent(chain, values=[10**9]))
    assert "nothing to compact" in nothing.axes[0].texts[0].get_text()


# ------------------------------------------------------------------------------ hygiene
def test_charts_never_use_pyplot() -> None:
    code = ("import sys, pikit\n"
            "from pikit import charts, frames\n"
            "s = pikit.load(sys.argv[1])\n"
            "charts.context_growth(s); charts.compactions(frames.compactions(s))\n"
            "charts.budget(s.context(), 80000, 16384, 20000)\n"
            "print('matplotlib.pyplot' in sys.modules)\n")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    result = subprocess.run([sys.executable, "-c", code, str(SESSIONS / "compaction-chain.jsonl")], cwd=REPO,
                            capture_output=True, text=True, check=True, env=env)
    assert result.stdout.strip() == "False"


def test_long_session_text_is_shortened() -> None:
    long_id = "x" * 300
    entries: list[dict[str, Any]] = [
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "hello " * 1000}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": "stop"}},
        {"type": "compaction", "id": long_id, "parentId": "a1", "timestamp": "2026-01-01T00:00:02.000Z",
         "summary": "s " * 5000, "firstKeptEntryId": "a1", "tokensBefore": 5000},
    ]
    session = Session.from_entries(entries)
    fig = charts.compactions(frames.compactions(session))
    assert all(len(t) <= 20 for t in _texts(fig))
    df = pd.DataFrame(frames.compactions(session))
    assert len(df) == 1
    _render(fig)


def test_evaluation_bars_kept_and_lost_per_kind(chain: Session) -> None:
    from pikit.compaction import Evaluation, Fact

    made = Evaluation("c1", "pikit", 100, 10, [Fact("url", "https://a.example", "e1"), Fact("command", "ls", "e1"),
                                               Fact("command", "make", "e2"), Fact("command", "pytest", "e3")],
                      [False, True, False, True])
    fig = charts.evaluation(frames.evaluation_facts(made))
    ax = fig.axes[0]
    kept, lost = (_by_gid(fig, gid) for gid in ("facts_kept", "facts_lost"))
    labels = {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels()}
    assert set(labels) == {"command", "url"} and labels["command"] > labels["url"]  # FACT_KINDS order, top down
    assert [p.get_width() for p in kept] == [2, 0] and [p.get_width() for p in lost] == [1, 1]
    assert [t.get_text() for t in ax.texts] == ["67% kept", "0% kept"]
    assert "2 of 4 kept (50%)" in ax.get_title()
    _render(fig)

    several = charts.evaluation(frames.evaluation_facts(chain))
    recorded = pikit.evaluate(chain)
    assert isinstance(recorded, list)
    bars = _by_gid(several, "facts_kept")
    assert len(bars) == sum(len({f.kind for f in e.facts}) for e in recorded)
    assert sum(p.get_width() for p in bars) == sum(sum(e.kept) for e in recorded)
    _render(several)


def test_evaluation_without_facts() -> None:
    fig = charts.evaluation(frames.evaluation_facts([]))
    assert "no fact in the replaced span" in [t.get_text() for t in fig.axes[0].texts]
