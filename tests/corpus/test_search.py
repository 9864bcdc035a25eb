"""Search that says where: ``Corpus.search`` and ``pikit search`` give one hit per entry and kind of text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit.corpus import Corpus
from pikit.errors import PikitError
from tests.corpus.corpora import assistant, header, user, write

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample_corpus" / "sessions"
DAY = "2026-11-02T"


def _thinking(entry_id: str, parent: str, timestamp: str, text: str, thought: str) -> dict[str, Any]:
    entry = assistant(entry_id, parent, timestamp, 100)
    entry["message"]["content"] = [{"type": "thinking", "thinking": thought}, {"type": "text", "text": text}]
    return entry


def _tool(entry_id: str, parent: str, timestamp: str, output: str) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": False,
                        "content": [{"type": "text", "text": output}], "timestamp": 1}}


def _compaction(entry_id: str, parent: str, timestamp: str, summary: str) -> dict[str, Any]:
    return {"type": "compaction", "id": entry_id, "parentId": parent, "timestamp": timestamp, "summary": summary,
            "firstKeptEntryId": "u1", "tokensBefore": 5000}


@pytest.fixture()
def corpus_dir(tmp_path: Path) -> Path:
    """One session of every kind of text, with an abandoned branch (u2b) beside the active one."""
    write(tmp_path / "s" / "a.jsonl", header("sa"),
          user("u1", None, f"{DAY}10:00:00.000Z", "Why does the Parser deadlock on nested quotes?"),
          _thinking("a1", "u1", f"{DAY}10:00:05.000Z", "Looking at the lexer.", "maybe a DEADLOCK in the lexer"),
          _tool("t1", "a1", f"{DAY}10:00:09.000Z", "error: deadlock detected in parser.py line 12"),
          user("u2b", "t1", f"{DAY}10:01:00.000Z", "try the deadlock fix elsewhere"),
          _compaction("c1", "t1", f"{DAY}10:02:00.000Z", "The parser deadlocked; the fix is in lexer.py."),
          user("u3", "c1", f"{DAY}10:03:00.000Z", "thanks"))
    return tmp_path / "s"


def test_every_kind_of_text_is_found_with_its_place(corpus_dir: Path, tmp_path: Path) -> None:
    with Corpus.open(corpus_dir, index=tmp_path / "i.duckdb", workers=1) as corpus:
        found = corpus.search("deadlock")
    assert [(h.entry_id, h.kind, h.on_active_branch) for h in found] == [
        ("u1", "user", True), ("a1", "thinking", True), ("t1", "tool", True), ("u2b", "user", False),
        ("c1", "summary", True)]
    first = found[0]
    assert first.path == str(corpus_dir / "a.jsonl") and first.session_id == "sa"
    assert first.timestamp == f"{DAY}10:00:00.000Z" and first.entry_index == 0
    for hit in found:
        assert [hit.snippet[s:e].lower() for s, e in hit.highlights] == ["deadlock"]


def test_words_kinds_regex_and_pages(corpus_dir: Path, tmp_path: Path) -> None:
    with Corpus.open(corpus_dir, index=tmp_path / "i.duckdb", workers=1) as corpus:
        assert [h.entry_id for h in corpus.search("parser DEADLOCK")] == ["u1", "t1", "c1"]  # both words, any case
        assert [h.entry_id for h in corpus.search("lexer", kinds="assistant,summary")] == ["a1", "c1"]
        assert [h.entry_id for h in corpus.search("deadlock", kinds=["user"])] == ["u1", "u2b"]
        assert [h.entry_id for h in corpus.search(r"line \d+", regex=True)] == ["t1"]
        assert [h.entry_id for h in corpus.search("DEADLOCK", regex=True)] == ["a1"]  # case-sensitive
        pages = [corpus.search("deadlock", limit=2, offset=k) for k in (0, 2, 4)]
        assert [h.entry_id for page in pages for h in page] == [h.entry_id for h in corpus.search("deadlock")]
        for kwargs in ({"kinds": "users"}, {"regex": True, "query": "a("}, {"query": "  "}, {"limit": -1}):
            with pytest.raises(PikitError):
                corpus.search(**{"query": "x", **kwargs})


def test_a_grown_file_moves_its_active_branch(corpus_dir: Path, tmp_path: Path) -> None:
    """Text appended is found after the next scan; the earlier entries' branch flags follow the new leaf."""
    index = tmp_path / "i.duckdb"
    with Corpus.open(corpus_dir, index=index, workers=1) as corpus:
        assert not corpus.search("rewrite")
    with (corpus_dir / "a.jsonl").open("a") as out:  # a new leaf under u2b: its branch becomes the active one
        out.write(json.dumps(user("u4", "u2b", f"{DAY}10:05:00.000Z", "rewrite the deadlock test")) + "\n")
    with Corpus.open(corpus_dir, index=index, workers=1) as corpus:
        assert corpus.last_scan is not None and corpus.last_scan.read_whole == 0
        found = {h.entry_id: h.on_active_branch for h in corpus.search("deadlock")}
    assert found == {"u1": True, "a1": True, "t1": True, "u2b": True, "c1": False, "u4": True}


