"""The entry tree: paths, children order, the flat JSON form, ``/tree`` rows and selection.

Every walk here is iterative: real trees are thousands of levels deep.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cmp_to_key
from typing import Any

from .. import jsjson
from .._format.content import content_text
from .._format.entry import Entry, is_key

__all__ = [
    "FILTER_MODES", "HIDDEN_REASONS", "TreeRow", "TreeRows", "add_child", "build_children", "describe_hidden",
    "flatten", "hidden_counts", "hidden_reason", "js_sort", "path_to", "searchable_text", "selection", "tree_json",
]

FILTER_MODES = ("default", "no-tools", "user-only", "labeled-only", "all")
_SETTINGS_TYPES = frozenset(
    {"label", "context_edit", "custom", "model_change", "thinking_level_change", "session_info"}
)


def path_to(by_id: Mapping[Any, Entry], leaf: Entry) -> list[Entry]:
    """Root-first path ending at ``leaf``; stops at a missing parent or a parent cycle."""
    path = [leaf]
    seen = {leaf.id}
    current = leaf
    while current.parent_id:
        parent = by_id.get(current.parent_id) if isinstance(current.parent_id, str | int | float) else None
        if parent is None or parent.id in seen:
            break
        seen.add(parent.id)
        path.append(parent)
        current = parent
    path.reverse()
    return path


def js_sort(items: list[Any], compare: Callable[[Any, Any], float]) -> list[Any]:
    """``Array.prototype.sort`` with a comparator, as V8 runs it.

    V8 sorts with TimSort ported from CPython's own, and counts a ``NaN`` comparator
    result as 0, so Python's sort with the same comparator gives the same order even when
    the comparator is inconsistent (an unparseable timestamp).
    """

    def ordered(a: Any, b: Any) -> int:
        result = compare(a, b)
        return 0 if result != result or result == 0 else (1 if result > 0 else -1)

    return sorted(items, key=cmp_to_key(ordered))


def _by_time(by_id: Mapping[Any, Entry]) -> Callable[[Any, Any], float]:
    def compare(x: Any, y: Any) -> float:
        tx, ty = by_id[x].time_ms, by_id[y].time_ms
        if tx is None or ty is None:
            return math.nan
        return tx - ty

    return compare


def build_children(entries: Sequence[Entry], by_id: Mapping[Any, Entry]) -> tuple[list[Any], dict[Any, list[Any]]]:
    """Roots and children (display order) exactly as Pi builds its tree.

    Roots are entries whose parent is null, themselves, or missing. Children are sorted
    oldest first by timestamp, stably.
    """
    roots: list[Any] = []
    children: dict[Any, list[Any]] = {}
    for entry in entries:
        entry_id = entry.id
        if entry_id is None or not isinstance(entry_id, str | int | float) or entry_id not in by_id:
            continue
        parent = entry.parent_id
        if parent is None or parent == entry_id:
            roots.append(entry_id)
        elif isinstance(parent, str | int | float) and parent in by_id:
            children.setdefault(parent, []).append(entry_id)
        else:
            roots.append(entry_id)
    compare = _by_time(by_id)
    for parent, kids in children.items():
        if len(kids) > 1:
            times = [by_id[k].time_ms for k in kids]
            if None in times:
                children[parent] = js_sort(kids, compare)
            else:
                timed = sorted(zip(times, range(len(kids)), kids, strict=True))  # stable: ties keep file order
                children[parent] = [kid for _, _, kid in timed]
    return roots, children


def add_child(roots: list[Any], children: dict[Any, list[Any]], by_id: Mapping[Any, Entry], entry: Entry) -> bool:
    """Place an entry appended after all others as :func:`build_children` would have.

    ``False`` (nothing changed) when the order among its siblings needs Pi's comparator on a
    missing timestamp: the caller then builds the children again.
    """
    entry_id, parent = entry.id, entry.parent_id
    if parent is None or parent == entry_id or not isinstance(parent, str | int | float) or parent not in by_id:
        roots.append(entry_id)
        return True
    time_ms = entry.time_ms
    kids = children.setdefault(parent, [])
    times = [by_id[k].time_ms for k in kids]
    if time_ms is None or None in times:
        if not kids:
            kids.append(entry_id)
            return True
        return False
    # Oldest first, and ties in file order: after every sibling that is not later.
    position = len(kids)
    while position and times[position - 1] > time_ms:  # type: ignore[operator]
        position -= 1
    kids.insert(position, entry_id)
    return True


def tree_json(roots: Sequence[Any], children: Mapping[Any, Sequence[Any]], labels: Mapping[Any, str]) -> dict[str, Any]:
    """The flat tree: roots, the children of every reachable node, and their labels."""
    out_children: dict[Any, list[Any]] = {}
    out_labels: dict[Any, str] = {}
    stack = list(roots)
    visited: set[Any] = set()
    while stack:
        node = stack.pop()
        if node in visited:
            continue
        visited.add(node)
        kids = children.get(node)
        if kids:
            out_children[node] = list(kids)
            stack.extend(kids)
        if node in labels:
            out_labels[node] = labels[node]
    return {"roots": list(roots), "children": out_children, "labels": out_labels}


def selection(target: Entry) -> tuple[Any, str | None]:
    """Where the leaf goes when ``target`` is selected in ``/tree``, and the editor text."""
    if target.type == "message" and target.role == "user":
        message = target.message or {}
        return target.parent_id, content_text(message.get("content"), "")
    if target.type == "custom_message":
        return target.parent_id, content_text(target.data.get("content"), "")
    return target.id, None


@dataclass(frozen=True)
class TreeRow:
    """One visible row of the tree view."""

    id: Any
    indent: int
    on_active_path: bool
    is_leaf: bool
    label: str | None
    entry: Entry
    children: int

    @property
    def branch_point(self) -> bool:
        """Whether the entry has several children (the tree forks here)."""
        return self.children > 1


#: Why the tree hides an entry: each reason's key and what every view calls it (singular, plural). The first two
#: hold in every filter mode, as in Pi's ``/tree``.
HIDDEN_REASONS: dict[str, tuple[str, str]] = {
    "tool-calls-only": ("assistant message with only tool calls", "assistant messages with only tool calls"),
    "usage": ("usage entry", "usage entries"),
    "settings": ("settings entry", "settings entries"),
    "tool-result": ("tool result", "tool results"),
    "not-user": ("entry that is not a user prompt", "entries that are not user prompts"),
    "not-labelled": ("unlabelled entry", "unlabelled entries"),
    "search": ("entry the search does not match", "entries the search does not match"),
}


def hidden_reason(entry: Entry, is_leaf: bool, mode: str, labelled: bool) -> str | None:
    """Why the tree hides ``entry`` in filter ``mode`` (a key of :data:`HIDDEN_REASONS`), or ``None``: it is shown.
    The search is not tested here (see :func:`hidden_counts`)."""
    if is_leaf:
        return None  # the active position is always visible
    if entry.type == "usage":
        return "usage"
    if _tool_calls_only(entry):
        return "tool-calls-only"
    settings = entry.type in _SETTINGS_TYPES
    if mode == "user-only":
        return None if entry.type == "message" and entry.role == "user" else "not-user"
    if mode == "no-tools":
        return "settings" if settings else "tool-result" if entry.type == "message" and entry.role == "toolResult" \
            else None
    if mode == "labeled-only":
        return None if labelled else "not-labelled"
    if mode == "all":
        return None
    return "settings" if settings else None


def _visible(entry: Entry, is_leaf: bool, mode: str, labelled: bool) -> bool:
    return hidden_reason(entry, is_leaf, mode, labelled) is None


def _tool_calls_only(entry: Entry) -> bool:
    """An assistant message with no text that did not stop early: Pi's ``/tree`` never shows it."""
    if entry.type == "message" and entry.role == "assistant":
        message = entry.message or {}
        stop = message.get("stopReason")
        content = message.get("content")
        if isinstance(content, str):
            has_text = bool(content.strip(jsjson.JS_WHITESPACE))
        else:
            has_text = any(isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
                           and b["text"].strip(jsjson.JS_WHITESPACE) for b in _blocks(content))
        return not has_text and not (stop and stop not in ("stop", "toolUse"))
    return False


