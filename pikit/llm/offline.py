"""The embedded offline summarizer: pikit's default, deterministic, with no network and no key.

:class:`OfflineSummarizer` writes the same Markdown layout a model is asked for (see
:mod:`pikit.llm.prompts`), but builds every section from the Pi AgentMessages themselves:

- **Goal**: the first substantial user request, then later distinct requests;
- **Constraints & Preferences**: user sentences that state a rule (*must*, *never*, *only*, …);
- **Progress**: files written or edited and successful builds/tests (*Done*), the request that
  has no final answer yet and tool calls still waiting for a result (*In Progress*), failed
  tool results, non-zero exit codes and errored or aborted replies that nothing later fixed,
  each with its error line (*Blocked*);
- **Key Decisions**: sentences saying what was chosen (*decided*, *instead*, *going with*, …);
- **Next Steps**: derived from the unfinished work and the open errors;
- **Critical Context**: files read and modified, commands, identifiers quoted in backticks,
  errors that were fixed later, extension notes, and the focus the caller asked for.

How it works, in three steps:

1. :class:`_Reader` walks the messages once and records facts (tool calls are paired with
   their results by id; a later success of the same command or on the same file marks an
   earlier failure as resolved). Every text it looks at is cut to a fixed length first, so the
   cost per message is bounded whatever the session holds.
2. The facts become a :class:`_Notes` value: one list of items per section plus the file,
   command and identifier sets. A previous summary is parsed into the same shape
   (:func:`_parse_notes`, which also understands Pi's own free-form summaries) and the two are
   merged: items are kept and de-duplicated, *In Progress* moves to *Done* when the new
   messages contain a finished turn, *Blocked* items whose command or file later succeeded
   move to *Done*, and *Next Steps* are derived again.
3. :func:`_render` lays the notes out with a cap on the number and length of the items of
   every section, so a summary stays small however long the session was.

All session text is treated as untrusted plain text: control, bidi-override and lone
surrogate characters are removed, every item is a single line, and nothing here produces HTML.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pikit.errors import SummarizerError
from pikit.llm.base import SummaryRequest, SummaryResult

__all__ = ["OfflineSummarizer"]

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


def _find_sentences(text: str, keywords: _Keywords, most: int) -> list[tuple[str, str]]:
    """Up to ``most`` ``(sentence, following sentence)`` pairs of ``text`` holding a keyword.

    Sentences are found around the keywords instead of splitting the whole text, so the cost
    stays close to one scan; questions, table rows, headings and pasted JSON are skipped.
    """
    found: list[tuple[str, str]] = []
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
                or sentence.startswith(("#", "|", ">", "{", "[")) or '":' in sentence):
            continue
        following = ""
        rest = text[stop:stop + 400].lstrip()
        if rest and not _MARKER_RE.match(rest):
            offset = len(text[stop:stop + 400]) - len(rest) + stop
            _, after = _sentence_span(text, offset, offset)
            following = text[offset:after].strip()
        found.append((sentence, following))
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


def _text_of(content: Any, limit: int = _SCAN_LIMIT) -> str:
    """The text of a message ``content``: a string, or the text of its text blocks."""
    if isinstance(content, str):
        return content[:limit]
    if not isinstance(content, list | tuple):
        return ""
    parts: list[str] = []
    size = 0
    for block in content:
        text: Any = None
        if isinstance(block, str):
            text = block
        elif _is_map(block) and block.get("type", "text") == "text":
            text = block.get("text")
        if isinstance(text, str) and text:
            parts.append(text[: limit - size])
            size += len(parts[-1])
            if size >= limit:
                break
    return "\n".join(parts)


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


def _is_map(value: Any) -> bool:
    """``isinstance(value, Mapping)``, with a fast path for plain dicts."""
    return isinstance(value, (dict, Mapping))


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


_CONSTRAINTS = _Keywords(
    "must", "mustn't", "should", "shouldn't", "don't", "dont", "do not", "never", "always",
    "prefer", "prefers", "preferably", "without", "only", "avoid", "make sure", "ensure",
    "not allowed", "no need to",
    "必须", "不要", "别", "总是", "永远", "只", "不能", "应该", "禁止", "必ず", "しないで", "だけ",
)
_DECISIONS = _Keywords(
    "decided", "decide to", "chose", "chosen", "choose to", "instead", "will use", "i'll use",
    "we'll use", "going with", "go with", "rather than", "opted", "opt for", "settled on",
    "switch to", "switched to", "let's use",
)
_REASON_RE = re.compile(
    r"\s*(?:,\s*)?\b(?:because|since|so that|so we|as it|as this|to avoid|to keep|which means|"
    r"which)\b",
    re.I,
)
_DONE_RE = re.compile(
    r"^(?:done|fixed|created|added|implemented|updated|removed|deleted|refactored|moved|renamed|"
    r"wrote|committed|pushed|finished|completed)\b"
    r"|\b(?:i've|i have|successfully|all (?:\w+ )?(?:tests?|checks?) pass\w*|"
    r"now (?:passes|pass|works|compiles|builds)|(?:is|are) now (?:done|complete|fixed|passing|working))\b",
    re.I,
)
_SIGNIFICANT_RE = re.compile(
    r"\b(?:test|tests|pytest|jest|vitest|mocha|unittest|tox|nox|check|lint|ruff|mypy|eslint|"
    r"biome|tsc|tsgo|build|make|cmake|cargo|go (?:test|build|vet)|npm|pnpm|yarn|bun|deno|"
    r"pip install|uv|poetry|mvn|gradle|dotnet|docker|deploy|migrate|"
    r"git (?:commit|push|merge|rebase|checkout|switch|tag|revert|reset|stash|branch))\b"
)
_ERROR_MARKS = (
    "Error:", "Exception:", "error:", "error TS", ": error", "ERROR", "FAIL", "Traceback",
    "fatal:", "panic:", "No such file", "command not found", "Cannot find", "Permission denied",
    "× ", "✖ ", "✗ ",
)
"""Case-sensitive marks of a line that reports an error."""
_ERROR_WORDS = (
    "error", "exception", "traceback", "failed", "failure", "fatal", "panic", "not found",
    "no such", "cannot", "can't", "could not", "couldn't", "denied", "invalid", "refused",
    "timed out", "exited with code", "undefined", "unexpected", "assert",
)
"""Lowercase words of a line that mentions an error."""
_NARRATION_RE = re.compile(r"^(?:(?:ok(?:ay)?|so|good|great),? )?(?:now|first|next|then|let me)\b", re.I)
_IDENT_RE = re.compile(r"^[A-Za-z_$@~.][\w$@.:/\-]*(?:\(\))?$")
_FOCUS_STOP = frozenset(
    (
        "the", "and", "for", "with", "about", "focus", "that", "this", "from", "into", "what",
        "which", "when", "where", "them", "they", "their", "please", "keep", "make", "sure",
        "also", "only", "more", "most", "some", "any", "all", "are", "was", "were", "been",
        "has", "have", "had", "not", "but", "you", "your", "our", "its", "it's",
    )
)


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


def _is_request(text: str) -> bool:
    """True when a user text is a real request rather than an acknowledgement ("ok", "go on")."""
    return not _ACK_RE.match(text.strip()) and _weight(text) >= 4


def _error_line(text: str) -> str:
    """The line of ``text`` that reads most like an error (else its first line), trimmed.

    Lines that look like an error report (``Error: …``, ``file:1: error …``, ``Traceback``)
    win over lines that merely contain an error word; very long lines (minified code) are
    passed over.
    """
    text = _clean(text, _ERROR_SCAN_LIMIT)
    low = text.lower()
    for hay, marks in ((text, _ERROR_MARKS), (low if len(low) == len(text) else text, _ERROR_WORDS)):
        hits: list[int] = []
        for mark in marks:
            at = hay.find(mark)
            for _ in range(3):
                if at < 0:
                    break
                hits.append(at)
                at = hay.find(mark, at + len(mark))
        for at in sorted(hits)[:12]:
            begin = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            line = text[begin:end if end >= 0 else len(text)].strip()
            if len(line) <= 400:
                return _line(line, 200)
    for raw in text.split("\n", 50):
        if raw.strip():
            return _line(raw, 200)
    return ""


def _decision_item(sentence: str, following: str = "", context: str = "") -> str:
    """``**Decision**: rationale`` for a sentence that states a choice.

    The rationale is the sentence's own *because/since/so that…* clause, else the sentence
    that follows it (when that one is a plain sentence), else ``context`` (what prompted it),
    else ``(no reason stated)``.
    """
    sentence = sentence.replace("**", "").replace("__", "")
    match = _REASON_RE.search(sentence, 12)
    following = following.replace("**", "")
    if match:
        decision, reason = sentence[: match.start()], sentence[match.start():]
        reason = reason.strip(" ,;:")
    elif (following and len(following) <= 200 and _weight(following) >= 4
          and not following.endswith((":", "?")) and not following.startswith(("#", "|", "`", "*"))):
        decision, reason = sentence, following
    else:
        decision, reason = sentence, context or "(no reason stated)"
    decision = _line(decision, 110).rstrip(".:;, ")
    return f"**{decision}**: {_line(reason, 160)}"


# --------------------------------------------------------------------------------------------
# Facts gathered from the messages.


@dataclass(slots=True)
class _Call:
    """One tool call: what it targets, how a failure of it is keyed, how to describe it."""

    name: str
    target: str
    key: tuple[str, str]
    label: str


@dataclass(slots=True)
class _Failure:
    """One failed tool call, command or reply."""

    key: tuple[str, str]
    text: str
    line: str
    resolved: bool = False


@dataclass
class _Notes:
    """A summary as data: items per section plus the sets behind Critical Context."""

    goal: list[str] = field(default_factory=list)
    goal_dropped: int = 0
    constraints: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    done_dropped: int = 0
    in_progress: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    files_read: dict[str, None] = field(default_factory=dict)
    files_modified: dict[str, None] = field(default_factory=dict)
    commands: dict[str, None] = field(default_factory=dict)
    identifiers: dict[str, None] = field(default_factory=dict)

    def empty(self) -> bool:
        """True when the notes hold nothing at all."""
        return not any(
            (self.goal, self.constraints, self.done, self.in_progress, self.blocked,
             self.decisions, self.next_steps, self.context, self.files_read,
             self.files_modified, self.commands, self.identifiers)
        )


class _Reader:
    """Walks the messages once and records what the summary needs."""

    def __init__(self) -> None:
        self.seq = 0
        self.requests: list[str] = []
        self.substantive: list[str] = []
        self.answered = False
        self.finished_turn = False
        self.activity_since_request = False
        self.last_activity = ""
        self.pending: dict[str, _Call] = {}
        self.file_work: dict[str, list[int]] = {}  # path -> [writes, edits, seq]
        self.ok_commands: dict[str, list[int]] = {}  # command -> [runs, seq]
        self.events: list[tuple[int, str]] = []  # other Done items with their seq
        self.failures: list[_Failure] = []
        self.open: dict[tuple[str, str], list[_Failure]] = {}
        self.successes: set[str] = set()
        self.files_read: dict[str, None] = {}
        self.files_modified: dict[str, None] = {}
        self.commands: dict[str, None] = {}
        self.identifiers: dict[str, int] = {}
        self.constraints: dict[str, str] = {}
        self.decisions: dict[str, str] = {}
        self.custom_notes: list[str] = []
        self.embedded: list[str] = []

    # -- walking ------------------------------------------------------------------------------

    def read(self, messages: Iterable[Any]) -> None:
        """Record every message in order; anything that is not a message dict is skipped."""
        for message in messages:
            if not _is_map(message):
                continue
            self.seq += 1
            role = message.get("role")
            if role == "user":
                self._user(message)
            elif role == "assistant":
                self._assistant(message)
            elif role == "toolResult":
                self._tool_result(message)
            elif role == "bashExecution":
                self._bash_execution(message)
            elif role == "custom":
                self._custom(message)
            elif role in ("branchSummary", "compactionSummary"):
                summary = message.get("summary")
                if isinstance(summary, str) and summary.strip():
                    self.embedded.append(summary)

    def _user(self, message: Mapping[str, Any]) -> None:
        text = _clean(_text_of(message.get("content")))
        self.requests.append(text)
        self.answered = False
        self.activity_since_request = False
        body = (_FENCE_RE.sub(" ", text) if "```" in text else text).strip()
        if not body:
            return
        if _is_request(body):
            self.substantive.append(body)
        self._scan(body, constraints=True)

    def _assistant(self, message: Mapping[str, Any]) -> None:
        content = message.get("content")
        texts: list[str] = []
        calls = 0
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list | tuple):
            for block in content:
                if not _is_map(block):
                    continue
                kind = block.get("type")
                if kind == "text" and isinstance(block.get("text"), str):
                    texts.append(block["text"][:_SCAN_LIMIT])
                elif kind == "toolCall":
                    calls += 1
                    self._call(block)
        stop = message.get("stopReason")
        if stop in ("error", "aborted"):
            raw = message.get("errorMessage")
            line = _error_line(raw) if isinstance(raw, str) else ""
            what = "ended with an error" if stop == "error" else "was aborted"
            self._fail(("turn", ""), f"The assistant's reply {what}: {line or '(no message)'}", line)
        elif stop in ("stop", "toolUse", "length") or calls:
            self._resolve(("turn", ""))
        text = _clean("\n".join(texts)).strip()
        if not text:
            return
        self._scan(text, constraints=False)
        if not calls and stop not in ("error", "aborted", "length", "toolUse"):
            self.answered = True
            self.finished_turn = True
            self.pending.clear()
            self._statement(text)

    def _call(self, block: Mapping[str, Any]) -> None:
        raw_name = block.get("name")
        name = _line(raw_name, 60) if isinstance(raw_name, str) and raw_name.strip() else "tool"
        raw_args = block.get("arguments")
        if isinstance(raw_args, str) and len(raw_args) < 100_000:
            try:
                raw_args = json.loads(raw_args)
            except ValueError:
                raw_args = None
        args: Mapping[str, Any] = raw_args if isinstance(raw_args, (dict, Mapping)) else {}
        path, command = args.get("path"), args.get("command")
        if name in ("read", "write", "edit") and isinstance(path, str) and path.strip():
            target = _line(path, 200)
            _touch(self.files_read if name == "read" else self.files_modified, target)
            call = _Call(name, target, ("file", target), f"{_code(name)} on {_code(target)}")
        elif name == "bash" and isinstance(command, str) and command.strip():
            target = _command(command)
            _touch(self.commands, target)
            call = _Call(name, target, ("bash", _core_command(target)), _code(target))
        else:
            call = _Call(name, "", ("tool", name), _code(name))
        call_id = block.get("id")
        if isinstance(call_id, str):
            self.pending[call_id] = call
        self.last_activity = call.label
        self.activity_since_request = True

    def _tool_result(self, message: Mapping[str, Any]) -> None:
        call_id = message.get("toolCallId")
        call = self.pending.pop(call_id, None) if isinstance(call_id, str) else None
        if call is None:
            raw = message.get("toolName")
            name = _line(raw, 60) if isinstance(raw, str) and raw.strip() else "tool"
            call = _Call(name, "", ("tool", name), _code(name))
        if message.get("isError") is True:
            output = _text_of(message.get("content"), _ERROR_SCAN_LIMIT)
            if call.key[0] == "bash" and _quiet_failure(call.target, output):
                return
            line = _error_line(output)
            text = f"{call.label} failed"
            self._fail(call.key, f"{text}: {line}" if line else text, line)
        else:
            self._succeed(call)

    def _bash_execution(self, message: Mapping[str, Any]) -> None:
        if message.get("excludeFromContext") is True:
            return
        command = message.get("command")
        if not isinstance(command, str) or not command.strip():
            return
        target = _command(command)
        _touch(self.commands, target)
        call = _Call("bash", target, ("bash", _core_command(target)), _code(target))
        code = message.get("exitCode")
        output = message.get("output")
        line = _error_line(output) if isinstance(output, str) else ""
        if message.get("cancelled") is True:
            self._fail(call.key, f"{call.label} was cancelled", line)
        elif isinstance(code, int) and not isinstance(code, bool) and code != 0:
            if code == 1 and _quiet_failure(target, output if isinstance(output, str) else ""):
                return
            text = f"{call.label} exited with code {code}"
            self._fail(call.key, f"{text}: {line}" if line else text, line)
        elif code == 0:
            self._succeed(call)

    def _custom(self, message: Mapping[str, Any]) -> None:
        text = _line(_text_of(message.get("content")), 160)
        if not text:
            return
        kind = message.get("customType")
        label = f"Note ({_code(_line(kind, 40))})" if isinstance(kind, str) and kind.strip() else "Note"
        self.custom_notes.append(f"{label}: {text}")

    # -- outcomes -----------------------------------------------------------------------------

    def _succeed(self, call: _Call) -> None:
        if call.target:
            self.successes.update((call.target, call.key[1]))
        if call.name in ("write", "edit") and call.target:
            work = self.file_work.pop(call.target, [0, 0, 0])
            work[0 if call.name == "write" else 1] += 1
            work[2] = self.seq
            self.file_work[call.target] = work
        elif call.key[0] == "bash":
            core = _core_command(call.target)
            if _SIGNIFICANT_RE.search(" ".join(core.split()[:4])):
                runs = self.ok_commands.pop(core, [0, 0])
                self.ok_commands[core] = [runs[0] + 1, self.seq]
        for failure in self._resolve(call.key):
            if call.key[0] == "bash" and failure.line and failure.text != f"{call.label} was cancelled":
                self.events.append((self.seq, f"{call.label} now succeeds (it had failed: {failure.line})"))

    def _fail(self, key: tuple[str, str], text: str, line: str) -> None:
        failure = _Failure(key, text, line)
        same = self.open.setdefault(key, [])
        if any(f.text == text for f in same):  # the same error again: keep only the latest
            self.failures = [f for f in self.failures if f.resolved or f.text != text]
            same[:] = [f for f in same if f.text != text]
        same.append(failure)
        self.failures.append(failure)
        if len(self.failures) > 400:
            self.failures = self.failures[-200:]

    def _resolve(self, key: tuple[str, str]) -> list[_Failure]:
        fixed = self.open.pop(key, [])
        for failure in fixed:
            failure.resolved = True
        return fixed

    def _statement(self, text: str) -> None:
        """Record the first sentence of a final answer that reports finished work."""
        sentences = _sentences(text[:2000])
        for index, sentence in enumerate(sentences):
            if not _DONE_RE.search(sentence) or sentence.endswith("?"):
                continue
            following = iter(sentences[index + 1:index + 3])
            if _weight(sentence) < 3:
                sentence = f"{sentence} {next(following, '')}".strip()
            if sentence.endswith(":"):
                sentence = f"{sentence} {next(following, '')}".strip()
            self.events.append((self.seq, _line(sentence, 180)))
            return

    def _scan(self, text: str, *, constraints: bool) -> None:
        """Collect constraints (user text only), decisions and identifiers from ``text``."""
        if "`" in text:
            for span in _spans(text):
                span = span.strip()
                if 3 <= len(span) <= 60 and _IDENT_RE.match(span) and any(c.isalpha() for c in span):
                    self.identifiers[span] = self.identifiers.get(span, 0) + 1
        if "```" in text:
            text = _FENCE_RE.sub(" ", text)
        if "{" in text or "[" in text or "<" in text:
            text = _PASTE_RE.sub(" ", text)
        rules: set[str] = set()
        if constraints:
            for sentence, _ in _find_sentences(text, _CONSTRAINTS, _PER_MESSAGE):
                if len(sentence) <= 220:
                    item = _line(sentence, 200)
                    rules.add(sentence)
                    self.constraints.setdefault(_key(item), item)
        for sentence, following in _find_sentences(text, _DECISIONS, _PER_MESSAGE):
            if sentence in rules or _NARRATION_RE.match(sentence):
                continue
            if constraints:
                prompted = "stated by the user"
            else:
                request = self.last_request()
                prompted = f"in answer to: {_gist(request, 90, enough=1, most=1)}" if request else ""
            item = _decision_item(sentence, following, prompted)
            self.decisions.pop(_key(item), None)
            self.decisions[_key(item)] = item

    # -- results ------------------------------------------------------------------------------

    def last_request(self) -> str:
        """The request the conversation is working on: the last one that is not an acknowledgement."""
        if self.substantive:
            return self.substantive[-1]
        for text in reversed(self.requests):
            if text.strip():
                return text
        return ""

    def notes(self) -> _Notes:
        """The facts as notes (Next Steps excepted: they are derived after any merge)."""
        notes = _Notes()
        requests = self.substantive or [r for r in self.requests if r.strip()]
        for text in requests[:1]:
            notes.goal.append(_gist(text, _GOAL_LIMIT, enough=200, most=3))
        seen = {_key(g) for g in notes.goal}
        added: list[str] = []
        for text in requests[1:]:
            item = _gist(text, 200, enough=1, most=1)
            if item.endswith("?") and _weight(item) < 8:
                continue  # a passing question is not a goal
            if _key(item) not in seen:
                seen.add(_key(item))
                added.append(item)
        notes.goal_dropped = max(0, len(added) - _CAP_GOALS)
        notes.goal += added[-_CAP_GOALS:]

        notes.constraints = list(self.constraints.values())
        notes.decisions = list(self.decisions.values())

        done: list[tuple[int, str]] = list(self.events)
        for path, (writes, edits, seq) in self.file_work.items():
            if writes and edits:
                text = f"Wrote and edited {_code(path)}"
            elif writes:
                text = f"Wrote {_code(path)}"
            else:
                text = f"Edited {_code(path)}" + (f" ({edits} edits)" if edits > 1 else "")
            done.append((seq, text))
        for command, (runs, seq) in self.ok_commands.items():
            done.append((seq, f"Ran {_code(command)} successfully" + (f" ({runs}×)" if runs > 1 else "")))
        done.sort(key=lambda pair: pair[0])
        notes.done = [text for _, text in done]

        waiting = [call.label for call in list(self.pending.values())[-2:]]
        if self.requests and not self.answered:
            request = self.last_request()
            if request:
                notes.in_progress.append(_gist(request, 220, enough=1, most=1))
            if self.activity_since_request and self.last_activity not in waiting:
                notes.in_progress.append(f"Last step: {self.last_activity}")
        elif not self.requests and not self.finished_turn and self.last_activity not in waiting:
            notes.in_progress.append(f"Last step: {self.last_activity}")
        notes.in_progress += [f"Waiting for the result of {label}" for label in waiting]

        notes.blocked = [f.text for f in self.failures if not f.resolved]
        fixed = [f for f in self.failures if f.resolved and f.key[0] != "turn" and f.line]
        notes.context = [f"Earlier error (resolved): {f.text}" for f in fixed[-2:]] + self.custom_notes[-2:]

        notes.files_read = dict(self.files_read)
        notes.files_modified = dict(self.files_modified)
        notes.commands = dict(self.commands)
        ranked = sorted(self.identifiers.items(), key=lambda kv: -kv[1])
        known = {*self.files_read, *self.files_modified, *self.commands}
        notes.identifiers = {name: None for name, _ in ranked if name not in known}
        return notes


# --------------------------------------------------------------------------------------------
# Reading a summary back (pikit's own layout, and Pi's free-form ones as well as possible).

_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*$")
_TABLE_SEP_RE = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
_BOLD_LABEL_RE = re.compile(r"^\*\*[^*]{1,80}\*\*:?$")
_DROPPED_RE = re.compile(r"^(?:…|\.\.\.)?\s*and (\d+) earlier items?$|^\(\+(\d+) more requests?\)$")
_PLACEHOLDERS = frozenset({"(none)", "none", "none.", "- none.", "n/a", "(none stated)", _NO_GOAL.lower()})


def _section_of(title: str) -> str:
    """The section a heading title belongs to (``"context"`` when nothing else fits)."""
    t = title.lower()
    if "goal" in t or "original request" in t or "objective" in t:
        return "goal"
    if "constraint" in t or "preference" in t or "requirement" in t:
        return "constraints"
    if "in progress" in t or "current" in t or "ongoing" in t:
        return "in_progress"
    if "block" in t or "error" in t or "issue" in t or "problem" in t or "fail" in t:
        return "blocked"
    if "decision" in t:
        return "decisions"
    if "next" in t or "todo" in t or "to do" in t:
        return "next_steps"
    if "done" in t or "complete" in t or "progress" in t or "finished" in t:
        return "done"
    return "context"


_KNOWN_TITLES = re.compile(
    r"goal|original request|objective|constraint|preference|requirement|in progress|current|"
    r"ongoing|block|error|issue|problem|fail|decision|next|todo|to do|done|complete|progress|"
    r"finished|critical context|context needed",
    re.I,
)


def _parse_notes(text: str) -> _Notes:
    """Parse a summary into notes; never raises.

    Headings are mapped to sections by their words; an unknown level-2 heading becomes a
    Critical Context label, an unknown deeper heading stays in its parent's section. The file
    lists Pi appends (``<read-files>``/``<modified-files>``) fill the file sets; code blocks are
    skipped and table rows become single lines.
    """
    notes = _Notes()
    lists: dict[str, list[str]] = {
        "goal": notes.goal, "constraints": notes.constraints, "done": notes.done,
        "in_progress": notes.in_progress, "blocked": notes.blocked, "decisions": notes.decisions,
        "next_steps": notes.next_steps, "context": notes.context,
    }
    section: str | None = None
    parent: str | None = None
    label = ""
    in_code = False
    file_block: dict[str, None] | None = None
    last_table_row: str | None = None
    preface: list[str] = []
    headings = 0
    turn = False
    for raw in _clean(text, 200_000).split("\n"):
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            in_code = not in_code
            continue
        if in_code or not line or line == "---":
            continue
        if line in ("<read-files>", "<modified-files>"):
            file_block = notes.files_read if line == "<read-files>" else notes.files_modified
            continue
        if line in ("</read-files>", "</modified-files>"):
            file_block = None
            continue
        if file_block is not None:
            file_block[_line(line, 200)] = None
            continue
        heading = _HEADING_RE.match(line)
        if heading:
            headings += 1
            level, title = len(heading.group(1)), heading.group(2).strip(" *:")
            known = bool(_KNOWN_TITLES.search(title))
            if level == 1 and not known:
                section, parent, label = None, None, ""
                continue
            if known or level <= 2 or parent is None:
                section = _section_of(title)
                if turn and section == "goal":
                    section = "in_progress"
                label = "" if known else _line(title, 60)
                if level <= 2:
                    parent = section
                if known and ":" in title:
                    before, rest = title.split(":", 1)
                    extra = rest if _KNOWN_TITLES.search(before) else title
                    if extra.strip():
                        lists[section].append(_line(extra))
            else:
                section = parent
                lists[section].append(_line(title))
            continue
        if line.startswith("**Turn Context"):
            # the summary of a split turn's first part follows: that turn was under way
            section, parent, label, turn = "context", "context", "", True
            continue
        if line.startswith("|"):
            if _TABLE_SEP_RE.match(line):
                if last_table_row is not None and section is not None and lists[section][-1:] == [last_table_row]:
                    lists[section].pop()
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            line = " — ".join(c for c in cells if c)
        else:
            last_table_row = None
        item = _line(_MARKER_RE.sub("", line), _LIST_BUDGET + 100)
        if not item or item.lower() in _PLACEHOLDERS or _BOLD_LABEL_RE.match(item):
            continue
        if raw.strip().startswith("|"):
            last_table_row = item
        dropped = _DROPPED_RE.match(item)
        if dropped:
            if section == "done":
                notes.done_dropped += int(dropped.group(1) or dropped.group(2) or 0)
            elif section == "goal":
                notes.goal_dropped += int(dropped.group(1) or dropped.group(2) or 0)
            continue
        if section is None:
            preface.append(item)
            continue
        if section == "context" and _context_set(notes, item):
            continue
        section_here = _item_section(section, item)
        if section_here != section:
            item = _strip_label(item)
            if item and len(lists[section_here]) < _CAP_PARSED:
                lists[section_here].append(_line(item))
            continue
        item = _line(f"{label}: {item}" if label and section == "context" else item,
                     _GOAL_LIMIT if section == "goal" else _ITEM_LIMIT)
        if len(lists[section]) < _CAP_PARSED:
            lists[section].append(item)
    if not headings and preface:
        notes.context.append(_line("Earlier summary: " + " ".join(preface[:3])))
    if not notes.goal and turn and notes.in_progress:
        # only a split turn was summarized so far: its request is also the session's goal
        first = next((i for i in notes.in_progress if _item_section("goal", i) == "goal"), None)
        if first:
            notes.goal.append(_line(first, _GOAL_LIMIT))
    return notes


_MOVED_ITEMS = (
    ("last step:", "in_progress", False),
    ("waiting for the result of", "in_progress", False),
    ("failed:", "blocked", True),
    ("user constraint:", "constraints", True),
)
"""Item prefixes that name their own section, whatever heading they sit under
(``True``: the prefix is a label to drop)."""


def _item_section(section: str, item: str) -> str:
    """The section an item read under ``section`` belongs to."""
    low = item.lower()
    for prefix, target, _ in _MOVED_ITEMS:
        if low.startswith(prefix):
            return target
    return section


def _strip_label(item: str) -> str:
    low = item.lower()
    for prefix, _, drop in _MOVED_ITEMS:
        if drop and low.startswith(prefix):
            return item[len(prefix):].strip()
    return item


def _context_set(notes: _Notes, item: str) -> bool:
    """Fill a set from a ``Files modified: …``-style item; True when ``item`` was one."""
    low = item.lower()
    targets = {
        "files modified:": notes.files_modified,
        "files read:": notes.files_read,
        "commands run:": notes.commands,
        "identifiers:": notes.identifiers,
    }
    for prefix, target in targets.items():
        if low.startswith(prefix):
            for span in _spans(item):
                target[span] = None
            return True
    return low.startswith("focus requested:")


# --------------------------------------------------------------------------------------------
# Merging and rendering.


def _dedupe(items: Iterable[str]) -> list[str]:
    """Items without repeats; when two share a key the later one wins, at the later place."""
    out: dict[str, str] = {}
    for item in items:
        key = _key(item)
        if not key:
            continue
        out.pop(key, None)
        out[key] = item
    return list(out.values())


def _ends(items: list[str], cap: int) -> list[str]:
    """At most ``cap`` items: the first half and the last half of ``items``."""
    if len(items) <= cap:
        return items
    head = cap // 2
    return items[:head] + items[len(items) - (cap - head):]


def _touch(names: dict[str, None], name: str) -> None:
    """Add ``name`` to an insertion-ordered set, or move it to the end (most recent last)."""
    names.pop(name, None)
    names[name] = None


def _union(*sets: dict[str, None]) -> dict[str, None]:
    """The union of insertion-ordered sets; a name seen again moves to the end."""
    out: dict[str, None] = {}
    for names in sets:
        for name in names:
            _touch(out, name)
    return out


def _merge(base: _Notes, new: _Notes, *, finished_turn: bool, successes: set[str]) -> _Notes:
    """``base`` updated with ``new``: see the module docstring for the rules."""
    out = _Notes()
    goals = _dedupe([*base.goal, *new.goal]) if base.goal else list(new.goal)
    if base.goal:
        # the earlier main goal stays first even when a new request repeats it
        main_key = _key(base.goal[0])
        goals = [base.goal[0], *(g for g in goals if _key(g) != main_key)]
    out.goal = goals[:1] + goals[1:][-_CAP_GOALS:]
    out.goal_dropped = base.goal_dropped + new.goal_dropped + max(0, len(goals) - 1 - _CAP_GOALS)

    out.constraints = _dedupe([*base.constraints, *new.constraints])
    out.decisions = _dedupe([*base.decisions, *new.decisions])

    moved = [f"Handled: {i}" for i in base.in_progress
             if not i.lower().startswith(("last step:", "waiting for", "handled:"))]
    still = [] if finished_turn else list(base.in_progress)
    resolved: list[str] = []
    blocked: list[str] = []
    for item in base.blocked:
        if any(span in successes or _core_command(span) in successes for span in _spans(item)):
            resolved.append(f"Resolved: {item}")
        else:
            blocked.append(item)
    done = _dedupe([*base.done, *(moved if finished_turn else []), *resolved, *new.done])
    out.done_dropped = base.done_dropped + new.done_dropped
    out.done = done
    out.in_progress = _dedupe([*still, *new.in_progress])
    out.blocked = _dedupe([*blocked, *new.blocked])
    out.next_steps = list(base.next_steps)
    out.context = _dedupe([*base.context, *new.context])
    out.files_read = _union(base.files_read, new.files_read)
    out.files_modified = _union(base.files_modified, new.files_modified)
    out.commands = _union(base.commands, new.commands)
    out.identifiers = {**new.identifiers, **{k: None for k in base.identifiers if k not in new.identifiers}}
    return out


_BLOCKER_SPLIT_RE = re.compile(r" (?:failed|exited with code|was cancelled)\b|: ")


def _blocker_head(item: str) -> str:
    """The subject of a Blocked item: the part before *failed*, *exited with code* or ``: ``."""
    head = _BLOCKER_SPLIT_RE.split(item, 1)[0]
    return _line(head, 120) if head.strip() else _line(item, 120)


def _next_steps(notes: _Notes, last_request: str, answered: bool) -> list[str]:
    """Numbered-list items derived from unfinished work and open errors."""
    steps: list[str] = []
    for item in notes.in_progress:
        if item.lower().startswith("waiting for the result of "):
            steps.append("Check the result of " + item[len("waiting for the result of "):])
        elif not item.lower().startswith("last step:"):
            steps.append(f"Finish: {item}")
    for item in notes.blocked[-3:]:
        if item.startswith("The assistant's reply"):
            steps.append("Pick up the work where the interrupted reply stopped (see Blocked)")
        else:
            steps.append(f"Fix {_blocker_head(item)} (see Blocked)")
    steps = list(dict.fromkeys(steps))
    if not steps and last_request and answered:
        steps.append(
            f"Confirm with the user that the last request is settled "
            f"({_gist(last_request, 140, enough=1, most=1)}), then take the next one."
        )
    if not steps and notes.goal:
        steps.append(f"Continue toward the goal: {notes.goal[0]}")
    if not steps:
        steps.append("Review the current state of the work and ask the user how to continue.")
    return steps


def _focus_words(instructions: str) -> list[str]:
    words = re.findall(r"\w{3,}", instructions.lower())
    return list(dict.fromkeys(w for w in words if w not in _FOCUS_STOP))


def _focus_first(items: list[str], words: list[str]) -> list[str]:
    """``items`` ordered by how many of ``words`` they mention, most first (stable otherwise)."""
    if not words:
        return items
    return sorted(items, key=lambda item: -sum(w in item.lower() for w in words))


def _names(label: str, names: Iterable[str], budget: int = _LIST_BUDGET) -> str | None:
    """``Label: `a`, `b` (+N earlier)`` or ``None`` when there are no names.

    Shows the most recent names (the last ones) that fit ``budget`` characters, at most
    :data:`_LIST_NAMES`, in their original order.
    """
    values = list(names)
    if not values:
        return None
    shown: list[str] = []
    size = 0
    for value in reversed(values[-_LIST_NAMES:]):
        if shown and size + len(value) + 4 > budget:
            break
        shown.append(_code(value))
        size += len(value) + 4
    shown.reverse()
    more = f" (+{len(values) - len(shown)} earlier)" if len(values) > len(shown) else ""
    return f"{label}: {', '.join(shown)}{more}"


def _context_items(notes: _Notes, focus: str, words: list[str], cap: int) -> list[str]:
    """The Critical Context items: focus, files, commands, identifiers, then free items.

    The derived lists always come first and are never dropped (so they survive an update);
    the free items fill the rest up to ``cap``, those naming the focus first, with at most
    three resolved errors.
    """
    modified = list(notes.files_modified)
    read_only = [p for p in notes.files_read if p not in notes.files_modified]
    derived = [
        f"Focus requested: {_line(focus, 200)}" if focus else None,
        _names("Files modified", modified),
        _names("Files read", read_only),
        _names("Commands run", list(notes.commands)[-6:]),
        _names("Identifiers", list(notes.identifiers)[:10]),
    ]
    fixed = [i for i in notes.context if i.startswith("Earlier error (resolved):")][-3:]
    free = [i for i in notes.context if not i.startswith("Earlier error (resolved):")] + fixed
    items = [item for item in derived if item]
    return items + _focus_first(free, words)[: max(0, cap - len(items))]


def _plain(text: str) -> str:
    """``text`` as a free-standing line that cannot start a list, quote, fence or tag."""
    return _line(text, _GOAL_LIMIT).lstrip("-*+<|>~`# ") or _NO_GOAL


def _bullets(items: list[str], prefix: str = "- ", limit: int = _ITEM_LIMIT) -> list[str]:
    """Items as list lines, or the ``(none)`` line when there are none."""
    if not items:
        return [f"- {_NONE}"]
    return [f"{prefix}{_line(item, limit)}" for item in items]


def _render(kind: str, notes: _Notes, focus: str) -> str:
    """Lay the notes out in the Markdown layout of ``kind``."""
    words = _focus_words(focus) if focus else []
    if kind == "turn_prefix":
        return _render_turn(notes, focus, words)
    lines = ["## Goal"]
    if notes.goal:
        lines.append(_plain(notes.goal[0]))
        lines += [f"- {_line(g)}" for g in _focus_first(notes.goal[1:], words)]
        if notes.goal_dropped:
            lines.append(f"- (+{notes.goal_dropped} more requests)")
    else:
        lines.append(_NO_GOAL)
    lines += ["", "## Constraints & Preferences"]
    lines += _bullets(_focus_first(_ends(notes.constraints, _CAP_CONSTRAINTS), words))

    done = notes.done[-_CAP_DONE:]
    dropped = notes.done_dropped + len(notes.done) - len(done)
    lines += ["", "## Progress", "### Done"]
    lines += _bullets(_focus_first(done, words), "- [x] ")
    if dropped and done:
        lines.append(f"- [x] … and {dropped} earlier items")
    lines += ["", "### In Progress"]
    lines += _bullets(_focus_first(notes.in_progress[-_CAP_IN_PROGRESS:], words), "- [ ] ")
    lines += ["", "### Blocked"]
    lines += _bullets(_focus_first(notes.blocked[-_CAP_BLOCKED:], words))
    lines += ["", "## Key Decisions"]
    lines += _bullets(_focus_first(notes.decisions[-_CAP_DECISIONS:], words))
    lines += ["", "## Next Steps"]
    steps = _focus_first(notes.next_steps[:_CAP_NEXT], words)
    lines += [f"{n}. {_line(step)}" for n, step in enumerate(steps, 1)]
    if kind != "branch":
        lines += ["", "## Critical Context"]
        lines += _bullets(_context_items(notes, focus, words, _CAP_CONTEXT), limit=_LIST_BUDGET + 100)
    return "\n".join(lines)


def _render_turn(notes: _Notes, focus: str, words: list[str]) -> str:
    """The short layout of a split turn's first part."""
    lines = ["## Original Request"]
    lines.append(_plain(notes.goal[0]) if notes.goal else _NO_GOAL)
    progress: list[str] = list(notes.done)
    reads = [p for p in notes.files_read if p not in notes.files_modified]
    listed = _names("Read", reads)
    if listed:
        progress.insert(0, listed)
    progress += [f"Failed: {item}" for item in notes.blocked]
    progress += [item for item in notes.in_progress if item.lower().startswith(("last step:", "waiting for"))]
    lines += ["", "## Progress So Far"]
    lines += _bullets(_focus_first(progress[-_CAP_TURN_PROGRESS:], words))
    extra = _Notes(context=[*(f"User constraint: {c}" for c in notes.constraints[:2]), *notes.context])
    extra.files_read, extra.files_modified = notes.files_read, notes.files_modified
    extra.commands, extra.identifiers = notes.commands, notes.identifiers
    lines += ["", "## Context Needed to Continue"]
    lines += _bullets(_context_items(extra, focus, words, _CAP_TURN_CONTEXT), limit=_LIST_BUDGET + 100)
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Messages recovered from the serialized conversation (when a request carries no messages).

