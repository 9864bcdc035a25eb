"""The corpus pages of a static site (:mod:`pikit.export._site`): the sessions index and the usage pages.

Every value from the corpus goes through :func:`pikit._inert.html_text` (escaped, quotes
included, control characters made visible), after the redaction when there is one. The index's
one script is :data:`SCRIPT`, allowed by its hash alone; the usage pages run none.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .._formatting import fmt_int
from .._inert import html_text as esc
from .._version import __version__

__all__ = ["SCRIPT", "index_page", "usage_page"]

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
_FIRST_CHARS = 300  # characters of a first message the index's filter looks through
_CSS = """
body { margin: 0; background: #fafafa; font: 14px/1.45 system-ui, sans-serif; color: #222; }
main { max-width: 1500px; margin: 0 auto; padding: 16px 20px 40px; }
h1 { font-size: 1.4em; margin: 0 0 4px; } h2 { font-size: 1.1em; margin: 18px 0 6px; }
nav a { margin-right: 14px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { border-bottom: 1px solid #e5e5e5; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; position: sticky; top: 0; }
th.sortable { cursor: pointer; user-select: none; }
th[aria-sort=ascending]::after { content: " \\25B2"; } th[aria-sort=descending]::after { content: " \\25BC"; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.when { white-space: nowrap; }
td.first { color: #666; max-width: 420px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#filter { width: 100%; max-width: 520px; padding: 5px 8px; margin: 8px 0; font: inherit; }
.bar rect { fill: #4a7fb5; } .bar text { font-size: 11px; fill: #333; }
footer { margin-top: 24px; font-size: 0.85em; color: #777; }
"""
# Sorting by a column (its cells' data-sort values, as numbers where data-num is set) and the filter over
# each row's data-text (its title and first message, lowercased).
SCRIPT = """(function () {
  var table = document.getElementById('sessions'), body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows), box = document.getElementById('filter');
  var shown = document.getElementById('shown');
  box.hidden = false;
  box.addEventListener('input', function () {
    var words = box.value.toLowerCase().split(/\\s+/).filter(Boolean), n = 0;
    rows.forEach(function (row) {
      var text = row.getAttribute('data-text') || '';
      var keep = words.every(function (w) { return text.indexOf(w) >= 0; });
      row.hidden = !keep;
      if (keep) { n += 1; }
    });
    shown.textContent = n + ' of ' + rows.length + ' sessions';
  });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell, column) {
    cell.className += ' sortable';
    cell.tabIndex = 0;
    function sort() {
      var up = cell.getAttribute('aria-sort') !== 'ascending', num = cell.hasAttribute('data-num');
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute('aria-sort'); });
      cell.setAttribute('aria-sort', up ? 'ascending' : 'descending');
      rows.sort(function (a, b) {
        var x = a.cells[column].getAttribute('data-sort') || '', y = b.cells[column].getAttribute('data-sort') || '';
        var d = num ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : (x < y ? -1 : x > y ? 1 : 0);
        return up ? d : -d;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    }
    cell.addEventListener('click', sort);
    cell.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); }
    });
  });
}());"""

Text = Callable[[str], str] | None


def _page(title: str, body: str, csp: str = _CSP) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="referrer" content="no-referrer">'
            f"<title>{esc(title)} · pikit</title><style>{_CSS}</style></head><body><main>"
            '<nav><a href="index.html">Sessions</a><a href="usage-by-day.html">Usage by day</a>'
            '<a href="usage-by-model.html">Usage by model</a></nav>'
            f"{body}<footer>Written by pikit {esc(__version__)}. Everything is in this folder: the pages load "
            "nothing from elsewhere.</footer></main></body></html>\n")


def _shown(value: Any, text: Text) -> str:
    """A value as escaped text (redacted first when ``text`` is given); missing values as an empty string."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    plain = value if isinstance(value, str) else str(value)
    return esc(text(plain) if text is not None else plain)


def _redacted(value: str, text: Text) -> str:
    return text(value) if text is not None else value


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if hasattr(value, "strftime") else ""


def _cost(value: Any) -> str:
    return f"{value:,.2f}" if isinstance(value, int | float) and math.isfinite(value) else ""


def _number(value: Any) -> str:
    return str(value) if isinstance(value, int | float) and math.isfinite(value) else "0"


