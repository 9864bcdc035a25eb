"""Compare two contexts: two leaves of a session, or the same branch before and after a compaction."""

from __future__ import annotations

import time
from typing import Any

import ipywidgets as widgets
import traitlets

from ..describe import message_preview
from ..diff import DiffRow, ProjectionDiff, diff_contexts
from ..projection import Projection
from ..session import Session
from ._html import error_box, esc, fmt_delta, fmt_int, label_pill, role_badge, style_widget
from ._state import SessionState, state_for

__all__ = ["ContextDiff", "leaf_choices"]

_FOLD = 4  # unchanged runs longer than this are folded
_MAX_ROWS = 400  # rows drawn at most (the totals always cover everything)
_PREVIEW = 220
_SYMBOL = {"added": ('+', "pikit-plus"), "removed": ("−", "pikit-minus"), "changed": ("~", "pikit-tilde"),
           "same": ("=", "pikit-dim")}


def leaf_choices(session: Session, *, limit: int = 200) -> list[tuple[str, Any]]:
    """``(text, id)`` options for picking a leaf: branch tips and labeled entries, newest first."""
    state = state_for(session)
    children = session.tree()["children"]
    tips = [e for e in session.entries if e.id is not None and e.id not in children and e.id in session.by_id]
    labeled = [session.by_id[i] for i in session.labels if i in session.by_id]
    seen: set[Any] = set()
    out: list[tuple[str, Any]] = []
    for entry in [*labeled, *reversed(tips)]:
        if entry.id in seen:
            continue
        seen.add(entry.id)
        label = session.labels.get(entry.id)
        kind, text = state.preview(entry)
        head = f"[{label}] " if label else ""
        out.append((f"{head}{entry.id} · {kind} · {text[:60]}", entry.id))
        if len(out) >= limit:
            break
    return out


def _compactions(session: Session) -> list[tuple[str, Any]]:
    out = []
    for entry in session.entries:
        if entry.type == "compaction" and entry.id in session.by_id:
            out.append((f"{entry.id} · tokensBefore {entry.data.get('tokensBefore')}", entry.id))
    return out


