"""The text rules of fact extraction: sentences, what a sentence states, what a command does.

Every rule here is a fixed pattern over one text, so the same text always gives the same
answer. :mod:`._facts` applies them to the messages of a replaced span; its docstring lists
the kinds with examples.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, TypeVar, cast

__all__ = [
    "STOP_WORDS",
    "command_core",
    "command_weight",
    "commit_message",
    "content_words",
    "decision_sentence",
    "finding_sentence",
    "has_digit",
    "progress_sentence",
    "sentences",
    "strip_code",
    "summary_sections",
    "task_sentence",
    "test_summary",
    "text_cache",
]

_F = TypeVar("_F", bound=Callable[..., Any])


def text_cache(maxsize: int, chars: int) -> Callable[[_F], _F]:
    """A least-recently-used cache of ``maxsize`` answers for a pure function of a text (its first argument) and
    hashable others, kept only for a text of ``chars`` characters or fewer: the cache holds ``maxsize × chars``
    characters at most, however long the texts it is given."""
    def wrap(function: _F) -> _F:
        cached = lru_cache(maxsize=maxsize)(function)

        @wraps(function)
        def call(text: str, *args: Any) -> Any:
            return (cached if len(text) <= chars else function)(text, *args)
        return cast(_F, call)
    return wrap

STOP_WORDS = frozenset([
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does",
    "doing", "done", "down", "during", "each", "else", "few", "for", "from", "further", "had", "has", "have",
    "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its",
    "itself", "just", "let", "me", "more", "most", "my", "no", "nor", "not", "now", "of", "off", "on", "once",
    "only", "or", "other", "our", "ours", "out", "over", "own", "same", "she", "so", "some", "such", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under",
    "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why",
    "will", "with", "would", "you", "your", "yours", "yes", "ok", "okay", "alright", "one", "two", "get", "got",
    "make", "made", "like", "still", "maybe", "yeah", "sure", "well", "way", "thing", "things", "something",
    "anything", "everything", "want", "need", "think", "feel", "look", "looks", "see", "use", "using", "used",
    "new", "old", "really", "actually", "please", "btw", "instead", "because", "since", "though", "although",
    "rather", "whose", "it's", "i'm", "let's", "don't", "can't", "won't", "isn't",
])
"""Words that say nothing on their own: not identifiers, not content words of a sentence."""

_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)
_ABBREVIATIONS = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|resp|Mr|Ms|Dr|No|viz)\.$", re.IGNORECASE)
_LONGEST_ABBREVIATION = len("approx.") + 1  # (with the character before it, for the word boundary)
_LIST_NUMBER = re.compile(r"\d{1,3}\.|[a-z]\.")
#: Where a sentence ends: a full stop, ``!`` or ``?`` with the closing brackets and quotes and the space after it
#: (group 1), or a run of newlines. (It starts with one set of characters, which the regular expression engine
#: looks for quickly; two alternatives, each with its own first character, would be tried at every position.)
_BOUNDARY = re.compile(r"[.!?\n](?:(?<=[.!?])([)\]\"'”’]*\s+)|(?<=\n)\n*)")
_WORD = re.compile(r"[A-Za-z][\w.\-/]*[A-Za-z0-9_]|[A-Za-z]{3,}")
_SUFFIXES = ("ing", "ed", "es", "s", "ly")
_LEAD = re.compile(r"^(?:(?:ok(?:ay)?|alright|all right|so|now|then|and|also|btw|great|cool|good|nice|perfect|yes|"
                   r"yeah|right|hm+|hey|well|next|first|finally|please)\b[\s,.!:;-]*)+", re.IGNORECASE)
_IMPERATIVE = frozenset([
    "add", "adjust", "analyse", "analyze", "apply", "build", "bump", "change", "check", "clean", "commit",
    "compare", "continue", "convert", "copy", "create", "debug", "delete", "deploy", "describe", "design",
    "document", "do", "drop", "explain", "extract", "find", "finish", "fix", "generate", "give", "go", "implement",
    "improve", "install", "investigate", "keep", "list", "look", "make", "merge", "migrate", "move", "optimize",
    "port", "prepare", "profile", "provide", "push", "put", "read", "rebase", "refactor", "reimplement", "remove",
    "rename", "replace", "resolve", "restore", "restructure", "revert", "review", "rewrite", "run", "set", "setup",
    "show", "simplify", "speed", "split", "start", "stop", "summarize", "support", "switch", "test", "tidy",
    "trace", "try", "turn", "undo", "update", "upgrade", "use", "validate", "verify", "wire", "write",
])
_REQUEST = re.compile(r"\b(?:i (?:want|need|would like|'d like|’d like) (?:you )?to|i'd like to|i (?:\w+ly )?want\b|"
                      r"can you|could you|"
                      r"would you|will you|can we|could we|please|let'?s|let us|we need to|we should|your task|"
                      r"help me|make sure|i'?m asking)\b", re.IGNORECASE)
_WH_QUESTION = re.compile(r"(?:why|how|what|which|where)\b", re.IGNORECASE)
_DECISION = re.compile(r"\b(?:decid(?:e|ed|ing) (?:to|on|that)|decision|go(?:ing)? with|went with|chose|choose to|"
                       r"opt(?:ed)? (?:for|to)|instead of|rather than|settled on|the (?:plan|approach) is|"
                       r"we(?:'ll| will) use|i(?:'ll| will) use|let'?s (?:use|keep|go)|keep .{1,40} for reference|"
                       r"back to plan|go back to)\b",
                       re.IGNORECASE)
_FINDING = re.compile(r"^(?:(?:i )?found\b|the (?:issue|problem|bug|cause|culprit|error|failure|reason) (?:is|was|"
                      r"comes|lies)\b|(?:it )?turns out\b|root cause\b|this (?:means|confirms|shows|explains)\b|"
                      r"confirmed\b|the tests? (?:pass|fail)|all (?:\d+ )?tests? pass|tests? (?:now )?pass|"
                      r"(?:the )?build (?:passes|fails|succeeds)|no (?:errors|issues|warnings)\b|nothing else uses\b|"
                      r".*\b(?:(?:that|this|which) is why|that's why|is caused by|depends? on)\b)", re.IGNORECASE)
_PROGRESS = re.compile(r"^(?:(?:all )?done\b|completed?\b|finished\b|✅|successfully\b|(?:i'?ve|i have|we'?ve|we have) "
                       r"(?:now )?(?:added|created|implemented|fixed|updated|removed|renamed|written|moved|refactored|"
                       r"committed|finished|completed|extracted|replaced|deleted)\b|(?:added|created|implemented|"
                       r"fixed|updated|removed|renamed|wrote|moved|refactored|committed|extracted|replaced|deleted)"
                       r"\b|(?:still )?(?:remaining|todo|not yet)\b|next (?:step|up)s?\b|(?:everything|it) "
                       r"(?:now )?works\b|(?:i|we) (?:\w+ed|left|wrote|made|kept|put|built|ran|set)\b|the tests? "
                       r"(?:now )?cover\b)", re.IGNORECASE)
_SUMMARY_LINE = (r"(?:(?:=+ )?\d+ (?:passed|failed)\b.*|Tests?:?\s+\d+.*|Test (?:Files|Suites):?\s+\d+.*|"
                 r"Ran \d+ tests?\b.*|(?:OK|FAILED)(?: \(.*\))?|test result: .*|Found \d+ errors?\b.*|"
                 r"\d+ (?:tests?|specs?|examples?) (?:passed|failed|completed)\b.*|(?:# )?(?:pass|fail) \d+)")
#: The summary lines of a test run in a text after a newline (``"\n" + text``; see :data:`_ERROR_LINES` in
#: ``_facts``: a pattern that starts with a newline is looked for a character at a time), a line's first
#: character checked before the kinds of summary are tried one by one.
_TEST_SUMMARY = re.compile(rf"\n\s*(?=[\d=#tTrRoOfFpP]){_SUMMARY_LINE}\s*(?=\n|\Z)", re.IGNORECASE)
_EXPLORATORY = frozenset([
    "grep", "rg", "ag", "ack", "tail", "head", "wc", "mkdir", "ls", "cat", "find", "echo", "pwd", "which", "tree",
    "file", "stat", "less", "more", "sort", "uniq", "cut", "du", "df", "date", "true", "sleep", "printf", "env",
    "type", "whereis", "realpath", "dirname", "basename", "diff", "cd", "clear", "history",
])
_KEY_PROGRAMS = frozenset([
    "npm", "npx", "yarn", "pnpm", "bun", "node", "tsc", "pytest", "cargo", "go", "make", "cmake", "mvn", "gradle",
    "uv", "pip", "pip3", "poetry", "tox", "nox", "jest", "vitest", "deno", "docker", "dotnet", "rustc", "mix",
    "bundle", "rake",
])
_GIT_READ = frozenset([
    "status", "log", "diff", "show", "branch", "remote", "config", "rev-parse", "ls-files", "blame", "grep", "fetch",
])
_SECTION = re.compile(r"^#{1,4}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.+?)\s*$", re.MULTILINE)
_COMMIT = re.compile(r"\bgit\b[^|;&]*?\bcommit\b[^|;&]*?-[a-zA-Z]*m\s*(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)')")
_SECTION_KINDS = (("constraint", ("constraint", "preference", "rule", "requirement")),
                  ("decision", ("decision",)),
                  ("task", ("goal", "task", "objective", "request")),
                  ("progress", ("progress", "done", "complete", "status", "next", "remaining", "blocked", "todo",
                                "work package", "in progress")),
                  ("finding", ("finding", "critical context", "context", "learned", "discover", "issue",
                               "problem", "notes")))


def strip_code(text: str) -> str:
    """``text`` without its fenced code blocks (```` ``` ```` or ``~~~``, an unclosed one to the end)."""
    return _FENCE.sub("\n", text) if "```" in text or "~~~" in text else text


def sentences(text: str) -> list[str]:
    """The sentences of ``text``: split after ``.``, ``!`` or ``?`` and a space and at line ends, but not
    after an abbreviation (``e.g.``, ``i.e.``, ``etc.``, ``vs.``), the number of a list item (``1. Wait``) or
    inside a name (``setup.cfg``)."""
    out: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        gap = match.group(1)  # (after a full stop: the closing brackets and quotes and the space; a newline: None)
        end = match.start() if gap is None else match.start(1)
        piece = text[start:end]
        if gap is not None and gap.isspace() and "\n" not in gap and text[end - 1] == "." and (
                _ABBREVIATIONS.search(piece[-_LONGEST_ABBREVIATION:]) or _LIST_NUMBER.fullmatch(piece.strip())):
            continue
        out.append(piece)
        start = match.end()
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]


