"""A Dask scan ends in bounded time: no workers, workers that stop answering, workers that die mid-scan.

Real ``LocalCluster`` schedulers, real worker processes (killed and stopped with signals); the
bounds are lowered here (module constants) except where a test checks the default the guide states.
What a stopped scan leaves behind, a local scan completes: the same tables and the same usage as a
fresh local scan.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pikit.corpus import TABLES, Corpus, _dask as dask_engine
from pikit.errors import PikitError
from tests import procs
from tests.corpus.clusters import local_cluster, wait_without_workers, worker_pids, worker_processes
from tests.corpus.corpora import assistant, header, user, write

pytestmark = pytest.mark.slow

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "python.md"  # (its limits and guarantees)
FILES = 37  # in the sample corpus


@pytest.fixture
def root(sample_corpus: Path, tmp_path: Path) -> Path:
    """A copy of the sample corpus (some tests append to it)."""
    shutil.copytree(sample_corpus, tmp_path / "sessions")
    return tmp_path / "sessions"


def _after_the_first_file(action: Callable[[], None]) -> Callable[[int, int], None]:
    """A progress callback (``(bytes read, bytes to read)``) that runs ``action`` once, when the first file's
    result has arrived."""
    pending = [action]

    def report(done: int, total: int) -> None:
        if done > 0 and pending:
            pending.pop()()

    return report


def _scan(root: Path, index: Path, client: Any, progress: Callable[[int, int], None] | None = None) -> None:
    with Corpus.open(root, index=index, client=client, scan=False) as corpus:
        corpus.scan(progress)


def _usage(root: Path, index: Path) -> Any:
    result = procs.pikit("usage", root, "--index", index, "--json", "--timezone", "UTC", "--by", "session",
                         timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


def _sessions_read(index: Path) -> int:
    with Corpus.open(None, index=index, scan=False) as corpus:
        return len(corpus.sessions)


def _completes_locally(root: Path, index: Path, tmp_path: Path, command_line: bool = False) -> None:
    """A local scan of the index a stopped scan left gives the tables of a fresh local scan (with
    ``command_line``: ``pikit usage`` gives the same output, too)."""
    assert _sessions_read(index) < len(list(root.glob("*/*.jsonl")))  # (the scan really stopped partway)
    fresh = tmp_path / "fresh.duckdb"
    if command_line:
        assert _usage(root, index) == _usage(root, fresh)
    with Corpus.open(root, index=index, workers=1) as resumed, Corpus.open(root, index=fresh, workers=1) as local:
        for table in TABLES:
            assert resumed.table(table).equals(local.table(table)), table


def test_a_scheduler_without_workers_default_bound(root: Path, tmp_path: Path) -> None:
    assert dask_engine.WORKERS_TIMEOUT == 10
    assert "no workers for 10 s" in GUIDE.read_text(encoding="utf-8")
    with local_cluster(0) as client:
        started = time.monotonic()
        result = procs.pikit("usage", root, "--index", tmp_path / "i.duckdb", "--engine", "dask",
                             "--scheduler", client.scheduler.address, timeout=120)
        took = time.monotonic() - started
    procs.one_error_line(result, "the Dask scheduler has had no workers for 10 s; start some: dask worker tcp://")
    assert 10 <= took < 60, took


def test_a_scheduler_without_workers(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dask_engine, "WORKERS_TIMEOUT", 1.0)
    index = tmp_path / "i.duckdb"
    Corpus.open(root, index=index, workers=1).close()
    with local_cluster(0) as client:
        with Corpus.open(root, index=index, client=client) as corpus:  # in step: nothing for a worker to do
            assert corpus.last_scan is not None and corpus.last_scan.unchanged == FILES
        target = sorted(root.glob("*/*.jsonl"))[0]
        with target.open("ab") as out:
            out.write(target.read_bytes().split(b"\n")[-2] + b"\n")
        started = time.monotonic()
        with pytest.raises(PikitError, match=r"^the Dask scheduler has had no workers for 1 s; start some: "
                                             r"dask worker tcp://127\.0\.0\.1:\d+$"):
            Corpus.open(root, index=index, client=client)
        assert time.monotonic() - started < 30  # (a hang guard; the message names the 1 s bound)
    with Corpus.open(root, index=index, workers=1) as corpus:  # the append is read locally
        assert corpus.last_scan is not None and corpus.last_scan.read_appended == 1


def test_workers_that_stop_answering(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dask_engine, "STALL_TIMEOUT", 2.0)
    index = tmp_path / "i.duckdb"
    with local_cluster(2) as client:
        pids = worker_pids(client)

        def stop_workers() -> None:
            for pid in pids:
                os.kill(pid, signal.SIGSTOP)

        started = time.monotonic()
        try:
            with pytest.raises(PikitError, match=r"^no result from the Dask workers for 2 s \(\d+ of 37 files read; "
                                                 r"the index keeps them\); run again to read the rest$"):
                _scan(root, index, client, _after_the_first_file(stop_workers))
            assert time.monotonic() - started < 45  # (a hang guard)
        finally:
            for pid in pids:
                os.kill(pid, signal.SIGCONT)
    _completes_locally(root, index, tmp_path)


def test_a_worker_dying_mid_scan_is_replaced(root: Path, tmp_path: Path) -> None:
    """One worker process of two killed: the scheduler runs its files again elsewhere; the scan completes."""
    with local_cluster(2) as client:
        victim = worker_pids(client)[0]

        def kill_one() -> None:
            os.kill(victim, signal.SIGKILL)

        started = time.monotonic()
        with Corpus.open(root, index=tmp_path / "d.duckdb", client=client, scan=False) as remote:
            remote.scan(_after_the_first_file(kill_one))
            assert time.monotonic() - started < 60
            with Corpus.open(root, index=tmp_path / "l.duckdb", workers=1) as local:
                for table in TABLES:
                    assert remote.table(table).equals(local.table(table)), table


def test_every_worker_dying_mid_scan(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker processes without a nanny, all killed: one error within the bounds, and the index a local scan
    completes."""
    monkeypatch.setattr(dask_engine, "WORKERS_TIMEOUT", 1.0)
    index = tmp_path / "i.duckdb"
    with local_cluster(0) as client, worker_processes(client, 2) as workers:

        def kill_all() -> None:
            for worker in workers:
                worker.kill()

        started = time.monotonic()
        with pytest.raises(PikitError, match=r"^the Dask scheduler has had no workers for 1 s \(\d+ of 37 files read; "
                                             r"the index keeps them\); start some: dask worker tcp://"):
            _scan(root, index, client, _after_the_first_file(kill_all))
        assert time.monotonic() - started < 45  # (a hang guard)
        wait_without_workers(client)
    _completes_locally(root, index, tmp_path, command_line=True)


