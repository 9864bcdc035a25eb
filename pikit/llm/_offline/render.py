"""Laying notes out in the Markdown layout a model is asked for."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .notes import _ends, _Notes
from .text import (
    _CAP_BLOCKED,
    _CAP_CONSTRAINTS,
    _CAP_CONTEXT,
    _CAP_DECISIONS,
    _CAP_DONE,
    _CAP_IN_PROGRESS,
    _CAP_NEXT,
    _CAP_TURN_CONTEXT,
    _CAP_TURN_PROGRESS,
    _GOAL_LIMIT,
    _ITEM_LIMIT,
    _LIST_BUDGET,
    _LIST_NAMES,
    _NO_GOAL,
    _NONE,
    _code,
    _line,
)

_FOCUS_STOP = frozenset(
    (
        "the", "and", "for", "with", "about", "focus", "that", "this", "from", "into", "what",
        "which", "when", "where", "them", "they", "their", "please", "keep", "make", "sure",
        "also", "only", "more", "most", "some", "any", "all", "are", "was", "were", "been",
        "has", "have", "had", "not", "but", "you", "your", "our", "its", "it's",
    )
)


def _focus_words(instructions: str) -> list[str]:
    words = re.findall(r"\w{3,}", instructions.lower())
    return list(dict.fromkeys(w for w in words if w not in _FOCUS_STOP))


def _focus_first(items: list[str], words: list[str]) -> list[str]:
    """``items`` ordered by how many of ``words`` they mention, most first (stable otherwise)."""
    if not words:
        return items
    return sorted(items, key=lambda item: -sum(w in item.lower() for w in words))


def _names(label: str, names: Iterable[str], budget: int = _LIST_BUDGET) -> str | None:
    """``Label: `a`, `b` (+N earlier)`` or ``None`` when there are no names.

    Shows the most recent names (the last ones) that fit ``budget`` characters, at most
    :data:`_LIST_NAMES`, in their original order.
    """
    values = list(names)
    if not values:
        return None
    shown: list[str] = []
    size = 0
    for value in reversed(values[-_LIST_NAMES:]):
        if shown and size + len(value) + 4 > budget:
            break
        shown.append(_code(value))
        size += len(value) + 4
    shown.reverse()
    more = f" (+{len(values) - len(shown)} earlier)" if len(values) > len(shown) else ""
    return f"{label}: {', '.join(shown)}{more}"


def _context_items(notes: _Notes, focus: str, words: list[str], cap: int) -> list[str]:
    """The Critical Context items: focus, files, commands, identifiers, then free items.

    The derived lists always come first and are never dropped (so they survive an update);
    the free items fill the rest up to ``cap``, those naming the focus first, with at most
    three resolved errors.
    """
    modified = list(notes.files_modified)
    read_only = [p for p in notes.files_read if p not in notes.files_modified]
    derived = [
        f"Focus requested: {_line(focus, 200)}" if focus else None,
        _names("Files modified", modified),
        _names("Files read", read_only),
        _names("Commands run", list(notes.commands)[-6:]),
        _names("Identifiers", list(notes.identifiers)[:10]),
    ]
    fixed = [i for i in notes.context if i.startswith("Earlier error (resolved):")][-3:]
    free = [i for i in notes.context if not i.startswith("Earlier error (resolved):")] + fixed
    items = [item for item in derived if item]
    return items + _focus_first(free, words)[: max(0, cap - len(items))]


def _plain(text: str) -> str:
    """``text`` as a free-standing line that cannot start a list, quote, fence or tag."""
    return _line(text, _GOAL_LIMIT).lstrip("-*+<|>~`# ") or _NO_GOAL


def _bullets(items: list[str], prefix: str = "- ", limit: int = _ITEM_LIMIT) -> list[str]:
    """Items as list lines, or the ``(none)`` line when there are none."""
    if not items:
        return [f"- {_NONE}"]
    return [f"{prefix}{_line(item, limit)}" for item in items]


def _render(kind: str, notes: _Notes, focus: str) -> str:
    """Lay the notes out in the Markdown layout of ``kind``."""
    words = _focus_words(focus) if focus else []
    if kind == "turn_prefix":
        return _render_turn(notes, focus, words)
    lines = ["## Goal"]
    if notes.goal:
        lines.append(_plain(notes.goal[0]))
        lines += [f"- {_line(g)}" for g in _focus_first(notes.goal[1:], words)]
        if notes.goal_dropped:
            lines.append(f"- (+{notes.goal_dropped} more requests)")
    else:
        lines.append(_NO_GOAL)
    lines += ["", "## Constraints & Preferences"]
    lines += _bullets(_focus_first(_ends(notes.constraints, _CAP_CONSTRAINTS), words))

    done = notes.done[-_CAP_DONE:]
    dropped = notes.done_dropped + len(notes.done) - len(done)
    lines += ["", "## Progress", "### Done"]
    lines += _bullets(_focus_first(done, words), "- [x] ")
    if dropped and done:
        lines.append(f"- [x] … and {dropped} earlier item{'s' if dropped > 1 else ''}")
    lines += ["", "### In Progress"]
    lines += _bullets(_focus_first(notes.in_progress[-_CAP_IN_PROGRESS:], words), "- [ ] ")
    lines += ["", "### Blocked"]
    lines += _bullets(_focus_first(notes.blocked[-_CAP_BLOCKED:], words))
    lines += ["", "## Key Decisions"]
    lines += _bullets(_focus_first(notes.decisions[-_CAP_DECISIONS:], words))
    lines += ["", "## Next Steps"]
    steps = _focus_first(notes.next_steps[:_CAP_NEXT], words)
    lines += [f"{n}. {_line(step)}" for n, step in enumerate(steps, 1)]
    if kind != "branch":
        lines += ["", "## Critical Context"]
        lines += _bullets(_context_items(notes, focus, words, _CAP_CONTEXT), limit=_LIST_BUDGET + 100)
    return "\n".join(lines)


def _render_turn(notes: _Notes, focus: str, words: list[str]) -> str:
    """The short layout of a split turn's first part."""
    lines = ["## Original Request"]
    lines.append(_plain(notes.goal[0]) if notes.goal else _NO_GOAL)
    progress: list[str] = list(notes.done)
    reads = [p for p in notes.files_read if p not in notes.files_modified]
    listed = _names("Read", reads)
    if listed:
        progress.insert(0, listed)
    progress += [f"Failed: {item}" for item in notes.blocked]
    progress += [item for item in notes.in_progress if item.lower().startswith(("last step:", "waiting for"))]
    lines += ["", "## Progress So Far"]
    lines += _bullets(_focus_first(progress[-_CAP_TURN_PROGRESS:], words))
    extra = _Notes(context=[*(f"User constraint: {c}" for c in notes.constraints[:2]), *notes.context])
    extra.files_read, extra.files_modified = notes.files_read, notes.files_modified
    extra.commands, extra.identifiers = notes.commands, notes.identifiers
    lines += ["", "## Context Needed to Continue"]
    lines += _bullets(_context_items(extra, focus, words, _CAP_TURN_CONTEXT), limit=_LIST_BUDGET + 100)
    return "\n".join(lines)


