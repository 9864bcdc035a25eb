"""A session with its secrets replaced: :func:`redact` and its :class:`RedactionReport`.

The redacted session has the same tree: the same entries in the same order, the same ids,
parent ids, types, timestamps and usage; only strings holding a secret (and inline image
data) differ. An entry with nothing to redact keeps its line byte for byte.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import jsjson
from .._format.entry import Entry
from .._format.migration import CURRENT_VERSION
from .._format.timestamps import iso_now
from .._session import Session
from .._version import __version__
from .redactor import Placeholders, Redactor
from .walk import redact_in_place

__all__ = ["RedactionReport", "redact", "redacted_lines"]


@dataclass
class RedactionReport:
    """What was redacted, never the values: occurrences per kind, per entry, and distinct secrets per kind.

    ``counts`` maps a kind (``github-token``, ``env``, ``image``, …) to its occurrences;
    ``entries`` maps an entry id to its own counts (entries with none are left out);
    ``header`` holds the header's counts; ``distinct`` the number of different secrets of each kind.
    """

    counts: dict[str, int] = field(default_factory=dict)
    entries: dict[Any, dict[str, int]] = field(default_factory=dict)
    header: dict[str, int] = field(default_factory=dict)
    distinct: dict[str, int] = field(default_factory=dict)
    at: str = field(default_factory=iso_now)

    @property
    def total(self) -> int:
        """Every replacement made, images included."""
        return sum(self.counts.values())

    def stamp(self) -> dict[str, Any]:
        """The header's ``redactedBy``: who redacted, when, and the counts per kind."""
        return {"tool": "pikit", "version": __version__, "at": self.at, "counts": dict(self.counts)}

    def _add(self, counts: dict[str, int]) -> None:
        for kind, n in counts.items():
            self.counts[kind] = self.counts.get(kind, 0) + n

    def __repr__(self) -> str:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(self.counts.items())) or "nothing"
        return f"<RedactionReport {kinds}; {len(self.entries)} entries changed>"


def redact(session: Session, redactor: Redactor | None = None, *, placeholders: Placeholders | None = None,
           **options: Any) -> tuple[Session, RedactionReport]:
    """A copy of ``session`` with its secrets replaced by placeholders, and the report of what was replaced.

    ``redactor`` is the configuration (built once, reused for any number of sessions); without
    it, ``options`` are :class:`Redactor`'s (``redact(session, emails=True)``). ``placeholders``
    carries the numbering across calls (by default each call numbers from 1): the same secret
    gets the same placeholder, ``[REDACTED:kind:n]``, everywhere it numbers. The source session
    is not changed; the copy keeps its leaf and its load report, its path (and the report's) is
    redacted like any text (a token in a file name is a secret too: ``path`` is then no file),
    and its header records the run as ``redactedBy`` (the header's counts include the path's).
    """
    if redactor is None:
        redactor = Redactor(**options)
    elif options:
        raise TypeError("pass either a Redactor or its options, not both")
    numbering = placeholders if placeholders is not None else Placeholders()
    report = RedactionReport()
    counts: dict[str, int] = {}

    def text(value: str) -> str:
        return redactor.redact_text(value, numbering, counts)

    header = jsjson.loads(jsjson.stringify_bytes(session.header))
    redact_in_place(header, text, header=True)
    path = None if session.path is None else text(session.path)  # a token in a file name goes too
    loaded = session.report
    shown = dataclasses.replace(loaded, source=text(loaded.source), found=list(loaded.found), redacted=True,
                                title=None if loaded.title is None else text(loaded.title))
    report.header = dict(counts)
    entries = []
    for entry in session.entries:
        counts.clear()
        entries.append(_redacted(entry, text, counts, redactor.keep_images))
        if counts:
            report.entries[entry.id] = dict(counts)
        report._add(counts)
    report._add(report.header)
    report.distinct = numbering.distinct()
    header["redactedBy"] = report.stamp()
    copy = Session(header, entries, path=path, report=shown)
    if session.leaf_id in copy.by_id or session.leaf_id is None:
        copy.leaf_id = session.leaf_id
    return copy, report


def _redacted(entry: Entry, text: Any, counts: dict[str, int], keep_images: bool) -> Entry:
    data = jsjson.loads(entry.raw)  # a copy of its own, changed in place
    if not isinstance(data, dict):
        return entry
    images = redact_in_place(data, text, keep_images=keep_images)
    if images:
        counts["image"] = counts.get("image", 0) + images
    if not counts:
        return Entry.indexed(entry.raw, entry.line, entry.id, entry.parent_id, entry.type, entry.timestamp,
                             entry.role, entry.model)
    copy = Entry(data, line=entry.line)
    _ = copy.raw  # serialized now, so the parsed copy can go
    copy.release()
    return copy


def redacted_lines(session: Session) -> Iterator[bytes]:
    """The lines of a redacted session's file (header first, in the current format)."""
    header = dict(session.header)
    header["version"] = CURRENT_VERSION
    yield jsjson.stringify_bytes(header)
    for entry in session.entries:
        yield entry.raw