def hidden_counts(by_id: Mapping[Any, Entry], labels: Mapping[Any, str], leaf_id: Any, mode: str = "default",
                  search: str = "") -> dict[str, int]:
    """How many entries the tree hides, by reason (keys of :data:`HIDDEN_REASONS`, in its order; reasons that
    hide nothing are left out). An entry the filter shows but the search does not match counts as ``search``."""
    counts = dict.fromkeys(HIDDEN_REASONS, 0)
    shown = _shown_test(by_id, labels, leaf_id, mode, search, counts)
    for node in by_id:
        shown(node)
    return {reason: n for reason, n in counts.items() if n}


def describe_hidden(counts: Mapping[str, int]) -> str:
    """``214 assistant messages with only tool calls, 1 usage entry`` (empty when nothing is hidden)."""
    return ", ".join(f"{n:,} {HIDDEN_REASONS[reason][0 if n == 1 else 1]}" for reason, n in counts.items() if n)


def _blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else []


def searchable_text(entry: Entry, label: str | None) -> str:
    """The text a tree search matches against (label, role or type, content)."""
    parts: list[str] = [label] if label else []
    data = entry.data
    kind = entry.type
    if kind == "message":
        message = entry.message or {}
        parts.append(str(message.get("role")))
        parts.append(content_text(message.get("content"), " "))
        if message.get("role") == "bashExecution":
            parts.append(str(message.get("command") or ""))
        if message.get("role") == "assistant":
            for block in _blocks(message.get("content")):
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    parts.append(str(block.get("name")))
    elif kind == "custom_message":
        parts += [str(data.get("customType")), content_text(data.get("content"), " ")]
    elif kind == "branch_summary":
        parts += ["branch summary", str(data.get("summary") or "")]
    elif kind == "compaction":
        parts.append("compaction")
    elif kind == "session_info":
        parts += ["title", str(data.get("name") or "")]
    elif kind == "model_change":
        parts += ["model", str(data.get("modelId"))]
    else:
        parts.append(str(kind))
    return " ".join(parts)


