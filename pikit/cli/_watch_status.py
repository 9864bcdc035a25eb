"""What one reading of ``pikit watch``'s gauge holds (drawn by the command, shaped for ``--json``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._tree.refresh import BranchSwitch

__all__ = ["LastCompaction", "Status"]


@dataclass(frozen=True)
class LastCompaction:
    """The head compaction of the leaf's branch, and the context size right after it."""

    id: Any
    tokens_before: Any
    tokens_after: int
    timestamp: Any


@dataclass(frozen=True)
class Status:
    """One reading of the gauge (``pikit.cli._json.watch.status`` gives the ``--json`` object).

    ``context_window`` and ``threshold`` are ``None`` when the model's window is unknown;
    ``window_source`` names where a known window came from. ``reloaded`` and ``branch_switch``
    are what the change just shown did besides appending
    (the file loaded again whole, and why; Pi going on from another entry than the leaf).
    """

    leaf_id: Any
    entries: int
    tokens: int
    context_window: int | None
    threshold: int | None
    would_compact: bool
    compactions: int
    last_compaction: LastCompaction | None
    model: str | None
    leaf_kind: str
    reloaded: str | None = None
    branch_switch: BranchSwitch | None = None
    window_source: str | None = None
