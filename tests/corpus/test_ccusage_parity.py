"""``pikit usage --json`` shows the same totals as ``@ccusage/pi`` 18 and ``ccusage pi`` 20 on the same directory.

ccusage 20 recognises a fork's copies by the header's absolute ``parentSession`` path: it counts them
once where that path resolves (a corpus in place) and they lead the fork on the parent's current
branch, twice where it does not (moved, copied, downloaded). pikit recognises them by content, the
same wherever the files are.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.corpus.corpora import assistant, header, legacy, legacy_header, user, write

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


def _ccusage20(exe: Path, command: str, root: Path, tz: str) -> dict[str, Any]:
    result = subprocess.run([str(exe), "pi", command, "--json", "--offline", "--timezone", tz, "--pi-path", str(root)],
                            capture_output=True, text=True, timeout=300, check=True)
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


REPORTS = [("day", "daily", "daily", "date"), ("month", "monthly", "monthly", "month"),
           ("session", "session", "sessions", "sessionId")]


def _same_report(theirs: dict[str, Any], ours: dict[str, Any], by: str, list_key: str, key: str,
                 rows: bool = True) -> None:
    expected = {row[key]: row for row in theirs[list_key]}
    got = {row["key"]: row for row in ours["rows"]}
    # (@ccusage/pi lists no row for a session whose every message it counted in a fork read first)
    assert set(got) == set(expected) if rows else set(got) >= set(expected)
    for name, row in expected.items() if rows else ():
        _same(got[name], row, f"{by} {name}")
    _same(ours["totals"], theirs["totals"], "totals")
    assert len(expected) > (3 if by != "month" else 0)


@pytest.mark.parametrize("tz", ["UTC", "America/Los_Angeles", "Asia/Tokyo"])
@pytest.mark.parametrize(("by", "command", "list_key", "key"), REPORTS)
def test_same_totals_as_ccusage(ccusage: Path, sample_corpus: Path, tmp_path: Path, tz: str, by: str, command: str,
                                list_key: str, key: str) -> None:
    """Days and months row by row; sessions in total (@ccusage/pi credits a copy to the file it read first, pikit
    to the original, as ccusage 20 does: see test_same_as_ccusage20_where_parents_resolve)."""
    theirs = _ccusage(ccusage, command, sample_corpus, tz)
    ours = _pikit(by, sample_corpus, tz, tmp_path)
    _same_report(theirs, ours, by, list_key, key, rows=by != "session")


@pytest.fixture(scope="module")
def relocated(sample_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the sample corpus whose headers' ``parentSession`` paths name the copied parents (only the header
    lines are rewritten)."""
    root = tmp_path_factory.mktemp("relocated") / "sessions"
    for path in sorted(sample_corpus.rglob("*.jsonl")):
        target = root / path.relative_to(sample_corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        first, newline, rest = path.read_bytes().partition(b"\n")
        head = json.loads(first)
        if isinstance(head.get("parentSession"), str):
            head["parentSession"] = str(root / head["parentSession"].split("/sessions/", 1)[1])
            first = json.dumps(head, separators=(",", ":")).encode()
        target.write_bytes(first + newline + rest)
    return root


@pytest.mark.parametrize("tz", ["UTC", "America/Los_Angeles", "Asia/Tokyo"])
@pytest.mark.parametrize(("by", "command", "list_key", "key"), REPORTS)
def test_same_as_ccusage20_where_parents_resolve(ccusage20: Path, relocated: Path, tmp_path: Path, tz: str, by: str,
                                                 command: str, list_key: str, key: str) -> None:
    theirs = _ccusage20(ccusage20, command, relocated, tz)
    ours = _pikit(by, relocated, tz, tmp_path)
    _same_report(theirs, ours, by, list_key, key)


def _fork_copies(root: Path) -> dict[str, list[float]]:
    """Per UTC day, the tokens and cost of the fork copies in the files: assistant messages in a file with a
    parentSession, older than its header, that sit in another file too."""
    seen: dict[tuple[str, str], int] = {}
    copies = []
    for path in sorted(root.rglob("*.jsonl")):
        lines = []
        for line in path.read_text().splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:  # (the corpus holds a damaged line and an unfinished one)
                continue
        head = lines[0]
        for entry in lines[1:]:
            usage = (entry.get("message") or {}).get("usage")
            if entry.get("type") != "message" or entry["message"].get("role") != "assistant" or not usage \
                    or not isinstance(entry.get("id"), str):
                continue
            key = (entry["timestamp"], entry["id"])
            seen[key] = seen.get(key, 0) + 1
            if head.get("parentSession") and entry["timestamp"] < head["timestamp"]:
                copies.append((key, usage))
    per_day: dict[str, list[float]] = {}
    for (timestamp, _), usage in (c for c in copies if seen[c[0]] > 1):
        day = per_day.setdefault(timestamp[:10], [0, 0, 0, 0, 0.0])
        for k, name in enumerate(("input", "output", "cacheWrite", "cacheRead")):
            day[k] += usage.get(name, 0)
        day[4] += usage["cost"]["total"]
    return per_day


def test_ccusage20_counts_copies_again_where_parents_do_not_resolve(ccusage20: Path, sample_corpus: Path,
                                                                    tmp_path: Path) -> None:
    """As shipped (``parentSession`` names /home/dev/...): ccusage 20 minus pikit is exactly the fork copies."""
    theirs = {row["date"]: row for row in _ccusage20(ccusage20, "daily", sample_corpus, "UTC")["daily"]}
    ours = {row["key"]: row for row in _pikit("day", sample_corpus, "UTC", tmp_path)["rows"]}
    copies = _fork_copies(sample_corpus)
    assert set(theirs) == set(ours) and copies and set(copies) <= set(ours)
    for day, row in theirs.items():
        extra = copies.get(day, [0, 0, 0, 0, 0.0])
        for k, (mine, their) in enumerate(FIELDS):
            assert row[their] - ours[day][mine] == extra[k], (day, mine)
        assert math.isclose(row["totalCost"] - ours[day]["cost"], extra[4], rel_tol=1e-9, abs_tol=1e-9), day
    share = sum(c[4] for c in copies.values()) / sum(r["cost"] for r in ours.values())
    assert 0.02 < share < 0.2  # (about 19% on the bundled corpus)


def test_where_ccusage20_counts_a_copy_twice(ccusage20: Path, tmp_path: Path) -> None:
    """A fork of a branch that is not its parent's active one: ccusage 20 counts the copy again, pikit once."""
    root = tmp_path / "sessions"
    parent = write(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_p.jsonl", header("p"),
                   user("u1", None, "2026-11-02T08:10:00.000Z", "go"),
                   assistant("a1", "u1", "2026-11-02T08:11:00.000Z", 100, 1.0),
                   assistant("a2", "u1", "2026-11-02T08:12:00.000Z", 200, 2.0))
    write(root / "--home-dev-web--" / "2026-11-02T09-00-00-000Z_c.jsonl",
          header("c", cwd="/home/dev/web", parent=str(parent), timestamp="2026-11-02T09:00:00.000Z"),
          user("u1", None, "2026-11-02T08:10:00.000Z", "go"),
          assistant("a1", "u1", "2026-11-02T08:11:00.000Z", 100, 1.0),
          assistant("c1", "a1", "2026-11-02T09:01:00.000Z", 400, 4.0))
    theirs = _ccusage20(ccusage20, "session", root, "UTC")
    ours = _pikit("session", root, "UTC", tmp_path)
    assert theirs["totals"]["inputTokens"] == 800 and ours["totals"]["inputTokens"] == 700
    assert {r["key"]: r["inputTokens"] for r in ours["rows"]} == {"p": 300, "c": 400}


def test_where_ccusage20_counts_a_whole_file_copy_again(ccusage20: Path, tmp_path: Path) -> None:
    """A whole-file fork (Pi's fork copies every entry) of a parent with an abandoned branch: ccusage 20 takes as
    copies only the fork's leading entries on the parent's current branch, and counts the copies from the first
    abandoned one on again (here a2 and a3, though a3 is on the current branch); pikit counts each once."""
    root = tmp_path / "sessions"
    entries = (user("u1", None, "2026-11-02T08:10:00.000Z", "go"),
               assistant("a1", "u1", "2026-11-02T08:11:00.000Z", 100, 1.0),
               user("u2", "a1", "2026-11-02T08:12:00.000Z", "try this"),
               assistant("a2", "u2", "2026-11-02T08:13:00.000Z", 200, 2.0),
               user("u3", "a1", "2026-11-02T08:14:00.000Z", "try that instead"),
               assistant("a3", "u3", "2026-11-02T08:15:00.000Z", 400, 4.0))
    parent = write(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_p.jsonl", header("p"), *entries)
    write(root / "--home-dev-web--" / "2026-11-02T09-00-00-000Z_c.jsonl",
          header("c", cwd="/home/dev/web", parent=str(parent), timestamp="2026-11-02T09:00:00.000Z"), *entries,
          user("u4", "a3", "2026-11-02T09:01:00.000Z", "go on"),
          assistant("c1", "u4", "2026-11-02T09:02:00.000Z", 800, 8.0))
    theirs = _ccusage20(ccusage20, "session", root, "UTC")
    ours = _pikit("session", root, "UTC", tmp_path)
    assert {r["sessionId"]: r["inputTokens"] for r in theirs["sessions"]} == {"p": 700, "c": 1400}
    assert {r["key"]: r["inputTokens"] for r in ours["rows"]} == {"p": 700, "c": 800}


def test_where_ccusage20_counts_a_backup_twice(ccusage20: Path, tmp_path: Path) -> None:
    """A copy of a file under another name, without ``parentSession``: ccusage 20 keeps a session per file name and
    counts both; pikit counts the message once."""
    root = tmp_path / "sessions"
    message = assistant("a1", None, "2026-11-02T08:11:00.000Z", 100, 1.0)
    write(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_p.jsonl", header("p"), message)
    write(root / "backup" / "2026-11-02T08-00-00-000Z_p-copy.jsonl", header("p"), message)
    theirs = _ccusage20(ccusage20, "daily", root, "UTC")
    ours = _pikit("day", root, "UTC", tmp_path)
    assert theirs["totals"]["inputTokens"] == 200 and ours["totals"]["inputTokens"] == 100


def test_legacy_entries_sharing_a_raw_id(ccusage: Path, tmp_path: Path) -> None:
    """A version-1 file whose entries carry the same raw id (Pi's migration replaces them): per day, @ccusage/pi's."""
    root = tmp_path / "sessions"
    entries = [legacy(user("u1", None, "2026-11-02T08:59:00.000Z", "go"), "r0", None)]
    entries += [legacy(assistant(f"a{k}", "u1", f"2026-11-02T{9 + k // 2:02d}:00:00.000Z", 100 * (k + 1), 0.5 * k),
                       "same", "r0") for k in range(6)]
    write(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_old.jsonl", legacy_header("old"), *entries)
    for tz in ("UTC", "Asia/Tokyo"):
        theirs = _ccusage(ccusage, "daily", root, tz)
        ours = _pikit("day", root, tz, tmp_path)
        _same_report(theirs, ours, "month", "daily", "date")
        assert ours["totals"]["inputTokens"] == 2100


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
