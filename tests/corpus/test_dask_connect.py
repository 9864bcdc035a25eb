"""Reaching a Dask scheduler is bounded: silent servers, garbage frames and bad addresses get one line, in time.

The servers are real sockets on 127.0.0.1; the schedulers are real ``LocalCluster`` schedulers.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pikit.corpus import Corpus, SchedulerError, _dask as dask_engine, connect
from pikit.errors import PikitError
from tests import procs
from tests.corpus.clusters import Answer, local_cluster, server

pytestmark = pytest.mark.slow

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "python.md"  # (its limits and guarantees)


def _silent(connection: socket.socket, stopped: threading.Event) -> None:
    stopped.wait()


def _sends(data: bytes, then_close: bool = False) -> Answer:
    def answer(connection: socket.socket, stopped: threading.Event) -> None:
        connection.sendall(data)
        if then_close:
            connection.shutdown(socket.SHUT_RDWR)
        else:
            stopped.wait()

    return answer


def _usage(*argv: str, timeout: float = 120,
           extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return procs.pikit("usage", *argv, timeout=timeout, extra_env=extra_env)


def test_a_silent_scheduler_is_given_up_after_the_default_30_s(sample_corpus: Path, tmp_path: Path) -> None:
    assert dask_engine.CONNECT_TIMEOUT == 30
    assert "no handshake within 30 s" in GUIDE.read_text(encoding="utf-8")
    with server(_silent) as port:
        started = time.monotonic()
        result = _usage(str(sample_corpus), "--index", str(tmp_path / "i.duckdb"), "--engine", "dask",
                        "--scheduler", f"tcp://127.0.0.1:{port}", timeout=90)
        took = time.monotonic() - started
    procs.one_error_line(result, f"--scheduler tcp://127.0.0.1:{port}:", "no handshake within 30 s")
    assert "scheduler=" not in result.stderr.decode()
    assert 30 <= took < 85, took  # (the upper bound only guards against a hang: the run's limit is 90 s)


@pytest.mark.parametrize("answer", [
    _silent,
    _sends(b":\0\0"),  # three bytes of a length, then nothing
    _sends(struct.pack("Q", 58) + b"\x01" + b"\0" * 12),  # a plausible length, a few bytes of the message
], ids=["silent", "part-of-a-length", "part-of-a-message"])
def test_the_handshake_has_a_deadline(answer: Answer) -> None:
    import distributed  # noqa: F401  (imported before the clock starts)

    with server(answer) as port:
        started = time.monotonic()
        with pytest.raises(SchedulerError, match=r"^scheduler='tcp://127.0.0.1:\d+': no handshake within 1.5 s"), \
                connect(f"tcp://127.0.0.1:{port}", timeout=1.5):
            pass
        assert time.monotonic() - started < 25  # (a hang guard, below the 30 s default)


def _garbage_cases() -> list[tuple[str, bytes, int]]:
    """(name, what the server sends first, how many zero bytes follow)."""
    return [("random bytes", os.urandom(4096), 0),
            ("3 EiB claimed", struct.pack("Q", 3 << 60) + os.urandom(64), 0),
            ("3 GiB claimed, then 256 MiB sent", struct.pack("Q", 3 << 30), 256 << 20)]


# Runs ARGV to its end (killed past TIMEOUT seconds) and writes its exit status and peak resident memory
# to OUT. A process started straight from the test would count the test process's own memory: Linux keeps
# the peak of the address space a child had before its exec, and a child forked from a large pytest shares
# it; this small launcher's own address space is fresh after its exec.
_LAUNCHER = r"""
import os, subprocess, sys, time
out, timeout, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
proc = subprocess.Popen(argv)
deadline = time.monotonic() + timeout
while True:
    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
    if pid:
        break
    if time.monotonic() > deadline:
        proc.kill()
    time.sleep(0.05)
with open(out, "w") as handle:
    handle.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss * 1024}")
