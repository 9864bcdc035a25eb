"""The index is pikit's and only pikit's: other databases and files are refused unchanged, an index of an earlier
pikit is built again, a damaged index is moved aside and built again, a stored state that does not decode costs a
whole read of its file."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import duckdb
import msgspec
import pytest

from pikit import PikitError
from pikit.corpus import TABLES, Corpus, CorpusIndexError, IndexRebuiltWarning
from pikit.corpus._indexfile import MARK, SCHEMA_VERSION
from tests.corpus.corpora import assistant, header, user, write
from tests.procs import env, one_error_line, pikit

DAY = "2026-11-02T"


def _sessions(root: Path, count: int = 3) -> list[Path]:
    """A small corpus: ``count`` sessions of a user and an assistant message each."""
    return [write(root / "--home-dev-app--" / f"2026-11-02T08-00-0{k}-000Z_s{k}.jsonl", header(f"s{k}"),
                  user(f"u{k}", None, DAY + f"08:00:0{k}.000Z", f"question {k} alpha"),
                  assistant(f"a{k}", f"u{k}", DAY + f"08:01:0{k}.000Z", 100 + k))
            for k in range(count)]


def _open(root: Path, index: Path | str, **options: object) -> Corpus:
    return Corpus.open(root, index=index, **{"workers": 1, **options})  # type: ignore[arg-type]


def _digest(*paths: Path) -> list[str | None]:
    """The bytes of each file, hashed (None: no such file)."""
    return [hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None for p in paths]


def _usage(root: Path, index: Path) -> subprocess.CompletedProcess[bytes]:
    return pikit("usage", root, "--index", index, "--json", "--timezone", "UTC", timeout=120)


def _tables(corpus: Corpus) -> dict[str, list[str]]:
    return {table: sorted(map(repr, corpus.table(table).itertuples(index=False))) for table in TABLES}


# ------------------------------------------------------------------------ databases pikit did not make
def _foreign(path: Path, kind: str) -> None:
    """A database someone else made, with tables bearing pikit's names (one with a write-ahead log)."""
    con = duckdb.connect(str(path))
    if kind == "tables named like pikit's":
        con.execute("CREATE TABLE sessions (id INTEGER, note VARCHAR)")
        con.execute("INSERT INTO sessions VALUES (1, 'keep me'), (2, 'and me')")
        con.execute("CREATE TABLE files (path VARCHAR)")
        con.execute("CREATE TABLE meta (k INTEGER)")
    elif kind == "a key-value meta with a schema":  # (as pikit's, but none of pikit's other tables)
        con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
        con.execute("INSERT INTO meta VALUES ('schema', '5'), ('owner', 'someone')")
        con.execute("CREATE TABLE files (file_id BIGINT, name VARCHAR)")
        con.execute("CREATE TABLE states (x INTEGER)")
        con.execute("CREATE TABLE messages_raw (x INTEGER)")
    con.close()
    if kind == "a write-ahead log not checkpointed":  # (a process that ended without closing the database)
        code = (f"import duckdb, os; con = duckdb.connect({str(path)!r}); con.execute(\"SET checkpoint_threshold = "
                "'1GB'\"); con.execute('CREATE TABLE messages (x INTEGER)'); con.execute('INSERT INTO messages "
                "SELECT range FROM range(1000)'); os._exit(0)")
        subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
        assert Path(f"{path}.wal").stat().st_size > 0


@pytest.mark.parametrize("kind", ["tables named like pikit's", "a key-value meta with a schema", "no tables at all",
                                  "a write-ahead log not checkpointed"])
def test_a_database_pikit_did_not_make_is_refused_unchanged(kind: str, tmp_path: Path) -> None:
    root, foreign = tmp_path / "sessions", tmp_path / "theirs.duckdb"
    _sessions(root)
    _foreign(foreign, kind)
    wal = Path(f"{foreign}.wal")
    before = _digest(foreign, wal)
    with pytest.raises(CorpusIndexError, match="pikit did not make") as refused:
        _open(root, foreign)
    assert "index=" in str(refused.value) and "--index" not in str(refused.value)
    line = one_error_line(_usage(root, foreign), "pikit did not make", "--index", str(foreign))
    assert "in use" not in line and "another pikit" not in line
    assert _digest(foreign, wal) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["sessions", foreign.name] + ([wal.name] if
                                                                  before[1] else []))
    if kind == "tables named like pikit's":
        con = duckdb.connect(str(foreign), read_only=True)
        assert con.execute("SELECT * FROM sessions ORDER BY id").fetchall() == [(1, "keep me"), (2, "and me")]
        con.close()


