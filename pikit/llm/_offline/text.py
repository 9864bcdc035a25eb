"""Text helpers of the offline summarizer: limits, cleaning, one-line items, sentences, keys."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

# --------------------------------------------------------------------------------------------
# Limits: they bound both the work per message and the size of a summary.

_SCAN_LIMIT = 20_000
"""Characters of one message text that are looked at."""
_ERROR_SCAN_LIMIT = 8_000
"""Characters of a failed tool output searched for the error line."""
_ITEM_LIMIT = 240
"""Characters of one rendered item."""
_GOAL_LIMIT = 300
"""Characters of the main goal."""
_LIST_NAMES = 12
"""Names (files, commands, identifiers) shown in one list item."""
_LIST_BUDGET = 700
"""Characters of names in one list item."""
_PER_MESSAGE = 3
"""Constraints or decisions taken from a single message."""

_CAP_GOALS = 4  # later requests shown under Goal, besides the main goal
_CAP_CONSTRAINTS = 8
_CAP_DONE = 12
_CAP_IN_PROGRESS = 3
_CAP_BLOCKED = 6
_CAP_DECISIONS = 8
_CAP_NEXT = 5
_CAP_CONTEXT = 12
_CAP_TURN_PROGRESS = 8
_CAP_TURN_CONTEXT = 10
_CAP_PARSED = 40  # items kept per section when reading a previous summary

_NONE = "(none)"
_NO_GOAL = "(no user request in this part of the session)"

# --------------------------------------------------------------------------------------------
# Text hygiene.

_DROP_RE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_BREAK_RE = re.compile("\r\n?|[\u2028\u2029]")
_ODD_RE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u2018\u2019\u02bc\u2028\u2029\u202a-\u202e"
    "\u2066-\u2069\ufeff\ud800-\udfff]"
)
_SPACE_RE = re.compile(r"\s+")
_LEAD_RE = re.compile(r"^(?:#+\s+|>+\s*|\|\s*)+")
_FENCE_RE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])")
_PASTE_RE = re.compile(r"^[ \t]*[\[{<].*$", re.M)
_MARKER_RE = re.compile(r"^(?:[-*+•]\s+|\d{1,3}[.)]\s+)(?:\[[ xX]\]\s+)?")
_WIDE_RE = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_APOSTROPHE_RE = re.compile("[\u2018\u2019\u02bc]")


def _clean(text: str, limit: int = _SCAN_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, with unified line breaks and no control characters.

    Lone surrogates (possible in JSON) become U+FFFD so the result always encodes as UTF-8.
    """
    if len(text) > limit:
        text = text[:limit]
    if _ODD_RE.search(text) is None:  # the common case: one pass, nothing to change
        return text
    text = _BREAK_RE.sub("\n", text)
    text = _SURROGATE_RE.sub("\ufffd", text)
    return _DROP_RE.sub("", _APOSTROPHE_RE.sub("'", text))


def _shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at a word boundary when one is near."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def _line(text: str, limit: int = _ITEM_LIMIT) -> str:
    """``text`` as one clean, trimmed line of at most ``limit`` characters."""
    if len(text) <= 512:
        return _short_line(text, limit)
    return _make_line(text, limit)


def _make_line(text: str, limit: int) -> str:
    flat = _SPACE_RE.sub(" ", _clean(text, limit * 4 + 64)).strip()
    return _shorten(_LEAD_RE.sub("", flat), limit)


_short_line = functools.lru_cache(maxsize=8192)(_make_line)
""":func:`_make_line` for short texts (paths and commands repeat a lot within a session)."""


def _code(text: str) -> str:
    """``text`` as a Markdown code span (backticks inside are handled)."""
    if "`" not in text:
        return f"`{text}`"
    if "``" not in text:
        return f"`` {text} ``"
    return "`" + text.replace("`", "'") + "`"


_SPAN_RE = re.compile(r"``\s?([^`\n]+?)\s?``|`([^`\n]+)`")


def _spans(text: str) -> list[str]:
    """The contents of the code spans in ``text``."""
    return [a or b for a, b in _SPAN_RE.findall(text)]


def _sentences(text: str) -> list[str]:
    """Sentences of ``text``, line by line (code blocks, headings, tables and pastes left out)."""
    if "```" in text:
        text = _FENCE_RE.sub(" ", text)
    out: list[str] = []
    for raw in text.split("\n"):
        line = _MARKER_RE.sub("", raw.strip()).strip()
        if not line or line.startswith(("#", "|", ">", "{", "[", "<")):
            continue
        out += [piece for piece in (p.strip() for p in _SPLIT_RE.split(line)) if piece]
    return out


_END_RE = re.compile(r"[.!?](?=\s|$)|[。！？]|\n")
_STARTS = ("\n", ". ", "! ", "? ", ".\t", "。", "！", "？")


