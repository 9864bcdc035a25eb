"""A context diff, as data and as HTML: totals, then the rows with long unchanged runs folded.

:func:`diff_view` wraps a :class:`~pikit.ProjectionDiff` with its titles and labels;
:func:`render_diff_header` and :func:`render_diff_rows` draw it. None of it needs a kernel.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._context.describe import message_preview
from ..._context.diff import DiffRow, ProjectionDiff
from .._html import esc, fmt_delta, fmt_int, label_pill, role_badge

__all__ = ["DIFF_COLUMNS", "DiffView", "diff_frame", "diff_view", "render_diff_header", "render_diff_rows"]

FOLD = 4  # unchanged runs longer than this are folded
MAX_ROWS = 400  # rows drawn at most (the totals always cover everything)
_PREVIEW = 220
_SYMBOL = {"added": ("+", "pikit-plus"), "removed": ("−", "pikit-minus"), "changed": ("~", "pikit-tilde"),
           "same": ("=", "pikit-dim")}


DIFF_COLUMNS = ("status", "note", "index_a", "index_b", "source_a", "source_b", "role_a", "role_b", "estimate_a",
                "estimate_b", "delta")


def diff_frame(diff: ProjectionDiff | None) -> Any:
    """The rows of ``diff`` as a pandas DataFrame (one row per aligned message, no bodies; empty for ``None``)."""
    import pandas as pd

    return pd.DataFrame.from_records(diff.records() if diff is not None else [], columns=list(DIFF_COLUMNS))


@dataclass(frozen=True)
class DiffView:
    """A diff with what the widget shows around it: titles, the shared path, entry labels."""

    diff: ProjectionDiff
    titles: tuple[str, str]
    ancestor: Any
    labels: Mapping[Any, str]
    session: str = ""


def diff_view(diff: ProjectionDiff, titles: tuple[str, str], *, labels: Mapping[Any, str],
              two_leaves: bool = True, session: str = "") -> DiffView:
    """The view of ``diff``; for two leaves, the last entry both paths share is named."""
    ancestor = None
    if two_leaves and diff.a.path and diff.b.path:
        on_a = {e.id for e in diff.a.path}
        ancestor = next((e.id for e in reversed(diff.b.path) if e.id in on_a), None)
    return DiffView(diff, titles, ancestor, labels, session)


def render_diff_header(view: DiffView) -> str:
    """Titles and totals."""
    t = view.diff.totals
    ancestor = (f'<span>branches share the path up to <span class="pikit-id">{esc(view.ancestor)}</span></span>'
                if view.ancestor is not None else "")
    session = f'<div class="pikit-sub">{esc(view.session)}</div>' if view.session else ""
    return (
        f'<div class="pikit-title">Context diff: {esc(view.titles[0])} → {esc(view.titles[1])}</div>{session}'
        '<div class="pikit-stats">'
        f'<span>context size <b>{fmt_int(t.tokens_a)}</b> → <b>{fmt_int(t.tokens_b)}</b> '
        f'(<b class="pikit-diff-delta">{fmt_delta(t.tokens_delta)}</b>)</span>'
        f"<span>estimates {fmt_int(t.estimate_a)} → {fmt_int(t.estimate_b)} ({fmt_delta(t.estimate_delta)})</span>"
        f'<span class="pikit-plus">+{fmt_int(t.added)} added ({fmt_delta(t.added_tokens)})</span>'
        f'<span class="pikit-minus">−{fmt_int(t.removed)} removed ({fmt_delta(-t.removed_tokens)})</span>'
        f'<span class="pikit-tilde">~{fmt_int(t.changed)} changed ({fmt_delta(t.changed_delta)})</span>'
        f'<span class="pikit-dim">={fmt_int(t.same)} same</span>{ancestor}</div>')


def _preview(message: Any) -> str:
    try:
        text = " ".join(message_preview(message).split())
    except Exception as exc:
        text = f"<unreadable message: {type(exc).__name__}>"
    return text if len(text) <= _PREVIEW else text[:_PREVIEW - 1] + "…"


def _source(value: Any, labels: Mapping[Any, str]) -> str:
    if value is None:
        return ""
    label = labels.get(value)
    return f'<span class="pikit-id">{esc(value)}</span>' + (f"<br>{label_pill(label)}" if label else "")


def _row_html(row: DiffRow, labels: Mapping[Any, str]) -> str:
    symbol, css = _SYMBOL[row.status]
    text = _preview(row.message or {})
    if row.status == "changed" and row.message_a is not None:
        text_html = (f'<div class="pikit-minus pikit-clamp">− {esc(_preview(row.message_a))}</div>'
                     f'<div class="pikit-plus pikit-clamp">+ {esc(text)}</div>')
    else:
        text_html = f'<div class="pikit-clamp">{esc(text)}</div>'
    note = (f'<br><span class="pikit-marker pikit-marker-{row.note.replace(" ", "-")}">{esc(row.note)}</span>'
            if row.note else "")
    return (f'<tr class="pikit-diff-row pikit-diff-{row.status}" data-status="{row.status}" '
            f'data-note="{esc(row.note)}" data-entry-id="{esc(row.source)}"><td class="pikit-sym {css}">{symbol}</td>'
            f"<td>{role_badge(row.role)}{note}</td><td>{_source(row.source_a, labels)}</td>"
            f"<td>{_source(row.source_b, labels)}</td>"
            f'<td class="pikit-num">{fmt_int(row.estimate_a) if row.index_a is not None else ""}</td>'
            f'<td class="pikit-num">{fmt_int(row.estimate_b) if row.index_b is not None else ""}</td>'
            f'<td class="pikit-num">{fmt_delta(row.delta)}</td><td>{text_html}</td></tr>')


def _runs(rows: Sequence[DiffRow]) -> Iterator[list[DiffRow]]:
    """The rows cut into runs: each changed row alone, unchanged rows together."""
    run: list[DiffRow] = []
    for row in rows:
        if row.status == "same":
            run.append(row)
            continue
        if run:
            yield run
            run = []
        yield [row]
    if run:
        yield run


def _fold(run: list[DiffRow], labels: Mapping[Any, str]) -> list[str]:
    if len(run) <= FOLD or run[0].status != "same":
        return [_row_html(row, labels) for row in run]
    tokens = sum(r.estimate_b for r in run[1:-1])
    return [_row_html(run[0], labels),
            f'<tr class="pikit-diff-fold"><td colspan="8">… {fmt_int(len(run) - 2)} identical messages '
            f"({fmt_int(tokens)} tokens) …</td></tr>",
            _row_html(run[-1], labels)]


def render_diff_rows(view: DiffView) -> str:
    """The aligned rows as an HTML table (at most ``MAX_ROWS`` drawn)."""
    if not view.diff.rows:
        return '<div class="pikit-dim">Both contexts are empty.</div>'
    out = ['<div class="pikit-scroll"><table class="pikit-table pikit-diff-table"><thead><tr>'
           '<th style="width:1.6em"></th><th style="width:8.5em">role</th><th style="width:8em">source a</th>'
           '<th style="width:8em">source b</th><th style="width:4.5em" class="pikit-num">est. a</th>'
           '<th style="width:4.5em" class="pikit-num">est. b</th><th style="width:4.5em" class="pikit-num">Δ</th>'
           "<th>message</th></tr></thead><tbody>"]
    drawn = 0
    for run in _runs(view.diff.rows):
        if drawn >= MAX_ROWS:
            break
        lines = _fold(run, view.labels)
        out.extend(lines)
        drawn += len(lines)
    out.append("</tbody></table></div>")
    if drawn >= MAX_ROWS:
        out.append(f'<div class="pikit-dim">Only the first {fmt_int(MAX_ROWS)} rows are drawn; the totals above cover '
                   "all of them (use .diff.rows for everything).</div>")
    return "".join(out)
