"""What the reader looks for: rule and decision words, finished work, error lines, command lines.

Each helper decides about one sentence or line; ``reader`` applies
them while it walks the messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .text import _ACK_RE, _ERROR_SCAN_LIMIT, _MARKER_RE, _NON_WORD_RE, _clean, _Keywords, _line, _spans, _weight

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
_OPINION_RE = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|hm+|so|well|yeah|yes|no)\b[,.!]?\s+)*i (?:don'?t |do not )?"
    r"(?:think|tink|guess|believe|feel|wonder|suppose)\b",
    re.I,
)
"""A sentence that gives an opinion ("i think there's only one file left"): not a rule."""
_HEDGE_RE = re.compile(r"\b(?:might|maybe|perhaps|probably|i bet|i guess|could be|would explain|not sure)\b", re.I)
"""A guess ("I bet it loads the light theme instead"): not a decision."""
_IDENT_RE = re.compile(r"^[A-Za-z_$@~.][\w$@.:/\-]*(?:\(\))?$")


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


_FILLER_RE = re.compile(
    r"^(?:(?:all |it'?s |it is |and )?(?:done|fixed|finished|complete[d]?)|perfect|great|excellent|good|"
    r"ok(?:ay)?|alright|all set)(?:\s*[.!:,;\u2014\u2013-]+\s*|\s*$)"
    r"|^(?:a )?(?:quick |brief |short )?summary(?: of [^:]{0,60})?:\s*",
    re.I,
)
"""A report's opening words ("Done.", "Perfect!", "Summary of changes:") that carry no content."""
_SUMMARY_INTRO_RE = re.compile(
    r"^here(?:'s| is| are)\b[^.!?]{0,80}?(?:summary|overview|recap|what (?:i|we|was)\b[^.!?]{0,40})[^.!?]{0,40}[:.]?$",
    re.I,
)
"""A sentence that only announces a summary ("Here's a summary of what changed:")."""
_SHELL_RE = re.compile(
    r"^(?:\$\s*)?(?:grep|egrep|rg|ag|ack|find|sed|awk|cat|ls|cd|git|npm|npx|pnpm|yarn|python3?|pip|node|"
    r"make|cargo|go|curl|wget|echo|head|tail|wc|sort)\s+[-\w./'\"]"
    r"|\s\|\s*(?:grep|rg|head|tail|sed|awk|wc|sort|xargs)\b|\d?>&\d|\s&&\s",
)
"""A command line: it may hold *only* or *never*, but it is not a rule the user set."""
_WRAPPED_LINE = 60  # a line at least this long without an end mark was wrapped, not ended


def _is_rule(text: str, begin: int, sentence: str) -> bool:
    """Whether a sentence found around a constraint word reads as a rule the user set.

    Command lines, lines wrapped from a longer paste (an error message broken over lines)
    and list items that only mention the word in passing ("- locations where those modules
    should go") are not rules, and neither are opinions ("i don't think it works").
    """
    if _SHELL_RE.search(sentence) or _OPINION_RE.match(sentence):
        return False
    end = text.find("\n", begin)
    line = text[begin:end if end >= 0 else len(text)].lstrip()
    starts_lower = not sentence[:1].isupper()
    if _MARKER_RE.match(line):  # a list item: the rule word must lead it, or it must read as a sentence
        return not starts_lower or bool(_CONSTRAINTS.hits(" ".join(sentence.split()[:3])))
    previous = text[:begin].rstrip(" \t")
    if previous.endswith("\n"):
        before = previous.rstrip()
        last_line = before[before.rfind("\n") + 1:]
        if starts_lower and len(last_line) >= _WRAPPED_LINE and not last_line.endswith(tuple(".!?:;。！？")):
            return False
    return True


def _plain_words(text: str) -> str:
    return _NON_WORD_RE.sub(" ", text.lower()).strip()


@dataclass(frozen=True, slots=True)
class _Signature:
    """What a decision says: its words and code spans, and its rationale."""

    head: str
    words: frozenset[str]
    spans: frozenset[str]
    reason: str

    @classmethod
    def of(cls, item: str) -> _Signature:
        head, _, reason = item.partition("**: ")
        plain = _plain_words(head)
        return cls(plain, frozenset(w for w in plain.split() if len(w) > 2), frozenset(_spans(head)),
                   _plain_words(reason))

    def restates(self, other: _Signature) -> bool:
        """True when this decision says again what ``other`` said: it names the same code twice
        over, or once while being ``other``'s rationale or having the same one, or most words
        are shared."""
        shared = self.spans & other.spans
        if len(shared) >= 2 or (shared and (self.reason == other.reason or self.head in other.reason)):
            return True
        union = self.words | other.words
        return bool(union) and len(self.words & other.words) / len(union) >= 0.6