def _sentence_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the sentence (or line) of ``text`` that holds ``text[start:end]``."""
    begin = 0
    for mark in _STARTS:
        found = text.rfind(mark, 0, start)
        if found >= 0 and found + len(mark) > begin:
            begin = found + len(mark)
    stop = _END_RE.search(text, end)
    if stop is None:
        return begin, len(text)
    return begin, stop.start() if stop.group() == "\n" else stop.end()


def _find_sentences(text: str, keywords: _Keywords, most: int,
                    accept: Callable[[str, int, str], bool] | None = None) -> list[tuple[str, str, int]]:
    """Up to ``most`` ``(sentence, following sentence, start)`` of ``text`` holding a keyword.

    ``start`` is where the sentence (or its line, list marker included) begins in ``text``;
    ``accept(text, start, sentence)``, when given, passes over the sentences it refuses.

    Sentences are found around the keywords instead of splitting the whole text, so the cost
    stays close to one scan; questions, table rows, headings and pasted JSON are skipped.
    """
    found: list[tuple[str, str, int]] = []
    covered = 0
    for tries, (start, end) in enumerate(keywords.hits(text)):
        if len(found) >= most or tries >= 4 * most:
            break
        if start < covered:
            continue
        begin, stop = _sentence_span(text, start, end)
        covered = stop
        sentence = _MARKER_RE.sub("", text[begin:stop].strip()).strip()
        if (not sentence or len(sentence) > 400 or sentence.endswith("?")
                or sentence.startswith(("#", "|", ">", "{", "[")) or '":' in sentence
                or (accept is not None and not accept(text, begin, sentence))):
            continue
        following = ""
        rest = text[stop:stop + 400].lstrip()
        if rest and not _MARKER_RE.match(rest):
            offset = len(text[stop:stop + 400]) - len(rest) + stop
            _, after = _sentence_span(text, offset, offset)
            following = text[offset:after].strip()
        found.append((sentence, following, begin))
    return found


def _gist(text: str, limit: int, enough: int = 80, most: int = 2) -> str:
    """The opening sentence or two of ``text`` as one line (close to the author's words)."""
    parts: list[str] = []
    size = 0
    for sentence in _sentences(text):
        parts.append(sentence)
        size += len(sentence)
        if size >= enough or len(parts) >= most:
            break
    return _line(" ".join(parts) if parts else text, limit)


def _weight(text: str) -> int:
    """A rough word count that also counts CJK characters (which need no spaces)."""
    return len(text.split()) + len(_WIDE_RE.findall(text))


_COUNT_RE = re.compile(r"\s*\([^()]*\)\s*$")
_KEY_LENGTH = 160  # items equal this far are the same item (one may have been cut shorter)
_NON_WORD_RE = re.compile(r"[\W_]+")


@functools.lru_cache(maxsize=16384)  # (the items of a summary are keyed again at every later update)
def _key(item: str) -> str:
    """The identity of an item when de-duplicating.

    Case, markup and a trailing count such as ``(3 edits)`` are ignored; a decision is keyed
    by its bold part only, and the derived list items (``Files modified: …``) by their label.
    """
    low = item.lower()
    for label in _SINGLETON_LABELS:
        if low.startswith(label):
            return label
    if low.startswith("**"):
        close = low.find("**", 2)
        if close > 2:
            low = low[2:close]
    return _NON_WORD_RE.sub(" ", _COUNT_RE.sub("", low)).strip()[:_KEY_LENGTH]


_SINGLETON_LABELS = (
    "last step:",
    "files modified:",
    "files read:",
    "commands run:",
    "identifiers:",
    "focus requested:",
)


# --------------------------------------------------------------------------------------------
# What to look for.

_ACK_RE = re.compile(
    r"^(?:ok(?:ay)?|k|yes|yep|yeah|no|nope|sure|thanks?(?: you)?|thx|continue|go on|go ahead|"
    r"proceed|do it|yo|hi|hello|hey|wow|cool|nice|great|perfect|lgtm|ls)\W*$",
    re.I,
)


class _Keywords:
    """A set of lowercase keywords found at word boundaries (CJK ones anywhere).

    :meth:`hits` searches a lowercased copy with ``str.find``, which is far faster than a
    case-insensitive regex alternation; the equivalent regex is the fallback for the rare
    texts whose lowercase form has a different length (e.g. ``İ``).
    """

    def __init__(self, *words: str) -> None:
        self.words = words
        self.pattern = re.compile(
            "|".join(rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w) for w in words), re.I
        )

    def hits(self, text: str) -> list[tuple[int, int]]:
        """Sorted ``(start, end)`` of the keywords in ``text`` (at most 20 per keyword)."""
        low = text.lower()
        if len(low) != len(text):
            return [(m.start(), m.end()) for m in self.pattern.finditer(text)]
        found: list[tuple[int, int]] = []
        size = len(low)
        for word in self.words:
            at = low.find(word)
            count = 0
            while at >= 0 and count < 20:
                end = at + len(word)
                if not word.isascii() or (
                    (at == 0 or not _is_word(low[at - 1])) and (end >= size or not _is_word(low[end]))
                ):
                    found.append((at, end))
                    count += 1
                at = low.find(word, at + 1)
        found.sort()
        return found


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


_CD_RE = re.compile(r"^cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*(?=\S)")
_PIPE_RE = re.compile(r"\s\|\s")
_REDIRECT_RE = re.compile(r"\s+\d?>&\d")
_QUIET_PROGRAMS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "diff", "cmp", "test", "["})
_QUIET_LINES = frozenset({"", "(no output)", "command exited with code 1"})


def _command(text: str) -> str:
    """A shell command as one line, without a leading ``cd DIR &&`` (the directory is noise)."""
    return _line(_CD_RE.sub("", text.strip()), 120)


def _quiet_failure(command: str, output: str) -> bool:
    """True for exit code 1 with no output from a search or compare (``grep`` found nothing)."""
    last = _PIPE_RE.split(command)[-1].split()
    if not last or last[0] not in _QUIET_PROGRAMS or len(output) > 200:
        return False
    return all(line.strip().lower() in _QUIET_LINES for line in output.split("\n"))


def _core_command(command: str) -> str:
    """The first stage of a pipeline without ``2>&1``: ``npm run check 2>&1 | tail`` → ``npm run check``."""
    return _REDIRECT_RE.sub("", _PIPE_RE.split(command, 1)[0]).strip() or command
