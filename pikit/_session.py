"""The session façade: a :class:`SessionTree` that reads its file, projects, and draws itself.

:func:`load` and :func:`loads` read a session through the format floor (which returns the
header, the entries and the report) and build a :class:`Session` from them. A session adds
to its tree what the floors below provide: :meth:`Session.context` (what the model sees at a
leaf), :meth:`Session.refresh` (what was appended to the file), its title and its card.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._format.loading import Parts, read_session, read_session_text
from ._progress import Progress
from ._tree.sessiontree import CURRENT, SessionTree

if TYPE_CHECKING:
    from ._context.projected import Projection
    from ._tree.refresh import Refresh

__all__ = ["Session", "load", "loads"]


class Session(SessionTree):
    """A Pi session held in memory, read-only: the tree, and what the model sees in it.

    Everything about entries, ids, the leaf and the tree comes from :class:`SessionTree`.
    """

    _projections = 0  # projections made so far (from the second on, the ancestry index pays off)

    @classmethod
    def from_parts(cls, parts: Parts, *, path: str | None = None, strict: bool = False) -> Session:
        """A session from what the reader returned (:func:`load` and :func:`loads` use this)."""
        return cls(parts.header, parts.entries, path=path, report=parts.report, strict=strict)

    def refresh(self) -> Refresh:
        """Read what was appended to the file since it was loaded (or last refreshed).

        Only the appended bytes are read; their entries join the session and the tree, the
        ancestry index and the link checks are extended in place, so the cost follows the
        append, not the session's size. Projections already made stay valid (appends never
        change an existing branch). A last line still being written is left for the next
        refresh: never a torn entry, never a damage report for it. If the leaf was the
        newest entry, it moves to the new newest one.

        A file that shrank, was replaced, or changed before the last read position (Pi
        migrating or repairing it, a rotation) is loaded again whole; the result says so
        (:attr:`Refresh.reloaded`). See :func:`pikit.follow` to refresh as the file changes.
        """
        from ._tree.refresh import refresh_tree

        return refresh_tree(self)

    @property
    def title(self) -> str:
        """The name, or for an unnamed session its file name and first user request (one line)."""
        from ._context.describe import session_title

        return session_title(self)

    def context(self, leaf: Any = CURRENT) -> Projection:
        """What the model sees at ``leaf``: messages with their sources and token figures."""
        from ._context.projection import project

        leaf_id = self.resolve_leaf(leaf)
        self._projections += 1
        return project(self, leaf_id, indexed=self._projections > 1)

    def __repr__(self) -> str:
        """``<Session 'title': 157 entries, leaf '0ce8fc25', path>``."""
        from ._card import rtext
        from ._formatting import plural

        where = self.path or "<memory>"
        return (f"<Session {rtext(self.title)}: {plural(len(self.entries), 'entry')}, "
                f"leaf {self.leaf_id!r}, {where}>")

    def _repr_html_(self) -> str:
        """A card: title, file, counts, leaf, labels, compactions and problems found while loading."""
        from ._card import DIM, PREVIEW, card, code, cut, esc, note
        from ._context.describe import entry_preview
        from ._formatting import fmt_int, plural

        counts: dict[str, int] = {}
        for entry in self.entries:
            counts[entry.type] = counts.get(entry.type, 0) + 1
        problems = self.report.problems
        leaf = self.leaf
        rows = [
            ("file", code(self.path) if self.path else '<span style="' + DIM + '">in memory</span>'),
            ("id", code(self.id)),
            ("entries", f"{fmt_int(len(self.entries))} ({fmt_int(counts.get('message', 0))} messages, "
                        f"{plural(counts.get('compaction', 0), 'compaction')}, "
                        f"{plural(counts.get('branch_summary', 0), 'branch summary')})"),
            ("roots", fmt_int(len(self.roots))),
            ("leaf", f"{code(self.leaf_id)} {esc(cut(entry_preview(leaf), PREVIEW))}" if leaf is not None
             else "none (reset)"),
            ("labels", esc(", ".join(cut(v, 30) for v in list(self.labels.values())[:6])) or "none"),
            ("problems", esc(self.report.summary()) if problems else "none"),
        ]
        return card("Session", esc(self.title), rows,
                    note("session.context() is what the model sees at the leaf; "
                         "pikit.widgets.SessionExplorer(session) browses the tree."))


def load(path: str | os.PathLike[str], *, strict: bool = False,
         progress: Progress = None, wait_for_last_line: bool = False) -> Session:
    """Load a session file (read-only).

    ``progress``: by default a bar in a notebook for a file of 32 MB or more, nothing
    elsewhere; ``True`` such a bar anywhere; ``False`` none; a callback
    ``(done_bytes, total_bytes)`` is called after each chunk.
    A last line without its newline is read as a line, unless ``wait_for_last_line``: then
    it is left for :meth:`Session.refresh` (a writer is still at it; used when following).
    Raises :class:`~pikit.SessionFileError` for a missing or unreadable file or one that is
    not a regular file (a FIFO, a device), and :class:`~pikit.NotASessionError` when the file
    does not start with a session header. A damaged line costs that line only and is
    reported in :attr:`Session.report` (raised with ``strict``); so is a line longer than
    128 MiB.
    """
    source = os.fspath(path)
    parts = read_session(source, strict=strict, progress=progress, wait_for_last_line=wait_for_last_line)
    return Session.from_parts(parts, path=source, strict=strict)


def loads(text: str | bytes | Iterable[str | bytes], *, source: str = "<string>", strict: bool = False) -> Session:
    """Load a session from its text, its bytes or an iterable of lines."""
    return Session.from_parts(read_session_text(text, source=source, strict=strict))
