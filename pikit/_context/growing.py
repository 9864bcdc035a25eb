"""A branch projected as it grows, entry by entry.

A replay (``pikit.compaction._simulate``) appends the entries of a branch one at a time and
needs, after each of them, Pi's estimate of the context, its system messages and, now and then,
the whole :class:`~pikit.Projection`. :class:`GrowingProjection` keeps the
context entries (``context_entries``), their projected messages
and the figures over them up to date as entries are appended, so an append costs what that entry
changes (an entry: itself; a context edit: its target; a compaction: the entries it keeps) and
:meth:`GrowingProjection.projection` costs the size of the context, never the length of the
branch. What it holds after each append is what ``project_path``
gives for the path so far, entry for entry and message for message.
"""

from __future__ import annotations

from typing import Any

from .._format.entry import Entry, is_key
from .projected import ProjectedEntry, Projection, replay_system
from .projection import _model, apply_edit, entry_messages, latest_edits
from .tokens import estimate_tokens

__all__ = ["GrowingProjection"]


class GrowingProjection:
    """The projection of a path that entries are appended to (see the module docstring).

    Attributes:
        path: the entries appended so far, root first.
        entries: the context entries, projected (``project_path(path).entries``).
        compaction: the head compaction (the last one on the path), or ``None``.
        other_tokens: Pi's estimate of the context's messages other than system messages.
    """

    def __init__(self) -> None:
        self.path: list[Entry] = []
        self.entries: list[ProjectedEntry] = []
        self.compaction: Entry | None = None
        self.other_tokens = 0
        self._other: list[int] = []  # per context entry: the estimate of its non-system messages
        self._system: list[dict[str, Any]] | None = []  # the context's system messages (None: collect again)
        self._system_tokens: int | None = 0  # Pi's estimate of their replay (None: estimate again)
        self._edits: dict[Any, Entry] = {}  # the latest context edit per target among the context entries
        self._at: dict[Any, int] = {}  # index in ``entries`` of the first context entry with each id
        self._again: dict[Any, list[int]] = {}  # the indices of the later ones with an id seen before
        self._first: dict[Any, int] = {}  # path position of the first entry with each id
        self._unique = True  # no id appears twice on the path (a session's branch never repeats one)
        self._invalidation = -1  # path position of the last context edit or compaction
        self._model: dict[str, Any] | None = None  # the model the path set last (copied for each projection)
        self._thinking: Any = "off"

    def append(self, entry: Entry, plain: ProjectedEntry | None = None) -> ProjectedEntry | None:
        """Append ``entry`` to the path; returns its projected form (``None`` for a compaction,
        which starts the context again).

        ``plain``: the entry's own messages unedited, as ``ProjectedEntry(entry, entry_messages(entry),
        plain=True)``, when the caller has it (two projections of one branch can share it): it is
        the projected form when no context edit applies to the entry.
        """
        position = len(self.path)
        self.path.append(entry)
        kind = entry.type
        if kind == "thinking_level_change":
            self._thinking = entry.data.get("thinkingLevel")
        elif kind == "model_change":
            self._model = _model(entry.data, "provider", "modelId")
        elif entry.model is not None:
            self._model = entry.model
        if self._first.setdefault(entry.id, position) != position:
            self._unique = False
        if kind == "compaction":
            self._invalidation = position
            self._restart(entry, position)
            return None
        if kind == "context_edit":
            self._invalidation = position
            self._edit(entry)
        edit = self._edits.get(entry.id) if self._edits else None
        if edit is None:
            projected = plain if plain is not None else ProjectedEntry(entry, entry_messages(entry), None, True)
        else:
            projected = ProjectedEntry(entry, apply_edit(entry_messages(entry), edit), edit)
        self._add(projected)
        return projected

    def _add(self, projected: ProjectedEntry) -> None:
        """Add ``projected`` at the end of the context entries and count its messages."""
        key = projected.entry.id
        index = len(self.entries)
        if self._at.setdefault(key, index) != index:
            self._again.setdefault(key, []).append(index)
        self.entries.append(projected)
        other = 0
        system = False
        for message, estimate in zip(projected.messages, projected.estimates, strict=True):
            if message.get("role") == "system":
                system = True
                if self._system is not None:
                    self._system.append(message)
            else:
                other += estimate
        if system:
            self._system_tokens = None
        self._other.append(other)
        self.other_tokens += other

    def _indices(self, key: Any) -> list[int]:
        """The indices in ``entries`` of the context entries with id ``key``, in order."""
        first = self._at.get(key)
        return [] if first is None else [first, *self._again.get(key, ())]

    def _edit(self, edit: Entry) -> None:
        """A context edit appended: it is now the latest for its target, whose messages change."""
        target = edit.data.get("targetId")
        if not (isinstance(target, str | int | float | bool) or target is None):
            return  # latest_edits ignores it: it edits nothing
        self._edits[target] = edit
        for index in self._indices(target):
            old = self.entries[index]
            if old.entry.type == "compaction" and index > 0:
                continue  # a compaction after the head projects nothing, edited or not
            new = ProjectedEntry(old.entry, apply_edit(entry_messages(old.entry), edit), edit)
            self.entries[index] = new
            other = sum(e for m, e in zip(new.messages, new.estimates, strict=True) if m.get("role") != "system")
            self.other_tokens += other - self._other[index]
            self._other[index] = other
            if any(m.get("role") == "system" for m in (*old.messages, *new.messages)):
                self._system = None
                self._system_tokens = None

    def _restart(self, compaction: Entry, position: int) -> None:
        """A compaction appended: the context is it and the entries it keeps (as ``context_entries``)."""
        first_kept = compaction.data.get("firstKeptEntryId")
        start = self._first.get(first_kept) if is_key(first_kept) else None
        context = [compaction]
        if start is not None:
            context.extend(e for e in self.path[start:position] if not (e.type == "message" and e.role == "system"))
        edits = latest_edits(context)
        old = {pe.entry.id: pe for pe in self.entries if pe.entry.type != "compaction"} if self._unique else {}
        entries = []
        for index, entry in enumerate(context):
            if entry.type == "compaction" and index > 0:
                entries.append(ProjectedEntry(entry, []))
                continue
            edit = edits.get(entry.id)
            previous = old.get(entry.id)
            if previous is not None and previous.entry is entry and previous.edit is edit:
                entries.append(previous)  # projected as before: the same messages under the same edit
            else:
                entries.append(ProjectedEntry(entry, apply_edit(entry_messages(entry), edit), edit,
                                              plain=edit is None))
        self.compaction = compaction
        self.entries = []
        self._other = []
        self.other_tokens = 0
        self._system = []
        self._system_tokens = 0
        self._edits = edits
        self._at = {}
        self._again = {}
        for projected in entries:
            self._add(projected)

    @property
    def system_messages(self) -> list[dict[str, Any]]:
        """The context's system messages, in order (do not change the list)."""
        if self._system is None:
            self._system = [m for pe in self.entries for m in pe.messages if m.get("role") == "system"]
        return self._system

    @property
    def system_tokens(self) -> int:
        """Pi's estimate of the replayed system message (0 without one)."""
        if self._system_tokens is None:
            system = replay_system(self.system_messages)
            self._system_tokens = estimate_tokens(system) if system is not None else 0
        return self._system_tokens

    def projection(self) -> Projection:
        """``project_path(path)``, built from the context entries alone."""
        path = self.path
        return Projection(path[-1].id if path else None, list(self.entries), self.compaction,
                          dict(self._model) if self._model is not None else None, self._thinking, path=path,
                          usage_positions=self._positions if self._unique else None)

    def _positions(self, source: Any) -> tuple[int, int]:
        """The path positions of entry ``source`` and of the last edit or compaction (-1: none)."""
        return self._first.get(source, -1), self._invalidation
