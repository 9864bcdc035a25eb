"""Reading the messages: one pass that records the facts a summary needs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..._format.message import MessageView, ToolCall, view
from .notes import _Notes, _touch
from .patterns import (
    _CONSTRAINTS,
    _DECISIONS,
    _DONE_RE,
    _FILLER_RE,
    _HEDGE_RE,
    _IDENT_RE,
    _NARRATION_RE,
    _SIGNIFICANT_RE,
    _SUMMARY_INTRO_RE,
    _decision_item,
    _error_line,
    _is_request,
    _is_rule,
    _Signature,
)
from .text import (
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
    _key,
    _line,
    _quiet_failure,
    _sentences,
    _spans,
    _weight,
)


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

def _text_of(v: MessageView, limit: int = _SCAN_LIMIT) -> str:
    """The text of a message's text blocks (a string content as is), read up to ``limit`` characters."""
    parts: list[str] = []
    size = 0
    for text in v.texts:
        if text:
            parts.append(text[: limit - size])
            size += len(parts[-1])
            if size >= limit:
                break
    return "\n".join(parts)


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
        self.decision_signatures: list[_Signature] = []
        self.custom_notes: list[str] = []
        self.embedded: list[str] = []

    # -- walking ------------------------------------------------------------------------------

    def read(self, messages: Iterable[Any]) -> None:
        """Record every message in order; anything that is not a message object is skipped."""
        handlers = {"user": self._user, "assistant": self._assistant, "toolResult": self._tool_result,
                    "bashExecution": self._bash_execution, "custom": self._custom,
                    "branchSummary": self._summary, "compactionSummary": self._summary}
        for message in messages:
            if not isinstance(message, Mapping):
                continue
            self.seq += 1
            v = view(message)
            handler = handlers.get(v.role or "")
            if handler is not None:
                handler(v)

    def _summary(self, v: MessageView) -> None:
        if v.summary and v.summary.strip():
            self.embedded.append(v.summary)

    def _user(self, v: MessageView) -> None:
        text = _clean(_text_of(v))
        self.requests.append(text)
        self.answered = False
        self.activity_since_request = False
        body = (_FENCE_RE.sub(" ", text) if "```" in text else text).strip()
        if not body:
            return
        if _is_request(body):
            self.substantive.append(body)
        self._scan(body, constraints=True)

    def _assistant(self, v: MessageView) -> None:
        calls = v.tool_calls
        for call in calls:
            self._call(call)
        stop = v.stop_reason
        if stop in ("error", "aborted"):
            line = _error_line(v.error_message) if v.error_message else ""
            what = "ended with an error" if stop == "error" else "was aborted"
            self._fail(("turn", ""), f"The assistant's reply {what}: {line or '(no message)'}", line)
        elif stop in ("stop", "toolUse", "length") or calls:
            self._resolve(("turn", ""))
        text = _clean(_text_of(v)).strip()
        if not text:
            return
        self._scan(text, constraints=False)
        if not calls and stop not in ("error", "aborted", "length", "toolUse"):
            self.answered = True
            self.finished_turn = True
            self.pending.clear()
            self._statement(text)

    def _call(self, block: ToolCall) -> None:
        name = _line(block.name, 60) if block.name.strip() else "tool"
        raw_args = block.arguments
        if isinstance(raw_args, str) and len(raw_args) < 100_000:
            try:
                raw_args = json.loads(raw_args)
            except ValueError:
                raw_args = None
        args: Mapping[str, Any] = raw_args if isinstance(raw_args, Mapping) else {}
        path, command = args.get("path"), args.get("command")
        if name in ("read", "write", "edit") and isinstance(path, str) and path.strip():
            target = _line(path, 200)
            _touch(self.files_read if name == "read" else self.files_modified, target)
            call = _Call(name, target, ("file", target), f"{_code(name)} on {_code(target)}")
        elif name == "bash" and isinstance(command, str) and command.strip():
            call = self._bash_call(command)
        else:
            call = _Call(name, "", ("tool", name), _code(name))
        if block.id is not None:
            self.pending[block.id] = call
        self.last_activity = call.label
        self.activity_since_request = True

    def _bash_call(self, command: str) -> _Call:
        target = _command(command)
        _touch(self.commands, target)
        return _Call("bash", target, ("bash", _core_command(target)), _code(target))

    def _tool_result(self, v: MessageView) -> None:
        call = self.pending.pop(v.tool_call_id, None) if v.tool_call_id is not None else None
        if call is None:
            name = _line(v.tool_name, 60) if v.tool_name and v.tool_name.strip() else "tool"
            call = _Call(name, "", ("tool", name), _code(name))
        if v.is_error:
            output = _text_of(v, _ERROR_SCAN_LIMIT)
            if call.key[0] == "bash" and _quiet_failure(call.target, output):
                return
            line = _error_line(output)
            text = f"{call.label} failed"
            self._fail(call.key, f"{text}: {line}" if line else text, line)
        else:
            self._succeed(call)

    def _bash_execution(self, v: MessageView) -> None:
        bash = v.bash
        if bash is None or bash.exclude_from_context or not bash.command.strip():
            return
        call = self._bash_call(bash.command)
        code = bash.exit_code
        line = _error_line(bash.output)
        if bash.cancelled:
            self._fail(call.key, f"{call.label} was cancelled", line)
        elif isinstance(code, int) and not isinstance(code, bool) and code != 0:
            if code == 1 and _quiet_failure(call.target, bash.output):
                return
            text = f"{call.label} exited with code {code}"
            self._fail(call.key, f"{text}: {line}" if line else text, line)
        elif code == 0:
            self._succeed(call)

    def _custom(self, v: MessageView) -> None:
        text = _line(_text_of(v), 160)
        if not text:
            return
        kind = v.custom_type
        label = f"Note ({_code(_line(kind, 40))})" if kind and kind.strip() else "Note"
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
        """Record what a final answer reports as finished: the first sentence with content
        from the one that says so on (a bare "Done." or "Here's a summary:" is passed over)."""
        sentences = _sentences(text[:2000])
        start = next((i for i, s in enumerate(sentences) if _DONE_RE.search(s) and not s.endswith("?")), None)
        if start is None:
            return
        for index in range(start, min(start + 4, len(sentences))):
            sentence = _FILLER_RE.sub("", sentences[index]).strip()
            if not sentence or _SUMMARY_INTRO_RE.match(sentence):
                continue
            if sentence.endswith("?"):
                return
            following = iter(sentences[index + 1:index + 3])
            if _weight(sentence) < 3:
                sentence = f"{sentence} {next(following, '')}".strip()
            if sentence.endswith(":"):
                sentence = f"{sentence} {next(following, '')}".strip()
            if sentence.endswith(":") and _weight(sentence) < 5:
                continue  # a heading for a list or code that is not there ("Final structure:")
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
            for sentence, _, _ in _find_sentences(text, _CONSTRAINTS, _PER_MESSAGE, _is_rule):
                if len(sentence) <= 220:
                    item = _line(sentence, 200)
                    rules.add(sentence)
                    self.constraints.setdefault(_key(item), item)
        for sentence, following, _ in _find_sentences(text, _DECISIONS, _PER_MESSAGE):
            if sentence in rules or _NARRATION_RE.match(sentence) or _HEDGE_RE.search(sentence):
                continue
            if constraints:
                prompted = "stated by the user"
            else:
                request = self.last_request()
                prompted = f"in answer to: {_gist(request, 90, enough=1, most=1)}" if request else ""
            self._decide(_decision_item(sentence, following, prompted))

    def _decide(self, item: str) -> None:
        """Record a decision unless it restates one already seen (the first statement stays)."""
        signature = _Signature.of(item)
        if any(signature.restates(seen) for seen in self.decision_signatures[-40:]):
            self.decision_signatures.append(signature)
            return
        self.decision_signatures.append(signature)
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
        notes.goal, notes.goal_dropped = self._goals()
        notes.constraints = list(self.constraints.values())
        notes.decisions = list(self.decisions.values())
        notes.done = self._done()
        notes.in_progress = self._in_progress()
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

    def _goals(self) -> tuple[list[str], int]:
        """The main request, the later distinct ones (at most the cap) and how many were dropped."""
        requests = self.substantive or [r for r in self.requests if r.strip()]
        goals = [_gist(text, _GOAL_LIMIT, enough=200, most=3) for text in requests[:1]]
        seen = {_key(g) for g in goals}
        added: list[str] = []
        for text in requests[1:]:
            item = _gist(text, 200, enough=1, most=1)
            if item.endswith("?") and _weight(item) < 8:
                continue  # a passing question is not a goal
            if _key(item) not in seen:
                seen.add(_key(item))
                added.append(item)
        return goals + added[-_CAP_GOALS:], max(0, len(added) - _CAP_GOALS)

    def _done(self) -> list[str]:
        """Finished work in the order it happened: events, file work, successful commands."""
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
        return [text for _, text in done]

    def _in_progress(self) -> list[str]:
        """The unanswered request, the last step taken for it and the calls still waiting."""
        items: list[str] = []
        waiting = [call.label for call in list(self.pending.values())[-2:]]
        if self.requests and not self.answered:
            request = self.last_request()
            if request:
                items.append(_gist(request, 220, enough=1, most=1))
            if self.activity_since_request and self.last_activity not in waiting:
                items.append(f"Last step: {self.last_activity}")
        elif not self.requests and not self.finished_turn and self.last_activity not in waiting:
            items.append(f"Last step: {self.last_activity}")
        return items + [f"Waiting for the result of {label}" for label in waiting]
