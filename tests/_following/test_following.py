"""pikit.follow: the session keeps up with its file, in the background or the foreground."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit import Follower, Refresh
from pikit._tree.refresh import BranchSwitch
from tests.entries import user

HEADER = {"type": "session", "version": 3, "id": "s-follow", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


def line(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)
        handle.flush()


def start_file(tmp_path: Path, n: int = 2) -> Path:
    path = tmp_path / "live.jsonl"
    entries = [user(f"e{i}", f"e{i - 1}" if i else None, i, f"prompt {i}") for i in range(n)]
    path.write_bytes(line(HEADER) + b"".join(map(line, entries)))
    return path


def wait_for(condition: Any, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@pytest.mark.parametrize("poll", [None, 0.05])
def test_background_following_calls_back_once_per_burst(tmp_path: Path, poll: float | None) -> None:
    path = start_file(tmp_path)
    seen: list[Refresh] = []
    with pikit.follow(path, poll=poll) as live:
        assert live.running and live.engine == ("watchfiles" if poll is None else "polling")
        live.on_change(seen.append)
        burst = b"".join(line(user(f"b{i}", f"b{i - 1}" if i else "e1", 10 + i, "x")) for i in range(100))
        append(path, burst)
        assert wait_for(lambda: len(live.session) == 102)
        time.sleep(0.3)
        assert len(seen) == 1 and len(seen[0].added) == 100  # one burst, one refresh
        assert live.session.leaf_id == "b99"
    assert not live.running


def test_a_follower_ignores_other_files_in_the_folder(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    with pikit.follow(path) as live:
        calls: list[Refresh] = []
        live.on_change(calls.append)
        for i in range(20):
            (tmp_path / f"other-{i}.jsonl").write_bytes(b"x\n")
        time.sleep(0.5)
        assert calls == []


def test_callbacks_can_be_removed_and_their_errors_are_noticed(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    live = Follower(path, background=False)
    calls: list[Refresh] = []
    remove = live.on_change(calls.append)

    def broken(_refresh: Refresh) -> None:
        raise ValueError("boom")

    live.on_change(broken)
    append(path, line(user("n1", "e1", 5, "x")))
    assert live.check() is not None and len(calls) == 1
    assert any("boom" in notice for notice in live.notices)
    remove()
    append(path, line(user("n2", "n1", 6, "x")))
    live.check()
    assert len(calls) == 1
    assert live.check() is None  # nothing new


@pytest.mark.timeout(30)
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, 1e400, 0.0, "1", True])
def test_poll_and_idle_exit_out_of_range_are_refused_in_the_library_words(tmp_path: Path, value: Any) -> None:
    path = start_file(tmp_path)
    with pytest.raises(pikit.PikitError, match=r"^poll must be a number of seconds from 0.01 to 86,400"):
        Follower(path, poll=value, background=False)
    if value == 0.0:
        return  # no wait at all is a valid idle_exit
    live = Follower(path, background=False)
    with pytest.raises(pikit.PikitError, match=r"^idle_exit must be a number of seconds from 0 to 86,400"):
        next(live.updates(idle_exit=value))  # NaN would never end: every comparison with it is false


def test_foreground_updates_end_after_the_idle_time(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    live = Follower(path, background=False)

    def writer() -> None:
        for i in range(3):
            time.sleep(0.2)
            append(path, line(user(f"w{i}", "e1", 20 + i, "x")))

    thread = threading.Thread(target=writer)
    thread.start()
    start = time.monotonic()
    leaves = [change.added[-1].id for change in live.updates(idle_exit=1.0)]
    thread.join()
    assert leaves == ["w0", "w1", "w2"]
    assert time.monotonic() - start >= 1.0  # (it waited for the idle second)


def test_a_rewrite_while_following_is_reloaded_with_a_notice(tmp_path: Path) -> None:
    path = start_file(tmp_path, 4)
    with pikit.follow(path, poll=0.05) as live:
        path.write_bytes(line(HEADER) + line(user("new", None, 1, "again")))
        assert wait_for(lambda: len(live.session) == 1)
        assert any("loaded again" in notice for notice in live.notices)
        assert live.session.leaf_id == "new"


def test_dropping_a_follower_ends_its_thread(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    live = pikit.follow(path, poll=0.05)
    thread = live._thread
    assert thread is not None and thread.is_alive()
    ref = weakref.ref(live)
    del live
    gc.collect()
    assert ref() is None
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_in_an_event_loop_refreshes_run_on_the_loop(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    threads: list[str] = []

    async def main() -> None:
        live = pikit.follow(path)
        live.on_change(lambda _r: threads.append(threading.current_thread().name))
        try:
            append(path, line(user("loop", "e1", 9, "x")))
            for _ in range(200):
                await asyncio.sleep(0.02)
                if threads:
                    break
        finally:
            live.close()

    # In a thread of its own: a loop may already be running in this one (Playwright's, in a full test run).
    runner = threading.Thread(target=asyncio.run, args=(main(),), name="asyncio-program")
    runner.start()
    runner.join(timeout=30)
    assert threads == ["asyncio-program"]


def test_follow_needs_a_session_file(tmp_path: Path) -> None:
    with pytest.raises(pikit.SessionFileError, match="no such file"):
        pikit.follow(tmp_path / "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(pikit.NotASessionError):
        pikit.follow(empty)
    live = Follower(start_file(tmp_path), background=False)
    live.start()
    with pytest.raises(pikit.PikitError, match="already follows"):
        next(live.updates())
    live.close()


def test_a_rotation_is_waited_out(tmp_path: Path) -> None:
    path = start_file(tmp_path, 3)
    live = Follower(path, background=False)
    path.unlink()  # rotated away...
    assert live.check() is None and any("waiting" in n for n in live.notices)
    path.write_bytes(b"")  # ...a new file, no header yet
    assert live.check() is None and len(live.notices) == 1
    path.write_bytes(line(HEADER) + line(user("fresh", None, 1, "new file")))
    change = live.check()
    assert change is not None and change.reloaded and live.session.leaf_id == "fresh"


def test_foreground_following_starts_again_after_a_stop(tmp_path: Path) -> None:
    path = start_file(tmp_path)
    live = pikit.follow(path, poll=0.05)
    live.close()
    threading.Timer(0.2, append, (path, line(user("late", "e1", 30, "x")))).start()
    assert [c.added[-1].id for c in live.updates(idle_exit=0.8)] == ["late"]


def test_a_loop_that_only_reports_itself_running_is_not_used(tmp_path: Path) -> None:
    """Playwright's synchronous API leaves such a loop behind: refreshes must not wait for it."""
    path = start_file(tmp_path)
    loop = asyncio.new_event_loop()
    asyncio.events._set_running_loop(loop)  # running, yet never coming back to its queue
    try:
        with pikit.follow(path, poll=0.05) as live:
            append(path, line(user("seen", "e1", 40, "x")))
            assert wait_for(lambda: live.session.leaf_id == "seen")
    finally:
        asyncio.events._set_running_loop(None)
        loop.close()


