"""Scanning a corpus on a Dask cluster: files partitioned across workers, per-file results combined here.

Each changed file is one task: a worker runs ``pikit.corpus._filescan.scan_file`` on it (the
same lean pass as a local scan, from the stored mark for a file that grew) and returns its
rows; this process writes them into the index. The tables are therefore identical to a
local scan's: the same rows from the same code, and the counting order comes from the
paths, not from the order results arrive in.

Workers must see the files under the same paths: a shared filesystem (NFS, a cluster's
home directories) or URLs that fsspec serves (``s3://bucket/sessions``; install the
matching fsspec backend on the workers).

Every wait has a deadline. :func:`connect` reads the scheduler's handshake itself before
Dask's client connects (within :data:`CONNECT_TIMEOUT`, refusing a first message larger than a
handshake: Dask's client would allocate whatever size a frame header claims). A scan waits
:data:`WORKERS_TIMEOUT` for a worker and stops after :data:`STALL_TIMEOUT` without a result;
what was read by then stays in the index, and the next scan (local or not) reads the rest.
"""

from __future__ import annotations

import contextlib
import queue
import re
import socket
import ssl
import struct
import threading
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

from .._inert import echo
from .._limits import check_seconds
from .._progress import Progress
from ..errors import PikitError
from . import _index as _index
from ._filescan import FileResult, scan_file

__all__ = ["CONNECT_TIMEOUT", "STALL_TIMEOUT", "WORKERS_TIMEOUT", "SchedulerError", "connect", "scan_distributed"]

CONNECT_TIMEOUT = 30.0
"""Seconds to reach a scheduler, its handshake included (and for it to answer during a scan)."""
WORKERS_TIMEOUT = 10.0
"""Seconds a scan waits for the cluster to have a worker (before it starts, and whenever it has none)."""
STALL_TIMEOUT = 60.0
"""Seconds a scan waits for the next file's result."""

_HANDSHAKE_BYTES = 64 * 1024  # a scheduler's first message (its handshake) is under a hundred bytes
_POLL = 1.0  # seconds between looks at the cluster while waiting for a result
_USAGE = "give tcp://HOST:PORT, tls://HOST:PORT or 'local'"
_HOST = re.compile(r"[A-Za-z0-9_.-]+|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*")  # a name, IPv4 or IPv6 (urllib drops the [])
_SILENT = "silent"  # (the probe's answer when the deadline passed)


class SchedulerError(PikitError):
    """The scheduler given as ``scheduler=`` cannot be used: a malformed address, unreachable, silent, not Dask."""

    def __init__(self, address: str, reason: str) -> None:
        self.address = address
        self.reason = reason
        super().__init__(f"scheduler={echo(address)}: {reason}")


def _check_address(scheduler: Any) -> tuple[str, str, int]:
    """``scheduler`` as (scheme, host, port); :class:`SchedulerError` unless it is ``tcp://`` or ``tls://HOST:PORT``."""
    if not isinstance(scheduler, str):
        raise SchedulerError(repr(scheduler), f"not an address; {_USAGE}")
    try:
        if "://" not in scheduler:
            raise ValueError
        parts = urllib.parse.urlsplit(scheduler)
    except ValueError:  # (also urllib's, for a broken [IPv6] host)
        raise SchedulerError(scheduler, f"not an address; {_USAGE}") from None
    if parts.scheme not in ("tcp", "tls"):
        raise SchedulerError(scheduler, f"{parts.scheme or '(no scheme)'}:// is not a scheme pikit connects with; "
                                        f"{_USAGE}")
    try:
        host, port = parts.hostname or "", parts.port
    except ValueError:  # (a port that is not a number, or out of range)
        host, port = "", None
    if not _HOST.fullmatch(host) or port is None or port == 0 or parts.username or parts.password \
            or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise SchedulerError(scheduler, f"not a HOST:PORT address; {_USAGE}")
    return parts.scheme, host, port


def _read(sock: socket.socket, size: int, deadline: float) -> bytes:
    """Exactly ``size`` bytes from ``sock`` before ``deadline`` (``TimeoutError``; ``EOFError`` if it closes)."""
    data = bytearray()
    while len(data) < size:
        sock.settimeout(_left(deadline))
        chunk = sock.recv(min(size - len(data), 65536))
        if not chunk:
            raise EOFError
        data += chunk
    return bytes(data)


def _handshake(sock: socket.socket, deadline: float) -> str | None:
    """Read the scheduler's first message: why it is not a Dask handshake, or None when it is.

    The message is Dask's TCP framing: the byte count of what follows, the number of frames, their
    lengths, then the frames; the first frame is a msgpack map. Nothing beyond
    :data:`_HANDSHAKE_BYTES` is read, and nothing is unpickled.
    """
    import msgpack

    (size,) = struct.unpack("Q", _read(sock, 8, deadline))
    if size > _HANDSHAKE_BYTES or size < 16:
        return f"its first message claims {size:,} bytes, not a Dask handshake"
    body = _read(sock, size, deadline)
    (count,) = struct.unpack_from("Q", body)
    start = 8 * (count + 1)
    lengths = struct.unpack_from(f"{count}Q", body, 8) if count > 0 and start <= size else ()
    if not lengths or sum(lengths) != size - start:
        return "its first message is not in Dask's framing"
    try:
        info = msgpack.unpackb(body[start:start + lengths[0]])
    except Exception:  # (msgpack raises several kinds on bytes that are not msgpack)
        info = None
    if not isinstance(info, dict) or not {"compression", "python", "pickle-protocol"} <= set(info):
        return "its first message is not a Dask handshake"
    return None


