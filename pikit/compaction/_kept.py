"""Whether a fact survives a compaction: normalized matching against the context after it.

The context after a compaction (its summary, with the file lists, and the messages it kept)
is read as one text: user, assistant and custom text, tool call names and every string of
their arguments, tool result text, a bash execution's command and output, summaries.
That text and each fact are normalized the same way:

- Unicode NFKC, then case folded (``Foo`` matches ``foo``);
- typographic quotes, double quotes and backticks become ``'`` (``“x”``, ```x``` and ``'x'`` match);
- backslashes become ``/`` (``src\\a.py`` matches ``src/a.py``);
- every run of whitespace becomes one space, ends trimmed.

A file fact is normalized further: a ``./`` before the path is dropped (``./src/a.py`` is
found as ``src/a.py``, which ``./src/a.py`` in the context holds) and ``//`` becomes ``/``.
A number fact loses its thousands separators, and is found with or without them (``20000``
matches ``20,000``, ``20_000`` and ``20000``).

Then, per kind:

- ``read_file``, ``modified_file``: the path appears; or, for a path inside the session's
  working directory, the path relative to it appears (``/repo/src/a.py`` matches ``src/a.py``);
- ``identifier``, ``number``: the text appears as a whole word (not inside a longer name or
  number: ``parse`` does not match ``parser``, ``1.2`` does not match ``1.2.3``);
- ``url``: the address appears (a trailing ``/`` ignored);
- ``command``, ``error``: the text appears, or its first :data:`HEAD_CHARS` characters do
  (summaries quote a long command or error line by its beginning);
- ``constraint``: the sentence appears, or at least three quarters of its distinct words of
  four letters or more appear as words (at least two such words).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ._facts import Fact, _is_mapping, _strings, _texts

__all__ = ["HEAD_CHARS", "Haystack", "context_text", "normalize"]

HEAD_CHARS = 60
"""The beginning of a command or error line that counts as quoting it."""

_QUOTES = (("\u2018", "'"), ("\u2019", "'"), ("\u201a", "'"), ("\u201b", "'"), ("\u201c", "'"), ("\u201d", "'"),
           ("\u201e", "'"), ("\u00b4", "'"), ("`", "'"), ('"', "'"), ("\\", "/"))
_DOT_SLASH = re.compile(r"(?<![\w.])\./")
_SLASHES = re.compile(r"(?<!:)/{2,}")
_THOUSANDS = re.compile(r"(?<=\d)[,_](?=\d{3}(?!\d))")
_WORD = re.compile(r"\w{4,}")
_DIGITS = re.compile(r"\d{4,}")


def _plain(text: str) -> str:
    """The normalization the context and facts share (NFKC, case, quotes, backslashes, whitespace)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    for quote, plain in _QUOTES:  # (str.replace: much faster than str.translate on a long text)
        if quote in text:
            text = text.replace(quote, plain)
    return " ".join(text.split())


def normalize(text: str, kind: str | None = None) -> str:
    """A fact's text (of ``kind``) normalized for matching, by the rules of this module."""
    plain = _plain(text)
    if kind in ("read_file", "modified_file"):
        return _SLASHES.sub("/", _DOT_SLASH.sub("", plain))
    if kind == "number":
        return _THOUSANDS.sub("", plain)
    return plain


def _grouped(digits: str, separator: str) -> str:
    head = len(digits) % 3 or 3
    return separator.join([digits[:head], *(digits[i:i + 3] for i in range(head, len(digits), 3))])


def _spellings(needle: str) -> list[str]:
    """A number as the context may write it: as is, and with ``,`` or ``_`` thousands separators."""
    if not _DIGITS.fullmatch(needle):
        return [needle]
    return [needle, _grouped(needle, ","), _grouped(needle, "_")]


def _message_texts(message: Mapping[str, Any]) -> Iterator[str]:
    role = message.get("role")
    if role in ("compactionSummary", "branchSummary"):
        yield from _strings(message.get("summary"))
    elif role == "bashExecution":
        yield from _strings([message.get("command"), message.get("output")])
    else:
        yield from _texts(message.get("content"))
    if role == "assistant":
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if _is_mapping(block) and block.get("type") == "toolCall":
                yield from _strings([block.get("name"), block.get("arguments")])


def context_text(messages: Iterable[Mapping[str, Any]]) -> str:
    """The text of a context, as matching reads it (not yet normalized)."""
    return "\n".join(text for message in messages if _is_mapping(message)
                     for text in _message_texts(message))


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _whole(text: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``text`` as a whole word: not after a word character, not before one, nor
    before a separator and a digit (``1.2`` is not in ``1.2.3``). (str.find: a regular expression that starts
    with a lookbehind is tried at every position of a long text.)"""
    size = len(needle)
    start = text.find(needle)
    while start >= 0:
        after = text[start + size:start + size + 2]
        if not (start and _is_word_char(text[start - 1])) and not (after[:1] and _is_word_char(after[0])) \
                and not (after[:1] in (".", ",", "_") and after[1:2].isdigit()):
            return True
        start = text.find(needle, start + 1)
    return False


class Haystack:
    """The normalized text of a context, and the matching of facts against it."""

    def __init__(self, text: str, cwd: str | None = None) -> None:
        self.text = _plain(text)
        self._words: set[str] | None = None
        cwd = normalize(cwd).rstrip("/") if isinstance(cwd, str) and cwd.strip("/") else None
        self._cwd = cwd + "/" if cwd else None

    @property
    def words(self) -> set[str]:
        if self._words is None:
            self._words = set(_WORD.findall(self.text))
        return self._words

    def _word(self, needle: str) -> bool:
        return any(_whole(self.text, spelling) for spelling in _spellings(needle))

    def holds(self, fact: Fact) -> bool:
        """Whether ``fact`` survives in this context, by the rules of this module."""
        needle = normalize(fact.text, fact.kind)
        if not needle:
            return True
        kind = fact.kind
        if kind in ("read_file", "modified_file"):
            return needle in self.text or (self._cwd is not None and needle.startswith(self._cwd)
                                           and needle[len(self._cwd):] in self.text)
        if kind in ("identifier", "number"):
            return self._word(needle)
        if kind == "url":
            return needle.rstrip("/") in self.text
        if kind in ("command", "error"):
            return needle in self.text or (len(needle) > HEAD_CHARS and needle[:HEAD_CHARS] in self.text)
        if kind == "constraint":
            if needle in self.text:
                return True
            words = set(_WORD.findall(needle))
            return len(words) >= 2 and 4 * len(words & self.words) >= 3 * len(words)
        return needle in self.text
