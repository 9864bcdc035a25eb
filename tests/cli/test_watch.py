"""``pikit watch`` against a real writer process appending Pi-format lines to a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pikit.cli.terminal import inert
from pikit.cli.watch import render, status_of
from tests.entries import asst, usage, user

REPO = Path(__file__).resolve().parents[2]
HEADER = {"type": "session", "version": 3, "id": "s-watch", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
KEYS = {"leafId", "entries", "tokens", "contextWindow", "threshold", "wouldCompact", "compactions", "lastCompaction"}

# A separate process that performs a plan: write bytes, sleep, truncate; it reports each write's time.
WRITER = r"""
import json, os, sys, time
plan = json.loads(sys.argv[2])
path = sys.argv[1]
for step in plan:
    kind = step[0]
    if kind == "sleep":
        time.sleep(step[1])
    elif kind == "write":
        with open(path, "ab") as handle:
            handle.write(bytes.fromhex(step[1]))
            handle.flush()
            os.fsync(handle.fileno())
        print(json.dumps({"wrote": step[2], "at": time.time()}), flush=True)
    elif kind == "rewrite":
        with open(path, "r+b") as handle:
            handle.truncate(0)
            handle.write(bytes.fromhex(step[1]))
            handle.flush()
        print(json.dumps({"rewrote": True, "at": time.time()}), flush=True)
