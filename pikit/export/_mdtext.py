"""Session text in Markdown, shown and never interpreted: the escaping rule of the Markdown export.

The rule has three cases, and session text reaches the document no other way:

- **Prose** (:func:`prose`): what people and models wrote as text (a user's message, an
  assistant's text and thinking, a summary, the system prompt) is a block quote whose lines
  are escaped as inline text is (below), so it wraps like prose instead of scrolling
  sideways. Its line breaks stay (a backslash at the end of a line is CommonMark's hard
  break), blank lines part paragraphs, and leading spaces become no-break spaces, so no line
  can turn into an indented code block.
- **Blocks** (:func:`fence`): every tool call and result, and every command and its output,
  is a fenced code block. Inside a fence CommonMark (and GitHub) interprets nothing:
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

__all__ = ["fence", "inline", "prose"]

_PUNCTUATION = re.compile("([" + re.escape(string.punctuation) + "])")
_BACKTICKS = re.compile("`+")
_SPACES = re.compile(r"[\n\t\x0b\x0c]+")


def _shown(text: str) -> str:
    return inert(text.replace("\r\n", "\n"))


def inline(text: object) -> str:
    """``text`` on one line of Markdown, every ASCII punctuation character backslash-escaped."""
    flat = _SPACES.sub(" ", _shown(str(text)))
    return _PUNCTUATION.sub(r"\\\1", flat)


def prose(text: str) -> str:
    """``text`` as a block quote of escaped lines (ending in a newline): it wraps, and it means nothing but itself."""
    lines = _shown(text).strip("\n").split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        body = line.rstrip()
        if not body:
            out.append(">")
            continue
        words = body.lstrip(" \t")
        lead = "\u00a0" * (len(body) - len(words))
        follows = i + 1 < len(lines) and lines[i + 1].strip() != ""
        out.append("> " + lead + _PUNCTUATION.sub(r"\\\1", words) + ("\\" if follows else ""))
    return "\n".join(out) + "\n"


def fence(text: str, language: str = "text") -> str:
    """``text`` as a fenced code block (ending in a newline), fenced longer than any backtick run in it."""
    body = _shown(text)
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    bar = "`" * max(3, longest + 1)
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{bar}{language}\n{body}{bar}\n"
