"""Fixtures of the llm tests: local fake API servers, summarizer factories, a clean environment."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pikit.compaction import SummaryRequest
from pikit.llm import AnthropicSummarizer, OpenAISummarizer
from pikit.llm._client import HTTPSummarizer
from tests.llm.servers import TEST_KEY, FakeLLMServer

_ENV_VARS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key from the developer's environment, and no proxy between the tests and 127.0.0.1."""
    for name in _ENV_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def openai_server() -> Iterator[FakeLLMServer]:
    """A running fake OpenAI chat-completions server that requires :data:`TEST_KEY`."""
    with FakeLLMServer("openai", api_key=TEST_KEY) as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[FakeLLMServer]:
    """A running fake Anthropic messages server that requires :data:`TEST_KEY`."""
    with FakeLLMServer("anthropic", api_key=TEST_KEY) as server:
        yield server


@pytest.fixture
def summary_request() -> SummaryRequest:
    """A small history-summary request."""
    return SummaryRequest(
        kind="history",
        conversation_text="[User]: fix the parser tests\n\n[Assistant]: Looking at src/parser.py now.",
        instructions="the tokenizer bug",
    )


SummarizerFactory = Callable[..., HTTPSummarizer]


def _factory(cls: type[HTTPSummarizer]) -> Iterator[SummarizerFactory]:
    made: list[HTTPSummarizer] = []

    def make(model: str, base_url: str, **kwargs: Any) -> HTTPSummarizer:
        kwargs.setdefault("api_key", TEST_KEY)
        kwargs.setdefault("timeout", 2.0)
        kwargs.setdefault("retries", 2)
        kwargs.setdefault("backoff", 0.01)
        summarizer = cls(model, base_url, **kwargs)
        made.append(summarizer)
        return summarizer

    yield make
    for summarizer in made:
        summarizer.close()


@pytest.fixture
def make_openai() -> Iterator[SummarizerFactory]:
    """Build :class:`OpenAISummarizer` s with test defaults (key, short timeout, tiny backoff)."""
    yield from _factory(OpenAISummarizer)


@pytest.fixture
def make_anthropic() -> Iterator[SummarizerFactory]:
    """Build :class:`AnthropicSummarizer` s with test defaults (key, short timeout, tiny backoff)."""
    yield from _factory(AnthropicSummarizer)
