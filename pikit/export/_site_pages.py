"""The pages of a corpus site that are not a session's: the index of sessions, the usage pages, the script.

Every piece of session text (titles, projects, paths, first messages, model names) is escaped
with ``pikit.widgets._html.esc``; the charts are inline SVG drawn here with the colours of
``pikit._palette``. The pages carry the session page's Content-Security-Policy, except that
the index may run scripts of the site's own folder (``script-src 'self'``): ``data.js``, the
search text as one JavaScript assignment, and ``site.js``, which sorts and filters the table.
Without script the index is a plain table of links.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._formatting import fmt_int, fmt_short, plural
from .._palette import SERIES, TEXT
from .._version import __version__
from ..widgets._html import CSS, esc

__all__ = ["SITE_CSP", "SITE_SCRIPT", "SessionRow", "index_page", "search_data", "usage_page"]

#: The session page's policy, and scripts from the site's folder (the index's search and sorting).
SITE_CSP = ("default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
            "form-action 'none'")

#: The most characters of a first message the search data holds (the index keeps 4,000).
SEARCH_CHARS = 1_000

SITE_CSS = """
body { margin: 0; background: #fafafa; }
.pikit-site { max-width: 1500px; margin: 0 auto; padding: 16px 20px 40px; }
.pikit-site h1 { font-size: 1.4em; margin: 0 0 4px; }
.pikit-site h2 { font-size: 1.1em; margin: 18px 0 6px; }
.pikit-site nav { margin: 6px 0 12px; }
.pikit-site nav a { margin-right: 14px; }
.pikit-site section { background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; padding: 8px 12px;
  margin-bottom: 14px; overflow-x: auto; }
.pikit-site table { border-collapse: collapse; width: 100%; font-size: 0.92em; }
.pikit-site th, .pikit-site td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #eee;
  vertical-align: top; }
