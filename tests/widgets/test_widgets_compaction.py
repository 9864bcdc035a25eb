"""CompactionPanel: live preview, running with a summarizer, where it writes, errors in the panel."""

from __future__ import annotations

from pathlib import Path

import pytest

import pikit
from pikit.compaction import Settings, Summarizer
from pikit.errors import SummarizerError
from pikit.widgets import CompactionPanel, compaction_history
from pikit.widgets._views.compaction import EMPTY_CHART, ChartGroup, CompactionPoint, RunSettings, render_chart
from tests.widgets.summarizers import FailingSummarizer, FakeSummarizer, files_in


def _panel_writing_to(out: Path, source: Path, summarizer: Summarizer) -> CompactionPanel:
    """A panel on ``source`` writing into the new folder ``out``, keeping the last 2,000 tokens."""
    out.mkdir()
    panel = CompactionPanel(pikit.load(source), settings=Settings({}), output_dir=out, summarizer=summarizer)
    panel.keep_recent_tokens = 2_000
    return panel


def test_preview_follows_the_sliders(compaction_chain: pikit.Session, tmp_path: Path) -> None:
    panel = CompactionPanel(compaction_chain, settings=Settings({}), output_dir=tmp_path)
    assert (panel.context_window, panel.reserve_tokens, panel.keep_recent_tokens) == (200_000, 16_384, 20_000)
    assert panel.preparation is None  # everything after the last compaction fits in 20 000 tokens
    assert "Nothing to compact" in panel.preview.value
    panel.keep_slider.value = 2_000  # what dragging the slider does
    assert panel.keep_recent_tokens == 2_000 == panel.budget.keep_recent_tokens
    first = panel.preparation
    assert first is not None and first.first_kept_entry_id in panel.preview.value
    assert "pikit-cut-kept" in panel.preview.value and "pikit-cut-summarized" in panel.preview.value
    panel.keep_slider.value = 500
    assert panel.preparation is not None
    assert panel.preparation.first_kept_index >= first.first_kept_index
    panel.reserve_slider.value = 190_000  # threshold 10 000 < context size: Pi would compact
    assert "Pi would compact here" in panel.preview.value
    assert panel.preview_ms < 500


def test_model_picker_loads_overrides_and_windows(compaction_chain: pikit.Session, tmp_path: Path) -> None:
    settings = Settings({"compaction": {"keepRecentTokens": 9000, "modelOverrides": {
        "openai/gpt-4o": {"reserveTokens": 4096, "keepRecentTokens": 1500}}}})
    panel = CompactionPanel(compaction_chain, settings=settings, output_dir=tmp_path)
    values = [v for _, v in panel.model_picker.options]
    assert values[0] == "" and "openai/gpt-4o" in values and "anthropic/claude-haiku-4-5" in values
    assert panel.keep_recent_tokens == 9000
    panel.model_picker.value = "openai/gpt-4o"
    assert (panel.context_window, panel.reserve_tokens, panel.keep_recent_tokens) == (128_000, 4096, 1500)
    assert (panel.window_slider.value, panel.reserve_slider.value, panel.keep_slider.value) == (128_000, 4096, 1500)
    assert panel.budget.model == "openai/gpt-4o" and panel.budget.context_window == 128_000
    panel.model_picker.value = ""
    assert panel.context_window == 200_000 and panel.keep_recent_tokens == 9000
    panel.window_slider.value = 50_000.0  # dragging the (logarithmic) window slider
    assert panel.context_window == 50_000 == panel.budget.context_window
    assert panel.keep_slider.max == 50_000


