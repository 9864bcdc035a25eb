"""The facts of a replaced span: what a compaction had to carry over, by fixed rules.

A *fact* is one thing a later turn may need: its ``kind``, its ``text``, the id of the entry it
came from (``source``) and its ``importance``: ``"key"`` (what a follow-up agent needs to go
on: the task, decisions, findings, progress, constraints, errors, the files changed, builds and
tests run) or ``"minor"`` (a detail: a file read, a name, a number, an address). The rules read
the span's model messages (as projected, context edits applied) and nothing else, so the same
span always gives the same facts, in the order they first occur; a fact seen twice keeps its
first source. Sentences are split after ``.``, ``!`` or ``?`` and a space and at line ends,
never after ``e.g.``, ``i.e.``, ``etc.`` or inside a name (``setup.cfg``); fenced code
blocks are not prose. The sentence rules are in :mod:`._factrules`.

Kinds and their rules (key unless marked minor):

- ``task``: a sentence of a user message that asks for something, in the user's words: it starts
  with an imperative verb or holds a request (``ok, create a branch refactor``; ``I want you to do a
  deep analysis, then provide me with a plan``; ``can we put more stuff into that?``). A question
  (``will this also allow us to test the agent core?``) is not a task. The *Goal* items of an
  earlier summary in the span are tasks too.
- ``decision``: a sentence of a user or assistant message that states a choice and, in the same
  sentence, its reason (``Keep the old code for reference instead of editing main.ts, so both can be
  compared``): *decided to*, *go with*, *chose*, *instead of*, *rather than*, *the plan is*,
  *we'll use*, *let's keep*; an earlier summary's *Key Decisions*.
- ``finding``: what a command, test or read established: the summary line of a test or check run in
  a tool's output (``5 passed, 1 failed``, ``Ran 12 tests``, ``FAILED (errors=1)``), and an assistant
  sentence that starts with *found*, *the issue is*, *the cause was*, *it turns out*, *this means*,
  *the tests pass*; an earlier summary's *Critical Context*.
- ``progress``: what is done or not done: the message of a ``git commit -m``, a checklist item an edit
  ticks (``- [ ]`` → ``- [x]``), an assistant sentence that starts with *done*, *completed*, ✅,
  *I've added*, *Fixed*, *Created*, *remaining*, *not yet*, *next step*; an earlier summary's
  *Progress* and *Next Steps* items.
- ``constraint``: a sentence of a user message holding one of the words *must, never, don't, do
  not, always, only, prefer, avoid, should, make sure, required* (``i would only want e2e tests for
  AgentSession``); an earlier summary's *Constraints & Preferences* items.
- ``error``: for a tool result marked ``isError`` and a ``bashExecution`` whose ``exitCode`` is
  neither 0 nor missing, the line that says what failed: the first line that starts with an error
  word (``Error``, ``error:``, ``FAILED``, ``fatal:``, ``Traceback``, ``panic:``, ``*Error:``) or a
  diagnostic's mark (``× expected a semicolon``), else the first that holds one (*error*, *failed*,
  *cannot*, *not found*, *no such*, *denied*, *ERR!*), else the last non-empty line (never an echo of
  the script run, ``> pkg@1.0.0 check``, nor a source line a code frame quotes, ``216 │ …``);
  and up to three error-word lines of any other tool output but a file's text. Minor when the
  failing tool is ``edit``, ``write`` or ``read`` (the tool's own retry).
- ``modified_file``: the ``path`` of a ``write`` or ``edit`` tool call; a ``<modified-files>`` list in
  a summary. ``read_file`` (minor): the ``path`` of a ``read`` tool call (and of the ``nestedCalls``
  recorded on a tool result), unless the span also modifies that path; a ``<read-files>`` list.
  These are Pi's own file lists (``pikit._context.fileops.FileOps``).
- ``command``: the ``command`` of a ``bash`` tool call or a ``bashExecution`` (one line). Key: a build,
  test, check or install (``npm run check``, ``pytest``) or a git command that changes the branch
  (``git checkout -b refactor``); minor: the rest; dropped: commands that only look
  (``cd repo && grep -n x f | head``, ``tail``, ``wc``, ``ls``, ``mkdir``, ``git status``) and a
  ``git commit`` (its message is progress).
- ``identifier`` (minor): a span in backticks in user or assistant prose (backticks paired in order,
  fenced code left out) that reads as a code name (letters, digits, ``_``, ``.``, ``:``, ``$``, ``-``,
  an optional trailing ``()``; three characters or more; not a number, a path with ``/``, an English
  word such as ``with`` or ``that``, nor a file the span read or changed); and a name defined in the
  text a ``write`` or ``edit`` call puts in a file (``def``, ``class``, ``function``, ``interface``,
  ``struct``, ``enum``, ``trait`` followed by a name).
- ``number`` (minor): in user and assistant prose, a version (``v1.2``, ``1.2.3``, ``3.11``) or a whole
  number of at least four digits (``20000``, ``20,000``, ``4_096``), thousands separators removed; not
  a line number (``line 1234``, ``:1234``, ``1234 lines``).
- ``url`` (minor): every ``http://`` or ``https://`` address in any text or tool call argument.

A compaction summary or branch summary in the span (an earlier compaction's summary, which the
new one replaces) is read as such: its file lists give file facts, its structured sections
(``pikit.compaction._factrules.summary_sections``) the task, constraint, decision, progress
and finding facts it carried, its prose the identifiers, numbers and URLs.
Every text is cut to :data:`MAX_FACT_CHARS` characters.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .._context.fileops import FileOps
from ._factkinds import FACT_KINDS
from ._factrules import (
    STOP_WORDS,
    command_weight,
    commit_message,
    content_words,
    decision_sentence,
    finding_sentence,
    progress_sentence,
    sentences,
    strip_code,
    summary_sections,
    task_sentence,
    test_summary,
    text_cache,
)

__all__ = ["IMPORTANCE", "MAX_FACT_CHARS", "Fact", "extract_facts"]

IMPORTANCE = ("key", "minor")
"""A fact's importance: what a follow-up agent needs to go on, or a detail."""