def _shown_test(by_id: Mapping[Any, Entry], labels: Mapping[Any, str], leaf_id: Any, mode: str,
                search: str, hidden: dict[str, int] | None = None) -> Callable[[Any], bool]:
    """Whether an entry gets a row, each entry hidden counted by its reason in ``hidden``; an entry parsed for the
    test alone is released after it (a tree of a large file does not keep every entry's parsed form)."""
    tokens = [t for t in search.lower().split() if t]

    def shown(node: Any) -> bool:
        entry = by_id[node]
        parsed = entry.is_parsed
        try:
            reason = hidden_reason(entry, node == leaf_id, mode, node in labels)
            if reason is None and tokens:
                text = searchable_text(entry, labels.get(node)).lower()
                reason = None if all(t in text for t in tokens) else "search"
        finally:
            if not parsed:
                entry.release()
        if reason is not None and hidden is not None:
            hidden[reason] += 1
        return reason is None

    return shown


def _preorder(roots: Sequence[Any], children: Mapping[Any, Sequence[Any]], active: set[Any]) -> list[Any]:
    """Pre-order over the real tree, the active branch first at every fork (each node once)."""
    order: list[Any] = []
    stack = sorted(roots, key=lambda r: r not in active)[::-1]
    seen: set[Any] = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        kids = children.get(node, ())
        ordered = [k for k in kids if k in active] + [k for k in kids if k not in active]
        stack.extend(reversed(ordered))
    return order


def _visible_children(by_id: Mapping[Any, Entry], visible: list[Any]) -> dict[Any, list[Any]]:
    """Each visible node under its nearest visible ancestor (None: a top-level row)."""
    visible_set = set(visible)
    out: dict[Any, list[Any]] = {}
    for node in visible:
        parent = by_id[node].parent_id
        guard = 0
        while is_key(parent) and parent is not None and parent not in visible_set and parent in by_id \
                and guard <= len(by_id):
            parent = by_id[parent].parent_id
            guard += 1
        if not is_key(parent):
            parent = None  # an array or object as parentId: a top-level row
        out.setdefault(parent if parent in visible_set else None, []).append(node)
    return out


