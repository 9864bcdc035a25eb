"""pikit._format.loading: damaged input never crashes, never loses earlier entries, never touches the file."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pikit
from pikit import DamagedLineError, LoadReport, NotASessionError, Problem, Session, SessionFileError, jsjson
from pikit._format import reading as reading_module
from pikit.cli._json import context as context_json
from pikit.compaction import prepare_compaction
from tests.timing import grows_at_most

HEADER = {"type": "session", "version": 3, "id": "sess-load", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def msg(entry_id: str, parent: str | None, text: str = "x", second: int = 1) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": f"2026-01-01T00:00:{second:02d}.000Z",
            "message": {"role": "user", "content": text, "timestamp": second}}


def chain_lines(n: int = 3) -> list[str]:
    out = [dumps(HEADER)]
    parent = None
    for i in range(n):
        out.append(dumps(msg(f"e{i}", parent, f"text {i}", i)))
        parent = f"e{i}"
    return out


def write(tmp_path: Path, data: bytes | str, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def load_unchanged(path: Path, **kwargs: Any) -> Session:
    """Load and check the file's bytes and mtime did not change."""
    before = path.read_bytes()
    stat = path.stat()
    session = pikit.load(path, **kwargs)
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == stat.st_mtime_ns
    assert path.stat().st_size == stat.st_size
    return session


# ---------------------------------------------------------------- the good case
def test_clean_file_loads_without_problems(tmp_path: Path) -> None:
    lines = chain_lines(3)
    path = write(tmp_path, "\n".join(lines) + "\n")
    s = load_unchanged(path)
    assert s.report.ok and s.report.problems == [] and s.report.summary() == ""
    assert s.report.lines == 4
    assert s.report.bytes == path.stat().st_size
    assert s.report.migrated_from is None
    assert s.path == str(path)
    assert s.header == HEADER
    assert [e.id for e in s.entries] == ["e0", "e1", "e2"]
    assert [e.line for e in s.entries] == [2, 3, 4]
    assert [e.raw for e in s.entries] == [line.encode() for line in lines[1:]]
    assert s.leaf_id == "e2"


def test_load_accepts_str_and_pathlike(tmp_path: Path) -> None:
    path = write(tmp_path, "\n".join(chain_lines(1)) + "\n")
    assert len(pikit.load(str(path))) == 1
    assert len(pikit.load(path)) == 1


# ---------------------------------------------------------------- damaged lines
def test_truncated_last_line_keeps_every_earlier_entry(tmp_path: Path) -> None:
    lines = chain_lines(3)
    data = "\n".join(lines) + "\n" + dumps(msg("e3", "e2"))[:40]  # a crash mid-write
    path = write(tmp_path, data)
    s = load_unchanged(path)  # Pi appends a newline here; pikit must not
    assert [e.id for e in s.entries] == ["e0", "e1", "e2"]
    assert s.leaf_id == "e2"
    [problem] = s.report.problems
    assert problem.kind == "damaged-line" and problem.line == 5
    assert "truncated" in problem.message
    assert s.report.damaged_lines == [problem]
    assert str(problem).startswith("line 5: ")
    assert not s.report.ok
    assert s.report.summary() == "1 damaged-line"


def test_garbage_line_in_the_middle(tmp_path: Path) -> None:
    lines = chain_lines(2)
    lines.insert(2, "this is not json {")
    s = load_unchanged(write(tmp_path, "\n".join(lines) + "\n"))
    assert [e.id for e in s.entries] == ["e0", "e1"]
    assert [(p.kind, p.line) for p in s.report.problems] == [("damaged-line", 3)]
    assert "malformed JSON" in s.report.problems[0].message


def test_invalid_utf8_that_breaks_the_json_is_reported(tmp_path: Path) -> None:
    lines = [line.encode() for line in chain_lines(2)]
    lines.insert(2, b'{"type":"message",\xff\xfe"id":"bad"}')
    s = load_unchanged(write(tmp_path, b"\n".join(lines) + b"\n"))
    assert [e.id for e in s.entries] == ["e0", "e1"]
    [problem] = s.report.problems
    assert problem.line == 3 and "UTF-8" in problem.message


