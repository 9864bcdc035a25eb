"""The what-if settings of a compaction: a model picker and the keepRecentTokens, reserveTokens and
context-window sliders."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets
import traitlets

from .._formatting import fmt_int
from .._inert import visible
from ..compaction._settings import Settings
from ..errors import SettingsError
from ._budget import GIVEN, resolve_budget

__all__ = ["CompactionSettingsBox"]

_WINDOW_MAX = 2_000_000


class CompactionSettingsBox(widgets.VBox):
    """The model picker and the three sliders of a what-if compaction.

    ``model`` (``""``: the session's model), ``keep_recent_tokens``, ``reserve_tokens`` and
    ``context_window`` are traitlets: the sliders set them and follow them. Picking a model
    loads its settings from ``settings`` (``compaction.modelOverrides``) and its context window
    as Pi resolves it (``None`` when no source knows the model: the window slider then says
    "window unknown" until it is moved); values given to the constructor override the settings
    at first. ``window_source`` names where the window came from. ``problem``
    says why the settings could not be read (``""`` when they could); ``leaf_model()`` names
    the model the session uses now (what the *session model* entry stands for). A model
    whose settings cannot be loaded calls the callbacks of :meth:`on_error` with the error.
    """

    model = traitlets.Unicode("")
    keep_recent_tokens = traitlets.Int(20_000)
    reserve_tokens = traitlets.Int(16_384)
    context_window = traitlets.Int(None, allow_none=True)
    window_source = traitlets.Unicode(None, allow_none=True)
    problem = traitlets.Unicode("")

    def __init__(self, session_model: str = "", *, settings: Settings | None = None, problem: str | None = None,
                 leaf_model: Callable[[], str] | None = None, context_window: int | None = None,
                 reserve_tokens: int | None = None, keep_recent_tokens: int | None = None, **kwargs: Any) -> None:
        self.settings = settings
        self._placing = False  # the window slider is being moved to the window, not by hand
        self._leaf_model = leaf_model or (lambda: session_model)
        self._errors = widgets.CallbackDispatcher()
        options, overrides_problem = self._model_options(session_model)
        self.model_picker = widgets.Dropdown(options=options, value="", description="model",
                                             layout=widgets.Layout(width="420px"))
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
        super().__init__([self.model_picker, self.keep_slider, self.reserve_slider, self.window_slider], **kwargs)
        self._start(session_model, overrides_problem or problem, (context_window, reserve_tokens, keep_recent_tokens))
        self._wire()

    def __repr__(self) -> str:
        return (f"<CompactionSettingsBox model={self.model!r} keep={self.keep_recent_tokens} "
                f"reserve={self.reserve_tokens} window={self.context_window}>")

    def on_error(self, callback: Callable[[Exception], None], remove: bool = False) -> None:
        """Call ``callback(error)`` when the settings of the model picked cannot be loaded."""
        self._errors.register_callback(callback, remove=remove)

    def _model_options(self, session_model: str) -> tuple[list[tuple[str, str]], str | None]:
        """The picker's entries, and why the settings' overrides could not be read (``None`` if they could)."""
        from ..llm._models import model_catalog

        options = [(visible(f"session model ({session_model or 'not recorded'})"), "")]
        overrides: Mapping[str, Any] = {}
        problem = None
        if self.settings is not None:
            try:
                overrides = self.settings.overrides()
            except SettingsError as exc:
                problem = str(exc)
        options.extend((f"override: {key}", key) for key in overrides)
        provider = session_model.partition("/")[0] if "/" in session_model else None
        options.extend((f"{info.key} ({_window_text(info.context_window)})", info.key)
                       for info in model_catalog() if info.provider == provider and info.type == "chat"
                       and info.key not in overrides)
        return options, problem

    def _start(self, session_model: str, problem: str | None, given: tuple[int | None, int | None, int | None]) -> None:
        """Take the session model's settings, but for the values given."""
        resolved_window, resolved_reserve, resolved_keep, resolve_problem = resolve_budget(session_model or None,
                                                                                           self.settings)
        window, reserve, keep = given
        with self.hold_trait_notifications():
            self.problem = problem or resolve_problem or ""
            self.context_window = window if window is not None else resolved_window.tokens
            self.window_source = GIVEN if window is not None else resolved_window.source
            self.reserve_tokens = reserve if reserve is not None else resolved_reserve
            self.keep_recent_tokens = keep if keep is not None else resolved_keep
        self._sync_sliders()

    def _wire(self) -> None:
        for slider, name in ((self.keep_slider, "keep_recent_tokens"), (self.reserve_slider, "reserve_tokens")):
            widgets.link((slider, "value"), (self, name))
        self.window_slider.observe(self._on_window_slider, names="value")
        self.model_picker.observe(self._on_model, names="value")
        self.observe(self._on_window, names="context_window")

    def _on_model(self, change: dict[str, Any]) -> None:
        try:
            key = change["new"] or ""
            window, reserve, keep, problem = resolve_budget(key or self._leaf_model() or None, self.settings)
            with self.hold_trait_notifications():
                self.problem = problem or self.problem
                self.model = key
                self.context_window, self.window_source = window.tokens, window.source
                self.reserve_tokens = reserve
                self.keep_recent_tokens = keep
            self._sync_sliders()
        except Exception as exc:
            self._errors(exc)

    def _on_window_slider(self, change: dict[str, Any]) -> None:
        if self._placing:
            return
        with self.hold_trait_notifications():
            self.context_window, self.window_source = round(change["new"]), GIVEN

    def _on_window(self, change: dict[str, Any]) -> None:
        top = max(change["new"] or 0, self.keep_recent_tokens, self.reserve_tokens)
        self.keep_slider.max = top
        self.reserve_slider.max = top
        self._set_window_slider(change["new"])

    def _sync_sliders(self) -> None:
        window = None if self.context_window is None else max(self.context_window, 1)
        top = max(window or 0, self.keep_recent_tokens, self.reserve_tokens)
        self.keep_slider.max = top
        self.reserve_slider.max = top
        self.keep_slider.value = self.keep_recent_tokens
        self.reserve_slider.value = self.reserve_tokens
        self._set_window_slider(window)

    def _set_window_slider(self, window: int | None) -> None:
        self.window_slider.description = "context window" if window is not None else "window unknown"
        if window is not None and round(self.window_slider.value) != window:
            exponent = math.log2(max(window, 1))
            self._placing = True
            try:
                self.window_slider.min = min(12.0, exponent)
                self.window_slider.max = max(math.log2(_WINDOW_MAX), exponent)
                self.window_slider.value = float(window)
            finally:
                self._placing = False


def _window_text(window: int | None) -> str:
    return "window unknown" if window is None else fmt_int(window)
