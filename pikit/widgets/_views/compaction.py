"""What-if compaction, as data: the cut-point preview and the tokensBefore/After chart.

:func:`cut_preview` turns a :class:`~pikit.compaction.Preparation` into a frozen
:class:`CutPreview` and :func:`render_preview` draws it; :class:`ChartGroup` holds one group of
bars (the branch's own compactions, or one run with its settings) and :func:`render_chart`
draws the groups side by side. None of it needs a kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..._formatting import fmt_short, plural
from ..._palette import LINES, SEGMENTS
from ...compaction._preparation import Preparation
from ...llm._window import UNKNOWN_WINDOW_HINT
from .._html import esc, fmt_int

__all__ = [
    "EMPTY_CHART",
    "ChartGroup",
    "CompactionPoint",
    "CutPreview",
    "RunSettings",
    "cut_preview",
    "render_chart",
    "render_preview",
]


# ---------------------------------------------------------------------------------- preview
@dataclass(frozen=True)
class CutPreview:
    """Where a compaction run now would cut, and what it would summarize and keep.

    Token figures leave system messages out (they are never summarized or kept). Without a
    preparation (nothing to compact) only ``tokens``, ``threshold`` and ``problem`` are set.
    ``threshold`` is ``None`` when the context window is unknown.
    """

    tokens: int
    threshold: int | None
    problem: str | None = None
    ready: bool = False
    first_kept_id: Any = None
    first_kept_role: str = ""
    first_kept_text: str = ""
    previous: int = 0
    summarized: int = 0
    prefix: int = 0
    kept: int = 0
    prefix_messages: int = 0
    messages_to_summarize: int = 0
    summarized_entries: int = 0
    kept_entries: int = 0
    kept_tokens: int = 0
    tokens_before: int = 0
    read_files: tuple[str, ...] = ()
    modified_files: tuple[str, ...] = ()

    @property
    def fires(self) -> bool:
        """Whether Pi would compact at this context size (never, as far as is known, without a threshold)."""
        return self.threshold is not None and self.tokens > self.threshold


def _per_entry(prep: Preparation) -> list[int]:
    """Tokens of each projected entry without its system messages."""
    estimates = prep.projection.estimates
    out: list[int] = []
    index = 0
    for pe in prep.projection.entries:
        out.append(sum(estimates[index + k] for k, m in enumerate(pe.messages) if m.get("role") != "system"))
        index += len(pe.messages)
    return out


def cut_preview(prep: Preparation | None, tokens: int, threshold: int | None, *, problem: str | None = None,
                describe: Callable[[Any], tuple[str, str]] | None = None) -> CutPreview:
    """The preview of ``prep`` (``describe(entry_id) -> (role, one-line text)`` names the first kept entry)."""
    if prep is None:
        return CutPreview(tokens, threshold, problem)
    per_entry = _per_entry(prep)
    start = 1 if prep.previous_compaction is not None else 0
    history_end = prep.turn_start_index if prep.is_split_turn else prep.first_kept_index
    role, text = describe(prep.first_kept_entry_id) if describe is not None else ("?", "")
    return CutPreview(
        tokens, threshold, problem, True, prep.first_kept_entry_id, role, text,
        previous=sum(per_entry[:start]), summarized=sum(per_entry[start:history_end]),
        prefix=sum(per_entry[history_end:prep.first_kept_index]) if prep.is_split_turn else 0,
        kept=sum(per_entry[prep.first_kept_index:]), prefix_messages=len(prep.turn_prefix_messages),
        messages_to_summarize=len(prep.messages_to_summarize), summarized_entries=len(prep.summarized_entry_ids),
        kept_entries=prep.kept_entries, kept_tokens=prep.kept_tokens, tokens_before=prep.tokens_before,
        read_files=tuple(prep.read_files), modified_files=tuple(prep.modified_files))


def _verdict(view: CutPreview) -> str:
    if view.threshold is None:
        return (f'<div class="pikit-sub">context size {fmt_int(view.tokens)}; window unknown: '
                f"{esc(UNKNOWN_WINDOW_HINT)} (no threshold); below is what a compaction run now would do.</div>")
    if view.fires:
        return (f'<div class="pikit-warn"><b>Pi would compact here</b>: context size {fmt_int(view.tokens)} &gt; '
                f"threshold {fmt_int(view.threshold)}.</div>")
    return (f'<div class="pikit-sub">Pi would not compact yet (context size {fmt_int(view.tokens)} ≤ threshold '
            f"{fmt_int(view.threshold)}); below is what a compaction run now would do.</div>")


def _strip(view: CutPreview) -> str:
    parts = (("previous", "previous summary", view.previous), ("summarized", "summarized", view.summarized),
             ("prefix", "split turn's beginning (summarized apart)", view.prefix), ("kept", "kept", view.kept))
    total = max(1, sum(value for _, _, value in parts))
    strip = "".join(f'<div class="pikit-cut-{key}" style="width:{100 * value / total:.3f}%" '
                    f'title="{esc(label)}: {fmt_int(value)} tokens"></div>' for key, label, value in parts if value > 0)
    names = (("previous", "previous summary", view.previous), ("summarized", "summarized", view.summarized),
             ("prefix", "turn prefix", view.prefix), ("kept", "kept", view.kept))
    legend = "".join(f'<span><span class="pikit-swatch pikit-cut-{key}"></span>{label} {fmt_int(value)}</span>'
                     for key, label, value in names if value or key in ("summarized", "kept"))
    return f'<div class="pikit-cut">{strip}</div><div class="pikit-legend">{legend}</div>'


def _files(view: CutPreview) -> str:
    if not (view.read_files or view.modified_files):
        return ""
    more = "…" if len(view.modified_files) > 6 else ""
    return (f'<div class="pikit-sub">files: {fmt_int(len(view.read_files))} read, '
            f'{fmt_int(len(view.modified_files))} modified — '
            f"{esc(', '.join(view.modified_files[:6]))}{more}</div>")


def render_preview(view: CutPreview) -> str:
    """The cut-point preview as HTML."""
    problem = f'<div class="pikit-warn">settings: {esc(view.problem)}</div>' if view.problem else ""
    head = f'<div class="pikit-block pikit-cut-preview" aria-label="cut point preview">{_verdict(view)}'
    if not view.ready:
        return (f"{head}<div><b>Nothing to compact</b> at this leaf with these settings: the leaf is a compaction, "
                f"or everything already fits in keepRecentTokens.</div>{problem}</div>")
    split = (f" — <b>split turn</b>: the turn's beginning ({plural(view.prefix_messages, 'message')}, "
             f"{fmt_int(view.prefix)} tokens) is summarized separately" if view.prefix_messages else "")
    return (
        f'{head}<div>Cut at <span class="pikit-id pikit-first-kept">{esc(view.first_kept_id)}</span> '
        f"({esc(view.first_kept_role)}: {esc(view.first_kept_text[:90])}){split}.</div>{_strip(view)}"
        f"<div>Summarize <b>{fmt_int(view.messages_to_summarize)}</b> messages from "
        f"{fmt_int(view.summarized_entries)} entries; keep <b>{fmt_int(view.kept_entries)}</b> entries "
        f"({fmt_int(view.kept_tokens)} tokens). tokensBefore {fmt_int(view.tokens_before)}.</div>"
        f"{_files(view)}{problem}</div>")


# ---------------------------------------------------------------------------------- chart
@dataclass(frozen=True)
class CompactionPoint:
    """One compaction on a branch: its tokens before (recorded) and after (the new context size)."""

    id: Any
    tokens_before: int
    tokens_after: int
    first_kept_entry_id: Any
    new: bool = False


@dataclass(frozen=True)
class RunSettings:
    """The settings a compaction run used."""

    keep_recent_tokens: int
    reserve_tokens: int
    context_window: int | None
    summarizer: str

    @property
    def caption(self) -> str:
        """``window 16k · keep 4k · reserve 3k · offline`` (``window unknown`` without one)."""
        window = "unknown" if self.context_window is None else fmt_short(self.context_window)
        return (f"window {window} · keep {fmt_short(self.keep_recent_tokens)} · "
                f"reserve {fmt_short(self.reserve_tokens)} · {self.summarizer}")

    @property
    def threshold(self) -> int | None:
        """Pi's threshold under these settings (``context_window - reserve_tokens``; ``None`` without a window)."""
        return None if self.context_window is None else self.context_window - self.reserve_tokens


