"""``pikit sessions`` and ``pikit usage``: JSON contracts, plain output, mistakes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FIELDS = ["key", "inputTokens", "outputTokens", "cacheWriteTokens", "cacheReadTokens", "totalTokens", "cost",
          "summarizationTokens", "summarizationCost"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pikit", *args], capture_output=True, text=True, timeout=300,
                          check=False)


def _json(*args: str) -> Any:
    result = _run(*args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.slow
def test_usage_json_shape(sample_corpus: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "i.duckdb")
    for by in ("day", "month", "session", "model", "project"):
        report = _json("usage", str(sample_corpus), "--by", by, "--index", index, "--timezone", "UTC")
        assert set(report) == {"rows", "totals"}
        assert all(list(row) == FIELDS for row in report["rows"])
        assert list(report["totals"]) == FIELDS[1:]
        assert report["totals"]["inputTokens"] == sum(r["inputTokens"] for r in report["rows"])
        for row in report["rows"]:
            assert row["totalTokens"] == sum(row[k] for k in FIELDS[1:5])
    months = _json("usage", str(sample_corpus), "--by", "month", "--index", index, "--timezone", "UTC")
    assert [r["key"] for r in months["rows"]] == ["2026-10", "2026-11"]
    models = _json("usage", str(sample_corpus), "--by", "model", "--index", index)
    assert {r["key"] for r in models["rows"]} == {"anthropic/claude-sonnet-4-5", "anthropic/claude-haiku-4-5",
                                                  "openai/gpt-5", "openai/gpt-4o"}
    assert models["totals"]["summarizationCost"] > 0


def test_usage_split_by_branch_and_dates(sample_corpus: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "i.duckdb")
    whole = _json("usage", str(sample_corpus), "--index", index, "--timezone", "UTC")
    split = _json("usage", str(sample_corpus), "--index", index, "--timezone", "UTC", "--split", "branch")
    assert {r["branch"] for r in split["rows"]} == {"active", "abandoned"}
    assert split["totals"]["outputTokens"] == whole["totals"]["outputTokens"]
    abandoned = sum(r["cost"] for r in split["rows"] if r["branch"] == "abandoned")
    assert 0 < abandoned < whole["totals"]["cost"]
    window = _json("usage", str(sample_corpus), "--index", index, "--timezone", "UTC", "--since", "2026-11-03",
                   "--until", "20261104")
    assert [r["key"] for r in window["rows"]] == ["2026-11-03", "2026-11-04"]
    tokyo = _json("usage", str(sample_corpus), "--index", index, "--timezone", "Asia/Tokyo")
    assert tokyo["totals"]["inputTokens"] == whole["totals"]["inputTokens"]
    assert [r["key"] for r in tokyo["rows"]] != [r["key"] for r in whole["rows"]]


def test_sessions_json_and_search(sample_corpus: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "i.duckdb")
    listed = _json("sessions", str(sample_corpus), "--index", index)["sessions"]
    assert len(listed) == 37
    assert [s["started"] for s in listed] == sorted((s["started"] for s in listed), reverse=True)
    assert {"sessionId", "path", "project", "cwd", "name", "firstUserMessage", "leaves", "abandonedBranches",
            "compactions", "cost", "models"} <= set(listed[0])
    found = _json("sessions", str(sample_corpus), "--index", index, "--search", "makefile deploys")["sessions"]
    assert [s["firstUserMessage"] for s in found] == ["List the scripts in the Makefile."]
    plain = _run("sessions", str(sample_corpus), "--index", index)
    assert plain.returncode == 0 and "37 session(s)" in plain.stdout
    assert "1 damaged-line, 1 unfinished-line" in plain.stderr


def test_mistakes_are_one_line(tmp_path: Path, sample_corpus: Path) -> None:
    for args, message in [(("usage", str(tmp_path / "nope")), "no such file or folder"),
                          (("usage", str(sample_corpus), "--timezone", "Mars/Olympus", "--index",
                            str(tmp_path / "i.duckdb")), "unknown time zone"),
                          (("usage", str(sample_corpus), "--since", "yesterday", "--index",
                            str(tmp_path / "i.duckdb")), "is not a date"),
                          (("sessions", str(sample_corpus), "--scheduler", "local"), "--engine dask")]:
        result = _run(*args)
        assert result.returncode != 0
        assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    (tmp_path / "empty").mkdir()
    result = _run("usage", str(tmp_path / "empty"), "--index", str(tmp_path / "e.duckdb"))
    assert result.returncode == 0 and "no session files" in result.stderr


def test_problems_lists_the_index_problems_and_the_note_points_to_it(sample_corpus: Path, tmp_path: Path) -> None:
    import shlex

    from pikit.corpus import Corpus

    index = str(tmp_path / "i.duckdb")
    plain = _run("sessions", str(sample_corpus), "--index", index)
    (note,) = [line for line in plain.stderr.splitlines() if line.startswith("pikit: note:")]
    assert "SELECT" not in note
    hint = note.split("`")[1]
    assert hint == f"pikit problems {shlex.quote(str(sample_corpus))} --index {shlex.quote(index)}"
    listed = _run(*shlex.split(hint)[1:])  # the hint, run as written
    assert listed.returncode == 0 and listed.stderr == ""
    with Corpus.open(sample_corpus, index=index) as corpus:
        table = corpus.problems
    expected = [{"path": row.path, "line": None if row.line is None or row.line != row.line else int(row.line),
                 "kind": row.kind, "message": row.message} for row in table.itertuples()]
    assert len(expected) == 2
    assert _json("problems", str(sample_corpus), "--index", index) == {"problems": expected}
    lines = listed.stdout.splitlines()
    assert lines[-1] == "2 problem(s)"
    for line, problem in zip(lines, expected, strict=False):
        assert problem["kind"] in line and f"{problem['path']}:{problem['line']}: {problem['message']}" in line
    damaged = {problem["path"] for problem in expected}
    whole = next(p for p in sorted(sample_corpus.rglob("*.jsonl")) if str(p.resolve()) not in damaged)
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / whole.name).write_bytes(whole.read_bytes())
    clean = _run("problems", str(tmp_path / "clean"), "--index", str(tmp_path / "c.duckdb"))
    assert clean.returncode == 0 and clean.stdout == "no problems\n"


@pytest.mark.slow
def test_sessions_sort_limit_and_full_ids(sample_corpus: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "i.duckdb")
    listed = _json("sessions", str(sample_corpus), "--index", index)["sessions"]
    first = listed[0]
    assert first["project"] == first["cwd"] and first["folder"].startswith("--home-dev-")
    assert first["resume"] == f"pi --session {first['path']}" and first["store"] == str(sample_corpus.parent)
    assert list(first)[:6] == ["sessionId", "path", "resume", "store", "project", "folder"]
    costly = _json("sessions", str(sample_corpus), "--index", index, "--sort", "cost", "--limit", "3")["sessions"]
    assert [s["cost"] for s in costly] == sorted((s["cost"] for s in listed), reverse=True)[:3]
    cheap = _json("sessions", str(sample_corpus), "--index", index, "--sort", "cost:asc", "--limit", "2")["sessions"]
    assert [s["cost"] for s in cheap] == sorted(s["cost"] for s in listed)[:2]
    titles = _json("sessions", str(sample_corpus), "--index", index, "--sort", "title")["sessions"]
    assert [s["title"] for s in titles] == sorted(s["title"] for s in listed)
    plain = _run("sessions", str(sample_corpus), "--index", index, "--sort", "started:asc", "--limit", "2")
    assert plain.returncode == 0 and "2 session(s)" in plain.stdout
    oldest = sorted(listed, key=lambda s: s["started"])[:2]
    for session in oldest:  # the id in full, beside the path, on the line below the title's
        assert f"{session['sessionId']} · {session['path']}" in plain.stdout
        assert session["title"] in plain.stdout
    wrong = _run("sessions", str(sample_corpus), "--index", index, "--sort", "price")
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1
    assert "--sort: no column 'price'; columns: session_id, path, resume" in wrong.stderr
    assert _run("sessions", str(sample_corpus), "--index", index, "--sort", "cost:up").returncode == 1


def test_usage_by_two_keys_on_the_command_line(sample_corpus: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "i.duckdb")
    both = _json("usage", str(sample_corpus), "--by", "day,model", "--index", index, "--timezone", "UTC")
    days = _json("usage", str(sample_corpus), "--by", "day", "--index", index, "--timezone", "UTC")
    assert all(list(row)[:2] == ["day", "model"] and list(row)[2:] == FIELDS[1:] for row in both["rows"])
    assert {k: v for k, v in both["totals"].items() if "ost" not in k} == \
        {k: v for k, v in days["totals"].items() if "ost" not in k}
    assert both["totals"]["cost"] == pytest.approx(days["totals"]["cost"])
    plain = _run("usage", str(sample_corpus), "--by", "day,model", "--index", index, "--timezone", "UTC")
    lines = plain.stdout.splitlines()
    assert lines[0].split()[:3] == ["day", "model", "input"] and lines[-1].startswith("total")
    assert len(lines) == len(both["rows"]) + 2
    wrong = _run("usage", str(sample_corpus), "--by", "day,fortnight")
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1
    assert "--by must be one of day, week, month, session, model, project" in wrong.stderr


def test_agent_dir_on_the_command_line(tmp_path: Path) -> None:
    from corpora import header, user, write

    agent = tmp_path / "agent"
    write(agent / "sessions" / "--srv--" / "2026-11-02T08-00-00-000Z_s1.jsonl", header("s1", cwd="/srv"),
          user("u1", None, "2026-11-02T08:00:01.000Z", "Deploy the service"))
    index = str(tmp_path / "i.duckdb")
    (session,) = _json("sessions", "--agent-dir", str(agent), "--index", index)["sessions"]
    assert (session["store"], session["project"], session["title"]) == (str(agent), "/srv", "Deploy the service")
    both = _run("sessions", str(agent), "--agent-dir", str(agent), "--index", index)
    assert both.returncode == 1 and both.stderr == "pikit: error: give DIR or --agent-dir, not both\n"
    missing = _run("sessions", "--agent-dir", str(tmp_path / "nowhere"), "--index", index)
    assert missing.returncode == 1 and "--agent-dir" in missing.stderr and "no sessions folder" in missing.stderr
