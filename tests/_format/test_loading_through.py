"""pikit._format.loading.read_session_through: a file read as far as its last entry of a type gives those entries
and their branches exactly as the whole file does, and reads on wherever the rest could change them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from pikit._format.loading import read_session, read_session_through
from pikit._tree.tree import path_to

ROOT = Path(__file__).resolve().parents[2]
HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


def _line(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _entry(kind: str, entry_id: Any, parent: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind, "id": entry_id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z"}
    if kind == "message":
        out["message"] = {"role": "user", "content": f"text of {entry_id}", "timestamp": 1}
    elif kind == "compaction":
        out |= {"summary": "so far", "firstKeptEntryId": parent, "tokensBefore": 10}
    return out


def _branches(parts: Any, kind: str = "compaction") -> dict[Any, list[tuple[Any, Any, Any]]]:
    """Each entry of ``kind`` (by id, the one the id resolves to) → its branch: ids, line numbers and data."""
    by_id = {e.id: e for e in parts.entries if isinstance(e.id, str | int | float)}
    return {e.id: [(x.id, x.line, x.data) for x in path_to(by_id, by_id[e.id])]
            for e in parts.entries if e.type == kind and isinstance(e.id, str | int | float)}


def _same(path: Path) -> Any:
    through, whole = read_session_through(path, "compaction"), read_session(path)
    assert through.header == whole.header
    assert _branches(through) == _branches(whole)
    return through, whole


def _files() -> list[Path]:
    found = [*(ROOT.parent / "shared" / "sessions").glob("*.jsonl"), *(ROOT / "data").rglob("*.jsonl")]
    return sorted(p for p in found if b'"compaction"' in p.read_bytes())


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_every_compaction_and_its_branch_are_read_as_the_whole_file_gives_them(path: Path) -> None:
    _same(path)


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _session(*tail: str) -> list[str]:
    return [_line(HEADER), _line(_entry("message", "a", None)), _line(_entry("compaction", "c", "a")), *tail]


def test_the_lines_after_the_last_compaction_are_not_read(tmp_path: Path) -> None:
    path = _write(tmp_path, _session(_line(_entry("message", "b", "c")), _line(_entry("message", "d", "b"))))
    through, whole = _same(path)
    assert [e.id for e in through.entries] == ["a", "c"]
    assert [e.id for e in whole.entries] == ["a", "c", "b", "d"]
    assert through.report.lines == 3


@pytest.mark.parametrize("tail", [
    _line(_entry("message", "a", "c")),  # the later entry of an id wins
    _line({**_entry("message", "b", "c"), "id": "a"}),
    '{"type":"compac\\u0074ion","id":"z","parentId":"c","summary":"s","firstKeptEntryId":"c","tokensBefore":1}',
    '{"type":"message","\\u0069d":"a","parentId":"c","message":{"role":"user","content":"x"}}',
    '{"type":"message","id":123456789012345678901234567890,"parentId":"c"}',
    '{"type":"message","id":"\u00e9","parentId":"c"}',
], ids=["duplicate-id", "duplicate-id-last-key", "escaped-type", "escaped-key", "number-id", "id-outside-ascii"])
def test_a_rest_that_could_change_them_is_read_too(tmp_path: Path, tail: str) -> None:
    """An id said again, a type or key hidden by an escape, or an id only parsing compares exactly (a number, bytes
    outside ASCII): the rest is read."""
    through, whole = _same(_write(tmp_path, _session(tail)))
    assert [(e.id, e.line) for e in through.entries] == [(e.id, e.line) for e in whole.entries]


def test_a_parent_written_after_its_child_is_read(tmp_path: Path) -> None:
    lines = [_line(HEADER), _line(_entry("compaction", "c", "late")), _line(_entry("message", "late", None))]
    through, _ = _same(_write(tmp_path, lines))
    assert [e.id for e in through.entries] == ["c", "late"]


def test_an_older_format_is_read_whole(shared_sessions: Path) -> None:
    through, whole = _same(shared_sessions / "before-compaction.v1.jsonl")
    assert len(through.entries) == len(whole.entries)


def test_a_file_without_the_type_is_read_whole(tmp_path: Path) -> None:
    through, whole = _same(_write(tmp_path, [_line(HEADER), _line(_entry("message", "a", None))]))
    assert len(through.entries) == len(whole.entries) == 1


#: Ids as a file may write them: strings, numbers, the same text in other bytes (U+FFFD written out, or bytes that
#: are not UTF-8 and read as U+FFFD), an integer wider than 64 bits, escapes (a lone surrogate, a letter).
_IDS = st.sampled_from([b'"a"', b'"b"', b'"c"', b"1", b"1.0", b"true", b"null", b'"\xef\xbf\xbd"',
                        b'"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"', b'"\xed\xa0\x80"', b'"\xff"', b'"\\ud800"',
                        b'"\\u00e9"', b'"\xc3\xa9"', b'"\\u0061"', b"18446744073709551617"])
_KINDS = st.sampled_from([b"message", b"compaction", b"label"])
_SPACE = st.sampled_from([b"", b" "])
_MORE = st.sampled_from([b"", b',"z":"\\ud800"', b',"z":123456789012345678901234567890', b',"id":"b"', b',"z":"\xff"'])


@st.composite
def _entry_line(draw: st.DrawFn) -> bytes:
    space = draw(_SPACE)
    return (b'{"type":%s"%s","id":%s%s,"parentId":%s%s' % (space, draw(_KINDS), space, draw(_IDS), space,
                                                        draw(st.one_of(st.just(b"null"), _IDS)))
            + draw(_MORE) + b"}")


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=300)
@given(st.lists(_entry_line(), max_size=8))
@example([b'{"type":"compaction","id":"a","parentId":null}', b'{"type":"message","id":"b","parentId":"a"}',
          b'{"type":"message","id":"a","parentId":"b"}'])  # (an id said again: the later entry wins)
@example([b'{"type":"compaction","id":"a","parentId":"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}',
          b'{"type":"message","id":"\xed\xa0\x80","parentId":null}'])  # (bytes read as U+FFFD: the same id)
@example([b'{"type":"compaction","id":"a","parentId":18446744073709551617,"z":"\\ud800"}',
          b'{"type":"message","id":18446744073709551617,"parentId":null,"z":"\\ud800"}'])  # (a wide parent, later)
def test_any_file_gives_its_compactions_and_branches_as_read_whole(tmp_path: Path, lines: list[bytes]) -> None:
    """Ids said again, parents after their children, cycles, escapes, bytes that are not UTF-8, numbers wider
    than 64 bits: the header, the compactions and their branches are the same."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([_line(HEADER).encode(), *lines]) + b"\n")
    _same(path)
