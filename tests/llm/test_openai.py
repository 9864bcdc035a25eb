"""OpenAISummarizer: what only the Chat Completions protocol has (the shared suite is test_clients.py)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from pikit.compaction import SummaryRequest
from pikit.errors import SummarizerError
from pikit.llm import OpenAISummarizer, build_prompt, lookup_model
from tests.llm.servers import DEFAULT_SUMMARY, TEST_KEY, FakeLLMServer, status

pytestmark = pytest.mark.timeout(120)  # (a hang guard: a loaded machine is slow)

EXPECTED_USAGE_TOKENS = {"input": 1000, "output": 300, "cacheRead": 200, "cacheWrite": 0, "totalTokens": 1500}


# --- end to end ---------------------------------------------------------------------------


def test_request_and_result(openai_server: FakeLLMServer, make_openai: Any, summary_request: SummaryRequest) -> None:
    summarizer = make_openai("gpt-4o-mini", openai_server.base_url)

    result = summarizer.summarize(summary_request)

    assert result.text == DEFAULT_SUMMARY
    assert result.model == "openai/gpt-4o-mini"
    assert result.usage is not None
    assert list(result.usage) == ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]
    assert {k: result.usage[k] for k in EXPECTED_USAGE_TOKENS} == EXPECTED_USAGE_TOKENS
    cost = result.usage["cost"]
    assert list(cost) == ["input", "output", "cacheRead", "cacheWrite", "total"]
    assert cost["input"] == pytest.approx(1000 * 0.15 / 1e6)
    assert cost["output"] == pytest.approx(300 * 0.6 / 1e6)
    assert cost["cacheRead"] == pytest.approx(200 * 0.075 / 1e6)
    assert cost["cacheWrite"] == 0
    assert cost["total"] == pytest.approx(cost["input"] + cost["output"] + cost["cacheRead"])

    [request] = openai_server.requests
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {TEST_KEY}"
    assert request.headers["content-type"] == "application/json"
    system_prompt, user_prompt = build_prompt(summary_request)
    body = request.body
    assert body["model"] == "gpt-4o-mini"
    assert body["max_tokens"] == lookup_model("openai/gpt-4o-mini").max_output_tokens == 16384
    assert "max_completion_tokens" not in body
    assert body["stream"] is False
    assert body["messages"] == [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": user_prompt},
    ]
    assert "tools" not in body
    assert summarizer.last_attempts == 1


def test_unknown_model_gets_default_budget_and_zero_cost(
    openai_server: FakeLLMServer, make_openai: Any, summary_request: SummaryRequest
) -> None:
    summarizer = make_openai("my-local-model", openai_server.base_url)
    result = summarizer.summarize(summary_request)
    assert openai_server.requests[0].body["max_tokens"] == 8192
    assert result.usage is not None
    assert result.usage["cost"] == {
        "input": 0.0,
        "output": 0.0,
        "cacheRead": 0.0,
        "cacheWrite": 0.0,
        "total": 0.0,
    }


def test_explicit_max_tokens_and_provider(
    openai_server: FakeLLMServer, make_openai: Any, summary_request: SummaryRequest
) -> None:
    summarizer = make_openai(
        "anthropic/claude-sonnet-4.5", openai_server.base_url, max_tokens=2048, provider="openrouter"
    )
    result = summarizer.summarize(summary_request)
    assert openai_server.requests[0].body["max_tokens"] == 2048
    assert openai_server.requests[0].body["model"] == "anthropic/claude-sonnet-4.5"
    assert result.model == "openrouter/anthropic/claude-sonnet-4.5"


def test_local_server_without_key(summary_request: SummaryRequest, make_openai: Any) -> None:
    with FakeLLMServer("openai") as server:  # a local server that needs no key
        summarizer = make_openai("llama3.1", server.base_url, api_key=None)
        assert not summarizer.has_api_key
        result = summarizer.summarize(summary_request)
        assert result.text == DEFAULT_SUMMARY
        assert "authorization" not in server.requests[0].headers





def test_wrong_base_url_is_404(openai_server: FakeLLMServer, make_openai: Any, summary_request: SummaryRequest) -> None:
    summarizer = make_openai("gpt-4o", openai_server.base_url.removesuffix("/v1"))
    with pytest.raises(SummarizerError, match=r"HTTP 404 .*check the base URL"):
        summarizer.summarize(summary_request)
    assert len(openai_server.requests) == 1





# --- unit tests with httpx.MockTransport ---------------------------------------------------


def _completion(message: dict[str, Any], finish: str | None = "stop", **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        **extra,
    }


def _mock(
    answer: dict[str, Any] | bytes, seen: list[httpx.Request] | None = None, code: int = 200
) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        if isinstance(answer, bytes):
            return httpx.Response(code, content=answer)
        return httpx.Response(code, json=answer)

    return httpx.MockTransport(handler)


def _summarizer(transport: httpx.MockTransport, **kwargs: Any) -> OpenAISummarizer:
    kwargs.setdefault("base_url", "http://llm.test/v1")
    kwargs.setdefault("backoff", 0.0)
    return OpenAISummarizer("gpt-4o", transport=transport, **kwargs)


def test_official_host_sends_max_completion_tokens(
    monkeypatch: pytest.MonkeyPatch, summary_request: SummaryRequest
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    seen: list[httpx.Request] = []
    with OpenAISummarizer("o3", transport=_mock(_completion({"content": "## Goal\nx"}), seen)) as summarizer:
        summarizer.summarize(summary_request)
    body = json.loads(seen[0].content)
    assert str(seen[0].url) == "https://api.openai.com/v1/chat/completions"
    assert body["max_completion_tokens"] == 100_000
    assert "max_tokens" not in body
    assert seen[0].headers["authorization"] == f"Bearer {TEST_KEY}"


def test_max_tokens_field_override(summary_request: SummaryRequest) -> None:
    seen: list[httpx.Request] = []
    summarizer = _summarizer(_mock(_completion({"content": "ok"}), seen), max_tokens_field="max_completion_tokens")
    summarizer.summarize(summary_request)
    assert json.loads(seen[0].content)["max_completion_tokens"] == 16384
    with pytest.raises(ValueError, match="max_tokens_field"):
        _summarizer(_mock(b""), max_tokens_field="n_predict")



def test_content_as_list_of_parts(summary_request: SummaryRequest) -> None:
    answer = _completion({"content": [{"type": "text", "text": "## Goal"}, {"type": "text", "text": "Fix it"}]})
    assert _summarizer(_mock(answer)).summarize(summary_request).text == "## Goal\nFix it"


def test_null_finish_reason_with_text_is_accepted(summary_request: SummaryRequest) -> None:
    result = _summarizer(_mock(_completion({"content": "## Goal\nx"}, finish=None))).summarize(summary_request)
    assert result.text == "## Goal\nx"
    assert result.usage is None  # the server reported none



def test_insufficient_quota_is_not_retried(summary_request: SummaryRequest) -> None:
    seen: list[httpx.Request] = []
    answer = {
        "error": {
            "message": "You exceeded your current quota",
            "type": "insufficient_quota",
            "code": "insufficient_quota",
        }
    }
    with pytest.raises(SummarizerError, match="quota is exhausted"):
        _summarizer(_mock(answer, seen, code=429), retries=3).summarize(summary_request)
    assert len(seen) == 1


def test_error_status_from_scripted_server(
    openai_server: FakeLLMServer, make_openai: Any, summary_request: SummaryRequest
) -> None:
    openai_server.script(status(400, message="Unknown parameter: 'foo'"))
    summarizer = make_openai("gpt-4o", openai_server.base_url)
    with pytest.raises(SummarizerError, match=r"HTTP 400 .*\(Unknown parameter: 'foo'\): the request was rejected"):
        summarizer.summarize(summary_request)
