"""The projected context at a leaf: rows with provenance and token figures, paged.

:func:`context_header` and :func:`context_page` build frozen view models from a projection
(real token counts come from a ``count(row)`` function the caller supplies, so caching stays
outside); :func:`render_header` and :func:`render_table` draw them. None of it needs a kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._context.describe import entry_preview
from ..._context.projection import ProjectedEntry, Projection
from ..._context.tokens import estimate_tokens, message_usage, usage_total
from .._html import BODY_CHARS, esc, fmt_int, label_pill, message_body, role_badge

__all__ = [
    "CompactionBlock",
    "ContextHeader",
    "ContextPage",
    "ContextRow",
    "RealCount",
    "RowView",
    "context_header",
    "context_page",
    "context_rows",
    "render_header",
    "render_table",
    "zones",
]


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

    @property
    def source(self) -> str:
        """Where the row comes from, in words: ``entry ID``, or ``carried by compaction ID`` for the system
        prompt a compaction entry stores (its ``systemMessage``), which no entry of the branch sends itself."""
        entry = self.entry.entry
        if entry.type == "compaction" and self.message is not None and self.message.get("role") == "system":
            return f"carried by compaction {entry.id}"
        return f"entry {entry.id}"


def zones(projection: Projection) -> list[str]:
    """The zone of each projected entry (see :class:`ContextRow`)."""
    compaction = projection.compaction
    if compaction is None:
        return [""] * len(projection.entries)
    path = projection.path
    position = next((i for i in range(len(path) - 1, -1, -1) if path[i] is compaction), len(path))
    after = {e.id for e in path[position + 1:]}
    return ["summary" if i == 0 else "new" if pe.entry.id in after else "kept"
            for i, pe in enumerate(projection.entries)]


def context_rows(projection: Projection, *, include_silent: bool = False) -> list[ContextRow]:
    """The rows of the context view: every message, plus omitted (and optionally silent) entries."""
    rows: list[ContextRow] = []
    index = 0
    for pe, zone in zip(projection.entries, zones(projection), strict=True):
        if not pe.messages:
            if pe.status == "omitted" or include_silent:
                rows.append(ContextRow(pe, None, -1, -1, zone))
            continue
        for k, message in enumerate(pe.messages):
            rows.append(ContextRow(pe, message, k, index, zone))
            index += 1
    return rows


# ---------------------------------------------------------------------------------- header
@dataclass(frozen=True)
class RealCount:
    """The real (tokenizer) count of the context: ``total``, or how many messages are ``missing``."""

    counter: str
    total: int | None
    missing: int


@dataclass(frozen=True)
class CompactionBlock:
    """The head compaction of a context: what it replaced and what it kept."""

    id: Any
    summarized: int
    summary_tokens: int
    tokens_before: Any
    first_kept: Any
    kept_first: Any
    kept_last: Any
    kept_entries: int
    kept_tokens: int
    new_entries: int
    new_tokens: int
    summary: str


@dataclass(frozen=True)
class ContextHeader:
    """The figures above the context table."""

    leaf: Any
    label: str | None
    kind: str | None
    messages: int
    entries: int
    tokens: int
    rule: str
    estimate_sum: int
    real: RealCount | None
    notice: str | None
    model: str
    thinking: Any
    omitted: int
    replaced: int
    system: Mapping[str, Any] | None
    system_tokens: int
    compaction: CompactionBlock | None


def _rule(p: Projection) -> str:
    size = p.size
    if size.usage_index is not None and not size.stale:
        return (f"usage {fmt_int(size.usage_tokens)} recorded on message #{fmt_int(size.usage_index + 1)} "
                f"+ {fmt_int(size.trailing_tokens)} estimated after it")
    if size.stale:
        return "all estimated: an edit or a compaction came after the last recorded usage"
    return "all estimated: no usable recorded usage"


def _compaction_block(p: Projection) -> CompactionBlock | None:
    compaction = p.compaction
    if compaction is None:
        return None
    estimates = p.estimates
    kept: list[ProjectedEntry] = []
    kept_tokens = new_entries = new_tokens = 0
    index = 0
    for pe, zone in zip(p.entries, zones(p), strict=True):
        tokens = sum(estimates[index:index + len(pe.messages)])
        index += len(pe.messages)
        if zone == "kept":
            kept.append(pe)
            kept_tokens += tokens
        elif zone == "new":
            new_entries += 1
            new_tokens += tokens
    data = compaction.data
    summary = next((m for m in p.entries[0].messages if m.get("role") == "compactionSummary"), None)
    text = summary.get("summary") if summary else data.get("summary")
    return CompactionBlock(compaction.id, len(p.summarized_ids), estimate_tokens(summary) if summary else 0,
                           data.get("tokensBefore"), data.get("firstKeptEntryId"),
                           kept[0].entry.id if kept else None, kept[-1].entry.id if kept else None,
                           len(kept), kept_tokens, new_entries, new_tokens, str(text or ""))


def context_header(p: Projection, *, labels: Mapping[Any, str], kind: str | None, real: RealCount | None = None,
                   notice: str | None = None) -> ContextHeader:
    """The header of the context at ``p`` (``kind``: the leaf's role or entry type)."""
    model = p.model or {}
    model_text = "/".join(str(model.get(k)) for k in ("provider", "modelId") if model.get(k) is not None)
    system = p.system_message
    leaf = p.leaf_id
    return ContextHeader(leaf, labels.get(leaf) if leaf is not None else None, kind, len(p.messages),
                         len(p.entries), p.tokens, _rule(p), sum(p.estimates), real, notice, model_text,
                         p.thinking_level, len(p.omitted_ids), len(p.replaced_ids), system,
                         estimate_tokens(system) if system is not None else 0, _compaction_block(p))


def _where(h: ContextHeader) -> str:
    if h.leaf is None:
        return "the reset leaf (empty context)"
    return (f'<span class="pikit-id">{esc(h.leaf)}</span>' + (f" {label_pill(h.label)}" if h.label else "")
            + (f" ({esc(h.kind)})" if h.kind is not None else ""))


def _real_html(real: RealCount | None, notice: str | None) -> str:
    if real is None:
        return f'<span class="pikit-dim">{esc(notice)}</span>' if notice else ""
    if real.total is not None:
        return (f'<span>real count ({esc(real.counter)}): <b class="pikit-real-total">{fmt_int(real.total)}'
                "</b></span>")
    return (f'<span class="pikit-dim">real count ({esc(real.counter)}): {fmt_int(real.missing)} messages '
            "not counted yet (per message below; “count all” for the total)</span>")


def _compaction_html(c: CompactionBlock) -> str:
    kept_range = (f'from <span class="pikit-id">{esc(c.kept_first)}</span> to '
                  f'<span class="pikit-id">{esc(c.kept_last)}</span>' if c.kept_entries else
                  f"empty (firstKeptEntryId {esc(c.first_kept)} is not before the compaction)")
    return (
        '<div class="pikit-block pikit-compaction-block">'
        f'<div><span class="pikit-badge pikit-kind-compaction">compaction</span> '
        f'<span class="pikit-id">{esc(c.id)}</span> replaced <b>{fmt_int(c.summarized)}</b> earlier entries with '
        f"a summary of <b>{fmt_int(c.summary_tokens)}</b> tokens (tokensBefore {fmt_int(c.tokens_before)})</div>"
        f"<div>kept range: {kept_range} · <b>{fmt_int(c.kept_entries)}</b> entries, {fmt_int(c.kept_tokens)} tokens"
        f" · after the compaction: <b>{fmt_int(c.new_entries)}</b> entries, {fmt_int(c.new_tokens)} tokens</div>"
        '<details class="pikit-block pikit-summary-text"><summary>summary text</summary>'
        f'<div class="pikit-pre">{esc(c.summary)}</div></details></div>')


def render_header(h: ContextHeader) -> str:
    """The header of the context view as HTML."""
    parts = [
        f'<div class="pikit-title">Context at {_where(h)}</div><div class="pikit-stats">',
        f"<span><b>{fmt_int(h.messages)}</b> messages from {fmt_int(h.entries)} entries</span>",
        f'<span>context size <b class="pikit-context-tokens">{fmt_int(h.tokens)}</b> tokens '
        f'<span class="pikit-dim">({esc(h.rule)})</span></span>',
        f"<span>estimate sum <b>{fmt_int(h.estimate_sum)}</b></span>",
        _real_html(h.real, h.notice),
        f'<span>model <b>{esc(h.model or "not recorded")}</b>, thinking {esc(h.thinking)}</span>',
    ]
    if h.omitted or h.replaced:
        parts.append(f"<span>context edits: <b>{fmt_int(h.omitted)}</b> omitted, <b>{fmt_int(h.replaced)}</b> "
                     "replaced</span>")
    parts.append("</div>")
    if h.system is not None:
        parts.append('<details class="pikit-block pikit-system-block"><summary>Current system prompt '
                     f"(replayed from every system message): {fmt_int(h.system_tokens)} tokens"
                     f"</summary>{message_body(h.system)}</details>")
    if h.compaction is not None:
        parts.append(_compaction_html(h.compaction))
    return "".join(parts)


# ---------------------------------------------------------------------------------- table
@dataclass(frozen=True)
class RowView:
    """One drawn row: the row, its label, and its token figures (``real``/``usage`` may be ``None``)."""

    row: ContextRow
    label: str | None
    estimate: int
    real: int | None
    usage: int | None
    usage_anchor: bool


@dataclass(frozen=True)
class ContextPage:
    """One page of the context table."""

    rows: tuple[RowView, ...]
    page: int
    pages: int
    first: int
    total: int

    @property
    def label(self) -> str:
        """``rows a–b of n · page i/k``."""
        last = self.first + len(self.rows) - 1 if self.rows else 0
        return (f"rows {fmt_int(self.first)}–{fmt_int(last)} of {fmt_int(self.total)} · "
                f"page {fmt_int(self.page + 1)}/{fmt_int(self.pages)}")


def context_page(p: Projection, rows: Sequence[ContextRow], page: int, size: int, *, labels: Mapping[Any, str],
                 count: Callable[[ContextRow], int] | None = None) -> ContextPage:
    """Page ``page`` (0-based; ``-1``: the last) of ``rows`` of ``p``, ``size`` rows a page.

    Pages are counted back from the newest row, so the last page (the one a context opens on)
    is always a whole page of the newest ``size`` rows; the first page holds what is left,
    the oldest rows (52 rows in pages of 50: rows 1–2, then rows 3–52).
    """
    size = max(1, size)
    pages = max(1, -(-len(rows) // size))
    page = pages - 1 if page < 0 else min(page, pages - 1)
    stop = len(rows) - (pages - 1 - page) * size
    start = max(0, stop - size)
    chunk = rows[start:stop]
    estimates = p.estimates
    ctx = p.size
    out = []
    for row in chunk:
        if row.message is None:
            out.append(RowView(row, labels.get(row.entry.entry.id), 0, None, None, False))
            continue
        usage = message_usage(row.message)
        out.append(RowView(row, labels.get(row.entry.entry.id), estimates[row.index],
                           count(row) if count is not None else None,
                           usage_total(usage) if usage is not None else None,
                           ctx.usage_index == row.index and not ctx.stale))
    return ContextPage(tuple(out), page, pages, start + 1 if chunk else 0, len(rows))


#: A run of more older rows than this, not inlined, is drawn as one row.
FOLDED_RUN = 20

_MARKERS = {"omitted": ("omitted", "omitted by edit "), "replaced": ("replaced", "replaced by edit ")}


def _source_html(view: RowView) -> str:
    pe = view.row.entry
    markers = []
    if pe.status in _MARKERS:
        css, text = _MARKERS[pe.status]
        markers.append(f'<span class="pikit-marker pikit-marker-{css}">{text}{esc(pe.edit.id if pe.edit else "")}'
                       "</span>")
    elif pe.status == "summary":
        text = "carries the system prompt" if view.row.source.startswith("carried") else "summary"
        markers.append(f'<span class="pikit-marker pikit-marker-summary">{text}</span>')
    if view.row.zone in ("kept", "new"):
        markers.append(f'<span class="pikit-marker pikit-dim">{view.row.zone}</span>')
    return (f'<br><span class="pikit-id">{esc(pe.entry.id)}</span>'
            + (f"<br>{label_pill(view.label)}" if view.label else "")
            + ("<br>" + "".join(markers) if markers else ""))


def _figures(view: RowView) -> str:
    figures = [f'<span class="pikit-est" title="Pi\'s estimate">{fmt_int(view.estimate)}'
               '<span class="pikit-unit"> est.</span></span>']
    if view.real is not None:
        figures.append(f'<span class="pikit-real" title="tokenizer count">{fmt_int(view.real)}'
                       '<span class="pikit-unit"> real</span></span>')
    if view.usage is not None:
        anchor = " pikit-usage-anchor" if view.usage_anchor else ""
        note = "; the context size starts from it" if view.usage_anchor else ""
        figures.append(f'<span class="pikit-usage{anchor}" title="usage reported by the provider{note}">'
                       f'{fmt_int(view.usage)}<span class="pikit-unit"> usage</span></span>')
    return "".join(figures)


def _anchor(view: RowView) -> tuple[str, str]:
    """``id="entry-<id>"`` and a visible link to it (on the first row of an entry only)."""
    if view.row.position > 0:
        return "", ""
    target = esc(f"entry-{view.row.entry.entry.id}")
    return f' id="{target}"', f'<a class="pikit-anchor" href="#{target}" title="link to this entry">#</a> '


def _row_html(view: RowView, anchors: bool = False, inline: bool = True) -> str:
    row = view.row
    pe = row.entry
    classes = f"pikit-context-row pikit-status-{pe.status}" + (f" pikit-zone-{row.zone}" if row.zone else "")
    source = esc(pe.entry.id)
    target, link = _anchor(view) if anchors else ("", "")
    if row.message is None:
        what = "omitted: sends nothing" if pe.status == "omitted" else "sends nothing"
        return (f'<tr class="{classes}"{target} data-entry-id="{source}"><td class="pikit-num">–</td>'
                f"<td>{link}{role_badge(pe.entry.role or pe.entry.type)}{_source_html(view)}</td>"
                f'<td class="pikit-num">–</td><td><div class="pikit-sub">{what}</div>'
                f'<div class="pikit-pre">{esc(entry_preview(pe.entry))}</div></td></tr>')
    body = message_body(row.message) if inline else (
        f'<div class="pikit-dim pikit-not-inlined">not inlined: ≈{fmt_int(view.estimate * 4)} characters '
        "(the page's text budget went to newer messages)</div>")
    return (f'<tr class="{classes}"{target} data-entry-id="{source}" data-index="{row.index}">'
            f'<td class="pikit-num">{fmt_int(row.index + 1)}</td>'
            f'<td>{link}{role_badge(row.message.get("role"))}{_source_html(view)}</td>'
            f'<td class="pikit-num pikit-figures">{_figures(view)}</td>'
            f"<td>{body}</td></tr>")


def _inlined(page: ContextPage, budget: int | None) -> list[bool]:
    """Which rows' bodies fit in ``budget`` characters, newest first (all of them without a budget)."""
    if budget is None:
        return [True] * len(page.rows)
    out = [False] * len(page.rows)
    left = budget
    for i in range(len(page.rows) - 1, -1, -1):
        size = min(page.rows[i].estimate * 4, BODY_CHARS)
        if size > left:
            break
        left -= size
        out[i] = True
    return out


def render_table(page: ContextPage, *, anchors: bool = False, text_budget: int | None = None) -> str:
    """The rows of one page as an HTML table.

    ``anchors``: each entry's first row gets ``id="entry-<id>"`` and a ``#`` link to it.
    ``text_budget``: at most about this many characters of message text are inlined, the
    newest messages first (each body counts its estimate × 4, at most :data:`BODY_CHARS`);
    the older rows say how long they are, and a run of more than :data:`FOLDED_RUN` of them
    is one row.
    """
    if not page.rows:
        return '<div class="pikit-dim pikit-empty">No messages: the model would get an empty context.</div>'
    head = ('<div class="pikit-scroll"><table class="pikit-table pikit-context-table"><thead><tr>'
            '<th style="width:2.6em" class="pikit-num">#</th><th style="width:7.8em">role · source</th>'
            '<th style="width:6.6em" class="pikit-num" title="est.: Pi\'s estimate, ceil(chars / 4); '
            'real: tokenizer count; usage: what the provider reported">tokens</th>'
            "<th>content</th></tr></thead><tbody>")
    inlined = _inlined(page, text_budget)
    skipped = inlined.index(True) if True in inlined else len(inlined)
    rows = []
    if skipped > FOLDED_RUN:
        chars = sum(view.estimate for view in page.rows[:skipped]) * 4
        rows.append(f'<tr class="pikit-context-row pikit-not-inlined"><td class="pikit-num">1–{fmt_int(skipped)}</td>'
                    f'<td colspan="3" class="pikit-dim">{fmt_int(skipped)} older messages, ≈{fmt_int(chars)} '
                    "characters, are not inlined: the page holds at most "
                    f"{fmt_int(text_budget or 0)} characters of message text, the newest first</td></tr>")
    else:
        skipped = 0
    rows.extend(_row_html(view, anchors, inline) for view, inline in zip(page.rows[skipped:], inlined[skipped:],
                                                                        strict=True))
    return head + "".join(rows) + "</tbody></table></div>"
