"""Fixtures of the llm tests: local fake API servers, summarizer factories, a clean environment, Pi from npm."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
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


PI_VERSION = "1.6.0"


@pytest.fixture(scope="session")
def pi_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``@earendil-works/pi-coding-agent`` installed from npm into a temporary folder (that folder)."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.fail("npm and node are needed to install Pi (Debian: apt-get install npm)")
    prefix = tmp_path_factory.mktemp("pi")
    result = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--ignore-scripts",
                             "--loglevel=error", f"@earendil-works/pi-coding-agent@{PI_VERSION}"],
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return prefix
