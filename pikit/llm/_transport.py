"""The HTTP layer shared by the summarizer clients: retries, backoff, time and size limits, clean errors.

Layers, bottom up:

- :class:`RetryPolicy`: how many extra attempts, and how long to wait before each one
  (exponential backoff with full jitter, or the server's ``Retry-After`` on 429/503, capped);
- :class:`RetryingClient`: POSTs JSON with a synchronous :class:`httpx.Client` and that
  policy, and turns every failure into a one-line :class:`~pikit.errors.SummarizerError`
  (one of its subclasses, with ``status`` and ``retryable``) that never contains a secret;
- ``pikit.llm._client.HTTPSummarizer``: the skeleton of a summarizer speaking one
  provider's protocol; ``pikit.llm._openai`` and ``pikit.llm._anthropic`` fill it in.

Every attempt is bounded as a whole: ``timeout`` covers connecting, waiting for the headers
and reading the body, even from a server that trickles one byte at a time (when the time is
up the connection is shut down). A body is read up to :data:`MAX_RESPONSE_BYTES` and no
further. Redirects are never followed (the key would travel with the request), and an HTML
page is never taken for an answer, whatever its status.

httpx is imported lazily, when a request is made, so ``import pikit.llm`` stays cheap and
works without it.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import logging
import math
import random
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from pikit._limits import ONE_DAY
from pikit.errors import (
    SummarizerAuthError,
    SummarizerConfigError,
    SummarizerConnectionError,
    SummarizerError,
    SummarizerHTTPError,
    SummarizerNotAPIError,
    SummarizerOutputError,
    SummarizerRateLimitError,
    SummarizerRedirectError,
    SummarizerServerError,
    SummarizerTimeout,
    SummarizerTooLargeError,
)
from pikit.llm._secrets import clean_message, contains_key

if TYPE_CHECKING:
    import httpx

__all__ = [
    "MAX_RESPONSE_BYTES",
    "MAX_TIMEOUT",
    "RetryPolicy",
    "RetryingClient",
    "parse_retry_after",
    "require_httpx",
    "token_count",
]

log = logging.getLogger("pikit.llm")

#: The largest answer body read (16 MiB); a longer one is refused, never read to its end.
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
#: The longest ``timeout`` accepted, in seconds (a day).
MAX_TIMEOUT = ONE_DAY
_ERROR_BODY_BYTES = 64 * 1024  # of an error answer, only this much is read (for its message)
_RETRY_AFTER_STATUSES = frozenset({429, 503})


def require_httpx() -> ModuleType:
    """Import and return httpx, or raise a :class:`SummarizerConfigError` telling how to install it."""
    try:
        import httpx
    except ImportError:  # pragma: no cover - httpx is installed in the test environment
        raise SummarizerConfigError(
            "the HTTP summarizers need httpx, which is not installed; run: pip install 'pikit[llm]'"
        ) from None
    return httpx


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait according to a ``Retry-After`` header value, or ``None`` if unusable.

    Accepts delta-seconds (``"2"``, ``"0.5"``) and HTTP dates; never returns a negative delay.
    """
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


class _Uniform(Protocol):
    def uniform(self, a: float, b: float, /) -> float: ...


