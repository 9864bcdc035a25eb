"""Summarizers backed by language models: a small layered HTTP client.

- :mod:`pikit.llm.base`: the :class:`Summarizer` protocol, :class:`SummaryRequest`,
  :class:`SummaryResult` and Pi's usage shape;
- :mod:`pikit.llm.prompts`: pikit's instruction texts and :func:`build_prompt`;
- :mod:`pikit.llm.models`: context windows and output budgets of well-known models;
- :mod:`pikit.llm.secrets`: API keys read cleanly and redacted in every form;
- :mod:`pikit.llm.transport`: retries, backoff, time and size limits, secret-free errors;
- :mod:`pikit.llm.client`: :class:`HTTPSummarizer`, the skeleton of the HTTP clients;
- :mod:`pikit.llm.openai` / :mod:`pikit.llm.anthropic`: the two wire protocols.

Importing this package does not import httpx; the clients import it when they first send a
request (install it with ``pip install 'pikit[llm]'``). Every failure raises
:class:`pikit.errors.SummarizerError` with a one-line message that never contains the API key.
"""

from __future__ import annotations

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from .anthropic import AnthropicSummarizer
    from .base import SUMMARY_KINDS, Summarizer, SummaryKind, SummaryRequest, SummaryResult, combine_usage, empty_usage
    from .models import DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT_TOKENS, MODELS, ModelInfo, Pricing, lookup_model
    from .offline import OfflineSummarizer
    from .openai import OpenAISummarizer
    from .prompts import SYSTEM_PROMPT, build_prompt
    from .select import SUMMARIZERS, get_summarizer
    from .transport import RetryPolicy

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