def test_run_writes_a_new_file_and_charts_it(compaction_copy: Path, tmp_path: Path) -> None:
    original = compaction_copy.read_bytes()
    fake = FakeSummarizer()
    out = tmp_path / "out"
    panel = _panel_writing_to(out, compaction_copy, fake)
    seen = []
    panel.on_compacted(lambda result, path: seen.append((result.entry["id"], path)))
    panel.run_button.click()
    assert panel.status == "done", panel.message.value
    assert compaction_copy.read_bytes() == original  # the source is untouched
    written = Path(panel.last_output or "")
    assert written.parent == out and written.is_file()
    new_id = panel.last_result.entry["id"]
    assert seen == [(new_id, str(written))]
    reloaded = pikit.load(written)
    assert reloaded.by_id[new_id].type == "compaction"
    assert reloaded.by_id[new_id].data["summary"].startswith("## Goal\nRefactor the auth module.")
    assert panel.result_session is not None
    assert fake.requests and fake.requests[0].kind == "history"
    # The chart now shows the two compactions of the file and the new one.
    points = panel.history
    assert [p.id for p in points] == ["050385be", "799eac36", new_id]
    assert points[-1].new and points[-1].tokens_before == panel.last_result.tokens_before
    assert points[-1].tokens_after == panel.last_result.tokens_after
    assert panel.chart.value.count('class="pikit-chart-bar"') == 6
    assert "tokensBefore" in panel.message.value and "pikit-compaction-done" in panel.message.value
    assert panel.progress.value == panel.progress.max
    # The box shows the file just written, under "written to"; a second run goes to another new file.
    assert panel.output.value == str(written) and panel.output.description == "written to"
    panel.run()
    assert panel.status == "done" and panel.runs[-1].path != str(written)
    assert panel.output.value == panel.runs[-1].path and panel.output.description == "written to"


def test_in_place_appends_to_the_source(compaction_copy: Path, tmp_path: Path) -> None:
    session = pikit.load(compaction_copy)
    before = compaction_copy.read_bytes()
    panel = CompactionPanel(session, settings=Settings({}), output_dir=tmp_path, summarizer=FakeSummarizer())
    panel.keep_recent_tokens = 2_000
    panel.in_place_box.value = True
    assert panel.output.value == str(compaction_copy) and panel.output.disabled
    panel.run()
    assert panel.status == "done", panel.message.value
    after = compaction_copy.read_bytes()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1
    assert panel.last_output == str(compaction_copy)
    assert files_in(tmp_path) == ["source"]  # nothing else was written


