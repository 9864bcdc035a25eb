"""The compaction stepper: Pi's compaction algorithm on one leaf, one step at a time."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import anywidget
import ipywidgets as widgets
import traitlets

from .._session import Session
from .._tree.sessiontree import CURRENT
from ..compaction._entries import CompactionResult, compact_prepared
from ..compaction._evaluation import Evaluation, evaluate
from ..compaction._preparation import CompactionTrace, trace_compaction
from ..compaction._settings import CompactionSettings, Settings
from ..compaction._summarizer import Summarizer
from ..compaction._walkthrough import STEP_TITLES, Walkthrough, walkthrough
from ._base import LeafWidget
from ._budget import model_key, resolve_budget
from ._html import error_box, esc, style_widget
from ._lost import LostFacts
from ._views.stepper import STEPPER_CSS, highlight_css, render_step

__all__ = ["CompactionStepper", "StepperLauncher"]

_SUMMARY_STEP = 6
_STEPS = len(STEP_TITLES)

# Arrow keys anywhere in the stepper (but in its text box and slider, which have their own):
# ← and → go back and forward, Home and End to the first and last step.
_KEYS_ESM = """
const KEYS = { ArrowLeft: "back", ArrowRight: "next", Home: "first", End: "last" };
function render({ model, el }) {
  let root = null;
  let tries = 0;
  const onKey = (event) => {
    const action = KEYS[event.key];
    if (!action || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest("input, textarea, select, .noUi-handle, [role=slider]")) return;
    event.preventDefault();
    event.stopPropagation();
    model.send({ action });
  };
  const attach = () => {
    root = el.closest(".pikit-stepper");
    if (!root) {
      if (tries++ < 200) requestAnimationFrame(attach);
      return;
    }
    if (!root.hasAttribute("tabindex")) root.tabIndex = 0;
    root.setAttribute("aria-keyshortcuts", "ArrowLeft ArrowRight Home End");
    root.addEventListener("keydown", onKey);
  };
  attach();
  return () => { if (root) root.removeEventListener("keydown", onKey); };
}
export default { render };
"""


class _StepKeys(anywidget.AnyWidget):
    """An invisible helper that turns arrow keys in the stepper into Back/Next."""

    _esm = _KEYS_ESM


class CompactionStepper(LeafWidget, widgets.VBox):
    """Play Pi's compaction at ``leaf_id`` step by step: **Back**/**Next** buttons and a step slider.

    The seven steps: the walk back from the newest entry with the running sum against
    ``keep_recent_tokens`` (1); the entry where the sum reaches it (2); the move to a valid cut
    point (3); the split-turn decision and the turn prefix (4); the messages to summarize, the
    previous summary and the file lists (5); the summary (6); the new context with its size (7).

    Each step highlights the entries involved and says in one sentence what Pi does. Every
    figure is the one :func:`~pikit.compaction.trace_compaction` (``prepare_compaction``)
    computes. The summary is written when step 6 is first shown, by ``summarizer`` (the
    offline one unless another is given or set with :meth:`set_summarizer`); nothing is written
    to disk. Another summarizer (a model behind an API) is not called again on every change of
    leaf or setting: step 6 then offers **Write the summary**.

    Step 7 also shows what the compaction lost (``lost``, a ``LostFacts``;
    ``evaluation``, :func:`pikit.evaluate` of ``result``): the recall overall and per kind and
    the first lost facts. Clicking a fact's source links to that entry through ``lost.on_select``:
    in the explorer (and through the compaction panel's :meth:`on_entry_link`) it reveals the entry in the
    tree; the stepper alone has no tree and only sets ``lost.selected_id``.

    With the focus in the stepper, ← and → go back and forward, Home and End to the first and
    last step (Tab reaches the buttons, Enter presses them; the slider takes arrow keys too).

    With ``highlight_scope`` set to a CSS class of an enclosing widget (the explorer does this),
    the entries of each step are highlighted in its tree and context rows too.

    ``context_window`` and ``reserve_tokens`` (by default the leaf's model's and Pi's settings; 0
    or ``None``: unknown) only decide whether step 1 says Pi's trigger fires at this leaf.

    ``leaf_id``, ``keep_recent_tokens`` and ``step`` (1 to 7) are traitlets. ``walk`` is the
    current :class:`~pikit.compaction.Walkthrough`, ``highlighted`` the entries of the current
    step, ``trace`` the :class:`~pikit.compaction.CompactionTrace` behind them and ``result`` the
    compaction built from it (once summarized). ``status`` is ``"ready"``, ``"summarizing"`` or
    ``"error"``.
    """

    step = traitlets.Int(1)
    keep_recent_tokens = traitlets.Int(20_000)
    context_window = traitlets.Int(0, allow_none=True)
    reserve_tokens = traitlets.Int(0)
    status = traitlets.Unicode("ready")

    def __init__(self, session: Session, leaf_id: Any = CURRENT, *, keep_recent_tokens: int | None = None,
                 summarizer: Summarizer | Callable[[], Summarizer] | None = None, settings: Settings | None = None,
                 instructions: str | None = None, step: int = 1, context_window: int | None = None,
                 reserve_tokens: int | None = None, **kwargs: Any) -> None:
        leaf = self._bind(session, leaf_id)
        self._summarizer: Summarizer | Callable[[], Summarizer] | None = summarizer
        self._summarizer_label: str | None = None
        self.instructions = instructions
        self.trace: CompactionTrace | None = None
        self.result: CompactionResult | None = None
        self._evaluation: tuple[CompactionResult, Evaluation] | None = None
        self._walk: Walkthrough | None = None
        self._problem: str | None = None
        # Pi's settings (defaults, with the reason, when they cannot be read).
        window, reserve, keep, self._settings_problem = resolve_budget(
            model_key(self.state.projection(leaf)) or None, settings)
        keep_recent_tokens = keep if keep_recent_tokens is None else keep_recent_tokens

        self.back_button = widgets.Button(description="Back", icon="arrow-left", tooltip="the previous step (←)",
                                          layout=widgets.Layout(width="90px"))
        self.back_button.add_class("pikit-step-back")
        self.next_button = widgets.Button(description="Next", icon="arrow-right", button_style="primary",
                                          tooltip="the next step (→)", layout=widgets.Layout(width="90px"))
        self.next_button.add_class("pikit-step-next")
        self.slider = widgets.IntSlider(value=1, min=1, max=_STEPS, step=1, description="step",
                                        continuous_update=False, layout=widgets.Layout(width="300px"))
        self.slider.add_class("pikit-step-slider")
        self.keep_box = widgets.BoundedIntText(value=max(0, keep_recent_tokens), min=0, max=10**9,
                                               description="keepRecentTokens", style={"description_width": "auto"},
                                               layout=widgets.Layout(width="230px"))
        self.keep_box.add_class("pikit-step-keep")
        self.summarize_button = widgets.Button(description="Write the summary", icon="pencil",
                                               tooltip="run the summarizer on the messages of step 5",
                                               layout=widgets.Layout(width="auto", display="none"))
        self.summarize_button.add_class("pikit-step-summarize")
        self.summarize_button.on_click(lambda _b: self.refresh())
        self.body = widgets.HTML()
        self.body.add_class("pikit-step-body")
        self.header = widgets.HTML()
        self.header.add_class("pikit-step-header")
        controls = widgets.HBox([self.back_button, self.slider, self.next_button, self.keep_box,
                                 self.summarize_button],
                                layout=widgets.Layout(align_items="center", flex_flow="row wrap"))
        controls.add_class("pikit-gap")
        style = widgets.HTML(f"<style>{STEPPER_CSS}</style>", layout=widgets.Layout(display="none"))
        self._keys = _StepKeys(layout=widgets.Layout(width="0", height="0", overflow="hidden"))
        self._keys.on_msg(self._on_key)
        self.highlight_scope: str | None = None
        self.highlight = widgets.HTML(layout=widgets.Layout(display="none"))
        self.highlight.add_class("pikit-step-highlight")
        self.lost = LostFacts()
        super().__init__([style_widget(), style, self._keys, self.highlight, self.header, controls, self.body,
                          self.lost, self.lost.callback_errors], **kwargs)
        self.add_class("pikit-root")
        self.add_class("pikit-stepper")

        widgets.link((self.slider, "value"), (self, "step"))
        widgets.link((self.keep_box, "value"), (self, "keep_recent_tokens"))
        self.keep_recent_tokens = max(0, keep_recent_tokens)
        self.context_window = (window.tokens or 0) if context_window is None else context_window
        self.reserve_tokens = reserve if reserve_tokens is None else reserve_tokens
        self.step = min(max(1, step), _STEPS)
        self.back_button.on_click(lambda _b: self.back())
        self.next_button.on_click(lambda _b: self.next())
        self._follow_leaf(leaf)
        self.observe(lambda _c: self.leaf_changed(), names="keep_recent_tokens")
        self.observe(lambda _c: self._rebuild(), names=["context_window", "reserve_tokens"])
        self.observe(lambda _c: self.refresh(), names="step")
        self.leaf_changed()

    def __repr__(self) -> str:
        return f"<CompactionStepper at {self.leaf_id!r}, keepRecentTokens={self.keep_recent_tokens}, step {self.step}>"

    @traitlets.validate("step")
    def _check_step(self, proposal: dict[str, Any]) -> int:
        return min(max(1, int(proposal["value"])), _STEPS)

    # ------------------------------------------------------------------ public
    @property
    def walk(self) -> Walkthrough:
        """The seven steps at the current leaf and settings."""
        if self._walk is None:
            self._walk = self._build()
        return self._walk

    @property
    def highlighted(self) -> tuple[Any, ...]:
        """The entries the current step is about."""
        return self.walk.step(self.step).highlighted

    @property
    def evaluation(self) -> Evaluation | None:
        """What the compaction of step 6 kept and lost (``None`` until the summary is written)."""
        result = self.result
        if result is None:
            return None
        if self._evaluation is None or self._evaluation[0] is not result:
            evaluation = evaluate(self.session, result)
            assert not isinstance(evaluation, list)
            self._evaluation = (result, evaluation)
        return self._evaluation[1]

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer step 6 uses (the offline one unless another was given)."""
        source = self._summarizer
        if source is None:
            from ..llm._select import get_summarizer

            source = self._summarizer = get_summarizer("offline")
        elif not isinstance(source, Summarizer) and callable(source):
            source = self._summarizer = source()  # a factory: made when the summary is first needed
        return source

    def set_summarizer(self, summarizer: Summarizer | Callable[[], Summarizer] | None,
                       instructions: str | None = None, *, name: str | None = None) -> None:
        """Use ``summarizer`` from now on (``None``: the offline one; a function returning one is
        called when step 6 first needs it, its failures shown there); the summary is written again
        (at once for the offline one, else on **Write the summary** or a step move). ``name`` names
        it in the header until it is made."""
        self._summarizer = summarizer
        self._summarizer_label = name
        self.instructions = instructions
        self.result = None
        self._walk = None
        self.refresh(summarize=self._offline())

    def _on_key(self, _widget: Any, content: Any, _buffers: Any) -> None:
        action = content.get("action") if isinstance(content, dict) else None
        if action in ("next", "back"):
            getattr(self, action)()
        elif action in ("first", "last"):
            self.step = 1 if action == "first" else _STEPS

    def next(self) -> None:
        """Go to the next step."""
        self.step = min(self.step + 1, _STEPS)

    def back(self) -> None:
        """Go to the previous step."""
        self.step = max(self.step - 1, 1)

    # ------------------------------------------------------------------ updates
    def leaf_changed(self) -> None:
        """Trace the compaction again (a new leaf or keepRecentTokens) and show the current step."""
        self.result = None
        self._walk = None
        self._problem = None
        try:
            if self.leaf_id is None:
                self.trace = None
            else:
                projection = self.projection
                self.trace = trace_compaction(projection.path, max(0, self.keep_recent_tokens), projection)
        except Exception as exc:
            self.trace = None
            self._problem = f"{type(exc).__name__}: {exc}"
        self.refresh(summarize=self._offline())

    def _summarize(self) -> None:
        trace = self.trace
        if trace is None or trace.preparation is None or self.result is not None:
            return
        self.status = "summarizing"
        self.body.value = ('<div class="pikit-status" role="status">writing the summary with '
                           f"{esc(self._summarizer_name())}…</div>")
        self.result = compact_prepared(self.session, trace.preparation, summarizer=self.summarizer,
                                       instructions=self.instructions)
        self._walk = None

    def _summarizer_name(self) -> str:
        source = self._summarizer
        if source is None:
            return "offline"
        if isinstance(source, Summarizer):
            return str(getattr(source, "name", type(source).__name__))
        return self._summarizer_label or "summarizer"

    def _build(self) -> Walkthrough:
        if self.trace is None:
            raise ValueError(self._problem or "the leaf is reset (empty branch): there is nothing to compact")
        settings = CompactionSettings(True, max(0, self.reserve_tokens), max(0, self.keep_recent_tokens))
        return walkthrough(self.trace, self.result, summarizer=self._summarizer_name(), settings=settings,
                           context_window=self.context_window or None)

    def _rebuild(self) -> None:
        self._walk = None
        self.refresh()

    def _offline(self) -> bool:
        """Whether the summarizer is the offline one (cheap: it may run again on every change)."""
        return self._summarizer_name() == "offline"

    def refresh(self, summarize: bool = True) -> None:
        """Show the current step, writing the summary first when the step needs it (unless
        ``summarize`` is false: a model is then called only when asked, by a step move or
        **Write the summary**)."""
        self.back_button.disabled = self.step <= 1
        self.next_button.disabled = self.step >= _STEPS
        self.header.value = self._header_html()
        self.summarize_button.layout.display = "none"
        if self.trace is None:
            why = self._problem or "the leaf is reset (empty branch): there is nothing to compact"
            self.body.value = error_box("Cannot step through a compaction here", why)
            self.highlight.value = ""
            self.status = "error"
            self.lost.clear()
            return
        problem = ""
        try:
            if self.step >= _SUMMARY_STEP and summarize:
                self._summarize()
            self.status = "ready"
        except Exception as exc:  # a summarizer failure is shown, never raised
            self.status = "error"
            problem = error_box("The summarizer failed: nothing was written", exc)
        step = self.walk.step(self.step)
        if self.step >= _SUMMARY_STEP and self.result is None and self.trace.preparation is not None:
            self.summarize_button.layout.display = None
        self.body.value = problem + render_step(self.walk, self.step)
        self._show_lost()
        self.header.value = self._header_html()  # the summarizer's own name once it is made
        self.highlight.value = highlight_css(step, self.highlight_scope) if self.highlight_scope else ""

    def _show_lost(self) -> None:
        """At the last step, once summarized: what the compaction lost."""
        if self.step < _STEPS or self.result is None:
            self.lost.clear()
            return
        try:
            evaluation = self.evaluation
            assert evaluation is not None
            self.lost.show(evaluation)
        except Exception as exc:
            self.lost.show_error("Cannot evaluate what this compaction lost", exc)

    def _header_html(self) -> str:
        leaf = self.leaf_id
        where = f'<span class="pikit-id">{esc(leaf)}</span>' if leaf is not None else "the reset leaf"
        problem = (f' · <span class="pikit-warn">settings: {esc(self._settings_problem)}</span>'
                   if self._settings_problem else "")
        return (f'<div class="pikit-title">Compaction, step by step</div><div class="pikit-sub">at {where} · '
                f"summarizer {esc(self._summarizer_name())}{problem}</div>")


class StepperLauncher(widgets.VBox):
    """A **Step through** toggle that opens a :class:`CompactionStepper` under another widget.

    The stepper is made on first use, on the host's session, and follows the host: its
    ``leaf_id``, the keepRecentTokens of ``keep_from`` (an ``(object, trait name)`` pair) and the
    ``context_window`` and ``reserve_tokens`` of ``budget_from`` (Pi's trigger, in step 1).
    The entries of each step are highlighted in the host's tree and context rows as well.
    ``summarizer`` (a function returning one) and ``instructions`` are asked for when the
    stepper opens and after :meth:`summarizer_changed`; ``summarizer_name`` names it meanwhile.
    ``on_entry`` is called with an entry's id when the source of a lost fact is clicked in the
    stepper (the explorer passes its :meth:`~pikit.widgets.SessionExplorer.select`).
    """

    def __init__(self, host: LeafWidget, keep_from: tuple[Any, str], budget_from: Any = None, *,
                 summarizer: Callable[[], Summarizer] | None = None, summarizer_name: Callable[[], str] | None = None,
                 instructions: Callable[[], str | None] | None = None,
                 on_entry: Callable[[Any], Any] | None = None, **kwargs: Any) -> None:
        self.host = host
        self._on_entry = on_entry
        self.keep_from = keep_from
        self.budget_from = budget_from
        self._summarizer = summarizer
        self._summarizer_name = summarizer_name
        self._instructions = instructions
        self.stepper: CompactionStepper | None = None
        self.toggle = widgets.ToggleButton(value=False, description="Step through", icon="list-ol",
                                           tooltip="play Pi's compaction on this leaf one step at a time, "
                                                   "with these settings",
                                           layout=widgets.Layout(width="auto"))
        self.toggle.add_class("pikit-open-stepper")
        self.toggle.observe(lambda c: self.show(c["new"]), names="value")
        super().__init__([self.toggle], **kwargs)
        self.add_class("pikit-stepper-launcher")

    def show(self, visible: bool = True) -> CompactionStepper | None:
        """Open (making it on first use) or close the stepper; returns it when open."""
        if self.toggle.value != visible:
            self.toggle.value = visible  # comes back here through the observer
            return self.stepper if visible else None
        if not visible:
            if self.stepper is not None:
                self.stepper.layout.display = "none"
                self.stepper.highlight.value = ""
            return None
        if self.stepper is None:
            source, name = self.keep_from
            self.stepper = CompactionStepper(self.host.session, self.host.leaf_id,
                                             keep_recent_tokens=getattr(source, name))
            scope = f"pikit-steps-{secrets.token_hex(4)}"
            self.host.add_class(scope)  # type: ignore[attr-defined]
            self.stepper.highlight_scope = scope
            if self._on_entry is not None:
                self.stepper.lost.on_select(self._on_entry)
            widgets.dlink((self.host, "leaf_id"), (self.stepper, "leaf_id"))
            widgets.dlink(self.keep_from, (self.stepper, "keep_recent_tokens"), transform=lambda v: max(0, v))
            if self.budget_from is not None:
                for trait in ("context_window", "reserve_tokens"):
                    widgets.dlink((self.budget_from, trait), (self.stepper, trait))
            self.summarizer_changed()
            self.children = [self.toggle, self.stepper]
        self.stepper.layout.display = None
        self.stepper.refresh()
        return self.stepper

    def summarizer_changed(self) -> None:
        """Give the stepper the host's current summarizer and instructions (the summary is written again)."""
        if self.stepper is None or self._summarizer is None:
            return
        self.stepper.set_summarizer(self._summarizer, self._instructions() if self._instructions else None,
                                    name=self._summarizer_name() if self._summarizer_name else None)