def _probe(host: str, port: int, deadline: float, context: ssl.SSLContext | None) -> str | None:
    """Connect and read the handshake before ``deadline``: why the scheduler cannot be used, or None."""
    try:
        with contextlib.ExitStack() as stack:
            sock = stack.enter_context(socket.create_connection((host, port), timeout=_left(deadline)))
            if context is not None:
                sock.settimeout(_left(deadline))
                sock = stack.enter_context(
                    context.wrap_socket(sock, server_hostname=host if context.check_hostname else None))
            return _handshake(sock, deadline)
    except TimeoutError:  # (socket.timeout is TimeoutError)
        return _SILENT
    except EOFError:
        return "it closed the connection before its handshake (is a Dask scheduler listening there?)"
    except ssl.SSLError as exc:
        return f"the TLS handshake failed ({exc.reason or exc})"
    except OSError as exc:
        return f"cannot connect ({exc.strerror or exc})"
    except UnicodeError:  # (a host name that IDNA cannot encode: a label over 63 characters)
        return "cannot connect (not a valid host name)"


def _left(deadline: float) -> float:
    """Seconds until ``deadline`` (a little above zero once it has passed: a socket timeout of 0 would not block)."""
    return max(deadline - time.monotonic(), 0.001)


def _check_scheduler(address: str, scheme: str, host: str, port: int, timeout: float) -> None:
    """:class:`SchedulerError` unless a Dask scheduler answers at the address within ``timeout`` seconds.

    The probe runs in a thread of its own: resolving the host name has no deadline of its own.
    """
    context = None
    if scheme == "tls":
        from distributed.security import Security

        try:
            context = Security().get_connection_args("client")["ssl_context"]
        except (OSError, ValueError) as exc:  # (a certificate file that is missing or not a certificate)
            raise SchedulerError(address, f"the TLS settings of Dask's configuration cannot be used "
                                          f"({_first_line(exc)})") from None
        if context is None:
            raise SchedulerError(address, "tls:// needs TLS settings in Dask's configuration "
                                          "(distributed.comm.tls.ca-file, .client.cert, .client.key)")
    deadline = time.monotonic() + timeout
    answer: list[str | None] = []
    probe = threading.Thread(target=lambda: answer.append(_probe(host, port, deadline, context)),
                             name="pikit-scheduler-probe", daemon=True)
    probe.start()
    probe.join(timeout + 1)
    reason = answer[0] if answer else _SILENT
    if reason is _SILENT:
        raise SchedulerError(address, f"no handshake within {timeout:g} s (is a Dask scheduler listening there?)")
    if reason is not None:
        raise SchedulerError(address, reason)