_BLOCK_RE = re.compile(r"(?:^|\n\n)\[(User|Assistant|Assistant tool calls|Tool result)\]: ")
_CALL_NAME_RE = re.compile(r"(?:^|; )([A-Za-z_][\w.\-]*)\(")
_ARG_RE = re.compile(r"(?:\(|, )(path|command)=")
_EXIT_RE = re.compile(r"Command exited with code [1-9]|^Error\b")


def _messages_from_text(text: str) -> list[dict[str, Any]]:
    """Rebuild rough AgentMessages from Pi's serialized conversation text.

    Tool results are paired with the calls in order; one counts as failed when it says
    ``Command exited with code N`` (N > 0) or starts with ``Error``. Text without Pi's block
    markers is read as one user message.
    """
    parts = _BLOCK_RE.split(text[:5_000_000])
    if len(parts) == 1:
        return [{"role": "user", "content": text[:_SCAN_LIMIT]}] if text.strip() else []
    messages: list[dict[str, Any]] = []
    waiting: list[tuple[str, str]] = []
    decoder = json.JSONDecoder()
    count = 0
    for label, body in zip(parts[1::2], parts[2::2], strict=False):
        if label == "User":
            messages.append({"role": "user", "content": body})
        elif label == "Assistant":
            messages.append({"role": "assistant", "content": [{"type": "text", "text": body}],
                             "stopReason": "stop"})
        elif label == "Assistant tool calls":
            blocks: list[dict[str, Any]] = []
            starts = list(_CALL_NAME_RE.finditer(body))
            for index, start in enumerate(starts):
                end = starts[index + 1].start() if index + 1 < len(starts) else len(body)
                arguments: dict[str, Any] = {}
                for arg in _ARG_RE.finditer(body, start.end() - 1, end):
                    try:
                        value, _ = decoder.raw_decode(body, arg.end())
                    except ValueError:
                        continue
                    arguments[arg.group(1)] = value
                count += 1
                call_id = f"text-call-{count}"
                waiting.append((call_id, start.group(1)))
                blocks.append({"type": "toolCall", "id": call_id, "name": start.group(1),
                               "arguments": arguments})
            last = messages[-1] if messages else None
            if last is not None and last.get("role") == "assistant" and last.get("stopReason") == "stop":
                last["content"] = [*last["content"], *blocks]
                last["stopReason"] = "toolUse"
            else:
                messages.append({"role": "assistant", "content": blocks, "stopReason": "toolUse"})
        else:
            call_id, name = waiting.pop(0) if waiting else ("", "tool")
            messages.append({"role": "toolResult", "toolCallId": call_id, "toolName": name,
                             "content": body, "isError": bool(_EXIT_RE.search(body))})
    return messages