@dataclass(frozen=True)
class ChartGroup:
    """One labelled group of bars: the compactions already on the branch, or one run."""

    label: str
    points: tuple[CompactionPoint, ...]
    settings: RunSettings | None = None


_BAR, _GAP, _LEFT, _TOP, _HEIGHT, _MIN_WIDTH = 26, 4, 56, 22, 170, 960
_BEFORE, _AFTER, _RUN = LINES["tokens_before"], LINES["tokens_after"], SEGMENTS["summary"]


class _Plot:
    def __init__(self, groups: Sequence[ChartGroup], threshold: int | None) -> None:
        values = [v for g in groups for p in g.points for v in (p.tokens_before, p.tokens_after)]
        self.peak = max([*values, threshold or 0, 1])
        # A group is as wide as its bars, and as its caption (about 0.6 em a character at 10 px) so captions
        # never run into each other.
        self.widths = [max(len(g.points) * (2 * _BAR + 3 * _GAP) + 2 * _GAP, 150 if g.settings else 60,
                           6.0 * len(g.settings.caption) + 12 if g.settings else 0)
                       for g in groups]
        self.width = max(_MIN_WIDTH, _LEFT + sum(self.widths) + 16 * len(groups) + 8)
        self.base = _TOP + _HEIGHT

    def y(self, value: int) -> float:
        return self.base - _HEIGHT * value / self.peak