def stem(word: str) -> str:
    """A word without a plural or verb ending (``tests`` → ``test``, ``created`` → ``creat``), lower case."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[:-len(suffix)]
    return word


@lru_cache(maxsize=1 << 16)
def _content(word: str) -> str | None:
    """The stem of one word if it carries content (see :func:`content_words`), else ``None``."""
    word = word.rstrip(".-").rsplit("/", 1)[-1]
    if len(word) < 3 or word.lower() in STOP_WORDS:
        return None
    return word.lower() if "." in word else stem(word)


def content_words(text: str) -> set[str]:
    """The stems of the words of ``text`` that carry its content: three characters or more, not a
    :data:`STOP_WORDS` word; a path counts as its last part (``src/a.py`` → ``a.py``), a dotted name as
    itself (not stemmed)."""
    out = set(map(_content, set(_WORD.findall(text))))
    out.discard(None)
    return out  # type: ignore[return-value]


def _bare(sentence: str) -> str:
    return _LEAD.sub("", sentence.strip(" \t>*_-:")).strip()


def task_sentence(sentence: str) -> bool:
    """Whether a sentence of a user message asks for something: it starts (after ``ok,``, ``alright``, ``now``
    and the like) with an imperative verb (``create a branch refactor``), or holds a request (``I want you to``,
    ``can you``, ``can we``, ``please``, ``let's``, ``we need to``), or is a question that asks *why*, *how*,
    *what*, *which* or *where*. ``will this also work?`` is a yes-or-no question, not a task."""
    bare = _bare(sentence)
    if _REQUEST.search(bare):
        return True
    if bare.endswith("?"):
        return bool(_WH_QUESTION.match(bare))
    for clause in bare.split(", "):
        clause = _bare(clause)
        first = clause.split(" ", 1)[0].lower().strip(",.:;!?")
        if first in _IMPERATIVE and len(clause) > len(first) + 2:
            return True
    return False


def decision_sentence(sentence: str) -> bool:
    """Whether a sentence states a choice: *decided to*, *go with*, *chose*, *instead of*, *rather than*, *the plan
    is*, *we'll use*, *let's keep* (``Use a new main-new.ts instead of editing main.ts, so both can be compared``)."""
    return bool(_DECISION.search(sentence))


def finding_sentence(sentence: str) -> bool:
    """Whether a sentence of the agent states what it established: it starts with *found*, *the issue is*,
    *the cause was*, *it turns out*, *this means*, *confirmed*, *the tests pass*, *no errors*, *nothing else
    uses*, or it says why (*that is why*, *is caused by*, *depends on*)."""
    return bool(_FINDING.match(_bare(sentence)))


def progress_sentence(sentence: str) -> bool:
    """Whether a sentence of the agent says what is done or not done: it starts with *done*, *completed*, ✅,
    *I've added*, *Fixed*, *Created*, *remaining*, *not yet*, *next step*, *it now works*, *I changed*, *we
    moved* (I or we and a past tense), *the tests now cover*."""
    return bool(_PROGRESS.match(_bare(sentence)))


def test_summary(text: str) -> list[str]:
    """The summary lines of a test or check run in a tool's output (``5 passed, 1 failed``, ``Tests: 3 failed``,
    ``Ran 12 tests``, ``FAILED (errors=1)``, ``test result: ok``, ``Found 2 errors``)."""
    return [line.strip() for line in _TEST_SUMMARY.findall("\n" + text) if line.strip()] if has_digit(text) \
        or "OK" in text or "FAIL" in text else []


def has_digit(text: str) -> bool:
    """Whether ``text`` holds a digit (``str.isdigit``: in an ASCII text, one of ``0``–``9``, each looked for with
    ``in``, much faster than a character at a time)."""
    if text.isascii():
        return any(map(text.__contains__, "0123456789"))
    return any(c.isdigit() for c in text)


def commit_message(command: str) -> str | None:
    """The first line of the message of a ``git commit -m "…"`` in ``command`` (``None``: no commit)."""
    match = _COMMIT.search(command) if "commit" in command else None
    if match is None:
        return None
    message = match.group(1) if match.group(1) is not None else match.group(2)
    return message.replace('\\"', '"').strip().split("\n", 1)[0] or None


def command_core(command: str) -> str:
    """``command`` without a leading ``cd DIR &&`` (or ``;``) and environment assignments (what it does, not where)."""
    core = command.strip()
    while True:
        stripped = re.sub(r"^(?:cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*|[A-Z_][A-Z0-9_]*=\S*\s+)", "", core)
        if stripped == core:
            return core
        core = stripped


def _programs(core: str) -> list[list[str]]:
    """The words of each simple command of ``core`` (split at ``&&``, ``||``, ``;`` and ``|`` outside quotes)."""
    lexer = shlex.shlex(core, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = core.split()
    out: list[list[str]] = [[]]
    for token in tokens:
        if token and set(token) <= set("&|;()"):
            out.append([])
        else:
            out[-1].append(token)
    return [words for words in out if words]


@text_cache(maxsize=1 << 12, chars=1_000)
def command_weight(command: str) -> str | None:
    """``"key"``, ``"minor"`` or ``None`` (noise) for a shell command.

    Noise: every simple command only looks (``grep``, ``rg``, ``tail``, ``wc``, ``ls``, ``cat``, ``mkdir``,
    ``echo``, ``git status``/``log``/``diff``; ``cd DIR && grep -n x f | head`` too), and a ``git commit``
    (its message is a ``progress`` fact). Key: a build, test, check or install (``npm run check``, ``pytest``,
    ``cargo test``, ``make``) or a git command that changes the branch (``git checkout -b refactor``). Minor: the rest.
    """
    programs = _programs(command_core(command))
    if not programs:
        return None
    names = [words[0].rsplit("/", 1)[-1] for words in programs]
    if all(n in _EXPLORATORY or (n == "sed" and "-n" in w) or (n == "git" and len(w) > 1 and w[1] in _GIT_READ)
           for n, w in zip(names, programs, strict=True)):
        return None
    if any(n == "git" and len(w) > 1 and w[1] in ("commit", "add") for n, w in zip(names, programs, strict=True)) \
            and all(n in _EXPLORATORY or n == "git" for n in names) and commit_message(command):
        return None
    if any(n in _KEY_PROGRAMS or n.startswith("python") for n in names):
        return "key"
    if any(n == "git" and len(w) > 1 and w[1] in ("checkout", "switch", "merge", "rebase", "push", "reset", "revert",
                                                   "cherry-pick", "stash", "tag") for n, w in zip(names, programs,
                                                                                                  strict=True)):
        return "key"
    return "minor"


def _section_kind(heading: str) -> str | None:
    lower = heading.lower()
    for kind, words in _SECTION_KINDS:
        if any(word in lower for word in words):
            return kind
    return None


def _section_items(body: str) -> list[str]:
    """The list items of a section (``- x``, ``1. x``, ``- [x] x``), its table rows but the header (cells joined
    by a space), or, with neither, the sentences of its lines."""
    items: list[str] = []
    plain: list[str] = []
    header = True
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("|"):
            if not set(stripped) <= set("|-: ") and not header:
                items.append(" ".join(c.strip() for c in stripped.strip("|").split("|") if c.strip()))
            header = False
            continue
        header = True
        item = _ITEM.match(line)
        if item:
            items.append(item.group(1))
        elif not stripped.startswith("<"):
            plain += sentences(stripped)
    return items or plain


def summary_sections(text: str) -> list[tuple[str, str]]:
    """``(kind, item)`` for each list item (or table row, or line) under a heading of a structured summary, by
    the heading: *Goal*/*Task* → ``task``, *Constraints & Preferences* → ``constraint``, *Key Decisions* →
    ``decision``, *Progress*/*Done*/*Next Steps*/*Status* → ``progress``, *Critical Context* → ``finding``. Lines
    under any other heading give nothing; ``(none)`` is no item."""
    out: list[tuple[str, str]] = []
    headings = list(_SECTION.finditer(text))
    for i, heading in enumerate(headings):
        kind = _section_kind(heading.group(1))
        if kind is None:
            continue
        body = strip_code(text[heading.end():headings[i + 1].start() if i + 1 < len(headings) else len(text)])
        out += [(kind, item) for item in _section_items(body)
                if item.lower().strip("()._ ") not in ("none", "n/a", "", "-")]
    return out
