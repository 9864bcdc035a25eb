"""Slow, endless, redirecting, web-page and credential-echoing servers; keys with stray bytes.

Real sockets on 127.0.0.1 (see :mod:`tests.llm.hostile`), the real httpx client, and the
command line as a separate process; every test has a time limit and every server loop a cap.
"""

from __future__ import annotations

import base64
import logging
import re
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

from pikit.compaction import SummaryRequest
from pikit.errors import (
    SummarizerAuthError,
    SummarizerConfigError,
    SummarizerError,
    SummarizerHTTPError,
    SummarizerNotAPIError,
    SummarizerOutputError,
    SummarizerRedirectError,
    SummarizerTimeout,
    SummarizerTooLargeError,
)
from pikit.llm import AnthropicSummarizer, OpenAISummarizer
from pikit.llm._secrets import clean_message, key_forms, normalize_key, redact
from tests.llm import hostile
from tests.llm.hostile import RawServer
from tests.procs import one_error_line, pikit

pytestmark = pytest.mark.timeout(120)

KEY = "sk-hostile-KEY-5e2b7c9a1d"
REQUEST = SummaryRequest(kind="history", conversation_text="[User]: fix the parser tests")
SESSION = Path(__file__).resolve().parents[2] / "data" / "sample_sessions" / "refactor-auth.jsonl"


def summarize(server: RawServer, *, timeout: float = 1.0, retries: int = 0, key: str = KEY) -> object:
    with OpenAISummarizer("m", server.base_url, api_key=key, timeout=timeout, retries=retries,
                          backoff=0.01) as summarizer:
        return summarizer.summarize(REQUEST)


# ---------------------------------------------------------------- timing
@pytest.mark.parametrize("behaviour", [hostile.slowloris_body, hostile.slow_headers], ids=["body", "headers"])
@pytest.mark.parametrize("retries", [0, 2])
def test_timeout_bounds_the_whole_attempt_against_trickling_servers(behaviour: hostile.Behaviour,
                                                                    retries: int) -> None:
    with RawServer(behaviour) as server:
        start = time.monotonic()
        with pytest.raises(SummarizerTimeout, match=f"timed out after 1s on each of {retries + 1}") as info:
            summarize(server, timeout=1.0, retries=retries)
        took = time.monotonic() - start
    assert info.value.retryable and info.value.status is None
    assert server.connections == retries + 1
    # One second per attempt (plus scheduling slack on a loaded machine), never the minute the server offers.
    assert took < (retries + 1) * 1.0 + 20.0, took  # (a trickle lasts 60 s: a wide margin still tells)