class ContextDiff(widgets.VBox):
    """The messages only in ``a`` (removed), only in ``b`` (added), changed and shared, with token deltas.

    Two modes: ``a`` and ``b`` are two leaf ids; or ``compaction`` is a compaction entry id and the
    diff is the context at its parent (before) against the context it leaves (after). Use
    :meth:`show` to compare projections made elsewhere (e.g. a what-if compaction).
    """

    a = traitlets.Any(None)
    b = traitlets.Any(None)
    compaction = traitlets.Any(None)

    def __init__(self, session: Session, a: Any = None, b: Any = None, *, compaction: Any = None,
                 **kwargs: Any) -> None:
        self.session = session
        self.state: SessionState = state_for(session)
        self.diff: ProjectionDiff | None = None
        self.render_ms = 0.0
        self._titles = ("a", "b")
        self.header = widgets.HTML()
        self.header.add_class("pikit-diff-header")
        self.body = widgets.HTML()
        self.body.add_class("pikit-diff-body")
        choices = leaf_choices(session)
        for leaf in (a, b, session.leaf_id):
            if leaf is not None and leaf in session and all(v != leaf for _, v in choices):
                choices.insert(0, (f"{leaf} · {self.state.preview(session.by_id[leaf])[1][:60]}", leaf))
        self.pick_a = widgets.Dropdown(options=choices, description="a", value=None,
                                       layout=widgets.Layout(width="48%"))
        self.pick_b = widgets.Dropdown(options=choices, description="b", value=None,
                                       layout=widgets.Layout(width="48%"))
        self.pick_a.add_class("pikit-diff-pick-a")
        self.pick_b.add_class("pikit-diff-pick-b")
        compactions = _compactions(session)
        self.pick_compaction = widgets.Dropdown(options=[("(two leaves)", None), *compactions],
                                                description="compaction", value=None,
                                                layout=widgets.Layout(width="48%"))
        self.pick_compaction.add_class("pikit-diff-pick-compaction")
        self.swap_button = widgets.Button(description="swap a ⇄ b", layout=widgets.Layout(width="auto"))
        self.swap_button.add_class("pikit-diff-swap")
        self.swap_button.on_click(lambda _b: self.swap())
        controls = widgets.VBox([widgets.HBox([self.pick_a, self.pick_b]),
                                 widgets.HBox([self.pick_compaction, self.swap_button])])
        controls.add_class("pikit-diff-controls")
        super().__init__([style_widget(), controls, self.header, self.body], **kwargs)
        self.add_class("pikit-root")
        self.add_class("pikit-context-diff")
        with self.hold_trait_notifications():
            self.a, self.b, self.compaction = a, b, compaction
        self._sync_pickers()
        self.pick_a.observe(lambda c: self._picked("a", c["new"]), names="value")
        self.pick_b.observe(lambda c: self._picked("b", c["new"]), names="value")
        self.pick_compaction.observe(lambda c: self._picked("compaction", c["new"]), names="value")
        self.observe(lambda _c: self.refresh(), names=["a", "b", "compaction"])
        self.refresh()

    @traitlets.validate("a", "b")
    def _check_leaf(self, proposal: dict[str, Any]) -> Any:
        leaf = proposal["value"]
        if leaf is not None and leaf not in self.session:
            raise traitlets.TraitError(f"no entry {leaf!r} in the session")
        return leaf

    @traitlets.validate("compaction")
    def _check_compaction(self, proposal: dict[str, Any]) -> Any:
        value = proposal["value"]
        if value is not None and (value not in self.session or self.session.by_id[value].type != "compaction"):
            raise traitlets.TraitError(f"{value!r} is not a compaction entry of the session")
        return value

    # ------------------------------------------------------------------ controls
    def _sync_pickers(self) -> None:
        self.pick_a.disabled = self.pick_b.disabled = self.compaction is not None
        for picker, value in ((self.pick_a, self.a), (self.pick_b, self.b), (self.pick_compaction, self.compaction)):
            values = [v for _, v in picker.options]
            if value not in values and value is not None:
                picker.options = [(f"{value}", value), *picker.options]
            if picker.value != value:
                picker.value = value

    def _picked(self, name: str, value: Any) -> None:
        if getattr(self, name) != value:
            setattr(self, name, value)

    def swap(self) -> None:
        """Exchange ``a`` and ``b``."""
        with self.hold_trait_notifications():
            self.a, self.b = self.b, self.a

    # ------------------------------------------------------------------ diff
    def refresh(self) -> None:
        """Recompute the diff for the current ``a``/``b``/``compaction`` and redraw."""
        self._sync_pickers()
        try:
            if self.compaction is not None:
                entry = self.session.by_id[self.compaction]
                parent = entry.parent_id if entry.parent_id in self.session else None
                before, after = self.state.projection(parent), self.state.projection(self.compaction)
                titles = (f"before compaction {self.compaction} (at {parent})", f"after compaction {self.compaction}")
            else:
                before, after = self.state.projection(self.a), self.state.projection(self.b)
                titles = (f"a = {self.a}", f"b = {self.b}")
            self.show(before, after, titles)
        except Exception as exc:
            self.diff = None
            self.header.value = error_box("Cannot compare these contexts", exc)
            self.body.value = ""

    def show(self, a: Projection, b: Projection, titles: tuple[str, str] = ("a", "b")) -> ProjectionDiff:
        """Compare two projections (from this session or made elsewhere) and draw the result."""
        start = time.perf_counter()
        self.diff = diff_contexts(a, b)
        self._titles = titles
        self.header.value = self._header_html(self.diff, titles)
        self.body.value = self._rows_html(self.diff)
        self.render_ms = (time.perf_counter() - start) * 1000
        return self.diff

    def _header_html(self, d: ProjectionDiff, titles: tuple[str, str]) -> str:
        t = d.totals
        ancestor = ""
        if self.compaction is None and d.a.path and d.b.path:
            on_a = {e.id for e in d.a.path}
            common = next((e.id for e in reversed(d.b.path) if e.id in on_a), None)
            if common is not None:
                ancestor = (f'<span>branches share the path up to <span class="pikit-id">{esc(common)}</span>'
                            "</span>")
        return (
            f'<div class="pikit-title">Context diff: {esc(titles[0])} → {esc(titles[1])}</div>'
            '<div class="pikit-stats">'
            f'<span>context size <b>{fmt_int(t.tokens_a)}</b> → <b>{fmt_int(t.tokens_b)}</b> '
            f'(<b class="pikit-diff-delta">{fmt_delta(t.tokens_delta)}</b>)</span>'
            f'<span>estimates {fmt_int(t.estimate_a)} → {fmt_int(t.estimate_b)} ({fmt_delta(t.estimate_delta)})</span>'
            f'<span class="pikit-plus">+{t.added} added ({fmt_delta(t.added_tokens)})</span>'
            f'<span class="pikit-minus">−{t.removed} removed ({fmt_delta(-t.removed_tokens)})</span>'
            f'<span class="pikit-tilde">~{t.changed} changed ({fmt_delta(t.changed_delta)})</span>'
            f'<span class="pikit-dim">={t.same} same</span>{ancestor}</div>'
        )

    def _rows_html(self, d: ProjectionDiff) -> str:
        if not d.rows:
            return '<div class="pikit-dim">Both contexts are empty.</div>'
        out = ['<div class="pikit-scroll"><table class="pikit-table pikit-diff-table"><thead><tr>'
               '<th style="width:1.6em"></th><th style="width:8.5em">role</th><th style="width:8em">source a</th>'
               '<th style="width:8em">source b</th><th style="width:4.5em" class="pikit-num">est. a</th>'
               '<th style="width:4.5em" class="pikit-num">est. b</th><th style="width:4.5em" class="pikit-num">Δ</th>'
               "<th>message</th></tr></thead><tbody>"]
        drawn = 0
        run: list[DiffRow] = []

        def flush_run() -> None:
            nonlocal drawn
            if len(run) <= _FOLD:
                for row in run:
                    out.append(self._row_html(row))
                    drawn += 1
            else:
                out.append(self._row_html(run[0]))
                tokens = sum(r.estimate_b for r in run[1:-1])
                out.append(f'<tr class="pikit-diff-fold"><td colspan="8">… {fmt_int(len(run) - 2)} identical '
                           f"messages ({fmt_int(tokens)} tokens) …</td></tr>")
                out.append(self._row_html(run[-1]))
                drawn += 3
            run.clear()

        for row in d.rows:
            if drawn >= _MAX_ROWS:
                break
            if row.status == "same":
                run.append(row)
                continue
            if run:
                flush_run()
            out.append(self._row_html(row))
            drawn += 1
        if run:
            flush_run()
        out.append("</tbody></table></div>")
        if drawn >= _MAX_ROWS:
            out.append(f'<div class="pikit-dim">Only the first {_MAX_ROWS} rows are drawn; the totals above cover '
                       "all of them (use .diff.rows for everything).</div>")
        return "".join(out)

    def _row_html(self, row: DiffRow) -> str:
        symbol, css = _SYMBOL[row.status]
        message = row.message or {}
        text = _preview(message)
        if row.status == "changed" and row.message_a is not None:
            text_html = (f'<div class="pikit-minus pikit-clamp">− {esc(_preview(row.message_a))}</div>'
                         f'<div class="pikit-plus pikit-clamp">+ {esc(text)}</div>')
        else:
            text_html = f'<div class="pikit-clamp">{esc(text)}</div>'
        labels = self.session.labels

        def source(value: Any) -> str:
            if value is None:
                return ""
            label = labels.get(value)
            tag = f'<br>{label_pill(label)}' if label else ""
            return f'<span class="pikit-id">{esc(value)}</span>{tag}'

        return (f'<tr class="pikit-diff-row pikit-diff-{row.status}" data-status="{row.status}" '
                f'data-entry-id="{esc(row.source)}"><td class="pikit-sym {css}">{symbol}</td>'
                f'<td>{role_badge(row.role)}</td><td>{source(row.source_a)}</td><td>{source(row.source_b)}</td>'
                f'<td class="pikit-num">{fmt_int(row.estimate_a) if row.index_a is not None else ""}</td>'
                f'<td class="pikit-num">{fmt_int(row.estimate_b) if row.index_b is not None else ""}</td>'
                f'<td class="pikit-num">{fmt_delta(row.delta)}</td><td>{text_html}</td></tr>')


def _preview(message: Any) -> str:
    try:
        text = " ".join(message_preview(message).split())
    except Exception as exc:
        text = f"<unreadable message: {type(exc).__name__}>"
    return text if len(text) <= _PREVIEW else text[:_PREVIEW - 1] + "…"
