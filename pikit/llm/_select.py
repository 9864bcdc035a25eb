"""Pick a summarizer by name: ``offline`` (embedded, the default), ``openai`` or ``anthropic``;
and the HTTP client of a probe model by ``provider/modelId``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pikit.compaction._summarizer import Summarizer
from pikit.errors import SummarizerConfigError, SummarizerError, Wording

if TYPE_CHECKING:
    from pikit.llm._client import HTTPSummarizer

__all__ = ["SUMMARIZERS", "get_summarizer", "probe_client", "split_model"]

SUMMARIZERS = ("offline", "openai", "anthropic")
_DEFAULT_MODELS = {"openai": "openai/gpt-4.1-mini", "anthropic": "anthropic/claude-sonnet-4-5"}


def split_model(spec: str) -> tuple[str | None, str]:
    """``provider/modelId`` → (provider, modelId); the model id may itself contain ``/``."""
    provider, sep, model_id = spec.partition("/")
    return (provider, model_id) if sep and model_id else (None, spec)


def get_summarizer(name: str = "offline", *, model: str | None = None, base_url: str | None = None,
                   timeout: float = 120.0, retries: int = 3) -> Summarizer:
    """A ready summarizer. HTTP ones read their key from ``OPENAI_API_KEY``/``ANTHROPIC_API_KEY``."""
    if name == "offline":
        from pikit.llm._offline import OfflineSummarizer

        return OfflineSummarizer()
    if name not in SUMMARIZERS:
        raise SummarizerError(f"unknown summarizer {name!r}; choose one of {', '.join(SUMMARIZERS)}")
    provider, model_id = split_model(model or _DEFAULT_MODELS[name])
    if name == "openai":
        from pikit.llm._openai import OpenAISummarizer

        return OpenAISummarizer(model_id, base_url or OpenAISummarizer.default_base_url, timeout=timeout,
                                retries=retries, provider=provider)
    from pikit.llm._anthropic import AnthropicSummarizer

    return AnthropicSummarizer(model_id, base_url or AnthropicSummarizer.default_base_url, timeout=timeout,
                               retries=retries, provider=provider)


def probe_client(model: str, *, base_url: str | None = None, timeout: float = 120.0,
                 retries: int = 3) -> HTTPSummarizer:
    """The HTTP client of ``model`` (``provider/modelId``) for :func:`pikit.llm.probe`.

    ``anthropic/…`` speaks the Anthropic protocol, any other provider the OpenAI one (at
    ``base_url``, by default OpenAI's API); the key comes from ``ANTHROPIC_API_KEY`` or
    ``OPENAI_API_KEY``.
    """
    provider, model_id = split_model(model)
    if provider is None:
        raise SummarizerConfigError(Wording("name the probe model as provider/model in {probe_model}, not {given}",
                                            {"probe_model": "model="}, given=repr(model)))
    if provider == "anthropic":
        from pikit.llm._anthropic import AnthropicSummarizer

        return AnthropicSummarizer(model_id, base_url or AnthropicSummarizer.default_base_url, timeout=timeout,
                                   retries=retries, provider=provider)
    from pikit.llm._openai import OpenAISummarizer

    return OpenAISummarizer(model_id, base_url or OpenAISummarizer.default_base_url, timeout=timeout,
                            retries=retries, provider=provider)
