"""The HTTP layer shared by the summarizer clients: retries, backoff, timeouts, clean errors.

Layers, bottom up:

- :class:`RetryPolicy`: how many extra attempts, and how long to wait before each one
  (exponential backoff with full jitter, or the server's ``Retry-After`` on 429/503, capped);
- :class:`RetryingClient`: POSTs JSON with a synchronous :class:`httpx.Client` and that
  policy, and turns every failure into a one-line :class:`~pikit.errors.SummarizerError`
  that never contains a secret;
- :class:`HTTPSummarizer`: the skeleton of a summarizer speaking one provider's protocol
  (key handling, ``max_tokens`` from the model table, ``close``/``with``, a safe ``repr``);
  :mod:`pikit.llm.openai` and :mod:`pikit.llm.anthropic` fill in the wire format.

httpx is imported lazily, when a request is made, so ``import pikit.llm`` stays cheap and
works without it.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import os
import random
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self

from pikit.errors import SummarizerError
from pikit.llm.base import SummaryRequest, SummaryResult
from pikit.llm.models import ModelInfo, lookup_model
from pikit.llm.prompts import build_prompt

if TYPE_CHECKING:
    import httpx

__all__ = [
    "HTTPSummarizer",
    "RetryPolicy",
    "RetryingClient",
    "Secret",
    "clean_message",
    "parse_retry_after",
    "require_httpx",
    "token_count",
]

log = logging.getLogger("pikit.llm")

_RETRY_AFTER_STATUSES = frozenset({429, 503})
_MESSAGE_LIMIT = 300


def require_httpx() -> ModuleType:
    """Import and return httpx, or raise a :class:`SummarizerError` telling how to install it."""
    try:
        import httpx
    except ImportError as exc:  # pragma: no cover - httpx is installed in the test environment
        raise SummarizerError(
            "the HTTP summarizers need httpx, which is not installed; run: pip install 'pikit[llm]'"
        ) from exc
    return httpx


class Secret:
    """A string (an API key) that never shows in ``repr``/``str``; :meth:`reveal` returns it."""

    __slots__ = ("_value",)

    def __init__(self, value: str | None) -> None:
        self._value = value or None

    def reveal(self) -> str | None:
        """The secret itself (``None`` when unset)."""
        return self._value

    def __bool__(self) -> bool:
        return self._value is not None

    def __repr__(self) -> str:
        return "Secret('<hidden>')" if self._value else "Secret(None)"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Secret, self._value))


def clean_message(text: str, secrets: Iterable[str | None] = (), limit: int = _MESSAGE_LIMIT) -> str:
    """``text`` on one line: secrets replaced by ``***``, whitespace collapsed, cut to ``limit``.

    Secrets are removed *before* cutting, so a cut can never leave part of a secret behind.
    """
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


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


def _error_detail(response: httpx.Response) -> tuple[str, str]:
    """``(message, code)`` found in an error body (OpenAI or Anthropic shape), else raw text."""
    try:
        data = json.loads(response.content)
    except ValueError:
        return response.text, ""
    if isinstance(data, Mapping):
        error = data.get("error")
        if isinstance(error, Mapping):
            message = error.get("message")
            code = error.get("code") or error.get("type") or ""
            if isinstance(message, str):
                return message, str(code)
            return json.dumps(error), str(code)
        if isinstance(error, str):
            return error, ""
        if isinstance(data.get("message"), str):
            return str(data["message"]), ""
    return response.text, ""


class RetryingClient:
    """POST JSON with retries; owns a lazily created synchronous :class:`httpx.Client`.

    Retries (at most ``policy.retries`` extra attempts) happen on HTTP 429, on any 5xx, on
    timeouts and on connection errors; other 4xx answers fail at once, and so does a 429 whose
    error code says the quota is exhausted. ``timeout`` applies to each attempt.

    Args:
        label: how errors name the caller, e.g. ``"openai summarizer"``.
        timeout: seconds per attempt (connect, read, write and pool each).
        policy: the retry policy.
        transport: an httpx transport to use instead of the network (tests, proxies).
        secrets: strings that must never appear in error messages or logs.
        key_env: the environment variable holding the key, named in authentication errors.
        sleep: how to wait between attempts (tests pass a recorder).
        rng: the source of jitter (anything with ``uniform(a, b)``).
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
    ) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        self.label = label
        self.timeout = float(timeout)
        self.policy = policy
        self.key_env = key_env
        self.sleep = sleep
        self.rng: _Uniform = rng if rng is not None else random.Random()
        self.last_attempts = 0
        """How many attempts the last :meth:`post_json` made."""
        self._transport = transport
        self._secrets = tuple(s for s in secrets if s)
        self._client: httpx.Client | None = None

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
            )
        return self._client

    def close(self) -> None:
        """Close the HTTP client (a later request opens a new one)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def error(self, message: str) -> SummarizerError:
        """A :class:`SummarizerError` for ``message``: labelled, on one line, secrets removed."""
        return SummarizerError(clean_message(f"{self.label}: {message}", self._secrets, limit=600))

    def post_json(self, url: str, *, headers: Mapping[str, str], body: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``body`` as JSON to ``url`` and return the decoded JSON object of a 2xx answer.

        Raises:
            SummarizerError: after the last attempt failed, on a non-retryable status, or when
                the answer is not a JSON object.
        """
        httpx = require_httpx()
        client = self.client
        attempts = self.policy.retries + 1
        for attempt in range(attempts):
            self.last_attempts = attempt + 1
            is_last = attempt == attempts - 1
            retry_after: float | None = None
            try:
                response = client.post(url, headers=dict(headers), json=body)
            except httpx.TimeoutException as exc:
                reason = f"timed out after {self.timeout:g}s"
                if is_last:
                    raise self.error(
                        f"no answer from {url}: {reason} on each of {attempts} attempt(s); "
                        "raise the timeout or check that the server is responsive"
                    ) from exc
            except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                reason = f"connection failed ({type(exc).__name__}: {exc})"
                if is_last:
                    raise self.error(
                        f"cannot reach {url} after {attempts} attempt(s): {reason}; "
                        "check the base URL and that the server is running"
                    ) from exc
            except (httpx.HTTPError, httpx.InvalidURL) as exc:  # unsupported scheme, bad URL, proxy…
                raise self.error(
                    f"cannot send the request to {url} ({type(exc).__name__}: {exc}); check the base URL"
                ) from exc
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return self._decode(response, url)
                retryable = status == 429 or 500 <= status <= 599
                if retryable and status == 429:
                    _, code = _error_detail(response)
                    retryable = code != "insufficient_quota"
                if not retryable or is_last:
                    raise self._status_error(response, url, attempts if retryable else attempt + 1)
                reason = f"HTTP {status}"
                if status in _RETRY_AFTER_STATUSES:
                    retry_after = parse_retry_after(response.headers.get("retry-after"))
            delay = self.policy.delay(attempt, retry_after, self.rng)
            log.info(
                "%s",
                clean_message(
                    f"{self.label}: {reason} from {url}; retrying in {delay:.2f}s "
                    f"(attempt {attempt + 2} of {attempts})",
                    self._secrets,
                ),
            )
            self.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover - the loop always returns or raises

    def _decode(self, response: httpx.Response, url: str) -> dict[str, Any]:
        try:
            data = json.loads(response.content)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise self.error(
                f"the answer from {url} is not a JSON object (HTTP {response.status_code}, "
                f"{len(response.content)} bytes); check that the base URL points at the right kind of API"
            )
        return data

    def _status_error(self, response: httpx.Response, url: str, attempts: int) -> SummarizerError:
        status = response.status_code
        message, code = _error_detail(response)
        # Clean (and so redact) the server's text before it is cut, never after.
        detail = clean_message(message, self._secrets, limit=200)
        detail = f" ({detail})" if detail else ""
        key = f" ({self.key_env})" if self.key_env else ""
        if status == 401:
            hint = f"authentication failed; check the API key{key}"
        elif status == 403:
            hint = "access denied; check the API key's permissions and the model name"
        elif status == 404:
            hint = "not found; check the base URL and the model name"
        elif status == 413:
            hint = "the request is too large; summarize less text"
        elif status == 429 and code == "insufficient_quota":
            hint = "the account's quota is exhausted; check its plan and billing"
        elif status == 429:
            hint = f"still rate limited after {attempts} attempt(s); wait and try again, or allow more retries"
        elif status >= 500:
            hint = f"the server kept failing after {attempts} attempt(s); try again later"
        else:
            hint = "the request was rejected; check the model name and the options"
        return self.error(f"HTTP {status} from {url}{detail}: {hint}")