def _threshold_line(x1: float, x2: float, y: float, threshold: int, *, labelled: bool = True) -> str:
    """The dashed threshold line; ``labelled``: its value written at its right end (a group's own line is
    named under the group instead, where no bar's value can overprint it)."""
    line = (f'<line class="pikit-chart-threshold" x1="{x1:.1f}" x2="{x2:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{LINES["threshold"]}" stroke-dasharray="5 3"/>')
    if not labelled:
        return line
    return (line + f'<text x="{x2 - 2:.1f}" y="{y - 4:.1f}" font-size="11" text-anchor="end" '
            f'style="fill:{LINES["threshold"]}">threshold {esc(fmt_short(threshold))}</text>')


def _grid(plot: _Plot, threshold: int | None) -> list[str]:
    """The value grid, and the threshold across the whole chart when every group shares it (else each group
    draws its own: see :func:`_group`)."""
    parts = []
    for frac in (0, 0.5, 1):
        value = int(plot.peak * frac)
        parts.append(f'<line x1="{_LEFT}" x2="{plot.width - 8}" y1="{plot.y(value):.1f}" y2="{plot.y(value):.1f}" '
                     f'stroke="{LINES["grid"]}" stroke-opacity="0.35"/>'
                     f'<text x="{_LEFT - 6}" y="{plot.y(value) + 4:.1f}" font-size="11" text-anchor="end">'
                     f"{esc(fmt_short(value))}</text>")
    if threshold is not None and threshold > 0:
        parts.append(_threshold_line(_LEFT, plot.width - 8, plot.y(threshold), threshold))
    return parts


def _bars(plot: _Plot, x: float, number: int, point: CompactionPoint) -> list[str]:
    parts = []
    for j, (value, color, what) in enumerate(((point.tokens_before, _BEFORE, "tokensBefore"),
                                              (point.tokens_after, _AFTER, "tokensAfter"))):
        bx = x + j * (_BAR + _GAP)
        stroke = f' stroke="{_RUN}" stroke-width="2"' if point.new else ""
        parts.append(f'<rect class="pikit-chart-bar" x="{bx:.1f}" y="{plot.y(value):.1f}" width="{_BAR}" '
                     f'height="{max(0.0, plot.base - plot.y(value)):.1f}" fill="{color}"{stroke}>'
                     f"<title>{esc(point.id)} {what}: {fmt_int(value)}</title></rect>"
                     f'<text x="{bx + _BAR / 2:.1f}" y="{plot.y(value) - 3:.1f}" font-size="10" '
                     f'text-anchor="middle">{esc(fmt_short(value))}</text>')
    center = x + _BAR + _GAP / 2
    parts.append(f'<text x="{center:.1f}" y="{plot.base + 14}" font-size="10" text-anchor="middle">'
                 f"#{fmt_int(number)}</text>"
                 f'<text x="{center:.1f}" y="{plot.base + 26}" font-size="9" text-anchor="middle" '
                 f'style="fill:#888">{esc(str(point.id)[:8])}</text>')
    return parts