def appending_after_the_load(monkeypatch: pytest.MonkeyPatch, path: Path, entry_id: str, parent: str) -> None:
    """Make the follower's load append one entry right after reading the file: the append
    lands in the window between the read and the start of watching, every time."""
    import pikit._following as following

    real = following.load

    def load_then_append(*args: Any, **kwargs: Any) -> pikit.Session:
        session = real(*args, **kwargs)
        append(path, line(user(entry_id, parent, 50, "appended right after the read")))
        return session

    monkeypatch.setattr(following, "load", load_then_append)


@pytest.mark.parametrize("poll", [None, 0.05])
@pytest.mark.parametrize("background", [True, False])
def test_an_append_right_after_the_read_is_seen_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        poll: float | None, background: bool) -> None:
    """Watching starts before anything is read again: the append is not left to the periodic check.

    The check is made a minute apart here, so an append seen within half of that was seen by watching.
    """
    monkeypatch.setattr("pikit._following.CHECK_SECONDS", 60.0)
    delays = []
    for rep in range(5):
        folder = tmp_path / f"rep{rep}"
        folder.mkdir()
        path = start_file(folder)
        appending_after_the_load(monkeypatch, path, "late", "e1")
        start = time.monotonic()
        live = Follower(path, poll=poll, background=background)
        try:
            if background:
                assert wait_for(lambda: live.session.leaf_id == "late")  # noqa: B023
            else:
                assert next(live.updates(idle_exit=5)).added[-1].id == "late"
            delays.append(time.monotonic() - start)
        finally:
            live.close()
    assert max(delays) < 30, delays


def test_an_append_while_stopped_is_read_when_following_starts_again(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pikit._following.CHECK_SECONDS", 60.0)  # (seen on starting, not at a later check)
    path = start_file(tmp_path)
    with pikit.follow(path) as live:
        live.stop()
        append(path, line(user("meanwhile", "e1", 60, "x")))
        start = time.monotonic()
        live.start()
        assert wait_for(lambda: live.session.leaf_id == "meanwhile")
        assert time.monotonic() - start < 30


def test_a_move_to_another_branch_is_reported(tmp_path: Path) -> None:
    """Pi went back in its tree (/tree) and goes on from there: the refresh says so, and from where."""
    path = start_file(tmp_path, 4)  # e0 <- e1 <- e2 <- e3, the leaf e3
    seen: list[Refresh] = []

    def writer() -> None:
        for data in (line(user("on", "e3", 70, "the same branch")),
                     line(user("b0", "e1", 71, "from e1")) + line(user("b1", "b0", 72, "and on")),
                     line(user("r0", None, 73, "a new root"))):
            append(path, data)
            time.sleep(0.4)

    with pikit.follow(path) as live:
        live.on_change(seen.append)
        thread = threading.Thread(target=writer)
        thread.start()
        thread.join()
        assert wait_for(lambda: len(seen) == 3)
    assert [[e.id for e in r.added] for r in seen] == [["on"], ["b0", "b1"], ["r0"]]
    assert seen[0].branch_switch is None and seen[0].leaf_moved
    assert seen[1].branch_switch == BranchSwitch(previous_leaf="on", continues_from="e1")
    assert seen[2].branch_switch == BranchSwitch(previous_leaf="b1", continues_from=None)
    said = "Pi moved to another branch: the new entries"
    assert str(seen[1].branch_switch) == f"{said} go on from e1, not after the leaf on"
    assert str(seen[2].branch_switch) == f"{said} start a new root, not after the leaf b1"
