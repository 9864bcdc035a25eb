"""The session tree as static HTML: the active path open, every other branch folded.

Rows come from :meth:`pikit.Session.flatten` (Pi's ``/tree`` order and filters: the
active branch first, chains kept flat, so a tree thousands of levels deep stays a flat list
of indented rows). Each run of rows off the active path folds into one ``<details>``
element; no script is needed to open it. Session text is escaped.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .._context.describe import entry_preview
from .._formatting import fmt_int, plural
from .._session import Session
from .._tree.tree import TreeRow
from ..widgets._html import esc, label_pill, role_badge

__all__ = ["TREE_CSS", "render_tree"]

PREVIEW = 110
INDENT_EM = 1.1
MAX_INDENT = 40  # deeper rows keep this indent (and say how deep they are) so their text stays readable

TREE_CSS = """
.pikit-static-tree { font-size: 0.92em; }
.pikit-static-tree .pikit-row { display: flex; gap: 6px; align-items: baseline; padding: 1px 4px;
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; border-radius: 3px; }
.pikit-static-tree .pikit-row.pikit-active { background: rgba(30, 136, 229, 0.06); }
.pikit-static-tree .pikit-row.pikit-leaf { outline: 2px solid var(--pikit-series-0); outline-offset: -2px; }
.pikit-static-tree .pikit-mark { flex: 0 0 1em; text-align: center; color: var(--pikit-series-0); }
.pikit-static-tree .pikit-text { overflow: hidden; text-overflow: ellipsis; }
.pikit-static-tree .pikit-fork { color: var(--pikit-line-threshold); font-size: 0.85em; }
.pikit-static-tree details.pikit-off > summary { cursor: pointer; color: var(--jp-ui-font-color2, #666);
  font-style: italic; padding: 1px 4px; }
.pikit-static-tree details.pikit-off[open] { background: rgba(0, 0, 0, 0.02); }
.pikit-static-tree .pikit-depth { color: var(--jp-ui-font-color2, #888); font-size: 0.8em; }
"""


def _row(row: TreeRow) -> str:
    entry = row.entry
    classes = "pikit-row" + (" pikit-active" if row.on_active_path else "") + (" pikit-leaf" if row.is_leaf else "")
    mark = "▶" if row.is_leaf else ("•" if row.on_active_path else "")
    indent = min(row.indent, MAX_INDENT)
    depth = f'<span class="pikit-depth">depth {fmt_int(row.indent)}</span>' if row.indent > MAX_INDENT else ""
    kind = role_badge(entry.role) if entry.type == "message" else \
        f'<span class="pikit-badge pikit-kind-meta">{esc(entry.type)}</span>'
    label = label_pill(row.label) if row.label else ""
    fork = f'<span class="pikit-fork" title="{plural(row.children, "branch")}">⋔{fmt_int(row.children)}</span>' \
        if row.branch_point else ""
    text = " ".join(entry_preview(entry).split())
    if len(text) > PREVIEW:
        text = text[:PREVIEW - 1] + "…"
    anchor = ' id="leaf"' if row.is_leaf else ""
    return (f'<div class="{classes}"{anchor} data-entry-id="{esc(row.id)}" style="padding-left: '
            f'{indent * INDENT_EM + 0.2:.1f}em"><span class="pikit-mark">{mark}</span>{depth}'
            f'<span class="pikit-id">{esc(str(row.id)[:8])}</span>{label}{fork}{kind}'
            f'<span class="pikit-text" title="{esc(text)}">{esc(text)}</span></div>')


def _runs(rows: Sequence[TreeRow]) -> Iterator[tuple[bool, Sequence[TreeRow]]]:
    """Maximal runs of rows on / off the active path, in order."""
    start = 0
    for index in range(1, len(rows) + 1):
        if index == len(rows) or rows[index].on_active_path != rows[start].on_active_path:
            yield rows[start].on_active_path, rows[start:index]
            start = index


def render_tree(session: Session, leaf: Any, *, mode: str = "default", limit: int = 20_000) -> str:
    """The tree at ``leaf`` (Pi's filter ``mode``) as HTML, at most ``limit`` rows."""
    rows = session.flatten(leaf, mode=mode)
    shown = rows[:limit]
    parts = [f'<div class="pikit-static-tree" role="tree"><div class="pikit-sub">{plural(len(session), "entry")}, '
             f'{plural(len(session.roots), "root")}; {fmt_int(len(rows))} shown with Pi\'s '
             f'“{esc(mode)}” filter (▶ the leaf, • its branch, ⋔ a fork)</div>']
    for active, run in _runs(shown):
        if active:
            parts.extend(_row(row) for row in run)
        else:
            parts.append(f'<details class="pikit-off"><summary>{plural(len(run), "entry")} on other branches'
                         f"</summary>{''.join(_row(row) for row in run)}</details>")
    if len(rows) > len(shown):
        parts.append(f'<div class="pikit-dim">… {plural(len(rows) - len(shown), "more row")} not shown</div>')
    if leaf is None:
        parts.append('<div class="pikit-dim">(leaf reset: the next message starts a new root)</div>')
    parts.append("</div>")
    return "".join(parts)