def _long_sessions(root: Path, count: int, messages: int = 40_000) -> None:
    """``count`` sessions a worker takes about a second each to read (so that one is still being read)."""
    for n in range(count):
        entries, parent = [header(f"long-{n}")], None
        for i in range(messages):
            entries.append(user(f"e{i}", parent, "2026-11-02T08:00:00.000Z", "question " * 20) if i % 2 == 0
                           else assistant(f"e{i}", parent, "2026-11-02T08:00:01.000Z", 100))
            parent = f"e{i}"
        write(root / "--home-dev-long--" / f"long-{n}.jsonl", *entries)


def test_a_file_its_workers_keep_dying_on(root: Path, tmp_path: Path) -> None:
    """With no failures allowed, the task of a killed worker fails (KilledWorker): one line naming its file."""
    import dask

    _long_sessions(root, 2)

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), local_cluster(2) as client:
        pids = dict(client.run(os.getpid))
        killed: list[int] = []

        def kill_a_busy_worker(done: int, total: int) -> None:
            busy = [pids[worker] for worker, keys in client.processing().items() if keys]
            if not killed and busy:
                os.kill(busy[0], signal.SIGKILL)
                killed.append(busy[0])

        with pytest.raises(PikitError, match=r"^Dask workers died reading .+\.jsonl more often than the scheduler "
                                             r"allows \(distributed\.scheduler\.allowed-failures; "
                                             r"\d+ of 39 files read; the index keeps them\)$"):
            _scan(root, tmp_path / "i.duckdb", client, kill_a_busy_worker)
        assert killed
    _completes_locally(root, tmp_path / "i.duckdb", tmp_path)
