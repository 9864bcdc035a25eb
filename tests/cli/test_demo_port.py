"""`pikit demo` serves JupyterLab on the port it names: a taken port given with --port is refused in one
line, a taken default moves to the next free port, and JupyterLab is started without retries of its own."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from pikit.cli import _demo
from tests.procs import one_error_line, pikit


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port of localhost that something listens on for the test's duration."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_a_taken_port_given_with_port_is_refused_in_one_line(taken_port: int) -> None:
    result = pikit("demo", "--port", str(taken_port))
    assert result.returncode != 0
    line = one_error_line(result)
    assert f"port {taken_port} is in use" in line and "--port" in line
    assert result.stdout == b""  # refused before anything else is printed


def test_a_taken_default_moves_to_the_next_free_port(taken_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_demo, "DEFAULT_PORT", taken_port)
    port = _demo.lab_port(None)
    assert port != taken_port and port > taken_port
    assert _demo.port_free(port)


def test_jupyterlab_is_started_on_the_printed_port_without_retries(
        taken_port: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    started: list[list[str]] = []
    monkeypatch.setattr(_demo.shutil, "which", lambda _name: "/usr/bin/jupyter")
    monkeypatch.setattr(_demo.os, "execv", lambda _path, argv: started.append(argv))
    monkeypatch.setattr(_demo.os, "chdir", lambda _path: None)
    monkeypatch.setattr(_demo, "DEFAULT_PORT", taken_port)
    port = _demo.lab_port(None)
    _demo._open_lab(Path("."), port)
    assert f"on port {port}" in capsys.readouterr().out
    assert f"--port={port}" in started[0] and "--ServerApp.port_retries=0" in started[0]
