"""The ``--json`` lines of ``pikit watch``, one object per reading (documented in ``docs/json.md``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._watch_status import LastCompaction, Status


def status(reading: Status) -> dict[str, Any]:
    """One reading of the gauge: the leaf, the context against the threshold, the last compaction, the event."""
    return {"leafId": reading.leaf_id, "entries": reading.entries, "tokens": reading.tokens,
            "contextWindow": reading.context_window, "windowSource": reading.window_source,
            "threshold": reading.threshold,
            "wouldCompact": reading.would_compact, "compactions": reading.compactions,
            "lastCompaction": last_compaction(reading.last_compaction), "event": event(reading)}


def last_compaction(last: LastCompaction | None) -> dict[str, Any] | None:
    """The head compaction of the leaf's branch (``None``: none on it)."""
    if last is None:
        return None
    return {"id": last.id, "tokensBefore": last.tokens_before, "tokensAfter": last.tokens_after,
            "timestamp": last.timestamp}


def event(reading: Status) -> dict[str, Any] | None:
    """What the change shown did besides appending to the branch.

    ``{"type": "reload", "reason"}`` when the file was loaded again whole, ``{"type":
    "branch", "previousLeafId", "continuesFrom"}`` when the new entries go on from another
    entry than the leaf (``continuesFrom`` ``null``: a new root); ``None`` otherwise.
    """
    if reading.reloaded:
        return {"type": "reload", "reason": reading.reloaded}
    switch = reading.branch_switch
    if switch is not None:
        return {"type": "branch", "previousLeafId": switch.previous_leaf, "continuesFrom": switch.continues_from}
    return None