# --------------------------------------------------------------------------------------------
# The summarizer.


class OfflineSummarizer:
    """Pikit's default summarizer: structured notes built from the conversation itself.

    Deterministic (the same request always gives the same text), offline, key-free, and fast
    enough to run inside sweeps and replays (a few milliseconds for hundreds of messages).
    It reads :attr:`SummaryRequest.messages`; when a request has none it recovers them from
    :attr:`SummaryRequest.conversation_text`.

    Example::

        result = OfflineSummarizer().summarize(SummaryRequest("history", text, messages))
        print(result.text)  # "## Goal\\n…"
    """

    name = "offline"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        """Summarize ``request`` in the layout of its kind.

        ``kind="history"`` updates ``previous_summary`` when there is one; the other kinds
        treat it as background and only fall back on it when there are no messages.

        Raises:
            SummarizerError: there is nothing to summarize (no messages, no conversation text,
                no previous summary).
        """
        messages = _as_messages(request.messages)
        if not messages and isinstance(request.conversation_text, str) and request.conversation_text.strip():
            messages = _messages_from_text(request.conversation_text)
        previous = request.previous_summary if isinstance(request.previous_summary, str) else ""
        previous = previous if previous.strip() else ""
        if not messages and not previous:
            raise SummarizerError("offline summarizer: nothing to summarize (no messages and no previous summary)")
        focus = request.instructions.strip() if isinstance(request.instructions, str) else ""

        reader = _Reader()
        reader.read(messages)
        new = reader.notes()
        base = _Notes()
        for earlier in reader.embedded:
            base = _merge(base, _parse_notes(earlier), finished_turn=False, successes=set())
        if previous and (request.kind == "history" or not messages):
            base = _merge(_parse_notes(previous), base, finished_turn=False, successes=set())
        if base.empty():
            notes = new
        else:
            notes = _merge(base, new, finished_turn=reader.finished_turn, successes=reader.successes)
        if messages or not notes.next_steps:
            notes.next_steps = _next_steps(notes, reader.last_request(), reader.answered)
        if not notes.goal and previous and request.kind == "turn_prefix":
            goal = _parse_notes(previous).goal[:1]
            notes.goal = [f"(begun before this part; the session goal: {goal[0]})"] if goal else []
        notes.constraints = _ends(_dedupe(notes.constraints), _CAP_CONSTRAINTS)
        return SummaryResult(text=_render(request.kind, notes, focus), usage=None, model="offline")


def _as_messages(messages: Any) -> list[Any]:
    """``messages`` as a list, or an empty list when it is not a sequence of items."""
    if messages is None or isinstance(messages, str | bytes | bytearray | Mapping):
        return []
    try:
        return list(messages)
    except TypeError:
        return []
