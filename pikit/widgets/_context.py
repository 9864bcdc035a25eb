"""The projected context at a leaf: every model-visible message with its provenance and token figures."""

from __future__ import annotations

import time
from typing import Any

import ipywidgets as widgets
import traitlets

from .._context.counting import Counter, get_counter
from .._tree.sessiontree import CURRENT, Session
from ._base import LeafWidget
from ._html import style_widget
from ._views.context import (
    ContextHeader,
    ContextPage,
    ContextRow,
    RealCount,
    context_header,
    context_page,
    context_rows,
    render_header,
    render_table,
)

__all__ = ["ContextRow", "ContextView", "context_rows"]


class ContextView(LeafWidget, widgets.VBox):
    """What the model sees at ``leaf_id``: role, source entry, Pi's estimate, the real token count,
    the provider-reported usage where known, omitted/replaced markers, the compaction summary
    block and the kept range. Long content is collapsible; pages of ``page_size`` rows keep it fast.

    Set ``leaf_id`` to show another leaf; ``page`` is 0-based (``-1`` shows the last page). A
    leaf opens on its last page, and pages are counted back from the newest message, so that
    page always shows the newest ``page_size`` messages (the end of the context, with enough
    before it); the first page holds the oldest that are left over.
    Real counts are shown per message; the total is counted at once when at most
    ``count_limit`` messages are new to the counter (else the **count all** button does it),
    which keeps a leaf move cheap on very long branches.

    The view models behind the HTML are ``header_view`` (:class:`~.views.context.ContextHeader`)
    and ``page_view`` (:class:`~.views.context.ContextPage`); ``to_frame()`` gives the rows as a
    DataFrame.
    """

    count_limit = 200

    page = traitlets.Int(-1)
    page_size = traitlets.Int(50)
    show_silent = traitlets.Bool(False)

    def __init__(self, session: Session, leaf_id: Any = CURRENT, *, page_size: int = 50,
                 encoding: str | None = "cl100k_base", **kwargs: Any) -> None:
        leaf = self._bind(session, leaf_id)
        self.counter: Counter | None = get_counter(encoding) if encoding else None
        self.render_ms = 0.0
        self._rows: list[ContextRow] = []
        self._paging = True
        self.header_view: ContextHeader | None = None
        self.page_view: ContextPage | None = None

        self.header = widgets.HTML()
        self.header.add_class("pikit-context-header")
        self.body = widgets.HTML()
        self.body.add_class("pikit-context-body")
        self.page_label = widgets.HTML()
        self.page_label.add_class("pikit-page-label")
        self.count_button = widgets.Button(description="count all", tooltip="count the real tokens of every message",
                                           layout=widgets.Layout(width="auto", min_width="fit-content",
                                                                 flex="0 0 auto", display="none"))
        self.count_button.add_class("pikit-count-all")
        self.count_button.on_click(lambda _b: self.count_all())
        self.silent_box = widgets.Checkbox(value=False, description="show entries that send nothing",
                                           indent=False, layout=widgets.Layout(width="auto", flex="0 0 auto"))
        self.silent_box.add_class("pikit-show-silent")
        self.pager = widgets.HBox([*self._page_buttons(), self.page_label, self.count_button, self.silent_box],
                                  layout=widgets.Layout(align_items="center", flex_flow="row wrap"))
        self.pager.add_class("pikit-gap")
        self.pager.add_class("pikit-pager")
        super().__init__([style_widget(), self.header, self.pager, self.body], **kwargs)
        self.add_class("pikit-root")
        self.add_class("pikit-context-view")
        self.page_size = page_size
        self._follow_leaf(leaf)
        widgets.link((self, "show_silent"), (self.silent_box, "value"))
        self.observe(self._on_page, names=["page", "page_size"])
        self.observe(lambda _c: self.refresh(), names="show_silent")
        self.refresh()

    def _page_buttons(self) -> list[widgets.Button]:
        buttons = []
        for name, icon, tip in (("first", "«", "first page"), ("prev", "‹", "previous page"),
                                ("next", "›", "next page"), ("last", "»", "last page")):
            button = widgets.Button(description=icon, tooltip=tip, layout=widgets.Layout(width="38px"))
            button.add_class(f"pikit-page-{name}")
            button.on_click(lambda _b, n=name: self._turn(n))
            buttons.append(button)
        return buttons

    def __repr__(self) -> str:
        return f"<ContextView leaf={self.leaf_id!r} rows={len(self._rows)} page={self.current_page + 1}/{self.pages}>"

    # ------------------------------------------------------------------ data
    @property
    def rows(self) -> list[ContextRow]:
        """All rows (every page)."""
        return list(self._rows)

    @property
    def pages(self) -> int:
        """Number of pages."""
        return max(1, -(-len(self._rows) // max(1, self.page_size)))

    @property
    def current_page(self) -> int:
        """The page shown (0-based)."""
        return self.pages - 1 if self.page < 0 else min(self.page, self.pages - 1)

    def to_frame(self) -> Any:
        """The projection shown, one row per message, as a pandas DataFrame."""
        from ..frames._messages import messages

        exact = self.counter is not None and self.counter.exact
        return messages(self.projection, counter=self.counter if exact else None)

    def leaf_changed(self) -> None:
        self._paging = False  # the new leaf opens on its last page; draw once, after the refresh
        try:
            self.page = -1
        finally:
            self._paging = True
        self.refresh()

    def _on_page(self, _change: dict[str, Any]) -> None:
        if self._paging:
            self._render_page()

    def refresh(self) -> None:
        """Build the header and page views from the projection and draw them."""
        start = time.perf_counter()
        projection = self.projection
        self._rows = context_rows(projection, include_silent=self.show_silent)
        entry = self.session.by_id.get(projection.leaf_id) if projection.leaf_id is not None else None
        kind = None if entry is None else entry.type if entry.role is None else entry.role
        counter = self.counter
        self.header_view = context_header(projection, labels=self.session.labels, kind=kind, real=self._real(),
                                          notice=counter.notice if counter is not None and not counter.exact
                                          else None)
        real = self.header_view.real
        self.count_button.layout.display = None if real is not None and real.total is None else "none"
        self.header.value = render_header(self.header_view)
        self._render_page(start)

    def _turn(self, where: str) -> None:
        current = self.current_page
        target = {"first": 0, "prev": current - 1, "next": current + 1, "last": self.pages - 1}[where]
        self.page = max(0, min(self.pages - 1, target))

    def _render_page(self, start: float | None = None) -> None:
        start = time.perf_counter() if start is None else start
        exact = self.counter is not None and self.counter.exact
        self.page_view = context_page(self.projection, self._rows, self.page, self.page_size,
                                      labels=self.session.labels, count=self._count if exact else None)
        self.page_label.value = f'<span class="pikit-dim">{self.page_view.label}</span>'
        self.body.value = render_table(self.page_view)
        self.render_ms = (time.perf_counter() - start) * 1000

    # ------------------------------------------------------------------ real counts
    def _real(self) -> RealCount | None:
        if self.counter is None or not self.counter.exact:
            return None
        messages = [row for row in self._rows if row.message is not None]
        missing = sum(1 for row in messages if not self._is_counted(row))
        total = sum(self._count(row) for row in messages) if missing <= self.count_limit else None
        return RealCount(self.counter.name, total, missing)

    def count_all(self) -> int:
        """Count the real tokens of every message at the leaf (tiktoken) and show the total."""
        if self.counter is None or not self.counter.exact:
            return 0
        total = sum(self._count(row) for row in self._rows if row.message is not None)
        self.show_projection(self.projection)
        return total

    def _is_counted(self, row: ContextRow) -> bool:
        assert self.counter is not None
        edit = row.entry.edit.id if row.entry.edit is not None else None
        return self.state.is_counted(self.counter, row.entry.entry.id, row.position, edit)

    def _count(self, row: ContextRow) -> int:
        assert self.counter is not None and row.message is not None
        edit = row.entry.edit.id if row.entry.edit is not None else None
        return self.state.count(self.counter, row.entry.entry.id, row.position, edit, row.message)
