"""Jupyter widgets over the pikit core (ipywidgets 8 + anywidget).

Each widget works alone and they compose:

* :class:`SessionExplorer` — the tree (virtualized, search, Pi's filter modes), the editor,
  and the context and budget of the leaf beside it; ``leaf_id`` is a traitlet to read and set;
* :class:`TreeView` — the tree alone;
* :class:`ContextView` — the projected context at a leaf, with provenance and token figures;
* :class:`ContextDiff` — two leaves, or before/after a compaction, with token deltas;
* :class:`BudgetBar` — system prompt, summary, kept and new messages against the context window;
* :class:`CompactionPanel` — what-if sliders, a live cut-point preview, running a compaction;
* :class:`CompactionStepper` — Pi's compaction algorithm on one leaf, one step at a time;
* :class:`SessionBrowser` — a corpus's sessions, sortable and searchable; a click opens one
  in a :class:`SessionExplorer` below.

Behind each widget is a pure, frozen view model and a ``render(view) -> str`` function,
testable without a kernel. Session text is always HTML-escaped
before it is shown.
"""

from __future__ import annotations

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ._browser import SessionBrowser as SessionBrowser, SessionTable as SessionTable
    from ._budget import BudgetBar as BudgetBar, budget_segments as budget_segments
    from ._compaction import (
        CompactionPanel as CompactionPanel,
        CompactionRun as CompactionRun,
        compaction_history as compaction_history,
    )
    from ._context import ContextView as ContextView, context_rows as context_rows
    from ._diffview import ContextDiff as ContextDiff
    from ._explorer import SessionExplorer as SessionExplorer
    from ._stepper import CompactionStepper as CompactionStepper
    from ._tree import TreeView as TreeView

if not typing.TYPE_CHECKING:  # (type checkers read the declaration above)
    __getattr__, __dir__, __all__ = _lazy.exports(__name__)
