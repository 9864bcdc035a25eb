"""One suite for both HTTP summarizers: what OpenAI's and Anthropic's clients share.

Each test runs once per wire protocol, end to end against a local fake API server (real
sockets on 127.0.0.1) or with httpx's MockTransport; :class:`Wire` holds what differs
between the two (class, key header, answer shapes, usage). What only one protocol has lives
in ``test_openai.py`` and ``test_anthropic.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from pikit.compaction import SummaryRequest
from pikit.errors import SummarizerAuthError, SummarizerConfigError, SummarizerError, SummarizerOutputError
from pikit.llm import AnthropicSummarizer, OpenAISummarizer
from pikit.llm._client import HTTPSummarizer
from tests.llm.servers import DEFAULT_SUMMARY, TEST_KEY, FakeLLMServer, status

pytestmark = pytest.mark.timeout(120)  # (a hang guard: a loaded machine is slow)


def _openai_answer(text: Any, stop: str | None = "stop", **message: Any) -> dict[str, Any]:
    return {"id": "c", "model": "m", "choices": [{"index": 0, "finish_reason": stop,
                                                   "message": {"role": "assistant", "content": text, **message}}]}


def _anthropic_answer(text: Any, stop: str | None = "end_turn") -> dict[str, Any]:
    content = [] if text is None else [{"type": "text", "text": text}]
    return {"id": "m", "type": "message", "model": "m", "content": content, "stop_reason": stop}


@dataclass(frozen=True)
class Wire:
    """What differs between the two protocols, for the shared tests."""

    name: str
    cls: type[HTTPSummarizer]
    model: str
    key_env: str
    official_url: str
    key_of: Callable[[dict[str, str]], str | None]  # the key a request carried
    answer: Callable[..., dict[str, Any]]           # an answer with this text and stop reason
    length_stop: str
    tool_stop: str
    usage: dict[str, int]

    def make(self, base_url: str, **kwargs: Any) -> HTTPSummarizer:
        kwargs.setdefault("api_key", TEST_KEY)
        kwargs.setdefault("timeout", 2.0)
        kwargs.setdefault("retries", 2)
        kwargs.setdefault("backoff", 0.0)
        return self.cls(self.model, base_url, **kwargs)


WIRES = {
    "openai": Wire("openai", OpenAISummarizer, "gpt-4o-mini", "OPENAI_API_KEY",
                   "https://api.openai.com/v1/chat/completions",
                   lambda h: h.get("authorization", "").removeprefix("Bearer ") or None, _openai_answer,
                   "length", "tool_calls",
                   {"input": 1000, "output": 300, "cacheRead": 200, "cacheWrite": 0, "totalTokens": 1500}),
    "anthropic": Wire("anthropic", AnthropicSummarizer, "claude-sonnet-4-5", "ANTHROPIC_API_KEY",
                      "https://api.anthropic.com/v1/messages", lambda h: h.get("x-api-key"), _anthropic_answer,
                      "max_tokens", "tool_use",
                      {"input": 1000, "output": 300, "cacheRead": 200, "cacheWrite": 50, "totalTokens": 1550}),
}


@pytest.fixture(params=sorted(WIRES))
def wire(request: pytest.FixtureRequest) -> Wire:
    return WIRES[request.param]


@pytest.fixture
def server(wire: Wire) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(wire.name, api_key=TEST_KEY) as srv:  # type: ignore[arg-type]
        yield srv


def _mock(answer: dict[str, Any] | bytes, seen: list[httpx.Request], code: int = 200) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if isinstance(answer, bytes):
            return httpx.Response(code, content=answer)
        return httpx.Response(code, json=answer)

    return httpx.MockTransport(handler)


# ---------------------------------------------------------------- end to end
def test_request_and_result(wire: Wire, server: FakeLLMServer, summary_request: SummaryRequest) -> None:
    with wire.make(server.base_url) as summarizer:
        result = summarizer.summarize(summary_request)
        assert summarizer.last_attempts == 1
    assert result.text == DEFAULT_SUMMARY and result.model == f"{wire.name}/{wire.model}"
    assert result.usage is not None
    assert list(result.usage) == ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]
    assert {k: result.usage[k] for k in wire.usage} == wire.usage
    assert result.usage["cost"]["total"] > 0
    [request] = server.requests
    assert request.method == "POST" and request.headers["content-type"] == "application/json"
    assert wire.key_of(request.headers) == TEST_KEY
    assert request.body["model"] == wire.model and "tools" not in request.body


def test_key_from_the_environment_stripped(wire: Wire, server: FakeLLMServer, summary_request: SummaryRequest,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(wire.key_env, TEST_KEY + "\r\n")  # a CRLF .env file
    with wire.make(server.base_url, api_key=None) as summarizer:
        summarizer.summarize(summary_request)
    assert wire.key_of(server.requests[0].headers) == TEST_KEY


def test_a_wrong_key_is_401_once(wire: Wire, server: FakeLLMServer, summary_request: SummaryRequest) -> None:
    with wire.make(server.base_url, api_key="sk-wrong-key-123") as summarizer, \
            pytest.raises(SummarizerAuthError, match=rf"HTTP 401 .*check the API key \({wire.key_env}\)") as info:
        summarizer.summarize(summary_request)
    assert len(server.requests) == 1 and "sk-wrong-key-123" not in str(info.value)
    assert info.value.status == 401 and not info.value.retryable


def test_a_trailing_slash_in_the_base_url(wire: Wire, server: FakeLLMServer, summary_request: SummaryRequest) -> None:
    with wire.make(server.base_url + "/") as summarizer:
        summarizer.summarize(summary_request)
    assert server.requests[0].path.startswith("/v1/")


def test_the_context_manager_closes_the_client(wire: Wire, server: FakeLLMServer,
                                               summary_request: SummaryRequest) -> None:
    with wire.make(server.base_url) as summarizer:
        summarizer.summarize(summary_request)
        client = summarizer.http.client
        assert not client.is_closed
    assert client.is_closed
    assert summarizer.summarize(summary_request).text == DEFAULT_SUMMARY  # a new client on demand
    summarizer.close()


def test_retryable_statuses_then_success(wire: Wire, server: FakeLLMServer, summary_request: SummaryRequest) -> None:
    server.script(status(503, message="busy"), status(429, retry_after="0"))
    with wire.make(server.base_url) as summarizer:
        assert summarizer.summarize(summary_request).text == DEFAULT_SUMMARY
        assert summarizer.last_attempts == 3


# ---------------------------------------------------------------- configuration
def test_the_official_host_needs_a_key(wire: Wire) -> None:
    with pytest.raises(SummarizerConfigError, match=rf"no API key for .*; set {wire.key_env}") as info:
        wire.cls(wire.model)
    assert "\n" not in str(info.value)


def test_the_official_host_with_a_key(wire: Wire, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(wire.key_env, TEST_KEY)
    with wire.cls(wire.model) as summarizer:
        assert summarizer.url == wire.official_url and summarizer.has_api_key
        assert TEST_KEY not in repr(summarizer) and TEST_KEY not in repr(vars(summarizer))
        assert "api_key=<set>" in repr(summarizer)


@pytest.mark.parametrize("base_url", ["ftp://127.0.0.1/v1", "http://[::1/v1", "not a url"])
def test_a_bad_base_url_fails_cleanly_at_once(wire: Wire, base_url: str, summary_request: SummaryRequest) -> None:
    with wire.make(base_url, retries=3) as summarizer:
        with pytest.raises(SummarizerError, match=rf"^{wire.name} summarizer: cannot send the request .*base URL"):
            summarizer.summarize(summary_request)
        assert summarizer.last_attempts == 1


def test_the_timeout_reaches_every_operation(wire: Wire, summary_request: SummaryRequest) -> None:
    seen: list[httpx.Request] = []
    with wire.make("http://llm.test/v1", timeout=7.5, transport=_mock(wire.answer("## Goal\nx"), seen)) as s:
        s.summarize(summary_request)
    assert seen[0].extensions["timeout"] == {"connect": 7.5, "read": 7.5, "write": 7.5, "pool": 7.5}
    assert seen[0].headers["accept-encoding"] == "identity"


# ---------------------------------------------------------------- answers
@pytest.mark.parametrize(("case", "pattern"), [
    ("length", "cut off by the output limit"),
    ("tool", "tool call"),
    ("empty", "empty summary"),
    ("no text", "no text content"),
    ("holds the key", "contains the API key"),
])
def test_unusable_answers_are_refused_once(wire: Wire, case: str, pattern: str,
                                           summary_request: SummaryRequest) -> None:
    answer = {"length": wire.answer("partial", wire.length_stop), "tool": wire.answer("calling", wire.tool_stop),
              "empty": wire.answer(" \n\t"), "no text": wire.answer(None),
              "holds the key": wire.answer(f"## Goal\nkey {TEST_KEY}")}[case]
    seen: list[httpx.Request] = []
    with wire.make("http://llm.test/v1", transport=_mock(answer, seen)) as summarizer, \
            pytest.raises(SummarizerOutputError, match=pattern) as info:
        summarizer.summarize(summary_request)
    message = str(info.value)
    assert message.startswith(f"{wire.name} summarizer: ") and "\n" not in message and TEST_KEY not in message
    assert len(seen) == 1 and not info.value.retryable


@pytest.mark.parametrize(("code", "retried"), [(400, False), (404, False), (422, False), (429, True), (500, True),
                                               (503, True), (529, True)])
def test_which_statuses_are_retried(wire: Wire, code: int, retried: bool, summary_request: SummaryRequest) -> None:
    seen: list[httpx.Request] = []
    transport = _mock({"error": {"message": "nope"}}, seen, code=code)
    with wire.make("http://llm.test/v1", transport=transport) as summarizer, \
            pytest.raises(SummarizerError, match=f"HTTP {code} .*nope") as info:
        summarizer.summarize(summary_request)
    assert len(seen) == (3 if retried else 1)
    assert info.value.status == code and info.value.retryable is retried


def test_a_broken_json_answer(wire: Wire, summary_request: SummaryRequest) -> None:
    seen: list[httpx.Request] = []
    with wire.make("http://llm.test/v1", transport=_mock(b'{"id": "x", "choi', seen)) as summarizer, \
            pytest.raises(SummarizerError, match="not a JSON object"):
        summarizer.summarize(summary_request)
    assert len(seen) == 1


def test_the_test_servers_have_one_import_path() -> None:
    import sys
    from pathlib import Path

    tests = Path(__file__).resolve().parents[1]
    bare = ("from " + "servers import", "import " + "servers\n")  # split: this file must not match itself
    for path in tests.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not any(form in text for form in bare), path
    assert "servers" not in sys.modules or sys.modules["servers"] is sys.modules["tests.llm.servers"]
