"""The live cut-point preview: where a compaction of the leaf would cut now, what it would summarize and keep."""

from __future__ import annotations

import time
from typing import Any

import ipywidgets as widgets
import traitlets

from .._format.entry import Entry
from .._session import Session
from .._tree.sessiontree import CURRENT
from ..compaction._preparation import Preparation, prepare_compaction
from ._base import LeafWidget
from ._html import error_box
from ._views.compaction import CutPreview, cut_preview, render_preview

__all__ = ["CompactionPreview"]


class CompactionPreview(LeafWidget, widgets.HTML):
    """Where a compaction of ``leaf_id`` with these settings would cut, redrawn as they change.

    ``keep_recent_tokens``, ``reserve_tokens`` and ``context_window`` are traitlets (the
    threshold is ``context_window - reserve_tokens``; a window of ``None`` is unknown, and then
    there is no threshold), as is ``problem`` (why the settings could
    not be read, shown with the preview; ``""``: nothing to say). After each redraw,
    ``preparation`` is Pi's preparation (``None``: nothing to compact), ``view`` the
    ``CutPreview`` drawn and ``ms`` the time it took.
    """

    keep_recent_tokens = traitlets.Int(20_000)
    reserve_tokens = traitlets.Int(16_384)
    context_window = traitlets.Int(None, allow_none=True)
    problem = traitlets.Unicode("")

    def __init__(self, session: Session, leaf_id: Any = CURRENT, *, keep_recent_tokens: int = 20_000,
                 reserve_tokens: int = 16_384, context_window: int | None = None, problem: str = "",
                 **kwargs: Any) -> None:
        leaf = self._bind(session, leaf_id)
        self.preparation: Preparation | None = None
        self.view: CutPreview | None = None
        self.ms = 0.0
        self._branch_cache: tuple[Any, list[Entry]] | None = None
        super().__init__(**kwargs)
        self.add_class("pikit-compaction-preview")
        with self.hold_trait_notifications():
            self.keep_recent_tokens, self.reserve_tokens = keep_recent_tokens, reserve_tokens
            self.context_window, self.problem = context_window, problem
        self._follow_leaf(leaf)
        self.observe(lambda _c: self.refresh(), names=["keep_recent_tokens", "reserve_tokens", "context_window",
                                                       "problem"])
        self.refresh()

    def __repr__(self) -> str:
        return (f"<CompactionPreview leaf={self.leaf_id!r} keep={self.keep_recent_tokens} "
                f"threshold={self._threshold()}>")

    def _threshold(self) -> int | None:
        return None if self.context_window is None else self.context_window - self.reserve_tokens

    def leaf_changed(self) -> None:
        self._branch_cache = None
        self.refresh()

    def _branch(self) -> list[Entry]:
        if self._branch_cache is None or self._branch_cache[0] != self.leaf_id:
            self._branch_cache = (self.leaf_id, self.session.branch(self.leaf_id) if self.leaf_id is not None else [])
        return self._branch_cache[1]

    def _describe(self, entry_id: Any) -> tuple[str, str]:
        entry = self.session.by_id.get(entry_id)
        if entry is None:
            return "?", ""
        return entry.role or entry.type, self.state.preview(entry)[1]

    def refresh(self) -> None:
        """Recompute where the cut falls for the current settings and redraw."""
        start = time.perf_counter()
        try:
            projection = self.projection
            self.preparation = prepare_compaction(self._branch(), max(0, self.keep_recent_tokens), projection) \
                if self.leaf_id is not None else None
            self.view = cut_preview(self.preparation, projection.tokens, self._threshold(),
                                    problem=self.problem or None, describe=self._describe)
            self.value = render_preview(self.view)
        except Exception as exc:
            self.preparation = None
            self.view = None
            self.value = error_box("Cannot prepare a compaction here", exc)
        self.ms = (time.perf_counter() - start) * 1000

    def show_error(self, title: str, exc: BaseException) -> None:
        """Show ``exc`` under ``title`` in place of the preview (until the next redraw)."""
        self.value = error_box(title, exc)
