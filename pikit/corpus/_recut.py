"""The texts a corpus index holds cut short, for an export that redacts: redacted whole, then cut.

The index keeps a session's first user message to ``pikit.corpus._scan.TEXT_LIMIT``
characters, its title to a line, and each fact of an evaluation to
``pikit.compaction._facts.MAX_FACT_CHARS``: a token through the cut would leave a piece no
rule knows. A first user message at the limit is read again from its file and redacted whole
before it is cut; the title is made again from the redacted name, path and message; a text
whose file changed since the scan, and a cut fact, lose the word at the cut once redacted.
"""

from __future__ import annotations

from collections.abc import Callable

from .._context.describe import display_title
from ..compaction._facts import MAX_FACT_CHARS
from ..errors import PikitError
from ..jsjson import without_lone_surrogates
from ._scan import TEXT_LIMIT
from ._searchtext import content_text

#: How an export redacts one value (``None`` stays ``None``), counting what it replaced.
Redact = Callable[[str | None], str | None]

__all__ = ["Recut"]


class Recut:
    """Redact-then-cut for one export's columns (DuckDB calls these once per row)."""

    def __init__(self, text: Redact) -> None:
        self.text = text
        self._first: dict[str, str | None] = {}

    def first_user(self, path: str | None, stored: str | None) -> str | None:
        """``first_user_message``: redacted whole (read again when the index holds it cut), then cut."""
        if stored is None or path is None:
            return self.text(stored)
        if path not in self._first:
            self._first[path] = self._redacted_first(path, stored)
        return self._first[path]

    def _redacted_first(self, path: str, stored: str) -> str | None:
        if len(stored) < TEXT_LIMIT:  # never cut
            return self.text(stored)
        whole = _first_user_text(path)
        if whole is None or whole[:TEXT_LIMIT] != stored:  # the file changed since the scan
            return _without_cut_word(self.text(stored) or "")
        return (self.text(whole) or "")[:TEXT_LIMIT]

    def title(self, stored: str | None, name: str | None, path: str | None, first: str | None,
              session_id: str | None) -> str | None:
        """``title``: made again, as the scan makes it, from the redacted name, path and first user message."""
        if stored is None or stored != display_title(name, path, first, session_id=session_id):
            return _without_cut_word(self.text(stored) or "") if stored else stored
        return display_title(self.text(name), self.text(path), self.first_user(path, first),
                             session_id=session_id)

    def fact(self, text: str | None) -> str | None:
        """A fact's ``text``: redacted; one the extraction cut loses its last word (it may be a token's start)."""
        redacted = self.text(text)
        if text is None or redacted is None or len(text) < MAX_FACT_CHARS:
            return redacted
        return _without_cut_word(redacted)


def _first_user_text(path: str) -> str | None:
    """The first user message's text in ``path``, whole, as the scan takes it (None if it cannot be read)."""
    from .._session import load

    try:
        session = load(path)
    except PikitError:
        return None
    for entry in session.entries:
        if entry.type == "message" and entry.role == "user":
            message = entry.message or {}
            text = without_lone_surrogates(content_text(message.get("content")))
            if text:
                return text
    return None


def _without_cut_word(text: str) -> str:
    """``text`` without its last word (what follows its last white space), which a cut may have split."""
    head = text.rstrip()
    at = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return head[:at].rstrip() + "…" if at > 0 else "…"
