"""Pure view models and their HTML, one module per widget (no kernel, no ipywidgets needed).

Each module builds a frozen view model from core objects (a projection, a preparation, a
diff, an evaluation; the stepper's model is the core's ``pikit.compaction._walkthrough``) and renders it with a
``render_*(view) -> str`` function; the widgets in :mod:`pikit.widgets` only hold
traitlets, call these and put the HTML in place.
"""

from __future__ import annotations

from .budget import BudgetSegments, BudgetView, budget_segments, budget_view, render_budget
from .compaction import ChartGroup, CompactionPoint, CutPreview, RunSettings, cut_preview, render_chart, render_preview
from .context import (
    ContextHeader,
    ContextPage,
    ContextRow,
    context_header,
    context_page,
    context_rows,
    render_header,
    render_table,
)
from .diff import DiffView, diff_view, render_diff_header, render_diff_rows
from .lost import LostView, lost_view, render_lost
from .runs import BeforeAfter, RunDone, before_after, render_before_after, render_run_done, render_run_step
from .stepper import render_step, render_walkthrough
from .tree import TreeLayout, row_kind, tree_layout

__all__ = [
    "BeforeAfter",
    "BudgetSegments",
    "BudgetView",
    "ChartGroup",
    "CompactionPoint",
    "ContextHeader",
    "ContextPage",
    "ContextRow",
    "CutPreview",
    "DiffView",
    "LostView",
    "RunDone",
    "RunSettings",
    "TreeLayout",
    "before_after",
    "budget_segments",
    "budget_view",
    "context_header",
    "context_page",
    "context_rows",
    "cut_preview",
    "diff_view",
    "lost_view",
    "render_before_after",
    "render_budget",
    "render_chart",
    "render_diff_header",
    "render_diff_rows",
    "render_header",
    "render_lost",
    "render_preview",
    "render_run_done",
    "render_run_step",
    "render_step",
    "render_table",
    "render_walkthrough",
    "row_kind",
    "tree_layout",
]