def test_failing_summarizer_shows_error_and_writes_nothing(compaction_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    panel = _panel_writing_to(out, compaction_copy, FailingSummarizer())
    panel.run_button.click()  # never raises
    assert panel.status == "error"
    assert "pikit-error" in panel.message.value and "stopped for length" in panel.message.value
    assert "nothing was written" in panel.message.value
    assert files_in(out) == []
    assert not panel.run_button.disabled and panel.progress.bar_style == "danger"


def test_factory_errors_and_nothing_to_compact_stay_in_the_panel(compaction_chain: pikit.Session,
                                                                  tmp_path: Path) -> None:
    def broken_factory(name: str, model: str | None, base_url: str | None) -> FakeSummarizer:
        raise SummarizerError(f"cannot build {name}: no key")

    panel = CompactionPanel(compaction_chain, settings=Settings({}), output_dir=tmp_path,
                            summarizer_factory=broken_factory)
    panel.keep_recent_tokens = 2_000
    panel.summarizer_picker.value = "openai"
    assert panel.run() is None
    assert panel.status == "error" and "cannot build openai" in panel.message.value
    # Nothing to compact with the default keepRecentTokens: an error in the panel, not an exception.
    panel2 = CompactionPanel(compaction_chain, settings=Settings({}), output_dir=tmp_path,
                             summarizer=FakeSummarizer())
    panel2.run()
    assert panel2.status == "error" and "nothing to compact" in panel2.message.value
    # The reset leaf.
    panel3 = CompactionPanel(compaction_chain, None, settings=Settings({}), output_dir=tmp_path,
                             summarizer=FakeSummarizer())
    panel3.run()
    assert panel3.status == "error" and "reset" in panel3.message.value
    assert files_in(tmp_path) == []


def test_existing_output_is_never_overwritten(compaction_copy: Path, tmp_path: Path) -> None:
    session = pikit.load(compaction_copy)
    target = tmp_path / "taken.jsonl"
    target.write_text("keep me\n")
    panel = CompactionPanel(session, settings=Settings({}), output_dir=tmp_path, summarizer=FakeSummarizer())
    panel.keep_recent_tokens = 2_000
    panel.output.value = str(target)
    panel.run()
    assert panel.status == "error" and "already exists" in panel.message.value
    assert target.read_text() == "keep me\n"


def test_offline_summarizer_by_default(compaction_copy: Path, tmp_path: Path) -> None:
    pytest.importorskip("pikit.llm._offline")
    session = pikit.load(compaction_copy)
    panel = CompactionPanel(session, settings=Settings({}), output_dir=tmp_path)
    assert panel.summarizer_picker.value == "offline"
    panel.keep_recent_tokens = 2_000
    panel.run()
    assert panel.status == "done", panel.message.value
    assert "## Goal" in panel.last_result.entry["summary"]


def test_leaf_change_updates_preview_and_chart(compaction_chain: pikit.Session, tmp_path: Path) -> None:
    panel = CompactionPanel(compaction_chain, settings=Settings({}), output_dir=tmp_path)
    assert len(compaction_history(compaction_chain, compaction_chain.leaf_id)) == 2
    panel.leaf_id = "c85b60a0"  # before any compaction
    assert "No compaction on this branch yet" in panel.chart.value
    panel.keep_recent_tokens = 100
    assert panel.preparation is not None and panel.preparation.previous_compaction is None


def test_chart_escapes_and_scales() -> None:
    html = render_chart([ChartGroup("<i>branch</i>", (CompactionPoint("<b>x</b>", 100_000, 5_000, "k"),)),
                         ChartGroup("run 1", (CompactionPoint("y", 50_000, 2_000, "k", new=True),),
                                    RunSettings(4000, 3000, 16384, "<script>"))], threshold=80_000)
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert "<i>" not in html and "<script>" not in html and "&lt;script&gt;" in html
    assert "pikit-chart-threshold" in html and html.count('class="pikit-chart-group') == 2
    assert "window 16.4k · keep 4k · reserve 3k" in html


def test_a_run_at_another_window_is_drawn_against_its_own_threshold() -> None:
    """One threshold line crosses the chart only when every group shares it; a run made at another context
    window (or reserve) gets its own line, labelled, inside its group, and its caption names the window."""
    branch = ChartGroup("this branch", (CompactionPoint("a", 30_000, 5_000, "k"),))
    same = ChartGroup("run 1", (CompactionPoint("b", 30_000, 4_000, "k", new=True),),
                      RunSettings(1000, 3000, 24_000, "offline"))
    other = ChartGroup("run 2", (CompactionPoint("c", 15_000, 2_000, "k", new=True),),
                       RunSettings(1000, 3000, 16_384, "offline"))
    shared = render_chart([branch, same], threshold=21_000)
    assert shared.count('class="pikit-chart-threshold"') == 1 and "threshold 21k" in shared
    mixed = render_chart([branch, same, other], threshold=21_000)
    assert mixed.count('class="pikit-chart-threshold"') == 3
    assert mixed.count("threshold 21k") == 2 and "threshold 13.4k" in mixed
    assert "window 16.4k · keep 1k · reserve 3k · offline" in mixed
    unknown = render_chart([ChartGroup("run 1", (CompactionPoint("d", 9_000, 1_000, "k", new=True),),
                                       RunSettings(1000, 3000, None, "offline"))])
    assert "window unknown" in unknown and "pikit-chart-threshold" not in unknown


def test_the_empty_chart_says_the_callers_text_escaped() -> None:
    assert EMPTY_CHART in render_chart([ChartGroup("this branch", ())])
    html = render_chart([ChartGroup("this branch", ())], 1000, empty="<b>none</b> here")
    assert "&lt;b&gt;none&lt;/b&gt; here" in html and EMPTY_CHART not in html and "<b>" not in html


def test_every_run_stays_in_the_chart_until_cleared(compaction_copy: Path, tmp_path: Path) -> None:
    panel = _panel_writing_to(tmp_path / "out", compaction_copy, FakeSummarizer())
    calls: list[str] = []
    panel.on_compacted(lambda result, path: calls.append(path))
    panel.run()
    assert panel.compared.value.count('class="pikit-budget"') == 2  # before and after, one above the other
    assert "Before run 1" in panel.compared.value and "After run 1" in panel.compared.value
    panel.keep_recent_tokens, panel.reserve_tokens = 500, 8_000
    panel.run()
    assert [r.number for r in panel.runs] == [1, 2] and len(calls) == 2
    groups = panel.chart_groups
    assert [g.label for g in groups] == ["this branch", "run 1", "run 2"]
    assert [g.settings.keep_recent_tokens for g in groups[1:] if g.settings] == [2_000, 500]
    assert [g.settings.reserve_tokens for g in groups[1:] if g.settings] == [16_384, 8_000]
    chart = panel.chart.value
    assert chart.count('class="pikit-chart-group pikit-chart-run"') == 2
    assert "keep 2k · reserve 16.4k · fake" in chart and "keep 500 · reserve 8k · fake" in chart
    assert chart.count("window 200k · keep") == 2
    assert 'width="100%"' in chart
    frame = panel.runs_frame()
    assert list(frame["keep_recent_tokens"]) == [2_000, 500]
    assert list(frame["tokens_after"]) == [r.after.tokens for r in panel.runs]
    panel.reserve_tokens = 1_000  # the before/after view keeps the settings the run used
    assert "reserve 8,000" in panel.compared.value and "reserve 1,000" not in panel.compared.value
    run = panel.last_run
    assert run is not None and panel.last_result is run.result and panel.result_session is run.session
    assert not [r for r in run.diff.changes() if r.role == "system"]
    frame = run.diff_frame()
    assert len(frame) == len(run.diff.rows) and set(frame["note"]) >= {"summary", ""}
    panel.clear_runs()
    assert panel.runs == [] and panel.compared.value == ""
    assert panel.chart.value.count("pikit-chart-run") == 0 and panel.clear_button.disabled
    panel.run()
    assert [r.number for r in panel.runs] == [3]  # numbers go on after a clear


def test_failing_compacted_callback_is_shown_not_raised(compaction_copy: Path, tmp_path: Path) -> None:
    session = pikit.load(compaction_copy)
    panel = CompactionPanel(session, settings=Settings({}), output_dir=tmp_path, summarizer=FakeSummarizer())
    panel.on_compacted(lambda result, path: 1 / 0)
    panel.keep_recent_tokens = 2_000
    panel.run()
    assert panel.status == "done"
    assert "ZeroDivisionError" in panel.callback_errors.outputs[0]["data"]["text/html"]


class VerboseSummarizer(FakeSummarizer):
    """Writes a summary far larger than anything it summarizes."""

    name = "verbose"

    def __init__(self) -> None:
        super().__init__("## Goal\n" + "word " * 200_000)


def test_a_larger_summary_is_refused_with_the_numbers_until_allowed(compaction_copy: Path,
                                                                    tmp_path: Path) -> None:
    original = compaction_copy.read_bytes()
    verbose = VerboseSummarizer()
    out = tmp_path / "out"
    panel = _panel_writing_to(out, compaction_copy, verbose)
    assert panel.write_anyway_button.layout.display == "none"
    panel.run_button.click()  # never raises
    assert panel.status == "refused" and panel.last_result is None
    refused = panel.refused_result
    assert refused is not None and refused.summary_tokens > refused.replaced_tokens
    assert files_in(out) == [] and compaction_copy.read_bytes() == original  # nothing written
    # The numbers, as the command line gives them.
    message = panel.message.value
    assert "is larger than what it replaces" in message and "nothing written" in message
    assert f"({refused.summary_tokens:,} tokens)" in message and f"({refused.replaced_tokens:,} tokens)" in message
    assert (f"by Pi&#x27;s estimate, the context would grow from {refused.estimated_before:,} to "
            f"{refused.tokens_after:,} tokens") in message
    assert "allow a larger summary" in message and "--allow-larger-summary" not in message
    assert panel.write_anyway_button.layout.display is None
    # Write it anyway: the refused summary, without asking the summarizer again.
    panel.write_anyway_button.click()
    assert panel.status == "done", panel.message.value
    assert len(verbose.requests) == 1
    assert panel.last_result is refused and panel.refused_result is None
    written = Path(panel.last_output or "")
    assert written.parent == out and pikit.load(written).leaf.id == refused.entry["id"]
    assert panel.write_anyway_button.layout.display == "none"
    assert panel.write_anyway() is None  # nothing pending any more
    # Allowed from the start: a run writes it at once.
    panel.allow_larger_box.value = True
    assert panel.allow_larger_summary
    assert panel.run() is not None and panel.status == "done"
    assert len(files_in(out)) == 2 and compaction_copy.read_bytes() == original


def test_a_refused_summary_is_dropped_when_the_cut_changes(compaction_copy: Path, tmp_path: Path) -> None:
    session = pikit.load(compaction_copy)
    panel = CompactionPanel(session, settings=Settings({}), output_dir=tmp_path, summarizer=VerboseSummarizer())
    panel.keep_recent_tokens = 2_000
    panel.in_place_box.value = True
    before = compaction_copy.read_bytes()
    panel.run()
    assert panel.status == "refused" and compaction_copy.read_bytes() == before
    panel.keep_recent_tokens = 3_000
    assert panel.refused_result is None and panel.write_anyway_button.layout.display == "none"
    assert panel.write_anyway() is None and compaction_copy.read_bytes() == before
    assert files_in(tmp_path) == ["source"]
