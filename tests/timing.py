"""CPU time of a call, for growth checks that compare two sizes within one run.

Wall-clock bounds depend on the machine's load; a ratio of CPU times measured in the same process
a moment apart does not (much), so a test checks how work grows, with a wide margin, and the
absolute targets live in ``benchmarks/``.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from typing import Any


def cpu_seconds_each(calls: Sequence[Callable[[], Any]], repeat: int = 3) -> list[float]:
    """The least CPU time of each of ``calls`` over ``repeat`` rounds, the calls taking turns within a round (so a
    change in the machine's load falls on all of them alike); the collector paused during each run."""
    best = [float("inf")] * len(calls)
    for _ in range(repeat):
        for i, call in enumerate(calls):
            gc.collect()
            gc.disable()
            try:
                start = time.process_time()
                call()
                best[i] = min(best[i], time.process_time() - start)
            finally:
                gc.enable()
    return best


def grows_at_most(small: Callable[[], Any], large: Callable[[], Any], factor: float, floor: float = 0.02) -> bool:
    """Whether ``large`` costs at most ``factor`` times ``small`` in CPU time (``floor`` seconds: the clock's grain),
    the two measured in turns."""
    small_seconds, large_seconds = cpu_seconds_each([small, large])
    return large_seconds <= factor * max(small_seconds, floor)
