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

Behind each widget is a pure, frozen view model and a ``render(view) -> str`` function
(:mod:`pikit.widgets._views`), testable without a kernel. Session text is always HTML-escaped
before it is shown.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._browser import SessionBrowser, SessionTable
    from ._budget import BudgetBar, budget_segments
    from ._compaction import CompactionPanel, CompactionRun, compaction_history
    from ._context import ContextView, context_rows
    from ._diffview import ContextDiff
    from ._explorer import SessionExplorer
    from ._stepper import CompactionStepper
    from ._tree import TreeView

# The widgets load ipywidgets and anywidget when first used, so the pure view models
# (pikit.widgets._views) import without them.
_HOMES = {
    "BudgetBar": "budget", "budget_segments": "budget", "CompactionPanel": "compaction",
    "CompactionRun": "compaction", "compaction_history": "compaction", "ContextView": "context",
    "context_rows": "context", "ContextDiff": "diffview", "SessionExplorer": "explorer", "TreeView": "tree",
    "CompactionStepper": "stepper", "SessionBrowser": "browser", "SessionTable": "browser",
}

__all__ = [
    "BudgetBar",
    "CompactionPanel",
    "CompactionRun",
    "CompactionStepper",
    "ContextDiff",
    "ContextView",
    "SessionBrowser",
    "SessionExplorer",
    "SessionTable",
    "TreeView",
    "budget_segments",
    "compaction_history",
    "context_rows",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
