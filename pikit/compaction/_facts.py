"""The facts of a replaced span: what a compaction had to carry over, by fixed rules.

A *fact* is one thing a later turn may need: its ``kind``, its ``text`` and the id of the
entry it came from (``source``). The rules read the span's model messages (as projected,
context edits applied) and nothing else, so the same span always gives the same facts, in
the order they first occur; a fact seen twice keeps its first source.

Kinds and their rules:

- ``read_file``: the ``path`` of a ``read`` tool call (and of the ``nestedCalls`` recorded on a
  tool result), unless the span also modifies that path; a ``<read-files>`` list in a summary.
- ``modified_file``: the ``path`` of a ``write`` or ``edit`` tool call; a ``<modified-files>``
  list in a summary. These are Pi's own file lists (``FileOps``).
- ``command``: the ``command`` argument of a ``bash`` tool call, and the ``command`` of a
  ``bashExecution`` message (one line: whitespace runs become one space).
- ``error``: the first non-empty line of a tool result marked ``isError``, and of a
  ``bashExecution`` whose ``exitCode`` is neither 0 nor missing; and every line of any tool
  result (but a file's text, the result of a ``read`` that did not fail) or bash output that
  starts with an error word (``Error``, ``error:``, ``FAILED``,
  ``fatal:``, ``Traceback``, ``panic:``, ``*Error:``/``*Exception:`` names).
- ``identifier``: a span in backticks in user or assistant text that reads as a code name
  (letters, digits, ``_``, ``.``, ``:``, ``$``, ``-``, an optional trailing ``()``; at least three
  characters; not a number, not a path with ``/``); and a name defined in the text a ``write``
  or ``edit`` call puts in a file (``def``, ``class``, ``function``, ``fn``, ``func``,
  ``interface``, ``struct``, ``enum``, ``trait`` followed by a name).
- ``constraint``: a sentence of a user message (split after ``.``, ``!`` or ``?`` followed by
  a space or the end, at ``;`` and at line ends: ``setup.cfg`` stays whole) holding one of the
  words *must, never, don't, do not, always, only, prefer, avoid, should, make sure, required*.
- ``number``: in user and assistant text and in error lines, a version (``v1.2``, ``1.2.3``,
  ``3.11``) or a whole number of at least three digits (``20000``, ``20,000``, ``4_096``),
  thousands separators removed.
- ``url``: every ``http://`` or ``https://`` address in any text or tool call argument,
  trailing punctuation removed.

A compaction summary or branch summary in the span (an earlier compaction's summary, which
the new one replaces) is read as text: its file lists give file facts, its text the
identifiers, numbers and URLs.
Every text is cut to :data:`MAX_FACT_CHARS` characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .._context.fileops import FileOps

__all__ = ["FACT_KINDS", "MAX_FACT_CHARS", "Fact", "extract_facts"]

FACT_KINDS = ("read_file", "modified_file", "command", "error", "identifier", "constraint", "number", "url")
"""The kinds of fact, in the order reports list them."""

MAX_FACT_CHARS = 200
"""The longest fact text kept (longer texts are cut there)."""


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact of a replaced span: ``kind`` (one of :data:`FACT_KINDS`), ``text``, ``source`` (entry id)."""

    kind: str
    text: str
    source: Any


_WS = re.compile(r"\s+")
_URL = re.compile(r"https?://[^\s<>\"'`)\]}]+")
_URL_TAIL = ".,;:!?'\""
_BACKTICK = re.compile(r"`([^`\n]{3,80})`")
_IDENT = re.compile(r"[A-Za-z_$][\w.:$-]*(?:\(\))?")
_DEFINED = re.compile(r"\b(?:def|class|function|fn|func|interface|struct|enum|trait)\s+([A-Za-z_$][\w$]*)")
_NUMBER = re.compile(r"(?<![\w.])(?:v?\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z.]+)?|v\d+|\d{1,3}(?:[,_]\d{3})+|\d{3,})"
                     r"(?![\w]|\.\d)")
_SENTENCE = re.compile(r"(?:[^.!?;\n]|[.!?](?=[^\s.!?;]))+[.!?]?")
_CONSTRAINT = re.compile(r"\b(?:must|never|don't|don’t|dont|do not|always|only|prefer|avoid|should|make sure|"
                         r"required)\b", re.IGNORECASE)
_ERROR_LINE = re.compile(r"^[ \t]*(?:error\b|fatal:|failed\b|traceback\b|panic:|[A-Z]\w*(?:Error|Exception)\b:?)"
                         r".*$", re.IGNORECASE | re.MULTILINE)
_FILE_LIST = re.compile(r"<(read-files|modified-files)>\n(.*?)\n</\1>", re.DOTALL)
_ERROR_WORDS = ("error", "fatal:", "failed", "traceback", "panic:", "exception")
_ASCII_DIGITS = "0123456789"


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


def _tool_calls(message: Mapping[str, Any]) -> Iterator[tuple[Any, Mapping[str, Any]]]:
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        if _is_mapping(block) and block.get("type") == "toolCall":
            arguments = block.get("arguments")
            yield block.get("name"), arguments if _is_mapping(arguments) else {}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif _is_mapping(value):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


