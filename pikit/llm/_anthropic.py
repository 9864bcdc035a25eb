"""A summarizer for the Anthropic Messages API.

Speaks ``POST {base_url}/v1/messages`` (non-streaming) with the ``x-api-key`` and
``anthropic-version: 2023-06-01`` headers; the system prompt goes in the top-level ``system``
field::

    with AnthropicSummarizer("claude-haiku-4-5") as summarizer:   # key from ANTHROPIC_API_KEY
        result = summarizer.summarize(request)

``max_tokens`` (required by the API) is the model's ``max_output_tokens`` from
``pikit.llm._models`` unless given explicitly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pikit.compaction._summarizer import SummaryResult
from pikit.llm._client import HTTPSummarizer
from pikit.llm._pricing import usage_with_cost
from pikit.llm._transport import token_count

__all__ = ["ANTHROPIC_VERSION", "AnthropicSummarizer", "anthropic_usage"]

ANTHROPIC_VERSION = "2023-06-01"
"""The value of the ``anthropic-version`` header."""

_OK_STOPS = frozenset({"end_turn", "stop_sequence", None})
_LENGTH_STOPS = frozenset({"max_tokens", "model_context_window_exceeded"})


def anthropic_usage(raw: Any) -> dict[str, Any] | None:
    """Map an Anthropic ``usage`` object to Pi's usage shape (costs 0), or ``None`` if absent.

    ``input_tokens`` already excludes cache reads and writes; ``totalTokens`` is the sum of
    input, output, ``cache_read_input_tokens`` and ``cache_creation_input_tokens``.
    """
    if not isinstance(raw, Mapping):
        return None
    input_tokens = token_count(raw.get("input_tokens"))
    output = token_count(raw.get("output_tokens"))
    cache_read = token_count(raw.get("cache_read_input_tokens"))
    cache_write = token_count(raw.get("cache_creation_input_tokens"))
    return usage_with_cost(
        {
            "input": input_tokens,
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": cache_write,
            "totalTokens": input_tokens + output + cache_read + cache_write,
        },
        None,
    )


class AnthropicSummarizer(HTTPSummarizer):
    """Summarize with the Anthropic Messages API (or a compatible endpoint).

    Args:
        model: the model id (e.g. ``"claude-sonnet-4-5"``).
        base_url: the API root, as Anthropic's SDKs and ``ANTHROPIC_BASE_URL`` take it: without
            ``/v1`` (``https://api.anthropic.com``); ``/v1/messages`` is appended. A URL that
            already ends in ``/v1`` is accepted too.
        api_key: the key; defaults to ``$ANTHROPIC_API_KEY``. Required for api.anthropic.com,
            optional elsewhere (proxies, compatible servers).
        timeout: seconds allowed per attempt.
        retries: extra attempts on 429, 5xx (including 529 "overloaded"), timeouts and
            connection errors.
        transport: an httpx transport to use instead of the network.
        backoff: base delay of the exponential backoff, in seconds.
        max_tokens: the output budget; defaults to the model's ``max_output_tokens``.
        provider: the provider name used in :attr:`SummaryResult.model` and to look the model
            up (default ``"anthropic"``).

    Raises:
        SummarizerError: no key is available for api.anthropic.com.
        ValueError: an argument is out of range.
    """

    name = "anthropic"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    official_host: ClassVar[str] = "api.anthropic.com"
    api_key_env: ClassVar[str] = "ANTHROPIC_API_KEY"
    endpoint: ClassVar[str] = "/v1/messages"

    @classmethod
    def _normalize_base_url(cls, base_url: str) -> str:
        root = base_url.rstrip("/")
        return root.removesuffix("/v1")

    def _build_request(self, system_prompt: str, user_prompt: str) -> tuple[dict[str, str], dict[str, Any]]:
        headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "anthropic-version": ANTHROPIC_VERSION,
        }
        key = self._api_key.reveal()
        if key:
            headers["x-api-key"] = key
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": system_prompt,
            "messages": [{"role": "user", "content": user_prompt}],
        }
        return headers, body

    def _parse_answer(self, data: Mapping[str, Any]) -> SummaryResult:
        if data.get("type") == "error":
            error = data.get("error")
            message = error.get("message") if isinstance(error, Mapping) else None
            raise self._fail(f"the server reported an error: {message or error}; check the model and try again")
        content = data.get("content")
        if not isinstance(content, list):
            raise self._fail("the answer has no content list; check that the base URL points at a Messages API")
        stop = data.get("stop_reason")
        blocks = [block for block in content if isinstance(block, Mapping)]
        if stop == "tool_use" or any(block.get("type") in ("tool_use", "server_tool_use") for block in blocks):
            raise self._fail("the model answered with a tool call instead of a summary; retry, or use another model")
        if stop in _LENGTH_STOPS:
            raise self._fail(
                f"the summary was cut off by the output limit (max_tokens={self.max_tokens}); "
                "raise max_tokens or summarize less at a time"
            )
        if stop == "refusal":
            raise self._fail("the model refused to summarize; try another model")
        if stop not in _OK_STOPS:
            raise self._fail(f"the model stopped for an unexpected reason ({stop!r}); retry, or use another model")
        texts = [
            block["text"] for block in blocks if block.get("type") == "text" and isinstance(block.get("text"), str)
        ]
        if not texts:
            raise self._fail("the answer has no text content; check the server's compatibility")
        text = "\n".join(texts)
        if not text.strip():
            raise self._fail("the model returned an empty summary; retry, or use another model")
        usage = anthropic_usage(data.get("usage"))
        if usage is not None:
            usage = usage_with_cost(usage, self.pricing)
        return SummaryResult(text=text, usage=usage, model=self._model_label(data))
