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


_SECTION_WORDS = (
    ("goal", ("goal", "original request", "objective")),
    ("constraints", ("constraint", "preference", "requirement")),
    ("in_progress", ("in progress", "current", "ongoing")),
    ("blocked", ("block", "error", "issue", "problem", "fail")),
    ("decisions", ("decision",)),
    ("next_steps", ("next", "todo", "to do")),
    ("done", ("done", "complete", "progress", "finished")),
)
"""Heading words per section, tried in this order (the first match wins)."""


def _section_of(title: str) -> str:
    """The section a heading title belongs to (``"context"`` when nothing else fits)."""
    t = title.lower()
    return next((section for section, words in _SECTION_WORDS if any(w in t for w in words)), "context")


_KNOWN_TITLES = re.compile(
    r"goal|original request|objective|constraint|preference|requirement|in progress|current|"
    r"ongoing|block|error|issue|problem|fail|decision|next|todo|to do|done|complete|progress|"
    r"finished|critical context|context needed",
    re.I,
)


_FILE_TAGS = {"<read-files>": "files_read", "<modified-files>": "files_modified",
              "</read-files>": None, "</modified-files>": None}


def _classify(line: str, in_code: bool, in_files: bool) -> str:
    """The kind of one stripped summary line; one :class:`_Parser` handler per kind."""
    if line.startswith(("```", "~~~")):
        return "fence"
    if in_code or not line or line == "---":
        return "skip"
    if line in _FILE_TAGS:
        return "file_tag"
    if in_files:
        return "file"
    if _HEADING_RE.match(line):
        return "heading"
    if line.startswith("**Turn Context"):
        return "turn"
    if line.startswith("|"):
        return "table_rule" if _TABLE_SEP_RE.match(line) else "table_row"
    return "item"


class _Parser:
    """Reads a summary line by line into notes (see :func:`_parse_notes`)."""

    def __init__(self) -> None:
        self.notes = _Notes()
        n = self.notes
        self.lists: dict[str, list[str]] = {
            "goal": n.goal, "constraints": n.constraints, "done": n.done, "in_progress": n.in_progress,
            "blocked": n.blocked, "decisions": n.decisions, "next_steps": n.next_steps, "context": n.context,
        }
        self.section: str | None = None
        self.parent: str | None = None
        self.label = ""
        self.in_code = False
        self.file_block: dict[str, None] | None = None
        self.last_table_row: str | None = None
        self.preface: list[str] = []
        self.headings = 0
        self.turn = False

    def feed(self, line: str) -> None:
        """Handle one stripped line."""
        kind = _classify(line, self.in_code, self.file_block is not None)
        getattr(self, f"_{kind}")(line)

    # -- one handler per kind ---------------------------------------------------------------

    def _fence(self, line: str) -> None:
        self.in_code = not self.in_code

    def _skip(self, line: str) -> None:
        pass

    def _file_tag(self, line: str) -> None:
        target = _FILE_TAGS[line]
        self.file_block = getattr(self.notes, target) if target else None

    def _file(self, line: str) -> None:
        assert self.file_block is not None
        self.file_block[_line(line, 200)] = None

    def _heading(self, line: str) -> None:
        heading = _HEADING_RE.match(line)
        assert heading is not None
        self.headings += 1
        level, title = len(heading.group(1)), heading.group(2).strip(" *:")
        known = bool(_KNOWN_TITLES.search(title))
        if level == 1 and not known:
            self.section, self.parent, self.label = None, None, ""
        elif known or level <= 2 or self.parent is None:
            self._open_section(level, title, known)
        else:  # an unknown sub-heading is an item of its parent's section
            self.section = self.parent
            self.lists[self.parent].append(_line(title))

    def _open_section(self, level: int, title: str, known: bool) -> None:
        section = _section_of(title)
        if self.turn and section == "goal":
            section = "in_progress"
        self.section = section
        self.label = "" if known else _line(title, 60)
        if level <= 2:
            self.parent = section
        if known and ":" in title:
            before, rest = title.split(":", 1)
            extra = rest if _KNOWN_TITLES.search(before) else title
            if extra.strip():
                self.lists[section].append(_line(extra))

    def _turn(self, line: str) -> None:
        # the summary of a split turn's first part follows: that turn was under way
        self.section, self.parent, self.label, self.turn = "context", "context", "", True

    def _table_rule(self, line: str) -> None:
        # a rule under a table's first row: that row was the header, not an item
        rows = self.lists[self.section] if self.section is not None else []
        if self.last_table_row is not None and rows[-1:] == [self.last_table_row]:
            rows.pop()

    def _table_row(self, line: str) -> None:
        cells = [c.strip() for c in line.strip("|").split("|")]
        item = self._clean_item(" — ".join(c for c in cells if c))
        if item:
            self.last_table_row = item
            self._add(item)

    def _item(self, line: str) -> None:
        self.last_table_row = None
        item = self._clean_item(line)
        if item:
            self._add(item)

    # -- items ------------------------------------------------------------------------------

    @staticmethod
    def _clean_item(line: str) -> str:
        item = _line(_MARKER_RE.sub("", line), _LIST_BUDGET + 100)
        if not item or item.lower() in _PLACEHOLDERS or _BOLD_LABEL_RE.match(item):
            return ""
        return item

    def _add(self, item: str) -> None:
        section = self.section
        dropped = _DROPPED_RE.match(item)
        if dropped:
            count = int(dropped.group(1) or dropped.group(2) or 0)
            if section == "done":
                self.notes.done_dropped += count
            elif section == "goal":
                self.notes.goal_dropped += count
        elif section is None:
            self.preface.append(item)
        elif section == "context" and _context_set(self.notes, item):
            pass
        elif _item_section(section, item) != section:
            moved_to = self.lists[_item_section(section, item)]
            item = _strip_label(item)
            if item and len(moved_to) < _CAP_PARSED:
                moved_to.append(_line(item))
        elif len(self.lists[section]) < _CAP_PARSED:
            text = f"{self.label}: {item}" if self.label and section == "context" else item
            self.lists[section].append(_line(text, _GOAL_LIMIT if section == "goal" else _ITEM_LIMIT))

    def finish(self) -> _Notes:
        """The notes, with the preface of a summary without headings and a split turn's goal."""
        notes = self.notes
        if not self.headings and self.preface:
            notes.context.append(_line("Earlier summary: " + " ".join(self.preface[:3])))
        if not notes.goal and self.turn and notes.in_progress:
            # only a split turn was summarized so far: its request is also the session's goal
            first = next((i for i in notes.in_progress if _item_section("goal", i) == "goal"), None)
            if first:
                notes.goal.append(_line(first, _GOAL_LIMIT))
        return notes


def _parse_notes(text: str) -> _Notes:
    """Parse a summary into notes; never raises.

    Each line is classified (fence, file tag, file, heading, turn marker, table rule, table
    row, item) and handled by its kind. Headings are mapped to sections by their words; an
    unknown level-2 heading becomes a Critical Context label, an unknown deeper heading stays
    in its parent's section. The file lists Pi appends (``<read-files>``/``<modified-files>``)
    fill the file sets; code blocks are skipped and table rows become single lines.
    """
    parser = _Parser()
    for raw in _clean(text, 200_000).split("\n"):
        parser.feed(raw.strip())
    return parser.finish()


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
