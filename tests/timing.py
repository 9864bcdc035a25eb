"""CPU time of a call, for growth checks that compare two sizes within one run.

Wall-clock bounds depend on the machine's load; a ratio of CPU times measured in the same process
a moment apart does not (much), so a test checks how work grows, with a wide margin, and the
absolute targets live in ``benchmarks/``.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any


def cpu_seconds(call: Callable[[], Any], repeat: int = 3) -> float:
    """The least CPU time of ``repeat`` runs of ``call`` (the collector paused during each)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            call()
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


def grows_at_most(small: Callable[[], Any], large: Callable[[], Any], factor: float, floor: float = 0.02) -> bool:
    """Whether ``large`` costs at most ``factor`` times ``small`` in CPU time (``floor`` seconds: the clock's grain)."""
    return cpu_seconds(large) <= factor * max(cpu_seconds(small), floor)
