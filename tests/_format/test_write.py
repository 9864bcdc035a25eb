"""pikit._format.write: new files and appends (never a rewrite), copies with lines, uuid7."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit import WriteError, jsjson
from pikit._format import write as write_module
from pikit._format.write import append_lines, copy_with_lines, uuid7, write_new
from tests._tree.test_fork import FORK_SOURCE


# ---------------------------------------------------------------- write_new
def test_write_new_writes_whole_lines(tmp_path: Path) -> None:
    target = tmp_path / "new.jsonl"
    assert write_new(target, [b'{"a":1}', b'{"b":"\xc3\xa9"}']) == str(target)
    assert target.read_bytes() == b'{"a":1}\n{"b":"\xc3\xa9"}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["new.jsonl"]  # no temporary file left behind


def test_write_new_refuses_existing_files_and_the_source(tmp_path: Path) -> None:
    existing = tmp_path / "exists.jsonl"
    existing.write_bytes(b"keep me\n")
    with pytest.raises(WriteError, match="already exists"):
        write_new(existing, [b"x"])
    assert existing.read_bytes() == b"keep me\n"
    write_new(existing, [b"replaced"], overwrite=True)
    assert existing.read_bytes() == b"replaced\n"
    source = tmp_path / "source.jsonl"
    source.write_bytes(b"source\n")
    for same in (source, str(source), tmp_path / "." / "source.jsonl"):
        with pytest.raises(WriteError, match="source"):
            write_new(same, [b"x"], source=str(source), overwrite=True)
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    with pytest.raises(WriteError, match="source"):
        write_new(link, [b"x"], source=str(source), overwrite=True)
    assert source.read_bytes() == b"source\n"


def test_write_new_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(WriteError, match="does not exist"):
        write_new(tmp_path / "no" / "such" / "dir.jsonl", [b"x"])


def test_write_new_failure_leaves_nothing(tmp_path: Path) -> None:
    def lines() -> Any:
        yield b"first"
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_new(tmp_path / "partial.jsonl", lines())
    assert list(tmp_path.iterdir()) == []


def test_write_new_fsyncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(write_module.os, "fsync", fsync)
    write_new(tmp_path / "f.jsonl", [b"x"])
    assert calls


# ---------------------------------------------------------------- append_lines
def test_append_lines_adds_whole_lines_and_fsyncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n')
    written: list[bytes] = []
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        written.append(path.read_bytes())  # what is on disk when fsync is called
        synced.append(fd)
        real(fd)

    monkeypatch.setattr(write_module.os, "fsync", fsync)
    append_lines(str(path), [b'{"b":2}', b'{"c":3}'])
    assert path.read_bytes() == b'{"a":1}\n{"b":2}\n{"c":3}\n'
    assert len(synced) == 1 and written == [b'{"a":1}\n{"b":2}\n{"c":3}\n']


def test_append_after_an_unterminated_last_line_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n{"trunc')
    with pytest.raises(WriteError, match="last line has no newline"):
        append_lines(str(path), [b'{"b":2}'])
    assert path.read_bytes() == b'{"a":1}\n{"trunc'  # neither glued to nor repaired


def test_append_to_an_empty_file_and_crlf(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    append_lines(str(empty), [b"x"])
    assert empty.read_bytes() == b"x\n"
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(b"a\r\n")
    append_lines(str(crlf), [b"b"])
    assert crlf.read_bytes() == b"a\r\nb\n"


def test_append_to_a_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(WriteError, match="cannot append"):
        append_lines(str(tmp_path / "missing.jsonl"), [b"x"])
    assert not (tmp_path / "missing.jsonl").exists()


def test_appended_entries_load_after_the_earlier_ones(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(FORK_SOURCE, encoding="utf-8")
    entry = {"type": "label", "id": "new1", "parentId": "u2", "timestamp": "2026-01-01T00:01:00.000Z",
             "targetId": "u2", "label": "appended"}
    append_lines(str(path), [jsjson.stringify_bytes(entry)])
    session = pikit.load(path)
    assert session.report.ok and session.leaf_id == "new1" and session.labels["u2"] == "appended"
    assert path.read_bytes().startswith(FORK_SOURCE.encode())


# ---------------------------------------------------------------- copy_with_lines
@pytest.mark.parametrize(
    ("source_bytes", "expected_head"),
    [
        (b"line1\nline2\n", b"line1\nline2\n"),
        (b"line1\r\nline2\r\n", b"line1\r\nline2\r\n"),
        (b"line1\nunterminated", b"line1\nunterminated\n"),
        (b"", b""),
        (b"\xff\xfe raw \xe2\x80\xa8 bytes\n", b"\xff\xfe raw \xe2\x80\xa8 bytes\n"),
    ],
)
def test_copy_with_lines_keeps_the_source_bytes(tmp_path: Path, source_bytes: bytes, expected_head: bytes) -> None:
    source = tmp_path / "source.jsonl"
    source.write_bytes(source_bytes)
    out = copy_with_lines(str(source), tmp_path / "copy.jsonl", [b'{"new":1}'])
    assert Path(out).read_bytes() == expected_head + b'{"new":1}\n'
    assert source.read_bytes() == source_bytes


def test_copy_with_lines_refuses_the_source_and_existing_targets(tmp_path: Path) -> None:
    source = tmp_path / "source.jsonl"
    source.write_bytes(b"a\n")
    with pytest.raises(WriteError):
        copy_with_lines(str(source), source, [b"x"], overwrite=True)
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"other\n")
    with pytest.raises(WriteError, match="already exists"):
        copy_with_lines(str(source), other, [b"x"])
    assert source.read_bytes() == b"a\n" and other.read_bytes() == b"other\n"


# ---------------------------------------------------------------- ids
def test_uuid7_is_time_ordered() -> None:
    ids = [uuid7() for _ in range(50)]
    for value in ids:
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", value)
    assert len(set(ids)) == 50
    prefixes = [value[:13] for value in ids]  # the 48-bit millisecond timestamp
    assert prefixes == sorted(prefixes)
