"""Real local HTTP servers that speak the OpenAI and Anthropic protocols, for the llm tests.

A :class:`FakeLLMServer` listens on 127.0.0.1 (ephemeral port) with a
:class:`http.server.ThreadingHTTPServer` in a daemon thread. It records every request it
receives and answers from a script of :class:`Step` s (one per request; once the script is
used up it answers normally)::

    with FakeLLMServer("openai") as server:
        server.script(SERVER_ERROR, OK)
        ...  # POST to f"{server.base_url}/chat/completions"
        assert len(server.requests) == 2

Like the real APIs it checks the key (when configured), the required fields and, for
Anthropic, the ``anthropic-version`` header, and answers 4xx with the provider's error shape.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

__all__ = [
    "CLOSE",
    "DEFAULT_SUMMARY",
    "ECHO_HEADERS",
    "ECHO_HEADERS_TEXT",
    "EMPTY",
    "HANG",
    "LENGTH",
    "MALFORMED",
    "NO_TEXT",
    "OK",
    "RATE_LIMITED",
    "SERVER_ERROR",
    "TEST_KEY",
    "TOOL_CALL",
    "FakeLLMServer",
    "Recorded",
    "Step",
    "status",
]

Wire = Literal["openai", "anthropic"]

TEST_KEY = "sk-test-DO-NOT-LEAK-7f3a9c2e5b"
"""The API key the tests use; it must never show up in an error, a repr or a log."""

DEFAULT_SUMMARY = (
    "## Goal\nFix the failing parser tests.\n\n## Constraints & Preferences\n- None.\n\n"
    "## Progress\n### Done\n- [x] Read `src/parser.py`\n\n### In Progress\n- [ ] Fix the tokenizer\n\n"
    "### Blocked\n- None.\n\n## Key Decisions\n- **Keep the API**: callers depend on it\n\n"
    "## Next Steps\n1. Run the tests\n\n## Critical Context\n- `pytest tests/test_parser.py`"
)

# Usage the servers report. OpenAI's prompt_tokens include the cached ones.
OPENAI_USAGE = {
    "prompt_tokens": 1200,
    "completion_tokens": 300,
    "total_tokens": 1500,
    "prompt_tokens_details": {"cached_tokens": 200},
}
ANTHROPIC_USAGE = {
    "input_tokens": 1000,
    "output_tokens": 300,
    "cache_read_input_tokens": 200,
    "cache_creation_input_tokens": 50,
}


@dataclass(frozen=True)
class Step:
    """One scripted answer.

    ``action`` is one of: ``ok`` (a normal answer, ``text`` overriding the summary),
    ``status`` (an error status with the provider's error body, optional ``Retry-After``),
    ``length`` (a stop for length), ``tool_call`` (the model calls a tool), ``hang`` (wait
    ``hang_seconds`` before answering normally; bounded, and cut short when the server stops),
    ``malformed`` (HTTP 200 with broken JSON), ``close`` (close the connection without an
    answer), ``empty`` (a blank summary), ``no_text`` (no text at all), ``echo_headers`` (HTTP
    ``status`` whose JSON error message echoes the request headers, credentials first) and
    ``echo_headers_text`` (the same as plain text).
    """

    action: str
    status: int = 200
    retry_after: str | None = None
    text: str | None = None


def status(code: int, retry_after: str | None = None, message: str | None = None) -> Step:
    """A step answering HTTP ``code`` with the provider's error body."""
    return Step("status", code, retry_after, message)


OK = Step("ok")
SERVER_ERROR = status(500)
RATE_LIMITED = status(429, retry_after="0")
LENGTH = Step("length")
TOOL_CALL = Step("tool_call")
HANG = Step("hang")
MALFORMED = Step("malformed")
CLOSE = Step("close")
EMPTY = Step("empty")
NO_TEXT = Step("no_text")
ECHO_HEADERS = Step("echo_headers", 500)
ECHO_HEADERS_TEXT = Step("echo_headers_text", 500)


@dataclass(frozen=True)
class Recorded:
    """A request the server received (header names lower-cased; ``body`` is None if not JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    at: float


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeLLMServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""

    # --- plumbing -------------------------------------------------------------------------
    def _send(self, code: int, payload: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        try:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except OSError:  # the client went away (e.g. after its timeout)
            self.close_connection = True

    def _json(self, code: int, data: Any, extra: dict[str, str] | None = None) -> None:
        self._send(code, json.dumps(data).encode(), "application/json", extra)

    def _error(self, code: int, message: str, kind: str, extra: dict[str, str] | None = None) -> None:
        if self.server.fake.wire == "openai":
            self._json(code, {"error": {"message": message, "type": kind, "param": None, "code": kind}}, extra)
        else:
            self._json(code, {"type": "error", "error": {"type": kind, "message": message}}, extra)

    # --- requests -------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._error(404, f"no route for GET {self.path}", "not_found_error")

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in self.headers.items()}
        fake._record(Recorded("POST", self.path, headers, body, raw, time.monotonic()))

        problem = fake._validate(self.path, headers, body)
        if problem is not None:
            self._error(*problem)
            return
        step = fake._next_step()
        self._perform(step, body, headers)

    def _perform(self, step: Step, body: Any, headers: dict[str, str]) -> None:
        fake = self.server.fake
        action = step.action
        if action == "close":
            self.close_connection = True  # nothing is written: the client sees a dropped connection
            return
        if action == "hang":
            fake.stopping.wait(fake.hang_seconds)
            action = "ok"
        if action == "status":
            extra = {"Retry-After": step.retry_after} if step.retry_after is not None else None
            kind = "rate_limit_error" if step.status == 429 else "server_error"
            if step.status == 401:
                kind = "authentication_error"
            elif 400 <= step.status < 500 and step.status != 429:
                kind = "invalid_request_error"
            self._error(step.status, step.text or f"scripted HTTP {step.status}", kind, extra)
            return
        if action in ("echo_headers", "echo_headers_text"):
            secrets = {k: headers[k] for k in ("authorization", "x-api-key") if k in headers}
            echoed = f"credentials={secrets} headers={headers}"
            if action == "echo_headers":
                self._error(step.status, f"internal error; request {echoed}", "server_error")
            else:
                self._send(step.status, f"Internal error.\nRequest {echoed}\n".encode(), "text/plain")
            return
        if action == "malformed":
            self._send(200, b'{"id": "broken", "choices": [{"message": {"content": "## Go', "application/json")
            return
        self._json(200, fake._answer(action, step, body))


class FakeLLMServer:
    """A scripted OpenAI (``wire="openai"``) or Anthropic (``wire="anthropic"``) API server.

    Args:
        wire: the protocol to speak.
        api_key: when set, requests without this key are answered 401.
        summary: the text of normal answers.
        hang_seconds: how long a ``hang`` step waits before answering (bounded on purpose).
    """

    def __init__(
        self,
        wire: Wire,
        *,
        api_key: str | None = None,
        summary: str = DEFAULT_SUMMARY,
        hang_seconds: float = 3.0,
    ) -> None:
        self.wire = wire
        self.api_key = api_key
        self.summary = summary
        self.hang_seconds = hang_seconds
        self.requests: list[Recorded] = []
        self.stopping = threading.Event()
        self._steps: deque[Step] = deque()
        self._lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        """Listen on an ephemeral port of 127.0.0.1 and serve in a daemon thread."""
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake hanging handlers and close the socket."""
        self.stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port the server listens on."""
        assert self._httpd is not None, "the server is not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The API root to give a client (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # --- scripting ------------------------------------------------------------------------
    def script(self, *steps: Step) -> None:
        """Queue answers for the next requests, in order."""
        with self._lock:
            self._steps.extend(steps)

    @property
    def pending(self) -> int:
        """How many scripted steps have not been used yet."""
        with self._lock:
            return len(self._steps)

    def _next_step(self) -> Step:
        with self._lock:
            return self._steps.popleft() if self._steps else OK

    def _record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    # --- protocol -------------------------------------------------------------------------
    def _validate(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, str, str] | None:
        """``(status, message, kind)`` of the error a real API would answer, or None."""
        expected_path = "/v1/chat/completions" if self.wire == "openai" else "/v1/messages"
        if path != expected_path:
            return 404, f"unknown path {path}", "not_found_error"
        if self.api_key is not None:
            if self.wire == "openai":
                ok = headers.get("authorization") == f"Bearer {self.api_key}"
            else:
                ok = headers.get("x-api-key") == self.api_key
            if not ok:
                return 401, "invalid API key", "authentication_error"
        if not headers.get("content-type", "").startswith("application/json") or not isinstance(body, dict):
            return 400, "the body must be a JSON object", "invalid_request_error"
        if not isinstance(body.get("model"), str) or not isinstance(body.get("messages"), list):
            return 400, "model and messages are required", "invalid_request_error"
        if body.get("stream"):
            return 400, "this server does not stream", "invalid_request_error"
        if self.wire == "anthropic":
            if headers.get("anthropic-version") != "2023-06-01":
                return 400, "anthropic-version header is required", "invalid_request_error"
            if not isinstance(body.get("max_tokens"), int):
                return 400, "max_tokens: field required", "invalid_request_error"
            if any(m.get("role") == "system" for m in body["messages"] if isinstance(m, dict)):
                return 400, "system messages go in the top-level system field", "invalid_request_error"
        return None

    def _answer(self, action: str, step: Step, body: dict[str, Any]) -> dict[str, Any]:
        text = step.text if step.text is not None else self.summary
        n = len(self.requests)
        if self.wire == "openai":
            message: dict[str, Any] = {"role": "assistant", "content": text}
            finish = "stop"
            if action == "length":
                message["content"], finish = text[:20], "length"
            elif action == "tool_call":
                message["content"], finish = None, "tool_calls"
                message["tool_calls"] = [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path": "src/parser.py"}'},
                    }
                ]
            elif action == "empty":
                message["content"] = "  \n"
            elif action == "no_text":
                message["content"] = None
            return {
                "id": f"chatcmpl-test-{n}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": OPENAI_USAGE,
            }
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        stop = "end_turn"
        if action == "length":
            content, stop = [{"type": "text", "text": text[:20]}], "max_tokens"
        elif action == "tool_call":
            content = [
                {"type": "text", "text": "Let me read the file first."},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "src/parser.py"}},
            ]
            stop = "tool_use"
        elif action == "empty":
            content = [{"type": "text", "text": ""}]
        elif action == "no_text":
            content = []
        return {
            "id": f"msg_test_{n}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": ANTHROPIC_USAGE,
        }