def test_invalid_utf8_inside_a_string_loads_with_replacement(tmp_path: Path) -> None:
    lines = [line.encode() for line in chain_lines(1)]
    bad = dumps(msg("e1", "e0", "AB")).encode().replace(b"AB", b"A\xffB")
    lines.append(bad)
    s = load_unchanged(write(tmp_path, b"\n".join(lines) + b"\n"))
    assert s.report.ok
    assert s.by_id["e1"].data["message"]["content"] == "A\ufffdB"  # as Node's UTF-8 decoder does
    assert s.by_id["e1"].raw == bad  # the bytes are kept as they are


# node: StringDecoder("utf8") then JSON.parse → the value of "t" and its .length
@pytest.mark.parametrize(
    ("bad", "expected", "length"),
    [
        (b"\xff", "A\ufffdB", 3),
        (b"\xf0\x9f\x98", "A\ufffdB", 3),
        (b"\xed\xa0\x80", "A\ufffd\ufffd\ufffdB", 5),
        (b"\xc0\xaf", "A\ufffd\ufffdB", 4),
        (b"\xe2\x82", "A\ufffdB", 3),
        (b"\xf4\x90\x80\x80", "A\ufffd\ufffd\ufffd\ufffdB", 6),
        (b"\x80\x80", "A\ufffd\ufffdB", 4),
        (b"\xf0\x9f\x98\x80\xff\xfe", "A😀\ufffd\ufffdB", 6),
    ],
)
def test_invalid_utf8_is_replaced_as_node_does(bad: bytes, expected: str, length: int) -> None:
    head = b'{"type":"message","id":"e1","parentId":"e0","timestamp":"x","message":{"role":"user","content":"A'
    line = head + bad + b'B"}}'
    s = pikit.loads(b"\n".join([c.encode() for c in chain_lines(1)] + [line]))
    content = s.by_id["e1"].data["message"]["content"]
    assert content == expected
    assert s.context("e1").estimates[-1] == -(-length // 4)


@pytest.mark.parametrize(
    ("line", "what"),
    [("[1,2,3]", "array"), ("42", "number"), ('"text"', "string"), ("null", "null"), ("true", "boolean")],
)
def test_json_that_is_not_an_object_is_skipped(tmp_path: Path, line: str, what: str) -> None:
    lines = chain_lines(2)
    lines.insert(2, line)
    s = load_unchanged(write(tmp_path, "\n".join(lines) + "\n"))
    assert [e.id for e in s.entries] == ["e0", "e1"]
    [problem] = s.report.problems
    assert problem.kind == "damaged-line" and problem.line == 3 and what in problem.message


def test_nan_literal_is_a_damaged_line(tmp_path: Path) -> None:
    lines = chain_lines(1)
    lines.append('{"type":"custom","id":"c","parentId":"e0","timestamp":"x","data":NaN}')
    s = load_unchanged(write(tmp_path, "\n".join(lines) + "\n"))
    assert "c" not in s and [p.line for p in s.report.damaged_lines] == [3]


def test_blank_lines_are_ignored(tmp_path: Path) -> None:
    lines = chain_lines(2)
    data = "\n\n" + lines[0] + "\n   \n\t\n" + lines[1] + "\n\u00a0\u3000\n" + lines[2] + "\n\n\n"
    s = load_unchanged(write(tmp_path, data))
    assert s.report.ok
    assert [e.id for e in s.entries] == ["e0", "e1"]
    assert [e.line for e in s.entries] == [6, 8]


def test_crlf_file(tmp_path: Path) -> None:
    lines = chain_lines(3)
    path = write(tmp_path, "\r\n".join(lines) + "\r\n")
    s = load_unchanged(path)
    assert s.report.ok
    assert [e.id for e in s.entries] == ["e0", "e1", "e2"]
    assert s.branch_ids() == ["e0", "e1", "e2"]
    assert s.by_id["e1"].raw == lines[2].encode() + b"\r"  # the line's own bytes
    assert s.by_id["e1"].data["message"]["content"] == "text 1"


def test_raw_line_separators_inside_strings_do_not_split(tmp_path: Path) -> None:
    text = "before\u2028middle\u2029after\x85end"
    lines = [dumps(HEADER), dumps(msg("e0", None, text))]
    path = write(tmp_path, "\n".join(lines) + "\n")
    assert "\u2028".encode() in path.read_bytes()  # raw, not escaped
    s = load_unchanged(path)
    assert s.report.ok and s.report.lines == 2
    assert s.by_id["e0"].data["message"]["content"] == text
    assert s.context().messages[0]["content"] == text


def test_utf8_bom_is_not_a_session_like_pi(tmp_path: Path) -> None:
    # Pi's JSON.parse rejects the BOM, skips the header line and then finds no header.
    lines = chain_lines(1)
    path = write(tmp_path, "\ufeff" + "\n".join(lines) + "\n")
    before = path.read_bytes()
    with pytest.raises(NotASessionError):
        pikit.load(path)
    assert path.read_bytes() == before


def test_bom_on_a_later_line_damages_that_line_only(tmp_path: Path) -> None:
    lines = chain_lines(2)
    lines[2] = "\ufeff" + lines[2]
    s = load_unchanged(write(tmp_path, "\n".join(lines) + "\n"))
    assert [e.id for e in s.entries] == ["e0"]
    assert [p.line for p in s.report.damaged_lines] == [3]


def test_extra_header_is_reported_and_ignored(tmp_path: Path) -> None:
    lines = chain_lines(2)
    lines.insert(2, dumps({**HEADER, "id": "other"}))
    s = load_unchanged(write(tmp_path, "\n".join(lines) + "\n"))
    assert s.id == "sess-load"
    assert [e.id for e in s.entries] == ["e0", "e1"]
    assert [(p.kind, p.line) for p in s.report.problems] == [("extra-header", 3)]


def test_many_damaged_lines_are_all_reported(tmp_path: Path) -> None:
    lines = chain_lines(5)
    for index in (6, 4, 2):
        lines.insert(index, "{broken")
    s = load_unchanged(write(tmp_path, "\n".join(lines) + "\n"))
    assert len(s.entries) == 5
    assert [p.line for p in s.report.damaged_lines] == [3, 6, 9]
    assert s.report.summary() == "3 damaged-lines"


# ---------------------------------------------------------------- not a session
def test_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path, b"")
    with pytest.raises(NotASessionError, match="empty") as info:
        pikit.load(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == b""


def test_only_blank_lines_is_empty(tmp_path: Path) -> None:
    with pytest.raises(NotASessionError):
        pikit.load(write(tmp_path, "\n \n\n"))


def test_no_header(tmp_path: Path) -> None:
    path = write(tmp_path, "\n".join(chain_lines(2)[1:]) + "\n")
    before = path.read_bytes()
    with pytest.raises(NotASessionError) as info:
        pikit.load(path)
    assert str(path) in str(info.value) and "line 1" in str(info.value)
    assert info.value.path == str(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "header",
    [{"type": "session"}, {"type": "session", "id": 5}, {"type": "sessions", "id": "x"}, {"id": "x"}],
)
def test_header_needs_type_session_and_string_id(tmp_path: Path, header: dict[str, Any]) -> None:
    with pytest.raises(NotASessionError):
        pikit.load(write(tmp_path, dumps(header) + "\n" + dumps(msg("e0", None)) + "\n"))


def test_only_garbage(tmp_path: Path) -> None:
    with pytest.raises(NotASessionError, match="no parseable session header"):
        pikit.load(write(tmp_path, "garbage\nmore garbage\n"))


def test_damaged_lines_before_the_header_are_skipped(tmp_path: Path) -> None:
    lines = chain_lines(1)
    s = load_unchanged(write(tmp_path, "{oops\n" + "\n".join(lines) + "\n"))
    assert s.id == "sess-load" and len(s) == 1
    assert [p.line for p in s.report.damaged_lines] == [1]


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.jsonl"
    with pytest.raises(SessionFileError, match="no such file") as info:
        pikit.load(path)
    assert not isinstance(info.value, NotASessionError)
    assert str(path) in str(info.value)
    assert not path.exists()


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(SessionFileError, match="directory"):
        pikit.load(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path, "\n".join(chain_lines(1)))
    path.chmod(0)
    with pytest.raises(SessionFileError, match="cannot be read"):
        pikit.load(path)


# ---------------------------------------------------------------- strict mode
def test_strict_mode_raises_with_the_line_number(tmp_path: Path) -> None:
    lines = chain_lines(3)
    lines.insert(3, "{broken")
    path = write(tmp_path, "\n".join(lines) + "\n")
    before = path.read_bytes()
    with pytest.raises(DamagedLineError) as info:
        pikit.load(path, strict=True)
    assert info.value.line == 4
    assert info.value.path == str(path)
    assert f"{path}:4" in str(info.value)
    assert isinstance(info.value, SessionFileError)
    assert path.read_bytes() == before
    with pytest.raises(DamagedLineError) as info2:
        pikit.loads("\n".join(lines), strict=True)
    assert info2.value.line == 4


def test_strict_mode_on_a_clean_file(tmp_path: Path) -> None:
    path = write(tmp_path, "\n".join(chain_lines(2)) + "\n")
    assert len(pikit.load(path, strict=True)) == 2


# ---------------------------------------------------------------- tree problems
def test_duplicate_ids_later_wins_and_is_reported(tmp_path: Path) -> None:
    lines = chain_lines(2)
    lines.append(dumps(msg("e0", "e1", "the later e0", 9)))
    s = load_unchanged(write(tmp_path, "\n".join(lines) + "\n"))
    assert len(s.entries) == 3
    assert s.by_id["e0"].data["message"]["content"] == "the later e0"
    [problem] = s.report.of_kind("duplicate-id")
    assert problem.line == 4 and problem.entry_id == "e0"


def test_orphans_are_reported_and_become_roots(tmp_path: Path) -> None:
    lines = chain_lines(2)
    lines.append(dumps(msg("o1", "missing-parent")))
    lines.append(dumps(msg("o2", "o1")))
    s = load_unchanged(write(tmp_path, "\n".join(lines) + "\n"))
    assert s.roots == ["e0", "o1"]
    [problem] = s.report.of_kind("orphan")
    assert problem.entry_id == "o1" and problem.line == 4 and "missing-parent" in problem.message
    assert s.branch_ids("o2") == ["o1", "o2"]


@pytest.mark.timeout(60)  # (a hang guard)
def test_parent_cycle_is_reported_and_never_hangs(tmp_path: Path) -> None:
    lines = chain_lines(1)
    lines += [dumps(msg("a", "c")), dumps(msg("b", "a")), dumps(msg("c", "b")), dumps(msg("d", "c"))]
    s = load_unchanged(write(tmp_path, "\n".join(lines) + "\n"))
    [problem] = s.report.of_kind("cycle")
    assert "cycle" in problem.message
    assert s.roots == ["e0"]
    path = s.branch_ids("d")
    assert path[-1] == "d" and len(path) == len(set(path)) == 4
    ctx = s.context("d")  # projection and sizes terminate too
    assert len(ctx.messages) == 4
    assert s.tree()["roots"] == ["e0"]
    assert len(s.flatten("d")) >= 1


@pytest.mark.timeout(60)  # (a hang guard)
def test_self_parent_is_a_root_not_a_cycle(tmp_path: Path) -> None:
    lines = [*chain_lines(1), dumps(msg("s", "s")), dumps(msg("t", "s"))]
    s = load_unchanged(write(tmp_path, "\n".join(lines) + "\n"))
    assert s.roots == ["e0", "s"]
    assert s.report.of_kind("cycle") == []
    assert s.branch_ids("t") == ["s", "t"]


def test_entries_without_ids_are_reported(tmp_path: Path) -> None:
    lines = [*chain_lines(1), '{"type":"custom","parentId":"e0","timestamp":"x"}']
    s = load_unchanged(write(tmp_path, "\n".join(lines) + "\n"))
    assert len(s.entries) == 2  # kept in file order
    assert [p.kind for p in s.report.problems] == ["bad-id"]


def test_unknown_entry_types_load_and_round_trip(tmp_path: Path) -> None:
    odd = ('{"type":"future_thing","id":"f1","parentId":"e0","timestamp":"2026-01-01T00:00:05.000Z",'
           '"x":[1.0,{"b":1,"a":2}]}')
    lines = [*chain_lines(1), odd]
    s = load_unchanged(write(tmp_path, "\n".join(lines) + "\n"))
    assert s.report.ok
    assert s.by_id["f1"].type == "future_thing"
    assert s.by_id["f1"].raw == odd.encode()
    assert s.context("f1").messages == [s.by_id["e0"].message]


# ---------------------------------------------------------------- large inputs
def _chain(tmp_path: Path, n: int) -> Path:
    lines = [dumps(HEADER)]
    parent = None
    for i in range(n):
        entry_id = f"n{i:05d}"
        if i % 2 == 0:
            lines.append(dumps(msg(entry_id, parent, f"question {i}", i % 60)))
        else:
            lines.append(dumps({"type": "message", "id": entry_id, "parentId": parent,
                                "timestamp": "2026-01-01T00:00:00.000Z",
                                "message": {"role": "assistant", "content": [{"type": "text", "text": "answer"}],
                                            "stopReason": "stop", "timestamp": i}}))
        parent = entry_id
    folder = tmp_path / str(n)
    folder.mkdir()
    return write(folder, "\n".join(lines) + "\n")


def _walk(path: Path) -> tuple[Session, list[str], Any, Any]:
    s = load_unchanged(path)
    return s, s.branch_ids(), s.context(), s.tree()


@pytest.mark.timeout(120)
@pytest.mark.slow
def test_30000_entry_chain(tmp_path: Path) -> None:
    path = _chain(tmp_path, 30_000)
    s, path_ids, ctx, tree = _walk(path)
    assert len(s) == 30_000 and s.report.ok
    assert len(path_ids) == 30_000 and path_ids[0] == "n00000" and path_ids[-1] == "n29999"
    assert len(ctx.messages) == 30_000 and ctx.tokens > 0
    assert tree["roots"] == ["n00000"] and len(tree["children"]) == 29_999
    assert s.common_ancestor("n29999", "n00005") == "n00005"
    # linear: ten times the chain costs at most about ten times the CPU time (no walk per entry)
    tenth = _chain(tmp_path, 3_000)
    assert grows_at_most(lambda: _walk(tenth), lambda: _walk(path), 30)


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000])
def test_chunk_boundaries_do_not_matter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    lines = [dumps(HEADER), dumps(msg("e0", None, "é中😀\u2028 text")), "{bad", dumps(msg("e1", "e0", "z"))]
    data = "\r\n".join(lines) + "\n\n"
    path = write(tmp_path, data)
    expected = pikit.loads(data)
    monkeypatch.setattr(reading_module, "CHUNK_SIZE", chunk)
    calls: list[tuple[int, int]] = []
    s = pikit.load(path, progress=lambda done, total: calls.append((done, total)))
    assert [e.raw for e in s.entries] == [e.raw for e in expected.entries]
    assert [e.line for e in s.entries] == [e.line for e in expected.entries]
    assert s.report.problems == expected.report.problems
    assert s.by_id["e0"].data["message"]["content"] == "é中😀\u2028 text"
    size = len(data.encode())
    assert calls and calls[-1] == (size, size)
    assert all(a <= b for (a, _), (b, _) in itertools.pairwise(calls))


