"""Stores of Pi's format beyond ~/.pi: ``agent_dir=``, oh-my-pi's and OpenClaw's layouts, the ``store`` column.

The files are small excerpts made here in the shape each program writes (read from their session-writing
code): oh-my-pi opens a file with a fixed-width ``title`` line before Pi's header and adds entry types of
its own; OpenClaw writes Pi's entries with Pi's session manager, one file per session id.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from corpora import assistant, header, user, write

from pikit.corpus import Corpus
from pikit.errors import PikitError

SESSION_ID = "019a7f3e-5b1c-7000-8aa1-8cdc9285738f"
PI_NAME = f"2026-11-02T08-00-00-000Z_{SESSION_ID}.jsonl"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of its own, and none of the stores' variables set."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in ("PI_CODING_AGENT_DIR", "OMP_CODING_AGENT_DIR", "OPENCLAW_STATE_DIR"):
        monkeypatch.delenv(variable, raising=False)
    return tmp_path


def _title_slot(title: str) -> bytes:
    """oh-my-pi's first line: the title, padded to 256 bytes so that it can be rewritten in place."""
    slot = {"type": "title", "v": 1, "title": title, "source": "auto", "updatedAt": "2026-11-02T08:00:05.000Z",
            "pad": ""}
    room = 255 - len(json.dumps(slot, separators=(",", ":")).encode())
    slot["pad"] = " " * room
    line = json.dumps(slot, separators=(",", ":")).encode() + b"\n"
    assert len(line) == 256
    return line


def _omp_session(home: Path) -> Path:
    folder = home / ".omp" / "agent" / "sessions" / "--home-dev-app--"
    path = write(folder / PI_NAME,
                 {**header(SESSION_ID), "title": "Header title"},
                 user("u1", None, "2026-11-02T08:00:01.000Z", "Fix the login bug"),
                 {"type": "ttsr_injection", "id": "t1", "parentId": "u1", "timestamp": "2026-11-02T08:00:02.000Z",
                  "injectedRules": ["no-console"]},
                 assistant("a1", "t1", "2026-11-02T08:00:03.000Z", 100, 0.5),
                 {"type": "title_change", "id": "t2", "parentId": "a1", "timestamp": "2026-11-02T08:00:04.000Z",
                  "title": "Login bug", "source": "auto"},
                 {"type": "ttsr_injection", "id": "t3", "parentId": "t2", "timestamp": "2026-11-02T08:00:05.000Z",
                  "injectedRules": ["no-eval"]})
    path.write_bytes(_title_slot("Login bug") + path.read_bytes())
    return path


def _openclaw_session(home: Path, agent: str = "main") -> Path:
    session_id = "5f0c1d2e-0000-4000-8000-00000000c1a3"
    return write(home / ".openclaw" / "agents" / agent / "sessions" / f"{session_id}.jsonl",
                 header(session_id, cwd="/home/dev/.openclaw/workspace"),
                 {"type": "custom", "id": "c1", "parentId": None, "timestamp": "2026-11-03T09:00:00.000Z",
                  "customType": "model-snapshot", "data": {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}},
                 user("u1", "c1", "2026-11-03T09:00:01.000Z", "Summarise my unread mail from today please"),
                 assistant("a1", "u1", "2026-11-03T09:00:02.000Z", 200, 0.25),
                 {"type": "custom", "id": "c2", "parentId": "a1", "timestamp": "2026-11-03T09:00:03.000Z",
                  "customType": "openclaw.cache-ttl", "data": {"timestamp": 1}})


def test_omp_store_reads_the_title_line_and_reports_its_own_entry_types(home: Path) -> None:
    path = _omp_session(home)
    with Corpus.open(agent_dir="omp", index=":memory:", workers=1) as corpus:
        row = corpus.sessions.iloc[0]
        assert (row.store, row.session_id, row["name"], row.title) == ("omp", SESSION_ID, "Login bug", "Login bug")
        assert row.resume == f"omp --session {shlex.quote(str(path))}"
        assert (row.project, row.folder) == ("/home/dev/app", "--home-dev-app--")
        assert row.cost == 0.5 and row.entries == 5
        problems = corpus.problems
        unread = problems[problems.kind == "unread-type"]
        assert unread.message.tolist() == [
            '1 entry of type "title_change": not a type of Pi\'s format, kept in the tree unread',
            '2 entries of type "ttsr_injection": not a type of Pi\'s format, kept in the tree unread']
        assert set(problems.kind) == {"unread-type"}  # the title line is no damage
        # omp renames a session by rewriting its title line in place (and appending a title_change)
        data = path.read_bytes()
        path.write_bytes(_title_slot("Renamed") + data[256:] + json.dumps(
            {"type": "title_change", "id": "t4", "parentId": "t3", "timestamp": "2026-11-02T08:00:06.000Z",
             "title": "Renamed", "source": "user"}).encode() + b"\n")
        report = corpus.scan()
        assert report.read_whole == 1 and corpus.sessions["name"].tolist() == ["Renamed"]
        assert "2 entries of type \"title_change\"" in " ".join(corpus.problems.message)


