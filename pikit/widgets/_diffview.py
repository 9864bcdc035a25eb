"""Compare two contexts: two leaves of a session, or the same branch before and after a compaction."""

from __future__ import annotations

import time
from typing import Any

import ipywidgets as widgets
import traitlets

from .._context.describe import session_title
from .._context.diff import ProjectionDiff, diff_contexts
from .._context.projection import Projection
from .._formatting import fmt_int
from .._inert import visible
from .._session import Session
from ._base import resolve_leaf
from ._html import error_box, style_widget
from ._state import SessionState, state_for
from ._views.diff import DiffView, diff_frame, diff_view, render_diff_header, render_diff_rows

__all__ = ["ContextDiff", "leaf_choices"]


def leaf_choices(session: Session, *, limit: int = 200) -> list[tuple[str, Any]]:
    """``(text, id)`` options for picking a leaf: branch tips and labeled entries, newest first
    (the texts shown with ``pikit._inert.visible``, the ids exact)."""
    state = state_for(session)
    children = session.tree()["children"]
    tips = [e for e in session.entries if e.id is not None and e.id not in children and e.id in session.by_id]
    labeled = [session.by_id[i] for i in session.labels if i in session.by_id]
    seen: set[Any] = set()
    out: list[tuple[str, Any]] = []
    for entry in [*labeled, *reversed(tips)]:
        if entry.id in seen:
            continue
        seen.add(entry.id)
        label = session.labels.get(entry.id)
        kind, text = state.preview(entry)
        head = f"[{label}] " if label else ""
        out.append((visible(f"{head}{entry.id} · {kind} · {text[:60]}"), entry.id))
        if len(out) >= limit:
            break
    return out


def _compactions(session: Session) -> list[tuple[str, Any]]:
    out = []
    for entry in session.entries:
        if entry.type == "compaction" and entry.id in session.by_id:
            out.append((visible(f"{entry.id} · tokensBefore {fmt_int(entry.data.get('tokensBefore'))}"), entry.id))
    return out


