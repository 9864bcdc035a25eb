"""What-if compaction: sliders, a live preview of the cut point, running it, and the tokens it saves."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import traitlets

from .._context.describe import session_title
from .._format.entry import Entry
from .._formatting import fmt_int, plural
from .._inert import visible
from .._session import Session
from .._tree.sessiontree import CURRENT
from ..compaction._preparation import Preparation, prepare_compaction
from ..compaction._settings import Settings, load_settings
from ..compaction._summarizer import Summarizer
from ..errors import PikitError, SettingsError, SummarizerOutputError
from ._base import Callbacks, LeafWidget, error_output
from ._budget import BudgetBar, model_key, resolve_budget
from ._html import error_box, esc, gap as _gap, style_widget
from ._runs import CompactionRun, Reporting, SummarizerFactory, compaction_history, default_factory
from ._state import state_for
from ._stepper import CompactionStepper, StepperLauncher
from ._views.budget import budget_view, render_budget
from ._views.compaction import (
    ChartGroup,
    CompactionPoint,
    CutPreview,
    RunSettings,
    cut_preview,
    render_chart,
    render_preview,
)

if TYPE_CHECKING:
    from ..compaction._entries import CompactionResult

__all__ = ["CompactionPanel", "CompactionPoint", "CompactionRun", "compaction_history"]

_SUMMARIZERS = ("offline", "openai", "anthropic")
_WINDOW_MAX = 2_000_000
_OVERRIDE = "tick “allow a larger summary” or press “Write it anyway” to write it"


class CompactionPanel(LeafWidget, widgets.VBox):
    """Try compaction settings on a leaf and run a compaction.

    Sliders set ``keep_recent_tokens``, ``reserve_tokens`` and ``context_window`` (also
    traitlets); the model picker loads a model's settings (``compaction.modelOverrides`` and
    the known context window); ``context_window``, ``reserve_tokens`` and ``keep_recent_tokens``
    given to the constructor override the settings. The preview shows, live, where the cut would fall and what
    would be summarized and kept. **Run compaction** summarizes with the chosen summarizer
    and writes the entry to a *new file* (a copy of the source plus one line) unless *append
    to the source* is ticked. Every failure is shown in the panel; nothing is raised.

    As on the command line, a summary larger than what it replaces (the context would grow)
    is refused with the numbers and nothing is written (``status == "refused"``): **Write it
    anyway** (:meth:`write_anyway`) writes that summary without calling the summarizer again,
    and ticking *allow a larger summary* (``allow_larger_summary``) lets later runs write one.

    Every run is kept in ``runs`` (:class:`CompactionRun`: settings, result, the contexts
    before and after, their diff) and stays in the chart as its own labelled group until
    :meth:`clear_runs`; after a run the budget before and after is shown one above the other.
    ``last_result`` (:class:`~pikit.compaction._entries.CompactionResult`), ``last_output`` (the path
    written) and ``result_session`` (that file loaded) are the latest run's, and the callbacks
    registered with :meth:`on_compacted` are called. ``runs_frame()`` gives the runs as a DataFrame.

    **Step through** (or :meth:`open_stepper`) opens a :class:`~pikit.widgets.CompactionStepper`
    under the preview: Pi's algorithm on this leaf, one step at a time, following the panel's
    leaf, keepRecentTokens and summarizer (``stepper``).
    """

    model = traitlets.Unicode("")
    keep_recent_tokens = traitlets.Int(20_000)
    reserve_tokens = traitlets.Int(16_384)
    context_window = traitlets.Int(128_000)
    in_place = traitlets.Bool(False)
    allow_larger_summary = traitlets.Bool(False)
    status = traitlets.Unicode("idle")

    def __init__(self, session: Session, leaf_id: Any = CURRENT, *, settings: Settings | None = None,
                 output_dir: str | os.PathLike[str] | None = None, summarizer: Summarizer | None = None,
                 summarizer_factory: SummarizerFactory | None = None, context_window: int | None = None,
                 reserve_tokens: int | None = None, keep_recent_tokens: int | None = None, **kwargs: Any) -> None:
        leaf = self._bind(session, leaf_id)
        self.output_dir = Path(output_dir) if output_dir is not None else None
        self.runs: list[CompactionRun] = []
        self._run_count = 0  # runs are numbered on, across clear_runs
        self.preparation: Preparation | None = None
        self.preview_view: CutPreview | None = None
        self.preview_ms = 0.0
        self._custom_summarizer = summarizer
        self._factory: SummarizerFactory = summarizer_factory or default_factory
        self._branch_cache: tuple[Any, list[Entry]] | None = None
        self._refused: tuple[CompactionResult, Reporting] | None = None  # kept for "Write it anyway"
        self._settings_problem: str | None = None
        try:
            self.settings: Settings | None = settings if settings is not None else load_settings()
        except SettingsError as exc:
            self.settings = None
            self._settings_problem = str(exc)
        self._session_model = model_key(self.state.projection(leaf)) or ""
        self.callback_errors = error_output()
        self._callbacks = Callbacks(self.callback_errors, "compaction")
        self.budget = BudgetBar(session, leaf, settings=self.settings)
        self.compared = widgets.HTML()
        self.compared.add_class("pikit-budget-compare")
        self.preview = widgets.HTML()
        self.preview.add_class("pikit-compaction-preview")
        self.chart = widgets.HTML(layout=widgets.Layout(width="auto", align_self="stretch"))
        self.chart.add_class("pikit-compaction-chart")
        self.steps = widgets.VBox()  # the step-by-step view of the algorithm, opened on demand
        self.steps.add_class("pikit-compaction-steps")
        title = widgets.HTML(f'<div class="pikit-title">Compaction what-if <span class="pikit-dim">· '
                             f"{esc(session_title(session))}</span></div>")
        super().__init__([style_widget(), title,
                          self._settings_box(), self.budget, self.compared, self.preview, self.steps,
                          self._run_box(), self.chart], **kwargs)
        self.stepper_launcher = StepperLauncher(self, (self, "keep_recent_tokens"), self, summarizer=self._summarizer,
                                                summarizer_name=lambda: str(self.summarizer_picker.value),
                                                instructions=lambda: self.instructions.value.strip() or None)
        self.steps.children = [self.stepper_launcher]
        self.add_class("pikit-root")
        self.add_class("pikit-compaction-panel")
        self._apply_settings(context_window, reserve_tokens, keep_recent_tokens)
        self._follow_leaf(leaf)
        self._wire()
        self._update_output_default()
        self.refresh()

    # ------------------------------------------------------------------ building
    def _settings_box(self) -> widgets.VBox:
        self.model_picker = widgets.Dropdown(options=self._model_options(self._session_model), value="",
                                             description="model", layout=widgets.Layout(width="420px"))
        self.model_picker.add_class("pikit-model-picker")
        style = {"description_width": "150px"}
        wide = widgets.Layout(width="520px")
        self.keep_slider = widgets.IntSlider(description="keepRecentTokens", min=0, max=128_000, step=1,
                                             style=style, layout=wide)
        self.reserve_slider = widgets.IntSlider(description="reserveTokens", min=0, max=128_000, step=1,
                                                style=style, layout=wide)
        # Windows span 4k to 2M tokens: a logarithmic slider keeps both ends usable.
        self.window_slider = widgets.FloatLogSlider(description="context window", base=2, min=12, max=21,
                                                    step=0.01, readout_format=",.0f", style=style, layout=wide)
        for slider, css in ((self.keep_slider, "pikit-keep-slider"), (self.reserve_slider, "pikit-reserve-slider"),
                            (self.window_slider, "pikit-window-slider")):
            slider.add_class(css)
        return widgets.VBox([self.model_picker, self.keep_slider, self.reserve_slider, self.window_slider])

    def _run_box(self) -> widgets.VBox:
        custom = self._custom_summarizer
        self.summarizer_picker = widgets.Dropdown(
            options=([(f"custom: {getattr(custom, 'name', 'summarizer')}", "custom")] if custom else [])
            + [(name, name) for name in _SUMMARIZERS],
            value="custom" if custom else "offline", description="summarizer")
        self.summarizer_picker.add_class("pikit-summarizer-picker")
        self.summarizer_model = widgets.Text(description="model", placeholder="provider/modelId (HTTP summarizers)")
        self.base_url = widgets.Text(description="base URL", placeholder="default for the provider")
        self.instructions = widgets.Textarea(description="focus", placeholder="optional extra instructions",
                                             layout=widgets.Layout(width="520px", height="48px"))
        self.output = widgets.Text(description="write to", value="", layout=widgets.Layout(width="620px"))
        self._output_path = ""
        self.output.add_class("pikit-output-path")
        self.in_place_box = widgets.Checkbox(description="append to the source file instead (in place)",
                                             value=False, indent=False, layout=widgets.Layout(width="auto"))
        self.in_place_box.add_class("pikit-in-place")
        self.allow_larger_box = widgets.Checkbox(
            description="allow a larger summary (write one larger than what it replaces)", value=False,
            indent=False, layout=widgets.Layout(width="auto"))
        self.allow_larger_box.add_class("pikit-allow-larger")
        self.write_anyway_button = widgets.Button(
            description="Write it anyway", icon="exclamation-triangle", button_style="warning",
            tooltip="write the refused summary as it is (the context grows)",
            layout=widgets.Layout(width="auto", min_width="fit-content", display="none"))
        self.write_anyway_button.add_class("pikit-write-anyway")
        self.write_anyway_button.on_click(lambda _b: self.write_anyway())
        self.run_button = widgets.Button(description="Run compaction", button_style="primary", icon="compress",
                                         tooltip="summarize and write the compaction entry")
        self.run_button.add_class("pikit-run-compaction")
        self.run_button.on_click(lambda _b: self.run())
        self.clear_button = widgets.Button(description="clear runs", icon="eraser", disabled=True,
                                           tooltip="remove the runs from the chart and the before/after view",
                                           layout=widgets.Layout(width="auto", min_width="fit-content"))
        self.clear_button.add_class("pikit-clear-runs")
        self.clear_button.on_click(lambda _b: self.clear_runs())
        self.progress = widgets.IntProgress(value=0, min=0, max=4, layout=widgets.Layout(width="160px"))
        self.progress.add_class("pikit-progress")
        self.message = widgets.HTML()
        self.message.add_class("pikit-compaction-status")
        http = widgets.Accordion([widgets.VBox([self.summarizer_model, self.base_url])],
                                 titles=("HTTP summarizer options",), selected_index=None)
        return widgets.VBox([
            widgets.HBox([self.summarizer_picker, http]),
            self.instructions,
            widgets.HBox([self.output, self.in_place_box], layout=widgets.Layout(align_items="center")),
            self.allow_larger_box,
            _gap(widgets.HBox([self.run_button, self.write_anyway_button, self.progress, self.clear_button],
                              layout=widgets.Layout(align_items="center"))),
            self.message,
            self.callback_errors,
        ])

    def _apply_settings(self, window: int | None, reserve: int | None, keep: int | None) -> None:
        resolved_window, resolved_reserve, resolved_keep, problem = self._resolve(self._session_model)
        self._settings_problem = self._settings_problem or problem
        with self.hold_trait_notifications():
            self.context_window = window if window is not None else resolved_window
            self.reserve_tokens = reserve if reserve is not None else resolved_reserve
            self.keep_recent_tokens = keep if keep is not None else resolved_keep
        self._sync_sliders()

    def _wire(self) -> None:
        for slider, name in ((self.keep_slider, "keep_recent_tokens"), (self.reserve_slider, "reserve_tokens")):
            widgets.link((slider, "value"), (self, name))
        self.window_slider.observe(lambda c: setattr(self, "context_window", round(c["new"])), names="value")
        widgets.link((self.in_place_box, "value"), (self, "in_place"))
        widgets.link((self.allow_larger_box, "value"), (self, "allow_larger_summary"))
        session_model = self._session_model
        widgets.dlink((self, "model"), (self.budget, "model"), transform=lambda m: m or session_model)
        for name in ("leaf_id", "keep_recent_tokens", "reserve_tokens", "context_window"):
            widgets.dlink((self, name), (self.budget, name))
        self.model_picker.observe(self._on_model, names="value")
        for control in (self.summarizer_picker, self.summarizer_model, self.base_url, self.instructions):
            control.observe(lambda _c: self.stepper_launcher.summarizer_changed(), names="value")
        self.observe(self._on_setting, names=["keep_recent_tokens", "reserve_tokens", "context_window"])
        self.observe(lambda _c: self._update_output_default(), names="in_place")

    def __repr__(self) -> str:
        return (f"<CompactionPanel leaf={self.leaf_id!r} keep={self.keep_recent_tokens} "
                f"reserve={self.reserve_tokens} window={self.context_window} status={self.status!r} "
                f"runs={len(self.runs)}>")

    # ------------------------------------------------------------------ settings
    def _model_options(self, session_model: str) -> list[tuple[str, str]]:
        from ..llm._models import MODELS

        options = [(visible(f"session model ({session_model or 'not recorded'})"), "")]
        overrides: Mapping[str, Any] = {}
        if self.settings is not None:
            try:
                overrides = self.settings.overrides()
            except SettingsError as exc:
                self._settings_problem = str(exc)
        options.extend((f"override: {key}", key) for key in overrides)
        options.extend((f"{key} ({fmt_int(info.context_window)})", key)
                       for key, info in MODELS.items() if key not in overrides)
        return options

    def _resolve(self, model: str) -> tuple[int, int, int, str | None]:
        return resolve_budget(model or None, self.settings)

    def _on_model(self, change: dict[str, Any]) -> None:
        try:
            key = change["new"] or ""
            effective = key or (model_key(self.state.projection(self.leaf_id)) or "")
            window, reserve, keep, problem = self._resolve(effective)
            self._settings_problem = problem or self._settings_problem
            with self.hold_trait_notifications():
                self.model = key
                self.context_window = window
                self.reserve_tokens = reserve
                self.keep_recent_tokens = keep
            self._sync_sliders()
        except Exception as exc:
            self.preview.value = error_box("Cannot load that model's settings", exc)

    def _sync_sliders(self) -> None:
        window = max(self.context_window, 1)
        top = max(window, self.keep_recent_tokens, self.reserve_tokens)
        self.keep_slider.max = top
        self.reserve_slider.max = top
        self.keep_slider.value = self.keep_recent_tokens
        self.reserve_slider.value = self.reserve_tokens
        self._set_window_slider(window)

    def _set_window_slider(self, window: int) -> None:
        if round(self.window_slider.value) != window:
            exponent = math.log2(max(window, 1))
            self.window_slider.min = min(12.0, exponent)
            self.window_slider.max = max(math.log2(_WINDOW_MAX), exponent)
            self.window_slider.value = float(window)

    def _on_setting(self, change: dict[str, Any]) -> None:
        if change["name"] == "keep_recent_tokens":
            self._drop_refused()
        if change["name"] == "context_window":
            top = max(change["new"], self.keep_recent_tokens, self.reserve_tokens)
            self.keep_slider.max = top
            self.reserve_slider.max = top
            self._set_window_slider(change["new"])
        self.update_preview()
        self.update_chart()

    def leaf_changed(self) -> None:
        self._branch_cache = None
        self._drop_refused()
        self.refresh()

    def open_stepper(self) -> CompactionStepper:
        """Show the :class:`CompactionStepper` under the preview (what **Step through** does): Pi's
        algorithm on this leaf, step by step, with this panel's keepRecentTokens and summarizer."""
        stepper = self.stepper_launcher.show()
        assert stepper is not None
        return stepper

    @property
    def stepper(self) -> CompactionStepper | None:
        """The stepper, once opened."""
        return self.stepper_launcher.stepper

    def refresh(self) -> None:
        """Redraw the preview, the before/after budgets and the chart."""
        self.update_preview()
        self.update_compared()
        self.update_chart()

    # ------------------------------------------------------------------ preview
    def _branch(self) -> list[Entry]:
        if self._branch_cache is None or self._branch_cache[0] != self.leaf_id:
            self._branch_cache = (self.leaf_id, self.session.branch(self.leaf_id) if self.leaf_id is not None else [])
        return self._branch_cache[1]

    def _describe(self, entry_id: Any) -> tuple[str, str]:
        entry = self.session.by_id.get(entry_id)
        if entry is None:
            return "?", ""
        return entry.role or entry.type, self.state.preview(entry)[1]

    def update_preview(self) -> None:
        """Recompute where the cut falls for the current settings and redraw the preview."""
        start = time.perf_counter()
        try:
            projection = self.projection
            self.preparation = prepare_compaction(self._branch(), max(0, self.keep_recent_tokens), projection) \
                if self.leaf_id is not None else None
            self.preview_view = cut_preview(self.preparation, projection.tokens,
                                            self.context_window - self.reserve_tokens,
                                            problem=self._settings_problem, describe=self._describe)
            self.preview.value = render_preview(self.preview_view)
        except Exception as exc:
            self.preparation = None
            self.preview_view = None
            self.preview.value = error_box("Cannot prepare a compaction here", exc)
        self.preview_ms = (time.perf_counter() - start) * 1000

    # ------------------------------------------------------------------ runs, chart, before/after
    @property
    def last_run(self) -> CompactionRun | None:
        """The latest run (``None`` before the first or after :meth:`clear_runs`)."""
        return self.runs[-1] if self.runs else None

    @property
    def last_result(self) -> CompactionResult | None:
        """The latest run's :class:`~pikit.compaction._entries.CompactionResult`."""
        return self.runs[-1].result if self.runs else None

    @property
    def last_output(self) -> str | None:
        """The path the latest run wrote."""
        return self.runs[-1].path if self.runs else None

    @property
    def result_session(self) -> Session | None:
        """The file the latest run wrote, loaded."""
        return self.runs[-1].session if self.runs else None

    @property
    def chart_groups(self) -> list[ChartGroup]:
        """The chart's groups: the branch's own compactions, then one group per run."""
        groups = [ChartGroup("this branch", tuple(compaction_history(self.session, self.leaf_id)))]
        groups.extend(ChartGroup(f"run {run.number}", (run.point,), run.settings) for run in self.runs)
        return groups

    @property
    def history(self) -> list[CompactionPoint]:
        """The points of the chart, group after group."""
        return [point for group in self.chart_groups for point in group.points]

    def runs_frame(self) -> Any:
        """The runs as a pandas DataFrame (one row per run)."""
        import pandas as pd

        columns = ["run", "leaf_id", "compaction_id", "keep_recent_tokens", "reserve_tokens", "context_window",
                   "summarizer", "tokens_before", "tokens_after", "first_kept_entry_id", "path"]
        return pd.DataFrame.from_records([run.to_record() for run in self.runs], columns=columns)

    def update_chart(self) -> None:
        """Redraw the tokensBefore/tokensAfter chart: the branch, then every run."""
        try:
            self.chart.value = render_chart(self.chart_groups, self.context_window - self.reserve_tokens)
        except Exception as exc:
            self.chart.value = error_box("Cannot draw the compaction chart", exc)

    def update_compared(self) -> None:
        """Show the budget before and after the latest run, one above the other, on one scale,
        with the settings that run used."""
        run = self.last_run
        if run is None:
            self.compared.value = ""
            return
        try:
            used = run.settings
            views = [budget_view(projection, model=self.budget.model, window=used.context_window,
                                 reserve=used.reserve_tokens, keep=used.keep_recent_tokens,
                                 title=f"{when} run {run.number}")
                     for when, projection in (("Before", run.before), ("After", run.after))]
            scale = max(view.natural_scale for view in views)
            before, after = (replace(view, scale=scale) for view in views)
            self.compared.value = (f'<div class="pikit-block pikit-before-after" aria-label="before and after">'
                                   f'<div class="pikit-sub">{esc(used.caption)} · compaction '
                                   f'<span class="pikit-id">{esc(run.result.entry["id"])}</span></div>'
                                   f"{render_budget(before, legend=False)}{render_budget(after)}</div>")
        except Exception as exc:
            self.compared.value = error_box("Cannot draw the budget before and after", exc)

    def clear_runs(self) -> None:
        """Forget the runs (the files they wrote stay): the chart shows the branch alone again."""
        self.runs.clear()
        self.clear_button.disabled = True
        self.update_compared()
        self.update_chart()

    # ------------------------------------------------------------------ running
    def on_compacted(self, callback: Callable[[Any, str], None], remove: bool = False) -> None:
        """Call ``callback(result, path)`` after each successful run (a failing callback shows in the panel)."""
        self._callbacks.register_callback(callback, remove=remove)

    def _default_output(self) -> str:
        source = Path(self.session.path) if self.session.path else Path("session.jsonl")
        folder = self.output_dir if self.output_dir is not None else source.parent
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        candidate = folder / f"{source.stem}.compacted-{stamp}.jsonl"
        n = 2
        while candidate.exists():
            candidate = folder / f"{source.stem}.compacted-{stamp}-{n}.jsonl"
            n += 1
        return str(candidate)

    def _show_output(self, path: str) -> None:
        """Show ``path`` in the **write to** box, inertly; while the box shows it, runs write to ``path`` itself."""
        self._output_path = path
        self.output.value = visible(path)

    def _output_target(self) -> str:
        if self._output_path and self.output.value == visible(self._output_path):
            return self._output_path
        return self.output.value.strip() or self._default_output()

    def _update_output_default(self) -> None:
        if self.in_place:
            self._show_output(self.session.path or "")
            self.output.disabled = True
        else:
            self.output.disabled = False
            target = self._output_target()
            if not self.output.value or target == self.session.path or Path(target).exists():
                self._show_output(self._default_output())

    def _step(self, value: int, text: str) -> None:
        self.progress.value = value
        self.message.value = f'<div class="pikit-status">{esc(text)}</div>'

    def _summarizer(self) -> Summarizer:
        name = self.summarizer_picker.value
        if name == "custom" and self._custom_summarizer is not None:
            return self._custom_summarizer
        return self._factory(name, self.summarizer_model.value.strip() or None, self.base_url.value.strip() or None)

    def _settings_used(self, summarizer: Reporting) -> RunSettings:
        return RunSettings(max(0, self.keep_recent_tokens), self.reserve_tokens, self.context_window,
                           str(summarizer.name))

    def _compact(self) -> tuple[CompactionResult, str, Reporting]:
        """Summarize, check the size and write; returns the result, the path written and the summarizer used."""
        from ..compaction._entries import build_compaction

        if self.leaf_id is None:
            raise PikitError("the leaf is reset (empty branch): there is nothing to compact")
        self._step(1, "preparing…")
        summarizer = Reporting(self._summarizer(), lambda text: self._step(2, text))
        result = build_compaction(self.session, self.leaf_id, keep_recent_tokens=max(0, self.keep_recent_tokens),
                                  summarizer=summarizer, instructions=self.instructions.value.strip() or None)
        if not self.allow_larger_summary:
            try:
                result.check_size(_OVERRIDE)
            except SummarizerOutputError:
                self._refused = (result, summarizer)
                raise
        return result, self._write(result), summarizer

    def _write(self, result: CompactionResult) -> str:
        from ..compaction._entries import write_entry

        self._step(3, "writing…")
        if self.in_place:
            return write_entry(self.session, result.entry, in_place=True)
        return write_entry(self.session, result.entry, output=self._output_target())

    def _drop_refused(self) -> None:
        self._refused = None
        self.write_anyway_button.layout.display = "none"

    @property
    def refused_result(self) -> CompactionResult | None:
        """The latest run's result when it was refused as larger than what it replaces (until the
        next run, a change of leaf or keepRecentTokens, or :meth:`write_anyway`)."""
        return self._refused[0] if self._refused else None

    def _failed(self, exc: Exception, written: str | None) -> None:
        self.progress.bar_style = "danger" if self._refused is None else "warning"
        if self._refused is not None:
            title = "Compaction refused: the summary is larger than what it replaces"
            self.write_anyway_button.layout.display = None
            self.status = "refused"
        else:
            title = ("Compaction failed: nothing was written" if written is None else
                     f"The compaction was written to {written}, but then this failed")
            self.status = "error"
        self.message.value = error_box(title, exc)

    def _record(self, result: CompactionResult, path: str, summarizer: Reporting) -> CompactionRun:
        from .._session import load

        self._step(4, "loading the result…")
        written = load(path)
        self._run_count += 1
        run = CompactionRun(self._run_count, self.leaf_id,
                            self._settings_used(summarizer), result, path, written, self.projection,
                            state_for(written).projection(result.entry["id"]))
        self.runs.append(run)
        self.clear_button.disabled = False
        where = "appended to the source" if self.in_place else "written to a new file"
        calls = plural(summarizer.calls, "summarizer call")
        self.message.value = (
            f'<div class="pikit-ok pikit-compaction-done"><b>Run {run.number}: compaction '
            f'{esc(result.entry["id"])}</b> {where}: <span class="pikit-id">{esc(path)}</span><br>tokensBefore '
            f"<b>{fmt_int(result.tokens_before)}</b> → tokensAfter <b>{fmt_int(result.tokens_after)}</b> "
            f"({fmt_int(result.tokens_before - result.tokens_after)} tokens freed; {calls}).</div>")
        return run

    def run(self) -> Any:
        """Summarize and write the compaction (what the button does). Returns the result or ``None``.

        Errors are shown in the panel and leave ``status == "error"``; nothing is raised and,
        when summarizing fails, nothing is written. A summary larger than what it replaces is
        refused (``status == "refused"``, nothing written) unless ``allow_larger_summary`` is set.
        """
        self._drop_refused()
        return self._execute(self._compact)

    def write_anyway(self) -> Any:
        """Write the summary the latest run refused as larger than what it replaces (what **Write
        it anyway** does), without calling the summarizer again. Returns the result or ``None``."""
        refused = self._refused
        if refused is None:
            return None
        self._drop_refused()
        result, summarizer = refused
        return self._execute(lambda: (result, self._write(result), summarizer))

    def _execute(self, produce: Callable[[], tuple[CompactionResult, str, Reporting]]) -> Any:
        if self.status == "running":
            return None
        self.status = "running"
        self.run_button.disabled = True
        self.progress.bar_style = "info"
        written: str | None = None
        try:
            result, written, summarizer = produce()
            run = self._record(result, written, summarizer)
        except Exception as exc:
            self._failed(exc, written)
            return None
        finally:
            self.run_button.disabled = False
        self.progress.bar_style = "success"
        self.status = "done"
        self.update_compared()
        self.update_chart()
        if not self.in_place:
            self._show_output(self._default_output())
        self._callbacks(run.result, run.path)
        return run.result