class HTTPSummarizer:
    """Base of the HTTP summarizers: configuration, key handling and the request cycle.

    Subclasses set the class attributes and implement :meth:`_build_request` and
    :meth:`_parse_answer`. Instances own an HTTP client: call :meth:`close` when done, or use
    them in a ``with`` block. The API key is kept in a :class:`Secret` and never appears in
    ``repr``, errors or logs.
    """

    name: str = "http"
    """Short name of the summarizer (the protocol's ``name``)."""
    default_base_url: ClassVar[str] = ""
    official_host: ClassVar[str] = ""
    api_key_env: ClassVar[str] = ""
    endpoint: ClassVar[str] = ""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120,
        retries: int = 3,
        transport: httpx.BaseTransport | None = None,
        *,
        backoff: float = 0.5,
        max_tokens: int | None = None,
        provider: str | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError("model must be a non-empty model id")
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0
        ):
            raise ValueError(f"max_tokens must be a positive integer, not {max_tokens!r}")
        self.model = model
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.provider = provider or self.name
        self.model_info: ModelInfo = self._lookup(model)
        self.max_tokens = max_tokens if max_tokens is not None else self.model_info.max_output_tokens
        key = api_key if api_key else os.environ.get(self.api_key_env) or None
        self._api_key = Secret(key)
        if not self._api_key and self.is_official:
            raise SummarizerError(
                f"{self.name} summarizer: no API key for {self.official_host}; "
                f"set {self.api_key_env} or pass api_key=..."
            )
        self.http: RetryingClient = RetryingClient(  # the HTTP layer (public for inspection and tests)
            label=f"{self.name} summarizer",
            timeout=timeout,
            policy=RetryPolicy(retries=retries, backoff=backoff),
            transport=transport,
            secrets=(key,),
            key_env=self.api_key_env,
        )

    def _lookup(self, model: str) -> ModelInfo:
        info = lookup_model(f"{self.provider}/{model}")
        if not info.known and "/" in model:
            info = lookup_model(model)
        return info

    @property
    def is_official(self) -> bool:
        """Whether the base URL is the provider's own API host."""
        try:
            host = urllib.parse.urlsplit(self.base_url).hostname
        except ValueError:
            return False
        return host == self.official_host

    @property
    def url(self) -> str:
        """The endpoint the summarizer POSTs to."""
        return f"{self.base_url}{self.endpoint}"

    @property
    def timeout(self) -> float:
        """Seconds allowed per attempt."""
        return self.http.timeout

    @property
    def retries(self) -> int:
        """Extra attempts after a retryable failure."""
        return self.http.policy.retries

    @property
    def has_api_key(self) -> bool:
        """Whether an API key is configured (the key itself is never exposed)."""
        return bool(self._api_key)

    @property
    def last_attempts(self) -> int:
        """How many HTTP attempts the last :meth:`summarize` made."""
        return self.http.last_attempts

    def __repr__(self) -> str:
        key = "<set>" if self._api_key else None
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
            f"api_key={key}, timeout={self.timeout:g}, retries={self.retries})"
        )

    def close(self) -> None:
        """Close the HTTP client; the summarizer can still be used afterwards."""
        self.http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _fail(self, message: str) -> SummarizerError:
        return self.http.error(message)

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """Ask the model for the summary described by ``request``.

        Raises:
            SummarizerError: the request failed after retries, or the answer is not a usable
                summary (cut off by the output limit, a tool call, malformed, empty).
        """
        system_prompt, user_prompt = build_prompt(request)
        headers, body = self._build_request(system_prompt, user_prompt)
        data = self.http.post_json(self.url, headers=headers, body=body)
        return self._parse_answer(data)

    def _build_request(self, system_prompt: str, user_prompt: str) -> tuple[dict[str, str], dict[str, Any]]:
        """Return the headers and JSON body of the request."""
        raise NotImplementedError

    def _parse_answer(self, data: Mapping[str, Any]) -> SummaryResult:
        """Turn a decoded answer into a result, raising :class:`SummarizerError` if unusable."""
        raise NotImplementedError

    def _model_label(self, data: Mapping[str, Any]) -> str:
        answered = data.get("model")
        model = answered if isinstance(answered, str) and answered.strip() else self.model
        return f"{self.provider}/{model}"


def token_count(value: Any) -> int:
    """A token count from a provider's usage field: non-negative ints, anything else → 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return max(0, int(value))