def test_large_file_mode_keeps_lines_lazily(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = "x" * 5000
    lines = [dumps(HEADER), dumps(msg("e0", None, "short")), dumps(msg("e1", "e0", big))]
    path = write(tmp_path, "\n".join(lines) + "\n")
    monkeypatch.setattr(reading_module, "KEEP_ALL_BELOW", 0)
    s = pikit.load(path)
    assert not s.by_id["e0"].is_parsed and not s.by_id["e1"].is_parsed  # only their index is held
    assert s.by_id["e1"].role == "user" and s.by_id["e1"].parent_id == "e0"
    assert s.context().messages[1]["content"] == big  # parsed again on demand
    assert s.by_id["e1"].raw == lines[2].encode()


# ---------------------------------------------------------------- loads()
def test_loads_from_str_bytes_and_lines() -> None:
    lines = chain_lines(3)
    text = "\n".join(lines) + "\n"
    reference = [e.raw for e in pikit.loads(text).entries]
    assert [e.raw for e in pikit.loads(text.encode()).entries] == reference
    assert [e.raw for e in pikit.loads("\n".join(lines)).entries] == reference  # no final newline
    assert [e.raw for e in pikit.loads(lines).entries] == reference
    assert [e.raw for e in pikit.loads([line + "\n" for line in lines]).entries] == reference
    assert [e.raw for e in pikit.loads(iter(line.encode() for line in lines)).entries] == reference
    with_lines = pikit.loads(lines)
    assert [e.line for e in with_lines.entries] == [2, 3, 4]
    assert with_lines.path is None and with_lines.report.source == "<string>"
    assert pikit.loads(text, source="mine").report.source == "mine"


def test_loads_of_a_str_keeps_lone_surrogates() -> None:
    lone = '{"type":"message","id":"e1","parentId":"e0","timestamp":"x","message":{"role":"user","content":"\\ud800"}}'
    lines = [*chain_lines(1), lone]
    s = pikit.loads("\n".join(lines))
    assert s.by_id["e1"].data["message"]["content"] == "\ud800"


def test_loads_empty_raises() -> None:
    with pytest.raises(NotASessionError):
        pikit.loads("")
    with pytest.raises(NotASessionError):
        pikit.loads([])


def test_report_types_are_exported() -> None:
    report = LoadReport("x", found=[Problem("orphan", "m", entry_id="a"), Problem("orphan", "n")])
    assert report.of_kind("orphan")[1].message == "n"
    assert report.summary() == "2 orphans"
    assert str(Problem("k", "message")) == "message"


# ---------------------------------------------------------------- migration in memory
def _shape(session: Session) -> list[list[Any]]:
    position = {e.id: i for i, e in enumerate(session.entries)}
    rows: list[list[Any]] = []
    for e in session.entries:
        row = [e.type, position.get(e.parent_id), e.role]
        if e.type == "compaction":
            row.append(position.get(e.get("firstKeptEntryId")))
        rows.append(row)
    return rows


@pytest.mark.parametrize("name", ["large-session", "before-compaction"])
def test_v1_migration_matches_pis_own_migration(shared_sessions: Path, name: str) -> None:
    legacy_path = shared_sessions / f"{name}.v1.jsonl"
    before = legacy_path.read_bytes()
    legacy = pikit.load(legacy_path)
    assert legacy_path.read_bytes() == before  # migration is in memory only
    migrated_by_pi = pikit.load(shared_sessions / f"{name}.jsonl")
    assert legacy.report.migrated_from == 1
    assert migrated_by_pi.report.migrated_from is None
    assert legacy.header["version"] == 3 and legacy.version == 3
    assert _shape(legacy) == _shape(migrated_by_pi)
    ids = [e.id for e in legacy.entries]
    assert len(set(ids)) == len(ids) and all(isinstance(i, str) and len(i) == 8 for i in ids)
    assert legacy.entries[0].parent_id is None
    assert all("firstKeptEntryIndex" not in e.data for e in legacy.entries)
    # unknown header fields of old files are kept
    for key in ("provider", "modelId", "thinkingLevel"):
        assert legacy.header[key] == migrated_by_pi.header.get(key, legacy.header[key])
    # same projection, id for id
    mapping = dict(zip(ids, [e.id for e in migrated_by_pi.entries], strict=True))
    ctx_legacy = legacy.context()
    ctx_pi = migrated_by_pi.context()
    assert ctx_legacy.messages == ctx_pi.messages
    assert [mapping[i] for i in ctx_legacy.sources] == ctx_pi.sources
    assert ctx_legacy.tokens == ctx_pi.tokens


def test_before_compaction_migration_sets_first_kept_entry_id(shared_sessions: Path) -> None:
    legacy = pikit.load(shared_sessions / "before-compaction.v1.jsonl")
    compactions = [e for e in legacy.entries if e.type == "compaction"]
    assert len(compactions) == 2
    position = {e.id: i for i, e in enumerate(legacy.entries)}
    # firstKeptEntryIndex 293 and 551 count the header as 0
    assert [position[c["firstKeptEntryId"]] for c in compactions] == [292, 550]


def test_v2_hook_message_becomes_custom() -> None:
    header = {**HEADER, "version": 2}
    hook: dict[str, Any] = {"type": "message", "id": "h1", "parentId": "e0", "timestamp": "2026-01-01T00:00:02.000Z",
            "message": {"role": "hookMessage", "customType": "hook", "content": "from a hook", "display": True,
                        "timestamp": 2}}
    plain = msg("e0", None, "hello")
    lines = [dumps(header), json.dumps(plain), dumps(hook)]
    s = pikit.loads("\n".join(lines) + "\n")
    assert s.report.migrated_from == 2
    assert s.header["version"] == 3
    assert s.by_id["h1"].role == "custom"
    assert s.by_id["h1"].data["message"]["role"] == "custom"
    assert s.by_id["h1"].raw == dumps({**hook, "message": {**hook["message"], "role": "custom"}}).encode()
    assert s.by_id["e0"].raw == json.dumps(plain).encode()  # unchanged entries keep their bytes
    assert [e.id for e in s.entries] == ["e0", "h1"]  # v2 ids are kept
    assert s.context().messages[1]["role"] == "custom"


def test_v1_compaction_with_bad_index() -> None:
    header = {k: v for k, v in HEADER.items() if k != "version"}
    entries = [
        {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "a", "timestamp": 1}},
        {"type": "compaction", "timestamp": "t", "summary": "s", "firstKeptEntryIndex": 99, "tokensBefore": 1},
        {"type": "compaction", "timestamp": "t", "summary": "s", "firstKeptEntryIndex": 1, "tokensBefore": 1},
    ]
    s = pikit.loads("\n".join(dumps(x) for x in [header, *entries]))
    first, bad, good = s.entries
    assert "firstKeptEntryIndex" not in bad.data and "firstKeptEntryId" not in bad.data
    assert good["firstKeptEntryId"] == first.id
    assert bad.parent_id == first.id and good.parent_id == bad.id