def _row(row: dict[str, Any], link: str | None, text: Text) -> str:
    title = _shown(row["title"] or row["path"], text)
    first = _redacted(row["first_user_message"] or "", text)[:_FIRST_CHARS]  # (redacted whole, then cut)
    search = esc(f"{_redacted(row['title'] or '', text)} {first}".lower())
    name = f'<a href="{esc(link)}">{title}</a>' if link is not None else title
    started, last = _when(row["started"]), _when(row["last_activity"])
    return (f'<tr data-text="{search}"><td data-sort="{title}">{name}</td>'
            f'<td data-sort="{_shown(row["project"], text)}">{_shown(row["project"], text)}</td>'
            f'<td class="when" data-sort="{started}">{started}</td><td class="when" data-sort="{last}">{last}</td>'
            f'<td data-sort="{_shown(row["models"], text)}">{_shown(row["models"], text)}</td>'
            f'<td class="num" data-sort="{_number(row["cost"])}">{_cost(row["cost"])}</td>'
            f'<td class="num" data-sort="{_number(row["compactions"])}">{fmt_int(row["compactions"] or 0)}</td>'
            f'<td class="num" data-sort="{_number(row["abandoned_branches"])}">'
            f'{fmt_int(row["abandoned_branches"] or 0)}</td>'
            f'<td class="num" data-sort="{_number(row["entries"])}">{fmt_int(row["entries"] or 0)}</td>'
            f'<td class="first">{esc(first)}</td></tr>')


def index_page(rows: Sequence[dict[str, Any]], links: dict[str, str], text: Text, script_hash: str) -> str:
    """The sessions index: one row per session, its title a link to its page (``links``: path → page)."""
    head = "".join(f"<th{' data-num' if num else ''}{' class=num' if num else ''}>{name}</th>" for name, num in (
        ("Title", False), ("Project", False), ("Started", False), ("Last activity", False), ("Models", False),
        ("Cost $", True), ("Compactions", True), ("Abandoned branches", True), ("Entries", True),
        ("First message", False)))
    total = sum(r["cost"] for r in rows if isinstance(r["cost"], int | float) and math.isfinite(r["cost"]))
    body = (f"<h1>Sessions</h1><p><span id=\"shown\">{fmt_int(len(rows))} sessions</span>, ${total:,.2f} in all "
            "(dates in UTC; a title opens the session: its tree, budget, compactions and transcript)</p>"
            '<input id="filter" type="search" placeholder="filter by words in titles and first messages" '
            'aria-label="filter sessions" hidden>'
            f'<table id="sessions"><thead><tr>{head}</tr></thead><tbody>'
            + "".join(_row(r, links.get(r["path"]), text) for r in rows)
            + f"</tbody></table><script>{SCRIPT}</script>")
    csp = _CSP.replace("default-src 'none';", f"default-src 'none'; script-src '{script_hash}';")
    return _page("Sessions", body, csp)


def _chart(rows: Sequence[dict[str, Any]], labels: list[str]) -> str:
    """A horizontal bar chart of the rows' costs, as inline SVG (no script)."""
    costs = [r["cost"] if isinstance(r["cost"], int | float) and math.isfinite(r["cost"]) else 0.0 for r in rows]
    top = max(costs, default=0.0) or 1.0
    height = 22 * len(rows) + 10
    bars = "".join(f'<text x="0" y="{22 * i + 20}">{label}</text>'
                   f'<rect x="260" y="{22 * i + 6}" width="{max(1.0, 600 * cost / top):.1f}" height="16"></rect>'
                   f'<text x="{266 + 600 * cost / top:.1f}" y="{22 * i + 20}">${cost:,.2f}</text>'
                   for i, (label, cost) in enumerate(zip(labels, costs, strict=True)))
    return (f'<svg class="bar" role="img" aria-label="cost per row" viewBox="0 0 960 {height}" width="960" '
            f'height="{height}" xmlns="http://www.w3.org/2000/svg">{bars}</svg>')


def usage_page(by: str, rows: Sequence[dict[str, Any]], text: Text) -> str:
    """Usage by ``day`` or ``model``: a chart of the cost and the table of every figure."""
    labels = [_shown(r["key"], text) for r in rows]
    fields = ("inputTokens", "outputTokens", "cacheWriteTokens", "cacheReadTokens", "totalTokens", "cost",
              "summarizationTokens", "summarizationCost")
    head = "".join(f"<th class=num>{name}</th>" for name in fields)
    lines = "".join(f"<tr><td>{label}</td>" + "".join(
        f"<td class=num>{_cost(r[f]) if f.endswith('ost') else fmt_int(r[f])}</td>" for f in fields) + "</tr>"
        for label, r in zip(labels, rows, strict=True))
    title = f"Usage by {by}"
    body = (f"<h1>{title}</h1><p>Each assistant message counted once (copies made by fork and clone are not "
            "counted again); days in the machine's time zone.</p>" + _chart(rows, labels)
            + f"<h2>Every figure</h2><table><thead><tr><th>{by}</th>{head}</tr></thead><tbody>{lines}</tbody></table>")
    return _page(title, body)
