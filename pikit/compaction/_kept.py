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
  working directory, the path relative to it (``/repo/src/a.py`` matches ``src/a.py``); or a
  package-relative tail of two parts or more (``core/agent-session.ts``); or its base name as a
  word, when no other file of the span has that base name (``agent-session.ts``). A
  ``modified_file`` is not kept by a ``<read-files>`` list alone (a file read is not a change kept);
- ``identifier``: the name appears as a whole word, with or without ``()`` and arguments, or its
  last part after a qualifier (``Mod.foo()`` is kept by ``foo``; ``foo`` by ``foo()`` or ``Mod.foo``);
- ``number``: the text appears as a whole word (not inside a longer name or number: ``1.2``
  does not match ``1.2.3``), with or without thousands separators;
- ``url``: the address appears (a trailing ``/`` ignored);
- ``command``: the command appears, without the ``cd DIR &&`` before it; or one passage of the
  context (a sentence or line and the one after it) holds its program and two thirds of its other
  content words (``npm run check`` kept by "run `npm run check` after each step");
- ``task``, ``decision``, ``finding``, ``progress``, ``constraint``, ``error``: the text appears, or
  one passage holds at least :data:`SHARE` of its content words (three letters or more, not a stop
  word, plural and verb endings dropped, a path by its base name), at least two of them, and every
  code name of it (a path, ``KeyError``, ``test_parse``, ``TS2339``: a paraphrase keeps the names).
  There is no prefix rule: a long command or error quoted by its first characters only is judged
  by its content words like any other.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ._factrules import command_core, content_words, sentences
from ._facts import Fact, _is_mapping, _strings, _texts

__all__ = ["SHARE", "Haystack", "context_text", "normalize"]

SHARE = 0.75
"""The share of a sentence's content words one passage of the context must hold for it to be kept."""

_PROSE_KINDS = frozenset(("task", "decision", "finding", "progress", "constraint", "error"))
_QUOTES = (("\u2018", "'"), ("\u2019", "'"), ("\u201a", "'"), ("\u201b", "'"), ("\u201c", "'"), ("\u201d", "'"),
           ("\u201e", "'"), ("\u00b4", "'"), ("`", "'"), ('"', "'"), ("\\", "/"))
_DOT_SLASH = re.compile(r"(?<![\w.])\./")
_SLASHES = re.compile(r"(?<!:)/{2,}")
_THOUSANDS = re.compile(r"(?<=\d)[,_](?=\d{3}(?!\d))")
_DIGITS = re.compile(r"\d{4,}")
_READ_LIST = re.compile(r"<read-files>.*?</read-files>", re.DOTALL)
_CALL = re.compile(r"\(.*\)$")
_CODE_WORD = re.compile(r"\b[A-Za-z_]\w*(?:[_.]\w+|[a-z][A-Z]\w*|\d\w*)\b")


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
    if kind == "command":
        return _plain(command_core(text))
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
    return "\n\n".join(text for message in messages if _is_mapping(message)
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


def _sentences(text: str) -> Iterator[str]:
    """The sentences of a (not yet normalized) text, line by line."""
    for line in text.split("\n"):
        if ". " in line or "? " in line or "! " in line:
            yield from sentences(line)
        elif line and not line.isspace():
            yield line


def _path_tails(path: str) -> list[str]:
    """The tails of a path of two parts or more, longest first (``a/b/c.py`` → ``b/c.py``)."""
    parts = [p for p in path.split("/") if p]
    return ["/".join(parts[i:]) for i in range(1, len(parts) - 1)]


class Haystack:
    """The normalized text of a context, and the matching of facts against it.

    ``ambiguous`` holds the base names several files of the span share: such a base name alone
    does not keep a file.
    """

    def __init__(self, text: str, cwd: str | None = None, ambiguous: Iterable[str] = ()) -> None:
        self.raw = text
        self.text = _plain(text)
        self._changes: str | None = None
        self._index: dict[str, list[int]] | None = None
        self.ambiguous = {_plain(name) for name in ambiguous}
        cwd = normalize(cwd).rstrip("/") if isinstance(cwd, str) and cwd.strip("/") else None
        self._cwd = cwd + "/" if cwd else None

    @property
    def changes(self) -> str:
        """The normalized text without its ``<read-files>`` lists."""
        if self._changes is None:
            self._changes = _READ_LIST.sub(" ", self.text) if "<read-files>" in self.text else self.text
        return self._changes

    @property
    def index(self) -> dict[str, list[int]]:
        """Content word → the sentences of the context holding it (by number)."""
        if self._index is None:
            index: dict[str, list[int]] = {}
            for number, sentence in enumerate(_sentences(self.raw)):
                for word in content_words(sentence):
                    index.setdefault(word, []).append(number)
            self._index = index
        return self._index

    def _passages(self, word: str) -> set[int]:
        """The passages holding ``word``: passage ``n`` is sentence ``n`` and the one after it."""
        numbers = self.index.get(word, ())
        return {*numbers, *(n - 1 for n in numbers)}

    def passage_share(self, words: set[str], required: set[str] = frozenset()) -> float:  # type: ignore[assignment]
        """The largest share of ``words`` one passage holds, among the passages that hold every ``required`` word."""
        if not words:
            return 0.0
        counts = Counter(number for word in words for number in self._passages(word))
        for word in required:
            holding = self._passages(word)
            counts = Counter({n: c for n, c in counts.items() if n in holding})
        return max(counts.values(), default=0) / len(words)

    def _word(self, needle: str) -> bool:
        return any(_whole(self.text, spelling) for spelling in _spellings(needle))

    def _file(self, needle: str, text: str) -> bool:
        if needle in text or (self._cwd is not None and needle.startswith(self._cwd)
                              and needle[len(self._cwd):] in text):
            return True
        if any(f"/{tail}" in text or _whole(text, tail) for tail in _path_tails(needle)):
            return True
        base = needle.rsplit("/", 1)[-1]
        return "." in base.strip(".") and base not in self.ambiguous and _whole(text, base)

    def _identifier(self, needle: str) -> bool:
        name = _CALL.sub("", needle)
        last = re.split(r"\.|::|#", name)[-1]
        return any(len(n) >= 3 and _whole(self.text, n) for n in dict.fromkeys((needle, name, last)))

    def _command(self, needle: str) -> bool:
        if needle in self.text:
            return True
        words = content_words(needle)
        if len(words) < 2:
            return False
        program = needle.split(" ", 1)[0].rsplit("/", 1)[-1]
        return _whole(self.text, program) and self.passage_share(words) * 3 >= 2

    def holds(self, fact: Fact) -> bool:
        """Whether ``fact`` survives in this context, by the rules of this module."""
        needle = normalize(fact.text, fact.kind)
        if not needle:
            return True
        kind = fact.kind
        if kind == "modified_file":
            return self._file(needle, self.changes)
        if kind == "read_file":
            return self._file(needle, self.text)
        if kind == "identifier":
            return self._identifier(needle)
        if kind == "number":
            return self._word(needle)
        if kind == "url":
            return needle.rstrip("/") in self.text
        if kind == "command":
            return self._command(needle)
        if kind in _PROSE_KINDS:
            if needle in self.text:
                return True
            words = content_words(fact.text)
            required = content_words(" ".join(_CODE_WORD.findall(fact.text)))
            return len(words) >= 2 and self.passage_share(words, required) >= SHARE
        return needle in self.text