# ---------------------------------------------------------------- fuzzing
_FUZZ_BASE = [
    HEADER,
    {"type": "model_change", "id": "m0", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
     "provider": "p", "modelId": "m"},
    msg("u1", "m0", "read the file", 2),
    {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-01-01T00:00:03.000Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"},
                                                  {"type": "toolCall", "id": "t", "name": "read",
                                                   "arguments": {"path": "a.txt"}}],
                 "stopReason": "toolUse", "usage": {"input": 10, "output": 5, "totalTokens": 15}, "timestamp": 3}},
    {"type": "message", "id": "r1", "parentId": "a1", "timestamp": "2026-01-01T00:00:04.000Z",
     "message": {"role": "toolResult", "toolCallId": "t", "toolName": "read",
                 "content": [{"type": "text", "text": "body é😀"}], "isError": False, "timestamp": 4}},
    {"type": "compaction", "id": "c1", "parentId": "r1", "timestamp": "2026-01-01T00:00:05.000Z",
     "summary": "sum", "firstKeptEntryId": "a1", "tokensBefore": 20},
    {"type": "label", "id": "l1", "parentId": "c1", "timestamp": "2026-01-01T00:00:06.000Z", "targetId": "u1",
     "label": "start"},
    {"type": "context_edit", "id": "x1", "parentId": "l1", "timestamp": "2026-01-01T00:00:07.000Z",
     "targetId": "r1", "replacement": {"content": "short"}},
    msg("u2", "x1", "next", 8),
    {"type": "branch_summary", "id": "b1", "parentId": "u1", "timestamp": "2026-01-01T00:00:09.000Z",
     "fromId": "u2", "summary": "left"},
]
_FUZZ_BYTES = b"\n".join(dumps(x).encode() for x in _FUZZ_BASE) + b"\n"


