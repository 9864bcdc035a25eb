"""Following the file in the explorer: the tree, the budget and the context keep up with Pi.

:class:`LiveBar` is the explorer's strip for it: a **follow** toggle, a **back to live**
button, a status line, the call-out of what just happened beyond an append (a compaction
appeared, Pi went on from another branch, the file was loaded again), and the chart of
the branch's compactions (tokensBefore and tokensAfter), which gains a bar when Pi compacts.
Each change of the file reaches it once, after the follower's refresh (a burst of lines is
one refresh, so one repaint); the leaf moves to the newest entry as long as the user has not
clicked elsewhere.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import traitlets

from .._following import Follower
from .._formatting import fmt_delta, fmt_int, plural
from .._palette import ROLES, SEGMENTS
from .._tree.refresh import Refresh
from ._html import error_box, esc
from ._runs import compaction_history
from ._views.compaction import ChartGroup, render_chart

if TYPE_CHECKING:
    import asyncio

    from ._explorer import SessionExplorer

__all__ = ["LiveBar"]

_SPACED = "0 8px 0 0"  # room after each control of the bar's row (ipywidgets' Layout has no gap)
# The call-out wears the colour of compaction summaries (the purple of the budget bar's summary).
_CALLOUT_STYLE = (f"border-left: 4px solid {SEGMENTS['summary']}; background: {ROLES['compactionSummary']}; "
                  "padding: 4px 8px; margin: 2px 0; font-weight: 500")


class LiveBar(widgets.VBox):
    """Follow toggle, back-to-live button, status and compaction call-out of an explorer.

    ``live`` says whether the explorer's leaf tracks the newest entry; ``following`` whether
    the file is followed at all. ``repaints`` counts the updates applied (one per change of
    the file, however many lines it brought).
    """

    live = traitlets.Bool(False)
    following = traitlets.Bool(False)
    #: Seconds a tree layout may take before layouts are spaced out (see :meth:`_relayout`).
    layout_budget = 0.1

    def __init__(self, explorer: SessionExplorer, follower: Follower | None) -> None:
        self.explorer = explorer
        self.follower: Follower | None = None
        self.repaints = 0
        self.last_change: Refresh | None = None
        self.callout_id: Any = None
        self._remove: Callable[[], None] | None = None
        self._moving = False
        self._generation = explorer.session.generation
        self._chart_key: Any = object()
        self._relayout_due: asyncio.TimerHandle | None = None
        self._layout_seconds = 0.0
        self._laid_out_at = 0.0
        self.toggle = widgets.ToggleButton(value=False, description="follow file", icon="eye",
                                           tooltip="keep up with the file while Pi writes it",
                                           disabled=explorer.session.path is None,
                                           layout=widgets.Layout(width="auto", margin=_SPACED))
        self.toggle.add_class("pikit-follow")
        self.back = widgets.Button(description="back to live", icon="forward",
                                   tooltip="move the leaf to the newest entry and follow it again",
                                   layout=widgets.Layout(width="auto", display="none", margin=_SPACED))
        self.back.add_class("pikit-back-to-live")
        self.status = widgets.HTML(layout=widgets.Layout(margin=_SPACED))
        self.status.add_class("pikit-live-status")
        self.callout = widgets.HTML()
        self.callout.add_class("pikit-live-callout")
        self.chart = widgets.HTML(layout=widgets.Layout(width="auto", display="none"))
        self.chart.add_class("pikit-live-chart")
        row = widgets.HBox([self.toggle, self.back, self.status],
                           layout=widgets.Layout(align_items="center", flex_flow="row wrap"))
        super().__init__([row, self.callout, self.chart])
        self.add_class("pikit-live")
        self.toggle.observe(self._on_toggle, names="value")
        self.back.on_click(lambda _b: self.back_to_live())
        explorer.observe(self._on_leaf, names="leaf_id")
        if follower is not None:
            self.attach(follower)
        self._update_status()

    # ------------------------------------------------------------------ following on and off
    def attach(self, follower: Follower) -> None:
        """Follow through ``follower`` (its session must be the explorer's)."""
        if follower.session is not self.explorer.session:
            raise ValueError("the follower follows another session than the explorer shows")
        if self._remove is not None:
            self._remove()
        self.follower = follower
        self._remove = follower.on_change(self.apply)
        if not follower.running:
            follower.start()
        self.following = True
        self.toggle.value = True
        self.back_to_live()

    def stop(self) -> None:
        """Stop following (the explorer keeps what it shows)."""
        if self.follower is not None:
            self.follower.stop()
        self.following = False
        self.live = False
        self.toggle.value = False
        self._update_status()

    def _on_toggle(self, change: dict[str, Any]) -> None:
        if change["new"] and not self.following:
            self.attach(self.follower if self.follower is not None else Follower(self.explorer.session))
        elif not change["new"] and self.following:
            self.stop()

    # ------------------------------------------------------------------ the leaf
    def back_to_live(self) -> None:
        """Move the leaf to the newest entry and follow it from now on."""
        self.live = self.following
        self._move_to_newest()
        self._update_status()

    def _move_to_newest(self) -> None:
        entries = self.explorer.session.entries
        newest = entries[-1].id if entries else None
        if newest is not None and newest != self.explorer.leaf_id and newest in self.explorer.session:
            self._moving = True
            try:
                self.explorer.leaf_id = newest
            finally:
                self._moving = False

    def _on_leaf(self, change: dict[str, Any]) -> None:
        if not self._moving and self.live:
            self.live = False  # the user went elsewhere: stay there until "back to live"
            self._update_status()
        self._update_chart()

    # ------------------------------------------------------------------ changes of the file
    def apply(self, change: Refresh) -> None:
        """Show one change of the file: one relayout of the tree, one move of the leaf."""
        explorer = self.explorer
        session = explorer.session
        self.last_change = change
        replaced = session.generation != self._generation  # reloaded or re-indexed: cached views are stale
        if replaced:
            self._generation = session.generation
            explorer.state.clear()
            self._chart_key = object()
        compactions = [e.id for e in change.added if e.type == "compaction"]
        with explorer.tree.hold_sync(), explorer.budget.hold_sync(), explorer.context_view.hold_sync():
            before = explorer.leaf_id
            if self.live or explorer.leaf_id not in session:
                self._move_to_newest()
            if replaced and explorer.leaf_id == before:  # the same leaf, other entries: draw it again
                explorer._projection = None
                explorer.refresh()
                for view in (explorer.budget, explorer.context_view, explorer.stepper):
                    if view is not None:
                        view._projection = None
                        view.leaf_changed()  # as after a move (the stepper traces its compaction again)
            self._relayout()
            explorer.refresh_header()
        moved = explorer.leaf_id != before
        self._call_out(change if moved or replaced else None, compactions[-1] if compactions else None)
        self._update_chart(force=bool(compactions))
        self.repaints += 1
        self._update_status()

    def _relayout(self) -> None:
        """Lay the tree out again, or soon when its layouts are slow (a tree of tens of thousands).

        A layout costs the size of the tree, not of the change: when one takes longer than
        ``layout_budget`` seconds, the next comes at least ten layouts' time after it (the
        leaf, the budget and the context do not wait; the leaf is marked on its nearest row).
        """
        if self._relayout_due is not None:
            return  # one is scheduled already: it will show this change too
        wait = 10 * self._layout_seconds - (time.monotonic() - self._laid_out_at)
        loop = _loop_here(self.follower.loop if self.follower is not None else None)
        if loop is None or self._layout_seconds <= self.layout_budget or wait <= 0:
            self._relayout_now()
        else:
            self._relayout_due = loop.call_later(wait, self._relayout_now)

    def _relayout_now(self) -> None:
        self._relayout_due = None
        start = time.perf_counter()
        self.explorer.tree.relayout()
        self._layout_seconds = time.perf_counter() - start
        self._laid_out_at = time.monotonic()
        self.explorer.refresh_header()

    def _call_out(self, change: Refresh | None, compaction_id: Any) -> None:
        """Call out what the change shown did beyond an append (the newest news replaces the last)."""
        news = []
        if change is not None and change.reloaded:
            news.append(f"↻ The file was loaded again: {esc(change.reloaded)}")
        elif change is not None and change.branch_switch is not None:
            news.append(f"⋔ {esc(str(change.branch_switch))}")
        entry = self.explorer.session.by_id.get(compaction_id) if compaction_id is not None else None
        if entry is not None:
            self.callout_id = compaction_id
            before = entry.data.get("tokensBefore")
            after = self.explorer.state.projection(compaction_id).tokens
            saved = before - after if isinstance(before, int | float) else None
            news.append(f'⚡ Pi compacted: <span class="pikit-id">{esc(compaction_id)}</span> · '
                        f"tokensBefore {fmt_int(before)} → tokensAfter {fmt_int(after)}"
                        f"{f' ({fmt_delta(-saved)})' if saved is not None else ''}")
        if news:
            at = esc(time.strftime("%H:%M:%S"))
            self.callout.value = "".join(f'<div class="pikit-callout" style="{_CALLOUT_STYLE}">{text} · at {at}</div>'
                                         for text in news)

    def _update_chart(self, force: bool = False) -> None:
        if not self.following:
            return
        explorer = self.explorer
        session = explorer.session
        leaf = explorer.leaf_id
        ancestry = session.ancestry
        head = ancestry.compaction.get(leaf) if ancestry is not None and leaf is not None else None
        key = (getattr(head, "id", None), self.callout_id, explorer.budget.context_window,
               explorer.budget.reserve_tokens)
        if key == self._chart_key and not force:
            return  # the same compactions on the branch: the chart stands
        self._chart_key = key
        try:
            points = compaction_history(session, leaf, new_ids=(self.callout_id,) if self.callout_id else ())
            threshold = explorer.budget.context_window - explorer.budget.reserve_tokens
            self.chart.value = render_chart([ChartGroup("this branch", tuple(points))], threshold) if points else ""
        except Exception as exc:
            self.chart.value = error_box("Cannot draw the compaction chart", exc)
        self.chart.layout.display = "" if self.chart.value else "none"

    def _update_status(self) -> None:
        self.back.layout.display = "" if self.following and not self.live else "none"
        if not self.following:
            self.status.value = ""
            return
        session = self.explorer.session
        state = "● live" if self.live else "‖ paused at the leaf you chose"
        change = self.last_change
        last = ""
        if change is not None:
            what = (f"reloaded ({esc(change.reloaded)})" if change.reloaded
                    else f"+{plural(len(change.added), 'entry')}"
                    + (" on another branch" if change.branch_switch is not None else ""))
            last = f" · last change {what} at {esc(time.strftime('%H:%M:%S'))}"
        engine = self.follower.engine if self.follower is not None else ""
        self.status.value = (f'<span class="pikit-status"><b>{state}</b> · {plural(len(session), "entry")}'
                             f"{last} · {esc(engine)}</span>")



def _loop_here(loop: asyncio.AbstractEventLoop | None) -> asyncio.AbstractEventLoop | None:
    """``loop`` if this call runs on it (the follower delivers its refreshes there), else ``None``."""
    asyncio = sys.modules.get("asyncio")
    if loop is None or asyncio is None:
        return None
    try:
        return loop if asyncio.get_running_loop() is loop else None
    except RuntimeError:
        return None