class _Collector:
    def __init__(self) -> None:
        self.facts: dict[tuple[str, str], Fact] = {}
        self.read: dict[str, Any] = {}
        self.modified: dict[str, Any] = {}

    def add(self, kind: str, text: str, source: Any) -> None:
        if text and (kind, text) not in self.facts:
            self.facts[kind, text] = Fact(kind, text, source)

    def files(self, ops: FileOps, source: Any) -> None:
        for path in ops.read:
            self.read.setdefault(path, source)
        for path in (*ops.edited, *ops.written):
            self.modified.setdefault(path, source)

    def urls(self, text: str, source: Any) -> None:
        if "http" not in text:
            return
        for match in _URL.findall(text):
            self.add("url", _cut(match.rstrip(_URL_TAIL)), source)

    def numbers(self, text: str, source: Any) -> None:
        if not _may_hold_number(text):
            return
        for match in _NUMBER.findall(text):
            self.add("number", re.sub(r"(?<=\d)[,_](?=\d{3})", "", match), source)

    def identifiers(self, text: str, source: Any) -> None:
        if "`" not in text:
            return
        for span in _BACKTICK.findall(text):
            span = span.strip()
            if "/" not in span and _IDENT.fullmatch(span) and not span.replace(".", "").isdigit():
                self.add("identifier", span, source)

    def prose(self, text: str, source: Any) -> None:
        self.identifiers(text, source)
        self.numbers(text, source)
        self.urls(text, source)

    def error_lines(self, text: str, source: Any, failed: bool) -> None:
        lines = _ERROR_LINE.findall(text) if _may_hold_error(text) else []
        if failed:
            first = next((line for line in text.split("\n", 50) if line.strip()), None)
            if first is not None:
                lines.insert(0, first)
        for line in lines:
            error = _one_line(line)
            self.add("error", error, source)
            self.numbers(error, source)

    def summary(self, text: str, source: Any) -> None:
        for tag, body in _FILE_LIST.findall(text):
            target = self.read if tag == "read-files" else self.modified
            for path in body.splitlines():
                if path.strip():
                    target.setdefault(path.strip(), source)
        self.prose(_FILE_LIST.sub("", text), source)

    def message(self, source: Any, message: Mapping[str, Any]) -> None:
        role = message.get("role")
        if role == "user":
            for text in _texts(message.get("content")):
                self.constraints(text, source)
                self.prose(text, source)
        elif role == "assistant":
            self.assistant(source, message)
        elif role == "toolResult":
            if message.get("nestedCalls") is not None:  # (the only file operations a tool result records)
                self.file_ops(source, message)
            failed = message.get("isError") is True
            for text in _texts(message.get("content")):
                if failed or message.get("toolName") != "read":
                    self.error_lines(text, source, failed)
                self.urls(text, source)
        elif role == "bashExecution":
            self.bash(source, message)
        elif role in ("compactionSummary", "branchSummary") and isinstance(message.get("summary"), str):
            self.summary(message["summary"], source)
        elif role == "custom":
            for text in _texts(message.get("content")):
                self.prose(text, source)

    def file_ops(self, source: Any, message: Mapping[str, Any]) -> None:
        ops = FileOps()
        ops.add_message(message)
        self.files(ops, source)

    def assistant(self, source: Any, message: Mapping[str, Any]) -> None:
        for text in _texts(message.get("content")):
            self.prose(text, source)
        calls = list(_tool_calls(message))
        if calls:  # (without a tool call, a message records no file operation)
            self.file_ops(source, message)
        for name, arguments in calls:
            command = arguments.get("command")
            if name == "bash" and isinstance(command, str):
                self.add("command", _one_line(command), source)
            if name in ("write", "edit"):
                for value in _strings({k: v for k, v in arguments.items() if k != "path"}):
                    for defined in _DEFINED.findall(value):
                        self.add("identifier", defined, source)
            for value in _strings(arguments):
                self.urls(value, source)

    def bash(self, source: Any, message: Mapping[str, Any]) -> None:
        command = message.get("command")
        if isinstance(command, str):
            self.add("command", _one_line(command), source)
        output = message.get("output")
        if isinstance(output, str):
            code = message.get("exitCode")
            self.error_lines(output, source, code not in (0, None))
            self.urls(output, source)

    def constraints(self, text: str, source: Any) -> None:
        for sentence in _SENTENCE.findall(text):
            if _CONSTRAINT.search(sentence):
                self.add("constraint", _one_line(sentence), source)

    def result(self) -> list[Fact]:
        files = [Fact("modified_file", _cut(p), s) for p, s in self.modified.items()]
        files += [Fact("read_file", _cut(p), s) for p, s in self.read.items() if p not in self.modified]
        order = {kind: i for i, kind in enumerate(FACT_KINDS)}
        return sorted([*files, *self.facts.values()], key=lambda f: order[f.kind])


def extract_facts(messages: Iterable[tuple[Any, Mapping[str, Any]]]) -> list[Fact]:
    """The facts of a span given as ``(source entry id, message)`` pairs, by the rules of this
    module, grouped by kind in :data:`FACT_KINDS` order, each kind in order of first occurrence."""
    collector = _Collector()
    for source, message in messages:
        if _is_mapping(message) and message.get("role") != "system":
            collector.message(source, message)
    return collector.result()
