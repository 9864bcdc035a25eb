"""An index another process holds (a notebook with the corpus open) and an index that cannot be written: waited for
a bounded time, answered from a copy, or refused in one line naming who holds it or the folder."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pikit.corpus import Corpus, CorpusIndexError, IndexHeldError
from tests.corpus.corpora import assistant, header, user, write
from tests.corpus.test_index_file import DAY, _sessions
from tests.procs import env, one_error_line, pikit

HOLD = """
import sys, time
from pikit.corpus import Corpus
corpus = Corpus.open(sys.argv[1], index=sys.argv[2], workers=1)
print("open", flush=True)
if sys.argv[3] == "idle":
    sys.stdin.read()  # (held until the test closes standard input)
elif sys.argv[3] == "busy":  # (writes the index all the time, as a notebook running queries that write)
    for n in range(1200):
        corpus.connection.execute("INSERT OR REPLACE INTO meta VALUES ('busy', ?)", [str(n)])
        time.sleep(0.05)
else:
    time.sleep(float(sys.argv[3]))
corpus.close()
"""


Hold = Callable[[Path, Path, str], "subprocess.Popen[bytes]"]


@pytest.fixture
def hold() -> Iterator[Hold]:
    """Start a process that opens the corpus on an index and holds it (idle, busy, or for some seconds)."""
    started: list[subprocess.Popen[bytes]] = []

    def start(root: Path, index: Path, how: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, "-c", HOLD, str(root), str(index), how], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
        started.append(proc)
        assert proc.stdout is not None and proc.stdout.readline() == b"open\n", proc.stderr
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _digest(*paths: Path) -> list[str | None]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None for p in paths]


# ------------------------------------------------------------------------ an index another process holds
def test_a_second_corpus_on_an_index_this_process_has_open(tmp_path: Path) -> None:
    """A notebook cell run again opens the index while its first corpus still holds it: both work. A database of
    someone else's that this process has open is still refused, unchanged."""
    import duckdb

    root, index = tmp_path / "sessions", tmp_path / "index.duckdb"
    _sessions(root)
    with Corpus.open(root, index=index, workers=1) as first:
        with Corpus.open(root, index=index, workers=1, lock_wait=0) as second:
            assert second.last_scan is not None and second.last_scan.unchanged == 3
        assert len(first.sessions) == 3
    theirs = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(theirs))
    con.execute("CREATE TABLE sessions AS SELECT 1 AS id")
    con.execute("CHECKPOINT")
    before = _digest(theirs)
    with pytest.raises(CorpusIndexError, match="pikit did not make"):
        Corpus.open(root, index=theirs, workers=1, lock_wait=0)
    assert con.execute("SELECT * FROM sessions").fetchall() == [(1,)]
    con.close()
    assert _digest(theirs) == before


def test_a_held_index_is_waited_for_then_refused_naming_the_holder(tmp_path: Path, hold: Hold) -> None:
    root, index = tmp_path / "sessions", tmp_path / "index.duckdb"
    _sessions(root)
    holder = hold(root, index, "idle")
    started = time.monotonic()
    with pytest.raises(IndexHeldError) as held:
        Corpus.open(root, index=index, workers=1, lock_wait=0.5)
    assert 0.5 <= time.monotonic() - started < 30  # (the upper bound only guards against a hang)
    assert held.value.pid == holder.pid and f"PID {holder.pid}" in str(held.value)
    assert "index=" in str(held.value) and "--index" not in str(held.value)
    holder.stdin.close()  # the holder closes its corpus: a waiting open goes on
    with Corpus.open(root, index=index, workers=1, lock_wait=30) as corpus:
        assert len(corpus.sessions) == 3


def test_an_open_waits_for_a_holder_that_finishes(tmp_path: Path, hold: Hold) -> None:
    root, index = tmp_path / "sessions", tmp_path / "index.duckdb"
    _sessions(root)
    hold(root, index, "1.5")
    started = time.monotonic()
    with Corpus.open(root, index=index, workers=1, lock_wait=30) as corpus:
        assert len(corpus.sessions) == 3
    assert time.monotonic() - started >= 0.5  # (it waited for the holder, who held the index a while yet)


