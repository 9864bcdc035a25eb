"""Search that says where: one hit per entry whose text matches, with its place and a snippet.

The index keeps one row of search text per entry and kind (``texts``: see
``pikit.corpus._searchtext``). A query runs over those rows in DuckDB (``regexp_matches``:
each word as a literal in any case, or the caller's regular expression); the entry id, its
timestamp and whether it is on the active branch come from the stored state of each file
with a hit (its tree), the snippet from the matched text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import PikitError, Wording
from ..jsjson import without_lone_surrogates
from ._searchtext import SEARCH_KINDS

if TYPE_CHECKING:
    from .._redaction.redactor import Redactor

__all__ = ["SNIPPET_CHARS", "SearchHit", "search_kinds", "search_query"]

SNIPPET_CHARS = 160  # characters of text a snippet shows around its first match
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class SearchHit:
    """One entry whose text matches a search.

    ``kind``: user, assistant, thinking (an assistant message's thinking), tool (a tool
    result) or summary (a compaction's or branch summary's); an entry can hit once per kind.
    ``timestamp``: the entry's timestamp as the file has it. ``snippet``: the text around the
    first match on one line (whitespace runs as one space, ``…`` where it is cut);
    ``highlights``: ``(start, end)`` of every match inside the snippet, in characters.
    """

    path: str
    session_id: str | None
    entry_id: str | None
    entry_index: int
    kind: str
    timestamp: str | None
    on_active_branch: bool
    snippet: str
    highlights: tuple[tuple[int, int], ...]


def search_kinds(kinds: str | Sequence[str] | None) -> list[str]:
    """``kinds`` checked (a comma-separated string or a list; None: every kind)."""
    if kinds is None:
        return list(SEARCH_KINDS)
    wanted = [k.strip() for k in (kinds.split(",") if isinstance(kinds, str) else kinds) if k.strip()]
    unknown = [k for k in wanted if k not in SEARCH_KINDS]
    if unknown or not wanted:
        raise PikitError(Wording("{kinds} takes {known} (not {unknown})", {"kinds": "kinds"},
                                 known=", ".join(SEARCH_KINDS), unknown=", ".join(unknown) or "nothing"))
    return list(dict.fromkeys(wanted))


def _pattern(query: str, regex: bool) -> tuple[re.Pattern[str], str, dict[str, Any]]:
    """The Python pattern a snippet is cut with, and the SQL condition (with its parameters) rows are found by."""
    if regex:
        try:
            pattern = re.compile(query)
        except re.error as exc:
            raise PikitError(Wording("{query} is not a regular expression: {why}", {"query": "query"}, why=str(exc))) \
                from None
        return pattern, "regexp_matches(t.text, $re)", {"re": query}
    terms = list(dict.fromkeys(without_lone_surrogates(w).lower() for w in query.split()))
    if not terms:
        raise PikitError(Wording("{query} holds no word to search for", {"query": "query"}))
    # (RE2's case-insensitive match of a literal is about twice as fast as contains() on lower(text))
    condition = " AND ".join(f"regexp_matches(t.text, $w{i})" for i in range(len(terms)))
    pattern = re.compile("|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)), re.IGNORECASE)
    return pattern, condition, {f"w{i}": "(?i)" + re.escape(t) for i, t in enumerate(terms)}


def snippet(text: str, pattern: re.Pattern[str], width: int = SNIPPET_CHARS) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The text around the first match of ``pattern`` on one line, and where the matches are inside it."""
    line = _SPACES.sub(" ", text).strip()
    first = pattern.search(line)
    start = max(0, (first.start() if first else 0) - width // 3)
    end = min(len(line), start + width)
    start = max(0, min(start, end - width))
    head, tail = ("…" if start else ""), ("…" if end < len(line) else "")
    shown = head + line[start:end] + tail
    marks = tuple((m.start() + len(head), m.end() + len(head)) for m in pattern.finditer(line[start:end])
                  if m.end() > m.start())
    return shown, marks


def search_query(query: str, *, kinds: str | Sequence[str] | None, regex: bool, limit: int, offset: int,
                 ) -> tuple[str, dict[str, Any], re.Pattern[str]]:
    """The SQL that finds the hits' rows (path, session id, file id, entry index, kind, text) of a search (a
    version-1 file whose migrated copy the corpus holds is left out: the copy is the same session)."""
    if limit < 0 or offset < 0:
        raise PikitError(Wording("{limit} and {offset} are counts (0 or more)", {"limit": "limit", "offset": "offset"}))
    pattern, condition, params = _pattern(query, regex)
    params.update({"kinds": search_kinds(kinds), "limit": limit, "offset": offset})
    sql = ("SELECT f.path, s.session_id, t.file_id, t.entry_index, t.kind, t.text FROM texts t "
           "JOIN files f USING (file_id) LEFT JOIN sessions s USING (file_id) "
           f"WHERE t.kind IN (SELECT unnest($kinds)) AND s.migrated_to IS NULL AND {condition} "
           "ORDER BY s.last_activity DESC NULLS LAST, f.path, t.entry_index, t.kind LIMIT $limit OFFSET $offset")
    return sql, params, pattern


def hits(rows: list[tuple[Any, ...]], states: Callable[[list[int]], dict[int, bytes]],
         pattern: re.Pattern[str], redactor: Redactor | None = None) -> list[SearchHit]:
    """The hits of a search's rows, placed in their files' trees (``states``: the stored state of each file;
    ``redactor``: the texts redacted before the snippets are cut)."""
    from .._redaction.redactor import Placeholders

    placeholders = Placeholders()
    from ._derive import _PLAIN, _tree
    from ._filescan import _decode_state

    places: dict[int, tuple[list[Any], list[Any], list[bool]]] = {}
    for file_id, blob in states(sorted({row[2] for row in rows})).items():
        state = _decode_state(blob, [])
        if state is not None:  # (a state that does not decode places no hit: its file is read again at the next scan)
            places[file_id] = (state.ids, state.times, _tree(state, set(map(type, state.ids)) <= _PLAIN).active)
    found = []
    for path, session_id, file_id, entry, kind, text in rows:
        ids, times, active = places.get(file_id, ([], [], []))
        inside = 0 <= entry < len(ids)
        entry_id = ids[entry] if inside and isinstance(ids[entry], str) else None
        when = times[entry] if inside and isinstance(times[entry], str) else None
        shown, marks = snippet(text if redactor is None else redactor.redact_text(text, placeholders), pattern)
        found.append(SearchHit(path, session_id, entry_id, int(entry), kind, when, inside and active[entry],
                               shown, marks))
    return found
