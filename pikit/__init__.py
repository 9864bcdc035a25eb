"""pikit: see what a Pi coding agent actually sent its model, and what compaction does to it.

>>> import pikit
>>> session = pikit.load("session.jsonl")      # read-only, v1-v3, damage reported
>>> ctx = session.context()                      # the projection at the current leaf
>>> ctx.tokens, len(ctx.messages)

The core (this package's top level) is pure Python and imports nothing heavy; the
``pikit.llm``, ``pikit.frames``, ``pikit.charts`` and ``pikit.widgets`` layers sit on top.
"""

from __future__ import annotations

from .entry import Entry
from .errors import (
    DamagedLineError,
    EntryError,
    NotASessionError,
    PikitError,
    SessionFileError,
    SettingsError,
    SummarizerError,
    UnknownEntryError,
    WriteError,
)
from .loading import LoadReport, Problem, load, loads
from .projection import ProjectedEntry, Projection
from .session import Session
from .tokens import ContextSize, estimate_tokens

__version__ = "0.1.0"

__all__ = [
    "ContextSize",
    "DamagedLineError",
    "Entry",
    "EntryError",
    "LoadReport",
    "NotASessionError",
    "PikitError",
    "Problem",
    "ProjectedEntry",
    "Projection",
    "Session",
    "SessionFileError",
    "SettingsError",
    "SummarizerError",
    "UnknownEntryError",
    "WriteError",
    "__version__",
    "estimate_tokens",
    "load",
    "loads",
]
