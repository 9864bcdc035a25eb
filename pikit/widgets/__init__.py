"""Jupyter widgets over the pikit core (ipywidgets 8 + anywidget).

Each widget works alone and they compose:

* :class:`SessionExplorer` — the tree (virtualized, search, Pi's filter modes), the editor,
  and the context and budget of the leaf beside it; ``leaf_id`` is a traitlet to read and set;
* :class:`TreeView` — the tree alone;
* :class:`ContextView` — the projected context at a leaf, with provenance and token figures;
* :class:`ContextDiff` — two leaves, or before/after a compaction, with token deltas;
* :class:`BudgetBar` — system prompt, summary, kept and new messages against the context window;
* :class:`CompactionPanel` — what-if sliders, a live cut-point preview, running a compaction;
* :class:`CompactionStepper` — Pi's compaction algorithm on one leaf, one step at a time.

Session text is always HTML-escaped before it is shown.
"""

from __future__ import annotations

from .budget import BudgetBar, budget_segments
from .compaction import CompactionPanel, compaction_history
from .context import ContextView, context_rows
from .diffview import ContextDiff
from .explorer import SessionExplorer
from .stepper import CompactionStepper
from .tree import TreeView

__all__ = [
    "BudgetBar",
    "CompactionPanel",
    "CompactionStepper",
    "ContextDiff",
    "ContextView",
    "SessionExplorer",
    "TreeView",
    "budget_segments",
    "compaction_history",
    "context_rows",
]
