"""A summarizer for OpenAI-compatible Chat Completions APIs.

Speaks ``POST {base_url}/chat/completions`` (non-streaming), so besides OpenAI itself it works
with OpenRouter, vLLM, the llama.cpp server, Ollama, LM Studio and other compatible servers::

    with OpenAISummarizer("gpt-4o-mini") as summarizer:          # key from OPENAI_API_KEY
        result = summarizer.summarize(request)

    local = OpenAISummarizer("qwen2.5-coder", base_url="http://127.0.0.1:11434/v1")  # no key

The system prompt is sent as a ``system`` message. The output budget is the model's
``max_output_tokens`` (see ``pikit.llm._models``) unless ``max_tokens`` is given; it is sent
as ``max_completion_tokens`` to api.openai.com (required by its reasoning models) and as
``max_tokens`` to every other server (the field they all understand).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pikit.compaction._summarizer import SummaryResult
from pikit.llm._client import HTTPSummarizer
from pikit.llm._pricing import usage_with_cost
from pikit.llm._transport import token_count

if TYPE_CHECKING:
    import httpx

__all__ = ["OpenAISummarizer", "openai_usage"]

_LENGTH_STOPS = frozenset({"length", "max_tokens"})
_TOOL_STOPS = frozenset({"tool_calls", "function_call"})


def openai_usage(raw: Any) -> dict[str, Any] | None:
    """Map an OpenAI ``usage`` object to Pi's usage shape (costs 0), or ``None`` if absent.

    ``prompt_tokens`` includes the cached tokens, so ``input = prompt_tokens - cached_tokens``
    and ``cacheRead = cached_tokens``; ``output = completion_tokens``; ``cacheWrite = 0``.
    """
    if not isinstance(raw, Mapping):
        return None
    prompt = token_count(raw.get("prompt_tokens"))
    output = token_count(raw.get("completion_tokens"))
    details = raw.get("prompt_tokens_details")
    cached = token_count(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    cached = min(cached, prompt)
    input_tokens = prompt - cached
    return usage_with_cost(
        {
            "input": input_tokens,
            "output": output,
            "cacheRead": cached,
            "cacheWrite": 0,
            "totalTokens": input_tokens + output + cached,
        },
        None,
    )


def _message_text(content: Any) -> str | None:
    """The text of a message's ``content``: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            part["text"]
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str)
        ]
        return "\n".join(texts) if texts else None
    return None


class OpenAISummarizer(HTTPSummarizer):
    """Summarize with an OpenAI-compatible Chat Completions endpoint.

    Args:
        model: the model id sent to the server (e.g. ``"gpt-4o-mini"``, or
            ``"anthropic/claude-sonnet-4.5"`` on OpenRouter).
        base_url: the API root; ``/chat/completions`` is appended.
        api_key: the key; defaults to ``$OPENAI_API_KEY``. Required for api.openai.com,
            optional elsewhere (local servers usually need none).
        timeout: seconds allowed per attempt.
        retries: extra attempts on 429, 5xx, timeouts and connection errors.
        transport: an httpx transport to use instead of the network.
        backoff: base delay of the exponential backoff, in seconds.
        max_tokens: the output budget; defaults to the model's ``max_output_tokens``.
        provider: the provider name used in :attr:`SummaryResult.model` and to look the model
            up (default ``"openai"``; e.g. ``"openrouter"``).
        max_tokens_field: the request field carrying the budget: ``"max_tokens"`` or
            ``"max_completion_tokens"``; by default the latter for api.openai.com only.

    Raises:
        SummarizerError: no key is available for api.openai.com.
        ValueError: an argument is out of range.
    """

    name = "openai"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    official_host: ClassVar[str] = "api.openai.com"
    api_key_env: ClassVar[str] = "OPENAI_API_KEY"
    endpoint: ClassVar[str] = "/chat/completions"

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        timeout: float = 120,
        retries: int = 3,
        transport: httpx.BaseTransport | None = None,
        *,
        backoff: float = 0.5,
        max_tokens: int | None = None,
        provider: str | None = None,
        max_tokens_field: Literal["max_tokens", "max_completion_tokens"] | None = None,
    ) -> None:
        super().__init__(
            model,
            base_url,
            api_key,
            timeout,
            retries,
            transport,
            backoff=backoff,
            max_tokens=max_tokens,
            provider=provider,
        )
        if max_tokens_field not in (None, "max_tokens", "max_completion_tokens"):
            raise ValueError(
                f"max_tokens_field must be 'max_tokens' or 'max_completion_tokens', not {max_tokens_field!r}"
            )
        self.max_tokens_field: str = max_tokens_field or ("max_completion_tokens" if self.is_official else "max_tokens")

    def _build_request(self, system_prompt: str, user_prompt: str) -> tuple[dict[str, str], dict[str, Any]]:
        headers = {"content-type": "application/json", "accept": "application/json"}
        key = self._api_key.reveal()
        if key:
            headers["authorization"] = f"Bearer {key}"
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system_prompt},
                {"role": "user", "content": user_prompt},
            ],
            self.max_tokens_field: self.max_tokens,
            "stream": False,
        }
        return headers, body

    def _parse_answer(self, data: Mapping[str, Any]) -> SummaryResult:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            error = data.get("error")
            if isinstance(error, Mapping) and isinstance(error.get("message"), str):
                raise self._fail(f"the server reported an error: {error['message']}; check the model and try again")
            raise self._fail("the answer has no choices; check that the base URL points at a Chat Completions API")
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, Mapping):
            raise self._fail("the answer's first choice has no message; check the server's compatibility")
        finish = choice.get("finish_reason")
        if message.get("tool_calls") or message.get("function_call") or finish in _TOOL_STOPS:
            raise self._fail("the model answered with a tool call instead of a summary; retry, or use another model")
        if finish in _LENGTH_STOPS:
            raise self._fail(
                f"the summary was cut off by the output limit (max_tokens={self.max_tokens}); "
                "raise max_tokens or summarize less at a time"
            )
        if finish == "content_filter":
            raise self._fail("the answer was blocked by the provider's content filter; try another model")
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal.strip():
            raise self._fail(f"the model refused to summarize ({refusal}); try another model")
        text = _message_text(message.get("content"))
        if text is None:
            raise self._fail("the answer has no text content; check the server's compatibility")
        if not text.strip():
            raise self._fail("the model returned an empty summary; retry, or use another model")
        usage = openai_usage(data.get("usage"))
        if usage is not None:
            usage = usage_with_cost(usage, self.pricing)
        return SummaryResult(text=text, usage=usage, model=self._model_label(data))
