"""One way to write numbers for people: the command line, the widgets and exported pages.

Token counts and other integers get comma thousands separators (``12,345``); a missing
value is an en dash (``–``); deltas carry a sign (``+120``, ``−40``, with a real minus
sign); percentages are rounded; counted nouns agree with their number (``1 entry``,
``3 entries``). This module imports nothing.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["MISSING", "fmt_delta", "fmt_int", "fmt_percent", "fmt_short", "fmt_tokens", "plural"]

MISSING = "–"

_IRREGULAR = {"entry": "entries", "summary": "summaries", "ancestry": "ancestries", "reply": "replies",
              "match": "matches", "branch": "branches", "prefix": "prefixes", "child": "children"}


def _number(value: Any) -> float | int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) or math.isinf(number) else number


def fmt_int(value: Any) -> str:
    """An integer with thousands separators (``12,345``); a non-integral float keeps one
    decimal (``1,234.5``); ``–`` for ``None``, NaN or anything that is not a number."""
    if type(value) is int:  # the common case, first (widgets format tens of thousands of counts)
        return f"{value:,}"
    number = _number(value)
    if number is None:
        return MISSING
    if isinstance(number, float) and not number.is_integer():
        return f"{number:,.1f}"
    return f"{int(number):,}"


def fmt_tokens(value: Any) -> str:
    """A token count with its unit: ``1 token``, ``12,345 tokens``, ``– tokens`` when unknown."""
    number = _number(value)
    return f"{fmt_int(value)} token{'' if number == 1 else 's'}"


def fmt_delta(value: Any) -> str:
    """A signed difference: ``+120``, ``−40`` (U+2212), ``0``; ``–`` when unknown."""
    number = _number(value)
    if number is None:
        return MISSING
    if number > 0:
        return "+" + fmt_int(number)
    if number < 0:
        return "\u2212" + fmt_int(-number)
    return "0"


def fmt_percent(part: Any, whole: Any = None, *, digits: int = 0) -> str:
    """``part`` as a percentage of ``whole`` (or ``part`` alone as a ratio, ``0.42`` → ``42%``).

    ``digits`` decimals; ``–`` when either is unknown or ``whole`` is zero.
    """
    p = _number(part)
    if p is None:
        return MISSING
    if whole is not None:
        w = _number(whole)
        if not w:
            return MISSING
        p = p / w
    return f"{p * 100:.{digits}f}%"


def fmt_short(value: Any) -> str:
    """A compact count for tight places (chart labels): ``950``, ``12.3k``, ``1.23M``."""
    number = _number(value)
    if number is None:
        return MISSING
    size = abs(number)
    sign = "\u2212" if number < 0 else ""
    if size < 1000:
        return sign + fmt_int(size)
    for divisor, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        scaled = float(f"{size / divisor:.3g}")
        if scaled < 1000 or suffix == "G":
            return f"{sign}{scaled:g}{suffix}"
    return sign + fmt_int(size)  # pragma: no cover - the loop always returns


def plural(count: Any, noun: str, plural_form: str | None = None) -> str:
    """``count`` and ``noun`` in agreement: ``1 entry``, ``0 entries``, ``12,345 messages``.

    The last word of ``noun`` takes the plural (``2 earlier entries``); ``plural_form`` overrides
    the whole plural (defaults: a few irregular words, else ``noun + "s"``).
    """
    number = _number(count)
    if number == 1:
        return f"{fmt_int(count)} {noun}"
    if plural_form is None:
        head, _, last = noun.rpartition(" ")
        plural_form = (head + " " if head else "") + (_IRREGULAR.get(last) or last + "s")
    return f"{fmt_int(count)} {plural_form}"
