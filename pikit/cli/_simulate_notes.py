"""The warnings of ``pikit simulate``, one replay or several strategies: a degenerate reserve, and what made a
replay a runaway."""

from __future__ import annotations

from .._formatting import fmt_int
from ..compaction._simulate import RUNAWAY_AFTER, SimulationResult


def degenerate_note(window: int, reserve: int) -> str:
    """What a reserve at or above the window does to Pi's trigger (one line)."""
    return (f"reserveTokens {fmt_int(reserve)} ≥ the context window {fmt_int(window)}: the threshold is not "
            "positive, so Pi's compaction trigger fires after every assistant message (--reserve-tokens sets it)")


def runaway_outcome(r: SimulationResult) -> str:
    """What the attempts that made a replay a runaway found: compactions that did not pay, nothing to compact."""
    assert r.runaway is not None
    tried = sorted([(e.branch_index, True) for e in r.events] + [(i, False) for i, _, _ in r.skipped])
    streak = {compacted for _, compacted in [t for t in tried if t[0] <= r.runaway[0]][-RUNAWAY_AFTER:]}
    outcome = " or ".join(text for compacted, text in (
        (True, f"compacting did not bring the context under the threshold {fmt_int(r.threshold)}"),
        (False, "there was nothing to compact")) if compacted in streak)
    if r.strategy in (None, "pi", "pi-percent") and r.settings.keep_recent_tokens >= r.threshold:  # (Pi's cut)
        outcome += (f" (keepRecentTokens {fmt_int(r.settings.keep_recent_tokens)} ≥ the threshold "
                    f"{fmt_int(r.threshold)}: the kept part alone can be over it)")
    return outcome
