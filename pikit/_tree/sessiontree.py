"""A session as a tree: header, entries in file order, the indexes over them, the leaf.

:class:`SessionTree` is the record every floor above works on. It knows entries, ids,
children, labels, the leaf and the links between them, and how the tree grows when lines
are appended. What the model sees (:meth:`pikit.Session.context`), refreshing from the
file, the title and the notebook card belong to :class:`pikit.Session`, built on it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

from .. import jsjson
from .._format.entry import Entry
from .._format.lines import LoadReport, Problem
from .._format.migration import CURRENT_VERSION, migrate, new_id
from .._format.timestamps import iso_now
from .._inert import echo
from ..errors import EntryError, UnknownEntryError
from . import tree as _tree
from .ancestry import Ancestry, build_ancestry, extend_ancestry

__all__ = ["CURRENT", "SessionTree"]

_Tree = TypeVar("_Tree", bound="SessionTree")

# The leaf argument's default: "the session's current leaf" (None means the empty reset leaf).
CURRENT: Any = object()

_SHOWN_MATCHES = 5  # ids an ambiguous prefix error lists


class SessionTree:
    """A Pi session's entries as a tree, held in memory, read-only.

    ``entries`` is the file order (the header excluded). ``by_id`` maps each id to its
    entry (a later duplicate id wins, as in Pi). ``leaf_id`` starts at the last entry and
    can be moved (:meth:`navigate`, or plain assignment); it never changes the file.

    Every method taking an entry id or a leaf reads it as the command line does: an id, a
    unique prefix of one, or an :class:`Entry` (:meth:`entry`). A leaf may also be
    ``CURRENT`` (the default: the current leaf) or ``None`` (the empty leaf).
    """

    def __init__(self, header: Mapping[str, Any], entries: list[Entry], *, path: str | None = None,
                 report: LoadReport | None = None, strict: bool = False) -> None:
        self.header: dict[str, Any] = dict(header)
        self.entries = entries
        self.path = path
        self.report = report if report is not None else LoadReport(path or "<memory>")
        self.by_id: dict[Any, Entry] = {}
        self.labels: dict[Any, str] = {}
        self.label_times: dict[Any, Any] = {}
        self._children: dict[Any, list[str]] | None = None
        self._ancestry: Ancestry | bool | None = False
        self._projections = 0
        self._roots: list[Any] | None = None
        self._missing: set[Any] | None = None  # parent ids no entry has (kept once refreshing starts)
        #: Whether a damaged line is an error rather than a problem reported (as loaded; a
        #: refresh reads the appended lines the same way).
        self.strict = strict
        #: Bumped whenever entries were replaced rather than appended (a reload, a duplicate id):
        #: what was computed from the old entries must be computed again.
        self.generation = 0
        self._build_index(entries)
        # The report must not hold the session (a cycle would keep both alive until a full
        # collection): the deferred check closes over the id index only.
        self.report.deferred = functools.partial(_check_links, self.by_id)
        self.leaf_id: Any = entries[-1].id if entries else None

    # ------------------------------------------------------------------ building
    @classmethod
    def from_entries(cls: type[_Tree], entries: Iterable[Mapping[str, Any] | Entry],
                     header: Mapping[str, Any] | None = None) -> _Tree:
        """A session from entries kept elsewhere (dicts or :class:`Entry`), migrated if old.

        Without a header, a version-3 header is made up (fresh id, current time).
        """
        hdr: dict[str, Any] = dict(header) if header is not None else {
            "type": "session", "version": CURRENT_VERSION, "id": new_id(()), "timestamp": iso_now(), "cwd": "",
        }
        items = [e if isinstance(e, Entry) else Entry(dict(e)) for e in entries]
        objects = [hdr] + [e.data for e in items]
        version = migrate(objects)
        if version is not None:
            for e in items:
                e.replace_data(e.data)
        report = LoadReport("<memory>", migrated_from=version)
        return cls(hdr, items, path=None, report=report)

    def _build_index(self, entries: Iterable[Entry]) -> None:
        by_id = self.by_id
        problems = self.report.found
        for entry in entries:
            entry_id = entry.id
            if entry_id is None or not _hashable(entry_id):
                what = "has no id" if entry_id is None else f"has an id that is not a string ({entry_id!r})"
                problems.append(Problem("bad-id", f"entry {what}; it cannot be reached", line=entry.line))
                continue
            if entry_id in by_id:
                problems.append(Problem("duplicate-id", f"duplicate id {entry_id!r} (the later entry wins)",
                                        line=entry.line, entry_id=str(entry_id)))
            by_id[entry_id] = entry
            if entry.type == "label":
                data = entry.data
                target = data.get("targetId")
                if not _hashable(target):
                    continue
                label: Any = data.get("label")
                if jsjson.js_truthy(label):
                    self.labels[target] = label
                    self.label_times[target] = entry.timestamp
                else:
                    self.labels.pop(target, None)
                    self.label_times.pop(target, None)

    # ------------------------------------------------------------------ growing
    def grow(self, added: list[Entry]) -> bool:
        """Add entries appended to the file, and index them.

        The tree, the ancestry index and the link checks are extended in place when every
        entry is new and no earlier orphan's parent arrives; otherwise they are dropped, to
        be built again when next used, and :attr:`generation` is bumped. Returns whether
        the indexes could be extended. If the leaf was the newest entry, it moves to the new
        newest one.
        """
        by_id = self.by_id
        if self._missing is None:
            self._missing = {e.parent_id for e in self.entries
                             if e.parent_id and _hashable(e.parent_id) and e.parent_id not in by_id}
        was_live = not self.entries or self.leaf_id == self.entries[-1].id
        incremental = self._only_new_ids(added)
        checked = self.report.deferred is None
        self.entries.extend(added)
        self._build_index(added)
        fresh = [e for e in added if _hashable(e.id) and e.id is not None and by_id.get(e.id) is e]
        self._note_missing_parents(fresh, report_orphans=checked and incremental)
        if incremental:
            incremental = self._extend_indexes(fresh)
        if not incremental:
            self._drop_indexes(checked)
        if was_live and added:
            self.leaf_id = self.entries[-1].id
        return incremental

    def _only_new_ids(self, added: list[Entry]) -> bool:
        """Whether no entry replaces another or is the late parent of earlier orphans."""
        assert self._missing is not None
        clean = True
        seen: set[Any] = set()
        for entry in added:
            entry_id = entry.id
            if not _hashable(entry_id):
                continue
            if entry_id in self.by_id or entry_id in self._missing or entry_id in seen:
                clean = False
                self._missing.discard(entry_id)
            seen.add(entry_id)
        return clean

    def _note_missing_parents(self, fresh: list[Entry], *, report_orphans: bool) -> None:
        assert self._missing is not None
        for entry in fresh:
            parent = entry.parent_id
            if parent and _hashable(parent) and parent != entry.id and parent not in self.by_id:
                self._missing.add(parent)
                if report_orphans:
                    self.report.found.append(Problem("orphan", f"entry {entry.id!r} names a missing parent {parent!r}",
                                                     line=entry.line, entry_id=str(entry.id)))

    def _extend_indexes(self, fresh: list[Entry]) -> bool:
        if self._children is not None:
            assert self._roots is not None
            for entry in fresh:
                if not _tree.add_child(self._roots, self._children, self.by_id, entry):
                    self._children = self._roots = None
                    break
        if isinstance(self._ancestry, Ancestry):
            return extend_ancestry(self._ancestry, self.by_id, [e.id for e in fresh])
        return True

    def _drop_indexes(self, checked: bool) -> None:
        self._children = self._roots = None
        self._ancestry = False
        self.generation += 1
        if checked:  # the links are checked again, all of them, when the problems are next read
            found = self.report.found
            found[:] = [p for p in found if p.kind not in ("orphan", "cycle")]
            self.report.deferred = functools.partial(_check_links, self.by_id)

    def adopt(self, other: SessionTree) -> None:
        """Take over ``other``, a fresh read of the same file (it was rewritten, not appended to).

        The leaf stays where it was when it is still there and was not the newest entry;
        otherwise it is ``other``'s. :attr:`generation` is bumped.
        """
        leaf, live = self.leaf_id, not self.entries or self.leaf_id == self.entries[-1].id
        self.header, self.entries, self.report = other.header, other.entries, other.report
        self.by_id, self.labels, self.label_times = other.by_id, other.labels, other.label_times
        self._children, self._roots, self._ancestry = other._children, other._roots, other._ancestry
        self._missing = None
        self.generation += 1
        self.leaf_id = leaf if not live and leaf in self.by_id else other.leaf_id

    # ------------------------------------------------------------------ look-ups
    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __contains__(self, entry_id: object) -> bool:
        """Whether the session holds an entry with exactly this id (an :class:`Entry`: its id)."""
        if isinstance(entry_id, Entry):
            entry_id = entry_id.id
        return _hashable(entry_id) and entry_id in self.by_id

    def __getitem__(self, entry_id: Any) -> Entry:
        return self.entry(entry_id)

    def entry(self, entry_id: Any) -> Entry:
        """The entry ``entry_id`` names, as the command line reads an id.

        ``entry_id`` is an id, a unique prefix of one (an exact id wins over longer ids it
        starts), or an :class:`Entry` (standing for its id). Every method and function that
        takes an entry id or a leaf resolves it here. An unknown id raises
        :class:`UnknownEntryError`, an ambiguous prefix :class:`EntryError`; both name it.
        """
        if isinstance(entry_id, Entry):
            entry_id = entry_id.id
        if _hashable(entry_id):
            found = self.by_id.get(entry_id)
            if found is not None:
                return found
        where = self.path or "the session"
        if not isinstance(entry_id, str) or not entry_id:
            raise UnknownEntryError(str(entry_id), where)
        matches = [k for k in self.by_id if isinstance(k, str) and k.startswith(entry_id)]
        if len(matches) == 1:
            return self.by_id[matches[0]]
        if matches:
            shown = ", ".join(sorted(matches)[:_SHOWN_MATCHES]) + (", ..." if len(matches) > _SHOWN_MATCHES else "")
            raise EntryError(entry_id, f"entry id prefix {echo(entry_id)} is ambiguous: {len(matches)} entries start "
                                       f"with it ({shown}); give more characters")
        raise UnknownEntryError(entry_id, where)

    def resolve_leaf(self, leaf: Any = CURRENT) -> Any:
        """The entry id ``leaf`` names: ``CURRENT`` is the current leaf, ``None`` the empty leaf
        (before the first entry), anything else as :meth:`entry` reads it."""
        leaf_id = self.leaf_id if leaf is CURRENT else leaf
        return None if leaf_id is None else self.entry(leaf_id).id

    @property
    def id(self) -> str:
        """The session id from the header."""
        return str(self.header.get("id"))

    @property
    def version(self) -> int:
        """The format version after in-memory migration (always 3)."""
        return CURRENT_VERSION

    @property
    def name(self) -> str | None:
        """The display name from the latest ``session_info`` entry (a blank name clears it)."""
        for entry in reversed(self.entries):
            if entry.type == "session_info":
                name = entry.data.get("name")
                if isinstance(name, str):
                    return name.strip(jsjson.JS_WHITESPACE) or None
                return None
        return None

    @property
    def leaf(self) -> Entry | None:
        """The current leaf entry (``None`` for the reset leaf or an empty session)."""
        return self.by_id.get(self.leaf_id) if _hashable(self.leaf_id) else None

    # ------------------------------------------------------------------ tree
    def branch(self, leaf: Any = CURRENT) -> list[Entry]:
        """The entries from the root down to ``leaf`` (default: the current leaf)."""
        leaf_id = self.resolve_leaf(leaf)
        return [] if leaf_id is None else _tree.path_to(self.by_id, self.by_id[leaf_id])

    def branch_ids(self, leaf: Any = CURRENT) -> list[Any]:
        """Ids of :meth:`branch`."""
        return [e.id for e in self.branch(leaf)]

    def children(self, entry_id: Any) -> list[Any]:
        """Child ids of an entry in Pi's display order (oldest first)."""
        return list(self._child_map().get(self.entry(entry_id).id, ()))

    @property
    def roots(self) -> list[Any]:
        """Root ids: entries with no parent, their own parent, or a missing parent (orphans)."""
        self._child_map()
        assert self._roots is not None
        return list(self._roots)

    @property
    def ancestry(self) -> Ancestry | None:
        """Inherited facts per entry (built on first use); ``None`` when parent cycles exist."""
        if self._ancestry is False:
            self._ancestry = build_ancestry(self.by_id)
        return self._ancestry  # type: ignore[return-value]

    def _child_map(self) -> dict[Any, list[str]]:
        if self._children is None:
            self._roots, self._children = _tree.build_children(self.entries, self.by_id)
        return self._children

    def tree(self) -> dict[str, Any]:
        """``{"roots", "children", "labels"}``: the flat tree of ``pikit tree --json``."""
        children = self._child_map()
        assert self._roots is not None
        return _tree.tree_json(self._roots, children, self.labels)

    def common_ancestor(self, a: Any, b: Any) -> Any:
        """The deepest entry id on both paths (``None`` when they share nothing)."""
        on_a = {e.id for e in self.branch(a)} if a is not None else set()
        for entry in reversed(self.branch(b)):
            if entry.id in on_a:
                return entry.id
        return None

    def navigate(self, target_id: Any) -> str | None:
        """Move the leaf as Pi's ``/tree`` does when an entry is selected.

        Selecting a user message or a custom message moves the leaf to its parent (the
        reset leaf for a root) and returns its text, to edit and send again; selecting
        anything else makes it the leaf and returns ``None``.
        """
        target = self.entry(target_id)
        if target.id == self.leaf_id:
            return None  # already there: nothing moves (as in Pi)
        new_leaf, text = _tree.selection(target)
        self.leaf_id = new_leaf
        return text

    def flatten(self, leaf: Any = CURRENT, mode: str = "default", search: str = "") -> list[_tree.TreeRow]:
        """The rows of a ``/tree``-like view: active branch first, chains kept flat, filtered."""
        leaf_id = self.resolve_leaf(leaf)
        children = self._child_map()
        assert self._roots is not None
        return _tree.flatten(self.by_id, self.labels, self._roots, children, leaf_id, mode, search)

    def tree_hidden(self, leaf: Any = CURRENT, mode: str = "default", search: str = "") -> dict[str, int]:
        """How many entries the rows of :meth:`tree_rows` leave out, by reason (``{"tool-calls-only": 214,
        "usage": 1}``; ``tree_rows(...).hidden`` counts the same in its own walk)."""
        return _tree.hidden_counts(self.by_id, self.labels, self.resolve_leaf(leaf), mode, search)

    def tree_rows(self, leaf: Any = CURRENT, mode: str = "default", search: str = "") -> _tree.TreeRows:
        """The rows of :meth:`flatten`, counted at once and made one at a time (``len()`` and
        ``window(start, stop)``): showing a few rows of a large tree does not hold them all."""
        leaf_id = self.resolve_leaf(leaf)
        children = self._child_map()
        assert self._roots is not None
        return _tree.TreeRows(self.by_id, self.labels, self._roots, children, leaf_id, mode, search)


def _hashable(value: object) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def _check_links(by_id: dict[Any, Entry]) -> list[Problem]:
    """Orphans and parent cycles (checked when the report's problems are first read)."""
    problems: list[Problem] = []
    state: dict[Any, int] = {}  # 1 = on the current walk, 2 = known to reach a root
    for start in by_id:
        if start in state:
            continue
        walk: list[Any] = []
        current = start
        while True:
            if state.get(current) == 2:
                break
            if state.get(current) == 1:
                problems.append(Problem("cycle", f"entries {walk[walk.index(current):]!r} form a parent cycle",
                                        entry_id=str(current)))
                break
            state[current] = 1
            walk.append(current)
            parent = by_id[current].parent_id
            if parent is None or parent == current:
                break
            if not _hashable(parent) or parent not in by_id:
                entry = by_id[current]
                problems.append(Problem("orphan", f"entry {current!r} names a missing parent {parent!r}",
                                        line=entry.line, entry_id=str(current)))
                break
            current = parent
        for node in walk:
            state[node] = 2
    return problems
