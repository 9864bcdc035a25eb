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

from pikit.cli._terminal import inert
from pikit.cli._watch import render, status_of
from tests.entries import asst, usage, user
from tests.procs import ctrl_c_reaches_it, one_error_line, pikit as run_pikit

REPO = Path(__file__).resolve().parents[2]
HEADER = {"type": "session", "version": 3, "id": "s-watch", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
KEYS = {"leafId", "entries", "tokens", "contextWindow", "windowSource", "threshold", "wouldCompact", "compactions",
        "lastCompaction", "event"}

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
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(), cwd=REPO,
                                     preexec_fn=ctrl_c_reaches_it)
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


@pytest.mark.slow
def test_each_new_leaf_is_reported_within_a_second(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    watch = Watch(path, "--idle-exit", "3", "--context-window", "20000", "--reserve-tokens", "2000")
    watch.wait_for(1)
    first = watch.lines[0][1]
    assert set(first) == KEYS and first["leafId"] == "e1" and first["entries"] == 2
    assert first["contextWindow"] == 20000 and first["threshold"] == 18000 and first["lastCompaction"] is None
    assert first["windowSource"] == "--context-window"
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
    assert all(set(obj) == KEYS and obj["event"] is None for _, obj in watch.lines)


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
    assert last["event"]["type"] == "reload" and watch.lines[0][1]["event"] is None
    assert f"the file was loaded again: {last['event']['reason']}" in stderr, stderr


def finish_human(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """The rest of a human-mode watch's output and its stderr, once it ended (killed after 30 s)."""
    assert proc.stdout is not None and proc.stderr is not None
    timer = threading.Timer(30, proc.kill)
    timer.start()
    try:
        out = proc.stdout.read()  # through the same buffer as the first readline()
        err = proc.stderr.read()
        proc.wait()
    finally:
        timer.cancel()
    return out, err


def test_a_reload_is_a_note_in_the_human_display(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "pikit", "watch", str(path), "--idle-exit", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(), cwd=REPO, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()  # the first block has begun: the watch is running
    run_writer(path, [["sleep", 0.3], ["rewrite", (line(HEADER) + line(user("x0", None, 1, "anew"))).hex()]])
    out, err = finish_human(proc)
    blocks = (first + out).split("\n\n")
    assert proc.returncode == 0, err
    assert "  note" not in blocks[0]
    note = next(row for row in blocks[1].splitlines() if row.startswith("  note"))
    assert "the file was loaded again: the file shrank from at least" in note, blocks


CHECK_A_MINUTE_APART = (
    "import runpy, sys\n"
    "import pikit._following\n"
    "pikit._following.CHECK_SECONDS = 60.0\n"
    "sys.argv[0] = 'pikit'\n"
    "runpy.run_module('pikit', run_name='__main__')\n"
)
"""``python -m pikit`` with the follower's periodic safety look a minute apart."""


def append_right_after_the_first_state(tmp_path: Path, rep: int) -> float:
    """Start ``pikit watch``, append a line the moment its first state is out: the delay until it is shown."""
    path = tmp_path / f"rep{rep}.jsonl"
    path.write_bytes(line(HEADER) + line(user("e0", None, 0, "hello")))
    proc = subprocess.Popen([sys.executable, "-c", CHECK_A_MINUTE_APART, "watch", str(path), "--json",
                             "--idle-exit", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(), cwd=REPO)
    try:
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["leafId"] == "e0"
        with open(path, "ab") as handle:
            handle.write(line(user("e1", "e0", 1, "right after")))
        start = time.monotonic()
        second = json.loads(proc.stdout.readline())
        delay = time.monotonic() - start
        assert second["leafId"] == "e1", second
        return delay
    finally:
        proc.kill()
        proc.wait()


def test_an_append_right_after_the_first_state_is_seen_at_once(tmp_path: Path) -> None:
    """Watching starts before the state is read again, so no append is left to the periodic safety look.

    The safety look is made a minute apart here: an append seen within half of that was seen by watching.
    """
    delays = [append_right_after_the_first_state(tmp_path, rep) for rep in range(3)]
    assert max(delays) < 30, delays


def test_a_move_to_another_branch_is_announced(tmp_path: Path) -> None:
    path = start_file(tmp_path)  # e0 <- e1
    watch = Watch(path, "--idle-exit", "2.5")
    watch.wait_for(1)
    run_writer(path, [["write", line(user("on", "e1", 5, "same branch")).hex(), "on"], ["sleep", 0.4],
                      ["write", line(user("b0", "e0", 6, "from e0")).hex(), "b0"]])
    stderr = watch.finish()
    events = [obj["event"] for _, obj in watch.lines]
    assert [obj["leafId"] for _, obj in watch.lines] == ["e1", "on", "b0"]
    assert events == [None, None, {"type": "branch", "previousLeafId": "on", "continuesFrom": "e0"}]
    assert "Pi moved to another branch: the new entries go on from e0, not after the leaf on" in stderr, stderr


def test_a_move_to_another_branch_is_a_note_in_the_human_display(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "pikit", "watch", str(path), "--idle-exit", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(), cwd=REPO, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    run_writer(path, [["sleep", 0.2], ["write", line(user("r0", None, 7, "a new root")).hex(), "r0"]])
    out, err = finish_human(proc)
    assert proc.returncode == 0, err
    block = (first + out).split("\n\n")[1]
    assert "leaf        r0" in block
    note = next(row for row in block.splitlines() if row.startswith("  note"))
    assert "Pi moved to another branch: the new entries start a new root, not after the leaf e1" in note, block


@pytest.mark.slow
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


def test_a_file_that_never_appears_is_one_error_line(tmp_path: Path) -> None:
    path = tmp_path / "later.jsonl"
    start = time.monotonic()
    done = run_pikit("watch", path, "--idle-exit", "0.5", "--json")
    assert 0.5 <= time.monotonic() - start < 30
    assert done.returncode == 1 and done.stdout == b""
    assert "waiting for" in done.stderr.decode()
    one_error_line(done, "later.jsonl never appeared in 0.5 s (--idle-exit)")
    path.write_bytes(b"")  # there, but Pi has not written its header yet
    one_error_line(run_pikit("watch", path, "--idle-exit", "0.3"), "later.jsonl was still empty in 0.3 s")


def test_watch_waits_for_the_file_to_appear(tmp_path: Path) -> None:
    path = tmp_path / "later.jsonl"
    watch = Watch(path, "--idle-exit", "1.5")
    assert watch.proc.stderr is not None
    assert "waiting for" in watch.proc.stderr.readline().decode()  # started before the file is there
    path.write_bytes(line(HEADER) + line(user("e0", None, 0, "hello")))
    stderr = watch.finish()
    assert watch.proc.returncode == 0, stderr
    assert [obj["leafId"] for _, obj in watch.lines] == ["e0"]


def test_the_human_display_is_one_block(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    done = subprocess.run([sys.executable, "-m", "pikit", "watch", str(path), "--idle-exit", "0.3",
                           "--context-window", "1000", "--reserve-tokens", "999"],
                          capture_output=True, text=True, env=env(), cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "leaf        e1" in out and "entries     2" in out and "threshold 1 (window from --context-window)\n" in out
    assert "over the threshold" in out and "\x1b" not in out  # not a terminal: no escapes


def test_an_unknown_window_is_unknown(tmp_path: Path) -> None:
    path = start_file(tmp_path)  # no model recorded: no window is known
    done = subprocess.run([sys.executable, "-m", "pikit", "watch", str(path), "--idle-exit", "0.3"],
                          capture_output=True, text=True, env=env(), cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert ("window unknown: pass --context-window or add the model to ~/.pi/agent/models.json" in done.stdout
            and "compaction  unknown: no window, no threshold" in done.stdout and "128,000" not in done.stdout)
    done = subprocess.run([sys.executable, "-m", "pikit", "watch", str(path), "--idle-exit", "0.3", "--json"],
                          capture_output=True, text=True, env=env(), cwd=REPO, timeout=60)
    first = json.loads(done.stdout.splitlines()[0])
    assert (first["contextWindow"], first["windowSource"], first["threshold"], first["wouldCompact"]) == (
        None, None, None, False)


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
    assert status.last_compaction.id == "f6135720"
    assert status.last_compaction.tokens_after == session.context("f6135720").tokens
    assert status.threshold == 13384 and status.tokens == session.context().tokens
    block = render(status, "a\x1b[2Jb.jsonl", "watchfiles", "note\x07", color=False)
    assert all("\x1b" not in row and "\x07" not in row for row in block)
    assert inert("x\x1b[31my\x9b") == "x^[[31myM-^["


def test_on_a_terminal_the_block_is_redrawn_in_place() -> None:
    import io

    from pikit.cli._watch import _Screen

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
    stderr = watch.finish(timeout=60)  # (a hang guard)
    assert watch.proc.returncode == 0 and "Traceback" not in stderr, stderr


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_on_a_terminal_the_note_stays_until_other_news(tmp_path: Path) -> None:
    """A note redrawn away by the next append would go unseen: on a terminal it stays, with its time."""
    import pty
    import re

    path = start_file(tmp_path)
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "pikit", "watch", str(path), "--idle-exit", "2.5"],
                            stdout=follower, stderr=subprocess.PIPE, env=env(), cwd=REPO)
    os.close(follower)
    screen = b""

    def read_until(needle: bytes | None, timeout: float = 30) -> None:
        """Read the terminal until ``needle`` shows (``None``: until the watch ends)."""
        nonlocal screen
        deadline = time.monotonic() + timeout
        while (needle is None or needle not in screen) and time.monotonic() < deadline:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the watch ended: its terminal is closed
                break
            if not data:
                break
            screen += data
        assert needle is None or needle in screen, screen

    try:
        read_until(b"model")  # the first block is drawn
        run_writer(path, [["write", line(user("b0", "e0", 5, "from e0")).hex(), "b0"], ["sleep", 0.5],
                          ["write", line(user("b1", "b0", 6, "and on")).hex(), "b1"]])
        read_until(None)  # to the end (--idle-exit)
    finally:
        proc.wait(timeout=30)
        os.close(leader)
    text = screen.decode()
    last_block = text[text.rindex("leaf        b1"):]
    assert re.search(r"note        Pi moved to another branch: the new entries go on from e0, not after the leaf e1 "
                     r"\(at \d\d:\d\d:\d\d\)", last_block), last_block
    assert proc.returncode == 0


def test_pi_s_own_broken_settings_are_a_warning_when_no_settings_file_is_given(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(line(HEADER) + line(user("u1", None, 1, "hello")))
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text("{bad")
    result = run_pikit("watch", path, "--idle-exit", "0", "--json", extra_env={"PI_CODING_AGENT_DIR": str(agent)},
                       timeout=30, cwd=tmp_path)
    err = result.stderr.decode()
    assert result.returncode == 0 and "Traceback" not in err, err
    assert "pikit: warning:" in err and "using Pi's default settings" in err, err
    assert json.loads(result.stdout.splitlines()[0])["leafId"] == "u1"
