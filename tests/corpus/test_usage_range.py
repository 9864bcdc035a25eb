"""A date range filters usage message by message, whatever the report's key (``--since``/``--until``).

On the sample corpus, 2026-11-05 to 2026-11-06 cuts four sessions that run over midnight at its
ends (three from 11-04 into 11-05, one from 11-06 into 11-07): their rows hold only the usage
inside the range.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pikit.corpus import Corpus
from pikit.corpus._usage import BY, FIELDS

SINCE, UNTIL = "2026-11-05", "2026-11-06"
NUMBERS = [f for f in FIELDS if not f.endswith("ost")]  # the token counts (costs are sums of floats)


def _sums(rows: list[dict[str, Any]], key: str) -> dict[Any, dict[str, int]]:
    """The token counts of ``rows`` summed by the value of ``key``."""
    out: dict[Any, dict[str, int]] = {}
    for row in rows:
        sums = out.setdefault(row[key], dict.fromkeys(NUMBERS, 0))
        for field in NUMBERS:
            sums[field] += row[field]
    return out


@pytest.fixture(scope="module")
def corpus(sample_corpus: Path) -> Any:
    with Corpus.open(str(sample_corpus), index=":memory:", workers=1) as opened:
        yield opened


def test_the_range_cuts_sessions_that_cross_it(corpus: Corpus) -> None:
    whole = {r["key"]: r for r in corpus.usage_rows("session", timezone="UTC")}
    inside = {r["key"]: r for r in corpus.usage_rows("session", since=SINCE, until=UNTIL, timezone="UTC")}
    days = corpus.usage_rows("day,session", since=SINCE, until=UNTIL, timezone="UTC")
    assert {r["day"] for r in days} == {SINCE, UNTIL}
    assert _sums(days, "session") == {key: {f: row[f] for f in NUMBERS} for key, row in inside.items()}
    cut = [key for key, row in inside.items() if row["totalTokens"] < whole[key]["totalTokens"]]
    assert len(cut) == 4  # three sessions from 11-04 into 11-05, one from 11-06 into 11-07


@pytest.mark.parametrize("by", BY)
def test_every_key_reports_the_usage_of_the_range(corpus: Corpus, by: str) -> None:
    days = {r["key"]: r for r in corpus.usage_rows("day", timezone="UTC") if SINCE <= r["key"] <= UNTIL}
    expected = {f: sum(r[f] for r in days.values()) for f in NUMBERS}
    for keys in (by, f"day,{by}" if by != "day" else "day"):
        rows = corpus.usage_rows(keys, since=SINCE, until=UNTIL, timezone="UTC")
        assert {f: sum(r[f] for r in rows) for f in NUMBERS} == expected, keys
    if by != "day":
        both = corpus.usage_rows(f"day,{by}", since=SINCE, until=UNTIL, timezone="UTC")
        one = corpus.usage_rows(by, since=SINCE, until=UNTIL, timezone="UTC")
        assert _sums(both, by) == {r["key"]: {f: r[f] for f in NUMBERS} for r in one}


def _json(*args: str) -> Any:
    result = subprocess.run([sys.executable, "-m", "pikit", "usage", *args, "--timezone", "UTC", "--since", SINCE,
                             "--until", UNTIL, "--json"], capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_pikit_usage_by_session_is_the_sum_of_its_days_in_the_range(sample_corpus: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "i.duckdb")
    sessions = _json(str(sample_corpus), "--index", index, "--by", "session")
    days = _json(str(sample_corpus), "--index", index, "--by", "day,session")
    assert {r["day"] for r in days["rows"]} == {SINCE, UNTIL}
    assert _sums(days["rows"], "session") == {r["key"]: {f: r[f] for f in NUMBERS} for r in sessions["rows"]}
    assert {f: sessions["totals"][f] for f in NUMBERS} == {f: days["totals"][f] for f in NUMBERS}
