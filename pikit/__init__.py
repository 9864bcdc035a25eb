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

__version__ = "0.1.0"

if typing.TYPE_CHECKING:
    from ._context.counting import Counter as Counter
    from ._context.counting import get_counter as get_counter
    from ._context.describe import entry_kind as entry_kind
    from ._context.describe import tool_calls as tool_calls
    from ._context.projection import ProjectedEntry as ProjectedEntry
    from ._context.projection import Projection as Projection
    from ._context.tokens import (
        ContextSize as ContextSize,
    )
    from ._context.tokens import (
        estimate_chars as estimate_chars,
    )
    from ._context.tokens import (
        estimate_tokens as estimate_tokens,
    )
    from ._following import Follower as Follower
    from ._following import follow as follow
    from ._format.entry import Entry as Entry
    from ._format.lines import LoadReport as LoadReport
    from ._format.lines import Problem as Problem
    from ._format.tail import Appended as Appended
    from ._format.tail import FileMark as FileMark
    from ._format.tail import read_appended as read_appended
    from ._session import Session as Session
    from ._session import load as load
    from ._session import loads as loads
    from ._tree.refresh import Refresh as Refresh
    from ._tree.sessiontree import CURRENT as CURRENT
    from ._tree.sessiontree import SessionTree as SessionTree
    from .errors import (
        DamagedLineError as DamagedLineError,
    )
    from .errors import (
        EntryError as EntryError,
    )
    from .errors import (
        NotASessionError as NotASessionError,
    )
    from .errors import (
        PikitError as PikitError,
    )
    from .errors import (
        SessionFileError as SessionFileError,
    )
    from .errors import (
        SettingsError as SettingsError,
    )
    from .errors import (
        SummarizerError as SummarizerError,
    )
    from .errors import (
        UnknownEntryError as UnknownEntryError,
    )
    from .errors import (
        WriteError as WriteError,
    )

if not typing.TYPE_CHECKING:  # (type checkers read the declaration above)
    __getattr__, __dir__, __all__ = _lazy.exports(__name__)
