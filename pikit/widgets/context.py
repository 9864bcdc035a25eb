"""The projected context at a leaf: every model-visible message with its provenance and token figures."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import traitlets

from ..counting import Counter, get_counter
from ..projection import ProjectedEntry, Projection
from ..session import CURRENT, Session
from ..tokens import estimate_tokens, message_usage, usage_total
from ._html import esc, fmt_int, label_pill, message_body, role_badge, style_widget
from ._state import LeafOfSession, SessionState, state_for

__all__ = ["ContextRow", "ContextView", "context_rows"]


@dataclass(frozen=True)
class ContextRow:
    """One row of the context view: a message, or a marker for an entry that sends nothing.

    ``zone`` is ``"summary"`` (the head compaction), ``"kept"`` (entries before the
    compaction that it kept), ``"new"`` (entries after it), or ``""`` without a compaction.
    """

    entry: ProjectedEntry
    message: dict[str, Any] | None
    position: int  # among the entry's messages (-1 for a marker row)
    index: int  # in projection.messages (-1 for a marker row)
    zone: str


def context_rows(projection: Projection, *, include_silent: bool = False) -> list[ContextRow]:
    """The rows of the context view: every message, plus omitted (and optionally silent) entries."""
    zones = _zones(projection)
    rows: list[ContextRow] = []
    index = 0
    for i, pe in enumerate(projection.entries):
        zone = zones[i]
        if not pe.messages:
            if pe.status == "omitted" or include_silent:
                rows.append(ContextRow(pe, None, -1, -1, zone))
            continue
        for k, message in enumerate(pe.messages):
            rows.append(ContextRow(pe, message, k, index, zone))
            index += 1
    return rows


def _zones(projection: Projection) -> list[str]:
    compaction = projection.compaction
    if compaction is None:
        return [""] * len(projection.entries)
    path = projection.path
    position = next((i for i in range(len(path) - 1, -1, -1) if path[i] is compaction), len(path))
    after = {e.id for e in path[position + 1:]}
    return ["summary" if i == 0 else "new" if pe.entry.id in after else "kept"
            for i, pe in enumerate(projection.entries)]


class ContextView(LeafOfSession, widgets.VBox):
    """What the model sees at ``leaf_id``: role, source entry, Pi's estimate, the real token count,
    the provider-reported usage where known, omitted/replaced markers, the compaction summary
    block and the kept range. Long content is collapsible; pages of ``page_size`` rows keep it fast.

    Set ``leaf_id`` to show another leaf; ``page`` is 0-based (``-1`` shows the last page).
    Real counts are shown per message; the total is counted at once when at most
    ``count_limit`` messages are new to the counter (else the **count all** button does it),
    which keeps a leaf move cheap on very long branches.
    """

    count_limit = 200

    leaf_id = traitlets.Any(None)
    page = traitlets.Int(-1)
    page_size = traitlets.Int(50)
    show_silent = traitlets.Bool(False)

    def __init__(self, session: Session, leaf_id: Any = CURRENT, *, page_size: int = 50,
                 encoding: str | None = "cl100k_base", **kwargs: Any) -> None:
        self.session = session
        self.state: SessionState = state_for(session)
        self.counter: Counter | None = get_counter(encoding) if encoding else None
        self.render_ms = 0.0
        self._rows: list[ContextRow] = []
        self._paging = True
        self._projection: Projection | None = None
        leaf = session.leaf_id if leaf_id is CURRENT else leaf_id
        if leaf is not None and leaf not in session:
            raise traitlets.TraitError(f"no entry {leaf!r} in the session")

        self.header = widgets.HTML()
        self.header.add_class("pikit-context-header")
        self.body = widgets.HTML()
        self.body.add_class("pikit-context-body")
        self.page_label = widgets.HTML()
        self.page_label.add_class("pikit-page-label")
        buttons = []
        for name, icon, tip in (("first", "«", "first page"), ("prev", "‹", "previous page"),
                                ("next", "›", "next page"), ("last", "»", "last page")):
            button = widgets.Button(description=icon, tooltip=tip, layout=widgets.Layout(width="38px"))
            button.add_class(f"pikit-page-{name}")
            button.on_click(lambda _b, n=name: self._turn(n))
            buttons.append(button)
        self.count_button = widgets.Button(description="count all", tooltip="count the real tokens of every message",
                                           layout=widgets.Layout(width="auto", display="none"))
        self.count_button.add_class("pikit-count-all")
        self.count_button.on_click(lambda _b: self.count_all())
        self.silent_box = widgets.Checkbox(value=False, description="show entries that send nothing",
                                           indent=False, layout=widgets.Layout(width="auto"))
        self.silent_box.add_class("pikit-show-silent")
        self.pager = widgets.HBox([*buttons, self.page_label, self.count_button, self.silent_box],
                                  layout=widgets.Layout(align_items="center"))
        self.pager.add_class("pikit-gap")
        self.pager.add_class("pikit-pager")
        super().__init__([style_widget(), self.header, self.pager, self.body], **kwargs)
        self.add_class("pikit-root")
        self.add_class("pikit-context-view")
        self.page_size = page_size
        self.set_trait("leaf_id", leaf)
        widgets.link((self, "show_silent"), (self.silent_box, "value"))
        self.observe(self._on_leaf, names="leaf_id")
        self.observe(self._on_page, names=["page", "page_size"])
        self.observe(lambda _c: self.refresh(), names="show_silent")
        self.refresh()

    # ------------------------------------------------------------------ data
    @property
    def projection(self) -> Projection:
        """The projection shown."""
        if self._projection is None:
            self._projection = self.state.projection(self.leaf_id)
        return self._projection

    @property
    def rows(self) -> list[ContextRow]:
        """All rows (every page)."""
        return list(self._rows)

    @property
    def pages(self) -> int:
        """Number of pages."""
        return max(1, -(-len(self._rows) // max(1, self.page_size)))

    def _on_leaf(self, _change: dict[str, Any]) -> None:
        self._paging = False  # the new leaf opens on its last page; draw once, after the refresh
        try:
            self.page = -1
        finally:
            self._paging = True
        self.refresh()

    def _on_page(self, _change: dict[str, Any]) -> None:
        if self._paging:
            self._render_page()

    def show_projection(self, projection: Projection) -> None:
        """Show a projection made elsewhere (e.g. a what-if branch that is not in the file)."""
        self._projection = projection
        self._rebuild()

    def refresh(self) -> None:
        """Recompute the projection at ``leaf_id`` and redraw."""
        self._projection = None
        self._rebuild()

    def _rebuild(self) -> None:
        start = time.perf_counter()
        projection = self.projection
        self._rows = context_rows(projection, include_silent=self.show_silent)
        self.header.value = self._header_html(projection)
        self._render_page(start)

    def _turn(self, where: str) -> None:
        current = self.current_page
        target = {"first": 0, "prev": current - 1, "next": current + 1, "last": self.pages - 1}[where]
        self.page = max(0, min(self.pages - 1, target))

    @property
    def current_page(self) -> int:
        """The page shown (0-based)."""
        return self.pages - 1 if self.page < 0 else min(self.page, self.pages - 1)

    # ------------------------------------------------------------------ rendering
    def _render_page(self, start: float | None = None) -> None:
        start = time.perf_counter() if start is None else start
        page = self.current_page
        size = max(1, self.page_size)
        rows = self._rows[page * size:(page + 1) * size]
        first = page * size + 1 if rows else 0
        self.page_label.value = (f'<span class="pikit-dim">rows {fmt_int(first)}–{fmt_int(page * size + len(rows))}'
                                 f' of {fmt_int(len(self._rows))} · page {page + 1}/{self.pages}</span>')
        self.body.value = self._table_html(rows)
        self.render_ms = (time.perf_counter() - start) * 1000

    def _header_html(self, p: Projection) -> str:
        estimates = p.estimates
        size = p.size
        leaf = p.leaf_id
        entry = self.session.by_id.get(leaf) if leaf is not None else None
        label = self.session.labels.get(leaf) if leaf is not None else None
        where = ("the reset leaf (empty context)" if leaf is None else
                 f'<span class="pikit-id">{esc(leaf)}</span>'
                 + (f' {label_pill(label)}' if label else "")
                 + (f" ({esc(entry.type if entry.role is None else entry.role)})" if entry is not None else ""))
        if size.usage_index is not None and not size.stale:
            rule = (f"usage {fmt_int(size.usage_tokens)} recorded on message #{size.usage_index + 1} "
                    f"+ {fmt_int(size.trailing_tokens)} estimated after it")
        elif size.stale:
            rule = "all estimated: an edit or a compaction came after the last recorded usage"
        else:
            rule = "all estimated: no usable recorded usage"
        real = ""
        if self.counter is not None and self.counter.exact:
            messages = [row for row in self._rows if row.message is not None]
            missing = sum(1 for row in messages if not self._is_counted(row))
            if missing <= self.count_limit:
                total = sum(self._count(row) for row in messages)
                real = (f'<span>real count ({esc(self.counter.name)}): '
                        f'<b class="pikit-real-total">{fmt_int(total)}</b></span>')
                self.count_button.layout.display = "none"
            else:
                real = (f'<span class="pikit-dim">real count ({esc(self.counter.name)}): {fmt_int(missing)} messages '
                        "not counted yet (per message below; “count all” for the total)</span>")
                self.count_button.layout.display = None
        elif self.counter is not None and self.counter.notice:
            real = f'<span class="pikit-dim">{esc(self.counter.notice)}</span>'
        model = p.model or {}
        model_text = "/".join(str(model.get(k)) for k in ("provider", "modelId") if model.get(k) is not None)
        omitted, replaced = len(p.omitted_ids), len(p.replaced_ids)
        parts = [
            f'<div class="pikit-title">Context at {where}</div>',
            '<div class="pikit-stats">',
            f'<span><b>{fmt_int(len(p.messages))}</b> messages from {fmt_int(len(p.entries))} entries</span>',
            f'<span>context size <b class="pikit-context-tokens">{fmt_int(p.tokens)}</b> tokens '
            f'<span class="pikit-dim">({esc(rule)})</span></span>',
            f'<span>estimate sum <b>{fmt_int(sum(estimates))}</b></span>',
            real,
            f'<span>model <b>{esc(model_text or "unknown")}</b>, thinking {esc(p.thinking_level)}</span>',
        ]
        if omitted or replaced:
            parts.append(f'<span>context edits: <b>{omitted}</b> omitted, <b>{replaced}</b> replaced</span>')
        parts.append("</div>")
        system = p.system_message
        if system is not None:
            parts.append('<details class="pikit-block pikit-system-block"><summary>Current system prompt '
                         f'(replayed from every system message): {fmt_int(estimate_tokens(system))} tokens'
                         f'</summary>{message_body(system)}</details>')
        if p.compaction is not None:
            parts.append(self._compaction_html(p))
        return "".join(parts)

    def _compaction_html(self, p: Projection) -> str:
        compaction = p.compaction
        assert compaction is not None
        data = compaction.data
        zones = _zones(p)
        estimates = p.estimates
        kept_tokens = new_tokens = 0
        kept: list[ProjectedEntry] = []
        new: list[ProjectedEntry] = []
        index = 0
        for pe, zone in zip(p.entries, zones, strict=True):
            tokens = sum(estimates[index:index + len(pe.messages)])
            index += len(pe.messages)
            if zone == "kept":
                kept.append(pe)
                kept_tokens += tokens
            elif zone == "new":
                new.append(pe)
                new_tokens += tokens
        summary = next((m for m in p.entries[0].messages if m.get("role") == "compactionSummary"), None)
        summary_tokens = estimate_tokens(summary) if summary is not None else 0
        first_kept = data.get("firstKeptEntryId")
        kept_range = (f'from <span class="pikit-id">{esc(kept[0].entry.id)}</span> to '
                      f'<span class="pikit-id">{esc(kept[-1].entry.id)}</span>' if kept else
                      f"empty (firstKeptEntryId {esc(first_kept)} is not before the compaction)")
        return (
            '<div class="pikit-block pikit-compaction-block">'
            f'<div><span class="pikit-badge pikit-kind-compaction">compaction</span> '
            f'<span class="pikit-id">{esc(compaction.id)}</span> replaced '
            f'<b>{fmt_int(len(p.summarized_ids))}</b> earlier entries with a summary of '
            f'<b>{fmt_int(summary_tokens)}</b> tokens (tokensBefore {fmt_int(data.get("tokensBefore"))})</div>'
            f'<div>kept range: {kept_range} · <b>{fmt_int(len(kept))}</b> entries, {fmt_int(kept_tokens)} tokens'
            f' · after the compaction: <b>{fmt_int(len(new))}</b> entries, {fmt_int(new_tokens)} tokens</div>'
            '<details class="pikit-block pikit-summary-text"><summary>summary text</summary>'
            f'<div class="pikit-pre">{esc(summary.get("summary") if summary else data.get("summary") or "")}</div>'
            "</details></div>"
        )

    def count_all(self) -> int:
        """Count the real tokens of every message at the leaf (tiktoken) and show the total."""
        if self.counter is None or not self.counter.exact:
            return 0
        total = sum(self._count(row) for row in self._rows if row.message is not None)
        self._rebuild()
        return total

    def _is_counted(self, row: ContextRow) -> bool:
        assert self.counter is not None
        edit = row.entry.edit.id if row.entry.edit is not None else None
        return self.state.is_counted(self.counter, row.entry.entry.id, row.position, edit)

    def _count(self, row: ContextRow) -> int:
        assert self.counter is not None and row.message is not None
        edit = row.entry.edit.id if row.entry.edit is not None else None
        return self.state.count(self.counter, row.entry.entry.id, row.position, edit, row.message)

    def _table_html(self, rows: Sequence[ContextRow]) -> str:
        if not rows:
            return '<div class="pikit-dim pikit-empty">No messages: the model would get an empty context.</div>'
        p = self.projection
        estimates = p.estimates
        size = p.size
        labels = self.session.labels
        exact = self.counter is not None and self.counter.exact
        out = ['<div class="pikit-scroll"><table class="pikit-table pikit-context-table"><thead><tr>'
               '<th style="width:2.6em" class="pikit-num">#</th><th style="width:7.8em">role · source</th>'
               '<th style="width:6.6em" class="pikit-num" title="est.: Pi\'s estimate, ceil(chars / 4); '
               'real: tokenizer count; usage: what the provider reported">tokens</th>'
               "<th>content</th></tr></thead><tbody>"]
        for row in rows:
            pe = row.entry
            status = pe.status
            source = pe.entry.id
            label = labels.get(source)
            markers = []
            if status == "omitted":
                markers.append(f'<span class="pikit-marker pikit-marker-omitted">omitted by edit '
                               f'{esc(pe.edit.id if pe.edit else "")}</span>')
            elif status == "replaced":
                markers.append(f'<span class="pikit-marker pikit-marker-replaced">replaced by edit '
                               f'{esc(pe.edit.id if pe.edit else "")}</span>')
            elif status == "summary":
                markers.append('<span class="pikit-marker pikit-marker-summary">summary</span>')
            if row.zone in ("kept", "new"):
                markers.append(f'<span class="pikit-marker pikit-dim">{row.zone}</span>')
            source_html = (f'<br><span class="pikit-id">{esc(source)}</span>'
                           + (f'<br>{label_pill(label)}' if label else "")
                           + ("<br>" + "".join(markers) if markers else ""))
            classes = f"pikit-context-row pikit-status-{status}" + (f" pikit-zone-{row.zone}" if row.zone else "")
            if row.message is None:
                from ..describe import entry_preview

                what = "sends nothing" if status != "omitted" else "omitted: sends nothing"
                out.append(f'<tr class="{classes}" data-entry-id="{esc(source)}"><td class="pikit-num">–</td>'
                           f'<td>{role_badge(pe.entry.role or pe.entry.type)}{source_html}</td>'
                           '<td class="pikit-num">–</td>'
                           f'<td><div class="pikit-sub">{what}</div>'
                           f'<div class="pikit-pre">{esc(entry_preview(pe.entry))}</div></td></tr>')
                continue
            message = row.message
            usage = message_usage(message)
            figures = [f'<span class="pikit-est" title="Pi\'s estimate">{fmt_int(estimates[row.index])}'
                       '<span class="pikit-unit"> est.</span></span>']
            if exact:
                figures.append(f'<span class="pikit-real" title="tokenizer count">{fmt_int(self._count(row))}'
                               '<span class="pikit-unit"> real</span></span>')
            if usage is not None:
                anchor = size.usage_index == row.index and not size.stale
                figures.append(f'<span class="pikit-usage{" pikit-usage-anchor" if anchor else ""}" '
                               f'title="usage reported by the provider'
                               f'{"; the context size starts from it" if anchor else ""}">'
                               f'{fmt_int(usage_total(usage))}<span class="pikit-unit"> usage</span></span>')
            out.append(f'<tr class="{classes}" data-entry-id="{esc(source)}" data-index="{row.index}">'
                       f'<td class="pikit-num">{row.index + 1}</td>'
                       f'<td>{role_badge(message.get("role"))}{source_html}</td>'
                       f'<td class="pikit-num pikit-figures">{"".join(figures)}</td>'
                       f'<td>{message_body(message)}</td></tr>')
        out.append("</tbody></table></div>")
        return "".join(out)
