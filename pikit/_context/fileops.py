"""File operations seen in a conversation, and the file lists appended to summaries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FileOps", "format_file_lists"]


@dataclass
class FileOps:
    """Paths read, written and edited (insertion-ordered sets)."""

    read: dict[str, None] = field(default_factory=dict)
    written: dict[str, None] = field(default_factory=dict)
    edited: dict[str, None] = field(default_factory=dict)

    def add_call(self, name: Any, arguments: Any) -> None:
        """Record one tool call if it is ``read``, ``write`` or ``edit`` with a string path."""
        path = arguments.get("path") if isinstance(arguments, dict) else None
        if not isinstance(path, str) or not path:
            return
        if name == "read":
            self.read[path] = None
        elif name == "write":
            self.written[path] = None
        elif name == "edit":
            self.edited[path] = None

    def add_message(self, message: Mapping[str, Any]) -> None:
        """Record the tool calls of an assistant message, or the nested calls on a tool result."""
        role = message.get("role")
        if role == "toolResult":
            nested = message.get("nestedCalls")
            calls = nested.get("calls") if isinstance(nested, dict) else None
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, dict):
                    self.add_call(call.get("name"), call.get("arguments"))
            return
        if role != "assistant":
            return
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "toolCall" and "arguments" in block \
                    and "name" in block:
                self.add_call(block.get("name"), block.get("arguments"))

    def add_details(self, details: Any) -> None:
        """Carry over the file lists of an earlier summary (its ``details``)."""
        if not isinstance(details, Mapping):
            return
        for key, target in (("readFiles", self.read), ("modifiedFiles", self.edited)):
            values = details.get(key)
            if isinstance(values, list):
                for value in values:
                    target[_as_key(value)] = None

    def add_messages(self, messages: Iterable[Mapping[str, Any]]) -> None:
        """Record every message in order."""
        for message in messages:
            self.add_message(message)

    def lists(self) -> tuple[list[str], list[str]]:
        """``(readFiles, modifiedFiles)``: modified = edited ∪ written; read = read − modified; both sorted."""
        modified = dict.fromkeys([*self.edited, *self.written])
        read_only = [f for f in self.read if f not in modified]
        return _js_sorted(read_only), _js_sorted(list(modified))


def _as_key(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) or value is None else str(value)


def _js_sorted(values: list[Any]) -> list[Any]:
    # Array.prototype.sort() without a comparator compares UTF-16 code unit strings.
    return sorted(values, key=lambda v: str(v).encode("utf-16-be", "surrogatepass"))


def format_file_lists(read_files: list[str], modified_files: list[str]) -> str:
    """The suffix appended to a summary: ``<read-files>`` and ``<modified-files>`` blocks."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(map(str, read_files)) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(map(str, modified_files)) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""
