"""Hostile and broken HTTP servers on 127.0.0.1, written at the socket level.

Each :class:`RawServer` accepts connections in a daemon thread and hands each one to a
behaviour function ``(conn, request_bytes, server)``. The behaviours here do what the fake
API servers cannot: trickle bytes, never finish a body, announce absurd sizes, redirect,
answer with web pages, echo the credentials they were sent. Every loop is bounded by the
server's ``stopping`` event and a hard cap on bytes or time.
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import threading
from collections.abc import Callable
from typing import Any

Behaviour = Callable[[socket.socket, bytes, "RawServer"], None]

SUMMARY = "## Goal\nKeep the tests green.\n\n## Progress\n- [x] Ran them"


def read_request(conn: socket.socket, limit: int = 1 << 20) -> bytes:
    """The request's head and (Content-Length) body."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < limit:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def request_headers(request: bytes) -> dict[str, str]:
    head = request.partition(b"\r\n\r\n")[0].decode("latin-1")
    out = {}
    for line in head.split("\r\n")[1:]:
        name, _, value = line.partition(":")
        out[name.strip().lower()] = value.strip()
    return out


class RawServer:
    """A TCP server on 127.0.0.1 running ``behaviour`` for each connection."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.stopping = threading.Event()
        self.connections = 0
        self.requests: list[bytes] = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.1)
        self._threads: list[threading.Thread] = []
        self._accepter = threading.Thread(target=self._accept, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            self.connections += 1
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.settimeout(10)
            request = read_request(conn)
            self.requests.append(request)
            self.behaviour(conn, request, self)

    def __enter__(self) -> RawServer:
        self._accepter.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._accepter.join(5)
        for thread in self._threads:
            thread.join(5)
        self._sock.close()


def answer(status: str, body: bytes, content_type: str = "application/json",
           extra: dict[str, str] | None = None) -> bytes:
    headers = {"Content-Type": content_type, "Content-Length": str(len(body)), "Connection": "close",
               **(extra or {})}
    return (f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode() + body


def openai_answer(text: str = SUMMARY, model: str = "m") -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "model": model,
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                    "finish_reason": "stop"}]}).encode()


def credentials(request: bytes) -> str:
    headers = request_headers(request)
    return headers.get("authorization", "").removeprefix("Bearer ") or headers.get("x-api-key", "")


# ---------------------------------------------------------------- behaviours
def slowloris_body(conn: socket.socket, request: bytes, server: RawServer) -> None:
    """Headers at once, then the body one byte at a time, never ending (bounded: 60 s)."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
    for _ in range(600):
        if server.stopping.wait(0.1):
            return
        conn.sendall(b" ")


def slow_headers(conn: socket.socket, request: bytes, server: RawServer) -> None:
    """The status line and headers one byte every 0.1 s (bounded: 60 s)."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X-Pad: " + b"a" * 600 + b"\r\n\r\n"
    for byte in head:
        if server.stopping.wait(0.1):
            return
        conn.sendall(bytes([byte]))


def endless_body(conn: socket.socket, request: bytes, server: RawServer) -> None:
    """A chunked 200 answer that never ends, as fast as the client reads (bounded: 1 GiB)."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    piece = b" " * 65536
    chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    for _ in range(16384):
        if server.stopping.is_set():
            return
        conn.sendall(chunk)


def huge_announced(conn: socket.socket, request: bytes, server: RawServer) -> None:
    """Announces 100 MB, sends a little, then waits."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{}")
    server.stopping.wait(30)


def redirect_to(location: str, status: str = "307 Temporary Redirect") -> Behaviour:
    def behave(conn: socket.socket, request: bytes, server: RawServer) -> None:
        conn.sendall(answer(status, b"", extra={"Location": location}))
    return behave


def html_page(status: str = "200 OK") -> Behaviour:
    def behave(conn: socket.socket, request: bytes, server: RawServer) -> None:
        page = b"<!doctype html><html><head><title>Sign in</title></head><body>Please sign in</body></html>"
        conn.sendall(answer(status, page, "text/html; charset=utf-8"))
    return behave


def status_answer(status: str, message: str = "no") -> Behaviour:
    def behave(conn: socket.socket, request: bytes, server: RawServer) -> None:
        body = json.dumps({"error": {"message": message, "type": "x", "code": "x"}}).encode()
        conn.sendall(answer(status, body))
    return behave


def echo_in_error(encoding: str) -> Behaviour:
    """A 500 (or a 400) whose error message repeats the key: raw, repr-escaped, base64, in JSON."""
    def behave(conn: socket.socket, request: bytes, server: RawServer) -> None:
        key = credentials(request)
        shown = {"raw": key, "repr": repr(key), "base64": base64.b64encode(f"Bearer {key}".encode()).decode(),
                 "json": json.dumps({"authorization": key})}[encoding]
        body = json.dumps({"error": {"message": f"bad request; you sent {shown} (retry later)", "code": "x"}})
        conn.sendall(answer("400 Bad Request", body.encode()))
    return behave


def echo_in_summary(where: str) -> Behaviour:
    """A normal answer whose summary (or model name) holds the key."""
    def behave(conn: socket.socket, request: bytes, server: RawServer) -> None:
        key = credentials(request)
        text, model = (f"{SUMMARY}\nAuthorization: Bearer {key}", "m") if where == "summary" else (SUMMARY, key)
        conn.sendall(answer("200 OK", openai_answer(text, model),
                            extra={"X-Echo": key} if where == "header" else None))
    return behave


def normal(conn: socket.socket, request: bytes, server: RawServer) -> None:
    conn.sendall(answer("200 OK", openai_answer()))


def echo_everything(conn: socket.socket, request: bytes, server: RawServer) -> None:
    """Answers 200 with the key in a header, the model name and the summary."""
    key = credentials(request)
    conn.sendall(answer("200 OK", openai_answer(f"{SUMMARY} {key}", key), extra={"X-Echo": key}))


def anything(status: str, body: Any) -> Behaviour:
    def behave(conn: socket.socket, request: bytes, server: RawServer) -> None:
        conn.sendall(answer(status, json.dumps(body).encode()))
    return behave