@st.composite
def _damaged(draw: Any) -> bytes:
    data = bytearray(_FUZZ_BYTES)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["truncate", "insert", "delete", "flip", "dup", "swap", "crlf"]))
        lines = bytes(data).split(b"\n")
        if op == "truncate":
            del data[draw(st.integers(0, len(data))):]
        elif op == "insert":
            pos = draw(st.integers(0, len(data)))
            data[pos:pos] = draw(st.sampled_from([b"\n", b"\xff", b"{", b'"', b"\xe2\x80\xa8", b"\r\n", b"]", b"0",
                                                  b"null\n", b"[1]\n", b'{"type":"session","id":"z"}\n']))
        elif op == "delete":
            pos = draw(st.integers(0, max(0, len(data) - 1)))
            del data[pos:pos + draw(st.integers(1, 8))]
        elif op == "flip" and data:
            pos = draw(st.integers(0, len(data) - 1))
            data[pos] = draw(st.integers(0, 255))
        elif op == "dup" and len(lines) > 1:
            i = draw(st.integers(0, len(lines) - 1))
            lines.insert(i, lines[i])
            data = bytearray(b"\n".join(lines))
        elif op == "swap" and len(lines) > 1:
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            data = bytearray(b"\n".join(lines))
        elif op == "crlf":
            data = bytearray(bytes(data).replace(b"\n", b"\r\n"))
    return bytes(data)