def _group(plot: _Plot, x: float, width: float, index: int, group: ChartGroup, threshold: int | None) -> list[str]:
    css = "pikit-chart-run" if group.settings is not None else "pikit-chart-branch"
    named = ""
    if threshold is not None and threshold > 0:  # the group's own threshold, named under its caption
        named = (f'<text x="{x + width / 2:.1f}" y="{plot.base + 68}" font-size="10" text-anchor="middle" '
                 f'style="fill:{LINES["threshold"]}">threshold {esc(fmt_short(threshold))}</text>')
    parts = [f'<g class="pikit-chart-group {css}" data-group="{index}" data-label="{esc(group.label)}">',
             f'<rect x="{x:.1f}" y="{_TOP - 16}" width="{width:.1f}" height="{_HEIGHT + (88 if named else 60)}" '
             f'rx="4" fill="{_RUN if group.settings else LINES["grid"]}" fill-opacity="0.06"/>']
    if threshold is not None and named:
        parts.append(_threshold_line(x, x + width, plot.y(threshold), threshold, labelled=False))
    inner = x + _GAP + max(0.0, (width - len(group.points) * (2 * _BAR + 3 * _GAP)) / 2)
    for k, point in enumerate(group.points):
        parts.extend(_bars(plot, inner + k * (2 * _BAR + 3 * _GAP), k + 1, point))
    caption = group.settings.caption if group.settings is not None else ""
    parts.append(f'<text class="pikit-chart-label" x="{x + width / 2:.1f}" y="{plot.base + 42}" font-size="11" '
                 f'font-weight="600" text-anchor="middle">{esc(group.label)}</text>'
                 f'<text x="{x + width / 2:.1f}" y="{plot.base + 55}" font-size="10" text-anchor="middle">'
                 f"{esc(caption)}</text>{named}</g>")
    return parts


#: What the chart says when there is nothing to draw, in a widget that can run a compaction.
EMPTY_CHART = "No compaction on this branch yet: run one to see its tokensBefore/tokensAfter here."


def render_chart(groups: Sequence[ChartGroup], threshold: int | None = None, *, empty: str = EMPTY_CHART) -> str:
    """An inline SVG of tokensBefore/tokensAfter, one labelled group per run (full width; labels
    escaped); ``empty`` (plain text, escaped) is said instead when no group has a point.

    ``threshold`` is the branch's (the panel's settings); a run's group is measured against its own
    settings' threshold. One line crosses the chart when every group has the same threshold; otherwise each
    group draws its own, so a run made at another context window is never read against the wrong line."""
    if not any(g.points for g in groups):
        return f'<div class="pikit-chart pikit-dim" aria-label="compaction chart">{esc(empty)}</div>'
    shown = [g for g in groups if g.points]
    thresholds = [threshold if g.settings is None else g.settings.threshold for g in shown]
    shared = thresholds[0] if len(set(thresholds)) == 1 else None
    plot = _Plot(shown, max((t for t in thresholds if t is not None), default=None))
    height = plot.base + (64 if shared is not None else 80)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {plot.width} {height}" width="100%" '
             f'preserveAspectRatio="xMinYMin meet" role="img" '
             f'aria-label="tokensBefore and tokensAfter of each compaction">', *_grid(plot, shared)]
    x = float(_LEFT + 8)
    for index, (group, width, own) in enumerate(zip(shown, plot.widths, thresholds, strict=True)):
        parts.extend(_group(plot, x, width, index, group, None if shared is not None else own))
        x += width + 16
    parts.append("</svg>")
    legend = (f'<div class="pikit-legend"><span><span class="pikit-swatch" style="background:{_BEFORE}"></span>'
              f'tokensBefore (recorded)</span><span><span class="pikit-swatch" style="background:{_AFTER}"></span>'
              "tokensAfter (context size the compaction leaves)</span>"
              f'<span><span class="pikit-swatch" style="border:2px solid {_RUN};box-sizing:border-box"></span>'
              "a compaction run here</span></div>")
    return (f'<div class="pikit-chart" aria-label="compaction chart"><div class="pikit-sub">tokensBefore → '
            f"tokensAfter of every compaction on the branch, and of each run</div>{''.join(parts)}{legend}</div>")
