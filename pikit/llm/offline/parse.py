"""Reading a summary back into notes (pikit's own layout, and Pi's free-form ones as well as possible)."""

from __future__ import annotations

import re

from .notes import _Notes
from .text import _CAP_PARSED, _GOAL_LIMIT, _ITEM_LIMIT, _LIST_BUDGET, _MARKER_RE, _NO_GOAL, _clean, _line, _spans

_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*$")
_TABLE_SEP_RE = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
_BOLD_LABEL_RE = re.compile(r"^\*\*[^*]{1,80}\*\*:?$")
_DROPPED_RE = re.compile(r"^(?:…|\.\.\.)?\s*and (\d+) earlier items?$|^\(\+(\d+) more requests?\)$")
_PLACEHOLDERS = frozenset({"(none)", "none", "none.", "- none.", "n/a", "(none stated)", _NO_GOAL.lower()})


def _section_of(title: str) -> str:
    """The section a heading title belongs to (``"context"`` when nothing else fits)."""
    t = title.lower()
    if "goal" in t or "original request" in t or "objective" in t:
        return "goal"
    if "constraint" in t or "preference" in t or "requirement" in t:
        return "constraints"
    if "in progress" in t or "current" in t or "ongoing" in t:
        return "in_progress"
    if "block" in t or "error" in t or "issue" in t or "problem" in t or "fail" in t:
        return "blocked"
    if "decision" in t:
        return "decisions"
    if "next" in t or "todo" in t or "to do" in t:
        return "next_steps"
    if "done" in t or "complete" in t or "progress" in t or "finished" in t:
        return "done"
    return "context"


_KNOWN_TITLES = re.compile(
    r"goal|original request|objective|constraint|preference|requirement|in progress|current|"
    r"ongoing|block|error|issue|problem|fail|decision|next|todo|to do|done|complete|progress|"
    r"finished|critical context|context needed",
    re.I,
)


def _parse_notes(text: str) -> _Notes:
    """Parse a summary into notes; never raises.

    Headings are mapped to sections by their words; an unknown level-2 heading becomes a
    Critical Context label, an unknown deeper heading stays in its parent's section. The file
    lists Pi appends (``<read-files>``/``<modified-files>``) fill the file sets; code blocks are
    skipped and table rows become single lines.
    """
    notes = _Notes()
    lists: dict[str, list[str]] = {
        "goal": notes.goal, "constraints": notes.constraints, "done": notes.done,
        "in_progress": notes.in_progress, "blocked": notes.blocked, "decisions": notes.decisions,
        "next_steps": notes.next_steps, "context": notes.context,
    }
    section: str | None = None
    parent: str | None = None
    label = ""
    in_code = False
    file_block: dict[str, None] | None = None
    last_table_row: str | None = None
    preface: list[str] = []
    headings = 0
    turn = False
    for raw in _clean(text, 200_000).split("\n"):
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            in_code = not in_code
            continue
        if in_code or not line or line == "---":
            continue
        if line in ("<read-files>", "<modified-files>"):
            file_block = notes.files_read if line == "<read-files>" else notes.files_modified
            continue
        if line in ("</read-files>", "</modified-files>"):
            file_block = None
            continue
        if file_block is not None:
            file_block[_line(line, 200)] = None
            continue
        heading = _HEADING_RE.match(line)
        if heading:
            headings += 1
            level, title = len(heading.group(1)), heading.group(2).strip(" *:")
            known = bool(_KNOWN_TITLES.search(title))
            if level == 1 and not known:
                section, parent, label = None, None, ""
                continue
            if known or level <= 2 or parent is None:
                section = _section_of(title)
                if turn and section == "goal":
                    section = "in_progress"
                label = "" if known else _line(title, 60)
                if level <= 2:
                    parent = section
                if known and ":" in title:
                    before, rest = title.split(":", 1)
                    extra = rest if _KNOWN_TITLES.search(before) else title
                    if extra.strip():
                        lists[section].append(_line(extra))
            else:
                section = parent
                lists[section].append(_line(title))
            continue
        if line.startswith("**Turn Context"):
            # the summary of a split turn's first part follows: that turn was under way
            section, parent, label, turn = "context", "context", "", True
            continue
        if line.startswith("|"):
            if _TABLE_SEP_RE.match(line):
                if last_table_row is not None and section is not None and lists[section][-1:] == [last_table_row]:
                    lists[section].pop()
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            line = " — ".join(c for c in cells if c)
        else:
            last_table_row = None
        item = _line(_MARKER_RE.sub("", line), _LIST_BUDGET + 100)
        if not item or item.lower() in _PLACEHOLDERS or _BOLD_LABEL_RE.match(item):
            continue
        if raw.strip().startswith("|"):
            last_table_row = item
        dropped = _DROPPED_RE.match(item)
        if dropped:
            if section == "done":
                notes.done_dropped += int(dropped.group(1) or dropped.group(2) or 0)
            elif section == "goal":
                notes.goal_dropped += int(dropped.group(1) or dropped.group(2) or 0)
            continue
        if section is None:
            preface.append(item)
            continue
        if section == "context" and _context_set(notes, item):
            continue
        section_here = _item_section(section, item)
        if section_here != section:
            item = _strip_label(item)
            if item and len(lists[section_here]) < _CAP_PARSED:
                lists[section_here].append(_line(item))
            continue
        item = _line(f"{label}: {item}" if label and section == "context" else item,
                     _GOAL_LIMIT if section == "goal" else _ITEM_LIMIT)
        if len(lists[section]) < _CAP_PARSED:
            lists[section].append(item)
    if not headings and preface:
        notes.context.append(_line("Earlier summary: " + " ".join(preface[:3])))
    if not notes.goal and turn and notes.in_progress:
        # only a split turn was summarized so far: its request is also the session's goal
        first = next((i for i in notes.in_progress if _item_section("goal", i) == "goal"), None)
        if first:
            notes.goal.append(_line(first, _GOAL_LIMIT))
    return notes


_MOVED_ITEMS = (
    ("last step:", "in_progress", False),
    ("waiting for the result of", "in_progress", False),
    ("failed:", "blocked", True),
    ("user constraint:", "constraints", True),
)
"""Item prefixes that name their own section, whatever heading they sit under
(``True``: the prefix is a label to drop)."""


def _item_section(section: str, item: str) -> str:
    """The section an item read under ``section`` belongs to."""
    low = item.lower()
    for prefix, target, _ in _MOVED_ITEMS:
        if low.startswith(prefix):
            return target
    return section


def _strip_label(item: str) -> str:
    low = item.lower()
    for prefix, _, drop in _MOVED_ITEMS:
        if drop and low.startswith(prefix):
            return item[len(prefix):].strip()
    return item


def _context_set(notes: _Notes, item: str) -> bool:
    """Fill a set from a ``Files modified: …``-style item; True when ``item`` was one."""
    low = item.lower()
    targets = {
        "files modified:": notes.files_modified,
        "files read:": notes.files_read,
        "commands run:": notes.commands,
        "identifiers:": notes.identifiers,
    }
    for prefix, target in targets.items():
        if low.startswith(prefix):
            for span in _spans(item):
                target[span] = None
            return True
    return low.startswith("focus requested:")
