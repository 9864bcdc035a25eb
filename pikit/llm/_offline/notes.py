"""Notes (a summary as data) and how two sets of notes merge."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .text import _CAP_GOALS, _core_command, _gist, _key, _line, _spans


@dataclass
class _Notes:
    """A summary as data: items per section plus the sets behind Critical Context."""

    goal: list[str] = field(default_factory=list)
    goal_dropped: int = 0
    constraints: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    done_dropped: int = 0
    in_progress: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    files_read: dict[str, None] = field(default_factory=dict)
    files_modified: dict[str, None] = field(default_factory=dict)
    commands: dict[str, None] = field(default_factory=dict)
    identifiers: dict[str, None] = field(default_factory=dict)

    def empty(self) -> bool:
        """True when the notes hold nothing at all."""
        return not any(
            (self.goal, self.constraints, self.done, self.in_progress, self.blocked,
             self.decisions, self.next_steps, self.context, self.files_read,
             self.files_modified, self.commands, self.identifiers)
        )


def _dedupe(items: Iterable[str]) -> list[str]:
    """Items without repeats; when two share a key the later one wins, at the later place."""
    out: dict[str, str] = {}
    for item in items:
        key = _key(item)
        if not key:
            continue
        out.pop(key, None)
        out[key] = item
    return list(out.values())


def _ends(items: list[str], cap: int) -> list[str]:
    """At most ``cap`` items: the first half and the last half of ``items``."""
    if len(items) <= cap:
        return items
    head = cap // 2
    return items[:head] + items[len(items) - (cap - head):]


def _touch(names: dict[str, None], name: str) -> None:
    """Add ``name`` to an insertion-ordered set, or move it to the end (most recent last)."""
    names.pop(name, None)
    names[name] = None


def _union(*sets: dict[str, None]) -> dict[str, None]:
    """The union of insertion-ordered sets; a name seen again moves to the end."""
    out: dict[str, None] = {}
    for names in sets:
        for name in names:
            _touch(out, name)
    return out


def _merge(base: _Notes, new: _Notes, *, finished_turn: bool, successes: set[str]) -> _Notes:
    """``base`` updated with ``new``: see the module docstring for the rules."""
    out = _Notes()
    goals = _dedupe([*base.goal, *new.goal]) if base.goal else list(new.goal)
    if base.goal:
        # the earlier main goal stays first even when a new request repeats it
        main_key = _key(base.goal[0])
        goals = [base.goal[0], *(g for g in goals if _key(g) != main_key)]
    out.goal = goals[:1] + goals[1:][-_CAP_GOALS:]
    out.goal_dropped = base.goal_dropped + new.goal_dropped + max(0, len(goals) - 1 - _CAP_GOALS)

    out.constraints = _dedupe([*base.constraints, *new.constraints])
    out.decisions = _dedupe([*base.decisions, *new.decisions])

    moved = [f"Handled: {i}" for i in base.in_progress
             if not i.lower().startswith(("last step:", "waiting for", "handled:"))]
    still = [] if finished_turn else list(base.in_progress)
    resolved: list[str] = []
    blocked: list[str] = []
    for item in base.blocked:
        if any(span in successes or _core_command(span) in successes for span in _spans(item)):
            resolved.append(f"Resolved: {item}")
        else:
            blocked.append(item)
    done = _dedupe([*base.done, *(moved if finished_turn else []), *resolved, *new.done])
    out.done_dropped = base.done_dropped + new.done_dropped
    out.done = done
    out.in_progress = _dedupe([*still, *new.in_progress])
    out.blocked = _dedupe([*blocked, *new.blocked])
    out.next_steps = list(base.next_steps)
    out.context = _dedupe([*base.context, *new.context])
    out.files_read = _union(base.files_read, new.files_read)
    out.files_modified = _union(base.files_modified, new.files_modified)
    out.commands = _union(base.commands, new.commands)
    out.identifiers = {**new.identifiers, **{k: None for k in base.identifiers if k not in new.identifiers}}
    return out


_BLOCKER_SPLIT_RE = re.compile(r" (?:failed|exited with code|was cancelled)\b|: ")


def _blocker_head(item: str) -> str:
    """The subject of a Blocked item: the part before *failed*, *exited with code* or ``: ``."""
    head = _BLOCKER_SPLIT_RE.split(item, 1)[0]
    return _line(head, 120) if head.strip() else _line(item, 120)


def _next_steps(notes: _Notes, last_request: str, answered: bool) -> list[str]:
    """Numbered-list items derived from unfinished work and open errors."""
    steps: list[str] = []
    for item in notes.in_progress:
        if item.lower().startswith("waiting for the result of "):
            steps.append("Check the result of " + item[len("waiting for the result of "):])
        elif not item.lower().startswith("last step:"):
            steps.append(f"Finish: {item}")
    for item in notes.blocked[-3:]:
        if item.startswith("The assistant's reply"):
            steps.append("Pick up the work where the interrupted reply stopped (see Blocked)")
        else:
            steps.append(f"Fix {_blocker_head(item)} (see Blocked)")
    steps = list(dict.fromkeys(steps))
    if not steps and last_request and answered:
        steps.append(
            f"Confirm with the user that the last request is settled "
            f"({_gist(last_request, 140, enough=1, most=1)}), then take the next one."
        )
    if not steps and notes.goal:
        steps.append(f"Continue toward the goal: {notes.goal[0]}")
    if not steps:
        steps.append("Review the current state of the work and ask the user how to continue.")
    return steps
