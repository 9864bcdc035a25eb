"""The explorer following its file: the leaf tracks the newest entry, one repaint per change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit import Follower
from pikit.widgets import SessionExplorer

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample_sessions" / "refactor-auth.jsonl"


def grow(path: Path, lines: list[bytes]) -> None:
    with open(path, "ab") as handle:
        handle.write(b"".join(lines))


@pytest.fixture
def replayed(tmp_path: Path) -> tuple[Path, list[bytes]]:
    """The sample's first 40 lines in a new file, and the lines still to come."""
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[:40]))
    return path, lines[40:]


def explorer_on(path: Path) -> tuple[SessionExplorer, Follower]:
    follower = Follower(path, background=False)
    explorer = SessionExplorer(follower, context_window=16384, reserve_tokens=3000, keep_recent_tokens=4000)
    follower.stop()  # the tests drive the follower by hand (check()), one change at a time
    return explorer, follower


def test_the_leaf_and_the_tree_follow_the_file(replayed: tuple[Path, list[bytes]]) -> None:
    path, rest = replayed
    explorer, follower = explorer_on(path)
    assert explorer.follower is follower and explorer.live and explorer.live_bar.following
    start_rows = len(explorer.tree.row_ids)
    grow(path, rest[:5])
    change = follower.check()
    assert change is not None and len(change.added) == 5
    newest = follower.session.entries[-1].id
    assert explorer.leaf_id == newest == explorer.tree.leaf_id == explorer.budget.leaf_id
    assert explorer.context_view.leaf_id == newest and explorer.projection.leaf_id == newest
    assert len(explorer.tree.row_ids) > start_rows
    assert f"{len(follower.session)} entries" in explorer._header.value
    assert "● live" in explorer.live_bar.status.value


def test_a_burst_of_a_hundred_lines_is_one_repaint(replayed: tuple[Path, list[bytes]]) -> None:
    path, rest = replayed
    explorer, follower = explorer_on(path)
    sent: dict[str, int] = {"rows": 0, "leaf": 0}
    explorer.tree.observe(lambda _c: sent.__setitem__("rows", sent["rows"] + 1), names="rows_data")
    explorer.observe(lambda _c: sent.__setitem__("leaf", sent["leaf"] + 1), names="leaf_id")
    grow(path, rest[:100])
    follower.check()
    assert explorer.live_bar.repaints == 1
    assert sent == {"rows": 1, "leaf": 1}
    assert explorer.leaf_id == follower.session.entries[-1].id


def test_clicking_elsewhere_stops_following_until_back_to_live(replayed: tuple[Path, list[bytes]]) -> None:
    path, rest = replayed
    explorer, follower = explorer_on(path)
    chosen = follower.session.entries[10].id
    explorer.leaf_id = chosen
    assert not explorer.live and explorer.live_bar.back.layout.display == ""
    grow(path, rest[:3])
    follower.check()
    assert explorer.leaf_id == chosen  # the user's choice stands
    assert "paused" in explorer.live_bar.status.value
    explorer.live_bar.back.click()
    assert explorer.live and explorer.leaf_id == follower.session.entries[-1].id
    assert explorer.live_bar.back.layout.display == "none"


def test_a_compaction_appearing_is_called_out(replayed: tuple[Path, list[bytes]]) -> None:
    path, rest = replayed
    explorer, follower = explorer_on(path)
    session = follower.session
    first = next(i for i, raw in enumerate(rest) if b'"type":"compaction"' in raw)
    grow(path, rest[:first])
    follower.check()
    before = explorer.budget.projection.tokens
    bars_before = explorer.live_bar.chart.value.count("<rect")
    grow(path, rest[first:first + 1])
    follower.check()
    compaction = session.entries[-1]
    assert compaction.type == "compaction" and explorer.leaf_id == compaction.id
    assert compaction.id in explorer.live_bar.callout.value and "tokensBefore" in explorer.live_bar.callout.value
    assert explorer.budget.projection.tokens < before  # the budget bar drops
    assert explorer.live_bar.chart.value.count("<rect") > bars_before  # the chart gains a bar
    assert explorer.live_bar.chart.layout.display == ""


