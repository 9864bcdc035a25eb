"""The context budget of a leaf: what fills the window, where Pi compacts, what a compaction keeps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import traitlets

from ..errors import SettingsError
from ..projection import Projection
from ..session import CURRENT, Session
from ..settings import DEFAULTS, Settings, load_settings
from ..tokens import estimate_tokens
from ._html import error_box, esc, fmt_int, style_widget
from ._state import LeafOfSession, SessionState, state_for
from .context import _zones

__all__ = ["BudgetBar", "BudgetSegments", "budget_segments", "model_key", "resolve_budget"]


@dataclass(frozen=True)
class BudgetSegments:
    """Estimated tokens of each part of a context, and its size by Pi's rule (``tokens``).

    ``system``: the current (replayed) system prompt; ``summary``: the compaction summary;
    ``kept``: messages a compaction kept from before it; ``new``: every other message
    (those after the compaction, or all of them when there is none).
    """

    system: int
    summary: int
    kept: int
    new: int
    tokens: int

    @property
    def total(self) -> int:
        """Sum of the parts (estimates)."""
        return self.system + self.summary + self.kept + self.new

    @property
    def unitemized(self) -> int:
        """How much the context size by Pi's rule exceeds the estimates (0 when it does not).

        When the size comes from provider-reported usage it includes what the session file
        does not itemize (a system prompt and tool declarations Pi did not record, tokenizer
        differences); the bar shows it as its own segment.
        """
        return max(0, self.tokens - self.total)


def budget_segments(projection: Projection, estimates: list[int] | None = None) -> BudgetSegments:
    """Split ``projection`` into the parts the budget bar stacks."""
    estimates = projection.estimates if estimates is None else estimates
    zones = _zones(projection)
    summary = kept = new = 0
    index = 0
    for pe, zone in zip(projection.entries, zones, strict=True):
        for message in pe.messages:
            role = message.get("role")
            value = estimates[index]
            index += 1
            if role == "system":
                continue
            if role == "compactionSummary" and zone == "summary":
                summary += value
            elif zone == "kept":
                kept += value
            else:
                new += value
    system_message = projection.system_message
    system = estimate_tokens(system_message) if system_message is not None else 0
    return BudgetSegments(system, summary, kept, new, projection.tokens)


def model_key(projection: Projection) -> str | None:
    """``provider/modelId`` of the model in use at the projection's leaf (``None`` if unknown)."""
    model = projection.model or {}
    provider, model_id = model.get("provider"), model.get("modelId")
    if model_id is None:
        return None
    return f"{provider}/{model_id}" if provider else str(model_id)


def resolve_budget(model: str | None, settings: Settings | None) -> tuple[int, int, int, str | None]:
    """``(context_window, reserve_tokens, keep_recent_tokens, problem)`` for ``model`` from the
    settings (defaults when they cannot be read; ``problem`` then says why)."""
    from ..llm.models import DEFAULT_CONTEXT_WINDOW, lookup_model

    window = lookup_model(model).context_window if model else DEFAULT_CONTEXT_WINDOW
    problem = None
    try:
        resolved = (settings if settings is not None else load_settings()).for_model(model)
        reserve, keep = resolved.reserve_tokens, resolved.keep_recent_tokens
    except SettingsError as exc:
        problem = str(exc)
        reserve = DEFAULTS["compaction"]["reserveTokens"]
        keep = DEFAULTS["compaction"]["keepRecentTokens"]
    return window, reserve, keep, problem