"""


def line(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}


class Watch:
    """``pikit watch --json`` in a subprocess; its lines are timestamped as they arrive."""

    def __init__(self, path: Path, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "pikit", "watch", str(path), "--json", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(), cwd=REPO)
        self.lines: list[tuple[float, dict[str, Any]]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.append((time.time(), json.loads(raw)))

    def wait_for(self, count: int, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while len(self.lines) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(self.lines) >= count, self.lines

    def finish(self, timeout: float = 30) -> str:
        try:
            self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=5)
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode()


def run_writer(path: Path, plan: list[Any]) -> list[dict[str, Any]]:
    done = subprocess.run([sys.executable, "-c", WRITER, str(path), json.dumps(plan)], capture_output=True,
                          text=True, timeout=60, check=True)
    return [json.loads(x) for x in done.stdout.splitlines()]


def entries(n: int, start: int = 0, parent: str | None = "e1") -> list[dict[str, Any]]:
    out = []
    for i in range(start, start + n):
        out.append(asst(f"a{i}", parent, 10 + i, [{"type": "text", "text": f"answer {i}"}], usage(1000 + i, 10))
                   if i % 2 else user(f"a{i}", parent, 10 + i, f"prompt {i}"))
        parent = f"a{i}"
    return out


def start_file(tmp_path: Path) -> Path:
    path = tmp_path / "live.jsonl"
    path.write_bytes(line(HEADER) + line(user("e0", None, 0, "hello")) + line(user("e1", "e0", 1, "again")))
    return path


def test_each_new_leaf_is_reported_within_a_second(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    watch = Watch(path, "--idle-exit", "3", "--context-window", "20000", "--reserve-tokens", "2000")
    watch.wait_for(1)
    first = watch.lines[0][1]
    assert set(first) == KEYS and first["leafId"] == "e1" and first["entries"] == 2
    assert first["contextWindow"] == 20000 and first["threshold"] == 18000 and first["lastCompaction"] is None
    plan: list[Any] = []
    for entry in entries(6):
        plan += [["write", line(entry).hex(), entry["id"]], ["sleep", 0.4]]
    writes = run_writer(path, plan)
    stderr = watch.finish()
    assert watch.proc.returncode == 0, stderr
    reported = {obj["leafId"]: at for at, obj in watch.lines}
    delays = {w["wrote"]: reported[w["wrote"]] - w["at"] for w in writes}
    assert all(delay < 1.0 for delay in delays.values()), delays
    assert [obj["entries"] for _, obj in watch.lines] == list(range(2, 9))
    assert all(set(obj) == KEYS for _, obj in watch.lines)


def test_a_line_written_in_two_halves_is_one_update_and_no_damage(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    watch = Watch(path, "--idle-exit", "2.5")
    watch.wait_for(1)
    whole = line(entries(2)[1])
    run_writer(path, [["write", whole[:40].hex(), "first half"], ["sleep", 1.2],
                      ["write", whole[40:].hex(), "second half"]])
    stderr = watch.finish()
    assert [obj["leafId"] for _, obj in watch.lines] == ["e1", "a1"]  # one update, for the whole line
    assert "damaged" not in stderr and "skipped" not in stderr, stderr


def test_a_truncate_and_rewrite_is_loaded_again(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    watch = Watch(path, "--idle-exit", "2.5")
    watch.wait_for(1)
    story = line({**HEADER, "id": "another"}) + b"".join(map(line, entries(3, parent=None)))
    run_writer(path, [["sleep", 0.3], ["rewrite", story.hex()]])
    stderr = watch.finish()
    last = watch.lines[-1][1]
    assert last["leafId"] == "a2" and last["entries"] == 3
    assert "loaded again" in stderr, stderr


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the CPU time from /proc")
def test_an_idle_watch_uses_almost_no_cpu(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    watch = Watch(path, "--idle-exit", "13")
    watch.wait_for(1)
    time.sleep(1.0)  # started: from here on it only waits

    def cpu_seconds() -> float:
        fields = Path(f"/proc/{watch.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    before = cpu_seconds()
    time.sleep(10)
    used = cpu_seconds() - before
    watch.proc.terminate()
    watch.finish()
    assert used < 0.5, f"{used:.2f} s of CPU over 10 s idle"


def test_watch_waits_for_the_file_and_ends_when_idle(tmp_path: Path) -> None:
    path = tmp_path / "later.jsonl"
    done = subprocess.run([sys.executable, "-m", "pikit", "watch", str(path), "--idle-exit", "0.5"],
                          capture_output=True, text=True, env=env(), cwd=REPO, timeout=60)
    assert done.returncode == 0 and "waiting for" in done.stderr and done.stdout == ""


def test_the_human_display_is_one_block(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    done = subprocess.run([sys.executable, "-m", "pikit", "watch", str(path), "--idle-exit", "0.3",
                           "--context-window", "1000", "--reserve-tokens", "999"],
                          capture_output=True, text=True, env=env(), cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "leaf        e1" in out and "entries     2" in out and "threshold 1\n" in out
    assert "over the threshold" in out and "\x1b" not in out  # not a terminal: no escapes


def test_bad_arguments_are_one_line(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    for args in (["--context-window", "0"], ["--idle-exit", "-1"]):
        done = subprocess.run([sys.executable, "-m", "pikit", "watch", str(path), *args], capture_output=True,
                              text=True, env=env(), cwd=REPO, timeout=60)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_the_status_of_a_compacted_session_and_control_characters() -> None:
    import pikit

    session = pikit.load(REPO / "data" / "sample_sessions" / "refactor-auth.jsonl")
    status = status_of(session, context_window=16384, reserve_tokens=3000)
    assert status.compactions == 2 and status.last_compaction is not None
    assert status.last_compaction["id"] == "f6135720"
    assert status.last_compaction["tokensAfter"] == session.context("f6135720").tokens
    assert status.threshold == 13384 and status.tokens == session.context().tokens
    block = render(status, "a\x1b[2Jb.jsonl", "watchfiles", "note\x07", color=False)
    assert all("\x1b" not in row and "\x07" not in row for row in block)
    assert inert("x\x1b[31my\x9b") == "x^[[31myM-^["


def test_on_a_terminal_the_block_is_redrawn_in_place() -> None:
    import io

    from pikit.cli.watch import _Screen

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    screen = _Screen(out)
    screen.draw(["one", "two", "three"])
    first = out.getvalue()
    screen.draw(["uno", "dos"])  # a shorter block: the leftover line is cleared
    second = out.getvalue()[len(first):]
    assert first == "\x1b[2Kone\n\x1b[2Ktwo\n\x1b[2Kthree\n"
    assert second == "\x1b[3F\x1b[2Kuno\n\x1b[2Kdos\n\x1b[2K\n"


def test_ctrl_c_ends_the_watch_quietly(tmp_path: Path) -> None:
    import signal

    path = start_file(tmp_path)
    watch = Watch(path)
    watch.wait_for(1)
    watch.proc.send_signal(signal.SIGINT)
    stderr = watch.finish(timeout=10)
    assert watch.proc.returncode == 0 and "Traceback" not in stderr, stderr
