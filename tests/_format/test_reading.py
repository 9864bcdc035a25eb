"""Only regular files are read, and reading stays bounded (pikit._format.reading, pikit._format.loading)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import pikit
from pikit import DamagedLineError, SessionFileError
from pikit._format import loading, reading
from pikit._format.reading import NotRegularFileError, open_regular
from tests.procs import env, one_error_line, pikit as run_pikit

HEADER = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'


def entry(entry_id: str, parent: str | None, text: str = "hi") -> bytes:
    parent_json = "null" if parent is None else f'"{parent}"'
    return (f'{{"type":"message","id":"{entry_id}","parentId":{parent_json},"timestamp":"2026-01-01T00:00:01.000Z",'
            f'"message":{{"role":"user","content":"{text}","timestamp":1}}}}').encode()


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    return path


@contextlib.contextmanager
def endless_writer(path: Path) -> Iterator[None]:
    """A writer that keeps a FIFO fed with session-looking bytes until the block ends."""
    stop = threading.Event()

    def feed() -> None:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return  # no reader (the expected case: pikit refuses without opening)
        try:
            while not stop.is_set():
                with contextlib.suppress(BlockingIOError):
                    os.write(fd, HEADER + b"\n")
                time.sleep(0.001)
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)


# ---------------------------------------------------------------- not a regular file
@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", [["info"], ["tree"], ["context", "--json"], ["compact", "--dry-run"]])
def test_a_fifo_is_refused_at_once_by_every_command(fifo: Path, command: list[str]) -> None:
    start = time.monotonic()
    proc = run_pikit(command[0], fifo, *command[1:], timeout=30)
    one_error_line(proc, str(fifo), "FIFO", "not a regular file")
    assert time.monotonic() - start < 30


@pytest.mark.timeout(60)
def test_a_fifo_with_a_writer_is_refused_too(fifo: Path) -> None:
    with endless_writer(fifo):
        proc = run_pikit("info", fifo, timeout=30)
    one_error_line(proc, "FIFO")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_devices_are_refused(device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"{device} does not exist here")
    proc = run_pikit("context", device, timeout=30)
    one_error_line(proc, device, "character device", "not a regular file")


@pytest.mark.timeout(60)
def test_a_socket_and_a_directory_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "sock.jsonl"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        one_error_line(run_pikit("info", path, timeout=30), "a socket")
    finally:
        server.close()
    one_error_line(run_pikit("tree", tmp_path, timeout=30), "a directory")


@pytest.mark.timeout(60)
def test_a_symlink_to_a_regular_file_is_read(tmp_path: Path) -> None:
    target = tmp_path / "real.jsonl"
    target.write_bytes(HEADER + b"\n" + entry("a", None) + b"\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert len(pikit.load(link)) == 1
    os.unlink(target)
    os.mkfifo(target)
    with pytest.raises(SessionFileError, match="FIFO"):
        pikit.load(link)


@pytest.mark.timeout(60)
def test_settings_that_are_not_regular_files_are_refused(fifo: Path, tmp_path: Path) -> None:
    proc = run_pikit("settings", "--settings", fifo, timeout=30)
    one_error_line(proc, str(fifo), "FIFO")
    proc = run_pikit("settings", "--settings", "/dev/zero", timeout=30)
    one_error_line(proc, "/dev/zero", "character device")
    # Pi's own settings file, found in the agent folder, is checked the same way.
    agent = tmp_path / "agent"
    agent.mkdir()
    os.mkfifo(agent / "settings.json")
    proc = run_pikit("settings", timeout=30, extra_env={"PI_CODING_AGENT_DIR": str(agent)}, cwd=tmp_path)
    one_error_line(proc, "settings.json", "FIFO")


def test_open_regular_names_the_kind(fifo: Path, tmp_path: Path) -> None:
    with pytest.raises(NotRegularFileError) as info:
        open_regular(str(fifo))
    assert info.value.kind == "a FIFO (named pipe)" and isinstance(info.value, OSError)
    with pytest.raises(FileNotFoundError):
        open_regular(str(tmp_path / "missing"))
    path = tmp_path / "ok"
    path.write_bytes(b"abc")
    with open_regular(str(path)) as handle:
        assert handle.read() == b"abc"


# ---------------------------------------------------------------- long lines
def test_the_line_limit_is_stated() -> None:
    assert reading.MAX_LINE_BYTES == 128 * 1024 * 1024
    assert "MAX_LINE_BYTES" in (loading.__doc__ or "")


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 16, 64, 4096])
@pytest.mark.parametrize("limit", [40, 200, 250])
def test_lines_over_the_limit_cost_that_line_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  chunk: int, limit: int) -> None:
    monkeypatch.setattr(reading, "CHUNK_SIZE", chunk)
    monkeypatch.setattr(reading, "MAX_LINE_BYTES", limit)
    header = b'{"type":"session","version":3,"id":"s"}'
    good = [entry("a", None), entry("b", "a", "x" * 40), entry("c", "b")]
    assert all(len(line) <= 200 for line in good) and len(good[0]) > 40
    long = entry("z", "a", "y" * 300)
    lines = [header, good[0], long, good[1], long, long, good[2], long]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines))  # the last line, too long, has no newline
    if limit < len(header):
        with pytest.raises(pikit.NotASessionError):
            pikit.load(path)
        return
    session = pikit.load(path)
    kept = [e.id for e in session.entries]
    expected = [eid for eid, line in zip(["-", "a", "z", "b", "z", "z", "c", "z"], lines, strict=True)
                if eid != "-" and len(line) <= limit]
    assert kept == expected
    damaged = session.report.damaged_lines
    assert [p.line for p in damaged] == [i + 1 for i, line in enumerate(lines) if len(line) > limit]
    for problem in damaged:
        assert f"a line of {len(lines[problem.line - 1]):,} bytes" in problem.message  # type: ignore[operator]
    assert session.report.lines == len(lines) and session.report.bytes == path.stat().st_size
    with pytest.raises(DamagedLineError, match="limit"):
        pikit.load(path, strict=True)


def _child_peak_rss(code: str, timeout: float = 120) -> tuple[str, int]:
    """Run ``code`` in a fresh interpreter; its output and its peak RSS in bytes."""
    script = code + "\nimport sys\nfor line in open('/proc/self/status'):\n" \
                    "    if line.startswith('VmHWM:'): print(int(line.split()[1]) * 1024, file=sys.stderr)\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, env=env())
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, int(proc.stderr.strip().splitlines()[-1])


@pytest.mark.timeout(300)
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads peak RSS from /proc")
@pytest.mark.slow
def test_an_absurdly_long_line_is_read_past_in_bounded_memory(tmp_path: Path) -> None:
    # 1 GB of zero bytes without a newline (a sparse file: no disk used), between two entries.
    path = tmp_path / "huge-line.jsonl"
    with open(path, "wb") as out:
        out.write(HEADER + b"\n" + entry("a", None) + b"\n")
        out.seek(1_000_000_000, os.SEEK_CUR)
        out.write(b"\n" + entry("b", "a") + b"\n")
    out_text, peak = _child_peak_rss(
        f"import pikit\ns = pikit.load({str(path)!r})\n"
        "print([e.id for e in s.entries], [(p.line, p.message) for p in s.report.damaged_lines])", timeout=240)
    assert "['a', 'b']" in out_text and "(3, 'a line of 1,000,000,000 bytes" in out_text
    assert peak < 400 * 1024 * 1024, f"peak RSS {peak / 2**20:.0f} MiB"
    proc = run_pikit("info", path, "--json", timeout=240)
    assert proc.returncode == 0 and b"longer than the 128 MiB limit" in proc.stdout
    assert b"skipped 1 damaged line: 3" in proc.stderr


@pytest.mark.timeout(300)
def test_a_long_line_under_the_limit_loads_in_linear_time(tmp_path: Path) -> None:
    # 64 MB in one line, read in 8 MB chunks: the pieces are joined once, not once per chunk.
    path = tmp_path / "long-line.jsonl"
    text = "é" * 32_000_000
    path.write_bytes(HEADER + b"\n" + entry("a", None, text) + b"\n")
    start = time.monotonic()
    session = pikit.load(path)
    assert session.entries[0].data["message"]["content"] == text
    assert time.monotonic() - start < 60
