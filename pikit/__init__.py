"""pikit: see what a Pi coding agent actually sent its model, and what compaction does to it.

>>> import pikit
>>> session = pikit.load("session.jsonl")      # read-only, v1-v3, damage reported
>>> ctx = session.context()                      # the projection at the current leaf
>>> ctx.tokens, len(ctx.messages)

The names below are the whole public surface of this package; compaction lives in
:mod:`pikit.compaction`. The core is pure Python and imports nothing heavy: the
``pikit.llm``, ``pikit.frames``, ``pikit.corpus``, ``pikit.charts``, ``pikit.widgets`` and
``pikit.export`` layers sit on top of it.
"""

from __future__ import annotations

import typing

from . import _lazy

if typing.TYPE_CHECKING:
    from ._context.counting import Counter as Counter, get_counter as get_counter
    from ._context.describe import entry_kind as entry_kind, tool_calls as tool_calls
    from ._context.diff import (
        DiffRow as DiffRow,
        DiffTotals as DiffTotals,
        ProjectionDiff as ProjectionDiff,
        diff_compaction as diff_compaction,
        diff_contexts as diff_contexts,
        diff_leaves as diff_leaves,
    )
    from ._context.projected import ProjectedEntry as ProjectedEntry, Projection as Projection
    from ._context.tokens import (
        ContextSize as ContextSize,
        estimate_chars as estimate_chars,
        estimate_tokens as estimate_tokens,
    )
    from ._following import Follower as Follower, follow as follow
    from ._format.entry import Entry as Entry
    from ._format.lines import LoadReport as LoadReport, Problem as Problem
    from ._format.tail import Appended as Appended, FileMark as FileMark, read_appended as read_appended
    from ._redaction.redactor import Placeholders as Placeholders, Redactor as Redactor
    from ._redaction.session import RedactionReport as RedactionReport, redact as redact
    from ._session import Session as Session, load as load, loads as loads
    from ._tree.refresh import Refresh as Refresh
    from ._tree.sessiontree import CURRENT as CURRENT, SessionTree as SessionTree
    from ._version import __version__ as __version__
    from .compaction._evaluation import evaluate as evaluate
    from .errors import (
        DamagedLineError as DamagedLineError,
        EntryError as EntryError,
        NotASessionError as NotASessionError,
        PikitError as PikitError,
        SessionFileError as SessionFileError,
        SettingsError as SettingsError,
        SummarizerError as SummarizerError,
        UnknownEntryError as UnknownEntryError,
        WriteError as WriteError,
    )

if not typing.TYPE_CHECKING:  # (type checkers read the declaration above)
    __getattr__, __dir__, __all__ = _lazy.exports(__name__)
