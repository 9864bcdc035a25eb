"""The live bar alone, without an explorer: its own leaf follows the file, and its callbacks hear each change."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pytest

from pikit import Follower, Refresh, loads
from pikit.widgets._live import LiveBar

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample_sessions" / "refactor-auth.jsonl"


def grow(path: Path, lines: list[bytes]) -> None:
    with open(path, "ab") as handle:
        handle.write(b"".join(lines))


class Held(widgets.HTML):
    """A widget that notes when its sync is held and released."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.notes = log

    @contextlib.contextmanager
    def hold_sync(self) -> Iterator[None]:
        self.notes.append("hold")
        yield
        self.notes.append("release")


@pytest.fixture
def bar_on(tmp_path: Path) -> Any:
    """A bar following a new file of the sample's first 40 lines by hand (``check()``); the lines to come."""
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[:40]))

    def make(**kwargs: Any) -> tuple[LiveBar, Follower, Path, list[bytes]]:
        follower = Follower(path, background=False)
        bar = LiveBar(follower.session, follower, context_window=16_384, reserve_tokens=3_000, **kwargs)
        follower.stop()  # the test drives the follower, one change at a time
        return bar, follower, path, lines[40:]

    return make


def test_the_leaf_follows_the_file_and_the_callbacks_hear_each_change(bar_on: Any) -> None:
    log: list[str] = []
    bar, follower, path, rest = bar_on(hold=(Held(log),))
    session = follower.session
    assert bar.following and bar.live and bar.leaf_id == session.entries[-1].id
    changes: list[tuple[Refresh, bool]] = []
    bar.on_change(lambda change, redraw: (changes.append((change, redraw)), log.append("change")))
    bar.on_relayout(lambda: log.append("layout"))
    grow(path, rest[:100])
    change = follower.check()
    assert change is not None and changes == [(change, False)]
    assert log == ["hold", "layout", "change", "release"]  # one held update, laid out once
    assert bar.leaf_id == session.entries[-1].id and bar.repaints == 1 and bar.last_change is change
    assert "● live" in bar.status.value and f"{len(session)} entries" in bar.status.value


def test_a_leaf_set_from_outside_pauses_until_back_to_live(bar_on: Any) -> None:
    bar, follower, path, rest = bar_on()
    session = follower.session
    chosen = session.entries[10].id
    bar.leaf_id = chosen[:6]  # a prefix names it too
    assert bar.leaf_id == chosen and not bar.live and bar.back.layout.display == ""
    grow(path, rest[:3])
    follower.check()
    assert bar.leaf_id == chosen and "paused" in bar.status.value
    bar.back.click()
    assert bar.live and bar.leaf_id == session.entries[-1].id and bar.back.layout.display == "none"


def test_a_compaction_is_called_out_and_charted(bar_on: Any) -> None:
    bar, follower, path, rest = bar_on()
    first = next(i for i, raw in enumerate(rest) if b'"type":"compaction"' in raw)
    grow(path, rest[:first + 1])
    follower.check()
    compaction = follower.session.entries[-1]
    assert compaction.type == "compaction" and bar.leaf_id == compaction.id
    assert compaction.id in bar.callout.value and "tokensBefore" in bar.callout.value
    assert bar.chart.layout.display == "" and "threshold 13.4k" in bar.chart.value  # 16,384 − 3,000


def test_a_file_loaded_again_under_the_same_leaf_asks_for_a_redraw(bar_on: Any) -> None:
    bar, follower, path, _rest = bar_on()
    redraws: list[bool] = []
    remove = bar.on_change(lambda change, redraw: redraws.append(redraw))
    leaf = bar.leaf_id
    lines = path.read_bytes().splitlines(keepends=True)
    last = json.loads(lines[-1])
    last["message"]["content"] = [{"type": "text", "text": "rewritten in place"}]
    path.write_bytes(b"".join(lines[:-1]) + json.dumps(last, separators=(",", ":")).encode() + b"\n")
    change = follower.check()
    assert change is not None and change.reloaded and bar.leaf_id == leaf and redraws == [True]
    assert "The file was loaded again" in bar.callout.value
    remove()
    grow(path, [lines[-1]])
    follower.check()
    assert redraws == [True] and bar.repaints == 2


def test_the_toggle_follows_and_stops(bar_on: Any) -> None:
    bar, follower, _path, _rest = bar_on()
    bar.toggle.value = False
    assert not bar.following and not bar.live and bar.status.value == ""
    assert not follower.running
    memory = LiveBar(loads(SAMPLE.read_bytes()))
    assert memory.toggle.disabled and not memory.following and memory.leaf_id == memory.session.leaf_id
    with pytest.raises(ValueError, match="another session"):
        memory.attach(follower)
