"""Summarizers backed by language models: a small layered HTTP client.

- :mod:`pikit.llm._base`: the :class:`Summarizer` protocol, :class:`SummaryRequest`,
  :class:`SummaryResult` and Pi's usage shape;
- :mod:`pikit.llm._prompts`: pikit's instruction texts and :func:`build_prompt`;
- :mod:`pikit.llm._models`: context windows and output budgets of well-known models;
- :mod:`pikit.llm._secrets`: API keys read cleanly and redacted in every form;
- :mod:`pikit.llm._transport`: retries, backoff, time and size limits, secret-free errors;
- :mod:`pikit.llm._client`: :class:`HTTPSummarizer`, the skeleton of the HTTP clients;
- :mod:`pikit.llm._openai` / :mod:`pikit.llm._anthropic`: the two wire protocols.

Importing this package does not import httpx; the clients import it when they first send a
request (install it with ``pip install 'pikit[llm]'``). Every failure raises
:class:`pikit.errors.SummarizerError` with a one-line message that never contains the API key.
"""

from __future__ import annotations

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ._anthropic import AnthropicSummarizer
    from ._base import SUMMARY_KINDS, Summarizer, SummaryKind, SummaryRequest, SummaryResult, combine_usage, empty_usage
    from ._models import DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT_TOKENS, MODELS, ModelInfo, Pricing, lookup_model
    from ._offline import OfflineSummarizer
    from ._openai import OpenAISummarizer
    from ._prompts import SYSTEM_PROMPT, build_prompt
    from ._select import SUMMARIZERS, get_summarizer
    from ._transport import RetryPolicy

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "MODELS",
    "SUMMARIZERS",
    "SUMMARY_KINDS",
    "SYSTEM_PROMPT",
    "AnthropicSummarizer",
    "ModelInfo",
    "OfflineSummarizer",
    "OpenAISummarizer",
    "Pricing",
    "RetryPolicy",
    "Summarizer",
    "SummaryKind",
    "SummaryRequest",
    "SummaryResult",
    "build_prompt",
    "combine_usage",
    "empty_usage",
    "get_summarizer",
    "lookup_model",
]

if not typing.TYPE_CHECKING:  # (type checkers see the imports above)
    __getattr__, __dir__ = _lazy.exports(__name__, {
        ".anthropic": ("AnthropicSummarizer",),
        ".base": (
            "SUMMARY_KINDS", "Summarizer", "SummaryKind", "SummaryRequest", "SummaryResult", "combine_usage",
            "empty_usage",
        ),
        ".models": (
            "DEFAULT_CONTEXT_WINDOW", "DEFAULT_MAX_OUTPUT_TOKENS", "MODELS", "ModelInfo", "Pricing", "lookup_model",
        ),
        ".offline": ("OfflineSummarizer",),
        ".openai": ("OpenAISummarizer",),
        ".prompts": ("SYSTEM_PROMPT", "build_prompt"),
        ".select": ("SUMMARIZERS", "get_summarizer"),
        ".transport": ("RetryPolicy",),
    })
