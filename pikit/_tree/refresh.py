"""Growing a loaded session with what was appended to its file (:meth:`Session.refresh`).

Only the bytes after the session's :class:`~pikit.FileMark` are read, in bounded
chunks, through the same line handling as loading (the line limit, damage reported with the
line's number in the file, index-only decoding for large files). An unfinished last line is
left in the file until its newline arrives. A file that is no longer the one that was read
(shrunk, replaced, changed before the mark) is loaded again whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._format import reading
from .._format.entry import Entry
from .._format.lines import EntryBuilder, Problem
from .._format.loading import read_session
from .._format.reading import too_long
from .._format.tail import FileMark, read_appended
from ..errors import PikitError
from .sessiontree import SessionTree

__all__ = ["BranchSwitch", "Refresh", "refresh_tree"]


@dataclass(frozen=True)
class BranchSwitch:
    """The new entries do not continue the leaf the session had: Pi moved to another branch.

    ``previous_leaf`` is the leaf before the refresh (no longer on the leaf's branch);
    ``continues_from`` the entry the new entries hang from (``None``: they start a new root
    or name a parent that is not in the file).
    """

    previous_leaf: Any
    continues_from: Any

    def __str__(self) -> str:
        where = "start a new root" if self.continues_from is None else f"go on from {self.continues_from}"
        return f"Pi moved to another branch: the new entries {where}, not after the leaf {self.previous_leaf}"


@dataclass(frozen=True)
class Refresh:
    """What one :meth:`Session.refresh` found.

    ``added`` are the new entries in file order; ``problems`` what their lines had wrong
    (damaged lines with their line numbers, duplicate ids, orphans); ``pending`` the bytes
    of an unfinished last line left for the next refresh. ``reloaded`` says why the file was
    loaded again whole (``None`` for plain appends); ``leaf_moved`` whether the session's
    leaf followed the newest entry; ``branch_switch`` is set when that move left the leaf's
    branch (Pi went on from another entry than the leaf, as after ``/tree``).
    """

    added: tuple[Entry, ...] = ()
    problems: tuple[Problem, ...] = ()
    pending: int = 0
    reloaded: str | None = None
    leaf_moved: bool = False
    branch_switch: BranchSwitch | None = None

    @property
    def changed(self) -> bool:
        """Whether the session changed (entries added, problems found, or a reload)."""
        return bool(self.added or self.problems or self.reloaded)

    def __repr__(self) -> str:
        if self.reloaded:
            return f"<Refresh reloaded: {self.reloaded}>"
        waiting = f", {self.pending:,} bytes waiting" if self.pending else ""
        return f"<Refresh +{len(self.added)} entries, {len(self.problems)} problems{waiting}>"


def refresh_tree(session: SessionTree) -> Refresh:
    """Add what was appended to ``session``'s file (see :meth:`pikit.Session.refresh`)."""
    path = session.path
    if path is None:
        raise PikitError("this session was not loaded from a file, so there is nothing to refresh; "
                         "use pikit.load(path) or pikit.follow(path)")
    report = session.report
    if report.redacted:
        raise PikitError("a redacted copy is not refreshed (what its source gained would not be redacted); "
                         "refresh the source, then redact it again")
    mark = report.mark if report.mark is not None else FileMark()
    if report.keeps_parsed is None:
        report.keeps_parsed = report.bytes < reading.KEEP_ALL_BELOW
    builder = EntryBuilder(path, session.strict, keep_all=report.keeps_parsed and mark.offset < reading.KEEP_ALL_BELOW)
    builder.header = session.header
    reported = {p.line for p in report.found if p.kind == "damaged-line"}
    unfinished = report.unfinished
    while True:
        got = read_appended(path, mark, max_bytes=reading.CHUNK_SIZE, max_line=reading.MAX_LINE_BYTES)
        if got.rewritten is not None:
            return reload_tree(session, got.rewritten)
        lines = got.lines
        if unfinished is not None and lines:
            if lines[0] != unfinished:
                return reload_tree(session, "the last line was still being written when the file was loaded")
            lines = [b"", *lines[1:]]  # read already, as the unfinished last line
            unfinished = None
        if lines and report.migrated_from is not None:
            return reload_tree(session, "lines were appended to an old-format file; it is read whole to migrate it")
        number = got.first_line
        for line in lines:
            size = got.too_long.get(number)
            if size is not None:
                if number not in reported:
                    builder.damaged(number, too_long(size))
            else:
                builder.feed(number, line)
            number += 1
        mark = got.mark
        if not got.more:
            break
    return _apply(session, builder, mark, got.pending, unfinished)


def _apply(session: SessionTree, builder: EntryBuilder, mark: FileMark, pending: int,
           unfinished: bytes | None) -> Refresh:
    report = session.report
    before = session.leaf_id
    known = {id(p) for p in report.found}
    report.found.extend(builder.report.found)
    if report.keeps_parsed and not builder.keep_all:
        # The file grew past the size where loading keeps only the index: so does following.
        report.keeps_parsed = False
        for entry in session.entries:
            entry.release()
    report.mark, report.unfinished = mark, unfinished
    if unfinished is None:
        report.lines, report.bytes, report.mtime_ns = mark.line, mark.offset + pending, mark.mtime_ns
    added = builder.entries
    if added:
        session.grow(added)
    problems = tuple(p for p in report.found if id(p) not in known)
    moved = session.leaf_id != before
    switch = _branch_switch(session, before, added) if moved and before is not None else None
    return Refresh(tuple(added), problems, pending, None, moved, switch)


def _branch_switch(session: SessionTree, previous: Any, added: list[Entry]) -> BranchSwitch | None:
    """How the new leaf left ``previous``'s branch (``None`` when it continues it).

    Walks up from the new leaf: a plain append meets ``previous`` after the new entries;
    only a switch walks on to the root.
    """
    new = {id(entry) for entry in added}
    by_id = session.by_id
    current = session.leaf
    continues_from: Any = None
    found = False  # the first entry on the way up that was there before this refresh
    seen: set[Any] = set()
    while current is not None:
        if current.id == previous:
            return None
        if not found and id(current) not in new:
            continues_from, found = current.id, True
        seen.add(current.id)
        parent = current.parent_id
        current = by_id.get(parent) if isinstance(parent, str | int | float) and parent not in seen else None
    return BranchSwitch(previous, continues_from)


def reload_tree(session: SessionTree, reason: str) -> Refresh:
    """Read the session's file again whole, in place, and say why (no progress bar: this runs in the background)."""
    assert session.path is not None
    before = session.leaf_id
    parts = read_session(session.path, strict=session.strict, wait_for_last_line=True, progress=False)
    fresh = SessionTree(parts.header, parts.entries, path=session.path, report=parts.report, strict=session.strict)
    session.adopt(fresh)
    mark = fresh.report.mark
    pending = fresh.report.bytes - mark.offset if mark is not None else 0
    return Refresh((), tuple(fresh.report.found), max(pending, 0), reason, session.leaf_id != before)

