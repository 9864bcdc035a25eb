"""A scan for usage alone (``Corpus.open(usage_only=True)``, ``pikit usage``): the same reports, and every table of
a full build once anything else is read."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pikit.corpus import Corpus
from pikit.corpus._indexfile import _OWN_TABLES, _wait_built
from pikit.corpus._usage import BY
from tests.corpus.corpora import assistant, header, legacy, legacy_header, user, write


def _corpus(root: Path, index: Path, **options: object) -> Corpus:
    return Corpus.open(root, index=index, **{"workers": 1, **options})  # type: ignore[arg-type]


def _reports(corpus: Corpus) -> list[object]:
    reports: list[object] = [corpus.usage_rows(by, timezone="UTC") for by in BY]
    reports.append(corpus.usage_rows(["day", "model"], timezone="Europe/Berlin"))
    reports.append(corpus.usage_rows("session", timezone="UTC", split_branch=True, since="20260101"))
    return reports


def _stored(index: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table pikit keeps in the index (not ``meta``), sorted."""
    _wait_built(str(index))
    with duckdb.connect(str(index), read_only=True) as con:
        return {table: sorted(map(repr, con.execute(f'SELECT * FROM "{table}"').fetchall()))  # type: ignore[misc]
                for table in _OWN_TABLES if table != "meta"}


def _partial(index: Path) -> int:
    _wait_built(str(index))  # (a first `pikit usage` writes its index after the answer)
    with duckdb.connect(str(index), read_only=True) as con:
        return int(con.execute("SELECT count(*) FROM partial").fetchall()[0][0])


@pytest.fixture(params=["sample", "shared", "weird", "legacy"])
def root(request: pytest.FixtureRequest, sample_corpus: Path, shared_sessions: Path, tmp_path: Path) -> Path:
    """The corpora the two scans are compared on."""
    if request.param == "sample":
        return sample_corpus
    if request.param == "shared":
        return shared_sessions
    folder = tmp_path / request.param
    folder.mkdir()
    if request.param == "weird":
        from tests.weird import weird_sessions

        weird_sessions(folder)
        return folder
    # a version-1 file beside its migrated copy, a fork of it, and a file that is no session
    entries = [user("u1", None, "2026-11-02T09:00:00.000Z", "hello"),
               assistant("a1", "u1", "2026-11-02T09:00:05.000Z", 100),
               user("u2", "a1", "2026-11-02T09:01:00.000Z", "more"),
               assistant("a2", "u2", "2026-11-02T09:01:05.000Z", 200)]
    old = write(folder / "old.jsonl", legacy_header("s1"), *(legacy(e) for e in entries))
    first, _, rest = old.read_bytes().partition(b"\n")
    old.write_bytes(first + b"\n{\"damaged\n" + rest)  # (a damaged line right after a version-1 header)
    write(folder / "new.jsonl", header("s1"), *entries)
    write(folder / "fork.jsonl", header("s2", parent=str(folder / "new.jsonl"), timestamp="2026-11-02T10:00:00.000Z"),
          *entries, assistant("a3", "a2", "2026-11-02T10:00:05.000Z", 300))
    (folder / "notes.jsonl").write_text('{"hello": "world"}\n')
    return folder


def test_a_usage_scan_reports_what_a_full_scan_reports(root: Path, tmp_path: Path) -> None:
    with _corpus(root, tmp_path / "usage.duckdb", usage_only=True) as lean, \
            _corpus(root, tmp_path / "full.duckdb") as full:
        assert _reports(lean) == _reports(full)
        assert lean.problem_counts() == full.problem_counts()
    assert _partial(tmp_path / "usage.duckdb") > 0  # (it did read for usage alone)
    assert _partial(tmp_path / "full.duckdb") == 0


