"""Fault injection, end to end, for both clients: retries, timeouts, failures, no key leaks."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from pikit.compaction import SummaryRequest
from pikit.errors import PikitError, SummarizerError
from pikit.llm import AnthropicSummarizer, OpenAISummarizer
from pikit.llm._client import HTTPSummarizer
from tests.llm.servers import (
    CLOSE,
    DEFAULT_SUMMARY,
    ECHO_HEADERS,
    ECHO_HEADERS_TEXT,
    EMPTY,
    HANG,
    LENGTH,
    MALFORMED,
    NO_TEXT,
    OK,
    RATE_LIMITED,
    SERVER_ERROR,
    TEST_KEY,
    TOOL_CALL,
    FakeLLMServer,
    status,
)

pytestmark = pytest.mark.timeout(120)  # (a hang guard: a loaded machine is slow)


@dataclass
class Endpoint:
    """A running fake server and a way to build a summarizer pointed at it."""

    wire: str
    server: FakeLLMServer
    make: Callable[..., HTTPSummarizer]


@pytest.fixture(params=["openai", "anthropic"])
def endpoint(request: pytest.FixtureRequest) -> Iterator[Endpoint]:
    wire = request.param
    cls: type[HTTPSummarizer] = OpenAISummarizer if wire == "openai" else AnthropicSummarizer
    model = "gpt-4o" if wire == "openai" else "claude-haiku-4-5"
    made: list[HTTPSummarizer] = []
    with FakeLLMServer(wire, api_key=TEST_KEY, hang_seconds=3.0) as server:

        def make(**kwargs: object) -> HTTPSummarizer:
            options: dict[str, object] = {"api_key": TEST_KEY, "timeout": 2.0, "retries": 2, "backoff": 0.01}
            options.update(kwargs)
            summarizer = cls(model, server.base_url, **options)  # type: ignore[arg-type]
            made.append(summarizer)
            return summarizer

        yield Endpoint(wire, server, make)
        for summarizer in made:
            summarizer.close()


def _fails(
    endpoint: Endpoint,
    request: SummaryRequest,
    pattern: str,
    summarizer: HTTPSummarizer | None = None,
    **kwargs: object,
) -> SummarizerError:
    """Assert that summarizing fails with a clean one-line error matching ``pattern``."""
    summarizer = summarizer or endpoint.make(**kwargs)
    with pytest.raises(SummarizerError, match=pattern) as info:
        summarizer.summarize(request)
    error = info.value
    assert isinstance(error, PikitError)
    message = str(error)
    assert "\n" not in message and "\r" not in message
    assert message.startswith(f"{endpoint.wire} summarizer: ")
    assert TEST_KEY not in message
    return error


# --- retried, then success ----------------------------------------------------------------


def test_500_then_success(endpoint: Endpoint, summary_request: SummaryRequest) -> None:
    endpoint.server.script(SERVER_ERROR, OK)
    summarizer = endpoint.make()
    assert summarizer.summarize(summary_request).text == DEFAULT_SUMMARY
    assert len(endpoint.server.requests) == 2
    assert summarizer.last_attempts == 2
    # the retry is the same request
    assert endpoint.server.requests[0].raw == endpoint.server.requests[1].raw


def test_429_retry_after_zero_then_success(endpoint: Endpoint, summary_request: SummaryRequest) -> None:
    endpoint.server.script(RATE_LIMITED, OK)
    # A huge backoff: only honouring "Retry-After: 0" makes this fast.
    summarizer = endpoint.make(backoff=60.0)
    waits: list[float] = []
    summarizer.http.sleep = waits.append
    assert summarizer.summarize(summary_request).text == DEFAULT_SUMMARY
    assert waits == [0.0]
    assert len(endpoint.server.requests) == 2


def test_429_retry_after_is_honoured_for_real(endpoint: Endpoint, summary_request: SummaryRequest) -> None:
    endpoint.server.script(status(429, retry_after="0.3"), OK)
    summarizer = endpoint.make(backoff=0.0)
    started = time.monotonic()
    summarizer.summarize(summary_request)
    requests = endpoint.server.requests
    assert len(requests) == 2
    assert requests[1].at - requests[0].at >= 0.3
    assert time.monotonic() - started < 30  # (a hang guard)


def test_connection_closed_then_success(endpoint: Endpoint, summary_request: SummaryRequest) -> None:
    endpoint.server.script(CLOSE, OK)
    summarizer = endpoint.make()
    assert summarizer.summarize(summary_request).text == DEFAULT_SUMMARY
    assert len(endpoint.server.requests) == 2


def test_hang_then_success(endpoint: Endpoint, summary_request: SummaryRequest) -> None:
    endpoint.server.script(HANG, OK)
    summarizer = endpoint.make(timeout=0.5)
    started = time.monotonic()
    assert summarizer.summarize(summary_request).text == DEFAULT_SUMMARY
    assert len(endpoint.server.requests) == 2
    assert time.monotonic() - started >= 0.5  # (the first attempt waited for its timeout)


# --- failures after the retries -----------------------------------------------------------


def test_500_every_time(endpoint: Endpoint, summary_request: SummaryRequest) -> None:
    endpoint.server.script(SERVER_ERROR, SERVER_ERROR, SERVER_ERROR, SERVER_ERROR)
    _fails(endpoint, summary_request, r"HTTP 500 .*kept failing after 3 attempt\(s\)", retries=2)
    assert len(endpoint.server.requests) == 3
    assert endpoint.server.pending == 1


def test_429_every_time(endpoint: Endpoint, summary_request: SummaryRequest) -> None:
    endpoint.server.script(*[RATE_LIMITED] * 5)
    _fails(endpoint, summary_request, r"HTTP 429 .*still rate limited after 4 attempt\(s\)", retries=3)
    assert len(endpoint.server.requests) == 4


def test_no_retry_when_retries_is_zero(endpoint: Endpoint, summary_request: SummaryRequest) -> None:
    endpoint.server.script(SERVER_ERROR, OK)
    _fails(endpoint, summary_request, "HTTP 500", retries=0)
    assert len(endpoint.server.requests) == 1


def test_other_4xx_is_not_retried(endpoint: Endpoint, summary_request: SummaryRequest) -> None:
    endpoint.server.script(status(400, message="model not found"), OK)
    _fails(endpoint, summary_request, r"HTTP 400 .*\(model not found\)")
    assert len(endpoint.server.requests) == 1


def test_hang_longer_than_timeout(endpoint: Endpoint, summary_request: SummaryRequest) -> None:
    endpoint.server.script(HANG, HANG, HANG)
    started = time.monotonic()
    _fails(endpoint, summary_request, r"timed out after 0\.5s on each of 2 attempt\(s\)", timeout=0.5, retries=1)
    elapsed = time.monotonic() - started
    assert elapsed >= 1.0  # two attempts of 0.5 s each (the server hangs 3 s: the message says each timed out)
    assert len(endpoint.server.requests) == 2


def test_connection_closed_every_time(endpoint: Endpoint, summary_request: SummaryRequest) -> None:
    endpoint.server.script(CLOSE, CLOSE, CLOSE)
    _fails(endpoint, summary_request, r"cannot reach .* after 3 attempt\(s\)")
    assert len(endpoint.server.requests) == 3


def test_connection_refused(endpoint: Endpoint, summary_request: SummaryRequest) -> None:
    summarizer = endpoint.make(retries=1)
    endpoint.server.stop()
    with pytest.raises(SummarizerError, match=r"cannot reach .* after 2 attempt\(s\).*check the base URL"):
        summarizer.summarize(summary_request)
    assert summarizer.last_attempts == 2


# --- unusable answers (never retried) ------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "pattern"),
    [
        (LENGTH, "cut off by the output limit"),
        (TOOL_CALL, "tool call instead of a summary"),
        (MALFORMED, r"not a JSON object \(HTTP 200"),
        (EMPTY, "empty summary"),
        (NO_TEXT, "no text content"),
    ],
    ids=["length", "tool_call", "malformed", "empty", "no_text"],
)
def test_unusable_answer(endpoint: Endpoint, summary_request: SummaryRequest, step: object, pattern: str) -> None:
    endpoint.server.script(step, OK)  # type: ignore[arg-type]
    _fails(endpoint, summary_request, pattern)
    assert len(endpoint.server.requests) == 1
    assert endpoint.server.pending == 1


# --- secrets ------------------------------------------------------------------------------


@pytest.mark.parametrize("echo", [ECHO_HEADERS, ECHO_HEADERS_TEXT], ids=["json", "text"])
def test_api_key_never_leaks(
    endpoint: Endpoint, summary_request: SummaryRequest, caplog: pytest.LogCaptureFixture, echo: object
) -> None:
    endpoint.server.script(echo, echo)  # type: ignore[arg-type]
    caplog.set_level(logging.DEBUG)
    summarizer = endpoint.make(retries=1)
    error = _fails(endpoint, summary_request, "HTTP 500 .*credentials=", summarizer)
    # the server did see (and echo) the key, so the test is meaningful
    headers = endpoint.server.requests[0].headers
    assert TEST_KEY in headers.get("authorization", "") + headers.get("x-api-key", "")
    assert "***" in str(error)
    assert TEST_KEY not in repr(error)
    assert TEST_KEY not in repr(summarizer)
    assert TEST_KEY not in repr(vars(summarizer))
    assert TEST_KEY not in repr(summarizer.http)
    assert TEST_KEY not in caplog.text
    assert any("retrying" in record.getMessage() for record in caplog.records)
