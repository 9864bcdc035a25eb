"""What a context says in words, sentence by sentence, indexed by content words (:class:`ProseIndex`): where a
reworded fact is looked for. Also the reading of words that a fact and the context share: content words with
their endings dropped (:func:`_words`), ranges of numbered items spelled out (:func:`_ranged`), and the words and
numbers two sentences are compared by (:func:`_sequence`)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Set as AbstractSet
from functools import lru_cache

from ._factrules import content_words, sentences, text_cache

__all__ = ["SHARE", "ProseIndex"]

SHARE = 0.8
"""The share of a sentence's content words one sentence of the context must hold to say the same (rounded
down: one of five words may be missing, none of four)."""

_TOKEN = re.compile(r"\w[\w.\-/]*")
_NUMBER_WORD = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w.])")
_RANGE_WORD = re.compile(r"([a-z]+)(\d{1,3})[-\u2013]([a-z]*)(\d{1,3})")
_RANGE_SPAN = 100
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _words(text: str) -> set[str]:
    """The content words of ``text`` (:func:`content_words`), a final ``e`` of a word of five letters or more
    dropped, so that a word and its ``-ing`` or ``-ed`` form agree (``write``, ``writing``: ``writ``)."""
    return set(map(_root, content_words(text)))


@lru_cache(maxsize=1 << 16)
def _root(word: str) -> str:
    return word[:-1] if len(word) > 4 and word[-1] == "e" and word.isalpha() else word


def _ranged(words: set[str]) -> set[str]:
    """``words``, each range of numbered items spelled out item by item (``wp1-wp3`` adds ``wp1``, ``wp2``, ``wp3``)."""
    out = set(words)
    for word in words:
        if "-" not in word and "\u2013" not in word:
            continue
        match = _RANGE_WORD.fullmatch(word)
        if match and match[3] in ("", match[1]) and int(match[2]) < int(match[4]) <= int(match[2]) + _RANGE_SPAN:
            out.update(f"{match[1]}{n}" for n in range(int(match[2]), int(match[4]) + 1))
    return out


@text_cache(maxsize=1 << 14, chars=1_000)
def _sequence(text: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """The words of a sentence (case folded), in order, and its numbers: what two sentences are compared by."""
    return tuple(_TOKEN.findall(text.casefold())), frozenset(_NUMBER_WORD.findall(text))


def _sentences(text: str) -> Iterator[tuple[str, str]]:
    """The sentences of a (not yet normalized) text, line by line, each with the heading it is under (a Markdown
    heading, or a line that ends with ``:``; a blank line ends a heading's list)."""
    section = heading = ""
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped:
            heading = ""
            continue
        under = f"{section} {heading}"
        if ". " in line or "? " in line or "! " in line:
            for sentence in sentences(line):
                yield sentence, under
        else:
            yield line, under
        if stripped.startswith("#"):
            section, heading = stripped, ""
        elif stripped.endswith(":") or stripped.endswith(":**"):
            heading = stripped


@text_cache(maxsize=1 << 14, chars=1_000)  # (a context's sentence said again, in this context or another)
def _sentence_words(sentence: str) -> frozenset[str]:
    """The content words a sentence of a context is indexed by: its own, ranges spelled out (:func:`_ranged`),
    and those of its camel-case names split into words (``setModel(model)`` holds *set*)."""
    words = _words(sentence)
    if "-" in sentence or "\u2013" in sentence:
        words = _ranged(words)
    if _CAMEL.search(sentence):
        words |= _words(_CAMEL.sub(" ", sentence))
    return frozenset(words)


class ProseIndex:
    """The sentences of ``prose`` (each with the headings it is under) and, for each content word, the sentences
    that hold it, themselves or in a heading above them. ``vocabulary``, when given, holds the only words looked
    up later: the sentences are indexed by those words only."""

    def __init__(self, prose: str, vocabulary: AbstractSet[str] | None = None) -> None:
        #: The sentences, in order, and the headings each is under.
        self.sentences: list[str] = []
        self.headings: list[str] = []
        self._numbers: dict[str, list[int]] = {}
        self._masks: dict[str, int] = {}
        self._split: dict[int, tuple[tuple[str, ...], frozenset[str]]] = {}
        under_heading: dict[str, set[str]] = {}
        for number, (sentence, heading) in enumerate(_sentences(prose)):
            self.sentences.append(sentence)
            self.headings.append(heading)
            words: AbstractSet[str] = _sentence_words(sentence)
            if heading.strip():
                under = under_heading.get(heading)
                if under is None:
                    under = under_heading[heading] = _ranged(_words(heading))
                words = words | under
            if vocabulary is not None:
                words = words & vocabulary
            for word in words:
                self._numbers.setdefault(word, []).append(number)

    def _mask(self, word: str) -> int:
        """The sentences holding ``word`` as a bit set (bit ``n``: sentence ``n``), made once."""
        mask = self._masks.get(word)
        if mask is None:
            numbers = self._numbers.get(word, [])
            bits = bytearray((numbers[-1] >> 3) + 1 if numbers else 0)
            for number in numbers:
                bits[number >> 3] |= 1 << (number & 7)
            mask = self._masks[word] = int.from_bytes(bits, "little")
        return mask

    def candidates(self, words: AbstractSet[str], required: AbstractSet[str]) -> list[tuple[int, int]]:
        """``(share of words held × 1000, sentence number)`` of the sentences holding every ``required`` word and
        :data:`SHARE` of ``words``, best first.

        Worked out on bit sets, one per word: ``within[k]`` holds the sentences that miss at most ``k`` of the
        words read so far, so that no sentence is counted one by one."""
        if not words:
            return []
        holding = (1 << len(self.sentences)) - 1
        for word in required:
            holding &= self._mask(word)
            if not holding:
                return []
        missing = int((1 - SHARE) * len(words) + 1e-9)  # (the words a sentence may miss)
        within = [holding] * (missing + 1)
        for word in words:
            mask = self._mask(word)
            for k in range(missing, 0, -1):
                within[k] = (within[k] & mask) | within[k - 1]
            within[0] &= mask
            if not within[missing]:
                return []
        out = []
        for k, found in enumerate(within):
            if k:
                found &= ~within[k - 1]
            while found:
                low = found & -found
                out.append((1000 * (len(words) - k) // len(words), low.bit_length() - 1))
                found ^= low
        return sorted(out, reverse=True)

    def tokens(self, number: int) -> tuple[tuple[str, ...], frozenset[str]]:
        """The :func:`_sequence` of sentence ``number``, split once."""
        found = self._split.get(number)
        if found is None:
            found = self._split[number] = _sequence(self.sentences[number])
        return found
