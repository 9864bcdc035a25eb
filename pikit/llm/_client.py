"""The skeleton of an HTTP summarizer: configuration, the API key, the request cycle.

:class:`HTTPSummarizer` is abstract: ``pikit.llm._openai`` and ``pikit.llm._anthropic``
fill in the wire format (:meth:`HTTPSummarizer._build_request` and
:meth:`HTTPSummarizer._parse_answer`); ``pikit.llm._transport`` does the HTTP.
"""

from __future__ import annotations

import abc
import os
import urllib.parse
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pikit.compaction._summarizer import SummaryRequest, SummaryResult
from pikit.errors import SummarizerConfigError, SummarizerError, SummarizerOutputError
from pikit.llm._models import ModelInfo, lookup_model
from pikit.llm._pricing import Pricing
from pikit.llm._prompts import build_prompt
from pikit.llm._secrets import Secret, contains_key, normalize_key
from pikit.llm._transport import RetryingClient, RetryPolicy

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_MAX_TOKENS", "HTTPSummarizer"]

DEFAULT_MAX_TOKENS = 8_192
"""The answer budget asked for a model whose output limit no source knows (pass ``max_tokens``)."""


class HTTPSummarizer(abc.ABC):
    """Base of the HTTP summarizers: configuration, key handling and the request cycle.

    Subclasses set the class attributes and implement :meth:`_build_request` and
    :meth:`_parse_answer`. Instances own an HTTP client: call :meth:`close` when done, or use
    them in a ``with`` block. The API key (surrounding whitespace removed) is kept in a
    ``Secret`` and never appears in ``repr``, errors, logs or a
    summary: an answer that holds it is refused.
    """

    name: str = "http"
    """Short name of the summarizer (the protocol's ``name``)."""
    default_base_url: ClassVar[str] = ""
    official_host: ClassVar[str] = ""
    api_key_env: ClassVar[str] = ""
    endpoint: ClassVar[str] = ""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120,
        retries: int = 3,
        transport: httpx.BaseTransport | None = None,
        *,
        backoff: float = 0.5,
        max_tokens: int | None = None,
        provider: str | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError("model must be a non-empty model id")
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0
        ):
            raise ValueError(f"max_tokens must be a positive integer, not {max_tokens!r}")
        self.model = model
        self.base_url = self._normalize_base_url(base_url or self.default_base_url)
        self.provider = provider or self.name
        self.model_info: ModelInfo | None = self._lookup(model)
        known = self.model_info.max_output_tokens if self.model_info is not None else None
        self.max_tokens = max_tokens if max_tokens is not None else (known or DEFAULT_MAX_TOKENS)
        raw = api_key if api_key else os.environ.get(self.api_key_env) or None
        # Every form of the key as given (a trailing CR included) is redacted, not only the stripped one.
        key = normalize_key(raw, "api_key" if api_key else f"${self.api_key_env}")
        self._api_key = Secret(key)
        if not self._api_key and self.is_official:
            raise SummarizerConfigError(
                f"{self.name} summarizer: no API key for {self.official_host}; "
                f"set {self.api_key_env} or pass api_key=..."
            )
        self.http: RetryingClient = RetryingClient(  # the HTTP layer (public for inspection and tests)
            label=f"{self.name} summarizer",
            timeout=timeout,
            policy=RetryPolicy(retries=retries, backoff=backoff),
            transport=transport,
            secrets=(key, raw),
            key_env=self.api_key_env,
        )

    @classmethod
    def _normalize_base_url(cls, base_url: str) -> str:
        """The API root as the requests need it (no trailing slash)."""
        return base_url.rstrip("/")

    def _lookup(self, model: str) -> ModelInfo | None:
        """The model as Pi resolves it (``provider/model``, else ``model`` when it names a provider
        itself), or ``None``: then ``max_tokens`` is :data:`DEFAULT_MAX_TOKENS` and the cost unknown."""
        info = lookup_model(f"{self.provider}/{model}")
        if info is None and "/" in model:
            info = lookup_model(model)
        return info

    @property
    def pricing(self) -> Pricing | None:
        """The model's prices as Pi resolves them (``None``: unknown, and so is the cost of a call)."""
        return self.model_info.pricing if self.model_info is not None else None

    @property
    def is_official(self) -> bool:
        """Whether the base URL is the provider's own API host."""
        try:
            host = urllib.parse.urlsplit(self.base_url).hostname
        except ValueError:
            return False
        return host == self.official_host

    @property
    def url(self) -> str:
        """The endpoint the summarizer POSTs to."""
        return f"{self.base_url}{self.endpoint}"

    @property
    def timeout(self) -> float:
        """Seconds allowed per attempt."""
        return self.http.timeout

    @property
    def retries(self) -> int:
        """Extra attempts after a retryable failure."""
        return self.http.policy.retries

    @property
    def has_api_key(self) -> bool:
        """Whether an API key is configured (the key itself is never exposed)."""
        return bool(self._api_key)

    @property
    def last_attempts(self) -> int:
        """How many HTTP attempts the last :meth:`summarize` made."""
        return self.http.last_attempts

    def __repr__(self) -> str:
        key = "<set>" if self._api_key else None
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
            f"api_key={key}, timeout={self.timeout:g}, retries={self.retries})"
        )

    def close(self) -> None:
        """Close the HTTP client; the summarizer can still be used afterwards."""
        self.http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _fail(self, message: str, kind: type[SummarizerError] = SummarizerOutputError) -> SummarizerError:
        return self.http.error(message, kind)

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """Ask the model for the summary described by ``request``.

        Raises:
            SummarizerError: the request failed after retries, or the answer is not a usable
                summary (cut off by the output limit, a tool call, malformed, empty, holding
                the API key).
        """
        system_prompt, user_prompt = build_prompt(request)
        return self.complete(system_prompt, user_prompt)

    def complete(self, system_prompt: str, user_prompt: str) -> SummaryResult:
        """Send one ``system_prompt`` and one ``user_prompt``; the model's text answer.

        The request cycle of :meth:`summarize` (its retries, time limits and checks) for any
        instruction: the probes of :func:`pikit.llm.probe` ask their questions through it.

        Raises:
            SummarizerError: as :meth:`summarize`.
        """
        headers, body = self._build_request(system_prompt, user_prompt)
        data = self.http.post_json(self.url, headers=headers, body=body)
        result = self._parse_answer(data)
        key = self._api_key.reveal()
        if key and contains_key(f"{result.text}\n{result.model}", [key]):
            raise self._fail("the summary contains the API key (the server echoes credentials); refused, "
                             "nothing written")
        return result

    @abc.abstractmethod
    def _build_request(self, system_prompt: str, user_prompt: str) -> tuple[dict[str, str], dict[str, Any]]:
        """Return the headers and JSON body of the request."""

    @abc.abstractmethod
    def _parse_answer(self, data: Mapping[str, Any]) -> SummaryResult:
        """Turn a decoded answer into a result, raising :class:`SummarizerError` if unusable."""

    def _model_label(self, data: Mapping[str, Any]) -> str:
        answered = data.get("model")
        model = answered if isinstance(answered, str) and answered.strip() else self.model
        return f"{self.provider}/{model}"
