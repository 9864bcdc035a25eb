"""pikit: see what a Pi coding agent actually sent its model, and what compaction does to it.

>>> import pikit
>>> session = pikit.load("session.jsonl")      # read-only, v1-v3, damage reported
>>> ctx = session.context()                      # the projection at the current leaf
>>> ctx.tokens, len(ctx.messages)

The core (this package's top level) is pure Python and imports nothing heavy; the
``pikit.llm``, ``pikit.frames``, ``pikit.charts`` and ``pikit.widgets`` layers sit on top.
"""

from __future__ import annotations

import typing

from . import _lazy

if typing.TYPE_CHECKING:
    from ._context.projection import ProjectedEntry, Projection
    from ._context.tokens import ContextSize, estimate_tokens
    from ._following import Follower, follow
    from ._format.entry import Entry
    from ._format.loading import LoadReport, Problem, load, loads
    from ._format.tail import Appended, FileMark, read_appended
    from ._tree.refresh import Refresh
    from ._tree.sessiontree import Session
    from .compaction._branch_summary import collect_branch, prepare_branch
    from .compaction._entries import (
        build_branch_summary,
        build_compaction,
        context_edit_entry,
        label_entry,
        write_entry,
    )
    from .compaction._preparation import CompactionTrace, Preparation, prepare_compaction, trace_compaction
    from .compaction._settings import CompactionSettings, Settings, load_settings
    from .compaction._simulate import SimulationResult
    from .compaction._summarizer import Summarizer, SummaryRequest, SummaryResult
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

__version__ = "0.1.0"

__all__ = [
    "Appended",
    "CompactionSettings",
    "CompactionTrace",
    "ContextSize",
    "DamagedLineError",
    "Entry",
    "EntryError",
    "FileMark",
    "Follower",
    "LoadReport",
    "NotASessionError",
    "PikitError",
    "Preparation",
    "Problem",
    "ProjectedEntry",
    "Projection",
    "Refresh",
    "Session",
    "SessionFileError",
    "Settings",
    "SettingsError",
    "SimulationResult",
    "Summarizer",
    "SummarizerError",
    "SummaryRequest",
    "SummaryResult",
    "UnknownEntryError",
    "WriteError",
    "__version__",
    "build_branch_summary",
    "build_compaction",
    "collect_branch",
    "context_edit_entry",
    "estimate_tokens",
    "follow",
    "label_entry",
    "load",
    "load_settings",
    "loads",
    "prepare_branch",
    "prepare_compaction",
    "read_appended",
    "trace_compaction",
    "write_entry",
]

if not typing.TYPE_CHECKING:  # (type checkers see the imports above)
    __getattr__, __dir__ = _lazy.exports(__name__, {
        ".branch_summary": ("collect_branch", "prepare_branch"),
        ".compaction": ("build_branch_summary", "build_compaction", "context_edit_entry", "label_entry", "write_entry"),
        ".entry": ("Entry",),
        ".errors": (
            "DamagedLineError", "EntryError", "NotASessionError", "PikitError", "SessionFileError", "SettingsError",
            "SummarizerError", "UnknownEntryError", "WriteError",
        ),
        ".following": ("Follower", "follow"),
        ".loading": ("LoadReport", "Problem", "load", "loads"),
        ".preparation": ("CompactionTrace", "Preparation", "prepare_compaction", "trace_compaction"),
        ".projection": ("ProjectedEntry", "Projection"),
        ".refresh": ("Refresh",),
        ".session": ("Session",),
        ".settings": ("CompactionSettings", "Settings", "load_settings"),
        ".simulate": ("SimulationResult",),
        ".summarizer": ("Summarizer", "SummaryRequest", "SummaryResult"),
        ".tail": ("Appended", "FileMark", "read_appended"),
        ".tokens": ("ContextSize", "estimate_tokens"),
    })
