"""What-if compaction: sliders, a live preview of the cut point, running it, and the tokens it saves.

The panel is made of parts, each a widget (or a set of widgets) of its own that the panel
places and wires together: ``CompactionSettingsBox``
(the model picker and the sliders), :class:`~pikit.widgets.BudgetBar`,
``CompactionPreview`` (the live cut point),
``CompactionRunner`` (the summarizer, where to write, the run
button) and ``CompactionHistory`` (the chart, the budget
before and after the latest run, **clear runs**).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import traitlets

from .._context.describe import session_title
from .._session import Session
from .._tree.sessiontree import CURRENT
from ..compaction._settings import Settings, load_settings
from ..compaction._summarizer import Summarizer
from ..errors import SettingsError
from ._base import Callbacks, LeafWidget, error_output
from ._budget import BudgetBar, model_key
from ._compaction_history import CompactionHistory
from ._compaction_preview import CompactionPreview
from ._compaction_run import CompactionRunner, RunTraits
from ._compaction_settings import CompactionSettingsBox
from ._html import esc, style_widget
from ._lost import LostFacts
from ._runs import CompactionRun, SummarizerFactory, compaction_history
from ._stepper import CompactionStepper, StepperLauncher
from ._views.compaction import ChartGroup, CompactionPoint, CutPreview

if TYPE_CHECKING:
    from .._context.projection import Projection
    from ..compaction._entries import CompactionResult
    from ..compaction._evaluation import Evaluation
    from ..compaction._preparation import Preparation

__all__ = ["CompactionPanel", "CompactionPoint", "CompactionRun", "compaction_history"]

_SETTINGS = ("keep_recent_tokens", "reserve_tokens", "context_window")


class CompactionPanel(RunTraits, LeafWidget, widgets.VBox):
    """Try compaction settings on a leaf and run a compaction.

    Sliders set ``keep_recent_tokens``, ``reserve_tokens`` and ``context_window`` (also
    traitlets); the model picker loads a model's settings (``compaction.modelOverrides`` and
    its context window as Pi resolves it, ``None`` when unknown: then no threshold is drawn);
    ``context_window``, ``reserve_tokens`` and ``keep_recent_tokens`` given to the constructor
    override the settings. The preview shows, live, where the cut would fall and what would be
    summarized and kept. **Run compaction** summarizes with the chosen summarizer
    and writes the entry to a *new file* (a copy of the source plus one line) unless *append
    to the source* is ticked. Every failure is shown in the panel; nothing is raised.

    As on the command line, a summary larger than what it replaces (the context would grow)
    is refused with the numbers and nothing is written (``status == "refused"``): **Write it
    anyway** (:meth:`write_anyway`) writes that summary without calling the summarizer again,
    and ticking *allow a larger summary* (``allow_larger_summary``) lets later runs write one.

    Every run is kept in ``runs`` (:class:`CompactionRun`: settings, result, the contexts
    before and after, their diff) and stays in the chart as its own labelled group until
    :meth:`clear_runs`; after a run the budget before and after is shown one above the other.
    ``last_result`` (:class:`~pikit.compaction.CompactionResult`), ``last_output`` (the path
    written) and ``result_session`` (that file loaded) are the latest run's, and the callbacks
    registered with :meth:`on_compacted` are called. ``runs_frame()`` gives the runs as a DataFrame.

    After each run, ``lost`` (a ``LostFacts``) shows what that compaction
    lost (``last_evaluation``, :func:`pikit.evaluate` of the run): the recall overall and per kind
    and the first lost facts, each with its kind, text and source entry. The panel has no tree of
    its own: clicking a fact's source (here or in the stepper's step 7) calls the callbacks of
    :meth:`on_entry_link` with that entry's id; ``panel.on_entry_link(explorer.reveal)`` makes it
    reveal the entry in the tree of a :class:`~pikit.widgets.SessionExplorer` on the same session.

    **Step through** (or :meth:`open_stepper`) opens a :class:`~pikit.widgets.CompactionStepper`
    under the preview: Pi's algorithm on this leaf, one step at a time, following the panel's
    leaf, keepRecentTokens and summarizer (``stepper``).

    Parts: ``settings_box`` (a ``CompactionSettingsBox``),
    ``budget``, ``preview`` (a ``CompactionPreview``),
    ``runner`` (a ``CompactionRunner``) and ``run_history``
    (a ``CompactionHistory``); their controls are also
    reached on the panel (``keep_slider``, ``run_button``, ``chart``, …).
    """

    model = traitlets.Unicode("")

    def __init__(self, session: Session, leaf_id: Any = CURRENT, *, settings: Settings | None = None,
                 output_dir: str | os.PathLike[str] | None = None, summarizer: Summarizer | None = None,
                 summarizer_factory: SummarizerFactory | None = None, context_window: int | None = None,
                 reserve_tokens: int | None = None, keep_recent_tokens: int | None = None, **kwargs: Any) -> None:
        leaf = self._bind(session, leaf_id)
        problem = None
        try:
            self.settings: Settings | None = settings if settings is not None else load_settings()
        except SettingsError as exc:
            self.settings = None
            problem = str(exc)
        self._session_model = model_key(self.state.projection(leaf)) or ""
        box = self.settings_box = CompactionSettingsBox(
            self._session_model, settings=self.settings, problem=problem, leaf_model=self._leaf_model,
            context_window=context_window, reserve_tokens=reserve_tokens, keep_recent_tokens=keep_recent_tokens)
        self.budget = BudgetBar(session, leaf, settings=self.settings)
        self.preview = CompactionPreview(session, leaf, keep_recent_tokens=box.keep_recent_tokens,
                                         reserve_tokens=box.reserve_tokens, context_window=box.context_window,
                                         problem=box.problem)
        self.run_history = CompactionHistory(session, leaf, context_window=box.context_window,
                                             reserve_tokens=box.reserve_tokens, model=self.budget.model)
        self.runner = CompactionRunner(session, leaf, output_dir=output_dir, summarizer=summarizer,
                                       summarizer_factory=summarizer_factory,
                                       controls=(self.run_history.clear_button,))
        self._expose_controls()
        self._lost: LostFacts | None = None  # made at the first run: its front end loads only then
        self._link_errors = error_output()
        self._entry_links = Callbacks(self._link_errors, "entry link")
        self.steps = widgets.VBox()  # the step-by-step view of the algorithm, opened on demand
        self.steps.add_class("pikit-compaction-steps")
        title = widgets.HTML(f'<div class="pikit-title">Compaction what-if <span class="pikit-dim">· '
                             f"{esc(session_title(session))}</span></div>")
        super().__init__([style_widget(), title, box, self.budget, self.compared, self.preview, self.steps,
                          self.runner, self._link_errors, self.chart], **kwargs)
        runner = self.runner
        self.stepper_launcher = StepperLauncher(self, (self, "keep_recent_tokens"), self, summarizer=runner.summarizer,
                                                summarizer_name=lambda: runner.summarizer_name,
                                                instructions=lambda: runner.instructions_text,
                                                on_entry=self._entry_links)
        self.steps.children = [self.stepper_launcher]
        self.add_class("pikit-root")
        self.add_class("pikit-compaction-panel")
        self._follow_leaf(leaf)
        self._take_settings()
        self._wire()

    def _expose_controls(self) -> None:
        """The parts' controls, on the panel too."""
        box, runner, history = self.settings_box, self.runner, self.run_history
        self.model_picker, self.keep_slider = box.model_picker, box.keep_slider
        self.reserve_slider, self.window_slider = box.reserve_slider, box.window_slider
        self.summarizer_picker, self.summarizer_model = runner.summarizer_picker, runner.summarizer_model
        self.base_url, self.instructions, self.output = runner.base_url, runner.instructions, runner.output
        self.in_place_box, self.allow_larger_box = runner.in_place_box, runner.allow_larger_box
        self.write_anyway_button, self.run_button = runner.write_anyway_button, runner.run_button
        self.progress, self.message, self.callback_errors = runner.progress, runner.message, runner.callback_errors
        self.compared, self.chart, self.clear_button = history.compared, history.chart, history.clear_button

    def _wire(self) -> None:
        box, runner = self.settings_box, self.runner
        # The box sets the model and its settings together: the panel takes them together, so that
        # each part is drawn once with all of them (a link would hand them over one at a time).
        box.observe(self._take_settings, names=["model", *_SETTINGS])
        self.observe(lambda c: setattr(box, c["name"], c["new"]), names=["model", *_SETTINGS])
        for name in ("in_place", "allow_larger_summary", "status"):
            widgets.link((runner, name), (self, name))
        session_model = self._session_model
        widgets.dlink((self, "model"), (self.budget, "model"), transform=lambda m: m or session_model)
        widgets.dlink((self.budget, "model"), (self.run_history, "model"))
        for name in ("leaf_id", *_SETTINGS):
            widgets.dlink((self, name), (self.budget, name))
        self._pass_settings()
        self.observe(self._pass_settings, names=list(_SETTINGS))
        widgets.dlink((box, "problem"), (self.preview, "problem"))
        box.on_error(lambda exc: self.preview.show_error("Cannot load that model's settings", exc))
        runner.on_run(self.run_history.add)
        runner.on_run(self._show_lost)
        self.clear_button.on_click(lambda _b: self._clear_lost())
        for control in runner.summarizer_controls:
            control.observe(lambda _c: self.stepper_launcher.summarizer_changed(), names="value")

    def _take_settings(self, _change: Any = None) -> None:
        box = self.settings_box
        with self.hold_trait_notifications():
            for name in ("model", *_SETTINGS):
                setattr(self, name, getattr(box, name))

    def _pass_settings(self, _change: Any = None) -> None:
        """Give the preview, the runner and the history all the settings at once (each draws them together)."""
        for part, names in ((self.preview, _SETTINGS), (self.runner, _SETTINGS),
                            (self.run_history, ("context_window", "reserve_tokens"))):
            with part.hold_trait_notifications():
                for name in names:
                    setattr(part, name, getattr(self, name))

    def _leaf_model(self) -> str:
        """The model in use at the leaf (what the picker's *session model* stands for)."""
        return model_key(self.state.projection(self.leaf_id)) or ""

    def __repr__(self) -> str:
        return (f"<CompactionPanel leaf={self.leaf_id!r} keep={self.keep_recent_tokens} "
                f"reserve={self.reserve_tokens} window={self.context_window} status={self.status!r} "
                f"runs={len(self.runs)}>")

    # ------------------------------------------------------------------ the leaf
    def leaf_changed(self) -> None:
        leaf = self.leaf_id
        for part in (self.runner, self.preview, self.run_history):
            part.leaf_id = leaf  # the runner drops a refused summary; the others redraw

    def show_projection(self, projection: Projection) -> None:
        """Show a projection made elsewhere (a what-if branch that is not in the file): the preview
        cuts it, and a run records it as the context before."""
        self._projection = projection
        self.preview.show_projection(projection)
        self.runner.show_projection(projection)
        self.run_history.refresh()

    def refresh(self) -> None:
        """Redraw the preview, the before/after budgets and the chart."""
        self.update_preview()
        self.run_history.refresh()

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

    # ------------------------------------------------------------------ preview
    @property
    def preparation(self) -> Preparation | None:
        """Pi's preparation for the current settings (``None``: nothing to compact)."""
        return self.preview.preparation

    @property
    def preview_view(self) -> CutPreview | None:
        """The cut-point preview drawn last."""
        return self.preview.view

    @property
    def preview_ms(self) -> float:
        """How long the last preview took, in milliseconds."""
        return self.preview.ms

    def update_preview(self) -> None:
        """Recompute where the cut falls for the current settings and redraw the preview."""
        self.preview.refresh()

    # ------------------------------------------------------------------ runs, chart, before/after
    @property
    def runs(self) -> list[CompactionRun]:
        """The runs kept (until :meth:`clear_runs`), oldest first."""
        return self.run_history.runs

    @property
    def last_run(self) -> CompactionRun | None:
        """The latest run (``None`` before the first or after :meth:`clear_runs`)."""
        return self.run_history.last_run

    @property
    def last_result(self) -> CompactionResult | None:
        """The latest run's :class:`~pikit.compaction.CompactionResult`."""
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
        return self.run_history.chart_groups

    @property
    def history(self) -> list[CompactionPoint]:
        """The points of the chart, group after group."""
        return self.run_history.points

    def runs_frame(self) -> Any:
        """The runs as a pandas DataFrame (one row per run)."""
        return self.run_history.frame()

    def update_chart(self) -> None:
        """Redraw the tokensBefore/tokensAfter chart: the branch, then every run."""
        self.run_history.update_chart()

    def update_compared(self) -> None:
        """Show the budget before and after the latest run, one above the other, on one scale,
        with the settings that run used."""
        self.run_history.update_compared()

    def clear_runs(self) -> None:
        """Forget the runs (the files they wrote stay): the chart shows the branch alone again."""
        self.run_history.clear()
        self._clear_lost()

    # ------------------------------------------------------------------ what the latest run lost
    @property
    def lost(self) -> LostFacts:
        """The view of what the latest run lost (made, and put above the chart, on first use)."""
        if self._lost is None:
            self._lost = LostFacts()
            self._lost.on_select(self._entry_links)
            children: list[Any] = list(self.children)  # type: ignore[has-type]
            at = children.index(self._link_errors)
            self.children = (*children[:at], self._lost, self._lost.callback_errors, *children[at:])
        return self._lost

    def _clear_lost(self) -> None:
        if self._lost is not None:
            self._lost.clear()

    def _show_lost(self, run: CompactionRun) -> None:
        try:
            self.lost.show(run.evaluation)
        except Exception as exc:
            self.lost.show_error("Cannot evaluate what this compaction lost", exc)

    @property
    def last_evaluation(self) -> Evaluation | None:
        """What the latest run kept and lost (``None`` before the first run or after :meth:`clear_runs`)."""
        return self._lost.evaluation if self._lost is not None else None

    def on_entry_link(self, callback: Callable[[Any], Any], remove: bool = False) -> None:
        """Call ``callback(entry_id)`` when the source of a lost fact is clicked (in ``lost`` or in the
        stepper's last step), e.g. ``panel.on_entry_link(explorer.reveal)``."""
        self._entry_links.register_callback(callback, remove=remove)

    # ------------------------------------------------------------------ running
    @property
    def output_dir(self) -> Path | None:
        """The folder new files are written to (``None``: beside the source)."""
        return self.runner.output_dir

    @output_dir.setter
    def output_dir(self, folder: str | os.PathLike[str] | None) -> None:
        self.runner.output_dir = Path(folder) if folder is not None else None

    def on_compacted(self, callback: Callable[[Any, str], None], remove: bool = False) -> None:
        """Call ``callback(result, path)`` after each successful run (a failing callback shows in the panel)."""
        self.runner.on_compacted(callback, remove=remove)

    @property
    def refused_result(self) -> CompactionResult | None:
        """The latest run's result when it was refused as larger than what it replaces (until the
        next run, a change of leaf or keepRecentTokens, or :meth:`write_anyway`)."""
        return self.runner.refused_result

    def run(self) -> Any:
        """Summarize and write the compaction (what the button does). Returns the result or ``None``.

        Errors are shown in the panel and leave ``status == "error"``; nothing is raised and,
        when summarizing fails, nothing is written. A summary larger than what it replaces is
        refused (``status == "refused"``, nothing written) unless ``allow_larger_summary`` is set.
        """
        return self.runner.run()

    def write_anyway(self) -> Any:
        """Write the summary the latest run refused as larger than what it replaces (what **Write
        it anyway** does), without calling the summarizer again. Returns the result or ``None``."""
        return self.runner.write_anyway()