def test_openclaw_store_is_every_agent_and_reads_every_entry(home: Path) -> None:
    _openclaw_session(home, "main")
    _openclaw_session(home, "work").rename(home / ".openclaw" / "agents" / "work" / "sessions" / "other.jsonl")
    with Corpus.open(agent_dir="openclaw", index=":memory:", workers=1) as corpus:
        sessions = corpus.sessions.sort_values("path")
        assert sessions.store.tolist() == ["openclaw", "openclaw"]
        # named by its id alone, the file says nothing more: the title is the first request, as Pi's list shows it
        assert sessions.title.tolist() == ["Summarise my unread mail from today please",
                                           "other — Summarise my unread mail from today please"]
        assert len(corpus.problems) == 0
        assert corpus.usage("model").cost.sum() == 0.25  # the same message in both files counts once


def test_agent_dir_path_and_default_pi_store(home: Path) -> None:
    write(home / ".pi" / "agent" / "sessions" / "--home-dev-app--" / PI_NAME, header(SESSION_ID),
          user("u1", None, "2026-11-02T08:00:01.000Z", "Hello"))
    elsewhere = home / "backup" / "agent"
    write(elsewhere / "sessions" / "--srv--" / "b.jsonl", header("b", cwd="/srv"))
    with Corpus.open(index=":memory:", workers=1) as corpus:
        assert corpus.sessions.store.tolist() == ["pi"]
    with Corpus.open(agent_dir=str(elsewhere), index=":memory:", workers=1) as corpus:
        assert corpus.sessions.store.tolist() == [str(elsewhere)]
    with Corpus.open(agent_dir=["pi", str(elsewhere)], index=":memory:", workers=1) as corpus:
        assert sorted(corpus.sessions.store) == sorted(["pi", str(elsewhere)])
    with pytest.raises(PikitError, match="give root or agent_dir, not both"):
        Corpus.open(str(home), agent_dir="pi", index=":memory:")
    with pytest.raises(PikitError, match=r"agent_dir omp: no sessions folder in .*\.omp"):
        Corpus.open(agent_dir="omp", index=":memory:")


def test_title_is_the_first_request_cut_at_a_word(tmp_path: Path) -> None:
    long = "Refactor the authentication module so that every handler validates tokens before reading the body"
    write(tmp_path / "--p--" / PI_NAME, header(SESSION_ID), user("u1", None, "2026-11-02T08:00:01.000Z", long))
    with Corpus.open(str(tmp_path), index=":memory:", workers=1) as corpus:
        title = corpus.sessions.title[0]
    assert title == "Refactor the authentication module so that every handler validates…"
    assert long.startswith(title[:-1]) and long[len(title) - 1] == " "
    import pikit

    assert pikit.load(str(tmp_path / "--p--" / PI_NAME)).title == title


def test_usage_by_several_keys_keeps_the_totals(sample_corpus: Path) -> None:
    with Corpus.open(str(sample_corpus), index=":memory:", workers=1) as corpus:
        both = corpus.usage_rows(["day", "model"], timezone="UTC")
        days = corpus.usage_rows("day", timezone="UTC")
        models = corpus.usage_rows("model", timezone="UTC")
        assert list(both[0])[:2] == ["day", "model"]
        assert len(both) > len(days) and len(both) > len(models)
        for field in ("inputTokens", "outputTokens", "totalTokens", "summarizationTokens"):
            assert sum(r[field] for r in both) == sum(r[field] for r in days) == sum(r[field] for r in models)
        for day in {r["key"] for r in days}:
            assert sum(r["cost"] for r in both if r["day"] == day) == pytest.approx(
                next(r["cost"] for r in days if r["key"] == day))
        assert [(r["day"], r["model"]) for r in both] == sorted((r["day"], r["model"]) for r in both)
        sessions = corpus.usage_rows("session,model", since="2026-11-05", timezone="UTC")
        assert sum(r["inputTokens"] for r in sessions) == sum(
            r["inputTokens"] for r in corpus.usage_rows("session", since="2026-11-05", timezone="UTC"))
        assert corpus.usage(["model", "day"]).columns[:2].tolist() == ["model", "day"]
        with pytest.raises(PikitError, match="by must be one of day, week, month"):
            corpus.usage("day,fortnight")
        with pytest.raises(PikitError, match="several different ones"):
            corpus.usage(["day", "day"])
