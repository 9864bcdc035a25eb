"""The budget of a context: its parts stacked against the window, the threshold, keepRecentTokens.

:func:`budget_view` builds a frozen :class:`BudgetView` from a projection and the settings;
:func:`render_budget` draws it as HTML. Neither needs a kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..._context.projection import Projection
from ..._context.tokens import estimate_tokens
from ..._palette import SEGMENT_LABELS
from ...llm._window import UNKNOWN_WINDOW_HINT
from .._html import esc, fmt_int
from .context import zones

__all__ = ["BudgetSegments", "BudgetView", "budget_segments", "budget_view", "render_budget"]


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
        """The part of the context size no estimate accounts for: ``tokens - total`` (0 when negative).

        It is not 0 only when the size starts from a usage the provider reported (Pi's rule:
        that usage plus the estimates of the messages after it). Then it is the usage beyond
        Pi's estimates of what it covers, the system prompt and the messages up to the one
        that recorded it: what the file does not itemize (tool definitions, a system prompt it
        does not record) and where ``ceil(chars / 4)`` counts low. The bar shows it as its
        own segment; the legend says what it is.
        """
        return max(0, self.tokens - self.total)

    @property
    def end(self) -> int:
        """Where the stacked bar ends (the parts plus what is not itemized)."""
        return self.total + self.unitemized


def budget_segments(projection: Projection, estimates: Sequence[int] | None = None) -> BudgetSegments:
    """Split ``projection`` into the parts the budget bar stacks."""
    estimates = projection.estimates if estimates is None else estimates
    summary = kept = new = 0
    index = 0
    for pe, zone in zip(projection.entries, zones(projection), strict=True):
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


@dataclass(frozen=True)
class BudgetView:
    """Everything the budget bar shows.

    ``scale`` is the token count the full width stands for (give two views the same scale to
    draw them one above the other); ``title`` names the bar (e.g. "before", "after").
    """

    segments: BudgetSegments
    model: str
    window: int | None
    reserve: int
    keep: int
    problem: str | None = None
    title: str = "Budget"
    scale: int = 0
    window_source: str | None = None

    @property
    def threshold(self) -> int | None:
        """``window - reserve``: above it Pi compacts (``None``: the window is unknown)."""
        return None if self.window is None else self.window - self.reserve

    @property
    def natural_scale(self) -> int:
        """The smallest scale that holds the window and the whole bar."""
        seg = self.segments
        return max(self.window or 0, seg.end, seg.tokens, 1)

    @property
    def over(self) -> bool:
        """Whether the context size passes the threshold (Pi compacts before the next call)."""
        threshold = self.threshold
        return threshold is not None and self.segments.tokens > threshold


def budget_view(projection: Projection, *, model: str, window: int | None, reserve: int, keep: int,
                problem: str | None = None, title: str = "Budget", scale: int = 0,
                window_source: str | None = None) -> BudgetView:
    """The budget of ``projection`` with these settings (``window`` ``None``: unknown, no threshold
    is drawn; ``window_source`` names where a known window came from)."""
    return BudgetView(budget_segments(projection), model, None if window is None else max(0, window), reserve,
                      max(0, keep), problem, title, scale, window_source)


_HINTS = {
    "system": "the current system prompt (replayed from the system messages)",
    "unitemized": "the context size starts from the usage the provider reported; this much of that usage is "
                  "beyond Pi's estimates of the system prompt and the messages it covers: what the file does not "
                  "itemize (tool definitions, a system prompt it does not record) and where ceil(chars / 4) "
                  "counts low",
    "summary": "the compaction summary",
    "kept": "older messages the compaction kept verbatim",
}


def _parts(seg: BudgetSegments) -> list[tuple[str, str, int, str]]:
    compacted = bool(seg.summary or seg.kept)
    new_hint = "messages after the compaction" if compacted else "the conversation"
    return [("system", SEGMENT_LABELS["system"], seg.system, _HINTS["system"]),
            ("unitemized", SEGMENT_LABELS["unitemized"], seg.unitemized, _HINTS["unitemized"]),
            ("summary", SEGMENT_LABELS["summary"], seg.summary, _HINTS["summary"]),
            ("kept", SEGMENT_LABELS["kept"], seg.kept, _HINTS["kept"]),
            ("new", SEGMENT_LABELS["new"] if compacted else "messages", seg.new, new_hint)]


class _Scale:
    def __init__(self, tokens: int) -> None:
        self.tokens = max(1, tokens) * 1.02

    def pct(self, value: float) -> str:
        return f"{self.share(value):.3f}%"

    def share(self, value: float) -> float:
        return max(0.0, min(100.0, 100.0 * value / self.tokens))


def _stats(view: BudgetView) -> str:
    seg = view.segments
    if view.window is None or view.threshold is None:
        model = esc(view.model or "model not recorded")
        return (f'<div class="pikit-stats"><span><b>{esc(view.title)}</b> · {model} · '
                f'<span class="pikit-warn">window unknown: {esc(UNKNOWN_WINDOW_HINT)}</span> · reserve '
                f"{fmt_int(view.reserve)}</span>"
                f'<span>context size <b class="pikit-budget-tokens">{fmt_int(seg.tokens)}</b></span>'
                "<span>no threshold without a window</span></div>")
    if view.over:
        verdict = (f'<span class="pikit-warn"><b>over the threshold</b> by {fmt_int(seg.tokens - view.threshold)}: '
                   "Pi compacts before the next model call</span>")
    else:
        verdict = f"<span>room before Pi compacts: <b>{fmt_int(view.threshold - seg.tokens)}</b> tokens</span>"
    share = 100 * seg.tokens / view.window if view.window else 0.0
    return (f'<div class="pikit-stats"><span><b>{esc(view.title)}</b> · {esc(view.model or "model not recorded")} · '
            f"window {fmt_int(view.window)} ({esc(view.window_source or 'given')}) · reserve "
            f"{fmt_int(view.reserve)}</span>"
            f'<span>context size <b class="pikit-budget-tokens">{fmt_int(seg.tokens)}</b> ({share:.1f}%)</span>'
            f"{verdict}</div>")


def _threshold_mark(view: BudgetView, scale: _Scale) -> str:
    # The label sits on the side of the line with room for it, so it is never cut off at an edge.
    if view.threshold is None:
        return ""
    share = scale.share(view.threshold)
    side = "pikit-mark-left" if share > 50 else "pikit-mark-right"
    text = f"threshold {fmt_int(view.threshold)} ▾" if share > 50 else f"▾ threshold {fmt_int(view.threshold)}"
    return (f'<span class="pikit-mark-threshold {side}" style="left:{scale.pct(view.threshold)}">'
            f"{text}"
            "</span>")


def _track(view: BudgetView, scale: _Scale) -> str:
    seg = view.segments
    bars = "".join(
        f'<div class="pikit-budget-seg pikit-budget-{key}" style="width:{scale.pct(value)}" '
        f'title="{esc(label)}: {fmt_int(value)} tokens"></div>' for key, label, value, _ in _parts(seg) if value > 0)
    size = (f'<div class="pikit-budget-line pikit-budget-size" style="left:{scale.pct(seg.tokens)}" '
            f'title="context size by Pi\'s rule: {fmt_int(seg.tokens)}"></div>')
    if view.window is None or view.threshold is None:
        lines = size
    else:
        lines = (
            f'<div class="pikit-budget-line pikit-budget-threshold" style="left:{scale.pct(view.threshold)}" '
            f'title="threshold {fmt_int(view.threshold)} = window {fmt_int(view.window)} − reserve '
            f'{fmt_int(view.reserve)}"></div>{size}'
            f'<div class="pikit-budget-line pikit-budget-window" style="left:{scale.pct(view.window)}" '
            f'title="context window {fmt_int(view.window)} ({esc(view.window_source or "given")})"></div>')
    keep_left = max(0, seg.end - view.keep)
    keep_span = (f'<div class="pikit-budget-keep" style="left:{scale.pct(keep_left)};'
                 f'width:{scale.pct(seg.end - keep_left)}" title="keepRecentTokens {fmt_int(view.keep)}: '
                 'the newest messages a compaction keeps"></div>')
    axis = '<span style="left:0;transform:none">0</span>' + (
        "" if view.window is None else f'<span style="left:{scale.pct(view.window)};transform:translateX(-100%)">'
        f"window {fmt_int(view.window)}</span>")
    return (f'<div class="pikit-budget-marks">{_threshold_mark(view, scale)}</div>'
            f'<div style="position:relative"><div class="pikit-budget-track">{bars}</div>{lines}</div>'
            f'<div style="position:relative;height:12px">{keep_span}</div>'
            f'<div class="pikit-budget-axis">{axis}</div>')


#: What the legend says after a part's figure (the hint says more).
_NOTES = {"unitemized": "reported usage beyond Pi's estimates of the messages it covers"}


def _legend(view: BudgetView) -> str:
    legend = "".join(
        f'<span title="{esc(hint)}"><span class="pikit-swatch pikit-budget-{key}"></span>{esc(label)} '
        f"<b>{fmt_int(value)}</b>"
        + (f' <span class="pikit-dim pikit-legend-note">({esc(_NOTES[key])})</span>' if key in _NOTES else "")
        + "</span>"
        for key, label, value, hint in _parts(view.segments) if value > 0 or key in ("system", "new"))
    if view.threshold is not None:
        legend += ('<span title="Pi compacts when the context size passes it"><span class="pikit-swatch '
                   'pikit-swatch-line"></span>threshold = window − reserve</span>')
    legend += ('<span title="the newest tokens a compaction keeps verbatim"><span class="pikit-swatch '
               f'pikit-swatch-keep"></span>keepRecentTokens {fmt_int(view.keep)}</span>')
    return f'<div class="pikit-legend">{legend}</div>'


def render_budget(view: BudgetView, *, legend: bool = True) -> str:
    """The budget bar of ``view`` as HTML (session text escaped)."""
    scale = _Scale(view.scale or view.natural_scale)
    problem = (f'<div class="pikit-warn">settings could not be read, defaults shown: '
               f'{esc(view.problem)}</div>' if view.problem else "")
    return (f'<div class="pikit-budget" aria-label="{esc(view.title)}">{_stats(view)}{_track(view, scale)}'
            f'{_legend(view) if legend else ""}{problem}</div>')
