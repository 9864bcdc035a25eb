"""Typed views of entries and messages (pydantic), on top of the raw JSON.

The raw JSON stays the source of truth: these models are built from it on demand
(:meth:`pikit.Entry.typed`), keep unknown fields (``extra="allow"``) and never write back.
pydantic is imported only when this module is.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AssistantMessage",
    "BaseEntry",
    "BranchSummaryEntry",
    "CompactionEntry",
    "ContextEditEntry",
    "CustomMessageEntry",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "ThinkingLevelChangeEntry",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "entry_model",
    "message_model",
]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)


class Usage(_Open):
    """Tokens and cost reported by the provider for one call."""

    input: int = 0
    output: int = 0
    cache_read: int = Field(0, alias="cacheRead")
    cache_write: int = Field(0, alias="cacheWrite")
    total_tokens: int = Field(0, alias="totalTokens")
    cost: dict[str, Any] | None = None


class Message(_Open):
    """Any message (the role decides the rest)."""

    role: str
    timestamp: int | float | None = None


class UserMessage(Message):
    """A user message."""

    role: Literal["user"]
    content: str | list[dict[str, Any]] | None = None


class AssistantMessage(Message):
    """A model answer with its blocks, model and usage."""

    role: Literal["assistant"]
    content: list[dict[str, Any]] | None = None
    provider: str | None = None
    model: str | None = None
    api: str | None = None
    usage: Usage | None = None
    stop_reason: str | None = Field(None, alias="stopReason")
    error_message: str | None = Field(None, alias="errorMessage")


class ToolResultMessage(Message):
    """The result of one tool call."""

    role: Literal["toolResult"]
    tool_call_id: str | None = Field(None, alias="toolCallId")
    tool_name: str | None = Field(None, alias="toolName")
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = Field(None, alias="isError")


_MESSAGES: dict[str, type[Message]] = {"user": UserMessage, "assistant": AssistantMessage,
                                       "toolResult": ToolResultMessage}


def message_model(data: dict[str, Any]) -> Message:
    """The typed view of a message dict."""
    cls = _MESSAGES.get(str(data.get("role")), Message)
    return cls.model_validate(data)


class SessionHeader(_Open):
    """The first line of a session file."""

    type: Literal["session"]
    version: int | None = None
    id: str
    timestamp: str | None = None
    cwd: str | None = None
    parent_session: str | None = Field(None, alias="parentSession")


class BaseEntry(_Open):
    """Fields every entry has."""

    type: str
    id: str | None = None
    parent_id: str | None = Field(None, alias="parentId")
    timestamp: str | None = None


class MessageEntry(BaseEntry):
    """An entry holding one message."""

    message: dict[str, Any]

    @property
    def typed_message(self) -> Message:
        """The message as a typed view."""
        return message_model(self.message)


class ModelChangeEntry(BaseEntry):
    """The model changed."""

    provider: str | None = None
    model_id: str | None = Field(None, alias="modelId")


class ThinkingLevelChangeEntry(BaseEntry):
    """The thinking level changed."""

    thinking_level: str | None = Field(None, alias="thinkingLevel")


class CompactionEntry(BaseEntry):
    """A compaction: its summary replaces what came before ``firstKeptEntryId``."""

    summary: str | None = None
    first_kept_entry_id: str | None = Field(None, alias="firstKeptEntryId")
    tokens_before: int | None = Field(None, alias="tokensBefore")
    details: dict[str, Any] | None = None
    usage: Usage | None = None
    from_hook: bool | None = Field(None, alias="fromHook")
    system_message: dict[str, Any] | None = Field(None, alias="systemMessage")


class BranchSummaryEntry(BaseEntry):
    """A summary of an abandoned branch, placed where the leaf moved to."""

    from_id: str | None = Field(None, alias="fromId")
    summary: str | None = None
    details: dict[str, Any] | None = None
    usage: Usage | None = None
    from_hook: bool | None = Field(None, alias="fromHook")


class ContextEditEntry(BaseEntry):
    """Hides (``replacement`` null) or replaces an earlier message in later contexts."""

    target_id: str | None = Field(None, alias="targetId")
    replacement: dict[str, Any] | None = None


class CustomMessageEntry(BaseEntry):
    """An extension's message that reaches the model."""

    custom_type: str | None = Field(None, alias="customType")
    content: str | list[dict[str, Any]] | None = None
    display: bool | None = None
    details: Any = None


class LabelEntry(BaseEntry):
    """Sets or clears a label on another entry."""

    target_id: str | None = Field(None, alias="targetId")
    label: str | None = None


class SessionInfoEntry(BaseEntry):
    """The session's display name."""

    name: str | None = None


_ENTRIES: dict[str, type[BaseEntry]] = {
    "message": MessageEntry, "model_change": ModelChangeEntry, "thinking_level_change": ThinkingLevelChangeEntry,
    "compaction": CompactionEntry, "branch_summary": BranchSummaryEntry, "context_edit": ContextEditEntry,
    "custom_message": CustomMessageEntry, "label": LabelEntry, "session_info": SessionInfoEntry,
}


def entry_model(data: dict[str, Any]) -> BaseEntry | SessionHeader:
    """The typed view of an entry dict (unknown types get :class:`BaseEntry`)."""
    kind = data.get("type")
    if kind == "session":
        return SessionHeader.model_validate(data)
    return _ENTRIES.get(str(kind), BaseEntry).model_validate(data)