@pytest.mark.slow
def test_anything_else_read_first_makes_every_table_a_full_builds(root: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from pikit.corpus import _index

    monkeypatch.setattr(_index, "POOL_BYTES", 0)  # (read by worker processes, though small)
    reads = [lambda c: c.sessions, lambda c: c.sql("SELECT 1"), lambda c: c.search_sessions("the"),
             lambda c: c.search("the"), lambda c: c.connection]
    for n, read in enumerate(reads):
        index = tmp_path / f"usage-{n}.duckdb"
        with _corpus(root, index, usage_only=True, workers=2) as corpus:
            before = corpus.usage_rows("day", timezone="UTC")
            read(corpus)
            assert corpus.usage_rows("day", timezone="UTC") == before
        assert _partial(index) == 0
    with _corpus(root, tmp_path / "full.duckdb"):
        pass
    full = _stored(tmp_path / "full.duckdb")
    for n in range(len(reads)):
        assert _stored(tmp_path / f"usage-{n}.duckdb") == full


def test_a_usage_scan_after_appends_reads_only_what_was_appended(sample_corpus: Path, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    shutil.copytree(sample_corpus, root)
    grown = sorted(root.rglob("*.jsonl"))[:6:2]
    tails = {}
    for path in grown:
        lines = path.read_bytes().split(b"\n")[:-1]
        keep = max(2, len(lines) - 5)
        path.write_bytes(b"\n".join(lines[:keep]) + b"\n")
        tails[path] = b"".join(line + b"\n" for line in lines[keep:])
    index = tmp_path / "usage.duckdb"
    with _corpus(root, index, usage_only=True):
        pass
    for path, tail in tails.items():
        with path.open("ab") as out:
            out.write(tail)
    with _corpus(root, index, usage_only=True) as corpus:
        report = corpus.last_scan
        assert report is not None and report.read_appended == len(grown) and report.read_whole == 0
        assert report.bytes_read == sum(map(len, tails.values()))
        lean = _reports(corpus)
    with _corpus(root, tmp_path / "full.duckdb") as full:
        assert lean == _reports(full)
    partial = _partial(index)
    assert partial == 36  # (the sample's version-1 file is read in full in any scan)
    with _corpus(root, index) as corpus:  # (a full scan: the files read for usage alone are read again whole)
        report = corpus.last_scan
        assert report is not None and report.read_whole == partial
    assert _stored(index) == _stored(tmp_path / "full.duckdb")


@pytest.mark.slow
def test_pikit_usage_then_another_command_on_the_same_index(sample_corpus: Path, tmp_path: Path) -> None:
    def pikit(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "pikit", *args], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    index, fresh = str(tmp_path / "index.duckdb"), str(tmp_path / "fresh.duckdb")
    usage = ["usage", str(sample_corpus), "--by", "model", "--json", "--timezone", "UTC", "--index"]
    lean = pikit(*usage, index)
    assert _partial(Path(index)) > 0
    full_sessions = pikit("sessions", str(sample_corpus), "--json", "--index", fresh)  # (a full build)
    assert json.loads(lean) == json.loads(pikit(*usage, fresh))
    assert pikit("sessions", str(sample_corpus), "--json", "--index", index) == full_sessions
    assert _partial(Path(index)) == 0


def _same_rows(ours: list[dict[str, object]] | None, theirs: list[dict[str, object]]) -> bool:
    """The same rows; costs equal up to the last bits (exact summation here, DuckDB's compensated one there)."""
    assert ours is not None
    assert [{k: v for k, v in row.items() if not isinstance(v, float)} for row in ours] == \
        [{k: v for k, v in row.items() if not isinstance(v, float)} for row in theirs]
    return all(math.isclose(value, other[name], rel_tol=1e-12) or value == other[name]
               for row, other in zip(ours, theirs, strict=True) for name, value in row.items()
               if isinstance(value, float))


@pytest.mark.parametrize("keys", [["day"], ["month"], ["model"], ["project"], ["day", "model"], ["project", "month"]])
def test_a_first_report_from_memory_is_the_index_report(root: Path, tmp_path: Path, keys: list[str]) -> None:
    from zoneinfo import ZoneInfo

    from pikit.corpus._discover import find_files
    from pikit.corpus._filescan import scan_file
    from pikit.corpus._inmemory import problem_counts, usage_rows

    found = find_files(str(root))
    results = [scan_file(path, number, usage_only=True) for number, path in enumerate(found.files, 1)]
    with _corpus(root, tmp_path / "usage.duckdb", usage_only=True) as corpus:
        assert problem_counts(results, found.problems) == corpus.problem_counts()
        for zone in ("UTC", "Europe/Berlin", "Asia/Kolkata", "America/St_Johns"):
            assert _same_rows(usage_rows(results, keys, ZoneInfo(zone)), corpus.usage_rows(keys, timezone=zone))


def test_a_first_pikit_usage_answers_then_writes_a_whole_index(root: Path, tmp_path: Path) -> None:
    from pikit.cli import main

    index, full = tmp_path / "first.duckdb", tmp_path / "full.duckdb"
    for key in ("day", "model,project"):
        assert main(["usage", str(root), "--by", key, "--json", "--timezone", "UTC", "--index",
                     str(tmp_path / f"{key}.duckdb")]) == 0
    assert main(["usage", str(root), "--json", "--index", str(index)]) == 0
    assert not (tmp_path / "first.duckdb.building").exists()
    with _corpus(root, full, usage_only=True):
        pass
    assert _stored(index) == _stored(full)
    assert _stored(tmp_path / "day.duckdb") == _stored(full)


def test_an_index_being_built_is_waited_for(tmp_path: Path) -> None:
    import threading

    from pikit.corpus._index import Index
    from pikit.corpus._indexfile import building, built

    path = str(tmp_path / "index.duckdb")
    lock = building(path)
    assert lock is not None and building(path) is None  # (one builder at a time)
    done: list[str] = []

    def build() -> None:
        Index(path, builder=True).close()
        done.append("built")
        built(path, lock)

    thread = threading.Timer(0.2, build)
    thread.start()
    Index(path).close()  # (waits for the builder)
    done.append("opened")
    thread.join()
    assert done == ["built", "opened"]


def test_a_first_pikit_usage_beyond_its_memory_bound_reads_into_the_index(sample_corpus: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from pikit.cli import _usage_first, main
    from pikit.corpus import _inmemory

    def unused(*args: object) -> None:
        raise AssertionError("answered in memory")

    monkeypatch.setattr(_usage_first, "_MEMORY_BYTES", 0)
    monkeypatch.setattr(_inmemory, "usage_rows", unused)
    assert main(["usage", str(sample_corpus), "--json", "--index", str(tmp_path / "index.duckdb")]) == 0
    assert _partial(tmp_path / "index.duckdb") > 0


def test_a_first_session_list_from_memory_is_the_index_list(root: Path, tmp_path: Path,
                                                           request: pytest.FixtureRequest) -> None:
    from pikit.cli._corpus import session_rows as indexed_rows
    from pikit.cli._json.corpus import SESSION_FIELDS
    from pikit.corpus._discover import find_files
    from pikit.corpus._filescan import scan_file
    from pikit.corpus._inmemory import problem_counts, session_rows

    found = find_files(str(root))
    results = [scan_file(path, number) for number, path in enumerate(found.files, 1)]
    rows = session_rows(results, SESSION_FIELDS, None)
    with _corpus(root, tmp_path / "full.duckdb") as corpus:
        assert problem_counts(results, found.problems) == corpus.problem_counts()
        if request.node.callspec.params["root"] in ("shared", "legacy"):  # (a version-1 file beside its copy)
            assert rows is None
            return
        assert rows == indexed_rows(corpus, None, None, None)
        assert session_rows(results, SESSION_FIELDS, 2) == indexed_rows(corpus, None, None, 2)


def test_a_first_pikit_sessions_answers_as_the_index_then_writes_a_whole_index(
        root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pikit.cli import main

    index, full = tmp_path / "first.duckdb", tmp_path / "full.duckdb"
    for form in (["--json"], []):
        answers = []
        for _ in range(2):  # (first from memory, then from the index it wrote)
            assert main(["sessions", str(root), *form, "--index", str(index)]) == 0
            answers.append(capsys.readouterr())
        assert answers[0] == answers[1]
        assert not (tmp_path / "first.duckdb.building").exists()
        index.unlink()
    assert main(["sessions", str(root), "--json", "--index", str(index)]) == 0
    with _corpus(root, full):
        pass
    assert _stored(index) == _stored(full)


def test_a_first_pikit_sessions_beyond_its_memory_bound_reads_into_the_index(
        sample_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from pikit.cli import _usage_first, main
    from pikit.corpus import _inmemory

    def unused(*args: object) -> None:
        raise AssertionError("answered in memory")

    index = tmp_path / "index.duckdb"
    assert main(["sessions", str(sample_corpus), "--json", "--index", str(tmp_path / "first.duckdb")]) == 0
    first = capsys.readouterr().out
    monkeypatch.setattr(_usage_first, "_FULL_MEMORY_BYTES", 0)
    monkeypatch.setattr(_inmemory, "session_rows", unused)
    assert main(["sessions", str(sample_corpus), "--json", "--index", str(index)]) == 0
    assert capsys.readouterr().out == first
    assert _partial(index) == 0