@pytest.mark.timeout(60)
def test_cli_timeout_against_a_trickling_server(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with RawServer(hostile.slowloris_body) as server:
        start = time.monotonic()
        proc = pikit("compact", SESSION, "--keep-recent-tokens", "4000", "--summarizer", "openai", "--base-url",
                     server.base_url, "--model", "local/m", "--timeout", "1.5", "--retries", "1", "-o", out,
                     extra_env={"OPENAI_API_KEY": KEY}, timeout=50)
        took = time.monotonic() - start
    one_error_line(proc, "timed out after 1.5s on each of 2 attempt(s)")
    assert took < 40 and not out.exists()  # (a hang guard below the run's 50 s limit)


# ---------------------------------------------------------------- size
@pytest.mark.parametrize("behaviour", [hostile.endless_body, hostile.huge_announced], ids=["endless", "announced"])
def test_oversized_bodies_are_refused_without_reading_them(behaviour: hostile.Behaviour) -> None:
    with RawServer(behaviour) as server:
        start = time.monotonic()
        with pytest.raises(SummarizerTooLargeError, match="larger than 16 MiB") as info:
            summarize(server, timeout=30.0, retries=2)
    assert not info.value.retryable and server.connections == 1
    assert time.monotonic() - start < 20


# ---------------------------------------------------------------- refusals
@pytest.mark.parametrize(("location", "kind", "needle"), [
    ("http://elsewhere.invalid/v1/chat/completions", SummarizerRedirectError, "to another host (elsewhere.invalid)"),
    ("https://127.0.0.1/v1/chat/completions", SummarizerRedirectError, "does not follow redirects"),
])
def test_redirects_are_refused_and_never_followed(location: str, kind: type[SummarizerError], needle: str) -> None:
    with RawServer(hostile.redirect_to(location)) as server, pytest.raises(kind, match=re.escape(needle)) as info:
        summarize(server, retries=3)
    assert info.value.status == 307 and not info.value.retryable and server.connections == 1


def test_a_redirect_to_another_port_of_the_same_host_is_not_followed_either() -> None:
    with RawServer(hostile.normal) as target:
        moved = hostile.redirect_to(f"{target.base_url}/chat/completions", "301 Moved Permanently")
        with RawServer(moved) as server, pytest.raises(SummarizerRedirectError):
            summarize(server, retries=3)
    assert target.connections == 0  # the key never went to the other server


@pytest.mark.parametrize("status", ["200 OK", "203 Non-Authoritative Information", "502 Bad Gateway"])
def test_html_pages_are_refused(status: str) -> None:
    with RawServer(hostile.html_page(status)) as server:
        kind = SummarizerNotAPIError if status.startswith("2") else SummarizerHTTPError
        with pytest.raises(kind) as info:
            summarize(server, retries=0)
    if status.startswith("2"):
        assert "an HTML page (HTTP 2" in str(info.value) and server.connections == 1


@pytest.mark.parametrize(("status", "needle"), [("401 Unauthorized", "authentication failed; check the API key "
                                                 "(OPENAI_API_KEY)"),
                                                ("403 Forbidden", "access denied")])
def test_401_and_403_are_specific_and_not_retried(status: str, needle: str) -> None:
    with RawServer(hostile.status_answer(status, "invalid x-api-key")) as server, \
            pytest.raises(SummarizerAuthError) as info:
        summarize(server, retries=3)
    assert needle in str(info.value) and info.value.status == int(status[:3])
    assert not info.value.retryable and server.connections == 1


@pytest.mark.parametrize(("wire", "base"), [("anthropic", ""), ("anthropic", "/v1"), ("anthropic", "/v1/")])
def test_anthropic_base_url_follows_the_anthropic_convention(wire: str, base: str) -> None:
    seen: list[bytes] = []

    def record(conn: object, request: bytes, server: RawServer) -> None:
        seen.append(request)
        hostile.anything("200 OK", {"type": "message", "content": [{"type": "text", "text": "## Goal\nx"}],
                                    "stop_reason": "end_turn", "model": "m"})(conn, request, server)  # type: ignore[arg-type]

    with RawServer(record) as server:
        root = server.base_url.removesuffix("/v1")
        with AnthropicSummarizer("m", root + base, api_key=KEY, timeout=5) as summarizer:
            assert summarizer.summarize(REQUEST).text == "## Goal\nx"
            assert summarizer.url == f"{root}/v1/messages"
    assert seen[0].startswith(b"POST /v1/messages HTTP/1.1")
    assert AnthropicSummarizer.default_base_url == "https://api.anthropic.com"


# ---------------------------------------------------------------- secrets
def test_key_forms_cover_raw_escaped_percent_and_base64_at_any_alignment() -> None:
    key = "sk-ab+c/d=9\r"
    forms = key_forms(key)
    assert key in forms and key.strip() in forms and "sk-ab+c/d=9\\r" in forms
    for prefix in ("", "B", "Be", "Bearer ", "Authorization: Bearer "):
        for stripped in (key, key.strip()):
            encoded = base64.b64encode((prefix + stripped).encode()).decode()
            assert len(redact(encoded, [key])) < len(encoded) - 4, (prefix, encoded)
            assert stripped not in base64.b64decode(redact(encoded, [key]).replace("***", "") + "==", validate=False) \
                .decode("latin-1")
    assert clean_message(f"a {key!r} b", [key]) == "a '***' b"


@pytest.mark.parametrize("raw", [KEY + "\r", KEY + "\n", KEY + "\r\n", "  " + KEY + "\t"])
def test_keys_with_stray_whitespace_work_and_never_show(raw: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    assert normalize_key(raw, "$X") == KEY
    with RawServer(hostile.echo_in_error("raw")) as server, pytest.raises(SummarizerHTTPError) as info:
        summarize(server, key=raw)
    assert hostile.credentials(server.requests[0]) == KEY  # sent stripped
    text = str(info.value) + repr(info.value) + caplog.text
    assert all(form not in text for form in key_forms(raw)) and "***" in str(info.value)


@pytest.mark.parametrize("key", ["sk-ключ-123", "sk-abc\u00a0def", "sk-a\x00b", "sk-a b", "sk-\u2028x"])
def test_keys_that_cannot_be_sent_get_one_clear_line(key: str, tmp_path: Path) -> None:
    with pytest.raises(SummarizerConfigError, match="holds characters an HTTP header cannot carry") as info:
        OpenAISummarizer("m", "http://127.0.0.1:9/v1", api_key=key)
    assert key not in str(info.value)
    if "\x00" in key:
        return  # an environment variable cannot hold NUL
    proc = pikit("compact", SESSION, "--keep-recent-tokens", "4000", "--summarizer", "openai", "--base-url",
                 "http://127.0.0.1:9/v1", "--model", "local/m", "-o", tmp_path / "o.jsonl",
                 extra_env={"OPENAI_API_KEY": key})
    line = one_error_line(proc, "OPENAI_API_KEY", "cannot carry")
    assert key not in line and key.encode() not in proc.stdout


@pytest.mark.parametrize("encoding", ["raw", "repr", "base64", "json"])
def test_a_server_echoing_the_key_in_its_error_never_gets_it_shown(encoding: str,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # httpx and httpcore log too
    with RawServer(hostile.echo_in_error(encoding)) as server, pytest.raises(SummarizerHTTPError) as info:
        summarize(server)
    shown = "".join(traceback.format_exception(info.value)) + repr(info.value) + caplog.text
    assert KEY not in shown and base64.b64encode(KEY.encode()).decode()[:-4] not in shown


@pytest.mark.parametrize("where", ["summary", "model"])
def test_a_summary_holding_the_key_is_refused(where: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with RawServer(hostile.echo_in_summary(where)) as server, \
            pytest.raises(SummarizerOutputError, match="contains the API key") as info:
        summarize(server, retries=2)
    assert server.connections == 1 and not info.value.retryable
    assert KEY not in str(info.value) + caplog.text


@pytest.mark.timeout(120)
@pytest.mark.parametrize("behaviour", ["error", "summary"])
def test_cli_never_prints_or_writes_the_key(behaviour: str, tmp_path: Path) -> None:
    make: Callable[..., hostile.Behaviour] = hostile.echo_in_error if behaviour == "error" else \
        hostile.echo_in_summary
    out = tmp_path / "out.jsonl"
    with RawServer(make("raw" if behaviour == "error" else "summary")) as server:
        proc = pikit("compact", SESSION, "--keep-recent-tokens", "4000", "--summarizer", "openai", "--base-url",
                     server.base_url, "--model", "local/m", "--retries", "0", "-o", out,
                     extra_env={"OPENAI_API_KEY": KEY + "\r\n", "PYTHONWARNINGS": "always"})
    one_error_line(proc)
    assert KEY.encode() not in proc.stderr + proc.stdout and not out.exists()
    assert not list(tmp_path.iterdir())


def test_invalid_timeouts_and_retries_get_one_line(tmp_path: Path) -> None:
    for option, value in [("--timeout", "0"), ("--timeout", "-3"), ("--timeout", "nan"), ("--timeout", "inf"),
                          ("--timeout", "1e309"), ("--timeout", "soon"), ("--timeout", "99999999"),
                          ("--retries", "-1"), ("--retries", "2.5"), ("--retries", "1000000"), ("--retries", "x")]:
        proc = pikit("compact", SESSION, "--summarizer", "openai", option, value, "-o", tmp_path / "o.jsonl")
        line = one_error_line(proc, option)
        assert proc.returncode == 2, line
