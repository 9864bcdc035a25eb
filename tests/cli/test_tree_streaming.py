"""``pikit tree --limit N`` and ``--tail N`` hold the rows they print, not the whole tree's layout."""

from __future__ import annotations

import contextlib
import gc
import io
import tracemalloc
from collections.abc import Callable

import pytest

import pikit
from pikit.cli._tree import print_tree
from tests.widgets.synthetic import big_session_lines


def _session(entries: int) -> pikit.Session:
    session = pikit.loads("\n".join(big_session_lines(entries, fork_every=60)) + "\n")
    session.tree()  # the index (roots and children) is the session's, built before measuring
    return session


def _peak(run: Callable[[], object]) -> int:
    """The traced peak of ``run()`` in bytes, over what was held before it."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        with contextlib.redirect_stdout(io.StringIO()):
            run()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def sessions() -> tuple[pikit.Session, pikit.Session]:
    return _session(2_000), _session(8_000)


_LAYOUTS: dict[str, list[int]] = {}


@pytest.mark.parametrize("window", [{"limit": 20}, {"tail": 20}])
@pytest.mark.parametrize("mode", ["default", "all"])
@pytest.mark.slow
def test_a_window_of_the_tree_costs_far_less_than_its_layout(sessions: tuple[pikit.Session, pikit.Session],
                                                             window: dict[str, int], mode: str) -> None:
    small, large = sessions
    # What laying the whole tree out costs (the rows of flatten), and how it grows with 4x the entries.
    if mode not in _LAYOUTS:
        _LAYOUTS[mode] = [_peak(lambda s=s: s.flatten(s.leaf_id, mode)) for s in (small, large)]
    layout = _LAYOUTS[mode]
    shown = [_peak(lambda s=s: print_tree(s, s.leaf_id, mode, "", **window)) for s in (small, large)]
    assert layout[1] > 3 * layout[0]
    # 4x the entries: the window grows by far less than the layout does (one byte per entry).
    assert shown[1] - shown[0] < 0.2 * (layout[1] - layout[0]), (shown, layout)
    assert shown[1] < 0.3 * layout[1], (shown, layout)