MAX_FACT_CHARS = 200
"""The longest fact text kept (longer texts are cut there)."""

_MINOR_KINDS = frozenset(("read_file", "identifier", "number", "url"))


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact of a replaced span: ``kind`` (one of :data:`FACT_KINDS`), ``text``, ``source`` (entry id) and
    ``importance`` (``"key"`` or ``"minor"``, :data:`IMPORTANCE`). ``outline``: for a checklist item ticked in a
    file (``done: …``), the headings it is under in that file, nearest first (``("WP5: Model management", "Work
    packages")``), where the span shows the file."""

    kind: str
    text: str
    source: Any
    importance: str = "key"
    outline: tuple[str, ...] = ()


_WS = re.compile(r"\s+")
_URL = re.compile(r"https?://[^\s<>\"'`)\]}]+")
_URL_TAIL = ".,;:!?'\""
_BACKTICK = re.compile(r"`([^`\n]*)`")
_IDENT = re.compile(r"[A-Za-z_$][\w.:$-]*(?:\(\))?")
_DEFINED = re.compile(r"^[ \t]*(?:(?:export|default|async|pub(?:\([\w:]+\))?|public|private|abstract|static|final|"
                      r"declare)\s+)*(?:def|class|function\*?|fn|func|interface|struct|enum|trait|type)\s+"
                      r"([A-Za-z_$][\w$]*)", re.MULTILINE)
_NUMBER = re.compile(r"(?<![\w.:#-])(?:v?\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z.]+)?|v\d+|\d{1,3}(?:[,_]\d{3})+|\d{4,})"
                     r"(?![\w]|\.\d|-\d)(?!\s*lines?\b)")
_LINE_REF = re.compile(r"\b(?:lines?|L)\s*$", re.IGNORECASE)
_CONSTRAINT = re.compile(r"\b(?:must|never|don't|don’t|dont|do not|always|only|prefer|avoid|should|make sure|"
                         r"required)\b", re.IGNORECASE)
_ERROR_START = r"[ \t]*(?:error\b|fatal:|failed\b|traceback\b|panic:|[A-Z]\w*(?:Error|Exception)\b:?)"
_ERROR_LINE = re.compile(_ERROR_START, re.IGNORECASE)  # (matched at the start of one line)
#: The error lines of a text after a newline (``"\n" + text``): a pattern that starts with a newline is looked
#: for a character at a time, where one that starts with ``^`` is tried at every character.
_ERROR_LINES = re.compile(rf"\n({_ERROR_START}[^\n]*)", re.IGNORECASE)
_ERROR_MARK = re.compile(r"^\s*[×✖✘]\s|(?:^|[\s:(\[])(?:error|fatal)(?:\s+[A-Z]+\d+)?:|\b[A-Z]\w*(?:Error|Exception):|"
                         r"ERR!|\bFAIL(?:ED)?\b")
_ERROR_WORD = re.compile(r"\b(?:error|failed|failure|fatal|cannot|can't|could not|couldn't|not found|no such|"
                         r"denied|invalid|missing|unexpected|refused|timed out|ERR!)", re.IGNORECASE)
_FILE_LIST = re.compile(r"<(read-files|modified-files)>\n(.*?)\n</\1>", re.DOTALL)
_LIST_MARK = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s+")
_TICKED = re.compile(r"^\s*[-*]\s+\[[xX]\]\s+(.+?)\s*$", re.MULTILINE)
_ERROR_WORDS = ("error", "fatal:", "failed", "traceback", "panic:", "exception")
_ASCII_DIGITS = "0123456789"
_OUTPUT_FILTER = re.compile(r"(?:\s*2>&1)?(?:\s*\|\s*(?:head|tail|grep|less|cat)\b[^|]*)*\s*(?:2>&1)?\s*$")
_TOOL_ERRORS_MINOR = frozenset(("edit", "write", "read"))
_SCRIPT_ECHO = re.compile(r"^\s*>\s+\S+@\S+\s")
#: A source line a code frame quotes under its number (``  216 │ …``, ``> 12 | …``): the code, not what failed.
_CODE_FRAME = re.compile(r"\s*>?\s*\d+\s*[│|]")


def _may_hold_number(text: str) -> bool:
    """False when ``text`` has no digit, so :data:`_NUMBER` cannot match (a scan of a text for ``in`` is much
    faster than a pattern that starts with a lookbehind; a non-ASCII text is left to the pattern)."""
    return not text.isascii() or any(map(text.__contains__, _ASCII_DIGITS))


def _may_hold_error(text: str) -> bool:
    """False when ``text`` holds none of the words every :data:`_ERROR_LINE` match holds (an ASCII text folds
    as the pattern's ``IGNORECASE`` does; a non-ASCII text is left to the pattern)."""
    if not text.isascii():
        return True
    lower = text.lower()
    return any(map(lower.__contains__, _ERROR_WORDS))


def _cut(text: str) -> str:
    return text[:MAX_FACT_CHARS]


def _one_line(text: str) -> str:
    return _cut(_WS.sub(" ", text).strip())


def _is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, without the abstract-class check for a plain dict (the usual case)."""
    return type(value) is dict or isinstance(value, Mapping)


def _texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if _is_mapping(block) and block.get("type") == "text" and isinstance(block.get("text"), str):
                yield block["text"]


def _tool_calls(message: Mapping[str, Any]) -> Iterator[tuple[Any, Any, Mapping[str, Any]]]:
    """``(id, name, arguments)`` of each tool call of ``message``."""
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        if _is_mapping(block) and block.get("type") == "toolCall":
            arguments = block.get("arguments")
            yield block.get("id"), block.get("name"), arguments if _is_mapping(arguments) else {}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif _is_mapping(value):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _code_name(span: str) -> bool:
    """Whether a backticked span reads as a code name (see the module docstring)."""
    return (len(span) >= 3 and "/" not in span and _IDENT.fullmatch(span) is not None
            and not span.replace(".", "").isdigit() and span.lower() not in STOP_WORDS)


def _failure_line(text: str) -> str | None:
    """The line of a failed tool's output that says what failed (see the module docstring)."""
    lines = [line for line in text.split("\n", 400)[:400]
             if line.strip() and not _SCRIPT_ECHO.match(line) and not _CODE_FRAME.match(line)]
    for rule in (_ERROR_LINE.match, _ERROR_MARK.search, _ERROR_WORD.search):
        found = next((line for line in lines if rule(line)), None)
        if found is not None:
            return found
    return lines[-1] if lines else None


def _urls(text: str) -> Iterator[tuple[str, str]]:
    if "http" in text:
        for match in _URL.findall(text):
            yield "url", _cut(match.rstrip(_URL_TAIL))


def _numbers(text: str) -> Iterator[tuple[str, str]]:
    if _may_hold_number(text):
        for match in _NUMBER.finditer(text):
            if not _LINE_REF.search(text[max(0, match.start() - 8):match.start()]):
                yield "number", re.sub(r"(?<=\d)[,_](?=\d{3})", "", match.group())


def _identifiers(text: str) -> Iterator[tuple[str, str]]:
    if "`" in text:
        for span in _BACKTICK.findall(text):
            span = span.strip()
            if _code_name(span):
                yield "identifier", span


@text_cache(maxsize=1 << 12, chars=2_000)  # (a forked session holds its parent's messages; an agent repeats itself)
def _prose_facts(text: str, role: str) -> tuple[tuple[str, str], ...]:
    """The ``(kind, text)`` facts of a user's or the agent's prose (``role`` ``"user"`` or ``"assistant"``), in
    order (a short text said again is read once)."""
    text = strip_code(text)
    out = [*_identifiers(text), *_numbers(text), *_urls(text)]
    for sentence in sentences(text[:20_000]):
        out += _sentence_facts(sentence, role)
    return tuple(out)


@text_cache(maxsize=1 << 14, chars=1_000)
def _sentence_facts(sentence: str, role: str) -> tuple[tuple[str, str], ...]:
    """The ``(kind, text)`` facts one sentence of a user's or the agent's prose states (a sentence said again
    is read once)."""
    sentence = _LIST_MARK.sub("", sentence)
    if sentence.endswith(":") or (len(content_words(sentence)) < 2
                                  and not (role == "user" and task_sentence(sentence))):
        return ()
    out = []
    if decision_sentence(sentence):
        out.append(("decision", _one_line(sentence)))
    elif role == "user" and task_sentence(sentence):
        out.append(("task", _one_line(sentence)))
    if role == "user" and _CONSTRAINT.search(sentence):
        out.append(("constraint", _one_line(sentence)))
    elif role == "assistant" and finding_sentence(sentence):
        out.append(("finding", _one_line(sentence)))
    elif role == "assistant" and progress_sentence(sentence):
        out.append(("progress", _one_line(sentence)))
    return tuple(out)


class _Checklists:
    """The text of each file with a checklist (``- [ ]`` or ``- [x]``) that the span writes whole or reads, kept up
    to date by its edits (Pi's ``write`` ``content``; ``edit``'s ``oldText``/``newText``, one pair or a list of
    ``edits``; a ``read``'s result)."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.reading: dict[Any, tuple[str, bool]] = {}  # (the tool call id of a read → its path, and whether in part)

    def _keep(self, path: str, text: str) -> None:
        if len(text) <= _CHECKLIST_CHARS and _CHECKBOX.search(text):
            self.texts[path] = text
        else:
            self.texts.pop(path, None)

    def read(self, call: Any, content: Any) -> None:
        """A read's result: the file's text, where it is not known yet or the read is whole (a part read with
        ``offset`` or ``limit`` does not replace a whole text)."""
        path, part = self.reading.pop(call, (None, False)) if isinstance(call, str) else (None, False)
        text = "\n".join(_texts(content)) if path is not None else ""
        if path is not None and text and not (part and path in self.texts):
            self._keep(path, text)

    def write(self, path: str, arguments: Mapping[str, Any]) -> None:
        """A write (the file's whole text) or an edit of ``path`` (applied to the text where it is known)."""
        content = arguments.get("content")
        if isinstance(content, str):
            self._keep(path, content)
            return
        text = self.texts.get(path)
        edits = arguments.get("edits")
        for pair in edits if isinstance(edits, list) else [arguments]:
            old, new = (pair.get("oldText"), pair.get("newText")) if _is_mapping(pair) else (None, None)
            if text is None or not isinstance(old, str) or not isinstance(new, str) or old not in text:
                self.texts.pop(path, None)  # (an edit this text does not explain: the file is no longer known)
                return
            text = text.replace(old, new, 1)
        if text is not None:
            self.texts[path] = text


#: A file's text is followed for its checklist up to this size.
_CHECKLIST_CHARS = 1_000_000
_CHECKBOX = re.compile(r"\[[ xX]\]")  # (one pass: three searches with ``in`` read a file without one thrice)
_HEADING_LINE = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def _outline(text: str, item: str) -> tuple[str, ...]:
    """The Markdown headings the ticked ``item`` is under in ``text``, nearest first (its heading, that heading's
    parent, …; not a ``#`` line of a fenced code block); none where the item is not in the text, or is there more
    than once (which one was ticked?)."""
    found = [at for mark in "xX" if (at := text.find(f"[{mark}] {item}")) >= 0]
    if len(found) != 1 or any(text.find(f"[{mark}] {item}", found[0] + 1) >= 0 for mark in "xX"):
        return ()
    stack: list[tuple[int, str]] = []
    fenced = False
    for line in text[:found[0]].split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (match := _HEADING_LINE.match(line)):
            while stack and stack[-1][0] >= len(match[1]):
                stack.pop()
            stack.append((len(match[1]), match[2]))
    return tuple(heading for _, heading in reversed(stack))


class _Collector:
    def __init__(self) -> None:
        self.facts: dict[tuple[str, str], Fact] = {}
        self.read: dict[str, Any] = {}
        self.modified: dict[str, Any] = {}
        self.runs: list[list[str]] = []  # (the summary lines of each test run, in order)
        self.checklists = _Checklists()
        #: A done item's text → the file and the item ticked in it, and its outline there when it was ticked.
        self.ticked: dict[str, tuple[str, str, tuple[str, ...]]] = {}

    def add(self, kind: str, text: str, source: Any, importance: str | None = None) -> None:
        if text and (kind, text) not in self.facts:
            weight = importance or ("minor" if kind in _MINOR_KINDS else "key")
            self.facts[kind, text] = Fact(kind, text, source, weight)

    def files(self, ops: FileOps, source: Any) -> None:
        for path in ops.read:
            self.read.setdefault(path, source)
        for path in (*ops.edited, *ops.written):
            self.modified.setdefault(path, source)

    def urls(self, text: str, source: Any) -> None:
        for kind, fact in _urls(text):
            self.add(kind, fact, source)

    def numbers(self, text: str, source: Any) -> None:
        for kind, fact in _numbers(text):
            self.add(kind, fact, source)

    def identifiers(self, text: str, source: Any) -> None:
        for kind, fact in _identifiers(text):
            self.add(kind, fact, source)

    def prose(self, text: str, source: Any, role: str) -> None:
        """The facts of a user's or the agent's prose (``role`` ``"user"`` or ``"assistant"``)."""
        for kind, fact in _prose_facts(text, role):
            self.add(kind, fact, source)

    def output(self, text: str, source: Any, failed: bool, minor: bool = False) -> None:
        """The facts of a tool's output: what failed, error lines, test summaries, addresses."""
        importance = "minor" if minor else "key"
        if failed:
            line = _failure_line(text)
            if line is not None:
                self.add("error", _one_line(line), source, importance)
        elif _may_hold_error(text):
            for match in itertools.islice(_ERROR_LINES.finditer("\n" + text), 3):
                self.add("error", _one_line(match[1]), source, importance)
        run = [_one_line(line) for line in test_summary(text)[:3]]
        for line in run:
            self.add("finding", line, source)
        if run:
            self.runs.append(run)
        self.urls(text, source)

    def summary(self, text: str, source: Any) -> None:
        for tag, body in _FILE_LIST.findall(text):
            target = self.read if tag == "read-files" else self.modified
            for path in body.splitlines():
                if path.strip():
                    target.setdefault(path.strip(), source)
        prose = _FILE_LIST.sub("", text)
        for kind, item in summary_sections(prose):
            self.add(kind, _one_line(item), source)
        prose = strip_code(prose)
        self.identifiers(prose, source)
        self.numbers(prose, source)
        self.urls(prose, source)

    def message(self, source: Any, message: Mapping[str, Any]) -> None:
        role = message.get("role")
        if role in ("user", "custom"):
            for text in _texts(message.get("content")):
                self.prose(text, source, "user" if role == "user" else "custom")
        elif role == "assistant":
            self.assistant(source, message)
        elif role == "toolResult":
            if message.get("nestedCalls") is not None:  # (the only file operations a tool result records)
                self.file_ops(source, message)
            failed = message.get("isError") is True
            tool = message.get("toolName")
            if tool == "read" and not failed and self.checklists.reading:
                self.checklists.read(message.get("toolCallId"), message.get("content"))
            for text in _texts(message.get("content")):
                if failed or tool != "read":
                    self.output(text, source, failed, isinstance(tool, str) and tool in _TOOL_ERRORS_MINOR)
                else:
                    self.urls(text, source)
        elif role == "bashExecution":
            self.bash(source, message)
        elif role in ("compactionSummary", "branchSummary") and isinstance(message.get("summary"), str):
            self.summary(message["summary"], source)

    def file_ops(self, source: Any, message: Mapping[str, Any]) -> None:
        ops = FileOps()
        ops.add_message(message)
        self.files(ops, source)

    def command(self, command: str, source: Any) -> None:
        weight = command_weight(command)
        if weight is not None:
            self.add("command", _one_line(_OUTPUT_FILTER.sub("", command) or command), source, weight)
        message = commit_message(command)
        if message is not None:
            self.add("progress", _cut(message), source)

    def assistant(self, source: Any, message: Mapping[str, Any]) -> None:
        for text in _texts(message.get("content")):
            self.prose(text, source, "assistant")
        calls = list(_tool_calls(message))
        if calls:  # (without a tool call, a message records no file operation)
            self.file_ops(source, message)
        for call, name, arguments in calls:
            if name == "read" and isinstance(arguments.get("path"), str):
                part = arguments.get("offset") is not None or arguments.get("limit") is not None
                self.checklists.reading[call] = (arguments["path"], part)
            command = arguments.get("command")
            if name == "bash" and isinstance(command, str):
                self.command(command, source)
            if name in ("write", "edit"):
                self.written(arguments, source)
            for value in _strings(arguments):
                self.urls(value, source)

    def written(self, arguments: Mapping[str, Any], source: Any) -> None:
        """The names a write or edit defines, and the checklist items it ticks (each with the headings it is under
        in the file, where the span shows the file: :class:`_Checklists`)."""
        strings = list(_strings({k: v for k, v in arguments.items() if k != "path"}))
        before = "\n".join(strings[:-1]) if len(strings) > 1 else ""
        path = arguments.get("path")
        if isinstance(path, str):
            self.checklists.write(path, arguments)
        for value in strings:
            for defined in _DEFINED.findall(value):
                if defined.lower() not in STOP_WORDS:
                    self.add("identifier", defined, source)
            if "[x]" in value or "[X]" in value:
                for item in _TICKED.findall(value):
                    if f"[ ] {item}" in before:
                        fact = _one_line(f"done: {item}")
                        self.add("progress", fact, source, "minor")
                        if isinstance(path, str) and fact not in self.ticked:
                            text = self.checklists.texts.get(path)  # (the file after this edit, where it is known)
                            self.ticked[fact] = (path, item, _outline(text, item) if text is not None else ())

    def bash(self, source: Any, message: Mapping[str, Any]) -> None:
        command = message.get("command")
        if isinstance(command, str):
            self.command(command, source)
        output = message.get("output")
        if isinstance(output, str):
            self.output(output, source, message.get("exitCode") not in (0, None))

    def result(self) -> list[Fact]:
        for done, (path, item, outline) in self.ticked.items():  # (else the file as the span last shows it)
            text = self.checklists.texts.get(path)
            outline = outline or (_outline(text, item) if text is not None else ())
            if outline:
                self.facts["progress", done] = replace(self.facts["progress", done], outline=outline)
        files = [Fact("modified_file", _cut(p), s) for p, s in self.modified.items()]
        files += [Fact("read_file", _cut(p), s, "minor") for p, s in self.read.items() if p not in self.modified]
        last = set(self.runs[-1]) if self.runs else set()
        for line in {line for run in self.runs[:-1] for line in run} - last:  # (superseded by the last run)
            fact = self.facts["finding", line]
            self.facts["finding", line] = Fact(fact.kind, fact.text, fact.source, "minor")
        names = {p.rsplit("/", 1)[-1] for p in (*self.modified, *self.read)}
        facts = [f for f in self.facts.values() if not (f.kind == "identifier" and f.text in names)]
        order = {kind: i for i, kind in enumerate(FACT_KINDS)}
        return sorted([*files, *facts], key=lambda f: order[f.kind])


def extract_facts(messages: Iterable[tuple[Any, Mapping[str, Any]]]) -> list[Fact]:
    """The facts of a span given as ``(source entry id, message)`` pairs, by the rules of this
    module, grouped by kind in :data:`FACT_KINDS` order, each kind in order of first occurrence."""
    collector = _Collector()
    for source, message in messages:
        if _is_mapping(message) and message.get("role") != "system":
            collector.message(source, message)
    return collector.result()
