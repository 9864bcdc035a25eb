"""pikit._tree.fork: the lines of a fork (Pi's createBranchedSession) and migrated copies of older files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import pikit
from pikit import WriteError, jsjson
from pikit._format.write import write_new
from pikit._tree.fork import fork, fork_lines, migrated_lines

# Checked against Pi 1.5.2's createBranchedSession (in memory) while writing this file: same entries, same
# parents, compaction c1's firstKeptEntryId "l1" (a dropped label) becomes "a1", labels appended in map order.
FORK_SOURCE = """\
{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/proj"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}
{"type":"label","id":"l1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","targetId":"u1","label":"first"}
{"type":"label","id":"l2","parentId":"l1","timestamp":"2026-01-01T00:00:03.000Z","targetId":"a1","label":"ghost-target"}
{"type":"message","id":"a1","parentId":"l2","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[],"timestamp":4}}
{"type":"compaction","id":"c1","parentId":"a1","timestamp":"2026-01-01T00:00:05.000Z","summary":"s","firstKeptEntryId":"l1","tokensBefore":1}
{"type":"compaction","id":"c2","parentId":"c1","timestamp":"2026-01-01T00:00:06.000Z","summary":"s","firstKeptEntryId":"c2","tokensBefore":1}
{"type":"label","id":"l3","parentId":"c2","timestamp":"2026-01-01T00:00:07.000Z","targetId":"u1","label":""}
{"type":"label","id":"l4","parentId":"l3","timestamp":"2026-01-01T00:00:08.000Z","targetId":"u1","label":"again"}
{"type":"label","id":"l5","parentId":"l4","timestamp":"2026-01-01T00:00:09.000Z","targetId":"zz","label":"off-path"}
{"type":"message","id":"u2","parentId":"l5","timestamp":"2026-01-01T00:00:10.000Z","message":{"role":"user","content":"b","timestamp":10}}
{"type":"message","id":"x1","parentId":"u1","timestamp":"2026-01-01T00:00:11.000Z","message":{"role":"user","content":"other","timestamp":11}}
{"type":"label","id":"l6","parentId":"x1","timestamp":"2026-01-01T00:00:12.000Z","targetId":"x1","label":"other branch"}
"""


def lines_of(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


# ---------------------------------------------------------------- fork / clone
def test_fork_lines_follow_pi() -> None:
    session = pikit.loads(FORK_SOURCE)
    source = lines_of(FORK_SOURCE)
    lines = fork_lines(session, "u2", "/sessions/source.jsonl")
    header = jsjson.loads(lines[0])
    assert header["type"] == "session" and header["version"] == 3 and header["cwd"] == "/proj"
    assert header["parentSession"] == "/sessions/source.jsonl"
    assert header["id"] != "s" and re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
                                                header["id"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", header["timestamp"])
    body = [jsjson.loads(line) for line in lines[1:]]
    assert [(e["id"], e["parentId"]) for e in body[:5]] == [("u1", None), ("a1", "u1"), ("c1", "a1"), ("c2", "c1"),
                                                             ("u2", "c2")]
    assert body[2]["firstKeptEntryId"] == "a1"  # l1 was dropped: the next kept entry
    assert body[3]["firstKeptEntryId"] == "c2"  # its own id stays
    labels = body[5:]
    assert [(e["targetId"], e["label"], e["timestamp"]) for e in labels] == [
        ("a1", "ghost-target", "2026-01-01T00:00:03.000Z"),
        ("u1", "again", "2026-01-01T00:00:08.000Z"),
    ]
    assert labels[0]["parentId"] == "u2" and labels[1]["parentId"] == labels[0]["id"]
    assert all(list(e) == ["type", "id", "parentId", "timestamp", "targetId", "label"] for e in labels)
    assert len({e["id"] for e in body}) == len(body)
    # unchanged entries keep their bytes; re-chained ones keep their key order
    assert lines[1] == source[1].encode()
    assert lines[3] == source[5].replace('"firstKeptEntryId":"l1"', '"firstKeptEntryId":"a1"').encode()
    assert lines[5] == source[10].replace('"parentId":"l5"', '"parentId":"c2"').encode()


def test_fork_of_a_leaf_without_labels_or_changes_is_a_byte_copy() -> None:
    session = pikit.loads(FORK_SOURCE)
    lines = fork_lines(session, "x1")
    assert lines[1:] == [lines_of(FORK_SOURCE)[1].encode(), lines_of(FORK_SOURCE)[11].encode(),
                         jsjson.stringify_bytes({"type": "label", "id": jsjson.loads(lines[3])["id"], "parentId": "x1",
                                                 "timestamp": "2026-01-01T00:00:08.000Z", "targetId": "u1",
                                                 "label": "again"}),
                         lines[4]]
    assert jsjson.loads(lines[4])["targetId"] == "x1"
    assert "parentSession" not in jsjson.loads(lines[0])


def test_fork_unknown_leaf_raises() -> None:
    with pytest.raises(pikit.UnknownEntryError):
        fork_lines(pikit.loads(FORK_SOURCE), "nope")


def test_fork_keeps_a_forward_label_reference_like_pi() -> None:
    text = """\
{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}
{"type":"compaction","id":"c1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","summary":"s","firstKeptEntryId":"l1","tokensBefore":1}
{"type":"label","id":"l1","parentId":"c1","timestamp":"2026-01-01T00:00:03.000Z","targetId":"u1","label":"x"}
{"type":"message","id":"u2","parentId":"l1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"b","timestamp":4}}
"""
    lines = fork_lines(pikit.loads(text), "u2")
    compaction = jsjson.loads(lines[2])
    assert compaction["id"] == "c1"
    assert compaction["firstKeptEntryId"] == "l1"  # Pi (checked with node): unchanged


@pytest.mark.parametrize("name", ["tree-basic", "compaction-chain", "multi-root", "context-edits"])
def test_fork_matches_the_goldens(shared_sessions: Path, name: str) -> None:
    golden_dir = shared_sessions.parent / "conformance" / "golden"  # conftest's GOLDEN
    golden = json.loads((golden_dir / f"{name}.golden.json").read_text(encoding="utf-8"))
    session = pikit.load(shared_sessions / f"{name}.jsonl")
    assert golden["forks"]
    for leaf, want in golden["forks"].items():
        body = [jsjson.loads(line) for line in fork_lines(session, leaf)[1:]]
        assert [{"id": e["id"], "parentId": e.get("parentId")} for e in body if e["type"] != "label"] == want["entries"]
        assert [{"targetId": e["targetId"], "label": e.get("label")} for e in body if e["type"] == "label"] == \
            want["labels"]


def test_fork_writes_a_new_file_and_leaves_the_source(tmp_path: Path) -> None:
    source = tmp_path / "source.jsonl"
    source.write_text(FORK_SOURCE, encoding="utf-8")
    before = source.read_bytes()
    mtime = source.stat().st_mtime_ns
    session = pikit.load(source)
    out = fork(session, "u2", tmp_path / "fork.jsonl")
    assert out == str(tmp_path / "fork.jsonl")
    assert source.read_bytes() == before and source.stat().st_mtime_ns == mtime
    forked = pikit.load(out)
    assert forked.header["parentSession"] == str(source.resolve())
    assert forked.report.ok and forked.branch_ids()[:5] == ["u1", "a1", "c1", "c2", "u2"]
    assert forked.labels == {"a1": "ghost-target", "u1": "again"}
    with pytest.raises(WriteError, match="already exists"):
        fork(session, "u2", out)
    with pytest.raises(WriteError, match="source"):
        fork(session, "u2", source, overwrite=True)
    assert source.read_bytes() == before


# ---------------------------------------------------------------- migration
def test_migrated_lines_of_a_v1_file(shared_sessions: Path, tmp_path: Path) -> None:
    legacy = pikit.load(shared_sessions / "large-session.v1.jsonl")
    lines = migrated_lines(legacy)
    header = jsjson.loads(lines[0])
    assert header["version"] == 3 and header["id"] == legacy.id
    assert header["provider"] == "anthropic"  # unknown header fields are kept
    out = write_new(tmp_path / "migrated.jsonl", lines)
    again = pikit.load(out)
    assert again.report.ok and again.report.migrated_from is None
    assert [e.id for e in again.entries] == [e.id for e in legacy.entries]
    assert [e.parent_id for e in again.entries] == [e.parent_id for e in legacy.entries]
    assert again.context().messages == legacy.context().messages


def test_migrated_lines_of_a_current_file_keep_the_bytes(shared_sessions: Path) -> None:
    path = shared_sessions / "tree-basic.jsonl"
    lines = migrated_lines(pikit.load(path))
    original = path.read_bytes().split(b"\n")
    assert lines[1:] == [line for line in original[1:] if line]
    assert jsjson.loads(lines[0]) == json.loads(original[0])


def test_migrated_v2_hook_message() -> None:
    text = ('{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/"}\n'
            '{"type":"message","id":"h","parentId":null,"timestamp":"t","message":{"role":"hookMessage","content":"x"}}\n')
    lines = migrated_lines(pikit.loads(text))
    assert lines[1] == (b'{"type":"message","id":"h","parentId":null,"timestamp":"t",'
                        b'"message":{"role":"custom","content":"x"}}')
    assert jsjson.loads(lines[0])["version"] == 3
