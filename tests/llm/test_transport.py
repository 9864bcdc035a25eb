"""pikit.llm._transport: retry policy, Retry-After, error texts and secrets, with MockTransport."""

from __future__ import annotations

import email.utils
import json
import logging
import random
from collections.abc import Callable, Sequence

import httpx
import pytest
from hypothesis import given, strategies as st

from pikit.errors import SummarizerError
from pikit.llm import RetryPolicy
from pikit.llm._secrets import Secret, clean_message
from pikit.llm._transport import RetryingClient, parse_retry_after, token_count

pytestmark = pytest.mark.timeout(120)  # (a hang guard: a loaded machine is slow)

URL = "http://llm.test/v1/chat/completions"
KEY = "sk-transport-SECRET-0123456789"


class RecordingRng:
    """A fake jitter source: records the bounds it was asked for and returns the top one."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, float]] = []

    def uniform(self, a: float, b: float, /) -> float:
        self.calls.append((a, b))
        return b


Reply = httpx.Response | Exception


def _client(
    replies: Sequence[Reply], *, retries: int = 3, backoff: float = 0.5, timeout: float = 5.0, **policy: float
) -> tuple[RetryingClient, list[httpx.Request], list[float], RecordingRng]:
    """A RetryingClient whose transport plays ``replies`` in order (exceptions are raised)."""
    queue = list(replies)
    seen: list[httpx.Request] = []
    waits: list[float] = []
    rng = RecordingRng()

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        reply = queue.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    client = RetryingClient(
        label="test summarizer",
        timeout=timeout,
        policy=RetryPolicy(retries=retries, backoff=backoff, **policy),
        transport=httpx.MockTransport(handler),
        secrets=(KEY,),
        key_env="TEST_API_KEY",
        sleep=waits.append,
        rng=rng,
    )
    return client, seen, waits, rng


def _ok(data: object = None) -> httpx.Response:
    return httpx.Response(200, json={"ok": True} if data is None else data)


def _post(client: RetryingClient) -> dict[str, object]:
    return client.post_json(URL, headers={"authorization": f"Bearer {KEY}"}, body={"model": "m", "n": 1})


# --- the happy path -----------------------------------------------------------------------


def test_success_posts_json_once() -> None:
    client, seen, waits, _ = _client([_ok({"answer": 42})])
    assert _post(client) == {"answer": 42}
    assert len(seen) == 1 and waits == []
    assert client.last_attempts == 1
    request = seen[0]
    assert request.method == "POST"
    assert str(request.url) == URL
    assert json.loads(request.content) == {"model": "m", "n": 1}
    assert request.headers["content-type"] == "application/json"
    assert request.extensions["timeout"] == {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0}


def test_client_is_reused_and_reopened_after_close() -> None:
    client, _, _, _ = _client([_ok(), _ok(), _ok()])
    _post(client)
    first = client.client
    _post(client)
    assert client.client is first
    client.close()
    assert first.is_closed
    _post(client)
    assert client.client is not first


# --- backoff ------------------------------------------------------------------------------


def test_exponential_backoff_with_full_jitter() -> None:
    replies: list[Reply] = [httpx.Response(500), httpx.Response(502), httpx.Response(503), _ok()]
    client, seen, waits, rng = _client(replies, retries=3, backoff=0.5)
    assert _post(client) == {"ok": True}
    assert len(seen) == 4
    assert client.last_attempts == 4
    assert rng.calls == [(0.0, 0.5), (0.0, 1.0), (0.0, 2.0)]
    assert waits == [0.5, 1.0, 2.0]


def test_backoff_is_capped() -> None:
    client, _, waits, rng = _client([httpx.Response(500)] * 4 + [_ok()], retries=4, backoff=1.0, max_backoff=3.0)
    _post(client)
    assert [b for _, b in rng.calls] == [1.0, 2.0, 3.0, 3.0]
    assert waits == [1.0, 2.0, 3.0, 3.0]


@pytest.mark.parametrize(
    ("code", "header", "expected"),
    [
        (429, "2", 2.0),
        (503, "1.5", 1.5),
        (429, "0", 0.0),
        (429, "100000", 60.0),  # capped at max_retry_after
    ],
)
def test_retry_after_is_honoured_on_429_and_503(code: int, header: str, expected: float) -> None:
    client, _, waits, rng = _client([httpx.Response(code, headers={"Retry-After": header}), _ok()])
    _post(client)
    assert waits == [expected]
    assert rng.calls == []  # no jitter when the server said how long to wait


def test_retry_after_as_http_date() -> None:
    date = email.utils.formatdate(usegmt=True)  # "now": wait ~0 s
    client, _, waits, _ = _client([httpx.Response(429, headers={"Retry-After": date}), _ok()])
    _post(client)
    assert len(waits) == 1 and 0.0 <= waits[0] <= 1.0


def test_retry_after_is_ignored_on_other_5xx() -> None:
    client, _, waits, rng = _client([httpx.Response(500, headers={"Retry-After": "30"}), _ok()], backoff=0.25)
    _post(client)
    assert waits == [0.25]
    assert rng.calls == [(0.0, 0.25)]


def test_garbage_retry_after_falls_back_to_backoff() -> None:
    client, _, waits, rng = _client([httpx.Response(429, headers={"Retry-After": "soon"}), _ok()], backoff=0.25)
    _post(client)
    assert waits == [0.25] and len(rng.calls) == 1


# --- what is retried ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "failure",
    [
        httpx.ConnectError("connection refused"),
        httpx.ReadError("connection reset"),
        httpx.RemoteProtocolError("Server disconnected without sending a response."),
        httpx.ConnectTimeout("connect timed out"),
        httpx.ReadTimeout("read timed out"),
        httpx.WriteTimeout("write timed out"),
        httpx.PoolTimeout("pool timed out"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_transport_errors_are_retried(failure: Exception) -> None:
    client, seen, waits, _ = _client([failure, _ok()])
    assert _post(client) == {"ok": True}
    assert len(seen) == 2 and len(waits) == 1


def test_timeouts_until_the_end() -> None:
    client, seen, waits, _ = _client([httpx.ReadTimeout("slow")] * 3, retries=2, timeout=0.5)
    with pytest.raises(SummarizerError, match=r"^test summarizer: no answer from .*timed out after 0\.5s on each of 3"):
        _post(client)
    assert len(seen) == 3 and len(waits) == 2


def test_connection_errors_until_the_end() -> None:
    client, seen, _, _ = _client([httpx.ConnectError("refused")] * 2, retries=1)
    with pytest.raises(
        SummarizerError,
        match=r"cannot reach .* after 2 attempt\(s\): connection failed \(ConnectError: refused\)",
    ):
        _post(client)
    assert len(seen) == 2


def test_unsupported_protocol_fails_at_once() -> None:
    client, seen, waits, _ = _client([httpx.UnsupportedProtocol("ftp is not supported")])
    with pytest.raises(SummarizerError, match=r"cannot send the request .*check the base URL"):
        _post(client)
    assert len(seen) == 1 and waits == []


@pytest.mark.parametrize(
    ("code", "hint"),
    [
        (400, "the request was rejected"),
        (401, r"authentication failed; check the API key \(TEST_API_KEY\)"),
        (403, "access denied"),
        (404, "not found; check the base URL and the model name"),
        (413, "the request is too large"),
        (422, "the request was rejected"),
    ],
)
def test_client_errors_are_not_retried(code: int, hint: str) -> None:
    client, seen, waits, _ = _client([httpx.Response(code, json={"error": {"message": "bad thing"}}), _ok()])
    with pytest.raises(SummarizerError, match=f"HTTP {code} from {URL} \\(bad thing\\): {hint}"):
        _post(client)
    assert len(seen) == 1 and waits == []
    assert client.last_attempts == 1


def test_5xx_until_the_end() -> None:
    client, seen, _, _ = _client(
        [httpx.Response(529, json={"type": "error", "error": {"message": "Overloaded"}})] * 3, retries=2
    )
    with pytest.raises(
        SummarizerError, match=r"HTTP 529 .*\(Overloaded\): the server kept failing after 3 attempt\(s\)"
    ):
        _post(client)
    assert len(seen) == 3


def test_non_json_answer() -> None:
    client, _, _, _ = _client([httpx.Response(200, text="a login page")])
    with pytest.raises(SummarizerError, match=r"not a JSON object \(HTTP 200, 12 bytes\)"):
        _post(client)


# --- secrets and one-line messages --------------------------------------------------------


def test_error_text_is_one_line_and_redacted_before_truncation(caplog: pytest.LogCaptureFixture) -> None:
    # The key sits right where the 200-character cut falls: redacting after cutting would leak
    # its first half.
    message = "x" * 180 + f" {KEY} \n second line"
    caplog.set_level(logging.DEBUG)
    client, _, _, _ = _client([httpx.Response(500, text=message)] * 2, retries=1)
    with pytest.raises(SummarizerError) as info:
        _post(client)
    text = str(info.value)
    assert "\n" not in text
    assert "x" * 150 in text  # the body is there, cut
    assert KEY[:15] not in text
    assert KEY not in caplog.text


def test_secret_hides_its_value() -> None:
    secret = Secret(KEY)
    assert secret.reveal() == KEY
    assert KEY not in repr(secret) and KEY not in str(secret) and KEY not in f"{secret}"
    assert bool(secret) and not Secret(None) and not Secret("")
    assert Secret(None).reveal() is None


def test_clean_message() -> None:
    assert clean_message("a\n\tb   c") == "a b c"
    assert clean_message(f"key={KEY}!", [KEY]) == "key=***!"
    assert clean_message("abcdef", limit=4) == "abc…"
    assert clean_message("x", [None, ""]) == "x"


# --- small helpers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("0", 0.0),
        ("3", 3.0),
        (" 2.5 ", 2.5),
        ("-4", 0.0),
        ("nan", None),
        ("inf", None),
        ("soon", None),
    ],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value) == expected


def test_parse_retry_after_date() -> None:
    date = "Wed, 21 Oct 2015 07:28:00 GMT"
    at = email.utils.parsedate_to_datetime(date).timestamp()
    assert parse_retry_after(date, now=at - 10) == pytest.approx(10.0)
    assert parse_retry_after(date, now=at + 10) == 0.0


@pytest.mark.parametrize(
    "kwargs",
    [{"retries": -1}, {"retries": 1.5}, {"retries": True}, {"backoff": -0.1}, {"max_backoff": float("nan")}],
)
def test_policy_validation(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), True])
def test_timeout_validation(timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout"):
        RetryingClient(label="x", timeout=timeout, policy=RetryPolicy())


@given(
    retry=st.integers(min_value=0, max_value=40),
    backoff=st.floats(min_value=0, max_value=10),
    cap=st.floats(min_value=0, max_value=100),
    seed=st.integers(),
)
def test_full_jitter_stays_in_bounds(retry: int, backoff: float, cap: float, seed: int) -> None:
    policy = RetryPolicy(backoff=backoff, max_backoff=cap)
    delay = policy.delay(retry, None, random.Random(seed))
    assert 0.0 <= delay <= min(cap, backoff * 2**retry)


@given(retry_after=st.floats(min_value=0, max_value=1e6), cap=st.floats(min_value=0, max_value=100))
def test_retry_after_is_capped(retry_after: float, cap: float) -> None:
    policy = RetryPolicy(max_retry_after=cap)
    assert policy.delay(0, retry_after, random.Random(0)) == min(retry_after, cap)


def test_token_count() -> None:
    convert: Callable[[object], int] = token_count
    assert [convert(v) for v in (5, 5.9, -2, None, "7", True, float("nan"))] == [5, 5, 0, 0, 0, 0, 0]
