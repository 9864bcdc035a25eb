"""The ``--json`` object of ``pikit search`` (documented in ``docs/json.md``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...corpus._search import SearchHit


def hit(found: SearchHit) -> dict[str, Any]:
    """One hit: where it is (file, session, entry), what kind of text matched, and the snippet with its matches."""
    return {"path": found.path, "sessionId": found.session_id, "entryId": found.entry_id,
            "entryIndex": found.entry_index, "kind": found.kind, "timestamp": found.timestamp,
            "onActiveBranch": found.on_active_branch, "snippet": found.snippet,
            "highlights": [list(span) for span in found.highlights]}


def search(query: str, found: Sequence[SearchHit], *, offset: int, more: bool) -> dict[str, Any]:
    """A page of hits: ``nextOffset`` is the ``offset`` of the next page (null on the last one)."""
    return {"query": query, "hits": [hit(h) for h in found], "offset": offset,
            "nextOffset": offset + len(found) if more else None}
