"""The session tree as a virtualized list (an anywidget): Pi's ``/tree`` rows, fast at 10,000+ entries.

Python lays the rows out once per filter mode / search with :meth:`pikit.Session.flatten`
(active branch first, single-child chains flat) and sends them in one compact list. The
browser keeps only the rows in view in the DOM, and marks the active path itself by
following each row's parent row from the leaf, so moving the leaf sends two integers, not
the tree. The order does not jump while you click around: a leaf that the filter hides
is marked on its nearest shown ancestor, and :meth:`TreeView.relayout` (run by every mode
or search change) puts the active branch first again and shows the leaf, as Pi does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as widgets
import traitlets

from .._session import Session
from .._tree.sessiontree import CURRENT
from .._tree.tree import FILTER_MODES, selection
from ..jsjson import loads as json_loads
from ._base import Callbacks, LeafWidget, error_output
from ._html import CSS
from ._views.tree import TreeLayout, anchor_rows, json_id, row_kind, tree_layout

__all__ = ["FILTER_MODES", "TreeLayout", "TreeView", "row_kind"]

_TREE_CSS = """
.pikit-tree { font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: var(--jp-ui-font-size1, 13px);
  color: var(--jp-ui-font-color1, #222); }
.pikit-tree-viewport { position: relative; overflow-y: auto; overflow-x: hidden; outline: none;
  border: 1px solid var(--jp-border-color2, #ddd); border-radius: 4px; background: var(--jp-layout-color1, #fff); }
.pikit-tree-viewport:focus { border-color: var(--jp-brand-color1, #1976d2); }
.pikit-tree-spacer { position: relative; width: 100%; }
.pikit-tree-row { position: absolute; left: 0; right: 0; display: flex; align-items: center; gap: 5px;
  box-sizing: border-box; padding: 0 6px 0 0; cursor: pointer; white-space: nowrap; overflow: hidden; }
.pikit-tree-row:hover { background: var(--jp-layout-color2, #f0f4f8); }
.pikit-tree-row.pikit-off-path { color: var(--jp-ui-font-color2, #666); }
.pikit-tree-row.pikit-off-path .pikit-badge { opacity: 0.75; }
.pikit-tree-row.pikit-active { background: rgba(25, 118, 210, 0.05); }
.pikit-tree-row.pikit-leaf { background: rgba(25, 118, 210, 0.16); font-weight: 600; }
.pikit-tree-row.pikit-leaf-hidden { background: rgba(25, 118, 210, 0.10); }
.pikit-tree-row.pikit-selected { outline: 2px solid var(--jp-brand-color1, #1976d2); outline-offset: -2px; }
.pikit-tree-row.pikit-focus { box-shadow: inset 0 0 0 1px var(--jp-brand-color2, #64b5f6); }
.pikit-tree-gutter { flex: 0 0 14px; text-align: center; color: var(--jp-brand-color1, #1976d2); font-size: 11px; }
.pikit-tree-indent { flex: 0 0 auto; }
.pikit-tree-text { flex: 1 1 auto; min-width: 6em; overflow: hidden; text-overflow: ellipsis; }
.pikit-tree-depth { flex: 0 0 auto; font-size: 0.8em; color: var(--jp-ui-font-color2, #777); }
.pikit-tree-row .pikit-label { flex: 0 1 auto; max-width: 30%; overflow: hidden; text-overflow: ellipsis; }
.pikit-tree-row .pikit-badge { flex: 0 0 auto; }
.pikit-tree-fork { flex: 0 0 auto; font-size: 0.85em; color: #ef6c00; padding-left: 4px; }
.pikit-tree-empty { padding: 8px; color: var(--jp-ui-font-color2, #777); display: none; }
"""

class TreeView(LeafWidget, anywidget.AnyWidget):
    """A virtualized ``/tree`` view of a session.

    Traits: ``leaf_id`` (the leaf it marks; set it to move the marks), ``mode`` (one of
    :data:`FILTER_MODES`), ``search`` (space-separated words, all must match),
    ``selected_id`` (the entry last clicked) and ``editor_text`` (the text Pi's selection
    put in the editor: a selected user or custom message's text, else ``""``).

    :meth:`reveal` marks an entry and scrolls to it without moving the leaf (what a link to
    an entry from another view does).

    A click in the browser calls :meth:`select` (Pi's selection: a user/custom message
    moves the leaf to its parent and returns its text; anything else becomes the leaf).
    Register extra callbacks with :meth:`on_select`; one that fails is shown in
    ``callback_errors`` (an ``Output``) and the others still run.
    """

    _esm = Path(__file__).with_name("_tree.js")
    _css = CSS + _TREE_CSS

    rows_data = traitlets.Bytes(b"[]").tag(sync=True)  # the rows as UTF-8 JSON (one binary buffer)
    anchor_row = traitlets.Int(-1).tag(sync=True)
    leaf_row = traitlets.Int(-1).tag(sync=True)
    selected_row = traitlets.Int(-1).tag(sync=True)
    row_height = traitlets.Int(24).tag(sync=True)
    height = traitlets.Int(480).tag(sync=True)
    render_ms = traitlets.Float(-1.0).tag(sync=True)
    paint_epoch_ms = traitlets.Float(0.0).tag(sync=True)

    mode = traitlets.Unicode("default")
    search = traitlets.Unicode("")
    selected_id = traitlets.Any(None)
    editor_text = traitlets.Unicode("")

    def __init__(self, session: Session, leaf_id: Any = CURRENT, *, mode: str = "default", search: str = "",
                 height: int = 480, **kwargs: Any) -> None:
        leaf = self._bind(session, leaf_id)
        self._index: dict[Any, int] = {}
        self._ids: list[Any] = []
        self.callback_errors: widgets.Output = error_output()
        self._callbacks = Callbacks(self.callback_errors, "selection")
        self.created_epoch_ms = time.time() * 1000
        self.layout_ms = 0.0
        if mode not in FILTER_MODES:
            raise traitlets.TraitError(f"unknown filter mode {mode!r}; use one of {', '.join(FILTER_MODES)}")
        start = time.perf_counter()
        layout = tree_layout(session, leaf, mode, search, describe=self.state.tree_cell)
        # The first layout goes out with the widget's initial state (one message, not two).
        super().__init__(height=height, mode=mode, search=search, rows_data=layout.encode(),
                         anchor_row=layout.anchor_row, leaf_row=layout.leaf_row, **kwargs)
        self._index, self._ids = layout.index, layout.ids
        self.layout_ms = (time.perf_counter() - start) * 1000
        self._follow_leaf(leaf)
        self.on_msg(self._on_front_end_msg)
        self.observe(lambda _change: self.relayout(), names=["mode", "search"])

    # ------------------------------------------------------------------ validation
    @traitlets.validate("mode")
    def _check_mode(self, proposal: dict[str, Any]) -> str:
        mode = proposal["value"]
        if mode not in FILTER_MODES:
            raise traitlets.TraitError(f"unknown filter mode {mode!r}; use one of {', '.join(FILTER_MODES)}")
        return str(mode)

    # ------------------------------------------------------------------ layout
    @property
    def rows(self) -> list[list[Any]]:
        """The rows sent to the browser: ``[id, indent, parent_row, kind, badge, label, text, children]``.

        Decoded from :attr:`rows_data` on each access (only the compact bytes are kept, which
        spares the garbage collector ~10 objects per row on big trees).
        """
        rows: list[list[Any]] = json_loads(self.rows_data)
        return rows

    @property
    def row_ids(self) -> list[Any]:
        """Entry ids of the rows, top to bottom."""
        return list(self._ids)

    def relayout(self) -> None:
        """Lay the rows out again (active branch first at every fork, for the current leaf)."""
        start = time.perf_counter()
        layout = tree_layout(self.session, self.leaf_id, self.mode, self.search, describe=self.state.tree_cell)
        self._index, self._ids = layout.index, layout.ids
        with self.hold_sync():
            self.rows_data = layout.encode()
            self.anchor_row = layout.anchor_row
            self.leaf_row = layout.leaf_row
            self.selected_row = self._index.get(self.selected_id, -1)
        self.layout_ms = (time.perf_counter() - start) * 1000

    def __repr__(self) -> str:
        return f"<TreeView leaf={self.leaf_id!r} mode={self.mode!r} search={self.search!r} rows={len(self._ids)}>"

    def refresh(self) -> None:
        """Move the leaf marks (the rows stay where they are)."""
        # No jump under the mouse: a leaf the filter hides is marked on its nearest shown
        # ancestor until the next layout (which shows it, as Pi does).
        anchor, leaf_row = anchor_rows(self.session.by_id, self._index, self.leaf_id)
        with self.hold_sync():
            self.anchor_row = anchor
            self.leaf_row = leaf_row

    # ------------------------------------------------------------------ selection
    def on_select(self, callback: Callable[[Any, str | None], None], remove: bool = False) -> None:
        """Call ``callback(entry_id, editor_text_or_None)`` after each selection."""
        self._callbacks.register_callback(callback, remove=remove)

    def select(self, entry_id: Any) -> str | None:
        """Select an entry as Pi's ``/tree`` does; returns the editor text (``None`` if none).

        A user or custom message moves the leaf to its parent (the reset leaf for a root)
        and returns its text; anything else becomes the leaf.
        """
        entry = self.session.entry(entry_id)
        new_leaf, text = selection(entry)
        if new_leaf is not None and new_leaf not in self.session:
            new_leaf = None  # an orphan's missing parent: Pi resets the leaf
        with self.hold_trait_notifications():
            self.selected_id = entry.id
            self.editor_text = text or ""
        self.selected_row = self._index.get(entry.id, -1)
        self.leaf_id = new_leaf
        self._callbacks(entry.id, text)
        return text

    def reveal(self, entry_id: Any) -> Any:
        """Mark an entry as selected and scroll it into view, leaving the leaf where it is; returns its id.

        An entry the filter mode or the search hides is revealed on its nearest shown ancestor.
        """
        entry = self.session.entry(entry_id)
        self.selected_id = entry.id
        row, _ = anchor_rows(self.session.by_id, self._index, entry.id)
        self.selected_row = row
        return entry.id

    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Handle a message from the browser view (a click sends ``{"event": "select", "id": …}``)."""
        if not isinstance(content, dict) or content.get("event") != "select":
            return
        entry_id = content.get("id")
        # Ids travel as JSON; map them back to the session's own id objects.
        row = content.get("row")
        if isinstance(row, int) and 0 <= row < len(self._ids) and json_id(self._ids[row]) == entry_id:
            entry_id = self._ids[row]
        if entry_id in self.session:
            self.select(entry_id)

    @property
    def render_stats(self) -> dict[str, float]:
        """Browser timings reported by the view: ``render_ms`` (view creation to first paint) and
        ``end_to_end_ms`` (widget construction in the kernel to first paint; same machine clock)."""
        end_to_end = self.paint_epoch_ms - self.created_epoch_ms if self.paint_epoch_ms else -1.0
        return {"rows": float(len(self._ids)), "layout_ms": self.layout_ms, "render_ms": self.render_ms,
                "end_to_end_ms": end_to_end}