.pikit-site th { background: #f5f5f5; position: sticky; top: 0; white-space: nowrap; }
.pikit-site td.pikit-num, .pikit-site th.pikit-num { text-align: right; white-space: nowrap;
  font-variant-numeric: tabular-nums; }
.pikit-site td.pikit-when { white-space: nowrap; }
.pikit-site td.pikit-title { min-width: 18em; }
.pikit-site td.pikit-project { max-width: 22em; overflow-wrap: anywhere; }
.pikit-site td.pikit-models { max-width: 20em; overflow-wrap: anywhere; font-size: 0.9em; }
.pikit-site tr.pikit-total td { font-weight: 600; border-top: 2px solid #ccc; }
.pikit-site th button { font: inherit; font-weight: 600; background: none; border: 0; padding: 0; cursor: pointer;
  color: inherit; }
.pikit-site th[aria-sort=ascending] button::after { content: " ▲"; }
.pikit-site th[aria-sort=descending] button::after { content: " ▼"; }
.pikit-site .pikit-search { margin: 0 0 10px; display: flex; gap: 10px; align-items: center; }
.pikit-site .pikit-search[hidden] { display: none; }
.pikit-site .pikit-search input { font: inherit; padding: 4px 8px; width: min(40em, 100%); }
.pikit-site svg { width: 100%; height: auto; display: block; }
.pikit-site .pikit-legend span { display: inline-block; margin-right: 14px; font-size: 0.9em; }
.pikit-site .pikit-legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px;
  vertical-align: baseline; }
.pikit-site footer { margin-top: 24px; font-size: 0.85em; color: #666; }
"""

#: ``site.js``: filters the index's rows by the words typed (every word, in the title or the first
#: message, any case) and sorts them by a column; ``data.js`` gives the text, row by row.
SITE_SCRIPT = r"""(function () {
  "use strict";
  var table = document.getElementById("pikit-sessions");
  if (!table) { return; }
  var data = window.pikitSite || {rows: []};
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var texts = rows.map(function (row) {
    var found = data.rows[Number(row.getAttribute("data-row"))] || [];
    return found.join("\n").toLowerCase();
  });
  var box = document.getElementById("pikit-search");
  var query = document.getElementById("pikit-query");
  var count = document.getElementById("pikit-count");
  function filter() {
    var words = query.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row, i) {
      var hit = words.every(function (word) { return texts[i].indexOf(word) >= 0; });
      row.hidden = !hit;
      if (hit) { shown += 1; }
    });
    count.textContent = words.length ? shown + " of " + rows.length + " sessions" : "";
  }
  box.hidden = false;
  query.addEventListener("input", filter);
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (head, column) {
    var kind = head.getAttribute("data-type");
    if (!kind) { return; }
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = head.textContent;
    head.textContent = "";
    head.appendChild(button);
    button.addEventListener("click", function () {
      var descending = head.getAttribute("aria-sort") !== "descending";
      Array.prototype.forEach.call(heads, function (other) { other.removeAttribute("aria-sort"); });
      head.setAttribute("aria-sort", descending ? "descending" : "ascending");
      var keyed = rows.map(function (row, i) {
        var cell = row.cells[column];
        var raw = cell.getAttribute("data-sort");
        if (raw === null) { raw = cell.textContent; }
        var key = kind === "number" ? (raw === "" ? -Infinity : Number(raw)) : raw.toLowerCase();
        return {row: row, i: i, key: key};
      });
      keyed.sort(function (a, b) {
        var order = a.key < b.key ? -1 : (a.key > b.key ? 1 : 0);
        return (descending ? -order : order) || a.i - b.i;
      });
      keyed.forEach(function (item) { body.appendChild(item.row); });
    });
  });
}());
"""


@dataclass(frozen=True)
class SessionRow:
    """One session as the index lists it (its text already redacted when the site is)."""

    page: str  # the page's address, relative to the index
    anchor: str  # the id of its row
    title: str
    project: str
    started: Any
    last_activity: Any
    models: str
    cost: float | None
    compactions: int
    entries: int
    first_message: str


def _head(title: str, csp: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="referrer" content="no-referrer">'
            f"<title>{esc(title)} · pikit</title><style>{CSS}{SITE_CSS}</style></head>"
            '<body><main class="pikit-root pikit-site">')


def _when(value: Any) -> tuple[str, str]:
    """(shown, sortable) of a timestamp: ``2026-01-05 10:00 UTC`` and its ISO form; unknown: ``?``."""
    if value is None or not hasattr(value, "strftime"):
        return "?", ""
    try:
        import datetime

        utc = value.astimezone(datetime.UTC)
    except (ValueError, OverflowError):
        return "?", ""
    return utc.strftime("%Y-%m-%d %H:%M UTC"), utc.strftime("%Y-%m-%dT%H:%M:%SZ")


def _cost(value: float | None) -> tuple[str, str]:
    if value is None or value != value:
        return "?", ""
    return f"${value:,.2f}", repr(float(value))


def _nav(prefix: str) -> str:
    return (f'<nav><a href="{prefix}index.html">Sessions</a><a href="{prefix}usage/day.html">Usage by day</a>'
            f'<a href="{prefix}usage/model.html">Usage by model</a></nav>')


def _footer(redacted: bool) -> str:
    note = " Secrets were replaced by placeholders (--redact)." if redacted else ""
    return (f"<footer>Exported by pikit {esc(__version__)} with <code>pikit export-corpus --site</code>: every page "
            f"is a file of this folder; nothing is loaded from anywhere else.{note}</footer>")


def _compactions(row: SessionRow) -> str:
    """The count, linking to the page's compaction section when there is one."""
    if not row.compactions:
        return "0"
    return f'<a href="{esc(row.page)}#compactions">{fmt_int(row.compactions)}</a>'