@pytest.mark.timeout(120)
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_damaged())
def test_fuzzed_files_never_crash(data: bytes) -> None:
    try:
        session = pikit.loads(data)
    except NotASessionError:
        return
    for problem in session.report.problems:
        assert problem.kind in {"damaged-line", "duplicate-id", "orphan", "cycle", "extra-header", "bad-id"}
    try:
        strict = pikit.loads(data, strict=True)
    except DamagedLineError as exc:
        assert exc.line in [p.line for p in session.report.damaged_lines]
    else:
        assert not session.report.damaged_lines
        assert [e.raw for e in strict.entries] == [e.raw for e in session.entries]  # v1 ids are stable too
    session.tree()
    session.flatten()
    for entry_id in list(session.by_id)[:12]:
        path = session.branch(entry_id)
        assert path[-1].id == entry_id
        ctx = session.context(entry_id)
        assert len(ctx.messages) == len(ctx.sources) == len(ctx.estimates)
        assert ctx.tokens >= 0
        context_json.projection(ctx)
        prepare_compaction(path, 5)


def test_from_entries_rebuilds_the_same_session(shared_sessions: Path) -> None:
    loaded = pikit.load(shared_sessions / "tree-basic.jsonl")
    again = Session.from_entries(loaded.entries, header=loaded.header)
    assert again.tree() == loaded.tree()
    assert again.labels == loaded.labels and again.name == loaded.name
    assert context_json.projection(again.context()) == context_json.projection(loaded.context())
    assert [e.raw for e in again.entries] == [e.raw for e in loaded.entries]
    from_dicts = Session.from_entries([e.data for e in loaded.entries], header=loaded.header)
    assert context_json.projection(from_dicts.context()) == context_json.projection(loaded.context())
    assert [e.raw for e in from_dicts.entries] == [jsjson.stringify_bytes(e.data) for e in loaded.entries]