@dataclass(frozen=True)
class RetryPolicy:
    """When to try again, and how long to wait first.

    Attributes:
        retries: extra attempts after the first one (0 = no retry).
        backoff: base delay in seconds; before extra attempt *n* (0-based) the client waits a
            random time in ``[0, min(max_backoff, backoff * 2**n)]`` ("full jitter").
        max_backoff: cap of the exponential delay, in seconds.
        max_retry_after: cap, in seconds, of a server's ``Retry-After`` (honoured on 429/503).
    """

    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"retries must be a non-negative integer, not {self.retries!r}")
        for name in ("backoff", "max_backoff", "max_retry_after"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a non-negative number of seconds, not {value!r}")

    def delay(self, retry: int, retry_after: float | None, rng: _Uniform) -> float:
        """Seconds to wait before extra attempt ``retry`` (0-based).

        A server's ``retry_after`` wins (capped at ``max_retry_after``); otherwise full jitter.
        """
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        ceiling = min(self.max_backoff, self.backoff * (2.0**retry))
        return rng.uniform(0.0, ceiling)


def _error_detail(content: bytes) -> tuple[str, str]:
    """``(message, code)`` found in an error body (OpenAI or Anthropic shape), else raw text."""
    text = content.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text, ""
    if isinstance(data, Mapping):
        error = data.get("error")
        if isinstance(error, Mapping):
            message = error.get("message")
            code = error.get("code") or error.get("type") or ""
            if isinstance(message, str):
                return message, str(code)
            return text, str(code)
        if isinstance(error, str):
            return error, ""
        if isinstance(data.get("message"), str):
            return str(data["message"]), ""
    return text, ""


def _strings(value: Any) -> Iterator[str]:
    """Every string in a decoded JSON value, keys included (iterative: any depth)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


class _Deadline:
    """Bounds one attempt as a whole: when the time is up, the sockets it opened are shut down.

    httpx's own timeouts apply to each network operation, so a server sending one byte now
    and then never trips them. The connection's socket is taken from httpcore's ``trace``
    request extension as it is opened; a timer shuts it down at the deadline, which wakes the
    blocked read at once.
    """

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def trace(self, name: str, info: Mapping[str, Any]) -> None:
        """The ``trace`` extension: remember each new connection's socket."""
        if not name.endswith("connect_tcp.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                self._shut(sock)

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


def _host(url: str) -> str | None:
    try:
        return urllib.parse.urlsplit(url).hostname
    except ValueError:
        return None


class RetryingClient:
    """POST JSON with retries; owns a lazily created synchronous :class:`httpx.Client`.

    Retries (at most ``policy.retries`` extra attempts) happen exactly for the errors whose
    ``retryable`` is true: HTTP 429 (unless the quota is exhausted), any 5xx, timeouts and
    connection errors. ``timeout`` bounds each attempt as a whole.

    Args:
        label: how errors name the caller, e.g. ``"openai summarizer"``.
        timeout: seconds per attempt, from the first byte sent to the last byte read
            (at most :data:`MAX_TIMEOUT`).
        policy: the retry policy.
        transport: an httpx transport to use instead of the network (tests, proxies).
        secrets: strings that must never appear in error messages or logs, in any form
            (see ``pikit.llm._secrets.key_forms``); an answer holding one is refused.
        key_env: the environment variable holding the key, named in authentication errors.
        sleep: how to wait between attempts (tests pass a recorder).
        rng: the source of jitter (anything with ``uniform(a, b)``).
        max_response_bytes: the largest body read.
    """

    def __init__(
        self,
        *,
        label: str,
        timeout: float,
        policy: RetryPolicy,
        transport: httpx.BaseTransport | None = None,
        secrets: Iterable[str | None] = (),
        key_env: str = "",
        sleep: Callable[[float], None] = time.sleep,
        rng: _Uniform | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= MAX_TIMEOUT:
            raise ValueError(f"timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:,.0f}, "
                             f"not {timeout!r}")
        self.label = label
        self.timeout = float(timeout)
        self.policy = policy
        self.key_env = key_env
        self.sleep = sleep
        self.rng: _Uniform = rng if rng is not None else random.Random()
        self.max_response_bytes = max_response_bytes
        self.last_attempts = 0
        """How many attempts the last :meth:`post_json` made."""
        self._transport = transport
        self._secrets = tuple(s for s in secrets if s)
        self._client: httpx.Client | None = None
        self._retry_after: float | None = None

    def __repr__(self) -> str:
        return f"RetryingClient(label={self.label!r}, timeout={self.timeout:g}, policy={self.policy!r})"

    @property
    def client(self) -> httpx.Client:
        """The underlying :class:`httpx.Client`, created on first use."""
        if self._client is None or self._client.is_closed:
            httpx = require_httpx()
            self._client = httpx.Client(
                transport=self._transport,
                timeout=httpx.Timeout(self.timeout),
                follow_redirects=False,
                # A fresh connection per attempt: its socket is the one the deadline watches.
                limits=httpx.Limits(max_keepalive_connections=0),
            )
        return self._client

    def close(self) -> None:
        """Close the HTTP client (a later request opens a new one)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def error(self, message: str, kind: type[SummarizerError] = SummarizerError, *, status: int | None = None,
              retryable: bool | None = None) -> SummarizerError:
        """A ``kind`` error for ``message``: labelled, on one line, secrets removed."""
        return kind(clean_message(f"{self.label}: {message}", self._secrets, limit=600), status=status,
                    retryable=retryable)

    def post_json(self, url: str, *, headers: Mapping[str, str], body: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``body`` as JSON to ``url`` and return the decoded JSON object of a 2xx answer.

        Raises:
            SummarizerError: a subclass saying what failed: after the last attempt of a
                retryable failure, at once for any other.
        """
        attempts = self.policy.retries + 1
        for attempt in range(attempts):
            self.last_attempts = attempt + 1
            self._retry_after = None
            try:
                return self._attempt(url, headers, body, attempts)
            except SummarizerError as exc:
                if not exc.retryable or attempt == attempts - 1:
                    raise
                reason = (f"HTTP {exc.status}" if exc.status is not None else
                          f"timed out after {self.timeout:g}s" if isinstance(exc, SummarizerTimeout) else
                          "connection failed")
            delay = self.policy.delay(attempt, self._retry_after, self.rng)
            log.info("%s", clean_message(f"{self.label}: {reason} from {url}; retrying in {delay:.2f}s "
                                         f"(attempt {attempt + 2} of {attempts})", self._secrets))
            self.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover - the loop always returns or raises

    def _attempt(self, url: str, headers: Mapping[str, str], body: Mapping[str, Any], attempts: int) -> dict[str, Any]:
        httpx = require_httpx()
        client = self.client
        sent = {"accept-encoding": "identity", **headers}  # sizes are counted on the wire: no compression
        with _Deadline(self.timeout) as deadline:
            try:
                with client.stream("POST", url, headers=sent, json=body,
                                   extensions={"trace": deadline.trace}) as response:
                    return self._answer(response, url, attempts)
            except httpx.TimeoutException:
                raise self._timed_out(url, attempts) from None
            except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                if deadline.expired:
                    raise self._timed_out(url, attempts) from None
                raise self.error(f"cannot reach {url} after {attempts} attempt(s): connection failed "
                                 f"({type(exc).__name__}: {exc}); check the base URL and that the server is "
                                 "running", SummarizerConnectionError) from None
            except (httpx.HTTPError, httpx.InvalidURL) as exc:  # unsupported scheme, bad URL, proxy…
                raise self.error(f"cannot send the request to {url} ({type(exc).__name__}: {exc}); check the base "
                                 "URL", SummarizerConfigError) from None

    def _timed_out(self, url: str, attempts: int) -> SummarizerError:
        return self.error(f"no answer from {url}: timed out after {self.timeout:g}s on each of {attempts} "
                          "attempt(s); raise the timeout or check that the server is responsive", SummarizerTimeout)

    def _read(self, response: httpx.Response, limit: int, url: str, refuse: bool) -> bytes:
        """The body, up to ``limit`` bytes: beyond it, refused (``refuse``) or cut."""
        declared = response.headers.get("content-length", "")
        if refuse and declared.isdigit() and int(declared) > limit:
            raise self._too_large(response, url, f"{int(declared):,} bytes announced")
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > limit:
                if refuse:
                    raise self._too_large(response, url, "more than that sent")
                chunks.append(chunk[: len(chunk) - (size - limit)])
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def _too_large(self, response: httpx.Response, url: str, how: str) -> SummarizerError:
        return self.error(f"the answer from {url} is larger than {self.max_response_bytes / 2**20:g} MiB ({how}); "
                          "refused without reading it; check the base URL and the server", SummarizerTooLargeError,
                          status=response.status_code)

    def _answer(self, response: httpx.Response, url: str, attempts: int) -> dict[str, Any]:
        status = response.status_code
        if 300 <= status < 400:
            raise self._redirect(response, url)
        if not 200 <= status < 300:
            raise self._status_error(response, self._read(response, _ERROR_BODY_BYTES, url, refuse=False), url,
                                     attempts)
        content = self._read(response, self.max_response_bytes, url, refuse=True)
        kind = response.headers.get("content-type", "").lower()
        if "html" in kind or content.lstrip()[:1] == b"<":
            raise self.error(f"the answer from {url} is an HTML page (HTTP {status}), not the API's JSON; the base "
                             "URL points at a website, a login page or a proxy: check it", SummarizerNotAPIError,
                             status=status)
        try:
            data = json.loads(content.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            raise self.error(f"the answer from {url} is not a JSON object (HTTP {status}, {len(content)} bytes); "
                             "check that the base URL points at the right kind of API", SummarizerNotAPIError,
                             status=status)
        if self._secrets and (contains_key(content.decode("utf-8", errors="replace"), self._secrets)
                              or any(contains_key(text, self._secrets) for text in _strings(data))):
            raise self.error(f"the answer from {url} contains the API key (the server echoes the request's "
                             "credentials); refused, nothing written. Check the base URL", SummarizerOutputError,
                             status=status)
        return data

    def _redirect(self, response: httpx.Response, url: str) -> SummarizerError:
        status = response.status_code
        location = response.headers.get("location", "")
        target = urllib.parse.urljoin(url, location) if location else ""
        if target and _host(target) != _host(url):
            why = (f"to another host ({_host(target)}); pikit does not follow it, since the API key would go "
                   "along. If that host is right, give it as the base URL")
        elif target:
            why = f"to {target}; pikit does not follow redirects: give the final address as the base URL"
        else:
            why = "without a location; check the base URL"
        return self.error(f"HTTP {status} from {url}: a redirect {why}", SummarizerRedirectError, status=status)

    def _status_error(self, response: httpx.Response, content: bytes, url: str, attempts: int) -> SummarizerError:
        status = response.status_code
        message, code = _error_detail(content)
        # Clean (and so redact) the server's text before it is cut, never after.
        detail = clean_message(message, self._secrets, limit=200)
        detail = f" ({detail})" if detail else ""
        key = f" ({self.key_env})" if self.key_env else ""
        kind: type[SummarizerError] = SummarizerHTTPError
        retryable = False
        if status == 401:
            hint, kind = f"authentication failed; check the API key{key}", SummarizerAuthError
        elif status == 403:
            hint, kind = "access denied; check the API key's permissions and the model name", SummarizerAuthError
        elif status == 404:
            hint = "not found; check the base URL and the model name"
        elif status == 413:
            hint = "the request is too large; summarize less text"
        elif status == 429 and code == "insufficient_quota":
            hint, kind = "the account's quota is exhausted; check its plan and billing", SummarizerRateLimitError
        elif status == 429:
            hint, kind, retryable = (f"still rate limited after {attempts} attempt(s); wait and try again, or allow "
                                     "more retries", SummarizerRateLimitError, True)
        elif status >= 500:
            hint, kind, retryable = (f"the server kept failing after {attempts} attempt(s); try again later",
                                     SummarizerServerError, True)
        else:
            hint = "the request was rejected; check the model name and the options"
        if retryable and status in _RETRY_AFTER_STATUSES:
            self._retry_after = parse_retry_after(response.headers.get("retry-after"))
        return self.error(f"HTTP {status} from {url}{detail}: {hint}", kind, status=status, retryable=retryable)


def token_count(value: Any) -> int:
    """A token count from a provider's usage field: non-negative ints, anything else → 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return max(0, int(value))