def test_a_rewritten_file_is_shown_whole_again(replayed: tuple[Path, list[bytes]]) -> None:
    path, _rest = replayed
    explorer, follower = explorer_on(path)
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:12]))
    change = follower.check()
    assert change is not None and change.reloaded
    assert explorer.leaf_id == follower.session.entries[-1].id
    assert set(explorer.tree.row_ids) <= set(follower.session.by_id)
    assert "reloaded" in explorer.live_bar.status.value


def test_the_follow_toggle_follows_a_loaded_session(tmp_path: Path, replayed: tuple[Path, list[bytes]]) -> None:
    path, rest = replayed
    session = pikit.load(path)
    explorer = SessionExplorer(session)
    assert explorer.follower is None and not explorer.live
    explorer.live_bar.toggle.value = True
    follower = explorer.follower
    assert follower is not None and follower.session is session and follower.running
    follower.stop()
    grow(path, rest[:2])
    follower.check()
    assert explorer.leaf_id == session.entries[-1].id
    explorer.live_bar.toggle.value = False
    assert not explorer.live_bar.following and not follower.running
    memory = SessionExplorer(pikit.loads(SAMPLE.read_bytes()))
    assert memory.live_bar.layout.display == "none" and memory.live_bar.toggle.disabled


def test_session_text_in_the_live_bar_is_escaped(tmp_path: Path) -> None:
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
    path = tmp_path / "x.jsonl"
    path.write_bytes(header)
    explorer, follower = explorer_on(path)
    evil: dict[str, Any] = {"type": "compaction", "id": "<img src=x onerror=alert(1)>", "parentId": None,
                            "timestamp": "2026-01-01T00:00:01.000Z", "summary": "s", "firstKeptEntryId": "x",
                            "tokensBefore": 10}
    grow(path, [json.dumps(evil).encode() + b"\n"])
    follower.check()
    assert "<img" not in explorer.live_bar.callout.value and "&lt;img" in explorer.live_bar.callout.value


def test_a_rewrite_that_keeps_the_leaf_redraws_it(replayed: tuple[Path, list[bytes]]) -> None:
    path, _rest = replayed
    explorer, follower = explorer_on(path)
    stepper = explorer.open_stepper()
    leaf = explorer.leaf_id
    old_body = explorer.context_view.body.value
    lines = path.read_bytes().splitlines(keepends=True)
    last = json.loads(lines[-1])
    last["message"]["content"] = [{"type": "text", "text": "rewritten in place: a new answer"}]
    changed = json.dumps(last, separators=(",", ":")).encode() + b"\n"
    path.write_bytes(b"".join(lines[:-1]) + changed)
    change = follower.check()
    assert change is not None and change.reloaded and explorer.leaf_id == leaf
    assert "rewritten in place" in explorer.context_view.body.value != old_body
    assert explorer.budget.projection is explorer.state.projection(leaf)
    # Every part reads the new projection, the stepper's compaction trace included.
    assert stepper.projection is explorer.projection is explorer.context_view.projection is explorer.budget.projection
    assert stepper.trace is not None and stepper.trace.projection is explorer.projection


def test_slow_tree_layouts_are_spaced_out_on_the_kernel_loop(replayed: tuple[Path, list[bytes]]) -> None:
    """A huge tree is laid out again at most every ten layouts' time; the leaf moves at once."""
    import asyncio
    import threading
    import time

    path, rest = replayed
    seen: dict[str, Any] = {}

    async def kernel() -> None:  # what a notebook's kernel loop does
        follower = pikit.follow(path)
        explorer = SessionExplorer(follower)
        bar = explorer.live_bar
        bar._layout_seconds, bar._laid_out_at = 0.25, time.monotonic()  # as if a layout took 250 ms
        bar.layout_budget = 0.01
        rows = len(explorer.tree.row_ids)
        grow(path, rest[:3])
        for _ in range(100):
            await asyncio.sleep(0.02)
            if explorer.leaf_id == follower.session.entries[-1].id:
                break
        seen["moved"] = explorer.leaf_id == follower.session.entries[-1].id
        seen["rows_at_once"] = len(explorer.tree.row_ids) - rows
        await asyncio.sleep(3.0)  # ten layouts' time has passed
        seen["rows_later"] = len(explorer.tree.row_ids) - rows
        follower.close()

    runner = threading.Thread(target=asyncio.run, args=(kernel(),))
    runner.start()
    runner.join(timeout=30)
    assert seen == {"moved": True, "rows_at_once": 0, "rows_later": seen["rows_later"]} and seen["rows_later"] > 0


