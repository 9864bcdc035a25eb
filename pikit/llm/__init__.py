"""Summarizers backed by language models: a small layered HTTP client.

The summarizers implement :class:`pikit.compaction.Summarizer` (the protocol, with
:class:`~pikit.compaction.SummaryRequest` and :class:`~pikit.compaction.SummaryResult`, belongs
to the core so that compaction never depends on this layer):

- :class:`OfflineSummarizer`: deterministic, no network, no key;
- :class:`OpenAISummarizer` and :class:`AnthropicSummarizer`: the two wire protocols over one
  small HTTP client (retries, backoff, time and size limits, secret-free errors);
- :func:`get_summarizer`: one of them by name; :func:`build_prompt`: pikit's instruction texts;
- :func:`probe`: the probes of one compaction (:class:`ProbeResult`, :class:`Probe`):
  questions a model writes from the span a compaction replaced and answers from what it left;
- :func:`judge`: a model's verdict on each fact of an evaluation (does the context after the
  compaction still hold it?), in place of pikit's rules;
- :func:`lookup_model` and :func:`model_catalog`: context windows, output limits and prices of
  models, resolved as Pi resolves them (its built-in catalogs, ``models-store.json``,
  ``models.json``); an unknown model is ``None``, never a guessed window.

Importing this package does not import httpx; the clients import it when they first send a
request (install it with ``pip install 'pikit[llm]'``). Every failure raises
:class:`pikit.errors.SummarizerError` with a one-line message that never contains the API key.
"""

from __future__ import annotations

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ._anthropic import AnthropicSummarizer as AnthropicSummarizer
    from ._judge import FACTS_PER_CALL as FACTS_PER_CALL, judge as judge
    from ._models import (
        ModelCatalog as ModelCatalog,
        ModelInfo as ModelInfo,
        agent_dir as agent_dir,
        lookup_model as lookup_model,
        model_catalog as model_catalog,
    )
    from ._offline import OfflineSummarizer as OfflineSummarizer
    from ._openai import OpenAISummarizer as OpenAISummarizer
    from ._pricing import CostTier as CostTier, Pricing as Pricing, usage_with_cost as usage_with_cost
    from ._probes import (
        MAX_GRADE as MAX_GRADE,
        MAX_PROMPT_CHARS as MAX_PROMPT_CHARS,
        PROBE_KINDS as PROBE_KINDS,
        Probe as Probe,
        ProbeClient as ProbeClient,
        ProbeResult as ProbeResult,
        probe as probe,
    )
    from ._prompts import SYSTEM_PROMPT as SYSTEM_PROMPT, build_prompt as build_prompt
    from ._select import SUMMARIZERS as SUMMARIZERS, get_summarizer as get_summarizer
    from ._transport import RetryPolicy as RetryPolicy
    from ._window import (
        UNKNOWN_WINDOW_HINT as UNKNOWN_WINDOW_HINT,
        ContextWindow as ContextWindow,
        model_window as model_window,
    )

if not typing.TYPE_CHECKING:  # (type checkers read the declaration above)
    __getattr__, __dir__, __all__ = _lazy.exports(__name__)