@pytest.mark.slow
def test_the_sample_corpus_hits_are_entries_holding_the_query(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "pikit", "search", str(SAMPLE), "migration", "--json",
                          "--index", str(tmp_path / "i.duckdb"), "--limit", "5000"],
                         capture_output=True, text=True, timeout=300, check=True)
    answer = json.loads(out.stdout)
    hits = answer["hits"]
    assert hits and answer["nextOffset"] is None and answer["offset"] == 0
    sessions: dict[str, pikit.Session] = {}
    for hit in hits:
        assert set(hit) == {"path", "sessionId", "entryId", "entryIndex", "kind", "timestamp", "onActiveBranch",
                            "snippet", "highlights"}
        session = sessions.setdefault(hit["path"], pikit.load(hit["path"]))
        entry = session.entry(hit["entryId"])
        assert session.header.get("id") == hit["sessionId"] and entry.timestamp == hit["timestamp"]
        assert "migration" in json.dumps(entry.data, ensure_ascii=False).lower()
        assert (entry.id in set(session.branch_ids())) == hit["onActiveBranch"]
        assert all(hit["snippet"][s:e].lower() == "migration" for s, e in hit["highlights"])
    kinds = {h["kind"] for h in hits}
    assert {"user", "assistant", "tool"} <= kinds, kinds


def test_the_command_pages_and_says_mistakes_in_one_line(corpus_dir: Path, tmp_path: Path) -> None:
    base = [sys.executable, "-m", "pikit", "search", str(corpus_dir), "deadlock", "--index", str(tmp_path / "i.duckdb")]
    first = json.loads(subprocess.run([*base, "--json", "--limit", "3"], capture_output=True, text=True,
                                      timeout=120, check=True).stdout)
    assert [h["entryId"] for h in first["hits"]] == ["u1", "a1", "t1"] and first["nextOffset"] == 3
    plain = subprocess.run([*base, "--in", "tool"], capture_output=True, text=True, timeout=120,
                           check=True).stdout
    assert "«deadlock»" in plain and "hits 1 to 1" in plain
    wrong = subprocess.run([*base, "--in", "tools"], capture_output=True, text=True, timeout=120)
    assert wrong.returncode != 0 and wrong.stderr.strip().splitlines() == [
        "pikit: error: --in takes user, assistant, thinking, tool, summary (not tools)"]


def test_a_legacy_file_beside_its_migrated_copy_is_found_once(tmp_path: Path) -> None:
    from tests.corpus.corpora import legacy, legacy_header, pi_migrated

    objects = [legacy_header("old"), legacy(user("u1", None, f"{DAY}09:00:00.000Z", "the deadlock again"))]
    folder = tmp_path / "s" / "--home-dev-app--"
    write(folder / "2026-11-02T08-00-00-000Z_old.v1.jsonl", *objects)
    copy = write(folder / "2026-11-02T08-00-00-000Z_old.jsonl", *pi_migrated(objects))
    with Corpus.open(tmp_path / "s", index=tmp_path / "i.duckdb", workers=1) as corpus:
        assert [(h.path, h.kind) for h in corpus.search("deadlock")] == [(str(copy), "user")]