def test_a_new_path_becomes_a_marked_index_made_whole(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    _sessions(root)
    index = tmp_path / "new" / "folder" / "index.duckdb"
    with _open(root, index) as corpus:
        assert len(corpus.sessions) == 3
        assert corpus.rows("SELECT value FROM meta WHERE key = 'format'") == [(MARK,)]
    assert sorted(p.name for p in index.parent.iterdir()) == ["index.duckdb"]  # (no temporary file left)
    with _open(root, index) as again:
        assert again.last_scan is not None and again.last_scan.unchanged == 3


def _as_earlier(index: Path, version: str) -> None:
    """Make a current index look as an index of a pikit from before the mark (schema ``version``) left it."""
    con = duckdb.connect(str(index))
    con.execute("DROP TABLE meta")
    con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute("INSERT INTO meta VALUES ('schema', ?)", [version])
    con.close()


def test_an_index_of_an_earlier_pikit_is_recognised_and_built_again(tmp_path: Path) -> None:
    """An index of schema 5 or 6 (no mark) is built again and marked; a user's own table in either stays."""
    root = tmp_path / "sessions"
    _sessions(root)
    for version, read_whole in (("5", 3), ("6", 3)):
        index = tmp_path / f"v{version}.duckdb"
        with _open(root, index) as corpus:
            corpus.connection.execute("CREATE TABLE my_notes AS SELECT 'mine' AS note")
        _as_earlier(index, version)
        with _open(root, index) as corpus:
            assert corpus.last_scan is not None and corpus.last_scan.read_whole == read_whole, version
            assert corpus.rows("SELECT key, value FROM meta WHERE key <> 'model_facts' ORDER BY key") == [
                ("format", MARK), ("schema", SCHEMA_VERSION)]
            assert corpus.rows("SELECT note FROM my_notes") == [("mine",)]
            assert len(corpus.sessions) == 3 and corpus.search_sessions("alpha")


def test_an_index_missing_one_of_its_tables_is_built_again(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    _sessions(root)
    with _open(root, tmp_path / "i.duckdb") as corpus:
        corpus.connection.execute("DROP TABLE branches")
    with _open(root, tmp_path / "i.duckdb") as corpus:
        assert corpus.last_scan is not None and corpus.last_scan.read_whole == 3
        assert len(corpus.branches) == 3


# ------------------------------------------------------------------------ files that are not a database
@pytest.mark.parametrize("kind", ["session", "text", "empty", "folder", "fifo", "link to nothing"])
def test_a_file_that_is_not_a_database_is_refused_before_duckdb_opens_it(kind: str, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    files = _sessions(root)
    target = {"session": files[0], "text": tmp_path / "notes.txt", "empty": tmp_path / "empty.duckdb",
              "folder": tmp_path / "a-folder", "fifo": tmp_path / "pipe", "link to nothing": tmp_path / "link"}[kind]
    if kind == "text":
        target.write_text("DUCK DUCK GOOSE\n" * 1000)
    elif kind == "empty":
        target.write_bytes(b"")
    elif kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no named pipes here")
        os.mkfifo(target)
    elif kind == "link to nothing":
        target.symlink_to(tmp_path / "nowhere.duckdb")
    before = _digest(target) if target.is_file() else None
    listing = sorted(p.name for p in target.parent.iterdir())
    needle = {"session": "is a JSON Lines file", "text": "is not a DuckDB database",
              "empty": "is an empty file, not a DuckDB database", "folder": "is a directory",
              "fifo": "is a FIFO", "link to nothing": "is a symbolic link to nothing"}[kind]
    with pytest.raises(CorpusIndexError, match=needle):
        _open(root, target)
    line = one_error_line(_usage(root, target), needle, "--index", str(target))
    assert "in use" not in line and "another pikit" not in line  # (that is said of a lock held, only)
    assert sorted(p.name for p in target.parent.iterdir()) == listing  # (no .wal, nothing beside it)
    if before is not None:
        assert _digest(target) == before


# ------------------------------------------------------------------------ damaged indexes
def _blocks(index: Path, *tables: str) -> tuple[int, set[int]]:
    """The block size of an index and the blocks holding these tables' rows."""
    con = duckdb.connect(str(index), read_only=True)
    try:
        size = con.execute("PRAGMA database_size").fetchall()[0][2]
        return size, {b for table in tables for (b,) in con.execute(
            f"SELECT block_id FROM pragma_storage_info('{table}') WHERE persistent AND block_id >= 0").fetchall()}
    finally:
        con.close()


def _flip(path: Path, at: int, size: int = 64) -> None:
    data = bytearray(path.read_bytes())
    data[at:at + size] = bytes(b ^ 0xFF for b in data[at:at + size])
    path.write_bytes(bytes(data))


def _damage(path: Path, how: str) -> None:
    if how == "truncated":
        path.write_bytes(path.read_bytes()[:path.stat().st_size // 2])
    elif how == "header":  # the main header's bytes after its checksum
        _flip(path, 20, 20)
    elif how == "a block":  # one that every scan reads: the stored states'
        size, blocks = _blocks(path, "states")
        _flip(path, 3 * 4096 + min(blocks) * size + 16)  # (after the three header blocks; the rows begin the block)


@pytest.mark.parametrize("how", ["truncated", "header", "a block"])
def test_a_damaged_index_is_moved_aside_and_built_again(how: str, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    _sessions(root)
    index = tmp_path / "index.duckdb"
    with _open(root, index), _open(root, tmp_path / "fresh.duckdb") as fresh:
        expected = _tables(fresh)
    _damage(index, how)
    damaged = index.read_bytes()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _open(root, index) as corpus:
            assert _tables(corpus) == expected
    notes = [str(w.message) for w in caught if issubclass(w.category, IndexRebuiltWarning)]
    assert len(notes) == 1 and "damaged" in notes[0], notes
    moved = [p for p in tmp_path.iterdir() if ".damaged-" in p.name]
    assert len(moved) == 1 and str(moved[0]) in notes[0] and moved[0].read_bytes() == damaged
    # the command line says it in one note, and answers
    _damage(index, how)
    result = _usage(root, index)
    assert result.returncode == 0, result.stderr
    err = result.stderr.decode()
    assert "Traceback" not in err and err.count("moved to") == 1 and "built again" in err, err
    assert json.loads(result.stdout)["totals"]["inputTokens"] == 303


def test_damage_found_by_a_query_after_the_scan_rebuilds_and_answers(tmp_path: Path) -> None:
    """A block only the usage query reads (messages_raw's) is damaged: the scan of an unchanged corpus does not
    see it; the query does, and the answer comes from the index built again."""
    root = tmp_path / "sessions"
    _sessions(root)
    index = tmp_path / "index.duckdb"
    expected = json.loads(_usage(root, tmp_path / "fresh.duckdb").stdout)
    with _open(root, index):
        pass
    size, messages = _blocks(index, "messages_raw")
    only_messages = sorted(messages - _blocks(index, "meta", "files", "states", "problems", "sessions", "texts")[1])
    assert only_messages
    _flip(index, 3 * 4096 + only_messages[0] * size + 16)
    result = _usage(root, index)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == expected
    assert b"damaged" in result.stderr and b"Traceback" not in result.stderr
    assert len([p for p in tmp_path.iterdir() if ".damaged-" in p.name]) == 1


@pytest.mark.parametrize("query", ["ATTACH '{notdb}' AS other", "SELECT * FROM read_csv('{notdb}.gone')",
                                   "COPY (SELECT 1) TO '{folder}/under-a-file/x.csv'"])
def test_a_query_s_own_error_is_not_taken_for_a_damaged_or_unwritable_index(query: str, tmp_path: Path) -> None:
    root, index = tmp_path / "sessions", tmp_path / "i.duckdb"
    _sessions(root)
    notdb = tmp_path / "notdb.txt"
    notdb.write_text("not a database\n")
    (tmp_path / "under-a-file").write_text("a file, not a folder\n")
    with _open(root, index) as corpus:
        before = _tables(corpus)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no IndexRebuiltWarning: the index was never taken for damaged
            with pytest.raises(PikitError, match=r"^query failed: "):
                corpus.sql(query.format(notdb=notdb, folder=tmp_path))
        assert _tables(corpus) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i.duckdb", "notdb.txt", "sessions", "under-a-file"]


@pytest.mark.parametrize("wait", [float("nan"), float("inf"), -1.0])
def test_a_lock_wait_that_is_not_finite_seconds_is_refused(wait: float, tmp_path: Path) -> None:
    _sessions(tmp_path / "sessions")
    with pytest.raises(PikitError, match=r"^lock_wait must be a number of seconds"):
        _open(tmp_path / "sessions", tmp_path / "i.duckdb", lock_wait=wait)


def test_a_damaged_write_ahead_log_goes_aside_with_its_index(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    files = _sessions(root)
    index = tmp_path / "index.duckdb"
    with _open(root, index):
        pass
    with files[0].open("a") as out:  # (a small append stays in the write-ahead log)
        out.write(json.dumps(user("u9", "a0", DAY + "09:00:00.000Z", "more")) + "\n")
    code = (f"import os; from pikit.corpus import Corpus; kept = Corpus.open({str(root)!r}, index={str(index)!r}, "
            "workers=1); os._exit(0)")  # (ends without closing: the log stays)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, env=env())
    wal = Path(f"{index}.wal")
    log = bytearray(wal.read_bytes())
    middle = len(log) // 2  # (every bit flipped: zeros written over zeros would damage nothing)
    log[middle:middle + 32] = bytes(b ^ 0xFF for b in log[middle:middle + 32])
    wal.write_bytes(bytes(log))
    result = _usage(root, index)
    assert result.returncode == 0, result.stderr
    assert b"damaged" in result.stderr and b"WAL" in result.stderr
    moved = sorted(p.name for p in tmp_path.iterdir() if ".damaged-" in p.name)
    assert len(moved) == 2 and moved[1] == moved[0] + ".wal"
    assert (tmp_path / moved[1]).read_bytes() == bytes(log)


def test_a_damaged_file_pikit_cannot_tell_as_its_own_is_refused_unchanged(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut before its mark, an index is not recognisably pikit's: refused where --index names it, moved aside
    where it is the default index in pikit's cache folder. Another program's damaged database is refused."""
    root = tmp_path / "sessions"
    _sessions(root)
    index = tmp_path / "index.duckdb"
    with _open(root, index):
        pass
    index.write_bytes(index.read_bytes()[:5000])
    theirs = tmp_path / "theirs.duckdb"
    _foreign(theirs, "tables named like pikit's")
    _damage(theirs, "truncated")
    for path in (index, theirs):
        before = _digest(path)
        one_error_line(_usage(root, path), "damaged DuckDB database pikit cannot tell as its own", "--index")
        assert _digest(path) == before
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from pikit.corpus import default_index_path

    default = Path(default_index_path(root))
    default.parent.mkdir(parents=True)
    shutil.copyfile(index, default)
    with pytest.warns(IndexRebuiltWarning, match="moved to"), _open(root, None) as corpus:
        assert corpus.index_path == str(default) and len(corpus.sessions) == 3
    assert len(list(default.parent.glob("*.damaged-*"))) == 1


# ------------------------------------------------------------------------ stored states that do not decode
def test_a_stored_state_that_does_not_decode_means_a_whole_read(tmp_path: Path) -> None:
    """States that are not deflated, that decode to the wrong shape, and a mark that does not decode: those files
    are read whole again (the first two have grown since), and the tables are a fresh index's."""
    root = tmp_path / "sessions"
    files = _sessions(root, 4)
    index = tmp_path / "index.duckdb"
    with _open(root, index) as corpus:
        ids = dict(corpus.rows("SELECT path, file_id FROM files"))
        con = corpus.connection
        con.execute("UPDATE states SET state = 'not deflated'::BLOB WHERE file_id = ?", [ids[str(files[0])]])
        con.execute("UPDATE states SET state = ? WHERE file_id = ?",
                    [zlib.compress(msgspec.msgpack.encode({"x": 1})), ids[str(files[1])]])
        con.execute("UPDATE states SET mark = '\\xC1'::BLOB WHERE file_id = ?", [ids[str(files[2])]])
    for path in files[:2]:
        with path.open("a") as out:
            out.write(json.dumps(user("u9", "a0", DAY + "09:00:00.000Z", "grown")) + "\n")
    with _open(root, index) as corpus, _open(root, tmp_path / "fresh.duckdb") as fresh:
        assert corpus.last_scan is not None
        assert (corpus.last_scan.read_whole, corpus.last_scan.unchanged) == (3, 1)
        assert _tables(corpus) == _tables(fresh)
        assert corpus.search_sessions("grown") == sorted(map(str, files[:2]))
