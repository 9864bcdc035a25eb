"""Running a compaction: the summarizer, where to write, the run button, and what the run did."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import traitlets

from .._inert import visible
from .._session import Session
from .._tree.sessiontree import CURRENT
from ..compaction._summarizer import Summarizer
from ..errors import PikitError, SummarizerOutputError
from ._base import Callbacks, LeafWidget, error_output
from ._html import error_box, gap as _gap
from ._runs import CompactionRun, Reporting, SummarizerFactory, default_factory
from ._state import state_for
from ._views.compaction import RunSettings
from ._views.runs import RunDone, render_run_done, render_run_step

if TYPE_CHECKING:
    from ..compaction._entries import CompactionResult

__all__ = ["CompactionRunner", "RunTraits"]

_SUMMARIZERS = ("offline", "openai", "anthropic")
_OVERRIDE = "tick “allow a larger summary” or press “Write it anyway” to write it"

Produce = Callable[[], "tuple[CompactionResult, str, Reporting]"]


class RunTraits(traitlets.HasTraits):
    """What a compaction run is set with and where it stands: the runner's traitlets, which the panel
    holding a runner shares (linked to its runner's)."""

    keep_recent_tokens = traitlets.Int(20_000)
    reserve_tokens = traitlets.Int(16_384)
    context_window = traitlets.Int(None, allow_none=True)
    in_place = traitlets.Bool(False)
    allow_larger_summary = traitlets.Bool(False)
    status = traitlets.Unicode("idle")


class CompactionRunner(RunTraits, LeafWidget, widgets.VBox):
    """Summarize the branch at ``leaf_id`` and write the compaction entry.

    **Run compaction** (:meth:`run`) summarizes with the chosen summarizer (``summarizer``
    given: a *custom* entry, picked first; else one of ``summarizer_factory(name, model,
    base_url)``) keeping ``keep_recent_tokens``, and writes the entry to a *new file* (a copy
    of the source plus one line, in ``output_dir`` or beside the source) unless ``in_place``
    (append to the source). Every failure is shown in the part (``status == "error"``);
    nothing is raised. A summary larger than what it replaces is refused (``status ==
    "refused"``, nothing written) unless ``allow_larger_summary``; **Write it anyway**
    (:meth:`write_anyway`) then writes it without calling the summarizer again.

    Each run that wrote its entry becomes a :class:`~pikit.widgets.CompactionRun`,
    numbered on from 1 (``reserve_tokens`` and ``context_window`` are recorded in its
    settings), and goes to the callbacks of :meth:`on_run` before ``status`` turns ``"done"``;
    those of :meth:`on_compacted` are called with its result and path after. ``controls``
    are placed at the end of the button row.
    """

    def __init__(self, session: Session, leaf_id: Any = CURRENT, *, output_dir: str | os.PathLike[str] | None = None,
                 summarizer: Summarizer | None = None, summarizer_factory: SummarizerFactory | None = None,
                 controls: Sequence[widgets.Widget] = (), **kwargs: Any) -> None:
        leaf = self._bind(session, leaf_id)
        self.output_dir = Path(output_dir) if output_dir is not None else None
        self.run_count = 0  # runs are numbered on, whatever becomes of them
        self._custom_summarizer = summarizer
        self._factory: SummarizerFactory = summarizer_factory or default_factory
        self._refused: tuple[CompactionResult, Reporting] | None = None  # kept for "Write it anyway"
        self._output_path = ""
        self._written = ""  # the file the last run wrote, shown under "written to" until the next run
        self.callback_errors = error_output()
        self._run_hooks = Callbacks(self.callback_errors, "compaction run")
        self._callbacks = Callbacks(self.callback_errors, "compaction")
        super().__init__(self._build(controls), **kwargs)
        self._follow_leaf(leaf)
        widgets.link((self.in_place_box, "value"), (self, "in_place"))
        widgets.link((self.allow_larger_box, "value"), (self, "allow_larger_summary"))
        self.observe(lambda _c: self._update_output_default(), names="in_place")
        self.observe(lambda _c: self._drop_refused(), names="keep_recent_tokens")
        self._update_output_default()

    def __repr__(self) -> str:
        return f"<CompactionRunner leaf={self.leaf_id!r} keep={self.keep_recent_tokens} status={self.status!r}>"

    # ------------------------------------------------------------------ building
    def _build(self, controls: Sequence[widgets.Widget]) -> list[widgets.Widget]:
        self._summarizer_controls()
        self._output_controls()
        self._buttons()
        http = widgets.Accordion([widgets.VBox([self.summarizer_model, self.base_url])],
                                 titles=("HTTP summarizer options",), selected_index=None)
        return [
            widgets.HBox([self.summarizer_picker, http]),
            self.instructions,
            widgets.HBox([self.output, self.in_place_box], layout=widgets.Layout(align_items="center")),
            self.allow_larger_box,
            _gap(widgets.HBox([self.run_button, self.write_anyway_button, self.progress, *controls],
                              layout=widgets.Layout(align_items="center"))),
            self.message,
            self.callback_errors,
        ]

    def _summarizer_controls(self) -> None:
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

    def _output_controls(self) -> None:
        self.output = widgets.Text(description="write to", value="", layout=widgets.Layout(width="620px"))
        self.output.add_class("pikit-output-path")
        self.in_place_box = widgets.Checkbox(description="append to the source file instead (in place)",
                                             value=False, indent=False, layout=widgets.Layout(width="auto"))
        self.in_place_box.add_class("pikit-in-place")
        self.allow_larger_box = widgets.Checkbox(
            description="allow a larger summary (write one larger than what it replaces)", value=False,
            indent=False, layout=widgets.Layout(width="auto"))
        self.allow_larger_box.add_class("pikit-allow-larger")

    def _buttons(self) -> None:
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
        self.progress = widgets.IntProgress(value=0, min=0, max=4, layout=widgets.Layout(width="160px"))
        self.progress.add_class("pikit-progress")
        self.message = widgets.HTML()
        self.message.add_class("pikit-compaction-status")

    # ------------------------------------------------------------------ the leaf, the summarizer
    def leaf_changed(self) -> None:
        self._drop_refused()

    def refresh(self) -> None:
        """Show the default file to write to again, if the one shown is taken."""
        self._update_output_default()

    @property
    def summarizer_controls(self) -> tuple[widgets.Widget, ...]:
        """The controls that choose the summarizer and its instructions."""
        return self.summarizer_picker, self.summarizer_model, self.base_url, self.instructions

    @property
    def summarizer_name(self) -> str:
        """The summarizer picked (``custom`` for the one given)."""
        return str(self.summarizer_picker.value)

    @property
    def instructions_text(self) -> str | None:
        """The extra instructions for the summary (``None``: none)."""
        return self.instructions.value.strip() or None

    def summarizer(self) -> Summarizer:
        """The summarizer the next run uses (made by the factory for every call but the custom one)."""
        name = self.summarizer_picker.value
        if name == "custom" and self._custom_summarizer is not None:
            return self._custom_summarizer
        return self._factory(name, self.summarizer_model.value.strip() or None, self.base_url.value.strip() or None)

    # ------------------------------------------------------------------ where to write
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

    def _show_output(self, path: str, *, written: bool = False) -> None:
        """Show ``path`` in the box, inertly; while the box shows it, runs write to ``path`` itself. ``written``:
        the box says **written to** (the file the last run wrote) instead of **write to**."""
        self._output_path = path
        self._written = path if written else ""
        self.output.description = "written to" if written else "write to"
        self.output.value = visible(path)

    def _output_target(self) -> str:
        if self._output_path and self.output.value == visible(self._output_path):
            if self._output_path == self._written:  # the next run writes a new file, named now
                self._show_output(self._default_output())
            return self._output_path
        return self.output.value.strip() or self._default_output()

    def _update_output_default(self) -> None:
        if self.in_place:
            self._show_output(self.session.path or "")
            self.output.disabled = True
        else:
            self.output.disabled = False
            if self._written and self.output.value == visible(self._written):
                return  # the box shows what the last run wrote until the next run
            target = self._output_target()
            if not self.output.value or target == self.session.path or Path(target).exists():
                self._show_output(self._default_output())

    # ------------------------------------------------------------------ running
    def on_run(self, callback: Callable[[CompactionRun], None], remove: bool = False) -> None:
        """Call ``callback(run)`` with each run that wrote its entry, before ``status`` turns ``"done"``."""
        self._run_hooks.register_callback(callback, remove=remove)

    def on_compacted(self, callback: Callable[[Any, str], None], remove: bool = False) -> None:
        """Call ``callback(result, path)`` after each successful run (a failing callback shows in the part)."""
        self._callbacks.register_callback(callback, remove=remove)

    @property
    def refused_result(self) -> CompactionResult | None:
        """The latest run's result when it was refused as larger than what it replaces (until the
        next run, a change of leaf or keepRecentTokens, or :meth:`write_anyway`)."""
        return self._refused[0] if self._refused else None

    def run(self) -> Any:
        """Summarize and write the compaction (what the button does). Returns the result or ``None``."""
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

    def _step(self, value: int, text: str) -> None:
        self.progress.value = value
        self.message.value = render_run_step(text)

    def _compact(self) -> tuple[CompactionResult, str, Reporting]:
        """Summarize, check the size and write; returns the result, the path written and the summarizer used."""
        from ..compaction._entries import build_compaction

        if self.leaf_id is None:
            raise PikitError("the leaf is reset (empty branch): there is nothing to compact")
        self._step(1, "preparing…")
        summarizer = Reporting(self.summarizer(), lambda text: self._step(2, text))
        result = build_compaction(self.session, self.leaf_id, keep_recent_tokens=max(0, self.keep_recent_tokens),
                                  summarizer=summarizer, instructions=self.instructions_text)
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
        self.run_count += 1
        settings = RunSettings(max(0, self.keep_recent_tokens), self.reserve_tokens, self.context_window,
                               str(summarizer.name))
        run = CompactionRun(self.run_count, self.leaf_id, settings, result, path, written, self.projection,
                            state_for(written).projection(result.entry["id"]))
        self._run_hooks(run)
        self.message.value = render_run_done(RunDone(run.number, result.entry["id"], path, self.in_place,
                                                     result.tokens_before, result.tokens_after, summarizer.calls))
        return run

    def _execute(self, produce: Produce) -> Any:
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
        if not self.in_place:
            self._show_output(run.path, written=True)
        self._callbacks(run.result, run.path)
        return run.result
