"""One typed view of a message, built once and read by everything that describes messages.

A Pi message is a JSON object whose shape depends on its ``role``; its ``content`` is a
string or a list of typed blocks. :func:`view` reads one message (defensively: any JSON is
accepted) into a frozen :class:`MessageView` (msgspec Structs: cheap to define and build),
so the code that counts, previews, renders, serializes or summarizes messages does not
repeat the switch on roles and block types.

The raw message stays the source of truth (:attr:`MessageView.raw`); the view only reads it.
Pi's token estimate (``pikit._context.tokens``) keeps its own literal reading of the raw JSON,
because parity with Pi decides how every odd value is counted there.

>>> v = view({"role": "assistant", "content": [{"type": "text", "text": "hi"},
...           {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}}]})
>>> v.role, v.text(), [c.name for c in v.tool_calls]
('assistant', 'hi', ['read'])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = [
    "CONTENT_ROLES",
    "MODEL_ROLES",
    "SUMMARY_ROLES",
    "Bash",
    "Block",
    "ImageBlock",
    "MessageView",
    "Section",
    "TextBlock",
    "ThinkingBlock",
    "Tool",
    "ToolCall",
    "view",
]

CONTENT_ROLES = frozenset({"user", "custom", "toolResult"})
"""Roles whose content is user-like: a string, or text and image blocks."""
SUMMARY_ROLES = frozenset({"branchSummary", "compactionSummary"})
"""Roles that carry a ``summary`` instead of content."""
MODEL_ROLES = frozenset({"system", "user", "assistant", "toolResult"})
"""The roles a model accepts; the others are converted before sending."""


class TextBlock(msgspec.Struct, frozen=True):
    """A text block (``{"type": "text", "text": …}``); a string content is one of these."""

    text: str


class ThinkingBlock(msgspec.Struct, frozen=True):
    """An assistant's thinking block."""

    thinking: str


class ToolCall(msgspec.Struct, frozen=True):
    """A tool call of an assistant message.

    ``arguments`` is the raw JSON value (normally an object); ``has_arguments`` tells a missing
    ``arguments`` key apart from an explicit ``null``.
    """

    name: str
    arguments: Any
    id: str | None
    has_arguments: bool = True


class ImageBlock(msgspec.Struct, frozen=True):
    """An image block (its data is not copied; ``mime_type`` when the block names one)."""

    mime_type: str | None


Block = TextBlock | ThinkingBlock | ToolCall | ImageBlock


class Section(msgspec.Struct, frozen=True):
    """One named section of a system prompt; ``text`` is None when the section is deleted."""

    name: str
    text: str | None


class Tool(msgspec.Struct, frozen=True):
    """A tool declared (or removed) by a system message; ``raw`` is its JSON object."""

    name: str
    raw: Any


class Bash(msgspec.Struct, frozen=True):
    """The fields of a shell command the user ran (a ``bashExecution`` message).

    ``exit_code`` keeps its raw JSON value (an integer, or None while unknown).
    """

    command: str
    output: str
    exit_code: Any
    cancelled: bool
    truncated: bool
    full_output_path: str | None
    exclude_from_context: bool


