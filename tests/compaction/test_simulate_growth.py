"""A replay's cost grows linearly with the branch: one replay of the whole branch costs at most twice what four
replays of its first quarter cost.

The session is made of identical turns (a prompt, a tool call, its output, an answer, all with
recorded usage), a context edit every other turn and a recorded compaction every 25 turns, so
the first quarter of its branch is the same work as each of the other three: in linear time the two
sides cost the same, in quadratic time the whole costs four times as much. The replays run in this
process and are timed in CPU time (``time.process_time``, the collector paused), the best of several
runs each, the two sides taking turns and lasting about as long, so that other work on the machine
does not decide the ratio.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pikit import Session
from pikit.compaction import CompactionSettings, simulate, simulate as simulate_strategies
from pikit.llm import OfflineSummarizer
from tests.entries import asst, call, compaction, edit, session_of, text, tool_result, usage, user
from tests.timing import cpu_seconds_each

HEADER = {"type": "session", "version": 3, "id": "sess-growth", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
TURNS = 2400  # the whole branch; the short replays stop after a quarter of it
RUNS = 3
SETTINGS = CompactionSettings(True, 2_000, 1_500)
WINDOW = 8_000


def _turns(count: int) -> tuple[list[dict[str, Any]], list[Any]]:
    """The entries of ``count`` turns, and the id of the last entry of each turn."""
    entries: list[dict[str, Any]] = []
    ends: list[Any] = []
    parent: Any = None
    recorded = 0  # the recorded context size, as the provider would report it

    def add(entry: dict[str, Any]) -> None:
        nonlocal parent
        entries.append(entry)
        parent = entry["id"]

    for turn in range(count):
        s = turn % 3000
        prompt = f"u{turn}"
        add(user(prompt, parent, s, text(f"Look at src/module_{turn % 3}.py and fix the failing "
                                          "check; keep the public names as they are. " * 3)))
        recorded += 150
        add(asst(f"a{turn}", parent, s, [*text(f"Reading module {turn % 3}."),
                                         call(f"c{turn}", "read", path=f"src/module_{turn % 3}.py")],
                 usage(recorded, 40)))
        output = f"def check_{turn % 3}(value):\n    return value * {turn % 3}\n" * 40
        add(tool_result(f"r{turn}", parent, s, text(output)))
        recorded += 700
        add(asst(f"b{turn}", parent, s, text(f"Fixed check_{turn % 3}: the factor was wrong; the tests pass."),
                 usage(recorded, 30)))
        if turn % 2:
            add(edit(f"x{turn}", parent, s, f"r{turn - 1}", {"content": "[output elided]"}))
        if turn % 25 == 24:
            add(compaction(f"k{turn}", parent, s, f"u{turn - 4}", summary="The earlier turns.",
                           tokens_before=recorded))
            recorded = 4 * 850
        ends.append(parent)
    return entries, ends


@pytest.fixture(scope="module")
def grown() -> tuple[Session, Any, Any]:
    """The session, the leaf after a quarter of its turns, and its last entry."""
    entries, ends = _turns(TURNS)
    return session_of(HEADER, entries), ends[TURNS // 4 - 1], ends[-1]


def _pi(session: Session, leaf: Any, sizes: str) -> Any:
    return simulate(session, OfflineSummarizer(), context_window=WINDOW, settings=SETTINGS, leaf=leaf, sizes=sizes,
                    progress=False)


def _strategies(session: Session, leaf: Any, sizes: str) -> Any:
    return simulate_strategies(session, OfflineSummarizer(), context_window=WINDOW, settings=SETTINGS, leaf=leaf,
                               sizes=sizes, progress=False, strategy="codex-inline,mask-at-threshold,truncate",
                               keep_turns=2)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("replay", "sizes"), [(_pi, "usage"), (_pi, "estimate"), (_strategies, "usage")],
                         ids=["pi-usage", "pi-estimate", "strategies"])
@pytest.mark.slow
def test_the_whole_branch_costs_what_four_quarters_cost(
        grown: tuple[Session, Any, Any], replay: Callable[[Session, Any, str], Any], sizes: str) -> None:
    session, quarter, leaf = grown
    results: dict[str, Any] = {}
    quarters, whole = cpu_seconds_each([lambda: results.update(quarter=[replay(session, quarter, sizes)
                                                                        for _ in range(4)][-1]),
                                        lambda: results.update(whole=replay(session, leaf, sizes))], RUNS)
    quarter_result, whole_result = results["quarter"], results["whole"]
    runs = [quarter_result, whole_result] if replay is _pi else [*quarter_result, *whole_result]
    assert all(r.events for r in runs), "every replay compacts (the test measures compacting replays)"
    assert whole <= 2 * quarters, f"the whole branch took {whole / quarters:.1f}x the CPU time of four replays " \
                                  f"of its first quarter ({whole:.3f} s against {quarters:.3f} s)"
