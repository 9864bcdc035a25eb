"""The runs of a what-if compaction: the tokensBefore/tokensAfter chart, the budget before and after
the latest run, and **clear runs**."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import traitlets

from .._session import Session
from .._tree.sessiontree import CURRENT
from ._base import LeafWidget
from ._html import error_box
from ._runs import CompactionRun, compaction_history
from ._views.compaction import ChartGroup, CompactionPoint, render_chart
from ._views.runs import before_after, render_before_after

__all__ = ["CompactionHistory"]

_COLUMNS = ["run", "leaf_id", "compaction_id", "keep_recent_tokens", "reserve_tokens", "context_window",
            "summarizer", "tokens_before", "tokens_after", "first_kept_entry_id", "path"]


class CompactionHistory(LeafWidget):
    """The compaction runs kept, drawn with the compactions already on the branch at ``leaf_id``.

    Not a widget itself: it draws into three, to be placed where they belong. ``chart`` shows
    the branch's compactions and every run kept (:meth:`add`) as its own labelled group, with
    the threshold ``context_window - reserve_tokens`` (traitlets); ``compared`` the budget
    before and after the latest run, one above the other, with the settings it used and the
    budget bar's ``model``; ``clear_button`` forgets the runs (:meth:`clear`).
    """

    model = traitlets.Unicode("")
    reserve_tokens = traitlets.Int(16_384)
    context_window = traitlets.Int(None, allow_none=True)

    def __init__(self, session: Session, leaf_id: Any = CURRENT, *, context_window: int | None = None,
                 reserve_tokens: int = 16_384, model: str = "") -> None:
        leaf = self._bind(session, leaf_id)
        super().__init__(context_window=context_window, reserve_tokens=reserve_tokens, model=model)
        self.runs: list[CompactionRun] = []
        self.compared = widgets.HTML()
        self.compared.add_class("pikit-budget-compare")
        self.chart = widgets.HTML(layout=widgets.Layout(width="auto", align_self="stretch"))
        self.chart.add_class("pikit-compaction-chart")
        self.clear_button = widgets.Button(description="clear runs", icon="eraser", disabled=True,
                                           tooltip="remove the runs from the chart and the before/after view",
                                           layout=widgets.Layout(width="auto", min_width="fit-content"))
        self.clear_button.add_class("pikit-clear-runs")
        self.clear_button.on_click(lambda _b: self.clear())
        self._follow_leaf(leaf)
        self.observe(lambda _c: self.update_chart(), names=["context_window", "reserve_tokens"])
        self.refresh()

    def __repr__(self) -> str:
        return f"<CompactionHistory leaf={self.leaf_id!r} runs={len(self.runs)}>"

    @property
    def last_run(self) -> CompactionRun | None:
        """The latest run (``None`` before the first or after :meth:`clear`)."""
        return self.runs[-1] if self.runs else None

    @property
    def chart_groups(self) -> list[ChartGroup]:
        """The chart's groups: the branch's own compactions, then one group per run."""
        groups = [ChartGroup("this branch", tuple(compaction_history(self.session, self.leaf_id)))]
        groups.extend(ChartGroup(f"run {run.number}", (run.point,), run.settings) for run in self.runs)
        return groups

    @property
    def points(self) -> list[CompactionPoint]:
        """The points of the chart, group after group."""
        return [point for group in self.chart_groups for point in group.points]

    def frame(self) -> Any:
        """The runs as a pandas DataFrame (one row per run)."""
        import pandas as pd

        return pd.DataFrame.from_records([run.to_record() for run in self.runs], columns=_COLUMNS)

    def add(self, run: CompactionRun) -> None:
        """Keep ``run``: it joins the chart, and the before/after view shows it."""
        self.runs.append(run)
        self.clear_button.disabled = False
        self.refresh()

    def clear(self) -> None:
        """Forget the runs (the files they wrote stay): the chart shows the branch alone again."""
        self.runs.clear()
        self.clear_button.disabled = True
        self.refresh()

    def refresh(self) -> None:
        """Redraw the before/after view and the chart."""
        self.update_compared()
        self.update_chart()

    def update_chart(self) -> None:
        """Redraw the tokensBefore/tokensAfter chart: the branch, then every run."""
        try:
            threshold = None if self.context_window is None else self.context_window - self.reserve_tokens
            self.chart.value = render_chart(self.chart_groups, threshold)
        except Exception as exc:
            self.chart.value = error_box("Cannot draw the compaction chart", exc)

    def update_compared(self) -> None:
        """Show the budget before and after the latest run, one above the other, on one scale,
        with the settings that run used."""
        run = self.last_run
        if run is None:
            self.compared.value = ""
            return
        try:
            view = before_after(run.before, run.after, model=self.model, settings=run.settings, number=run.number,
                                compaction_id=run.result.entry["id"])
            self.compared.value = render_before_after(view)
        except Exception as exc:
            self.compared.value = error_box("Cannot draw the budget before and after", exc)
