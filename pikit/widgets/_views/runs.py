"""Compaction runs, as data: the line a finished run leaves, and the budget before and after it.

:class:`RunDone` is what the run-and-write part says once a run has written its entry
(:func:`render_run_done`); :func:`before_after` puts the budget before and after a run on one
scale, with the settings that run used, and :func:`render_before_after` draws the two bars one
above the other. None of it needs a kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..._formatting import plural
from .._html import esc, fmt_int
from .budget import BudgetView, budget_view, render_budget
from .compaction import RunSettings

if TYPE_CHECKING:
    from ..._context.projection import Projection

__all__ = ["BeforeAfter", "RunDone", "before_after", "render_before_after", "render_run_done", "render_run_step"]


def render_run_step(text: str) -> str:
    """The status line of a run under way (``preparing…``, ``writing…``)."""
    return f'<div class="pikit-status">{esc(text)}</div>'


@dataclass(frozen=True)
class RunDone:
    """A run that wrote its compaction entry: where, and the tokens it freed by Pi's estimate."""

    number: int
    compaction_id: Any
    path: str
    in_place: bool
    tokens_before: int
    tokens_after: int
    calls: int

    @property
    def freed(self) -> int:
        """tokensBefore minus tokensAfter."""
        return self.tokens_before - self.tokens_after


def render_run_done(view: RunDone) -> str:
    """The line a finished run leaves: the entry, the file and the tokens freed."""
    where = "appended to the source" if view.in_place else "written to a new file"
    calls = plural(view.calls, "summarizer call")
    return (f'<div class="pikit-ok pikit-compaction-done"><b>Run {view.number}: compaction '
            f'{esc(view.compaction_id)}</b> {where}: <span class="pikit-id">{esc(view.path)}</span><br>tokensBefore '
            f"<b>{fmt_int(view.tokens_before)}</b> → tokensAfter <b>{fmt_int(view.tokens_after)}</b> "
            f"({fmt_int(view.freed)} tokens freed; {calls}).</div>")


@dataclass(frozen=True)
class BeforeAfter:
    """The budget before and after one run, on one scale, with the settings the run used."""

    before: BudgetView
    after: BudgetView
    settings: RunSettings
    compaction_id: Any


def before_after(before: Projection, after: Projection, *, model: str, settings: RunSettings, number: int,
                 compaction_id: Any) -> BeforeAfter:
    """The two budgets of run ``number`` (``before``: the context it compacted, ``after``: the one it leaves)."""
    views = [budget_view(projection, model=model, window=settings.context_window, reserve=settings.reserve_tokens,
                         keep=settings.keep_recent_tokens, title=f"{when} run {number}")
             for when, projection in (("Before", before), ("After", after))]
    scale = max(view.natural_scale for view in views)
    first, second = (replace(view, scale=scale) for view in views)
    return BeforeAfter(first, second, settings, compaction_id)


def render_before_after(view: BeforeAfter) -> str:
    """The two budgets one above the other, under the run's settings and its compaction's id."""
    return (f'<div class="pikit-block pikit-before-after" aria-label="before and after">'
            f'<div class="pikit-sub">{esc(view.settings.caption)} · compaction '
            f'<span class="pikit-id">{esc(view.compaction_id)}</span></div>'
            f"{render_budget(view.before, legend=False)}{render_budget(view.after)}</div>")
