"""One self-contained HTML page of a session at a leaf (see :mod:`pikit.export`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._context.describe import leaf_text
from .._formatting import fmt_int, plural
from .._palette import LINES, SEGMENTS
from .._session import Session
from .._tree.sessiontree import CURRENT
from .._version import __version__
from ..compaction._settings import CompactionSettings, Settings
from ..compaction._simulate import simulate
from ..compaction._summarizer import SummaryRequest, SummaryResult
from ..llm._window import UNKNOWN_WINDOW_HINT
from ..widgets._html import CSS, esc
from ..widgets._runs import compaction_history
from ..widgets._views import (
    ChartGroup,
    budget_view,
    context_header,
    context_page,
    context_rows,
    render_budget,
    render_chart,
    render_header,
    render_table,
)
from ._tree import TREE_CSS, render_tree

__all__ = ["CSP", "PAGE_TEXT_CHARS", "PageSettings", "page_parts", "page_settings", "render_page", "write_page"]

#: The most characters of message text one page inlines, the newest messages first (each body
#: at most ``BODY_CHARS``, 20,000, its first part shown and the size of the rest stated); the
#: older messages are listed with their size, so the page of any session stays small enough
#: for a browser to open.
PAGE_TEXT_CHARS = 1_000_000

#: Nothing may be fetched, framed, scripted or submitted: the page is text and inline styles.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

PAGE_CSS = """
body { margin: 0; background: #fafafa; }
.pikit-page { max-width: 1500px; margin: 0 auto; padding: 16px 20px 40px; }
.pikit-page h1 { font-size: 1.4em; margin: 0 0 4px; }
.pikit-page h2 { font-size: 1.1em; margin: 18px 0 6px; }
.pikit-page header .pikit-sub code { font-size: 0.95em; }
.pikit-layout { display: grid; grid-template-columns: minmax(320px, 36%) 1fr; gap: 20px; align-items: start; }
.pikit-layout section { min-width: 0; background: #fff; border: 1px solid #e0e0e0; border-radius: 6px;
  padding: 8px 12px; margin-bottom: 14px; }
.pikit-layout > section.pikit-tree-panel { position: sticky; top: 8px; max-height: calc(100vh - 24px);
  overflow: auto; }
.pikit-page .pikit-scroll { max-height: none; }
.pikit-growth svg { width: 100%; height: auto; }
.pikit-page .pikit-nav { margin-bottom: 6px; }
.pikit-page footer { margin-top: 24px; font-size: 0.85em; color: #777; }
@media (max-width: 900px) { .pikit-layout { grid-template-columns: 1fr; }
  .pikit-layout > section.pikit-tree-panel { position: static; max-height: 60vh; } }
"""


_NO_COMPACTION = "This branch has no compaction yet: what the model sees at the leaf carries no compaction summary."


@dataclass(frozen=True)
class PageSettings:
    """The settings the page's budget bar and size chart are drawn with.

    ``context_window`` is ``None`` when the window is unknown (the page then draws no threshold
    and says so); ``window_source`` names where a known window came from.
    """

    model: str
    context_window: int | None
    reserve_tokens: int
    keep_recent_tokens: int
    window_source: str | None = None


def page_settings(session: Session, leaf: Any, settings: Settings, *, model: str | None = None,
                  context_window: int | None = None, reserve_tokens: int | None = None,
                  keep_recent_tokens: int | None = None) -> PageSettings:
    """The page's settings: ``model`` (default: the one recorded at ``leaf``), its window (``context_window``,
    else the model's as Pi resolves it), and ``reserve_tokens``/``keep_recent_tokens`` (default: the
    ``settings``' values for that model)."""
    from ..llm._window import model_spec, model_window

    if model is None and leaf is not None:
        model = model_spec(session.context(leaf).model)
    effective = settings.for_model(model)
    window = model_window(model, given=context_window)
    reserve = effective.reserve_tokens if reserve_tokens is None else reserve_tokens
    keep = effective.keep_recent_tokens if keep_recent_tokens is None else keep_recent_tokens
    return PageSettings(model or "", window.tokens, reserve, keep, window.source)


class _NoSummary:
    """A summarizer never called: the size chart replays with compaction disabled."""

    name = "none"

    def summarize(self, request: SummaryRequest) -> SummaryResult:  # pragma: no cover - never called
        raise AssertionError("no compaction runs while drawing a page")


def _growth(session: Session, leaf: Any, settings: PageSettings, marks: Sequence[tuple[int, Any]]) -> str:
    """Pi's context size after each assistant message along the branch, with the threshold, as SVG."""
    # (Compaction is off: the window only places the threshold line, none when it is unknown.)
    result = simulate(session, _NoSummary(), context_window=settings.context_window or 0, leaf=leaf,
                      keep_existing=True,
                      settings=CompactionSettings(False, settings.reserve_tokens, settings.keep_recent_tokens))
    trace = result.trace
    if len(trace) < 2:
        return '<div class="pikit-dim">Fewer than two assistant messages: no size chart.</div>'
    width, height, left, bottom, top_pad = 960, 190, 56, 22, 10
    span = max(trace[-1][0], 1)
    top = max(max(t[2] for t in trace), result.threshold, 1) * 1.08
    inner = height - bottom - top_pad

    def x(index: int) -> float:
        return left + (width - left - 8) * index / span

    def y(tokens: float) -> float:
        return top_pad + inner - inner * tokens / top

    points = " ".join(f"{x(i):.1f},{y(before):.1f}" for i, _, before, _ in trace)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
             'aria-label="context size along the branch">']
    for fraction in (0.0, 0.5, 1.0):
        value = top / 1.08 * fraction
        parts.append(f'<line x1="{left}" x2="{width - 8}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
                     f'stroke="{LINES["grid"]}" stroke-opacity="0.35"/><text x="{left - 4}" y="{y(value) + 4:.1f}" '
                     f'font-size="10" text-anchor="end">{fmt_int(round(value))}</text>')
    if settings.context_window is not None and 0 < result.threshold < top:
        parts.append(f'<line x1="{left}" x2="{width - 8}" y1="{y(result.threshold):.1f}" '
                     f'y2="{y(result.threshold):.1f}" stroke="{LINES["threshold"]}" stroke-dasharray="6 3"/>'
                     f'<text x="{width - 10}" y="{y(result.threshold) - 4:.1f}" font-size="10" text-anchor="end" '
                     f'fill="{LINES["threshold"]}">threshold {fmt_int(result.threshold)}</text>')
    for index, entry_id in marks:
        parts.append(f'<line x1="{x(index):.1f}" x2="{x(index):.1f}" y1="{top_pad}" y2="{height - bottom}" '
                     f'stroke="{SEGMENTS["summary"]}" stroke-dasharray="3 3"><title>compaction '
                     f"{esc(entry_id)}</title></line>")
    parts.append(f'<polyline fill="none" stroke="{SEGMENTS["new"]}" stroke-width="1.8" points="{points}"/>'
                 f'<text x="{left}" y="{height - 6}" font-size="10">branch start</text>'
                 f'<text x="{width - 8}" y="{height - 6}" font-size="10" text-anchor="end">leaf</text></svg>')
    return ('<div class="pikit-growth"><div class="pikit-sub">Pi\'s context size after each assistant message '
            f'(recorded usage + estimates; {plural(len(trace), "check")}); dashed purple lines: compactions</div>'
            + "".join(parts) + "</div>")


def _leaf_html(leaf: Any) -> str:
    return f"<code>{esc(leaf)}</code>" if leaf is not None else esc(leaf_text(leaf))


def _head(session: Session, leaf: Any, settings: PageSettings, home: tuple[str, str] | None) -> str:
    where = esc(os.path.basename(session.path)) if session.path else "a session held in memory"
    nav = f'<nav class="pikit-nav"><a href="{esc(home[0])}">← {esc(home[1])}</a></nav>' if home else ""
    return (f"<header>{nav}<h1>{esc(session.title)}</h1><div class=\"pikit-sub\">{where} · leaf "
            f"{_leaf_html(leaf)} · model {esc(settings.model or 'not recorded')} · {_window_html(settings)}, "
            f"reserveTokens {fmt_int(settings.reserve_tokens)}, "
            f"keepRecentTokens {fmt_int(settings.keep_recent_tokens)}</div></header>")


def _window_html(settings: PageSettings) -> str:
    if settings.context_window is None:
        return f'<span class="pikit-warn">window unknown: {esc(UNKNOWN_WINDOW_HINT)}</span>'
    return f"window {fmt_int(settings.context_window)} (from {esc(settings.window_source or 'the settings')})"


def render_page(session: Session, settings: PageSettings, leaf: Any = CURRENT, *, tree_filter: str = "default",
                home: tuple[str, str] | None = None) -> str:
    """The page of ``session`` at ``leaf`` (default: the session's leaf) as one HTML string.

    ``home`` (an address and its text) adds a link above the title, back to the page that lists it.
    """
    return "".join(page_parts(session, settings, leaf, tree_filter, home))


def page_parts(session: Session, settings: PageSettings, leaf: Any, tree_filter: str,
               home: tuple[str, str] | None = None) -> list[str]:
    """The page in its parts, in order (written one by one, so the page is never one string)."""
    leaf_id = session.resolve_leaf(leaf)
    projection = session.context(leaf_id)
    budget = render_budget(budget_view(projection, model=settings.model, window=settings.context_window,
                                       reserve=settings.reserve_tokens, keep=settings.keep_recent_tokens,
                                       title="Budget at the leaf", window_source=settings.window_source))
    leaf_entry = session.entry(leaf_id) if leaf_id is not None else None
    kind = (leaf_entry.role or leaf_entry.type) if leaf_entry is not None else None
    rows = context_rows(projection)
    header = render_header(context_header(projection, labels=session.labels, kind=kind))
    table = render_table(context_page(projection, rows, 0, max(len(rows), 1), labels=session.labels),
                         anchors=True, text_budget=PAGE_TEXT_CHARS)
    history = compaction_history(session, leaf_id)
    threshold = None if settings.context_window is None else settings.context_window - settings.reserve_tokens
    chart = render_chart([ChartGroup("this branch", tuple(history))], threshold, empty=_NO_COMPACTION)
    branch_index = {entry.id: i for i, entry in enumerate(session.branch(leaf_id))} if leaf_id is not None else {}
    marks = [(branch_index[p.id], p.id) for p in history if p.id in branch_index]
    growth = _growth(session, leaf_id, settings, marks)
    tree = render_tree(session, leaf_id, mode=tree_filter)
    return ["<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="referrer" content="no-referrer">'
            f"<title>{esc(session.title)} · pikit</title><style>{CSS}{TREE_CSS}{PAGE_CSS}</style></head>"
            f'<body><main class="pikit-root pikit-page">{_head(session, leaf_id, settings, home)}'
            '<div class="pikit-layout"><section class="pikit-tree-panel" aria-label="tree"><h2>The tree</h2>',
            tree, f'</section><div><section aria-label="budget">{budget}</section>'
            '<section aria-label="compaction history" id="compactions">'
            f"<h2>Compactions and context size</h2>{chart}{growth}"
            f'</section><section aria-label="context"><h2>What the model sees at the leaf</h2>{header}', table,
            f"</section></div></div><footer>Exported by pikit {esc(__version__)}. Everything on this page "
            "is in this file: it loads nothing and runs no script.</footer></main></body></html>\n"]


def write_page(session: Session, settings: PageSettings, output: str | os.PathLike[str], leaf: Any = CURRENT, *,
               tree_filter: str = "default", overwrite: bool = False) -> str:
    """Write the page to ``output`` (a new file unless ``overwrite``; never the session file)."""
    from .._format.write import write_pieces

    parts = page_parts(session, settings, leaf, tree_filter)
    return write_pieces(output, (part.encode("utf-8") for part in parts), source=session.path, overwrite=overwrite)
