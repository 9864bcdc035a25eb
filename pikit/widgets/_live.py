"""Following the file: the tree, the budget and the context keep up with Pi.

:class:`LiveBar` is the strip for it: a **follow** toggle, a **back to live** button, a
status line, the call-out of what just happened beyond an append (a compaction appeared,
Pi went on from another branch, the file was loaded again), and the chart of the branch's
compactions (tokensBefore and tokensAfter), which gains a bar when Pi compacts. Each change
of the file reaches it once, after the follower's refresh (a burst of lines is one refresh,
so one repaint); its ``leaf_id`` moves to the newest entry as long as nobody has set it
elsewhere. The views that show that leaf link to ``leaf_id`` and to the bar's callbacks
(:meth:`LiveBar.on_change`, :meth:`LiveBar.on_relayout`); the bar knows nothing of them.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import traitlets

from .._following import Follower
from .._formatting import fmt_delta, fmt_int, plural
from .._palette import ROLES, SEGMENTS
from .._session import Session
from .._tree.refresh import Refresh
from .._tree.sessiontree import CURRENT
from ._base import resolve_leaf
from ._html import error_box, esc
from ._runs import compaction_history
from ._state import state_for
from ._views.compaction import ChartGroup, render_chart

if TYPE_CHECKING:
    import asyncio

__all__ = ["LiveBar"]

_SPACED = "0 8px 0 0"  # room after each control of the bar's row (ipywidgets' Layout has no gap)
# The call-out wears the colour of compaction summaries (the purple of the budget bar's summary).
_CALLOUT_STYLE = (f"border-left: 4px solid {SEGMENTS['summary']}; background: {ROLES['compactionSummary']}; "
                  "padding: 4px 8px; margin: 2px 0; font-weight: 500")

ChangeCallback = Callable[[Refresh, bool], Any]
"""``callback(change, redraw)``: ``redraw`` is true when the file was loaded again under the same leaf."""


def _removal(callbacks: list[Any], callback: Any) -> Callable[[], None]:
    callbacks.append(callback)

    def remove() -> None:
        if callback in callbacks:
            callbacks.remove(callback)

    return remove


class LiveBar(widgets.VBox):
    """Follow toggle, back-to-live button, status and compaction call-out of a session's file.

    ``leaf_id`` (a traitlet) is the leaf shown: while ``live`` each change of the file moves it
    to the newest entry; set from outside (someone chose another entry), it stays there until
    **back to live**. ``following`` says whether the file is followed at all. ``repaints``
    counts the changes shown (one per change of the file, however many lines it brought).
    ``context_window`` and ``reserve_tokens`` set the chart's threshold (a window of ``None`` is
    unknown: no threshold is drawn).

    For each change, inside the held sync of the widgets of ``hold`` (each sends the page one
    update for the whole change), the leaf moves, the callbacks of :meth:`on_relayout` lay out
    again and those of :meth:`on_change` are called with the change.
    """

    live = traitlets.Bool(False)
    following = traitlets.Bool(False)
    leaf_id = traitlets.Any(None)
    context_window = traitlets.Int(None, allow_none=True)
    reserve_tokens = traitlets.Int(16_384)
    #: Seconds a layout may take before layouts are spaced out (see :meth:`_relayout`).
    layout_budget = 0.1

    def __init__(self, session: Session, follower: Follower | None = None, *, leaf_id: Any = CURRENT,
                 hold: Sequence[widgets.Widget] = (), context_window: int | None = None,
                 reserve_tokens: int = 16_384) -> None:
        self.session = session
        self.follower: Follower | None = None
        self.held = tuple(hold)
        self.repaints = 0
        self.last_change: Refresh | None = None
        self.callout_id: Any = None
        self._remove: Callable[[], None] | None = None
        self._moving = False
        self._generation = session.generation
        self._chart_key: Any = object()
        self._change_callbacks: list[ChangeCallback] = []
        self._relayout_callbacks: list[Callable[[], Any]] = []
        self._relayout_due: asyncio.TimerHandle | None = None
        self._layout_seconds = 0.0
        self._laid_out_at = 0.0
        row = widgets.HBox(self._controls(), layout=widgets.Layout(align_items="center", flex_flow="row wrap"))
        self.callout = widgets.HTML()
        self.callout.add_class("pikit-live-callout")
        self.chart = widgets.HTML(layout=widgets.Layout(width="auto", display="none"))
        self.chart.add_class("pikit-live-chart")
        super().__init__([row, self.callout, self.chart], leaf_id=resolve_leaf(session, leaf_id),
                         context_window=context_window, reserve_tokens=reserve_tokens)
        self.add_class("pikit-live")
        self.toggle.observe(self._on_toggle, names="value")
        self.back.on_click(lambda _b: self.back_to_live())
        self.observe(self._on_leaf, names="leaf_id")
        if follower is not None:
            self.attach(follower)
        self._update_status()

    def _controls(self) -> list[widgets.Widget]:
        self.toggle = widgets.ToggleButton(value=False, description="follow file", icon="eye",
                                           tooltip="keep up with the file while Pi writes it",
                                           disabled=self.session.path is None,
                                           layout=widgets.Layout(width="auto", margin=_SPACED))
        self.toggle.add_class("pikit-follow")
        self.back = widgets.Button(description="back to live", icon="forward",
                                   tooltip="move the leaf to the newest entry and follow it again",
                                   layout=widgets.Layout(width="auto", display="none", margin=_SPACED))
        self.back.add_class("pikit-back-to-live")
        self.status = widgets.HTML(layout=widgets.Layout(margin=_SPACED))
        self.status.add_class("pikit-live-status")
        return [self.toggle, self.back, self.status]

    @traitlets.validate("leaf_id")
    def _check_leaf(self, proposal: dict[str, Any]) -> Any:
        return resolve_leaf(self.session, proposal["value"])

    def on_change(self, callback: ChangeCallback) -> Callable[[], None]:
        """Call ``callback(change, redraw)`` for each change of the file shown, once the leaf has
        moved (``redraw``: the file was loaded again and the leaf stayed, so what shows it must
        draw it again); returns a function that removes it."""
        return _removal(self._change_callbacks, callback)

    def on_relayout(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Call ``callback()`` to lay out again after each change (a tree layout), or later when
        layouts are slow (see :meth:`_relayout`); returns a function that removes it."""
        return _removal(self._relayout_callbacks, callback)

    # ------------------------------------------------------------------ following on and off
    def attach(self, follower: Follower) -> None:
        """Follow through ``follower`` (its session must be the bar's)."""
        if follower.session is not self.session:
            raise ValueError("the follower follows another session than the one shown")
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
        """Stop following (what is shown stays)."""
        if self.follower is not None:
            self.follower.stop()
        self.following = False
        self.live = False
        self.toggle.value = False
        self._update_status()

    def _on_toggle(self, change: dict[str, Any]) -> None:
        if change["new"] and not self.following:
            self.attach(self.follower if self.follower is not None else Follower(self.session))
        elif not change["new"] and self.following:
            self.stop()

    # ------------------------------------------------------------------ the leaf
    def back_to_live(self) -> None:
        """Move the leaf to the newest entry and follow it from now on."""
        self.live = self.following
        self._move_to_newest()
        self._update_status()

    def _move_to_newest(self) -> None:
        entries = self.session.entries
        newest = entries[-1].id if entries else None
        if newest is not None and newest != self.leaf_id and newest in self.session:
            self._moving = True
            try:
                self.leaf_id = newest
            finally:
                self._moving = False
            self._update_chart()  # once what follows the leaf has moved too (the threshold may change)

    def _on_leaf(self, change: dict[str, Any]) -> None:
        if self._moving:
            return
        if self.live:
            self.live = False  # someone went elsewhere: stay there until "back to live"
            self._update_status()
        self._update_chart()

    # ------------------------------------------------------------------ changes of the file
    @contextlib.contextmanager
    def _holding(self) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for widget in self.held:
                stack.enter_context(widget.hold_sync())
            yield

    def apply(self, change: Refresh) -> None:
        """Show one change of the file: one move of the leaf, one layout, one call of each callback."""
        session = self.session
        self.last_change = change
        replaced = session.generation != self._generation  # reloaded or re-indexed: cached views are stale
        if replaced:
            self._generation = session.generation
            state_for(session).clear()
            self._chart_key = object()
        compactions = [e.id for e in change.added if e.type == "compaction"]
        with self._holding():
            before = self.leaf_id
            if self.live or self.leaf_id not in session:
                self._move_to_newest()
            self._relayout()
            redraw = replaced and self.leaf_id == before  # the same leaf, other entries: draw it again
            for callback in list(self._change_callbacks):
                callback(change, redraw)
        moved = self.leaf_id != before
        self._call_out(change if moved or replaced else None, compactions[-1] if compactions else None)
        self._update_chart(force=bool(compactions))
        self.repaints += 1
        self._update_status()

    def _relayout(self) -> None:
        """Lay out again (the callbacks of :meth:`on_relayout`), or soon when layouts are slow.

        A layout costs the size of the tree, not of the change: when one takes longer than
        ``layout_budget`` seconds, the next comes at least ten layouts' time after it (the
        leaf and the other views do not wait).
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
        for callback in list(self._relayout_callbacks):
            callback()
        self._layout_seconds = time.perf_counter() - start
        self._laid_out_at = time.monotonic()

    def _call_out(self, change: Refresh | None, compaction_id: Any) -> None:
        """Call out what the change shown did beyond an append (the newest news replaces the last)."""
        news = []
        if change is not None and change.reloaded:
            news.append(f"↻ The file was loaded again: {esc(change.reloaded)}")
        elif change is not None and change.branch_switch is not None:
            news.append(f"⋔ {esc(str(change.branch_switch))}")
        entry = self.session.by_id.get(compaction_id) if compaction_id is not None else None
        if entry is not None:
            self.callout_id = compaction_id
            before = entry.data.get("tokensBefore")
            after = state_for(self.session).projection(compaction_id).tokens
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
        session = self.session
        leaf = self.leaf_id
        ancestry = session.ancestry
        head = ancestry.compaction.get(leaf) if ancestry is not None and leaf is not None else None
        key = (getattr(head, "id", None), self.callout_id, self.context_window, self.reserve_tokens)
        if key == self._chart_key and not force:
            return  # the same compactions on the branch: the chart stands
        self._chart_key = key
        try:
            points = compaction_history(session, leaf, new_ids=(self.callout_id,) if self.callout_id else ())
            threshold = None if self.context_window is None else self.context_window - self.reserve_tokens
            self.chart.value = render_chart([ChartGroup("this branch", tuple(points))], threshold) if points else ""
        except Exception as exc:
            self.chart.value = error_box("Cannot draw the compaction chart", exc)
        self.chart.layout.display = "" if self.chart.value else "none"

    def _update_status(self) -> None:
        self.back.layout.display = "" if self.following and not self.live else "none"
        if not self.following:
            self.status.value = ""
            return
        session = self.session
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