def grow_from_a_thread(path: Path, lines: list[bytes]) -> None:
    """Append ``lines`` from another thread, as a writer would (done when this returns)."""
    import threading

    writer = threading.Thread(target=grow, args=(path, lines))
    writer.start()
    writer.join(timeout=10)


def test_a_move_to_another_branch_is_called_out(replayed: tuple[Path, list[bytes]]) -> None:
    path, _rest = replayed
    explorer, follower = explorer_on(path)
    session = follower.session
    previous = explorer.leaf_id
    fork = session.entries[10].id
    branch = {"type": "message", "id": "elsewhere", "parentId": fork, "timestamp": "2026-03-10T09:00:00.000Z",
              "message": {"role": "user", "content": "and now something else", "timestamp": 1773133200000}}
    grow_from_a_thread(path, [json.dumps(branch).encode() + b"\n"])
    change = follower.check()
    assert change is not None and change.branch_switch is not None
    assert explorer.leaf_id == "elsewhere" == explorer.context_view.leaf_id
    callout = explorer.live_bar.callout.value
    assert "Pi moved to another branch" in callout and fork in callout and previous in callout
    assert "+1 entry on another branch" in explorer.live_bar.status.value
    grow_from_a_thread(path, [json.dumps({**branch, "id": "on", "parentId": "elsewhere"}).encode() + b"\n"])
    follower.check()
    assert "on another branch" not in explorer.live_bar.status.value  # a plain append again


def test_a_reload_is_called_out(replayed: tuple[Path, list[bytes]]) -> None:
    path, _rest = replayed
    explorer, follower = explorer_on(path)
    path.write_bytes(b"".join(SAMPLE.read_bytes().splitlines(keepends=True)[:12]))
    change = follower.check()
    assert change is not None and change.reloaded
    assert f"The file was loaded again: {change.reloaded}" in explorer.live_bar.callout.value


def test_the_budget_names_the_model_the_context_shows(tmp_path: Path) -> None:
    """The budget bar takes its model, window and settings from the projection it shows, now."""
    from pikit.widgets._budget import resolve_budget

    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[:2]))  # the system prompt only: no model recorded yet
    follower = Follower(path, background=False)
    explorer = SessionExplorer(follower)
    follower.stop()
    stepper = explorer.open_stepper()
    budget, context = explorer.budget, explorer.context_view
    assert budget.model == "" and "model not recorded" in budget.html.value
    grow_from_a_thread(path, lines[2:12])  # the model change and the first turns
    follower.check()
    model = context.header_view.model if context.header_view is not None else None
    assert model and budget.model == model and "model not recorded" not in budget.html.value
    assert budget.projection is context.projection is explorer.projection is stepper.projection
    settings = (budget.context_window, budget.reserve_tokens, budget.keep_recent_tokens)
    window, reserve, keep, _ = resolve_budget(model, None)
    assert settings == (window.tokens, reserve, keep) and budget.window_source == window.source
    assert (stepper.context_window, stepper.reserve_tokens) == settings[:2]
    # Moving the leaf back before the model change: the bar follows there too.
    explorer.leaf_id = follower.session.entries[0].id
    assert budget.model == "" and "model not recorded" in budget.html.value


def test_a_budget_setting_given_by_hand_stays(tmp_path: Path) -> None:
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[:2]))
    follower = Follower(path, background=False)
    explorer = SessionExplorer(follower, model="openai/gpt-4o", reserve_tokens=1234)
    follower.stop()
    explorer.budget.keep_recent_tokens = 777
    grow_from_a_thread(path, lines[2:12])
    follower.check()
    budget = explorer.budget
    assert (budget.model, budget.reserve_tokens, budget.keep_recent_tokens) == ("openai/gpt-4o", 1234, 777)
