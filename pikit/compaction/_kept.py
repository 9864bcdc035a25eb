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
  ``modified_file`` is kept only where the context names it as changed: in a ``<modified-files>`` list
  (or a kept ``write`` or ``edit`` call on it), or in a sentence, or under the heading of a list, that
  says it changed (*modified*, *changed*, *edited*, *created*, *added*, *updated*, *fixed*, *renamed*, *moved*,
  *deleted*, *new*, *the change stays local to*, ✅; a heading is a Markdown heading, a bold line, or a short
  line ending in ``:``): a ``<read-files>`` list or a mention ("`a.py`
  keeps the cache") is not a change kept;
- ``identifier``: the name appears as a whole word, with or without ``()`` and arguments, or its
  last part after a qualifier (``Mod.getFoo()`` is kept by ``getFoo``; ``foo`` by ``foo()`` or ``Mod.foo``),
  or behind ``get`` or ``set`` (``SessionStats`` by ``getSessionStats()``). A part that is a plain lower-case
  word (``session.compact()``, ``branch()``) is found only where the context writes it as code: called
  (``compact(``), qualified (``.compact``) or quoted; "we compact the log" does not keep it;
- ``number``: the text appears as a whole word (not inside a longer name or number: ``1.2``
  does not match ``1.2.3``), with or without thousands separators;
- ``url``: the address appears (a trailing ``/`` ignored);
- ``command``: the command appears, without the ``cd DIR &&`` before it; or its program appears and
  one sentence of the context says it (below): ``npm run check`` is kept by "run `npm run check` after
  each step";
- ``task``, ``decision``, ``finding``, ``progress``, ``constraint``, ``error``: the text appears, or
  one sentence (or line) of what the context says in words (summaries, user and assistant text,
  commands; not tool outputs, which hold a fact word for word or not at all) says it. That
  sentence, with the headings it is under (its Markdown section's, and the line ending in ``:``
  that opens its list), holds:

  - at least :data:`SHARE` (``_prose_index``) of its content words (three letters or more, not a stop word, plural and
    verb endings dropped and a final *e* with them, so *write* and *writing* agree, a path by its base
    name, a range of numbered items as each of them: ``WP1-WP3`` holds ``WP2``; in the context, a
    camel-case name by its words as well: ``setModel(model)`` holds *set*), and at least two of
    them, or its only code name. *etc*, *yet*, prepositions (*around*, *via*) and the stems of
    contractions (*don't*) are not content.
    Words of the work itself (*done*, *add*, *create*, *method*, *file*, *update*) are not counted where
    two others are left: ``done: Add `setModel()` method`` is kept by a sentence naming
    ``setModel(model)``, "Don't edit any files yet" by "no file edits until the user has seen the findings";
  - every code name of it (a name in backticks, a path, hyphens and all, ``KeyError``, ``test_parse``, ``TS2339``: a
    paraphrase keeps the names) and every number (``Tests 8 failed | 34 passed`` is not kept by
    ``Tests 3 failed | 16 passed``);

  and it is not a variant of the same sentence with other words in its slots. Word for word, the
  two sentences are either nearly the same (a similarity of 0.95 or more, the similarity being twice the
  most words they share in the same order, adjacent or not, over the words of both: a word added or dropped) or
  clearly reworded (below 0.6); in between, the sentence is the same template saying something else
  ("Nothing else uses the index" is not kept by "Nothing else uses the session"), unless it holds the
  fact word for word with words added and none replaced ("Express 4 + TypeScript on Node 20" keeps
  "Express + TypeScript"). Nor does a text
  three times as long that happens to hold its words keep it. There is no prefix rule: a long command
  or error quoted by its first characters only is judged like any other text.

  Three more ways of saying it, as a reader counts them:

  - a ``progress`` fact naming numbered work items (``WP4``, ``step 2``, ``steps 3 and 4``) is kept where
    every one of them is in a sentence of the context that says it is done (*done*, *complete*,
    *finished*, ✅, ``[x]``, or under a heading that says so; not one saying *not*, *yet*, *next* or
    ``[ ]``), one by one or in a range: "Completed Work (WP1-WP16)" keeps "WP15: Create InteractiveMode";
  - a ``progress`` fact that made something (*create*, *add*, *write*, *copy*, *rename*, *move*,
    *extract*: ``done: Copy main.ts to main-new.ts``) is kept where the context names every code name of
    it and a sentence that says something is done or changed (*created*, *new*, ✅ …) names one of them;
  - a ``decision`` is kept where one sentence names every code name of it, two or more: the names carry
    a choice between named things (``InteractiveMode` instead of `TuiRenderer``` is kept by "Rename
    class `TuiRenderer` → `InteractiveMode`").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Set as AbstractSet
from functools import lru_cache

from rapidfuzz.distance import Indel

from ._context_text import _CHANGE, ContextLines, _plain
from ._factrules import command_core, has_digit, sentences
from ._facts import Fact
from ._multisearch import occurring
from ._prose_index import _RANGE_SPAN, ProseIndex, _ranged, _sequence, _words

__all__ = ["Haystack", "literals", "normalize", "vocabulary"]

_SAME = 0.95
_VARIANT = 0.6
_CANDIDATES = 4
_GENERIC = frozenset(_words("done add added create created method function file files update updated "
                                   "implement implemented new class interface getter setter"))
_FILLER = frozenset(("etc", "yet", "don", "doesn", "didn", "isn", "aren", "wasn", "won", "shouldn", "wouldn",
                     "couldn", "haven", "hasn", "around", "along", "across", "within", "toward", "upon", "via", "onto",
                     "among", "beside", "beyond"))
_ITEM = re.compile(r"\b([A-Z]{1,3})(\d{1,3})(?:\s*[-\u2013]\s*\1?(\d{1,3}))?\b")
_STEP = re.compile(r"\b(step|phase|stage|part|milestone)s?\s+(\d{1,3})(?:\s*(?:[-\u2013]|and|to)\s*(\d{1,3}))?\b",
                   re.IGNORECASE)
_DONE = re.compile(r"\b(?:done|complete[ds]?|finished)\b|\u2705|\[x\]", re.IGNORECASE)
_MADE = re.compile(r"^(?:done:\s*)?(?:create|add|write|wrote|copy|copied|rename|move|extract)(?:s|d|ed)?\b",
                   re.IGNORECASE)
#: A getter's or setter's name at a word's start (not after a word character). (It starts with one set of
#: characters, which the engine finds quickly; a pattern starting with ``\b`` is tried at every character.)
_ACCESSOR = re.compile(r"[gs](?<!\w[gs])et(\w+)")
_UNDONE = re.compile(r"\b(?:not|no|yet|todo|remaining|next)\b|\[ \]", re.IGNORECASE)

_PROSE_KINDS = frozenset(("task", "decision", "finding", "progress", "constraint", "error"))
_DOT_SLASH = re.compile(r"(?<![\w.])\./")
_SLASHES = re.compile(r"(?<!:)/{2,}")
_THOUSANDS = re.compile(r"(?<=\d)[,_](?=\d{3}(?!\d))")
_DIGITS = re.compile(r"\d{4,}")
_READ_LIST = re.compile(r"<read-files>.*?</read-files>", re.DOTALL)
_MODIFIED_LIST = re.compile(r"<modified-files>(.*?)</modified-files>", re.DOTALL)
_CALL = re.compile(r"\(.*\)$")
_BACKTICKED = re.compile(r"`([^`\s]{3,})`")
_CODE_WORD = re.compile(r"\b[A-Za-z_][\w\-]*(?:[_.]\w+|[a-z][A-Z]\w*|\d\w*)\b")


@lru_cache(maxsize=1 << 14)  # (a fact's text is at most 200 characters; a span repeats what earlier ones said)
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


def _path_tails(path: str) -> list[str]:
    """The tails of a path of two parts or more, longest first (``a/b/c.py`` → ``b/c.py``)."""
    parts = [p for p in path.split("/") if p]
    return ["/".join(parts[i:]) for i in range(1, len(parts) - 1)]


def _items(text: str) -> set[tuple[str, int]]:
    """The numbered work items ``text`` names, ranges spelled out: ``WP1``, ``WP1-WP3``, ``step 2``, ``steps 3 and
    4``, ``phases 1-2`` (a label of one to three capitals glued to its number, or a step, phase, stage, part or
    milestone)."""
    out: set[tuple[str, int]] = set()
    if not has_digit(text):
        return out  # (no number, no item: found faster than by the patterns, which start with ``\b``)
    for pattern in (_ITEM, _STEP):
        for match in pattern.finditer(text):
            first = int(match[2])
            last = int(match[3]) if match[3] and first < int(match[3]) <= first + _RANGE_SPAN else first
            out.update((match[1].casefold(), n) for n in range(first, last + 1))
    return out


def _code_names(text: str) -> list[str]:
    """The code names of a (not yet normalized) text: names in backticks and words written as code, normalized,
    without a call's ``()`` and arguments."""
    return [name for name in dict.fromkeys(_CALL.sub("", _plain(name)) for name in
                                           [*_BACKTICKED.findall(text), *_CODE_WORD.findall(text)]) if name]


def _as_code(text: str, name: str) -> bool:
    """Whether the plain word ``name`` occurs in ``text`` as a whole word written as code: called (``name(``),
    qualified (``.name``) or quoted (``'name'``)."""
    if f"{name}(" not in text and f".{name}" not in text and f"'{name}'" not in text:
        return False
    size = len(name)
    start = text.find(name)
    while start >= 0:
        before, after = text[start - 1:start] if start else "", text[start + size:start + size + 1]
        if not _is_word_char(before or " ") and not _is_word_char(after or " ") \
                and (after == "(" or before == "." or before == after == "'"):
            return True
        start = text.find(name, start + 1)
    return False


@lru_cache(maxsize=1 << 14)
def _terms(text: str) -> tuple[frozenset[str], frozenset[str], tuple[str, ...], frozenset[str]]:
    """What :meth:`Haystack.says` and :func:`vocabulary` read of a sentence (a fact's text is read several
    times): its content words, ranges spelled out (:func:`_ranged`), those of its code names, and its
    :func:`_sequence`."""
    code = _words(" ".join([*_CODE_WORD.findall(text), *_BACKTICKED.findall(text)]))
    return (frozenset(_ranged(_words(text))), frozenset(code), *_sequence(text))


def vocabulary(facts: Iterable[Fact]) -> set[str]:
    """The content words of ``facts`` that matching looks up (those of sentences and commands)."""
    out: set[str] = set()
    for fact in facts:
        if fact.kind in _PROSE_KINDS or fact.kind == "command":
            words, code, _, _ = _terms(fact.text)
            out |= words
            out |= code
    return out


def literals(facts: Iterable[Fact]) -> set[str]:
    """The normalized texts of ``facts`` that matching looks for word for word in the whole context (those of
    sentences and commands)."""
    return {needle for fact in facts if fact.kind in _PROSE_KINDS or fact.kind == "command"
            if (needle := normalize(fact.text, fact.kind))}


class Haystack:
    """The normalized text of a context, and the matching of facts against it.

    ``ambiguous`` holds the base names several files of the span share: such a base name alone
    does not keep a file. ``vocabulary``, when given, holds every content word the facts to match
    have (:func:`vocabulary`): the context's sentences are indexed by those words only. ``prose``
    (:func:`prose_text`), when given, is the part of the context a reworded sentence is looked for in.
    ``literals`` (:func:`literals`), when given, are the texts looked for word for word, all in one pass over the
    text when the first is.
    """

    def __init__(self, text: str, cwd: str | None = None, ambiguous: Iterable[str] = (),
                 vocabulary: set[str] | None = None, prose: str | None = None,
                 literals: AbstractSet[str] = frozenset()) -> None:
        self.raw = text
        self.text = _plain(text)
        self._changes: str | None = None
        self._prose_index: ProseIndex | None = None
        self._accessed: set[str] | None = None
        self._lines: ContextLines | None = None
        self._modified_lists: list[str] | None = None
        self._done: tuple[set[tuple[str, int]], str] | None = None
        self._literals = literals
        self._occurring: set[str] | None = None
        self.ambiguous = {_plain(name) for name in ambiguous}
        self.vocabulary = vocabulary
        self.prose = prose if prose is not None else text
        cwd = normalize(cwd).rstrip("/") if isinstance(cwd, str) and cwd.strip("/") else None
        self._cwd = cwd + "/" if cwd else None

    @property
    def changes(self) -> str:
        """The normalized text without its ``<read-files>`` lists."""
        if self._changes is None:
            self._changes = _READ_LIST.sub(" ", self.text) if "<read-files>" in self.text else self.text
        return self._changes

    @property
    def prose_index(self) -> ProseIndex:
        """The sentences of what the context says in words, indexed by the content words matching looks up."""
        if self._prose_index is None:
            self._prose_index = ProseIndex(self.prose, self.vocabulary)
        return self._prose_index

    def says(self, text: str) -> bool:
        """Whether one sentence of the context says what ``text`` says (see the module docstring)."""
        ranged, required, sequence, numbers = _terms(text)
        words = ranged - _FILLER
        if len(words - _GENERIC) >= 2 or words - _GENERIC <= required:
            words -= _GENERIC
        if len(words) < 2 and not (words and words <= required):
            return False
        index = self.prose_index
        for _, number in index.candidates(words, required)[:_CANDIDATES]:
            tokens, held = index.tokens(number)
            if len(tokens) > 3 * len(sequence) + 10 or not numbers <= held:
                continue
            total = len(sequence) + len(tokens)
            apart = Indel.distance(sequence, tokens)  # (words to drop or add: total - 2 × the common subsequence)
            if apart <= (1 - _SAME) * total or apart > (1 - _VARIANT) * total or total - apart == 2 * len(sequence):
                return True  # (nearly the same, clearly reworded, or the same with words added and none replaced)
        return False

    @property
    def done(self) -> tuple[set[tuple[str, int]], str]:
        """What the context says is done: the numbered work items (:func:`_items`) of its sentences that say they are
        done (*done*, *complete*, *finished*, ✅, ``[x]``, or under a heading that says so, and not *not*, *yet*,
        *next* or ``[ ]``), and the normalized text of those sentences and of the sentences that say something
        changed (:data:`_CHANGE`)."""
        if self._done is None:
            items: set[tuple[str, int]] = set()
            texts = []
            marks: dict[str, tuple[bool, bool]] = {}  # heading → (says done, says changed), read once
            index = self.prose_index
            for sentence, heading in zip(index.sentences, index.headings, strict=True):
                if _UNDONE.search(sentence):
                    continue
                mark = marks.get(heading)
                if mark is None:
                    mark = marks[heading] = (bool(_DONE.search(heading)), bool(_CHANGE.search(heading.casefold())))
                if mark[0] or _DONE.search(sentence):
                    items |= _items(sentence)
                    texts.append(sentence)
                elif mark[1] or _CHANGE.search(sentence.casefold()):
                    texts.append(sentence)
            self._done = (items, _plain("\n".join(texts)))
        return self._done

    def _named(self, name: str, text: str) -> bool:
        """Whether ``text`` (normalized) names ``name``: a path in any form :meth:`_forms` allows, a qualified name
        by its last part."""
        forms = self._forms(name)
        if "/" not in name:
            forms.append(re.split(r"\.|::|#", name)[-1])
        return any(len(form) >= 3 and (_whole(text, form) or f"/{form}" in text) for form in forms)

    def _done_item(self, text: str, outline: tuple[str, ...] = ()) -> bool:
        """Whether the context lists a progress fact as done: each numbered item it names (``WP4``, ``step 2``) is
        among the items the context says are done, or, naming none, each one the nearest heading it was ticked under
        that names some names (``done: Add `setModel()` method`` under ``### WP5: Model management`` is done where
        WP5 is); or, naming none, it says it made something (created, added, wrote, copied, renamed, moved or
        extracted: ``done: Copy `a.ts` to `b.ts` ``), the context names each code name of it, and a sentence of the
        context that says something is done or changed names one of them."""
        items = _items(text) or next((named for heading in outline if (named := _items(heading))), set())
        if items:
            return items <= self.done[0]
        if _MADE.match(text.strip()) is None:
            return False
        names = _code_names(text)
        return any(self._named(name, self.done[1]) for name in names) and all(self._named(name, self.text)
                                                                               for name in names)

    def _names_together(self, text: str) -> bool:
        """Whether one sentence of the context names every code name of ``text``, two or more (a choice between
        named things is carried by the names: ``Use `B` instead of `A` `` by "rename `A` → `B`")."""
        required = set(_terms(text)[1])
        return len(required) >= 2 and bool(self.prose_index.candidates(required, required))

    def _holds_text(self, needle: str) -> bool:
        """Whether the normalized text holds ``needle`` (normalized) word for word."""
        if needle in self._literals:
            if self._occurring is None:
                self._occurring = occurring(self.text, self._literals)
            return needle in self._occurring
        return needle in self.text

    def _word(self, needle: str) -> bool:
        return any(_whole(self.text, spelling) for spelling in _spellings(needle))

    def _forms(self, needle: str) -> list[str]:
        """The ways the context may name a path: whole, relative to the working directory, a tail of two parts
        or more, and its base name when no other file of the span has it."""
        forms = [needle]
        if self._cwd is not None and needle.startswith(self._cwd):
            forms.append(needle[len(self._cwd):])
        forms += _path_tails(needle)
        base = needle.rsplit("/", 1)[-1]
        if "." in base.strip(".") and base not in self.ambiguous:
            forms.append(base)
        return forms

    def _file(self, needle: str, text: str) -> bool:
        return any(form in text if i == 0 else _whole(text, form) or f"/{form}" in text
                   for i, form in enumerate(self._forms(needle)))

    @property
    def modified_lists(self) -> list[str]:
        """The bodies of the context's ``<modified-files>`` lists (normalized), found once."""
        if self._modified_lists is None:
            self._modified_lists = _MODIFIED_LIST.findall(self.text) if "<modified-files>" in self.text else []
        return self._modified_lists

    def _changed(self, needle: str) -> bool:
        """Whether the context names ``needle`` as changed: in a ``<modified-files>`` list (a kept ``write`` or
        ``edit`` call counts as one), or on a line, or under a heading, that says so (see the module docstring)."""
        forms = self._forms(needle)
        if any(form in block for block in self.modified_lists for form in forms):
            return True
        if self._lines is None:
            self._lines = ContextLines(self.raw)
        lines = self._lines
        for i in lines.holding(needle.rsplit("/", 1)[-1]):  # (every form ends with the base name)
            block = lines.block(i)
            if block == "read-files":
                continue
            line = _plain(lines[i])
            if not any(form in line for form in forms):
                continue
            if block == "modified-files" or any(_CHANGE.search(sentence) for sentence in sentences(line)
                                                 if any(form in sentence for form in forms)) \
                    or lines.under_change(i):
                return True
        return False

    @property
    def accessed(self) -> set[str]:
        """The names the context's getters and setters name (``getsessionstats`` → ``sessionstats``), found once."""
        if self._accessed is None:
            self._accessed = set(_ACCESSOR.findall(self.text))
        return self._accessed

    def _identifier(self, needle: str, text: str) -> bool:
        """``needle`` (normalized) whole, without its call, or by its last part; a part that is a plain lower-case
        word in ``text`` (the fact as written: ``Session.compact()``) only where the context writes it as code."""
        name = _CALL.sub("", needle)
        last = re.split(r"\.|::|#", name)[-1]
        word = re.split(r"\.|::|#", _CALL.sub("", text.strip()))[-1]
        plain = word.isalpha() and word.islower()
        return any(len(n) >= 3 and (_as_code(self.text, n) if plain and n == last else _whole(self.text, n))
                   for n in dict.fromkeys((needle, name, last))) \
            or (not plain and name in self.accessed)

    def _command(self, needle: str) -> bool:
        if self._holds_text(needle):
            return True
        program = needle.split(" ", 1)[0].rsplit("/", 1)[-1]
        return _whole(self.text, program) and self.says(needle)

    def holds(self, fact: Fact) -> bool:
        """Whether ``fact`` survives in this context, by the rules of this module."""
        needle = normalize(fact.text, fact.kind)
        if not needle:
            return True
        kind = fact.kind
        if kind == "modified_file":
            return self._file(needle, self.changes) and self._changed(needle)
        if kind == "read_file":
            return self._file(needle, self.text)
        if kind == "identifier":
            return self._identifier(needle, fact.text)
        if kind == "number":
            return self._word(needle)
        if kind == "url":
            return needle.rstrip("/") in self.text
        if kind == "command":
            return self._command(needle)
        if kind in _PROSE_KINDS:
            if self._holds_text(needle) or (kind == "progress" and self._done_item(fact.text, fact.outline)) \
                    or (kind == "decision" and self._names_together(fact.text)):
                return True
            return self.says(fact.text)
        return needle in self.text
