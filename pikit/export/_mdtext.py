"""Session text in Markdown, shown and never interpreted: the escaping rule of the Markdown export.

The rule has two cases, and session text reaches the document no other way:

- **Blocks** (:func:`fence`): every message body, summary, system prompt, tool call and
  result is a fenced code block. Inside a fence CommonMark (and GitHub) interprets nothing:
  no HTML, no link, no heading, no emphasis. The fence is a run of backticks longer than the
  longest run inside the text (at least three), so no line of the text can close it, and its
  info string is one of pikit's language names, never session text.
- **Inline** (:func:`inline`): a title, an id, a path, a label or a tool name in a heading or
  a line of pikit's own. Line breaks become spaces (so the text stays on its line and cannot
  start a heading, a list or a fence) and every ASCII punctuation character is escaped with a
  backslash, which CommonMark allows for all of them: ``<`` cannot open a tag or a comment,
  ``[`` a link, ``&`` an entity, ``#``, ``*``, ``_``, ``|`` and the backtick mean nothing.

Both first make control characters, bidirectional controls and lone surrogates visible
(``pikit._inert.inert``: ``^[``, ``<U+202E>``; a carriage return shows as ``^M``, after
``\\r\\n`` line ends are read as ``\\n``), so nothing reorders or hides the text around it.
The text inside ``<summary>`` of a folded block is pikit's own (counts), HTML-escaped too.
"""

from __future__ import annotations

import re
import string

from .._inert import inert

__all__ = ["fence", "inline"]

_PUNCTUATION = re.compile("([" + re.escape(string.punctuation) + "])")
_BACKTICKS = re.compile("`+")
_SPACES = re.compile(r"[\n\t\x0b\x0c]+")


def _shown(text: str) -> str:
    return inert(text.replace("\r\n", "\n"))


def inline(text: object) -> str:
    """``text`` on one line of Markdown, every ASCII punctuation character backslash-escaped."""
    flat = _SPACES.sub(" ", _shown(str(text)))
    return _PUNCTUATION.sub(r"\\\1", flat)


def fence(text: str, language: str = "text") -> str:
    """``text`` as a fenced code block (ending in a newline), fenced longer than any backtick run in it."""
    body = _shown(text)
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    bar = "`" * max(3, longest + 1)
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{bar}{language}\n{body}{bar}\n"