def index_page(rows: Sequence[SessionRow], *, redacted: bool) -> str:
    """The index: one row per session (title linking to its page, project, dates, models, cost, compactions)."""
    costs = [r.cost for r in rows if r.cost is not None and r.cost == r.cost]
    total = math.fsum(costs) if costs else 0.0
    parts = [_head("Sessions", SITE_CSP), "<header><h1>Sessions</h1>",
             f'<div class="pikit-sub">{plural(len(rows), "session")} · cost {_cost(total)[0]} · '
             f'{plural(sum(r.compactions for r in rows), "compaction")}; newest first. A title opens the session: '
             "its tree, its budget, its compactions and what the model saw.</div>", _nav(""), "</header>",
             '<div class="pikit-search" id="pikit-search" hidden><input type="search" id="pikit-query" '
             'placeholder="Search titles and first messages" aria-label="search titles and first messages">'
             '<span id="pikit-count" class="pikit-dim"></span></div>',
             '<section><table id="pikit-sessions" class="pikit-sessions"><thead><tr>'
             '<th data-type="text">Title</th><th data-type="text">Project</th>'
             '<th data-type="text">Started</th><th data-type="text">Last activity</th>'
             '<th data-type="text">Models</th><th class="pikit-num" data-type="number">Cost</th>'
             '<th class="pikit-num" data-type="number">Compactions</th>'
             '<th class="pikit-num" data-type="number">Entries</th></tr></thead><tbody>']
    for number, row in enumerate(rows):
        started, started_key = _when(row.started)
        last, last_key = _when(row.last_activity)
        cost, cost_key = _cost(row.cost)
        parts.append(f'<tr id="{esc(row.anchor)}" data-row="{number}">'
                     f'<td class="pikit-title"><a href="{esc(row.page)}">{esc(row.title or "(untitled)")}</a></td>'
                     f'<td class="pikit-project">{esc(row.project)}</td>'
                     f'<td class="pikit-when" data-sort="{started_key}">{started}</td>'
                     f'<td class="pikit-when" data-sort="{last_key}">{last}</td>'
                     f'<td class="pikit-models">{esc(", ".join(m for m in row.models.split(",") if m))}</td>'
                     f'<td class="pikit-num" data-sort="{cost_key}">{cost}</td>'
                     f'<td class="pikit-num">{_compactions(row)}</td>'
                     f'<td class="pikit-num">{fmt_int(row.entries)}</td></tr>')
    if not rows:
        parts.append('<tr><td colspan="8" class="pikit-dim">no sessions</td></tr>')
    parts += ["</tbody></table></section>", _footer(redacted),
              '<script src="data.js"></script><script src="site.js"></script></main></body></html>\n']
    return "".join(parts)


def search_data(rows: Sequence[SessionRow]) -> str:
    """``data.js``: the title and the start of the first message of each row, in the index's order."""
    data = {"rows": [[row.title, row.first_message[:SEARCH_CHARS]] for row in rows]}
    # ASCII only: every character outside it (and any lone surrogate) is a \\u escape, and so is "<"
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")
    return "window.pikitSite = " + text + ";\n"


# ---------------------------------------------------------------- usage pages

#: The token kinds a usage chart stacks, with their field and colour.
_KINDS = (("input", "inputTokens", SERIES[0]), ("output", "outputTokens", SERIES[1]),
          ("cache write", "cacheWriteTokens", SERIES[4]), ("cache read", "cacheReadTokens", SERIES[2]))
_COLUMNS = (("input", "inputTokens"), ("output", "outputTokens"), ("cache write", "cacheWriteTokens"),
            ("cache read", "cacheReadTokens"), ("total", "totalTokens"), ("cost", "cost"),
            ("summaries", "summarizationTokens"), ("summaries cost", "summarizationCost"))


def _value(field: str, value: Any) -> str:
    return _cost(value)[0] if field.endswith("ost") else fmt_int(value)


def _legend(kinds: Sequence[tuple[str, str, str]]) -> str:
    return '<div class="pikit-legend">' + "".join(
        f'<span><i style="background: {color}"></i>{esc(name)}</span>' for name, _, color in kinds) + "</div>"


