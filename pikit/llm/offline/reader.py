"""Reading the messages: one pass that records the facts a summary needs."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .notes import _Notes, _touch
from .text import (
    _ACK_RE,
    _CAP_GOALS,
    _ERROR_SCAN_LIMIT,
    _FENCE_RE,
    _GOAL_LIMIT,
    _PASTE_RE,
    _PER_MESSAGE,
    _SCAN_LIMIT,
    _clean,
    _code,
    _command,
    _core_command,
    _find_sentences,
    _gist,
    _is_map,
    _key,
    _Keywords,
    _line,
    _quiet_failure,
    _sentences,
    _spans,
    _text_of,
    _weight,
)

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