def test_v1_ids_are_derived_from_position_and_content() -> None:
    line = '{"type":"message","timestamp":"t","message":{"role":"user","content":"same","timestamp":1}}'
    text = '{"type":"session","id":"s","timestamp":"t","cwd":"/w"}\n' + "\n".join([line] * 50) + "\n"
    first, second = pikit.loads(text), pikit.loads(text)
    ids = [e.id for e in first.entries]
    assert ids == [e.id for e in second.entries] and len(set(ids)) == 50  # identical lines, distinct ids
    assert all(isinstance(i, str) and len(i) == 8 and int(i, 16) >= 0 for i in ids)
    assert [e.parent_id for e in first.entries] == [None, *ids[:-1]]
    # Editing one line changes that entry's id only.
    changed = pikit.loads(text.replace('"same"', '"other"', 1))
    assert [e.id for e in changed.entries][1:] == ids[1:] and changed.entries[0].id != ids[0]


def _omp_title_slot(title: str) -> bytes:
    """oh-my-pi's first line: a ``title`` object padded to 256 bytes, rewritten in place when the title changes."""
    slot = {"type": "title", "v": 1, "title": title, "source": "auto", "pad": ""}
    slot["pad"] = " " * (255 - len(json.dumps(slot, separators=(",", ":")).encode()))
    return json.dumps(slot, separators=(",", ":")).encode() + b"\n"


