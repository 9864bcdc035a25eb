"""pikit._format.tail: complete appended lines only, the position to read on from, rewrites noticed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from pikit import FileMark, SessionFileError, read_appended
from pikit._format.tail import DIGEST_BYTES


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def test_reads_complete_lines_and_leaves_a_partial_one(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n{"c":')
    got = read_appended(path)
    assert got.lines == [b'{"a":1}', b'{"b":2}']
    assert (got.mark.offset, got.mark.line, got.first_line, got.pending) == (16, 2, 1, 5)
    assert got.rewritten is None and not got.more

    again = read_appended(path, got.mark)  # nothing new: the partial line still waits
    assert again.lines == [] and again.mark.offset == 16 and again.pending == 5

    append(path, b'3}\n{"d":4}\n')
    rest = read_appended(path, again.mark)
    assert rest.lines == [b'{"c":3}', b'{"d":4}']
    assert (rest.first_line, rest.mark.line, rest.mark.offset, rest.pending) == (3, 4, path.stat().st_size, 0)


def test_a_line_written_byte_by_byte_comes_out_once_and_whole(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"")
    mark = FileMark()
    seen: list[bytes] = []
    for byte in b'{"x":"\xc3\xa9t\xc3\xa9"}\n':
        append(path, bytes([byte]))
        got = read_appended(path, mark)
        seen += got.lines
        mark = got.mark
    assert seen == [b'{"x":"\xc3\xa9t\xc3\xa9"}']


def test_plain_offsets_count_lines_from_there(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"one\ntwo\nthree\n")
    got = read_appended(path, 4)
    assert got.lines == [b"two", b"three"] and got.mark.line == 2 and got.mark.offset == 14
    with pytest.raises(ValueError, match="negative"):
        read_appended(path, -1)


def test_crlf_and_blank_lines_are_passed_through(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"a\r\n\nb\n")
    assert read_appended(path).lines == [b"a\r", b"", b"b"]


def test_byte_budget_splits_a_read_at_line_ends(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    lines = [b"x" * n for n in (10, 300, 5, 40, 1)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    mark = FileMark()
    out: list[bytes] = []
    reads = 0
    while True:
        got = read_appended(path, mark, max_bytes=32)
        out += got.lines
        mark = got.mark
        reads += 1
        if not got.more:
            break
    assert out == lines and reads > 2 and mark.line == len(lines)


def test_a_line_longer_than_the_budget_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"y" * 100_000 + b"\nz")
    got = read_appended(path, max_bytes=10)
    assert got.lines == [b"y" * 100_000] and got.pending == 1 and not got.more


def test_a_shrunk_file_is_reported_and_nothing_is_read(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"one\ntwo\n")
    mark = read_appended(path).mark
    path.write_bytes(b"one\n")
    got = read_appended(path, mark)
    assert got.lines == [] and got.rewritten is not None and "shrank" in got.rewritten
    assert got.mark == FileMark()
    assert read_appended(path, 100).rewritten is not None


def test_a_rewrite_that_grows_the_file_is_noticed(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    head = b"h" * DIGEST_BYTES + b"\n"
    path.write_bytes(head + b"old line\n")
    mark = read_appended(path).mark
    with open(path, "r+b") as handle:  # same inode, same head, a different line before the mark, then more
        handle.write(head + b"new line\nand more\n")
    got = read_appended(path, mark)
    assert got.rewritten == "the file changed before the last read position"


def test_a_changed_head_is_noticed_on_large_files(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    body = b"".join(b"line %d\n" % i for i in range(2000))
    path.write_bytes(b'{"version":2}\n' + body)
    mark = read_appended(path).mark
    assert mark.offset > 2 * DIGEST_BYTES
    path.write_bytes(b'{"version":3}\n' + body + b"next\n")  # migrated in place, then appended to
    assert read_appended(path, mark).rewritten == "the start of the file changed"


def test_a_replaced_file_is_noticed(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"a\n")
    mark = read_appended(path).mark
    other = tmp_path / "g.jsonl"
    other.write_bytes(b"a\nb\n")
    os.replace(other, path)  # a rotation: the same name, another file
    got = read_appended(path, mark)
    assert got.rewritten is not None and "inode" in got.rewritten


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    with pytest.raises(SessionFileError, match="no such file"):
        read_appended(tmp_path / "missing.jsonl")
    with pytest.raises(SessionFileError, match="directory"):
        read_appended(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(SessionFileError, match="not a regular file"):
        read_appended(fifo)


def test_an_unchanged_file_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"a\nb\npart")
    mark = read_appended(path).mark
    import pikit._format.tail as tail

    def fail(*args: object) -> bytes:
        raise AssertionError("read an unchanged file")

    monkeypatch.setattr(tail, "_read_at", fail)
    monkeypatch.setattr(tail._Scan, "run", fail)
    assert read_appended(path, mark).lines == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=12),
       st.lists(st.integers(min_value=1, max_value=25), min_size=1, max_size=30))
def test_any_split_of_appends_yields_the_lines_once(tmp_path_factory: pytest.TempPathFactory, lines: list[bytes],
                                                    cuts: list[int]) -> None:
    path = tmp_path_factory.mktemp("tail") / "f.jsonl"
    data = b"".join(line + b"\n" for line in lines)
    path.write_bytes(b"")
    mark = FileMark()
    out: list[bytes] = []
    position = 0
    step = 0
    while position < len(data):
        size = cuts[step % len(cuts)]
        step += 1
        append(path, data[position:position + size])
        position += size
        got = read_appended(path, mark, max_bytes=17)
        assert got.rewritten is None
        out += got.lines
        mark = got.mark
        while got.more:
            got = read_appended(path, mark, max_bytes=17)
            out += got.lines
            mark = got.mark
    assert out == lines and mark.line == len(lines) and mark.offset == len(data)


def drain(path: Path, mark: FileMark) -> tuple[list[bytes], dict[int, int], FileMark]:
    got = read_appended(path, mark, max_bytes=64, max_line=100)
    out, too_long = list(got.lines), dict(got.too_long)
    while got.more:
        got = read_appended(path, got.mark, max_bytes=64, max_line=100)
        out += got.lines
        too_long.update(got.too_long)
    return out, too_long, got.mark


def test_over_long_lines_are_read_past_in_bounded_pieces(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"ok\n" + b"L" * 300)  # an over-long line, still being written
    lines, too_long, mark = drain(path, FileMark())
    assert lines == [b"ok"] and mark.skipping == 300 and mark.offset == 303 and not too_long
    append(path, b"L" * 50)
    lines, too_long, mark = drain(path, mark)
    assert lines == [] and mark.skipping == 350
    append(path, b"L\nnext\n" + b"M" * 120 + b"\nlast\n")
    lines, too_long, mark = drain(path, mark)
    assert lines == [b"", b"next", b"", b"last"] and too_long == {2: 351, 4: 120}
    assert mark.line == 5 and mark.skipping == 0 and mark.offset == path.stat().st_size