def _render_handoff(notes: _Notes, focus: str) -> str:
    """Lay the notes out as a handoff summary (Codex's sections; see ``_prompts.HANDOFF_LAYOUT``)."""
    words = _focus_words(focus) if focus else []
    active = notes.goal[-1] if notes.goal else None
    lines = ["## Active Task", _plain(active) if active else _NO_GOAL]
    progress = [*notes.done[-_CAP_DONE:], *(f"Started: {i}" for i in notes.in_progress[-_CAP_IN_PROGRESS:]),
                *(f"Blocked: {i}" for i in notes.blocked[-_CAP_BLOCKED:])]
    lines += ["", "## Progress So Far"]
    lines += _bullets(_focus_first(progress, words))
    lines += ["", "## Next Steps"]
    steps = _focus_first(notes.next_steps[:_CAP_NEXT], words)
    lines += [f"{n}. {_line(step)}" for n, step in enumerate(steps, 1)] or [f"1. {_NONE}"]
    context = [*notes.constraints[:_CAP_CONSTRAINTS], *notes.decisions[-_CAP_DECISIONS:]]
    extra = _Notes(context=[*context, *notes.context])
    extra.files_read, extra.files_modified = notes.files_read, notes.files_modified
    extra.commands, extra.identifiers = notes.commands, notes.identifiers
    lines += ["", "## Key Context, Constraints & Preferences"]
    lines += _bullets(_context_items(extra, focus, words, _CAP_CONTEXT + len(context)), limit=_LIST_BUDGET + 100)
    lines += ["", "## Completed Tasks"]
    lines += _bullets(notes.goal[:-1][-_CAP_DONE:] if notes.in_progress else notes.goal[-_CAP_DONE:])
    return "\n".join(lines)
