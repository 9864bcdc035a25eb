"""``pikit usage --by week``, ``--last N`` and ``--csv`` (and ``Corpus.usage_rows(by="week", last=N)``)."""

from __future__ import annotations

import csv
import datetime
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pikit.corpus import Corpus
from pikit.errors import PikitError
from tests.corpus.corpora import assistant, header, write


def _stamp(day: datetime.date, hour: int = 12) -> str:
    return f"{day.isoformat()}T{hour:02d}:00:00.000Z"


def _pikit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pikit", *args], capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "TZ": "UTC"})


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """Messages on Sunday 2026-11-01, Monday 2026-11-02 and Sunday 2026-11-08 (two ISO weeks), and today."""
    today = datetime.datetime.now(datetime.UTC).date()
    days = [datetime.date(2026, 11, 1), datetime.date(2026, 11, 2), datetime.date(2026, 11, 8), today]
    entries, parent = [], None
    for n, day in enumerate(days):
        entries.append(assistant(f"a{n}", parent, _stamp(day), 100 * (n + 1), cost=float(n + 1)))
        parent = f"a{n}"
    write(tmp_path / "s" / "=cmd.jsonl", header("s1", cwd="=HYPERLINK(1)"), *entries)
    return tmp_path / "s"


def test_weeks_start_on_monday(root: Path, tmp_path: Path) -> None:
    with Corpus.open(root, index=tmp_path / "i.duckdb", workers=1) as corpus:
        rows = corpus.usage_rows("week", timezone="UTC", until="2026-11-30")
        assert [(r["key"], r["inputTokens"]) for r in rows] == [("2026-10-26", 100), ("2026-11-02", 500)]
        by_day = corpus.usage_rows("day", timezone="UTC", until="2026-11-30")
        assert sum(r["cost"] for r in by_day) == sum(r["cost"] for r in rows) == 6.0


def test_last_days_counts_today_and_not_before(root: Path, tmp_path: Path) -> None:
    with Corpus.open(root, index=tmp_path / "i.duckdb", workers=1) as corpus:
        rows = corpus.usage_rows("day", timezone="UTC", last=3)
        assert [r["inputTokens"] for r in rows] == [400]
        with pytest.raises(PikitError, match="last or since"):
            corpus.usage_rows("day", last=3, since="2026-11-01")
        with pytest.raises(PikitError, match="1 or more"):
            corpus.usage_rows("day", last=0)


def test_csv_has_the_json_keys_and_no_formula(root: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "i.duckdb")
    done = _pikit("usage", str(root), "--by", "project,week", "--csv", "--until", "2026-11-30", "--index", index)
    assert done.returncode == 0, done.stderr
    table = list(csv.reader(io.StringIO(done.stdout)))
    as_json = json.loads(_pikit("usage", str(root), "--by", "project,week", "--json", "--until", "2026-11-30",
                                "--index", index).stdout)
    assert table[0] == list(as_json["rows"][0])
    assert [row[0] for row in table[1:]] == ["'=HYPERLINK(1)"] * 2  # a spreadsheet reads it as text
    assert [[float(v) for v in row[2:]] for row in table[1:]] == [
        [float(v) for v in list(r.values())[2:]] for r in as_json["rows"]]


def test_mistakes_are_one_line(root: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "i.duckdb")
    for args, message in ((["--csv", "--json"], "--csv and --json: choose one"),
                          (["--last", "2", "--since", "2026-11-01"], "--last takes 1 or more days"),
                          (["--by", "fortnight"], "--by must be one of day, week, month")):
        done = _pikit("usage", str(root), "--index", index, *args)
        assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1 and message in done.stderr, args
