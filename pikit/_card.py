"""A small kit for notebook cards and one-line reprs, naming no class.

Each class of pikit draws its own card (``_repr_html_``) and repr from these parts: a card
with a heading and a two-column table, a table, a stacked bar with its legend, a badge, a
note. A repr is one line of a bounded length: session text appears in it through ``repr``
(quotes, control characters shown as escapes) and cut short. In a card every piece of
session text is escaped, quotes included, with control characters, bidi controls and lone
surrogates made visible (``pikit._inert.html_text``, here :func:`esc`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ._formatting import fmt_int
from ._inert import html_text as esc
from ._palette import SEGMENT_LABELS, SEGMENTS, role_color

__all__ = ["DIM", "ENTRY_PREVIEW", "PREVIEW", "REPR_TEXT", "TABLE_ROWS", "badge", "bar", "card", "code", "cut", "esc",
           "note", "rtext", "table"]

REPR_TEXT = 48       # characters of session text in a repr
PREVIEW = 90         # characters of a message preview in a card
ENTRY_PREVIEW = 400  # characters of each message in a projected entry's card
TABLE_ROWS = 8       # messages or events listed in a card

_CARD = ("font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px; "
         "border: 1px solid var(--jp-border-color2, #ddd); border-radius: 6px; padding: 8px 10px; "
         "max-width: 980px; color: var(--jp-ui-font-color1, #212121);")
_TH = "text-align: left; padding: 1px 12px 1px 0; font-weight: 600; white-space: nowrap; vertical-align: top;"
_TD = "text-align: left; padding: 1px 12px 1px 0; vertical-align: top;"
_NUM = "text-align: right; padding: 1px 12px 1px 0; vertical-align: top; font-variant-numeric: tabular-nums;"
DIM = "color: var(--jp-ui-font-color2, #666);"


def cut(text: Any, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    one_line = " ".join(str(text).split()) if text is not None else ""
    return one_line if len(one_line) <= width else one_line[:max(width - 1, 0)].rstrip() + "…"


def rtext(text: Any, width: int = REPR_TEXT) -> str:
    """Session text for a repr: one line, cut, quoted by ``repr`` (controls become escapes)."""
    return repr(cut(text, width))


def code(value: Any) -> str:
    """``value`` escaped, in ``<code>``."""
    return f"<code>{esc(value)}</code>"


def card(kind: str, heading: str, rows: Iterable[tuple[str, str]], *parts: str) -> str:
    """A card: ``kind`` in bold, an escaped heading, a two-column table of (label, HTML value)."""
    body = "".join(f'<tr><th style="{_TH}">{esc(label)}</th><td style="{_TD}">{value}</td></tr>'
                   for label, value in rows)
    return (f'<div class="pikit-repr" style="{_CARD}"><div style="margin-bottom: 4px;"><b>{esc(kind)}</b> '
            f'{heading}</div><table style="border-collapse: collapse; font-size: inherit;">{body}</table>'
            f'{"".join(parts)}</div>')


def badge(role: Any) -> str:
    """A message role as a small coloured label."""
    background, text = role_color(str(role))
    return (f'<span style="background: {background}; color: {text}; border-radius: 3px; padding: 0 4px; '
            f'font-size: 0.9em;">{esc(role)}</span>')


def bar(parts: Sequence[tuple[str, int]], note: str = "", labels: dict[str, str] | None = None) -> str:
    """A stacked bar of the segments in ``parts`` (palette colours) with its legend."""
    names = {**SEGMENT_LABELS, **(labels or {})}
    total = sum(value for _, value in parts)
    if total <= 0:
        return ""
    cells = "".join(f'<div title="{esc(names[key])}: {fmt_int(value)}" style="width: '
                    f'{100 * value / total:.3f}%; background: {SEGMENTS[key]};"></div>'
                    for key, value in parts if value > 0)
    legend = " ".join(f'<span style="white-space: nowrap;"><span style="display: inline-block; width: 10px; '
                      f'height: 10px; background: {SEGMENTS[key]}; margin-right: 3px;"></span>'
                      f'{esc(names[key])} {fmt_int(value)}</span>' for key, value in parts if value > 0)
    return (f'<div style="display: flex; height: 12px; margin: 6px 0 3px; border-radius: 3px; overflow: hidden; '
            f'max-width: 640px;">{cells}</div><div style="{DIM} font-size: 0.9em;">{legend}'
            f'{" · " + esc(note) if note else ""}</div>')


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    """A small table; ``rows`` hold HTML cells, columns in ``numeric`` align right."""
    head = "".join(f'<th style="{_NUM if i in numeric else _TH}">{esc(h)}</th>' for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f'<td style="{_NUM if i in numeric else _TD}">{cell}</td>'
                                    for i, cell in enumerate(row)) + "</tr>" for row in rows)
    return (f'<table style="border-collapse: collapse; margin-top: 6px; font-size: inherit;">'
            f'<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def note(text: str) -> str:
    """A dim line of plain text under a card's table."""
    return f'<div style="{DIM} font-size: 0.9em; margin-top: 4px;">{esc(text)}</div>'