def flatten(by_id: Mapping[Any, Entry], labels: Mapping[Any, str], roots: Sequence[Any],
            children: Mapping[Any, Sequence[Any]], leaf_id: Any, mode: str = "default",
            search: str = "") -> list[TreeRow]:
    """Rows of the tree view in the spirit of Pi's ``/tree``.

    The branch holding the active leaf comes first at every fork; a long single-child
    chain stays at one indent; hidden entries lift their visible descendants to the
    nearest visible ancestor.
    """
    if mode not in FILTER_MODES:
        raise ValueError(f"unknown filter mode {mode!r}; use one of {', '.join(FILTER_MODES)}")
    active: set[Any] = set()
    if leaf_id is not None and leaf_id in by_id:
        active = {e.id for e in path_to(by_id, by_id[leaf_id])}
    shown = _shown_test(by_id, labels, leaf_id, mode, search)
    vis_children = _visible_children(by_id, [n for n in _preorder(roots, children, active) if shown(n)])
    rows: list[TreeRow] = []
    top = vis_children.get(None, [])
    multiple_roots = len(top) > 1
    layout: list[tuple[Any, int, bool]] = [(r, 1 if multiple_roots else 0, multiple_roots) for r in reversed(top)]
    while layout:
        node, indent, just_branched = layout.pop()
        kids = vis_children.get(node, [])
        rows.append(TreeRow(node, indent, node in active, node == leaf_id, labels.get(node), by_id[node],
                            len(children.get(node, ()))))
        many = len(kids) > 1
        child_indent = indent + 1 if many or (just_branched and indent > 0) else indent
        layout.extend((k, child_indent, many) for k in reversed(kids))
    return rows


