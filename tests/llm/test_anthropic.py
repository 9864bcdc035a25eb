"""AnthropicSummarizer: what only the Messages protocol has (the shared suite is test_clients.py)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from pikit.compaction import SummaryRequest
from pikit.errors import SummarizerError
from pikit.llm import AnthropicSummarizer, build_prompt
from pikit.llm._anthropic import anthropic_usage
from pikit.llm._client import DEFAULT_MAX_TOKENS
from tests.llm.servers import DEFAULT_SUMMARY, TEST_KEY, FakeLLMServer, status

pytestmark = pytest.mark.timeout(120)  # (a hang guard: a loaded machine is slow)


# --- end to end ---------------------------------------------------------------------------


def test_request_and_result(
    anthropic_server: FakeLLMServer, make_anthropic: Any, summary_request: SummaryRequest
) -> None:
    summarizer = make_anthropic("claude-sonnet-4-5", anthropic_server.base_url)

    result = summarizer.summarize(summary_request)

    assert result.text == DEFAULT_SUMMARY
    assert result.model == "anthropic/claude-sonnet-4-5"
    assert result.usage is not None
    assert list(result.usage) == ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]
    assert result.usage["input"] == 1000
    assert result.usage["output"] == 300
    assert result.usage["cacheRead"] == 200
    assert result.usage["cacheWrite"] == 50
    assert result.usage["totalTokens"] == 1550
    cost = result.usage["cost"]
    assert cost["input"] == pytest.approx(1000 * 3.0 / 1e6)
    assert cost["output"] == pytest.approx(300 * 15.0 / 1e6)
    assert cost["cacheRead"] == pytest.approx(200 * 0.3 / 1e6)
    assert cost["cacheWrite"] == pytest.approx(50 * 3.75 / 1e6)
    assert cost["total"] == pytest.approx(sum(cost[k] for k in ("input", "output", "cacheRead", "cacheWrite")))

    [request] = anthropic_server.requests
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == TEST_KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    assert "authorization" not in request.headers
    system_prompt, user_prompt = build_prompt(summary_request)
    body = request.body
    assert body["model"] == "claude-sonnet-4-5"
    assert body["max_tokens"] == 64000
    assert body["system"] == system_prompt
    assert body["messages"] == [{"role": "user", "content": user_prompt}]
    assert "tools" not in body
    assert summarizer.last_attempts == 1


def test_dated_id_takes_its_own_catalog_entry(
    anthropic_server: FakeLLMServer, make_anthropic: Any, summary_request: SummaryRequest
) -> None:
    summarizer = make_anthropic("claude-sonnet-4-5-20250929", anthropic_server.base_url)
    result = summarizer.summarize(summary_request)
    assert anthropic_server.requests[0].body["max_tokens"] == 64000
    assert result.model == "anthropic/claude-sonnet-4-5-20250929"


def test_unknown_model_has_no_price_and_the_default_budget(
    anthropic_server: FakeLLMServer, make_anthropic: Any, summary_request: SummaryRequest
) -> None:
    summarizer = make_anthropic("claude-nobody-knows", anthropic_server.base_url)
    assert summarizer.model_info is None and summarizer.pricing is None
    result = summarizer.summarize(summary_request)
    assert anthropic_server.requests[0].body["max_tokens"] == DEFAULT_MAX_TOKENS == 8192
    assert result.usage is not None and result.usage["cost"]["total"] == 0.0


def test_overloaded_529_is_retried(
    anthropic_server: FakeLLMServer, make_anthropic: Any, summary_request: SummaryRequest
) -> None:
    anthropic_server.script(status(529, message="Overloaded"), status(529, message="Overloaded"))
    summarizer = make_anthropic("claude-haiku-4-5", anthropic_server.base_url, retries=2)
    assert summarizer.summarize(summary_request).text == DEFAULT_SUMMARY
    assert len(anthropic_server.requests) == 3
    assert summarizer.last_attempts == 3






# --- unit tests with httpx.MockTransport ---------------------------------------------------


def _message(content: list[dict[str, Any]], stop: str | None = "end_turn", **extra: Any) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "model": "claude-haiku-4-5",
        "content": content,
        "stop_reason": stop,
        **extra,
    }


def _summarizer(
    answer: dict[str, Any] | bytes, seen: list[httpx.Request] | None = None, code: int = 200
) -> AnthropicSummarizer:
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        if isinstance(answer, bytes):
            return httpx.Response(code, content=answer)
        return httpx.Response(code, json=answer)

    return AnthropicSummarizer(
        "claude-haiku-4-5",
        "http://llm.test/v1",
        api_key=TEST_KEY,
        transport=httpx.MockTransport(handler),
        backoff=0.0,
    )


def test_text_blocks_are_joined_and_thinking_ignored(summary_request: SummaryRequest) -> None:
    answer = _message(
        [
            {"type": "thinking", "thinking": "hmm", "signature": "s"},
            {"type": "text", "text": "## Goal"},
            {"type": "text", "text": "Fix it"},
        ],
        usage={"input_tokens": 10, "output_tokens": 5},
    )
    seen: list[httpx.Request] = []
    result = _summarizer(answer, seen).summarize(summary_request)
    assert result.text == "## Goal\nFix it"
    assert result.usage is not None
    assert (
        result.usage["input"],
        result.usage["cacheRead"],
        result.usage["cacheWrite"],
        result.usage["totalTokens"],
    ) == (
        10,
        0,
        0,
        15,
    )
    assert json.loads(seen[0].content)["max_tokens"] == 64000


@pytest.mark.parametrize(
    ("answer", "pattern"),
    [
        (_message([{"type": "text", "text": "partial"}], stop="max_tokens"), r"cut off .*max_tokens=64000"),
        (_message([{"type": "text", "text": "x"}], stop="model_context_window_exceeded"), "cut off"),
        (
            _message([{"type": "tool_use", "id": "t", "name": "read", "input": {}}], stop="tool_use"),
            "tool call",
        ),
        (
            _message([{"type": "text", "text": "x"}, {"type": "tool_use", "id": "t", "name": "r", "input": {}}]),
            "tool call",
        ),
        (_message([{"type": "text", "text": "I will read it."}], stop="tool_use"), "tool call"),
        (_message([{"type": "server_tool_use", "id": "t", "name": "web_search", "input": {}}]), "tool call"),
        (_message([{"type": "text", "text": "no"}], stop="refusal"), "refused"),
        (_message([{"type": "text", "text": "x"}], stop="pause_turn"), "unexpected reason .*pause_turn"),
        (_message([]), "no text content"),
        (_message([{"type": "text", "text": "   "}]), "empty summary"),
        ({"type": "message", "stop_reason": "end_turn"}, "no content list"),
        (
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "reported an error: Overloaded",
        ),
        (b"{not json", "not a JSON object"),
    ],
)
def test_unusable_answers(answer: dict[str, Any] | bytes, pattern: str, summary_request: SummaryRequest) -> None:
    seen: list[httpx.Request] = []
    with pytest.raises(SummarizerError, match=pattern) as info:
        _summarizer(answer, seen).summarize(summary_request)
    assert str(info.value).startswith("anthropic summarizer: ")
    assert "\n" not in str(info.value)
    assert len(seen) == 1


def test_usage_mapping() -> None:
    usage = anthropic_usage(
        {
            "input_tokens": 7,
            "output_tokens": 3,
            "cache_read_input_tokens": 11,
            "cache_creation_input_tokens": 13,
        }
    )
    assert usage is not None
    assert [usage[k] for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")] == [
        7,
        3,
        11,
        13,
        34,
    ]
    assert usage["cost"]["total"] == 0.0
    assert anthropic_usage("nope") is None
    partial = anthropic_usage({"input_tokens": 5, "output_tokens": None, "cache_read_input_tokens": -3})
    assert partial is not None
    assert [partial[k] for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")] == [
        5,
        0,
        0,
        0,
        5,
    ]


def test_error_body_shape_in_message(summary_request: SummaryRequest) -> None:
    answer = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: 64000 > 8192"},
    }
    with pytest.raises(SummarizerError, match=r"HTTP 400 .*\(max_tokens: 64000 > 8192\)"):
        _summarizer(answer, code=400).summarize(summary_request)
