"""Session.refresh: appended lines join the session exactly as a fresh load would read them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pikit
from pikit import DamagedLineError, PikitError, Session
from pikit._format import reading
from tests.conftest import SESSIONS
from tests.entries import asst, usage, user

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "sample_sessions"
HEADER = {"type": "session", "version": 3, "id": "s-refresh", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


def line(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def chain(n: int, start: int = 0, parent: str | None = None) -> list[dict[str, Any]]:
    out = []
    for i in range(start, start + n):
        entry = user(f"u{i}", parent, i, f"prompt {i}") if i % 2 == 0 else \
            asst(f"u{i}", parent, i, [{"type": "text", "text": f"answer {i}"}], usage(100 * i, 10))
        out.append(entry)
        parent = f"u{i}"
    return out


def snapshot(session: Session) -> dict[str, Any]:
    """Everything a refresh must keep equal to a fresh load of the same bytes."""
    ancestry = session.ancestry
    ctx = session.context()
    return {
        "entries": [(e.raw, e.line, e.id) for e in session.entries],
        "ids": list(session.by_id),
        "labels": dict(session.labels),
        "tree": session.tree(),
        "rows": [(r.id, r.indent, r.on_active_path) for r in session.flatten()],
        "ancestry": None if ancestry is None else (
            ancestry.depth, {k: v and v.id for k, v in ancestry.compaction.items()},
            {k: v and v.id for k, v in ancestry.model.items()}),
        "leaf": session.leaf_id,
        "context": (ctx.sources, ctx.tokens),
        "problems": sorted((p.kind, p.line or 0, p.message) for p in session.report.problems),
    }


def test_appended_entries_join_the_session(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + b"".join(map(line, chain(4))))
    session = pikit.load(path)
    session.context()
    session.context()  # the ancestry index is built: the refresh extends it
    children = session.children("u0")
    assert children == ["u1"]
    append(path, b"".join(map(line, chain(3, 4, "u3"))))
    result = session.refresh()
    assert [e.id for e in result.added] == ["u4", "u5", "u6"]
    assert [e.line for e in result.added] == [6, 7, 8]
    assert result.leaf_moved and session.leaf_id == "u6" and not result.problems and result.pending == 0
    assert session.children("u3") == ["u4"]
    assert snapshot(session) == snapshot(pikit.load(path))
    assert session.report.bytes == path.stat().st_size and session.report.lines == 8
    nothing = session.refresh()
    assert not nothing.changed and not nothing.leaf_moved


def test_a_line_in_two_halves_is_one_entry_and_no_damage(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + line(chain(1)[0]))
    session = pikit.load(path)
    whole = line(asst("a1", "u0", 5, [{"type": "text", "text": "é" * 50}], usage(10, 2)))
    cut = len(whole) // 2 + 1  # inside a two-byte character
    append(path, whole[:cut])
    first = session.refresh()
    assert not first.added and not first.problems and first.pending == cut
    assert session.report.problems == [] and session.leaf_id == "u0"
    second = session.refresh()
    assert not second.changed and second.pending == cut  # nothing new: not even read again
    append(path, whole[cut:])
    third = session.refresh()
    assert [e.id for e in third.added] == ["a1"] and not third.problems and third.pending == 0
    assert session.report.problems == []


def test_following_starts_with_an_unfinished_last_line_waiting(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    whole = line(chain(1)[0])
    path.write_bytes(line(HEADER) + whole[:10])
    session = pikit.load(path, wait_for_last_line=True)
    assert len(session) == 0 and session.report.problems == [] and session.report.lines == 1
    append(path, whole[10:])
    assert [e.id for e in session.refresh().added] == ["u0"]
    assert session.report.problems == [] and session.entries[0].line == 2


def test_an_unfinished_line_read_by_a_plain_load(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    entries = chain(3)
    path.write_bytes(line(HEADER) + line(entries[0]) + line(entries[1])[:-1])  # complete JSON, no newline yet
    session = pikit.load(path)
    assert [e.id for e in session.entries] == ["u0", "u1"]
    append(path, b"\n" + line(entries[2]))
    result = session.refresh()  # the finished line was read already: only u2 is new
    assert [e.id for e in result.added] == ["u2"] and result.reloaded is None
    assert snapshot(session) == snapshot(pikit.load(path))

    path.write_bytes(line(HEADER) + line(entries[0]) + line(entries[1])[:20])  # torn when loaded: damaged
    torn = pikit.load(path)
    assert torn.report.damaged_lines
    append(path, line(entries[1])[20:])
    result = torn.refresh()
    assert result.reloaded is not None and "still being written" in result.reloaded
    assert torn.report.problems == [] and [e.id for e in torn.entries] == ["u0", "u1"]


def test_damaged_appended_lines_are_reported_with_their_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + b"".join(map(line, chain(2))))
    session = pikit.load(path)
    append(path, b'{"type":"message","id":"bad"\n' + b"[1,2]\n" + line(chain(1, 2, "u1")[0]) + line(HEADER))
    result = session.refresh()
    assert [(p.kind, p.line) for p in result.problems] == [("damaged-line", 4), ("damaged-line", 5),
                                                           ("extra-header", 7)]
    assert [e.id for e in result.added] == ["u2"] and result.added[0].line == 6
    assert snapshot(session) == snapshot(pikit.load(path))


def test_strict_sessions_raise_and_stay_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + line(chain(1)[0]))
    session = pikit.load(path, strict=True)
    append(path, line(chain(2)[1]) + b"{oops\n")
    with pytest.raises(DamagedLineError, match=":4"):
        session.refresh()
    assert [e.id for e in session.entries] == ["u0"]


def test_over_long_appended_lines_cost_that_line_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "MAX_LINE_BYTES", 400)
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + line(chain(1)[0]))
    session = pikit.load(path)
    long = line(user("big", "u0", 3, "x" * 1000))
    append(path, long[:600])  # still being written, already over the limit
    assert not session.refresh().changed
    append(path, long[600:] + line(user("after", "u0", 4, "ok")))
    result = session.refresh()
    assert [(p.kind, p.line) for p in result.problems] == [("damaged-line", 3)]
    assert "longer than" in result.problems[0].message
    assert [e.id for e in result.added] == ["after"] and result.added[0].line == 4


def test_the_leaf_stays_where_the_user_put_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + b"".join(map(line, chain(4))))
    session = pikit.load(path)
    session.leaf_id = "u1"
    append(path, line(chain(1, 4, "u3")[0]))
    result = session.refresh()
    assert session.leaf_id == "u1" and not result.leaf_moved and len(result.added) == 1


@pytest.mark.parametrize("how", ["truncate", "rewrite-longer", "replace", "migrate"])
def test_a_rewritten_file_is_loaded_again_whole(tmp_path: Path, how: str) -> None:
    path = tmp_path / "s.jsonl"
    entries = chain(6)
    path.write_bytes(line(HEADER) + b"".join(map(line, entries[:4])))
    session = pikit.load(path)
    if how == "truncate":
        path.write_bytes(line(HEADER) + line(entries[0]))
    elif how == "rewrite-longer":  # same header, another story, longer than before
        path.write_bytes(line(HEADER) + b"".join(map(line, chain(8, 10))))
    elif how == "replace":
        other = tmp_path / "other.jsonl"
        other.write_bytes(line(HEADER) + b"".join(map(line, entries)))
        os.replace(other, path)
    else:
        path.write_bytes(line({**HEADER, "cwd": "/elsewhere"}) + b"".join(map(line, entries)))
    generation = session.generation
    result = session.refresh()
    assert result.reloaded is not None and result.changed
    assert session.generation > generation
    assert snapshot(session) == snapshot(pikit.load(path))
    assert not session.refresh().changed


def test_duplicates_and_late_parents_rebuild_the_indexes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    orphan = user("o1", "late", 9, "orphan first")
    path.write_bytes(line(HEADER) + b"".join(map(line, chain(3))) + line(orphan))
    session = pikit.load(path)
    assert [p.kind for p in session.report.problems] == ["orphan"]
    session.context()
    session.context()
    session.children("u0")
    generation = session.generation
    append(path, line(user("late", "u2", 10, "the parent arrives")))
    result = session.refresh()
    assert session.generation == generation + 1 and [e.id for e in result.added] == ["late"]
    assert session.report.problems == [] and session.children("late") == ["o1"]
    assert snapshot(session) == snapshot(pikit.load(path))
    append(path, line(user("u1", "u0", 11, "a duplicate id")))
    result = session.refresh()
    assert [p.kind for p in result.problems] == ["duplicate-id"]
    assert snapshot(session) == snapshot(pikit.load(path))


def test_sessions_from_memory_cannot_refresh() -> None:
    session = pikit.loads(line(HEADER))
    with pytest.raises(PikitError, match="not loaded from a file"):
        session.refresh()


def test_following_past_the_index_only_size_keeps_only_the_index(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "KEEP_ALL_BELOW", 2000)
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + b"".join(map(line, chain(3))))
    session = pikit.load(path)
    assert all(e.is_parsed for e in session.entries)
    append(path, b"".join(map(line, chain(20, 3, "u2"))))
    session.refresh()
    append(path, b"".join(map(line, chain(5, 23, "u22"))))
    session.refresh()
    assert path.stat().st_size > 2000
    assert not any(e.is_parsed for e in session.entries[:23])
    assert snapshot(session) == snapshot(pikit.load(path))


def _sample_files() -> list[Path]:
    shared = SESSIONS
    files = sorted(SAMPLES.glob("*.jsonl")) + sorted(shared.glob("*.jsonl"))
    # Version-1 files get fresh ids on every migration: two loads of them never compare equal.
    return [f for f in files if f.stat().st_size < 3_000_000 and ".v1." not in f.name]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_growth_in_any_pieces_equals_one_load(tmp_path: Path, data: st.DataObject) -> None:
    source = data.draw(st.sampled_from(_sample_files()), label="session")
    content = source.read_bytes()
    first = content.index(b"\n") + 1
    start = data.draw(st.integers(first, len(content)), label="loaded bytes")
    path = tmp_path / f"grow-{os.getpid()}.jsonl"
    path.write_bytes(content[:start])
    session = pikit.load(path, wait_for_last_line=True)
    if data.draw(st.booleans(), label="indexes built first"):
        session.context()
        session.context()
        session.children(session.leaf_id) if session.leaf_id is not None else None
    cuts = sorted(set(data.draw(st.lists(st.integers(start, len(content)), max_size=8), label="cuts")))
    position = start
    for cut in [*cuts, len(content)]:
        append(path, content[position:cut])
        position = cut
        result = session.refresh()
        assert result.reloaded is None
        assert all(p.kind != "damaged-line" for p in result.problems) or b"damaged" in source.name.encode()
    assert snapshot(session) == snapshot(pikit.load(path, wait_for_last_line=True))
    path.unlink()


def test_appends_to_an_old_format_file_reload_it_to_migrate(tmp_path: Path) -> None:
    shared = SESSIONS / "before-compaction.v1.jsonl"
    content = shared.read_bytes()
    cut = content.index(b"\n", len(content) // 2) + 1
    path = tmp_path / "old.jsonl"
    path.write_bytes(content[:cut])
    session = pikit.load(path)
    assert session.report.migrated_from == 1
    append(path, content[cut:])
    result = session.refresh()
    assert result.reloaded is not None and "old-format" in result.reloaded
    assert len(session) == len(pikit.load(path))