def test_an_oh_my_pi_file_loads_with_its_title_line_as_the_name(tmp_path: Path) -> None:
    from entries import asst, user

    head = {"type": "session", "version": 3, "id": "s-omp", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    lines = [user("u1", None, 1, "Fix the login bug"),
             {"type": "ttsr_injection", "id": "t1", "parentId": "u1", "timestamp": "2026-01-01T00:00:02.000Z",
              "injectedRules": ["no-console"]},
             asst("a1", "t1", 3, [{"type": "text", "text": "Fixed."}])]
    path = tmp_path / "2026-01-01T00-00-00-000Z_s-omp.jsonl"
    rest = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    body = json.dumps(head).encode() + b"\n" + rest
    path.write_bytes(_omp_title_slot("Login bug") + body)
    session = pikit.load(path)
    assert session.title == "Login bug" and session.report.title == "Login bug"
    assert [e.id for e in session.entries] == ["u1", "t1", "a1"] and session.leaf_id == "a1"
    assert [e.line for e in session.entries] == [3, 4, 5] and not session.report.problems
    assert [m["role"] for m in session.context().messages] == ["user", "assistant"]
    # The title changes in place (same size): refreshing notices and reads the file again.
    path.write_bytes(_omp_title_slot("Login bug, fixed") + body)
    session.refresh()
    assert session.title == "Login bug, fixed"
    # Without the slot, the header's title names it; a title line anywhere but first is no header.
    path.write_bytes(json.dumps({**head, "title": "From the header"}).encode() + b"\n" + rest)
    plain = pikit.load(path)
    assert plain.title == "From the header" and not plain.report.problems
    path.write_bytes(b"\n" + _omp_title_slot("late") + body)
    with pytest.raises(NotASessionError, match="line 2 is not a session header"):
        pikit.load(path)
