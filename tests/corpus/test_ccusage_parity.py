"""``pikit usage --json`` shows the same totals as ``@ccusage/pi --json`` on the same directory."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.corpus.corpora import assistant, header, user, write

pytestmark = pytest.mark.slow

FIELDS = (("inputTokens", "inputTokens"), ("outputTokens", "outputTokens"),
          ("cacheWriteTokens", "cacheCreationTokens"), ("cacheReadTokens", "cacheReadTokens"))


def _ccusage(exe: Path, command: str, root: Path, tz: str) -> dict[str, Any]:
    # One libuv thread: @ccusage/pi then lists folders in a fixed order (with more, the order folder
    # listings complete in decides which file a forked copy is counted in, and can change between runs).
    env = {**os.environ, "UV_THREADPOOL_SIZE": "1"}
    result = subprocess.run([str(exe), command, "--json", "--piPath", str(root), "--timezone", tz],
                            capture_output=True, text=True, timeout=300, check=True, env=env)
    return json.loads(result.stdout)


def _pikit(by: str, root: Path, tz: str, tmp_path: Path) -> dict[str, Any]:
    result = subprocess.run([sys.executable, "-m", "pikit", "usage", str(root), "--by", by, "--json", "--timezone",
                             tz, "--index", str(tmp_path / f"index-{by}.duckdb")],
                            capture_output=True, text=True, timeout=300, check=True)
    return json.loads(result.stdout)


def _same(ours: dict[str, Any], theirs: dict[str, Any], what: str) -> None:
    for mine, their in FIELDS:
        assert ours[mine] == theirs[their], f"{what}: {mine}"
    # costs: compensated summation here, accumulation in file order there (rounding only)
    assert math.isclose(ours["cost"], theirs.get("totalCost", theirs.get("cost")), rel_tol=1e-9, abs_tol=1e-12), what


@pytest.mark.parametrize("tz", ["UTC", "America/Los_Angeles", "Asia/Tokyo"])
@pytest.mark.parametrize(("by", "command", "list_key", "key"),
                         [("day", "daily", "daily", "date"), ("month", "monthly", "monthly", "month"),
                          ("session", "session", "sessions", "sessionId")])
def test_same_totals_as_ccusage(ccusage: Path, sample_corpus: Path, tmp_path: Path, tz: str, by: str, command: str,
                                list_key: str, key: str) -> None:
    theirs = _ccusage(ccusage, command, sample_corpus, tz)
    ours = _pikit(by, sample_corpus, tz, tmp_path)
    expected = {row[key]: row for row in theirs[list_key]}
    got = {row["key"]: row for row in ours["rows"]}
    assert set(got) == set(expected)
    for name, row in expected.items():
        _same(got[name], row, f"{by} {name}")
    _same(ours["totals"], theirs["totals"], "totals")
    assert len(expected) > (3 if by != "month" else 0)


def test_the_corpus_exercises_the_rule(sample_corpus: Path, tmp_path: Path) -> None:
    """The comparison means something: the corpus holds copied entries that a per-file sum would count twice."""
    from pikit.corpus import Corpus

    with Corpus.open(sample_corpus, index=tmp_path / "i.duckdb", workers=1) as corpus:
        copied = corpus.sql("SELECT count(*) AS n FROM messages_raw WHERE copied AND countable").n[0]
        skipped = corpus.sql("SELECT count(*) AS n FROM messages WHERE countable AND NOT counted").n[0]
    assert copied > 20 and skipped == copied


def test_where_pikit_is_more_exact(ccusage: Path, tmp_path: Path) -> None:
    """Two different messages with the same timestamp and total: @ccusage/pi keeps one, pikit both."""
    root = tmp_path / "sessions"
    ts = "2026-11-02T09:00:00.000Z"
    write(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_s1.jsonl", header("s1"),
          user("u1", None, "2026-11-02T08:59:00.000Z", "two answers in the same millisecond"),
          assistant("a1", "u1", ts, 100, 0.5), assistant("a2", "u1", ts, 100, 0.25))
    theirs = _ccusage(ccusage, "daily", root, "UTC")
    ours = _pikit("day", root, "UTC", tmp_path)
    assert theirs["totals"]["inputTokens"] == 100
    assert ours["totals"]["inputTokens"] == 200
    assert ours["totals"]["cost"] == 0.75