@pytest.mark.slow
def test_the_command_line_answers_beside_a_notebook_holding_the_index(tmp_path: Path, hold: Hold) -> None:
    """A notebook holds the index; the sessions have changed since it scanned. usage and sessions answer, up to
    date, from a copy of the index (a note says so, naming the holder); the notebook's index is not touched."""
    root, index = tmp_path / "sessions", tmp_path / "index.duckdb"
    files = _sessions(root)
    holder = hold(root, index, "idle")
    with files[1].open("a") as out:
        out.write(json.dumps(user("u9", "a1", DAY + "09:00:00.000Z", "added since")) + "\n")
    write(root / "--home-dev-app--" / "2026-11-03T08-00-00-000Z_new.jsonl", header("new"),
          user("n1", None, "2026-11-03T08:00:01.000Z", "a new one"),
          assistant("n2", "n1", "2026-11-03T08:00:02.000Z", 7))
    before = _digest(index, Path(f"{index}.wal"))
    fresh = tmp_path / "fresh.duckdb"
    for command in (["usage", "--by", "session", "--timezone", "UTC"], ["sessions", "--search", "since"]):
        result = pikit(command[0], root, "--index", index, "--json", *command[1:], timeout=120)
        assert result.returncode == 0, result.stderr
        err = result.stderr.decode()
        assert f"in use by another process (PID {holder.pid}" in err and "copy" in err and "Traceback" not in err
        expected = pikit(command[0], root, "--index", fresh, "--json", *command[1:], timeout=120)
        assert json.loads(result.stdout) == json.loads(expected.stdout)
    assert len(json.loads(pikit("sessions", root, "--index", fresh, "--json").stdout)["sessions"]) == 4
    assert _digest(index, Path(f"{index}.wal")) == before
    assert not [p for p in tmp_path.iterdir() if "pikit-copy" in p.name]
    assert holder.poll() is None


@pytest.mark.slow
def test_a_holder_that_keeps_writing_gets_one_line_naming_it(tmp_path: Path, hold: Hold) -> None:
    root, index = tmp_path / "sessions", tmp_path / "index.duckdb"
    _sessions(root)
    holder = hold(root, index, "busy")
    started = time.monotonic()
    result = pikit("usage", root, "--index", index, timeout=60)
    line = one_error_line(result, f"in use by another process (PID {holder.pid}", "kept writing", "--index")
    assert "index=" not in line.replace("--index", "")
    assert time.monotonic() - started < 40