class BudgetBar(LeafOfSession, widgets.VBox):
    """System prompt, summary, kept and new messages stacked against the context window, with
    the threshold line (``context_window - reserve_tokens``), the context size by Pi's rule and
    the ``keep_recent_tokens`` span a compaction would keep.

    ``model`` (``provider/modelId``), ``context_window``, ``reserve_tokens`` and
    ``keep_recent_tokens`` are traitlets; left out, they come from the leaf's model, the known
    model table and the settings (``~/.pi/agent/settings.json`` + project, with overrides).
    """

    leaf_id = traitlets.Any(None)
    model = traitlets.Unicode("")
    context_window = traitlets.Int(128_000)
    reserve_tokens = traitlets.Int(16_384)
    keep_recent_tokens = traitlets.Int(20_000)

    def __init__(self, session: Session, leaf_id: Any = CURRENT, *, model: str | None = None,
                 context_window: int | None = None, reserve_tokens: int | None = None,
                 keep_recent_tokens: int | None = None, settings: Settings | None = None, **kwargs: Any) -> None:
        self.session = session
        self.state: SessionState = state_for(session)
        leaf = session.leaf_id if leaf_id is CURRENT else leaf_id
        if leaf is not None and leaf not in session:
            raise traitlets.TraitError(f"no entry {leaf!r} in the session")
        self._projection: Projection | None = None
        model = model if model is not None else (model_key(self.state.projection(leaf)) or "")
        window, reserve, keep, self.settings_problem = resolve_budget(model or None, settings)
        self.html = widgets.HTML()
        self.html.add_class("pikit-budget-html")
        super().__init__([style_widget(), self.html], **kwargs)
        self.add_class("pikit-root")
        self.add_class("pikit-budget-bar")
        with self.hold_trait_notifications():
            self.leaf_id = leaf
            self.model = model
            self.context_window = context_window if context_window is not None else window
            self.reserve_tokens = reserve_tokens if reserve_tokens is not None else reserve
            self.keep_recent_tokens = keep_recent_tokens if keep_recent_tokens is not None else keep
        self.observe(self._on_leaf, names="leaf_id")
        self.observe(lambda _c: self.render(),
                     names=["model", "context_window", "reserve_tokens", "keep_recent_tokens"])
        self.render()

    @property
    def projection(self) -> Projection:
        """The projection measured."""
        if self._projection is None:
            self._projection = self.state.projection(self.leaf_id)
        return self._projection

    @property
    def segments(self) -> BudgetSegments:
        """The stacked parts at the current leaf."""
        p = self.projection
        return budget_segments(p, p.estimates)

    @property
    def threshold(self) -> int:
        """``context_window - reserve_tokens``: above it Pi compacts."""
        return self.context_window - self.reserve_tokens

    def _on_leaf(self, _change: dict[str, Any]) -> None:
        self._projection = None
        self.render()

    def show_projection(self, projection: Projection) -> None:
        """Measure a projection made elsewhere (e.g. a what-if branch)."""
        self._projection = projection
        self.render()

    def render(self) -> None:
        """Redraw."""
        try:
            self.html.value = self._html()
        except Exception as exc:
            self.html.value = error_box("Cannot draw the budget", exc)

    def _html(self) -> str:
        seg = self.segments
        window = max(0, self.context_window)
        threshold = self.threshold
        keep = max(0, self.keep_recent_tokens)
        end = seg.total + seg.unitemized
        scale = max(window, end, seg.tokens, 1) * 1.02

        def pct(value: float) -> str:
            return f"{max(0.0, min(100.0, 100.0 * value / scale)):.3f}%"

        compacted = bool(seg.summary or seg.kept)
        parts = [("system", "system prompt", seg.system),
                 ("unitemized", "not itemized", seg.unitemized),
                 ("summary", "summary", seg.summary), ("kept", "kept", seg.kept),
                 ("new", "new" if compacted else "messages", seg.new)]
        hints = {"system": "the current system prompt (replayed from the system messages)",
                 "unitemized": "the provider-reported usage exceeds the estimates of what the file holds "
                               "(e.g. a system prompt or tool list Pi did not record)",
                 "summary": "the compaction summary", "kept": "older messages the compaction kept verbatim",
                 "new": "messages after the compaction" if compacted else "the conversation"}
        bars = "".join(
            f'<div class="pikit-budget-seg pikit-budget-{key}" style="width:{pct(value)}" '
            f'title="{esc(label)}: {fmt_int(value)} tokens"></div>' for key, label, value in parts if value > 0)
        keep_left = max(0, end - keep)
        lines = (
            f'<div class="pikit-budget-line pikit-budget-threshold" style="left:{pct(threshold)}" '
            f'title="threshold {fmt_int(threshold)} = window {fmt_int(window)} − reserve '
            f'{fmt_int(self.reserve_tokens)}"></div>'
            f'<div class="pikit-budget-line pikit-budget-size" style="left:{pct(seg.tokens)}" '
            f'title="context size by Pi\'s rule: {fmt_int(seg.tokens)}"></div>'
            f'<div class="pikit-budget-line pikit-budget-window" style="left:{pct(window)}" '
            f'title="context window {fmt_int(window)}"></div>'
        )
        keep_span = (f'<div class="pikit-budget-keep" style="left:{pct(keep_left)};width:{pct(end - keep_left)}" '
                     f'title="keepRecentTokens {fmt_int(keep)}: the newest messages a compaction keeps"></div>')
        marks = (f'<span class="pikit-mark-threshold" style="left:{pct(threshold)}">threshold '
                 f"{fmt_int(threshold)} ▾</span>")
        axis = (f'<span style="left:0;transform:none">0</span>'
                f'<span style="left:{pct(window)};transform:translateX(-100%)">window {fmt_int(window)}</span>')
        if seg.tokens > threshold:
            verdict = (f'<span class="pikit-warn"><b>over the threshold</b> by {fmt_int(seg.tokens - threshold)}: '
                       "Pi compacts before the next model call</span>")
        else:
            verdict = f"<span>room before Pi compacts: <b>{fmt_int(threshold - seg.tokens)}</b> tokens</span>"
        legend = "".join(
            f'<span title="{esc(hints[key])}"><span class="pikit-swatch pikit-budget-{key}"></span>{esc(label)} '
            f"<b>{fmt_int(value)}</b></span>"
            for key, label, value in parts if value > 0 or key in ("system", "new"))
        legend += ('<span title="Pi compacts when the context size passes it"><span class="pikit-swatch '
                   'pikit-swatch-line"></span>threshold = window − reserve</span>'
                   '<span title="the newest tokens a compaction keeps verbatim"><span class="pikit-swatch '
                   f'pikit-swatch-keep"></span>keepRecentTokens {fmt_int(keep)}</span>')
        problem = (f'<div class="pikit-warn">settings could not be read, defaults shown: '
                   f'{esc(self.settings_problem)}</div>' if self.settings_problem else "")
        model = self.model or "unknown model"
        share = 100 * seg.tokens / window if window else 0.0
        return (
            f'<div class="pikit-budget" aria-label="context budget">'
            f'<div class="pikit-stats"><span><b>Budget</b> · {esc(model)} · window {fmt_int(window)} · '
            f"reserve {fmt_int(self.reserve_tokens)}</span>"
            f'<span>context size <b class="pikit-budget-tokens">{fmt_int(seg.tokens)}</b> ({share:.1f}%)</span>'
            f"{verdict}</div>"
            f'<div class="pikit-budget-marks">{marks}</div>'
            f'<div style="position:relative"><div class="pikit-budget-track">{bars}</div>{lines}</div>'
            f'<div style="position:relative;height:12px">{keep_span}</div>'
            f'<div class="pikit-budget-axis">{axis}</div>'
            f'<div class="pikit-legend">{legend}</div>{problem}</div>'
        )