class ContextDiff(widgets.VBox):
    """The messages only in ``a`` (removed), only in ``b`` (added), changed and shared, with token deltas.

    Two modes: ``a`` and ``b`` are two leaf ids; or ``compaction`` is a compaction entry id and the
    diff is the context at its parent (before) against the context it leaves (after). Use
    :meth:`show` to compare projections made elsewhere (e.g. a what-if compaction).
    """

    a = traitlets.Any(None)
    b = traitlets.Any(None)
    compaction = traitlets.Any(None)

    def __init__(self, session: Session, a: Any = None, b: Any = None, *, compaction: Any = None,
                 **kwargs: Any) -> None:
        self.session = session
        self.state: SessionState = state_for(session)
        a, b = resolve_leaf(session, a), resolve_leaf(session, b)
        self.diff: ProjectionDiff | None = None
        self.view: DiffView | None = None
        self.render_ms = 0.0
        self._titles = ("a", "b")
        self.header = widgets.HTML()
        self.header.add_class("pikit-diff-header")
        self.body = widgets.HTML()
        self.body.add_class("pikit-diff-body")
        choices = leaf_choices(session)
        for leaf in (a, b, session.leaf_id):
            if leaf is not None and leaf in session and all(v != leaf for _, v in choices):
                choices.insert(0, (visible(f"{leaf} · {self.state.preview(session.by_id[leaf])[1][:60]}"), leaf))
        self.pick_a = widgets.Dropdown(options=choices, description="a", value=None,
                                       layout=widgets.Layout(width="48%"))
        self.pick_b = widgets.Dropdown(options=choices, description="b", value=None,
                                       layout=widgets.Layout(width="48%"))
        self.pick_a.add_class("pikit-diff-pick-a")
        self.pick_b.add_class("pikit-diff-pick-b")
        compactions = _compactions(session)
        self.pick_compaction = widgets.Dropdown(options=[("(two leaves)", None), *compactions],
                                                description="compaction", value=None,
                                                layout=widgets.Layout(width="48%"))
        self.pick_compaction.add_class("pikit-diff-pick-compaction")
        self.swap_button = widgets.Button(description="swap a ⇄ b", layout=widgets.Layout(width="auto"))
        self.swap_button.add_class("pikit-diff-swap")
        self.swap_button.on_click(lambda _b: self.swap())
        controls = widgets.VBox([widgets.HBox([self.pick_a, self.pick_b]),
                                 widgets.HBox([self.pick_compaction, self.swap_button])])
        controls.add_class("pikit-diff-controls")
        super().__init__([style_widget(), controls, self.header, self.body], **kwargs)
        self.add_class("pikit-root")
        self.add_class("pikit-context-diff")
        with self.hold_trait_notifications():
            self.a, self.b, self.compaction = a, b, compaction
        self._sync_pickers()
        self.pick_a.observe(lambda c: self._picked("a", c["new"]), names="value")
        self.pick_b.observe(lambda c: self._picked("b", c["new"]), names="value")
        self.pick_compaction.observe(lambda c: self._picked("compaction", c["new"]), names="value")
        self.observe(lambda _c: self.refresh(), names=["a", "b", "compaction"])
        self.refresh()

    @traitlets.validate("a", "b")
    def _check_leaf(self, proposal: dict[str, Any]) -> Any:
        return resolve_leaf(self.session, proposal["value"])

    @traitlets.validate("compaction")
    def _check_compaction(self, proposal: dict[str, Any]) -> Any:
        value = resolve_leaf(self.session, proposal["value"])
        if value is not None and self.session.by_id[value].type != "compaction":
            raise traitlets.TraitError(f"{value!r} is not a compaction entry of the session")
        return value

    # ------------------------------------------------------------------ controls
    def _sync_pickers(self) -> None:
        self.pick_a.disabled = self.pick_b.disabled = self.compaction is not None
        for picker, value in ((self.pick_a, self.a), (self.pick_b, self.b), (self.pick_compaction, self.compaction)):
            values = [v for _, v in picker.options]
            if value not in values and value is not None:
                picker.options = [(visible(f"{value}"), value), *picker.options]
            if picker.value != value:
                picker.value = value

    def _picked(self, name: str, value: Any) -> None:
        if getattr(self, name) != value:
            setattr(self, name, value)

    def swap(self) -> None:
        """Exchange ``a`` and ``b``."""
        with self.hold_trait_notifications():
            self.a, self.b = self.b, self.a

    # ------------------------------------------------------------------ diff
    def refresh(self) -> None:
        """Recompute the diff for the current ``a``/``b``/``compaction`` and redraw."""
        self._sync_pickers()
        try:
            if self.compaction is not None:
                entry = self.session.by_id[self.compaction]
                parent = entry.parent_id if entry.parent_id in self.session else None
                before, after = self.state.projection(parent), self.state.projection(self.compaction)
                titles = (f"before compaction {self.compaction} (at {parent})", f"after compaction {self.compaction}")
            else:
                before, after = self.state.projection(self.a), self.state.projection(self.b)
                titles = (f"a = {self.a}", f"b = {self.b}")
            self.show(before, after, titles)
        except Exception as exc:
            self.diff = None
            self.view = None
            self.header.value = error_box("Cannot compare these contexts", exc)
            self.body.value = ""

    def show(self, a: Projection, b: Projection, titles: tuple[str, str] = ("a", "b")) -> ProjectionDiff:
        """Compare two projections (from this session or made elsewhere) and draw the result."""
        start = time.perf_counter()
        self.diff = diff_contexts(a, b)
        self._titles = titles
        self.view = diff_view(self.diff, titles, labels=self.session.labels, two_leaves=self.compaction is None,
                              session=session_title(self.session))
        self.header.value = render_diff_header(self.view)
        self.body.value = render_diff_rows(self.view)
        self.render_ms = (time.perf_counter() - start) * 1000
        return self.diff

    def to_frame(self) -> Any:
        """The rows of the diff as a pandas DataFrame (one row per aligned message, no bodies)."""
        return diff_frame(self.diff)

    def __repr__(self) -> str:
        what = f"compaction={self.compaction!r}" if self.compaction is not None else f"a={self.a!r} b={self.b!r}"
        totals = self.diff.totals if self.diff is not None else None
        change = (f" +{totals.added} −{totals.removed} ~{totals.changed} ={totals.same}"
                  if totals is not None else "")
        return f"<ContextDiff {what}{change}>"