# ------------------------------------------------------------------------ an index that cannot be written
def test_an_index_under_a_regular_file_is_one_line_naming_the_folder(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    _sessions(root)
    (tmp_path / "a-file").write_text("x")
    index = tmp_path / "a-file" / "cache" / "index.duckdb"
    with pytest.raises(CorpusIndexError, match="cannot write the corpus index there") as refused:
        Corpus.open(root, index=index, workers=1)
    assert str(index.parent) in str(refused.value) and "index=" in str(refused.value)
    one_error_line(pikit("usage", root, "--index", index), str(index.parent), "cannot write", "--index")


def _unprivileged() -> list[str]:
    """A command prefix under which file permissions hold (root loses the capabilities that pass them by)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a read-only folder would still be writable")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner", "--"]


def _run(prefix: list[str], *argv: object, preexec: Callable[[], None] | None = None
         ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*prefix, sys.executable, "-m", "pikit", *map(str, argv)], capture_output=True,
                          timeout=120, env=env(), preexec_fn=preexec)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_read_only_folder_is_one_line_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    files = _sessions(root)
    new, kept = tmp_path / "new", tmp_path / "kept"
    new.mkdir()
    assert pikit("usage", root, "--index", kept / "index.duckdb").returncode == 0
    prefix = _unprivileged()
    try:
        for folder in (new, kept):
            folder.chmod(0o555)
        probe = subprocess.run([*prefix, sys.executable, "-c", f"open({str(new / 'probe')!r}, 'w')"],
                               capture_output=True, timeout=60)
        assert probe.returncode != 0 and b"PermissionError" in probe.stderr  # (the folder really is read-only)
        one_error_line(_run(prefix, "usage", root, "--index", new / "index.duckdb"), str(new), "Permission denied",
                       "--index")
        assert list(new.iterdir()) == []
        unchanged = _run(prefix, "usage", root, "--index", kept / "index.duckdb", "--json")  # (nothing to write)
        assert unchanged.returncode == 0, unchanged.stderr
        before = _digest(kept / "index.duckdb")
        with files[0].open("a") as out:
            out.write(json.dumps(user("u9", "a0", DAY + "09:00:00.000Z", "grown")) + "\n")
        one_error_line(_run(prefix, "usage", root, "--index", kept / "index.duckdb"), str(kept), "--index")
        assert _digest(kept / "index.duckdb") == before and sorted(p.name for p in kept.iterdir()) == ["index.duckdb"]
    finally:
        for folder in (new, kept):
            folder.chmod(0o755)


def _file_size_limit(limit: int) -> Callable[[], None]:
    def limited() -> None:  # (in the child: writes past ``limit`` bytes fail with EFBIG, as on a full disk)
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limited


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")
@pytest.mark.parametrize("limit", [64 * 1024, 1024 * 1024])
def test_an_index_that_cannot_grow_is_one_line_and_the_next_run_completes_it(limit: int, sample_corpus: Path,
                                                                              tmp_path: Path) -> None:
    """Writes that fail part-way (a file-size limit the child runs under: root is held to it too), while the
    index is made (64 KiB) or during the scan (1 MiB): one line naming the folder; then, with room, a run
    completes the index, equal to a fresh one."""
    index = tmp_path / "cache" / "index.duckdb"
    failed = _run([], "usage", sample_corpus, "--index", index, "--json", preexec=_file_size_limit(limit))
    one_error_line(failed, str(index.parent), "File too large", "make room", "--index")
    assert not [p for p in index.parent.iterdir() if p.name.endswith(".new")]  # (no temporary file left)
    completed = _run([], "usage", sample_corpus, "--index", index, "--json", "--timezone", "UTC")
    fresh = _run([], "usage", sample_corpus, "--index", tmp_path / "fresh.duckdb", "--json", "--timezone", "UTC")
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == json.loads(fresh.stdout)


def _tiny_file_system(folder: Path) -> list[str] | None:
    """A command prefix running its command with a 1 MiB tmpfs mounted on ``folder`` (in a mount namespace of its
    own), or None where that cannot be had."""
    if shutil.which("unshare") is None:
        return None
    base = ["unshare", "--mount"] + (["--map-root-user"] if os.geteuid() != 0 else [])
    script = f"mount -t tmpfs -o size=1m pikit-test {folder} && exec \"$@\""
    prefix = [*base, "sh", "-c", script, "sh"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=60)
    return prefix if probe.returncode == 0 else None


@pytest.mark.skipif(sys.platform != "linux", reason="a tmpfs in a mount namespace")
def test_a_full_file_system_is_one_line_naming_the_folder(sample_corpus: Path, tmp_path: Path) -> None:
    """A real full disk: the index folder is a 1 MiB tmpfs (where unshare may mount one)."""
    folder = tmp_path / "full"
    folder.mkdir()
    prefix = _tiny_file_system(folder)
    if prefix is None:
        pytest.skip("no mount namespace with a tmpfs here")
    one_error_line(_run(prefix, "usage", sample_corpus, "--index", folder / "index.duckdb"), str(folder),
                   "No space left on device", "--index")


def test_an_index_without_a_log_is_opened_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import duckdb

    from pikit.corpus._index import Index

    path = str(tmp_path / "index.duckdb")
    Index(path).close()
    assert not os.path.exists(path + ".wal")
    opened: list[bool] = []
    real = duckdb.connect

    def connect(*args: object, **options: object) -> duckdb.DuckDBPyConnection:
        opened.append(bool(options.get("read_only")))
        return real(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(duckdb, "connect", connect)
    Index(path).close()
    assert opened == [False]
