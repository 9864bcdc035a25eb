"""The summarizer protocol: requests, results, usage arithmetic."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import re

import pytest
from hypothesis import given, strategies as st

from pikit.compaction import Summarizer, SummaryRequest, SummaryResult
from pikit.compaction._summarizer import combine_usage, empty_usage
from pikit.llm import AnthropicSummarizer, OfflineSummarizer, OpenAISummarizer

TOKEN_KEYS = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"]
COST_KEYS = ["input", "output", "cacheRead", "cacheWrite", "total"]


def test_empty_usage_shape() -> None:
    usage = empty_usage()
    assert list(usage) == [*TOKEN_KEYS, "cost"]
    assert list(usage["cost"]) == COST_KEYS
    assert all(usage[k] == 0 and type(usage[k]) is int for k in TOKEN_KEYS)
    assert all(usage["cost"][k] == 0.0 and type(usage["cost"][k]) is float for k in COST_KEYS)
    usage["cost"]["total"] = 1.0
    assert empty_usage()["cost"]["total"] == 0.0  # a fresh dict every time


def _usage(n: int, c: float) -> dict[str, object]:
    usage = empty_usage()
    for i, key in enumerate(TOKEN_KEYS):
        usage[key] = n * (i + 1)
    for i, key in enumerate(COST_KEYS):
        usage["cost"][key] = c * (i + 1)
    return usage


def test_combine_usage_adds_field_by_field() -> None:
    total = combine_usage(_usage(1, 0.5), _usage(10, 0.25))
    assert total is not None
    assert [total[k] for k in TOKEN_KEYS] == [11, 22, 33, 44, 55]
    assert [total["cost"][k] for k in COST_KEYS] == pytest.approx([0.75, 1.5, 2.25, 3.0, 3.75])
    assert list(total) == [*TOKEN_KEYS, "cost"]


def test_combine_usage_with_none() -> None:
    assert combine_usage(None, None) is None
    one = _usage(3, 0.1)
    assert combine_usage(None, one) == one
    assert combine_usage(one, None) == one
    assert combine_usage(None, one) is not one  # a copy, never the argument itself


def test_combine_usage_tolerates_missing_fields() -> None:
    total = combine_usage({"input": 5}, {"output": 2, "cost": {"total": 0.5}, "totalTokens": "x"})
    assert total is not None
    assert [total[k] for k in TOKEN_KEYS] == [5, 2, 0, 0, 0]
    assert total["cost"]["total"] == 0.5


@given(st.lists(st.integers(min_value=0, max_value=10**9), min_size=5, max_size=5), st.integers(0, 10**9))
def test_combine_usage_is_commutative(a: list[int], b: int) -> None:
    x = dict(zip(TOKEN_KEYS, a, strict=True))
    y = dict.fromkeys(TOKEN_KEYS, b)
    assert combine_usage(x, y) == combine_usage(y, x)


def test_request_defaults_and_validation() -> None:
    request = SummaryRequest("history", "text")
    assert request.messages == ()
    assert request.previous_summary is None and request.instructions is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.kind = "branch"  # type: ignore[misc]
    with pytest.raises(ValueError, match="unknown summary kind 'summary'"):
        SummaryRequest("summary", "text")  # type: ignore[arg-type]


def test_request_text_made_once_when_first_read() -> None:
    calls: list[int] = []

    def text() -> str:
        calls.append(1)
        return "[User]: hi"

    request = SummaryRequest("history", text, [{"role": "user", "content": "hi", "timestamp": 1}])
    OfflineSummarizer().summarize(request)
    assert calls == []  # the offline summarizer reads the messages, never the text
    assert request.conversation_text == "[User]: hi" and request.conversation_text == "[User]: hi"
    assert calls == [1]
    assert request == SummaryRequest("history", "[User]: hi", [{"role": "user", "content": "hi", "timestamp": 1}])
    assert request != SummaryRequest("history", "[User]: bye", request.messages)
    assert repr(request).startswith("SummaryRequest(kind='history', conversation_text='[User]: hi', messages=[")
    with pytest.raises(dataclasses.FrozenInstanceError):
        del request.messages
    assert hash(SummaryRequest("history", lambda: "x")) == hash(SummaryRequest("history", "x"))
    lazy = SummaryRequest("turn_prefix", lambda: "[User]: go", ({"role": "user", "content": "go"},), "before", "focus",
                          "handoff")
    for copied in (pickle.loads(pickle.dumps(lazy)), copy.deepcopy(lazy), copy.copy(lazy)):
        assert copied == lazy and copied.conversation_text == "[User]: go" and copied.format == "handoff"


def test_result_defaults() -> None:
    result = SummaryResult("## Goal", None)
    assert result.model is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.text = "x"  # type: ignore[misc]


class _Offline:
    name = "offline"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        return SummaryResult(f"## Goal\n{request.conversation_text}", None)


def test_protocol() -> None:
    assert isinstance(_Offline(), Summarizer)
    assert isinstance(OpenAISummarizer("m", "http://127.0.0.1:9/v1"), Summarizer)
    assert isinstance(AnthropicSummarizer("m", "http://127.0.0.1:9/v1"), Summarizer)
    assert not isinstance(object(), Summarizer)
    assert OpenAISummarizer("m", "http://127.0.0.1:9/v1").name == "openai"
    assert AnthropicSummarizer("m", "http://127.0.0.1:9/v1").name == "anthropic"


@pytest.mark.parametrize(
    "kwargs",
    [{"model": ""}, {"max_tokens": 0}, {"max_tokens": 1.5}, {"timeout": 0}, {"retries": -1}, {"backoff": -1}],
)
def test_constructor_validation(kwargs: dict[str, object]) -> None:
    options: dict[str, object] = {"model": "m", "base_url": "http://127.0.0.1:9/v1", **kwargs}
    with pytest.raises(ValueError):
        OpenAISummarizer(**options)  # type: ignore[arg-type]


def test_http_summarizer_template_methods_are_abstract() -> None:
    import inspect

    from pikit.llm._client import HTTPSummarizer

    assert inspect.isabstract(HTTPSummarizer)
    assert HTTPSummarizer.__abstractmethods__ == frozenset({"_build_request", "_parse_answer"})
    with pytest.raises(TypeError, match="abstract"):
        HTTPSummarizer("m", "http://127.0.0.1:9/v1")  # type: ignore[abstract]


def test_the_summarizer_errors_form_the_tree_the_docstring_draws() -> None:
    import pikit.errors as errors

    doc = errors.__doc__ or ""
    classes = {name: getattr(errors, name) for name in errors.__all__}
    summarizer = {name: cls for name, cls in classes.items() if issubclass(cls, errors.SummarizerError)}
    assert len(summarizer) >= 12
    lines = doc.splitlines()
    for name, cls in summarizer.items():
        row = next(i for i, line in enumerate(lines) if re.search(rf"[─ ]{name}\b", line))
        indent = lines[row].index(name)
        if cls is errors.SummarizerError:
            continue
        parent = cls.__bases__[0].__name__
        above = next(lines[i] for i in range(row - 1, -1, -1) if lines[i].find("── ") >= 0
                     and lines[i].index("── ") + 3 < indent)
        assert parent in above, (name, parent, above)
        error = cls("x", status=418)
        assert error.status == 418 and isinstance(error.retryable, bool) and isinstance(error, errors.PikitError)
    assert errors.SummarizerTimeout("x").retryable and errors.SummarizerServerError("x").retryable
    assert not errors.SummarizerAuthError("x").retryable and not errors.SummarizerRedirectError("x").retryable
    assert not errors.SummarizerRateLimitError("quota", retryable=False).retryable
