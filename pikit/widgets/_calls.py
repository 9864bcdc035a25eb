"""A tool call as readable parts: a shell command, a diff, a file's code, pretty JSON.

:func:`call_parts` reads one ``ToolCall`` into
:class:`CallPart`\\ s that both the HTML transcript (``pikit.widgets._html``) and the
Markdown export (``pikit.export._markdown``) draw:

- ``bash`` with a string ``command``: the command as a ``bash`` block;
- ``edit`` with ``path`` and ``oldText``/``newText`` (or a list ``edits`` of such pairs): a
  unified ``diff`` of each pair;
- ``write`` with ``path`` and ``content``: the content as code, its language from the path's
  extension;
- anything else: the arguments as JSON indented by two, every multi-line string taken out of
  it and shown as text of its own (``"text": "(below)"`` stands in its place).

Any argument the reading above did not use is shown as JSON after it, so nothing is lost.
The parts hold session text as it is; the renderers escape it.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._format.message import ToolCall

__all__ = ["CallPart", "call_parts", "language_of"]

#: Code languages by file extension (the info string of a fence, a ``language-`` class).
LANGUAGES = {
    ".py": "python", ".ts": "typescript", ".tsx": "tsx", ".js": "javascript", ".jsx": "jsx", ".mjs": "javascript",
    ".json": "json", ".md": "markdown", ".sh": "bash", ".bash": "bash", ".yml": "yaml", ".yaml": "yaml",
    ".toml": "toml", ".html": "html", ".css": "css", ".sql": "sql", ".rs": "rust", ".go": "go", ".java": "java",
    ".c": "c", ".h": "c", ".cpp": "cpp", ".rb": "ruby", ".txt": "text", ".ini": "ini", ".xml": "xml",
}


@dataclass(frozen=True)
class CallPart:
    """One readable piece of a tool call: a ``label`` (a path, an argument's name, or empty),
    the ``language`` of its ``text`` (``bash``, ``diff``, ``json``, ``text``, a code language)."""

    label: str
    language: str
    text: str


def language_of(path: str) -> str:
    """The code language of a file, from its extension (``text`` when unknown)."""
    return LANGUAGES.get(os.path.splitext(path)[1].lower(), "text")


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2)
    except (TypeError, ValueError):
        return repr(value)


def _rest(args: Mapping[str, Any], used: tuple[str, ...]) -> list[CallPart]:
    rest = {k: v for k, v in args.items() if k not in used}
    return [CallPart("other arguments", "json", _json(rest))] if rest else []


def _diff(path: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", lineterm="", n=3)
    return "\n".join(lines) or f"(oldText and newText are the same: {len(old):,} characters)"


def _edit(args: Mapping[str, Any]) -> list[CallPart] | None:
    path = args.get("path")
    if not isinstance(path, str):
        return None
    if isinstance(args.get("oldText"), str) and isinstance(args.get("newText"), str):
        return [CallPart(path, "diff", _diff(path, args["oldText"], args["newText"])),
                *_rest(args, ("path", "oldText", "newText"))]
    edits = args.get("edits")
    if isinstance(edits, list) and edits and all(
            isinstance(e, Mapping) and isinstance(e.get("oldText"), str) and isinstance(e.get("newText"), str)
            for e in edits):
        return [*(CallPart(path, "diff", _diff(path, e["oldText"], e["newText"])) for e in edits),
                *_rest(args, ("path", "edits"))]
    return None


def _write(args: Mapping[str, Any]) -> list[CallPart] | None:
    path, content = args.get("path"), args.get("content")
    if not isinstance(path, str) or not isinstance(content, str):
        return None
    return [CallPart(path, language_of(path), content), *_rest(args, ("path", "content"))]


def _bash(args: Mapping[str, Any]) -> list[CallPart] | None:
    command = args.get("command")
    if not isinstance(command, str):
        return None
    return [CallPart("", "bash", command), *_rest(args, ("command",))]


_READERS = {"edit": _edit, "write": _write, "bash": _bash}


def _generic(arguments: Any) -> list[CallPart]:
    if not isinstance(arguments, Mapping):
        return [CallPart("", "json", _json(arguments))]
    long = {k: v for k, v in arguments.items() if isinstance(v, str) and "\n" in v}
    shown = {k: ("(below)" if k in long else v) for k, v in arguments.items()}
    parts = [CallPart("", "json", _json(shown))] if shown else []
    return parts + [CallPart(str(k), "text", v) for k, v in long.items()]


def call_parts(call: ToolCall) -> list[CallPart]:
    """The readable parts of ``call`` (see the module's docstring)."""
    if not call.has_arguments:
        return [CallPart("", "text", "(no arguments)")]
    reader = _READERS.get(call.name)
    args = call.arguments
    found = reader(args) if reader is not None and isinstance(args, Mapping) else None
    return found if found is not None else _generic(args)