"""


def _peak_rss(argv: list[str], timeout: float, tmp_path: Path) -> tuple[subprocess.CompletedProcess[bytes], int]:
    """Run a real process to its end (killed past ``timeout``): its result and peak resident memory in bytes."""
    report = tmp_path / "peak.txt"
    done = subprocess.run([sys.executable, "-c", _LAUNCHER, str(report), str(timeout), *argv], capture_output=True,
                          env=procs.env(), timeout=timeout + 30)
    code, peak = map(int, report.read_text().split())
    return subprocess.CompletedProcess(argv, code, done.stdout, done.stderr), peak


@pytest.mark.parametrize("name,first,zeros", _garbage_cases(), ids=[c[0] for c in _garbage_cases()])
def test_garbage_frames_are_refused_without_allocating(name: str, first: bytes, zeros: int, sample_corpus: Path,
                                                        tmp_path: Path) -> None:
    def answer(connection: socket.socket, stopped: threading.Event) -> None:
        connection.sendall(first)
        chunk = bytes(1 << 20)
        for _ in range(zeros >> 20):
            connection.sendall(chunk)
        stopped.wait()

    with server(answer) as port:
        address = f"tcp://127.0.0.1:{port}"
        result, peak = _peak_rss([sys.executable, "-m", "pikit", "usage", str(sample_corpus), "--index",
                                  str(tmp_path / "i.duckdb"), "--engine", "dask", "--scheduler", address], 60,
                                 tmp_path)
    procs.one_error_line(result, f"--scheduler {address}:", "not a Dask handshake")
    assert peak < 160 << 20, f"{name}: peak resident memory {peak >> 20} MiB"


@pytest.mark.parametrize("first,reason", [
    (struct.pack("Q", 3 << 60), "claims 3,458,764,513,820,540,928 bytes"),
    (struct.pack("Q", 16) + struct.pack("Q", 1 << 61) + b"\0" * 8, "not in Dask's framing"),  # 2**61 frames
    (struct.pack("Q", 24) + struct.pack("QQ", 1, 1 << 40) + b"\0" * 8, "not in Dask's framing"),  # a 1 TiB frame
    (struct.pack("Q", 17) + struct.pack("QQ", 1, 1) + b"\xc1", "not a Dask handshake"),  # not msgpack
    (struct.pack("Q", 19) + struct.pack("QQ", 1, 3) + b"\x92\x01\x02", "not a Dask handshake"),  # not a map
], ids=["huge-length", "huge-frame-count", "huge-frame", "not-msgpack", "not-a-map"])
def test_a_malformed_handshake_gets_one_line(first: bytes, reason: str) -> None:
    with server(_sends(first)) as port, pytest.raises(SchedulerError, match=reason) as caught, \
            connect(f"tcp://127.0.0.1:{port}", timeout=10):
        pass
    assert str(caught.value).startswith(f"scheduler='tcp://127.0.0.1:{port}': its first message")


def test_a_server_that_hangs_up_gets_one_line() -> None:
    with server(_sends(b"", then_close=True)) as port, \
            pytest.raises(SchedulerError, match="closed the connection before its handshake"), \
            connect(f"tcp://127.0.0.1:{port}", timeout=10):
        pass


BAD_ADDRESSES = ["udp://127.0.0.1:8786", "inproc://192.0.2.1/1/1", "ws://127.0.0.1:8786", "garbage", "",
                 "127.0.0.1:8786", "tcp://", "tcp://127.0.0.1", "tcp://:8786", "tcp://127.0.0.1:0",
                 "tcp://127.0.0.1:99999", "tcp://127.0.0.1:port", "tcp://[::1", "tcp://127.0.0.1:8786/path",
                 "tcp://user@127.0.0.1:8786", "tcp://127.0.0.1:8786?x=1", "tcp://\x00:1", "local "]


@pytest.mark.parametrize("address", BAD_ADDRESSES)
def test_bad_addresses_get_one_line_in_the_library(address: str) -> None:
    started = time.monotonic()
    with pytest.raises(SchedulerError, match=r"scheduler=.*give tcp://HOST:PORT, tls://HOST:PORT or 'local'"), \
            connect(address):
        pass
    assert time.monotonic() - started < 20  # (refused before any connection: the default wait is 30 s)


def test_bad_addresses_get_one_line_on_the_command_line(sample_corpus: Path, tmp_path: Path) -> None:
    for address in ("udp://127.0.0.1:8786", "inproc://192.0.2.1/1/1", "garbage", "tcp://127.0.0.1:99999", ""):
        result = _usage(str(sample_corpus), "--index", str(tmp_path / "i.duckdb"), "--engine", "dask",
                        "--scheduler", address)
        line = procs.one_error_line(result, f"--scheduler {address or repr(address)}:", "give tcp://HOST:PORT")
        assert "scheduler=" not in line
    result = _usage(str(sample_corpus), "--index", str(tmp_path / "i.duckdb"), "--scheduler", "")
    procs.one_error_line(result, "--scheduler goes with --engine dask")  # (an empty one too, without the engine)
    assert not (tmp_path / "i.duckdb").exists()  # (refused before the index is opened)


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), -1.0])
def test_a_timeout_that_is_not_finite_seconds_is_refused(timeout: float) -> None:
    with pytest.raises(PikitError, match=r"^timeout must be a number of seconds"), \
            connect("tcp://127.0.0.1:8786", timeout=timeout):
        pass


def test_no_listener_gets_one_line(sample_corpus: Path, tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
    result = _usage(str(sample_corpus), "--index", str(tmp_path / "i.duckdb"), "--engine", "dask", "--scheduler",
                    f"tcp://127.0.0.1:{port}")
    procs.one_error_line(result, f"--scheduler tcp://127.0.0.1:{port}: cannot connect")
    with pytest.raises(SchedulerError, match="cannot connect"), connect("tcp://name.invalid:8786", timeout=10):
        pass


def test_client_must_be_a_connected_client(sample_corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(PikitError, match=r"^client= takes a distributed.Client, not str .*connect\(scheduler="):
        Corpus.open(sample_corpus, index=tmp_path / "i.duckdb", client="tcp://127.0.0.1:8786")
    from distributed import Client

    async def asynchronous(address: str) -> None:
        async with Client(address, asynchronous=True, set_as_default=False) as client:
            with pytest.raises(PikitError, match=r"^client= is an asynchronous client; the scan needs a synchronous "):
                Corpus.open(sample_corpus, index=tmp_path / "i.duckdb", client=client)

    failed: list[BaseException] = []

    def run_on_a_loop_of_its_own(address: str) -> None:  # (an earlier test may leave this thread's loop running)
        try:
            asyncio.run(asynchronous(address))
        except BaseException as exc:
            failed.append(exc)

    with local_cluster(0) as client:
        thread = threading.Thread(target=run_on_a_loop_of_its_own, args=(client.scheduler.address,))
        thread.start()
        thread.join(60)
    assert not thread.is_alive() and not failed, failed
    with pytest.raises(PikitError, match=r"^client= is not connected to a scheduler \(its status is 'closed'\)"):
        Corpus.open(sample_corpus, index=tmp_path / "i.duckdb", client=client)


def _local_rows(sample_corpus: Path, tmp_path: Path) -> list[dict[str, object]]:
    with Corpus.open(sample_corpus, index=tmp_path / "local.duckdb", workers=1) as local:
        return local.usage_rows("day", timezone="UTC")


def test_tcp_scheduler(sample_corpus: Path, tmp_path: Path) -> None:
    with local_cluster(1) as client:
        result = _usage(str(sample_corpus), "--index", str(tmp_path / "d.duckdb"), "--json", "--timezone", "UTC",
                        "--engine", "dask", "--scheduler", client.scheduler.address)
        assert result.returncode == 0, result.stderr.decode()
    assert json.loads(result.stdout)["rows"] == _local_rows(sample_corpus, tmp_path)


def test_tls_scheduler(sample_corpus: Path, tmp_path: Path) -> None:
    from distributed.security import Security

    security = Security.temporary()
    settings = {}
    for name, value in [("CA_FILE", security.tls_ca_file), ("CLIENT__CERT", security.tls_client_cert),
                        ("CLIENT__KEY", security.tls_client_key)]:
        path = tmp_path / f"{name.lower()}.pem"
        path.write_text(str(value), encoding="ascii")
        settings[f"DASK_DISTRIBUTED__COMM__TLS__{name}"] = str(path)
    with local_cluster(1, security=security, protocol="tls://") as client:
        address = client.scheduler.address
        assert address.startswith("tls://")
        result = _usage(str(sample_corpus), "--index", str(tmp_path / "d.duckdb"), "--json", "--timezone", "UTC",
                        "--engine", "dask", "--scheduler", address, extra_env=settings)
        assert result.returncode == 0, result.stderr.decode()
        unset = _usage(str(sample_corpus), "--index", str(tmp_path / "e.duckdb"), "--engine", "dask",
                       "--scheduler", address)
        procs.one_error_line(unset, f"--scheduler {address}: tls:// needs TLS settings in Dask's configuration")
        with pytest.raises(SchedulerError, match="no handshake within 1 s"), \
                connect(address.replace("tls://", "tcp://"), timeout=1):
            pass  # (a TLS server waits for the client's hello)
    with server(_sends(b"plain text, not TLS" * 10)) as port:
        plain = _usage(str(sample_corpus), "--index", str(tmp_path / "e.duckdb"), "--engine", "dask",
                       "--scheduler", f"tls://127.0.0.1:{port}", extra_env=settings)
    procs.one_error_line(plain, f"--scheduler tls://127.0.0.1:{port}: the TLS handshake failed")
    assert json.loads(result.stdout)["rows"] == _local_rows(sample_corpus, tmp_path)


def test_a_local_cluster_that_cannot_start_gets_one_error(tmp_path: Path) -> None:
    """A script read from standard input: the worker processes cannot import its main module."""
    script = ("from pikit.corpus._dask import connect\nfrom pikit.errors import PikitError\ntry:\n"
              "    with connect('local'):\n        print('started')\nexcept PikitError as exc:\n    print(exc)\n")
    result = subprocess.run([sys.executable, "-"], input=script.encode(), capture_output=True, timeout=120,
                            env=procs.env(), cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().startswith("cannot start a local Dask cluster (")