class MessageView(msgspec.Struct, frozen=True):
    """A message read once: its role, typed content blocks and role-specific fields.

    ``blocks`` holds the recognised blocks of a list content in order (unknown block types
    and non-object blocks are left out); a string content is one :class:`TextBlock` and sets
    ``string_content``. Fields that do not apply to the role are empty or None.
    """

    raw: Mapping[str, Any]
    role: str | None
    blocks: tuple[Block, ...] = ()
    string_content: bool = False
    tool_name: str | None = None
    tool_call_id: str | None = None
    is_error: bool = False
    custom_type: str | None = None
    stop_reason: str | None = None
    error_message: str | None = None
    sections: tuple[Section, ...] = ()
    tools_added: tuple[Tool, ...] = ()
    tools_removed: tuple[Tool, ...] = ()
    bash: Bash | None = None
    summary: str | None = None

    # -- content ----------------------------------------------------------------------------

    def text(self, separator: str = "\n") -> str:
        """The texts of the text blocks joined by ``separator`` (a string content as is)."""
        blocks = self.blocks
        if len(blocks) == 1:
            only = blocks[0]
            return only.text if type(only) is TextBlock else ""
        return separator.join([b.text for b in blocks if type(b) is TextBlock])

    @property
    def texts(self) -> list[str]:
        """The text of each text block."""
        return [b.text for b in self.blocks if type(b) is TextBlock]

    @property
    def has_text_block(self) -> bool:
        """Whether a list content holds at least one text block."""
        return not self.string_content and any(type(b) is TextBlock for b in self.blocks)

    @property
    def thinking(self) -> list[str]:
        """The text of each thinking block."""
        return [b.thinking for b in self.blocks if type(b) is ThinkingBlock]

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls, in order."""
        return [b for b in self.blocks if type(b) is ToolCall]

    @property
    def images(self) -> int:
        """The number of image blocks."""
        return sum(1 for b in self.blocks if type(b) is ImageBlock)

    @property
    def list_blocks(self) -> tuple[Block, ...]:
        """The blocks of a list content (empty for a string content, which Pi's assistant code skips)."""
        return () if self.string_content else self.blocks

    # -- the stop of an assistant reply -------------------------------------------------------

    @property
    def stopped_early(self) -> bool:
        """Whether an assistant reply ended with an error, was aborted or hit the length limit."""
        return self.stop_reason in ("error", "aborted", "length")


def _text(value: Any) -> str:
    """A text field as a string (a missing value is empty)."""
    return value if type(value) is str else "" if value is None else str(value)


def _optional(value: Any) -> str | None:
    return value if type(value) is str or value is None else str(value)


def _text_block(block: Mapping[str, Any]) -> Block:
    return TextBlock(_text(block.get("text")))


def _thinking_block(block: Mapping[str, Any]) -> Block:
    return ThinkingBlock(_text(block.get("thinking")))


def _tool_call(block: Mapping[str, Any]) -> Block:
    call_id = block.get("id")
    return ToolCall(_text(block.get("name")), block.get("arguments"), call_id if type(call_id) is str else None,
                    "arguments" in block)


def _image_block(block: Mapping[str, Any]) -> Block:
    mime = block.get("mimeType")
    return ImageBlock(mime if type(mime) is str else None)


_BLOCK_READERS = {"text": _text_block, "thinking": _thinking_block, "toolCall": _tool_call, "image": _image_block}


def _blocks(content: Any) -> tuple[tuple[Block, ...], bool]:
    if type(content) is str:
        return (TextBlock(content),), True
    if not isinstance(content, (list, tuple)):
        return (), False
    blocks = []
    for block in content:
        if type(block) is dict or isinstance(block, Mapping):
            kind = block.get("type")
            reader = _BLOCK_READERS.get(kind) if type(kind) is str else None
            if reader is not None:
                blocks.append(reader(block))
    return tuple(blocks), False


def _tools(value: Any) -> tuple[Tool, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(Tool(_text(t.get("name")), t) for t in value if isinstance(t, Mapping))


def _sections(value: Any) -> tuple[Section, ...]:
    if not isinstance(value, Mapping):
        return ()
    return tuple(Section(str(name), text if isinstance(text, str) else None) for name, text in value.items())


def _bash(message: Mapping[str, Any]) -> Bash:
    path = message.get("fullOutputPath")
    return Bash(_text(message.get("command")), _text(message.get("output")), message.get("exitCode"),
                message.get("cancelled") is True, message.get("truncated") is True,
                path if isinstance(path, str) and path else None, message.get("excludeFromContext") is True)


def view(message: Mapping[str, Any]) -> MessageView:
    """Read ``message`` (any JSON object) into a :class:`MessageView`."""
    role = _optional(message.get("role"))
    if role == "bashExecution":
        return MessageView(message, role, bash=_bash(message))
    if role in SUMMARY_ROLES:
        return MessageView(message, role, summary=_text(message.get("summary")))
    blocks, string_content = _blocks(message.get("content"))
    if role == "assistant":
        return MessageView(message, role, blocks, string_content, stop_reason=_optional(message.get("stopReason")),
                           error_message=_optional(message.get("errorMessage")) or None)
    if role == "system":
        return MessageView(message, role, blocks, string_content, sections=_sections(message.get("sections")),
                           tools_added=_tools(message.get("toolsAdded")),
                           tools_removed=_tools(message.get("toolsRemoved")))
    if role == "user":
        return MessageView(message, role, blocks, string_content)
    call_id = message.get("toolCallId")
    return MessageView(message, role, blocks, string_content,
                       tool_name=_optional(message.get("toolName")) or None,
                       tool_call_id=call_id if type(call_id) is str else None,
                       is_error=message.get("isError") is True,
                       custom_type=_optional(message.get("customType")))
