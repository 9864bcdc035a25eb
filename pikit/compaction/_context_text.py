"""The text of a context as the evaluation reads it: everything it holds (:func:`context_text`), what it says in
words (:func:`prose_text`), where a reworded fact is looked for, the normalization it and the facts share, and its
lines (:class:`ContextLines`), where a file is said to have changed."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from itertools import accumulate
from typing import Any

from ._facts import _is_mapping, _strings, _texts

__all__ = ["ContextLines", "context_text", "prose_text"]

_CHANGE = re.compile(r"\b(?:modified|changed?|edited|wrote|written|created|added|updated|fixed|renamed|moved|deleted|"
                     r"removed|rewr\w+|new)\b|\blocal to\b|✅|\[x\]")
_HEADING = re.compile(r"^(?:#.*|\*\*[^*]+\*\*:?|[^()=]{1,60}:)$")
_QUOTES = (("\u2018", "'"), ("\u2019", "'"), ("\u201a", "'"), ("\u201b", "'"), ("\u201c", "'"), ("\u201d", "'"),
           ("\u201e", "'"), ("\u00b4", "'"), ("`", "'"), ('"', "'"), ("\\", "/"))


def _plain(text: str) -> str:
    """The normalization the context and facts share (NFKC, case, quotes, backslashes, whitespace).

    A text outside ASCII is normalized paragraph by paragraph (a blank line, which the normalization makes one
    space, is where nothing composes or folds across), so that the paragraphs in ASCII take the fast paths: in a
    context, usually all but a few."""
    if "\n\n" in text and not text.isascii():
        return " ".join(filter(None, map(_plain_part, text.split("\n\n"))))
    return _plain_part(text)


def _plain_part(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    for quote, plain in _QUOTES:  # (str.replace: much faster than str.translate on a long text)
        if quote in text:
            text = text.replace(quote, plain)
    return " ".join(text.split())


def _casefold(text: str) -> str:
    """``text.casefold()``, paragraph by paragraph for a text outside ASCII (case folding reads one character at a
    time, and a paragraph in ASCII folds fast)."""
    if text.isascii() or "\n\n" not in text:
        return text.casefold()
    return "\n\n".join(part.casefold() for part in text.split("\n\n"))


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
                arguments = block.get("arguments")
                path = arguments.get("path") if _is_mapping(arguments) else None
                if block.get("name") in ("write", "edit") and isinstance(path, str):
                    yield f"<modified-files>\n{path}\n</modified-files>"


def _prose_texts(message: Mapping[str, Any]) -> Iterator[str]:
    role = message.get("role")
    if role in ("compactionSummary", "branchSummary"):
        yield from _strings(message.get("summary"))
    elif role == "bashExecution":
        yield from _strings(message.get("command"))
    elif role in ("user", "assistant", "custom"):
        yield from _texts(message.get("content"))
    if role == "assistant":
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if _is_mapping(block) and block.get("type") == "toolCall" and _is_mapping(block.get("arguments")):
                yield from _strings(block["arguments"].get("command"))


def prose_text(messages: Iterable[Mapping[str, Any]]) -> str:
    """What the context says in words, where a reworded fact is looked for: summaries, user, assistant and
    custom text, and the commands run (not tool outputs or files' text, which hold facts word for word)."""
    return "\n\n".join(text for message in messages if _is_mapping(message)
                       for text in _prose_texts(message))


def context_text(messages: Iterable[Mapping[str, Any]]) -> str:
    """The text of a context, as matching reads it (not yet normalized)."""
    return "\n\n".join(text for message in messages if _is_mapping(message)
                       for text in _message_texts(message))


class ContextLines:
    """The lines of a context's text, case folded (normalized where they are read): the lines that hold a word,
    the file list a line is in, and whether a heading above a line says something changed."""

    def __init__(self, text: str) -> None:
        folded = _casefold(text)
        self._lines = folded.split("\n")
        self._folded = folded
        #: Where each line starts in the folded text, and one past its end.
        self._starts = [start + i for i, start in enumerate(accumulate(map(len, self._lines), initial=0))]
        marks = []
        for tag in ("<read-files>", "</read-files>", "<modified-files>", "</modified-files>"):
            marks += [(number, None if tag[1] == "/" else tag[1:-1])
                      for number in self.holding(tag) if self._lines[number].strip() == tag]
        marks.sort(key=lambda mark: mark[0])
        self._marks = ([number for number, _ in marks], [block for _, block in marks])
        self._headings: dict[int, bool | None] = {}

    def __getitem__(self, number: int) -> str:
        return self._lines[number]

    def holding(self, word: str) -> Iterator[int]:
        """The numbers of the lines that hold ``word`` (case folded), in order."""
        text, starts = self._folded, self._starts
        found = text.find(word)
        while found >= 0:
            number = bisect_right(starts, found) - 1
            yield number
            found = text.find(word, starts[number + 1])

    def block(self, number: int) -> str | None:
        """The file list (``"read-files"`` or ``"modified-files"``) line ``number`` is in (``None``: none); a list's
        opening line is in it."""
        at = bisect_right(self._marks[0], number) - 1
        return self._marks[1][at] if at >= 0 else None

    def _heading(self, number: int) -> bool | None:
        """Whether line ``number`` is a heading (:data:`_HEADING`) that says something changed (:data:`_CHANGE`);
        ``None``: it is not a heading. Read once."""
        if number not in self._headings:
            line, says = self._lines[number], None
            stripped = line.strip()
            # (normalizing an ASCII line changes no character that makes a heading: look before normalizing)
            if stripped and (not line.isascii() or stripped[0] == "#" or stripped[:2] == "**" or stripped[-1] == ":"):
                plain = _plain(line)
                if _HEADING.match(plain):
                    says = _CHANGE.search(plain) is not None
            self._headings[number] = says
        return self._headings[number]

    def under_change(self, number: int) -> bool:
        """Whether line ``number`` is under a heading that says something changed: the nearest heading among the 40
        lines above it says so."""
        for above in range(number - 1, max(0, number - 40) - 1, -1):
            says = self._heading(above)
            if says is not None:
                return says
        return False
