"""The context budget of a leaf: what fills the window, where Pi compacts, what a compaction keeps."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import traitlets

from .._context.projection import Projection
from .._session import Session
from .._tree.sessiontree import CURRENT
from ..compaction._settings import DEFAULTS, Settings, load_settings
from ..errors import SettingsError
from ..llm._window import ContextWindow, model_window
from ._base import LeafWidget
from ._html import error_box, style_widget
from ._views.budget import BudgetSegments, BudgetView, budget_segments, budget_view, render_budget

GIVEN = "a setting/argument"
"""The source of a window given to a widget or set on it by hand."""

__all__ = ["GIVEN", "BudgetBar", "BudgetSegments", "budget_segments", "model_key", "resolve_budget"]


def model_key(projection: Projection) -> str | None:
    """``provider/modelId`` of the model in use at the projection's leaf (``None`` if unknown)."""
    model = projection.model or {}
    provider, model_id = model.get("provider"), model.get("modelId")
    if model_id is None:
        return None
    return f"{provider}/{model_id}" if provider else str(model_id)


def resolve_budget(model: str | None, settings: Settings | None) -> tuple[ContextWindow, int, int, str | None]:
    """``(context_window, reserve_tokens, keep_recent_tokens, problem)`` for ``model`` from the
    settings (defaults when they cannot be read; ``problem`` then says why). The window is the
    model's as Pi resolves it, with its source, or unknown."""
    window = model_window(model)
    problem = None
    try:
        resolved = (settings if settings is not None else load_settings()).for_model(model)
        reserve, keep = resolved.reserve_tokens, resolved.keep_recent_tokens
    except SettingsError as exc:
        problem = str(exc)
        reserve = DEFAULTS["compaction"]["reserveTokens"]
        keep = DEFAULTS["compaction"]["keepRecentTokens"]
    return window, reserve, keep, problem


class BudgetBar(LeafWidget, widgets.VBox):
    """System prompt, summary, kept and new messages stacked against the context window, with
    the threshold line (``context_window - reserve_tokens``), the context size by Pi's rule and
    the ``keep_recent_tokens`` span a compaction would keep.

    ``model`` (``provider/modelId``), ``context_window``, ``reserve_tokens`` and
    ``keep_recent_tokens`` are traitlets; left out, they come from the leaf's model (its window
    as Pi resolves it: ``None`` when no source knows the model, and then no threshold is drawn)
    and the settings (``~/.pi/agent/settings.json`` + project, with overrides),
    and follow the model of the projection shown: a leaf move or a refresh of a followed file
    that reaches another model (or the first recorded one) resolves them again. A value given
    or set by hand stays. ``window_source`` names where the window came from (a model source, or
    ``"a setting/argument"`` for one given or set by hand). ``view`` is the
    :class:`~.views.budget.BudgetView` drawn last.
    """

    _SETTINGS = ("model", "context_window", "reserve_tokens", "keep_recent_tokens")

    model = traitlets.Unicode("")
    context_window = traitlets.Int(None, allow_none=True)
    window_source = traitlets.Unicode(None, allow_none=True)
    reserve_tokens = traitlets.Int(16_384)
    keep_recent_tokens = traitlets.Int(20_000)

    def __init__(self, session: Session, leaf_id: Any = CURRENT, *, model: str | None = None,
                 context_window: int | None = None, reserve_tokens: int | None = None,
                 keep_recent_tokens: int | None = None, settings: Settings | None = None, **kwargs: Any) -> None:
        leaf = self._bind(session, leaf_id)
        self.view: BudgetView | None = None
        self.settings_problem: str | None = None
        self._settings = settings
        given = dict(zip(self._SETTINGS, (model, context_window, reserve_tokens, keep_recent_tokens), strict=True))
        self._given = {name for name, value in given.items() if value is not None}
        self._resolving = False
        self.html = widgets.HTML()
        self.html.add_class("pikit-budget-html")
        super().__init__([style_widget(), self.html], **kwargs)
        self.add_class("pikit-root")
        self.add_class("pikit-budget-bar")
        with self.hold_trait_notifications():
            for name in self._given:
                setattr(self, name, given[name])
            self._resolve(model if model is not None else (model_key(self.state.projection(leaf)) or ""))
        self._follow_leaf(leaf)
        self.observe(self._on_setting, names=list(self._SETTINGS))
        self.refresh()

    def __repr__(self) -> str:
        return (f"<BudgetBar leaf={self.leaf_id!r} window={self.context_window} reserve={self.reserve_tokens} "
                f"keep={self.keep_recent_tokens}>")

    @property
    def segments(self) -> BudgetSegments:
        """The stacked parts at the current leaf."""
        return budget_segments(self.projection)

    @property
    def threshold(self) -> int | None:
        """``context_window - reserve_tokens``: above it Pi compacts (``None``: the window is unknown)."""
        return None if self.context_window is None else self.context_window - self.reserve_tokens

    def build(self) -> BudgetView:
        """The view model of the projection shown, with this bar's settings."""
        return budget_view(self.projection, model=self.model, window=self.context_window,
                           reserve=self.reserve_tokens, keep=self.keep_recent_tokens, problem=self.settings_problem,
                           window_source=self.window_source)

    def _resolve(self, model: str) -> None:
        """Take ``model`` and the window, reserve and keep it implies (those not given by hand)."""
        window, reserve, keep, self.settings_problem = resolve_budget(model or None, self._settings)
        self._resolving = True
        try:
            with self.hold_trait_notifications():
                for name, value in zip(self._SETTINGS, (model, window.tokens, reserve, keep), strict=True):
                    if name not in self._given:
                        setattr(self, name, value)
                self.window_source = GIVEN if "context_window" in self._given else window.source
        finally:
            self._resolving = False

    def _on_setting(self, change: dict[str, Any]) -> None:
        if not self._resolving:
            self._given.add(change["name"])  # set by hand: it stays when the leaf's model changes
            if change["name"] == "context_window":
                self.window_source = GIVEN
            self.refresh()

    def refresh(self) -> None:
        """Redraw (after taking the model of the projection shown, unless one was given)."""
        try:
            model = self.model if "model" in self._given else (model_key(self.projection) or "")
            if model != self.model:
                self._resolve(model)
            self.view = self.build()
            self.html.value = render_budget(self.view)
        except Exception as exc:
            self.view = None
            self.html.value = error_box("Cannot draw the budget", exc)