class TreeRows:
    """The rows :func:`flatten` lays out, counted in one walk and made one at a time.

    ``len(rows)`` is the number of rows; :meth:`window` makes the rows of a range of positions
    only. Beyond the session's own index, a walk keeps one byte per entry and the pending
    siblings, not the rows: printing the first or last rows of a large tree costs the rows
    printed. The rows are exactly those of :func:`flatten` (a tree with duplicate ids, a root
    that is its own parent or a leaf on a parent cycle is laid out by :func:`flatten` itself).
    """

    def __init__(self, by_id: Mapping[Any, Entry], labels: Mapping[Any, str], roots: Sequence[Any],
                 children: Mapping[Any, Sequence[Any]], leaf_id: Any, mode: str = "default",
                 search: str = "") -> None:
        if mode not in FILTER_MODES:
            raise ValueError(f"unknown filter mode {mode!r}; use one of {', '.join(FILTER_MODES)}")
        self._by_id, self._labels, self._roots, self._children = by_id, labels, roots, children
        self._leaf, self._mode, self._search = leaf_id, mode, search
        self._rows: list[TreeRow] | None = None
        self._choices: dict[Any, Any] = {}
        self._top: Any = _NONE
        if not self._plain() or not self._chain():
            self._rows = flatten(by_id, labels, roots, children, leaf_id, mode, search)
            self._count = len(self._rows)
            return
        self._marks = bytearray()
        self._hidden = dict.fromkeys(HIDDEN_REASONS, 0)
        self._count = self._scan(_shown_test(by_id, labels, leaf_id, mode, search, self._hidden))

    def __len__(self) -> int:
        return self._count

    @property
    def hidden(self) -> dict[str, int]:
        """The entries without a row, by reason (as :func:`hidden_counts` gives them), counted in the same walk."""
        if self._rows is not None:
            return hidden_counts(self._by_id, self._labels, self._leaf, self._mode, self._search)
        return {reason: n for reason, n in self._hidden.items() if n}

    def _plain(self) -> bool:
        """Whether every entry of the index is listed once and no root is its own parent."""
        listed = len(self._roots) + sum(len(kids) for kids in self._children.values())
        if listed != len(self._by_id):
            return False
        return not any(self._by_id[r].parent_id == r for r in self._roots if r in self._by_id)

    def _chain(self) -> bool:
        """Note the leaf's path as :func:`path_to` walks it (its top, and the child taken at each
        fork); ``False`` when the walk meets a parent cycle."""
        by_id, leaf = self._by_id, self._leaf
        if leaf is None or leaf not in by_id:
            return True
        current = by_id[leaf]
        steps = 0
        while current.parent_id:
            parent_id = current.parent_id
            parent = by_id.get(parent_id) if isinstance(parent_id, str | int | float) else None
            if parent is None:
                break
            if parent.id == leaf or steps > len(by_id):
                return False
            if len(self._children.get(parent.id, ())) > 1:
                self._choices[parent.id] = current.id
            current = parent
            steps += 1
        self._top = current.id
        return True

    def _active(self, node: Any, parent: Any, parent_active: bool) -> bool:
        """Whether ``node`` (a child of ``parent``, or a root for ``parent`` ``_NONE``) is on the leaf's path."""
        if node == self._top:
            return True
        if not parent_active or parent == self._leaf:
            return False
        return len(self._children.get(parent, ())) == 1 or self._choices.get(parent, _NONE) == node

    def _walk(self) -> Generator[tuple[int, Any, bool, int, int, bool], tuple[int, bool] | None, None]:
        """Pre-order over the real tree, the active branch first at every fork: ``(position, node,
        active, nearest shown ancestor's position or -1, its indent for children, it forked)``;
        the caller's ``send`` gives each shown node's ``(child indent, forks)`` (``None``: hidden)."""
        children = self._children
        first = [r for r in self._roots if self._active(r, _NONE, False)]
        ordered = first + [r for r in self._roots if r not in first] if first else list(self._roots)
        stack: list[tuple[Any, bool, int, int, bool]] = [(r, r in first, -1, 0, False) for r in reversed(ordered)]
        position = 0
        while stack:
            node, active, above, indent, forked = stack.pop()
            shown = yield position, node, active, above, indent, forked
            if shown is not None:
                above, (indent, forked) = position, shown
            position += 1
            kids = children.get(node, ())
            if not kids:
                continue
            if len(kids) > 1 and active:
                on = [k for k in kids if self._active(k, node, active)]
                ordered = on + [k for k in kids if k not in on]
            elif len(kids) > 1 and self._top in kids:
                ordered = [self._top] + [k for k in kids if k != self._top]
            else:
                ordered = list(kids)
            stack.extend((k, self._active(k, node, active), above, indent, forked) for k in reversed(ordered))

    def _scan(self, shown: Callable[[Any], bool]) -> int:
        """First walk: which entries are shown, and how many shown children each shown one has
        (one byte per entry: 0 hidden, 1 + min(children, 2) shown); returns the number of rows."""
        marks = self._marks
        top = 0
        count = 0
        walk = self._walk()
        step = next(walk, None)
        while step is not None:
            _position, node, _active, above, _indent, _forked = step
            if shown(node):
                count += 1
                marks.append(1)
                if above < 0:
                    top += 1
                elif marks[above] < 3:
                    marks[above] += 1
                reply: tuple[int, bool] | None = (0, False)
            else:
                marks.append(0)
                reply = None
            step = _send(walk, reply)
        self._top_rows = top
        return count

    def window(self, start: int, stop: int) -> Iterator[TreeRow]:
        """The rows at positions ``start`` to ``stop`` (exclusive), top to bottom."""
        if self._rows is not None:
            yield from self._rows[start:stop]
            return
        by_id, labels, children, marks, leaf = self._by_id, self._labels, self._children, self._marks, self._leaf
        many_roots = self._top_rows > 1
        row = 0
        walk = self._walk()
        step = next(walk, None)
        while step is not None and row < stop:
            position, node, active, above, indent, forked = step
            mark = marks[position]
            if not mark:
                step = _send(walk, None)
                continue
            if above < 0:
                indent, forked = (1, True) if many_roots else (0, False)
            if row >= start:
                yield TreeRow(node, indent, active, node == leaf, labels.get(node), by_id[node],
                              len(children.get(node, ())))
            row += 1
            many = mark == 3
            step = _send(walk, (indent + 1 if many or (forked and indent > 0) else indent, many))


_NONE = object()


def _send(walk: Generator[Any, Any, None], value: Any) -> Any:
    try:
        return walk.send(value)
    except StopIteration:
        return None
