"""The parts of the compaction panel, each alone: the settings box, the preview, the runner, the history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pikit import Session, load
from pikit.compaction import Settings
from pikit.widgets import CompactionRun
from pikit.widgets._compaction_history import CompactionHistory
from pikit.widgets._compaction_preview import CompactionPreview
from pikit.widgets._compaction_run import CompactionRunner
from pikit.widgets._compaction_settings import CompactionSettingsBox
from pikit.widgets._state import state_for
from pikit.widgets._views.budget import budget_view
from pikit.widgets._views.compaction import RunSettings
from pikit.widgets._views.runs import RunDone, before_after, render_before_after, render_run_done, render_run_step
from tests.widgets.summarizers import FailingSummarizer, FakeSummarizer, files_in

SONNET = "anthropic/claude-sonnet-4-5"
OVERRIDES = Settings({"compaction": {"keepRecentTokens": 9000, "modelOverrides": {
    "openai/gpt-4o": {"reserveTokens": 4096, "keepRecentTokens": 1500}}}})


# ---------------------------------------------------------------------------------- settings box
def test_the_settings_box_takes_the_settings_and_the_values_given() -> None:
    box = CompactionSettingsBox(SONNET, settings=OVERRIDES)
    assert (box.context_window, box.reserve_tokens, box.keep_recent_tokens) == (200_000, 16_384, 9000)
    assert (box.keep_slider.value, box.reserve_slider.value, round(box.window_slider.value)) == (9000, 16_384, 200_000)
    assert box.problem == "" and box.model == ""
    values = [value for _, value in box.model_picker.options]
    assert values[0] == "" and values[1] == "openai/gpt-4o" and SONNET in values
    assert SONNET in box.model_picker.options[0][0]  # "session model (…)"
    given = CompactionSettingsBox(SONNET, settings=OVERRIDES, context_window=50_000, keep_recent_tokens=700)
    assert (given.context_window, given.reserve_tokens, given.keep_recent_tokens) == (50_000, 16_384, 700)


def test_picking_a_model_loads_its_settings_and_the_sliders_follow() -> None:
    leaf_models = iter(["openai/gpt-4o"])
    box = CompactionSettingsBox(SONNET, settings=OVERRIDES, leaf_model=lambda: next(leaf_models))
    seen: list[str] = []
    box.observe(lambda c: seen.append(c["name"]), names=["model", "context_window", "reserve_tokens"])
    box.model_picker.value = "openai/gpt-4o"
    assert (box.model, box.context_window, box.reserve_tokens, box.keep_recent_tokens) == (
        "openai/gpt-4o", 128_000, 4096, 1500)
    assert (round(box.window_slider.value), box.reserve_slider.value, box.keep_slider.value) == (128_000, 4096, 1500)
    assert seen == ["model", "context_window", "reserve_tokens"]  # set together, then told
    box.model_picker.value = ""  # the session model: what the leaf uses now (here gpt-4o)
    assert box.model == "" and (box.context_window, box.keep_recent_tokens) == (128_000, 1500)


def test_the_sliders_set_the_settings() -> None:
    box = CompactionSettingsBox(SONNET, settings=Settings({}))
    box.keep_slider.value = 3000
    box.reserve_slider.value = 5000
    box.window_slider.value = 50_000.0  # the logarithmic slider
    assert (box.keep_recent_tokens, box.reserve_tokens, box.context_window) == (3000, 5000, 50_000)
    assert box.keep_slider.max == box.reserve_slider.max == 50_000
    box.context_window = 1_000_000  # and follow them
    assert round(box.window_slider.value) == 1_000_000 and box.keep_slider.max == 1_000_000


def test_the_settings_box_says_why_the_settings_cannot_be_read() -> None:
    box = CompactionSettingsBox(SONNET, settings=Settings({"compaction": {"modelOverrides": 5}}))
    assert box.problem and box.model_picker.options[0][1] == ""
    assert CompactionSettingsBox(SONNET, settings=Settings({}), problem="unreadable").problem == "unreadable"


def test_a_model_that_cannot_be_loaded_goes_to_the_error_callbacks() -> None:
    def broken() -> str:
        raise RuntimeError("no projection here")

    box = CompactionSettingsBox("openai/gpt-4o-mini", settings=Settings({}), leaf_model=broken)
    box.model_picker.value = "openai/gpt-4o"  # (the picker lists the models of the session model's provider)
    errors: list[Exception] = []
    box.on_error(errors.append)
    box.model_picker.value = ""  # asks the leaf's model, which fails
    assert [str(e) for e in errors] == ["no projection here"] and box.model == "openai/gpt-4o"


# ---------------------------------------------------------------------------------- preview
def test_the_preview_follows_its_settings_and_its_leaf(compaction_chain: Session) -> None:
    preview = CompactionPreview(compaction_chain, context_window=200_000)
    assert preview.preparation is None and "Nothing to compact" in preview.value
    assert preview.view is not None and preview.view.threshold == 200_000 - 16_384
    preview.keep_recent_tokens = 2_000
    first = preview.preparation
    assert first is not None and first.first_kept_entry_id in preview.value
    assert "pikit-cut-kept" in preview.value and preview.ms >= 0
    preview.reserve_tokens = 190_000
    assert "Pi would compact here" in preview.value
    preview.problem = "the settings file is broken"
    assert "the settings file is broken" in preview.value
    preview.leaf_id = "c85b60a0"  # before any compaction
    preview.keep_recent_tokens = 100
    assert preview.preparation is not None and preview.preparation.previous_compaction is None
    preview.leaf_id = None
    assert preview.preparation is None and "Cannot" not in preview.value
    preview.show_error("Cannot load that", ValueError("<b>bad</b>"))
    assert "Cannot load that" in preview.value and "&lt;b&gt;bad" in preview.value


# ---------------------------------------------------------------------------------- runner
@pytest.fixture
def runner_on(compaction_copy: Path, tmp_path: Path) -> Any:
    def make(summarizer: Any, **kwargs: Any) -> tuple[CompactionRunner, Path]:
        out = tmp_path / "out"
        out.mkdir(exist_ok=True)
        runner = CompactionRunner(load(compaction_copy), output_dir=out, summarizer=summarizer, **kwargs)
        runner.keep_recent_tokens = 2_000
        return runner, out
    return make


def test_the_runner_writes_a_run_and_hands_it_over(runner_on: Any, compaction_copy: Path) -> None:
    original = compaction_copy.read_bytes()
    fake = FakeSummarizer()
    runner, out = runner_on(fake, reserve_tokens=8_000, context_window=64_000)
    order: list[str] = []
    runs: list[CompactionRun] = []
    runner.on_run(lambda run: (runs.append(run), order.append(f"run while {runner.status}")))
    runner.on_compacted(lambda result, path: order.append(f"compacted {path == runs[-1].path}"))
    result = runner.run()
    assert runner.status == "done", runner.message.value
    assert order == ["run while running", "compacted True"]
    run = runs[0]
    assert run.number == 1 and run.result is result and run.leaf_id == runner.leaf_id
    assert run.settings == RunSettings(2_000, 8_000, 64_000, "fake")
    assert Path(run.path).parent == out and compaction_copy.read_bytes() == original
    assert run.before is runner.projection and run.after.leaf_id == result.entry["id"]
    assert "Run 1: compaction" in runner.message.value and "pikit-compaction-done" in runner.message.value
    assert runner.output.value == run.path and runner.output.description == "written to"  # what it wrote
    runner.refresh()
    assert runner.output.value == run.path  # until the next run ...
    runner.run()
    assert [r.number for r in runs] == [1, 2] and runner.run_count == 2 and fake.calls >= 2
    assert runs[1].path != run.path and runner.output.value == runs[1].path  # ... which writes another new file


def test_the_runner_shows_failures_and_writes_nothing(runner_on: Any) -> None:
    runner, out = runner_on(FailingSummarizer())
    assert runner.run() is None
    assert runner.status == "error" and "stopped for length" in runner.message.value
    assert files_in(out) == [] and runner.progress.bar_style == "danger" and not runner.run_button.disabled
    reset = CompactionRunner(runner.session, None, summarizer=FakeSummarizer())
    reset.run()
    assert reset.status == "error" and "reset" in reset.message.value


def test_the_runner_refuses_a_larger_summary_until_asked(runner_on: Any) -> None:
    verbose = FakeSummarizer("## Goal\n" + "word " * 200_000)
    runner, out = runner_on(verbose)
    runs: list[CompactionRun] = []
    runner.on_run(runs.append)
    runner.run()
    assert runner.status == "refused" and runner.refused_result is not None and runs == []
    assert runner.write_anyway_button.layout.display is None and files_in(out) == []
    runner.keep_recent_tokens = 3_000  # another cut: the refused summary is dropped
    assert runner.refused_result is None and runner.write_anyway() is None
    runner.run()
    refused = runner.refused_result
    assert runner.write_anyway() is refused and runner.status == "done" and verbose.calls == 2
    assert len(runs) == 1 and len(files_in(out)) == 1
    runner.allow_larger_box.value = True
    assert runner.allow_larger_summary and runner.run() is not None and len(runs) == 2


def test_the_runner_appends_in_place_and_places_the_controls_given(runner_on: Any,
                                                                   compaction_copy: Path) -> None:
    import ipywidgets as widgets

    extra = widgets.Button(description="mine")
    runner, out = runner_on(FakeSummarizer(), controls=(extra,))
    row = runner.children[4].children
    assert row[0] is runner.run_button and row[-1] is extra
    before = compaction_copy.read_bytes()
    runner.in_place_box.value = True
    assert runner.in_place and runner.output.value == str(compaction_copy) and runner.output.disabled
    runner.run()
    assert runner.status == "done" and compaction_copy.read_bytes().startswith(before)
    assert "appended to the source" in runner.message.value and files_in(out) == []


def test_the_runner_names_its_summarizer(compaction_chain: Session) -> None:
    made: list[tuple[str, str | None, str | None]] = []

    def factory(name: str, model: str | None, base_url: str | None) -> FakeSummarizer:
        made.append((name, model, base_url))
        return FakeSummarizer()

    runner = CompactionRunner(compaction_chain, summarizer_factory=factory)
    assert runner.summarizer_name == "offline" and runner.instructions_text is None
    runner.summarizer_picker.value = "openai"
    runner.summarizer_model.value = " openai/gpt-4o "
    runner.instructions.value = "  keep the file names "
    runner.summarizer()
    assert made == [("openai", "openai/gpt-4o", None)] and runner.instructions_text == "keep the file names"
    custom = FakeSummarizer()
    assert CompactionRunner(compaction_chain, summarizer=custom).summarizer() is custom


# ---------------------------------------------------------------------------------- history
@pytest.fixture
def two_runs(runner_on: Any) -> list[CompactionRun]:
    runner, _out = runner_on(FakeSummarizer())
    runs: list[CompactionRun] = []
    runner.on_run(runs.append)
    runner.run()
    runner.keep_recent_tokens = 500
    runner.run()
    return runs


def test_the_history_charts_the_branch_then_every_run(compaction_chain: Session,
                                                     two_runs: list[CompactionRun]) -> None:
    history = CompactionHistory(compaction_chain, two_runs[0].leaf_id, context_window=200_000)
    assert history.last_run is None and history.compared.value == "" and history.clear_button.disabled
    assert [g.label for g in history.chart_groups] == ["this branch"]
    assert history.chart.value.count('class="pikit-chart-bar"') == 4
    for run in two_runs:
        history.add(run)
    assert [g.label for g in history.chart_groups] == ["this branch", "run 1", "run 2"]
    assert [p.id for p in history.points][-2:] == [r.result.entry["id"] for r in two_runs]
    assert history.chart.value.count("pikit-chart-run") >= 2 and not history.clear_button.disabled
    assert "Before run 2" in history.compared.value and "After run 2" in history.compared.value
    assert list(history.frame()["keep_recent_tokens"]) == [2_000, 500]
    history.clear_button.click()
    assert history.runs == [] and history.compared.value == "" and "pikit-chart-run" not in history.chart.value


def test_the_history_redraws_for_its_threshold_and_its_leaf(compaction_chain: Session) -> None:
    history = CompactionHistory(compaction_chain, context_window=200_000, reserve_tokens=16_384)
    assert "threshold 184k" in history.chart.value
    with history.hold_trait_notifications():
        history.context_window, history.reserve_tokens = 100_000, 20_000
    assert "threshold 80k" in history.chart.value
    history.leaf_id = "c85b60a0"  # before any compaction
    assert "No compaction on this branch yet" in history.chart.value


# ---------------------------------------------------------------------------------- views
def test_the_run_views_escape_and_put_the_budgets_on_one_scale(compaction_chain: Session) -> None:
    assert render_run_step("<b>writing</b>…") == '<div class="pikit-status">&lt;b&gt;writing&lt;/b&gt;…</div>'
    done = RunDone(3, "<i>x</i>", "/tmp/<a>.jsonl", False, 10_000, 2_500, 1)
    html = render_run_done(done)
    assert done.freed == 7_500 and "7,500 tokens freed; 1 summarizer call" in html
    assert "<i>" not in html and "&lt;i&gt;x" in html and "written to a new file" in html
    assert "appended to the source" in render_run_done(RunDone(1, "x", "p", True, 2, 1, 2))
    state = state_for(compaction_chain)
    big, small = state.projection(compaction_chain.leaf_id), state.projection("c85b60a0")
    view = before_after(big, small, model=SONNET, settings=RunSettings(2_000, 3_000, 1_000, "<s>"), number=2,
                        compaction_id="<c>")
    assert view.before.scale == view.after.scale == max(budget_view(p, model=SONNET, window=1_000, reserve=3_000,
                                                                    keep=2_000).natural_scale for p in (big, small))
    html = render_before_after(view)
    assert html.count('class="pikit-budget"') == 2 and "Before run 2" in html and "After run 2" in html
    assert "<s>" not in html and "<c>" not in html and "keep 2k · reserve 3k · &lt;s&gt;" in html
