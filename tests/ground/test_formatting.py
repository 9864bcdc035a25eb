"""pikit._formatting: the one number format of the command line, widgets and pages."""

from __future__ import annotations

import math

import pytest

from pikit._formatting import MISSING, fmt_delta, fmt_int, fmt_percent, fmt_short, fmt_tokens, plural


@pytest.mark.parametrize(("value", "text"), [
    (0, "0"), (7, "7"), (12345, "12,345"), (-4200, "-4,200"), (1234.5, "1,234.5"), (12.0, "12"),
    (None, MISSING), (math.nan, MISSING), (math.inf, MISSING), ("x", MISSING), (True, MISSING), ("42", "42"),
])
def test_fmt_int(value: object, text: str) -> None:
    assert fmt_int(value) == text


def test_fmt_delta_signs() -> None:
    assert fmt_delta(120) == "+120"
    assert fmt_delta(-4000) == "\u22124,000"
    assert fmt_delta(0) == "0"
    assert fmt_delta(None) == MISSING


def test_fmt_tokens_and_plural_agree_with_their_number() -> None:
    assert fmt_tokens(1) == "1 token"
    assert fmt_tokens(12345) == "12,345 tokens"
    assert fmt_tokens(None) == f"{MISSING} tokens"
    assert plural(1, "entry") == "1 entry"
    assert plural(0, "entry") == "0 entries"
    assert plural(2, "message") == "2 messages"
    assert plural(1, "compaction") == "1 compaction"
    assert plural(3, "child") == "3 children"
    assert plural(2, "datum", "data") == "2 data"
    assert plural(10_000, "check") == "10,000 checks"
    assert plural(3, "earlier entry") == "3 earlier entries"
    assert plural(1, "earlier entry") == "1 earlier entry"


def test_fmt_percent() -> None:
    assert fmt_percent(1, 3) == "33%"
    assert fmt_percent(0.425, digits=1) == "42.5%"
    assert fmt_percent(5, 0) == MISSING
    assert fmt_percent(None, 10) == MISSING


@pytest.mark.parametrize(("value", "text"), [
    (950, "950"), (1000, "1k"), (12345, "12.3k"), (999_950, "1M"), (1_234_567, "1.23M"), (-4200, "\u22124.2k"),
    (3e9, "3G"), (None, MISSING),
])
def test_fmt_short(value: object, text: str) -> None:
    assert fmt_short(value) == text
