"""Real Dask clusters and misbehaving servers on 127.0.0.1 for the Dask engine's tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from tests import procs

Answer = Callable[[socket.socket, threading.Event], None]


@contextlib.contextmanager
def server(answer: Answer) -> Iterator[int]:
    """A TCP server on 127.0.0.1 that calls ``answer(connection, stopped)`` for every connection; its port.

    ``stopped`` is set when the block ends: an answer that waits on it keeps its connection open until then.
    """
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stopped = threading.Event()
    connections: list[socket.socket] = []

    def reply(connection: socket.socket) -> None:
        with contextlib.suppress(OSError):  # (the client went away)
            answer(connection, stopped)

    def serve() -> None:
        while not stopped.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            connections.append(connection)
            threading.Thread(target=reply, args=(connection,), daemon=True).start()

    accepting = threading.Thread(target=serve, daemon=True)
    accepting.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stopped.set()
        accepting.join(5)
        listener.close()
        for connection in connections:
            connection.close()


@contextlib.contextmanager
def local_cluster(n_workers: int = 2, **options: Any) -> Iterator[Any]:
    """A ``LocalCluster`` of worker processes (each with its nanny) listening on 127.0.0.1; a client of it."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1", **options) as cluster, Client(cluster, set_as_default=False) as client:
        yield client


@contextlib.contextmanager
def worker_processes(client: Any, count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` ``dask worker --no-nanny`` processes of ``client``'s scheduler (nothing restarts them)."""
    address = client.scheduler.address
    workers = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--no-nanny",
                                 "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=procs.env())
               for _ in range(count)]
    try:
        client.wait_for_workers(count, timeout=120)
        yield workers
    finally:
        for worker in workers:
            worker.kill()
            worker.wait(30)


def worker_pids(client: Any) -> list[int]:
    """The process ids of the cluster's workers."""
    return sorted(client.run(os.getpid).values())


def wait_without_workers(client: Any, timeout: float = 30) -> None:
    """Wait until the scheduler has seen every worker go."""
    deadline = time.monotonic() + timeout
    while client.nthreads() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not client.nthreads()
