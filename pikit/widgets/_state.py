"""Per-session caches shared by every widget looking at the same :class:`~pikit.Session`.

A leaf move must stay well under 100 ms of kernel time on a 10,000-entry session, so the
widgets never recompute what does not change between leaves:

* projections are kept in a small LRU keyed by leaf id (the session never changes on disk
  from the widgets' point of view: writes go to new files or are appended and reloaded);
* Pi's token estimate and the real (tiktoken) count of a message are cached per
  (source entry, position, edit) — the same message on two leaves is estimated once;
* the one-line tree preview of an entry is cached per entry id.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .._context.describe import entry_kind, entry_preview

if TYPE_CHECKING:
    from .._context.counting import Counter
    from .._context.projection import Projection
    from .._format.entry import Entry
    from .._session import Session

__all__ = ["SessionState", "state_for"]

_PREVIEW_CHARS = 120
_STATES: weakref.WeakKeyDictionary[Session, SessionState] = weakref.WeakKeyDictionary()


def _one_line(text: str, limit: int = _PREVIEW_CHARS) -> str:
    text = " ".join(text[: limit * 3].split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class SessionState:
    """Caches for one session (get it with :func:`state_for`)."""

    def __init__(self, session: Session, projections: int = 6) -> None:
        self.session = session
        self._projections: OrderedDict[Any, Projection] = OrderedDict()
        self._max_projections = projections
        self._counts: dict[tuple[str, Any, int, Any], int] = {}
        self._previews: dict[Any, tuple[str, str]] = {}
        self._cells: dict[Any, tuple[str, str, str]] = {}

    def clear(self) -> None:
        """Forget everything (the session's entries were replaced: a followed file was rewritten)."""
        self._projections.clear()
        self._counts.clear()
        self._previews.clear()
        self._cells.clear()

    # ------------------------------------------------------------------ projections
    def projection(self, leaf_id: Any) -> Projection:
        """The projection at ``leaf_id`` (``None``: the empty reset leaf), kept for a few moves."""
        leaf_id = self.session.resolve_leaf(leaf_id)
        key = ("leaf", leaf_id)
        cached = self._projections.get(key)
        if cached is not None:
            self._projections.move_to_end(key)
            return cached
        projection = self.session.context(leaf_id)
        self._projections[key] = projection
        if len(self._projections) > self._max_projections:
            self._projections.popitem(last=False)
        return projection

    # ------------------------------------------------------------------ real counts
    def count(self, counter: Counter, source: Any, position: int, edit: Any, message: Mapping[str, Any]) -> int:
        """The real token count of one message (cached per counter and message identity)."""
        key = (counter.name, source, position, edit)
        value = self._counts.get(key)
        if value is None:
            value = self._counts[key] = counter.count_message(message)
        return value

    def is_counted(self, counter: Counter, source: Any, position: int, edit: Any) -> bool:
        """Whether :meth:`count` has this message's count cached."""
        return (counter.name, source, position, edit) in self._counts

    # ------------------------------------------------------------------ previews
    def tree_cell(self, entry: Entry, kind_of: Callable[[Entry], tuple[str, str]]) -> tuple[str, str, str]:
        """``(css kind, badge, one-line preview)`` of an entry's tree row (cached per entry id)."""
        cached = self._cells.get(entry.id)
        if cached is None:
            parsed = entry.is_parsed
            try:
                kind, badge = kind_of(entry)
                cached = self._cells[entry.id] = (kind, badge, self.preview(entry)[1])
            finally:
                if not parsed:  # parsed for its row alone: the row keeps only its one line
                    entry.release()
        return cached

    def preview(self, entry: Entry) -> tuple[str, str]:
        """``(kind, one-line preview)`` of an entry, at most 120 characters."""
        cached = self._previews.get(entry.id)
        if cached is None:
            try:
                text = entry_preview(entry)
            except Exception as exc:
                text = f"<unreadable entry: {type(exc).__name__}>"
            cached = self._previews[entry.id] = (entry_kind(entry), _one_line(text))
        return cached


def state_for(session: Session) -> SessionState:
    """The shared :class:`SessionState` of ``session`` (created on first use)."""
    state = _STATES.get(session)
    if state is None:
        state = _STATES[session] = SessionState(session)
    return state