def _columns_chart(labels: Sequence[str], stacks: Sequence[Sequence[float]], colors: Sequence[str], *, aria: str,
                   money: bool) -> str:
    """Vertical bars, one per label, each a stack of values; a few labels under the axis so none overlap."""
    width, height, left, bottom, top_pad = 960, 220, 64, 24, 12
    inner = height - bottom - top_pad
    peak = max((sum(stack) for stack in stacks), default=0) or 1
    slot = (width - left - 8) / max(len(labels), 1)
    bar = max(min(slot * 0.8, 40), 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{esc(aria)}" font-size="11" fill="{TEXT}">']
    for fraction in (0.0, 0.5, 1.0):
        y = top_pad + inner - inner * fraction
        tick = f"${peak * fraction:,.2f}" if money else fmt_short(round(peak * fraction))
        parts.append(f'<line x1="{left}" x2="{width - 8}" y1="{y:.1f}" y2="{y:.1f}" stroke="#9e9e9e" '
                     f'stroke-opacity="0.35"/><text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{tick}</text>')
    every = max(1, math.ceil(len(labels) / 10))
    for i, (label, stack) in enumerate(zip(labels, stacks, strict=True)):
        x = left + slot * i + (slot - bar) / 2
        base = float(top_pad + inner)
        for value, color in zip(stack, colors, strict=True):
            h = inner * value / peak
            base -= h
            parts.append(f'<rect x="{x:.1f}" y="{base:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{color}">'
                         f"<title>{esc(label)}: {esc(_cost(value)[0] if money else fmt_int(value))}</title></rect>")
        if i % every == 0:
            parts.append(f'<text x="{x + bar / 2:.1f}" y="{height - 8}" text-anchor="middle">{esc(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _rows_chart(labels: Sequence[str], stacks: Sequence[Sequence[float]], colors: Sequence[str], *, aria: str,
                money: bool) -> str:
    """Horizontal bars, one row per label (cut to fit, whole in its tooltip), the total at the end."""
    width, row, left, right = 960, 22, 300, 90
    height = row * max(len(labels), 1) + 8
    peak = max((sum(stack) for stack in stacks), default=0) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{esc(aria)}" font-size="12" fill="{TEXT}">']
    for i, (label, stack) in enumerate(zip(labels, stacks, strict=True)):
        y = 4 + row * i
        shown = label if len(label) <= 44 else label[:43] + "…"
        parts.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end"><title>{esc(label)}</title>'
                     f"{esc(shown)}</text>")
        x = float(left)
        for value, color in zip(stack, colors, strict=True):
            w = (width - left - right) * value / peak
            parts.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row - 6}" fill="{color}">'
                         f"<title>{esc(label)}: {esc(_cost(value)[0] if money else fmt_int(value))}</title></rect>")
            x += w
        total = sum(stack)
        parts.append(f'<text x="{x + 6:.1f}" y="{y + 15}">{esc(_cost(total)[0] if money else fmt_short(total))}'
                     "</text>")
    parts.append("</svg>")
    return "".join(parts)


def usage_page(by: str, rows: Sequence[dict[str, Any]], totals: dict[str, Any], *, redacted: bool) -> str:
    """The usage page ``by`` day or model: charts of cost and tokens, and the table ``pikit usage --by BY`` prints."""
    labels = [str(r["key"]) for r in rows]
    chart = _columns_chart if by == "day" else _rows_chart
    money = chart(labels, [[float(r["cost"])] for r in rows], [SERIES[3]], aria=f"cost by {by}", money=True)
    tokens = chart(labels, [[float(r[field]) for _, field, _ in _KINDS] for r in rows], [c for _, _, c in _KINDS],
                   aria=f"tokens by {by}", money=False)
    head = "".join(f'<th class="pikit-num">{esc(name)}</th>' for name, _ in _COLUMNS)
    body = "".join(f"<tr><td>{esc(label)}</td>" + "".join(f'<td class="pikit-num">{_value(f, r[f])}</td>'
                                                          for _, f in _COLUMNS) + "</tr>"
                   for label, r in zip(labels, rows, strict=True))
    total = '<tr class="pikit-total"><td>total</td>' + "".join(
        f'<td class="pikit-num">{_value(f, totals[f])}</td>' for _, f in _COLUMNS) + "</tr>"
    empty = "" if rows else '<div class="pikit-dim">No recorded usage.</div>'
    return "".join([
        _head(f"Usage by {by}", SITE_CSP), f"<header><h1>Usage by {esc(by)}</h1>",
        f'<div class="pikit-sub">{plural(len(rows), by)}; the numbers of <code>pikit usage --by {esc(by)}</code>: '
        "each assistant message counted once (a fork's copied history counts in the session it was copied "
        "from); summaries are the recorded compaction and branch-summary calls.</div>", _nav("../"), "</header>",
        f"<section><h2>Cost by {esc(by)}</h2>{empty}{money if rows else ''}</section>",
        f"<section><h2>Tokens by {esc(by)}</h2>{_legend(_KINDS)}{tokens if rows else ''}</section>",
        f'<section><h2>Table</h2><table><thead><tr><th>{esc(by)}</th>{head}</tr></thead><tbody>{body}{total}'
        "</tbody></table></section>", _footer(redacted), "</main></body></html>\n"])
