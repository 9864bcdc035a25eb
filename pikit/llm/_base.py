"""The summarizer protocol, re-exported from the core (:mod:`pikit.compaction._summarizer`).

The core owns the protocol so that compaction never depends on this layer; the HTTP
clients here implement it.
"""

from __future__ import annotations

from pikit.compaction._summarizer import (
    SUMMARY_KINDS,
    Summarizer,
    SummaryKind,
    SummaryRequest,
    SummaryResult,
    combine_usage,
    empty_usage,
)

__all__ = [
    "SUMMARY_KINDS",
    "Summarizer",
    "SummaryKind",
    "SummaryRequest",
    "SummaryResult",
    "combine_usage",
    "empty_usage",
]
