"""Summarizers backed by language models: a small layered HTTP client.

The summarizers implement :class:`pikit.compaction.Summarizer` (the protocol, with
:class:`~pikit.compaction.SummaryRequest` and :class:`~pikit.compaction.SummaryResult`, belongs
to the core so that compaction never depends on this layer):

- :class:`OfflineSummarizer`: deterministic, no network, no key;
- :class:`OpenAISummarizer` and :class:`AnthropicSummarizer`: the two wire protocols over one
  small HTTP client (retries, backoff, time and size limits, secret-free errors);
- :func:`get_summarizer`: one of them by name; :func:`build_prompt`: pikit's instruction texts;
- :func:`lookup_model`: context windows and output budgets of well-known models.

Importing this package does not import httpx; the clients import it when they first send a
request (install it with ``pip install 'pikit[llm]'``). Every failure raises
:class:`pikit.errors.SummarizerError` with a one-line message that never contains the API key.
"""

from __future__ import annotations

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ._anthropic import AnthropicSummarizer as AnthropicSummarizer
    from ._models import (
        DEFAULT_CONTEXT_WINDOW as DEFAULT_CONTEXT_WINDOW,
        DEFAULT_MAX_OUTPUT_TOKENS as DEFAULT_MAX_OUTPUT_TOKENS,
        MODELS as MODELS,
        ModelInfo as ModelInfo,
        Pricing as Pricing,
        lookup_model as lookup_model,
    )
    from ._offline import OfflineSummarizer as OfflineSummarizer
    from ._openai import OpenAISummarizer as OpenAISummarizer
    from ._prompts import SYSTEM_PROMPT as SYSTEM_PROMPT, build_prompt as build_prompt
    from ._select import SUMMARIZERS as SUMMARIZERS, get_summarizer as get_summarizer
    from ._transport import RetryPolicy as RetryPolicy

if not typing.TYPE_CHECKING:  # (type checkers read the declaration above)
    __getattr__, __dir__, __all__ = _lazy.exports(__name__)