@contextlib.contextmanager
def connect(scheduler: str = "local", *, timeout: float | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` of the scheduler at ``scheduler``, closed on leaving the block.

    ``scheduler``: ``tcp://HOST:PORT``, ``tls://HOST:PORT`` (with the TLS settings of Dask's
    configuration) or ``"local"`` (a cluster of two worker processes on this machine). The
    scheduler must send its handshake within ``timeout`` seconds (default
    :data:`CONNECT_TIMEOUT`); anything else raises :class:`SchedulerError`, a
    :class:`~pikit.errors.PikitError`. The client is not made Dask's default client.
    """
    scheme, host, port = _check_address(scheduler) if scheduler != "local" else ("", "", 0)
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise PikitError("the Dask engine needs Dask's distributed: pip install 'dask[distributed]'") from None
    if scheduler == "local":
        try:
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        except Exception as exc:  # (Dask raises RuntimeError when a worker process cannot start, ...)
            raise PikitError(f"cannot start a local Dask cluster ({_first_line(exc)})") from None
        with cluster, Client(cluster, set_as_default=False) as client:
            yield client
        return
    timeout = CONNECT_TIMEOUT if timeout is None else check_seconds("timeout", timeout)
    started = time.monotonic()
    _check_scheduler(scheduler, scheme, host, port, timeout)
    try:  # (the scheduler just sent its handshake: Dask's client, whose own wait for it has no deadline, gets it)
        client = Client(f"{scheme}://{host}:{port}" if ":" not in host else f"{scheme}://[{host}]:{port}",
                        timeout=max(timeout - (time.monotonic() - started), 1.0), set_as_default=False)
    except Exception as exc:  # (Dask's client raises OSError, TimeoutError, RuntimeError on refused encryption, ...)
        raise SchedulerError(scheduler, f"cannot connect ({_first_line(exc)})") from None
    with client:
        yield client


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _check_client(client: Any) -> None:
    from distributed import Client

    if not isinstance(client, Client):
        raise PikitError(f"client= takes a distributed.Client, not {type(client).__name__} (for a scheduler's "
                         "address: pikit.corpus.connect(scheduler=...))")
    if client.asynchronous:
        raise PikitError("client= is an asynchronous client; the scan needs a synchronous one (asynchronous=False)")
    if client.status != "running":
        raise PikitError(f"client= is not connected to a scheduler (its status is {client.status!r})")


def _workers(client: Any) -> int:
    """How many workers the scheduler has (it must answer within :data:`CONNECT_TIMEOUT`)."""
    try:
        return len(client.nthreads(callback_timeout=CONNECT_TIMEOUT))
    except Exception as exc:  # (a lost scheduler: OSError, TimeoutError, CommClosedError, ...)
        raise PikitError(f"the Dask scheduler does not answer ({_first_line(exc)})") from None


def _wait_for_workers(client: Any, note: str = "") -> None:
    """Return once the cluster has a worker; :class:`PikitError` after :data:`WORKERS_TIMEOUT` without one."""
    deadline = time.monotonic() + WORKERS_TIMEOUT
    while _workers(client) == 0:
        if time.monotonic() >= deadline:
            raise PikitError(f"the Dask scheduler has had no workers for {WORKERS_TIMEOUT:g} s{note}; start some: "
                             f"dask worker {client.scheduler.address}")
        time.sleep(min(0.2, _left(deadline)))


class _Waiting:
    """The wait for one file's result: :class:`PikitError` after :data:`STALL_TIMEOUT` without it, or once the
    cluster has had no worker for :data:`WORKERS_TIMEOUT`."""

    def __init__(self, client: Any, done: int, total: int) -> None:
        self.client, self.done, self.total = client, done, total
        self.stalled = time.monotonic() + STALL_TIMEOUT

    def slice(self) -> float:
        """Seconds to wait before the next look at the cluster."""
        return _left(min(time.monotonic() + _POLL, self.stalled))

    def look(self) -> None:
        """After a slice without a result: stop if the scan stalled or lost its workers."""
        kept = f" ({self.done:,} of {self.total:,} files read; the index keeps them)"
        if time.monotonic() >= self.stalled:
            raise PikitError(f"no result from the Dask workers for {STALL_TIMEOUT:g} s{kept}; run again to read "
                             "the rest")
        if _workers(self.client) == 0:
            _wait_for_workers(self.client, kept)
            self.stalled = time.monotonic() + STALL_TIMEOUT


def _next(waiting: _Waiting, finished: queue.SimpleQueue[Any], paths: dict[Any, str]) -> FileResult:
    """The result of the next task to finish (tasks that failed: :class:`PikitError`)."""
    future = None
    while True:
        try:
            if future is None:
                future = finished.get(timeout=waiting.slice())
            result = future.result(timeout=waiting.slice())
        except queue.Empty:
            pass
        except TimeoutError:
            if future is not None and future.status == "error":  # (the task's own TimeoutError)
                raise PikitError(_failure(future.exception(timeout=waiting.slice()), paths[future.key], waiting)) \
                    from None
        except Exception as exc:  # (the task's error, KilledWorker, a cancelled future)
            assert future is not None
            raise PikitError(_failure(exc, paths[future.key], waiting)) from None
        else:
            future.release()
            return result
        waiting.look()


def _failure(exc: BaseException, path: str, waiting: _Waiting) -> str:
    from distributed import KilledWorker

    kept = f"{waiting.done:,} of {waiting.total:,} files read; the index keeps them"
    if isinstance(exc, KilledWorker):
        return (f"Dask workers died reading {path} more often than the scheduler allows "
                f"(distributed.scheduler.allowed-failures; {kept})")
    return f"the Dask scan of {path} failed: {type(exc).__name__}: {_first_line(exc)} ({kept})"


def _results(client: Any, jobs: list[_index.Job]) -> Iterator[FileResult]:
    """The jobs' results as they finish, each within :data:`STALL_TIMEOUT` of the one before."""
    if not jobs:
        return
    _wait_for_workers(client)
    futures = client.map(scan_file, *zip(*jobs, strict=True), pure=False)
    paths = {future.key: job[0] for future, job in zip(futures, jobs, strict=True)}
    finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
    for future in futures:
        future.add_done_callback(finished.put)
    try:
        for done in range(len(futures)):
            yield _next(_Waiting(client, done, len(futures)), finished, paths)
    finally:
        for future in futures:
            future.release()


def scan_distributed(index: _index.Index, root: Any, client: Any, progress: Progress = None) -> _index.ScanReport:
    """Bring ``index`` in step with ``root`` using ``client``'s workers (a ``distributed.Client``); ``progress``
    is reported as results arrive (``pikit.corpus._index.scan``).

    Bounded: :class:`~pikit.errors.PikitError` when the cluster has no worker for
    :data:`WORKERS_TIMEOUT`, when no result comes for :data:`STALL_TIMEOUT`, or when a task fails
    (its workers died); the files read until then stay in the index.
    """
    _check_client(client)
    return _index.scan(index, root, progress, runner=lambda jobs: _results(client, jobs))
