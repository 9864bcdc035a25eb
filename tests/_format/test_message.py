"""The message model: one typed view per message, whatever JSON the message holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

import pikit
from pikit import tool_calls
from pikit._context.counting import message_text
from pikit._context.describe import message_preview
from pikit._context.serialize import serialize_conversation, to_model_messages
from pikit._format.message import Bash, ImageBlock, Section, TextBlock, ThinkingBlock, Tool, ToolCall, view


def test_assistant_blocks_are_typed_in_order() -> None:
    v = view({"role": "assistant", "stopReason": "error", "errorMessage": "boom", "content": [
        {"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "hi"}, "stray", {"type": "mystery"},
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}},
        {"type": "toolCall", "name": "ls"}]})
    assert v.blocks == (ThinkingBlock("hmm"), TextBlock("hi"), ToolCall("read", {"path": "a.py"}, "c1"),
                        ToolCall("ls", None, None, has_arguments=False))
    assert v.text() == "hi" and v.thinking == ["hmm"]
    assert [c.name for c in v.tool_calls] == ["read", "ls"]
    assert v.stopped_early and v.error_message == "boom"


def test_views_are_frozen() -> None:
    v = view({"role": "user", "content": "x"})
    with pytest.raises(AttributeError):
        v.role = "assistant"  # type: ignore[misc]


def test_string_content_is_one_text_block() -> None:
    v = view({"role": "user", "content": "hello"})
    assert v.blocks == (TextBlock("hello"),) and v.string_content and v.text() == "hello"
    assert v.list_blocks == () and not v.has_text_block


def test_user_like_fields() -> None:
    v = view({"role": "toolResult", "toolName": "bash", "toolCallId": "c1", "isError": True,
              "content": [{"type": "text", "text": "no"}, {"type": "image", "mimeType": "image/png", "data": "…"}]})
    assert (v.tool_name, v.tool_call_id, v.is_error, v.images) == ("bash", "c1", True, 1)
    assert v.blocks[1] == ImageBlock("image/png")
    assert view({"role": "custom", "customType": "note", "content": "x"}).custom_type == "note"


def test_system_sections_and_tools() -> None:
    v = view({"role": "system", "content": "base", "sections": {"a": "one", "b": None},
              "toolsAdded": [{"name": "grep", "description": "d"}, 3], "toolsRemoved": [{"name": "ls"}]})
    assert v.sections == (Section("a", "one"), Section("b", None))
    assert v.tools_added == (Tool("grep", {"name": "grep", "description": "d"}),)
    assert [t.name for t in v.tools_removed] == ["ls"]


def test_bash_and_summary_fields() -> None:
    v = view({"role": "bashExecution", "command": "ls", "output": "a", "exitCode": 2, "cancelled": False,
              "truncated": True, "fullOutputPath": "/tmp/o", "excludeFromContext": True})
    assert v.bash == Bash("ls", "a", 2, False, True, "/tmp/o", True)
    assert view({"role": "compactionSummary", "summary": "s"}).summary == "s"
    assert view({"role": "branchSummary"}).summary == ""


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)
_SENT = frozenset({"user", "assistant", "toolResult", "custom", "system", "branchSummary", "compactionSummary"})
ROLES = st.sampled_from(["user", "assistant", "toolResult", "custom", "system", "bashExecution",
                         "branchSummary", "compactionSummary", "weird"]) | JSON
BLOCK = st.fixed_dictionaries({"type": st.sampled_from(["text", "thinking", "toolCall", "image", "x"])},
                              optional={"text": JSON, "thinking": JSON, "name": JSON, "arguments": JSON,
                                        "id": JSON, "mimeType": JSON})


@given(role=ROLES, content=JSON | st.lists(BLOCK | JSON, max_size=5),
       extra=st.dictionaries(st.sampled_from(["toolName", "isError", "customType", "stopReason", "errorMessage",
                                              "sections", "toolsAdded", "toolsRemoved", "command", "output",
                                              "exitCode", "summary", "toolCallId"]), JSON, max_size=6))
def test_any_json_message_is_read_and_described(role: Any, content: Any, extra: dict[str, Any]) -> None:
    message = {"role": role, "content": content, **extra}
    v = view(message)
    assert v.raw is message
    assert isinstance(message_preview(message), str)
    text, images = message_text(message)
    assert isinstance(text, str) and images >= 0
    assert isinstance(serialize_conversation([message]), str)
    sent = len(to_model_messages([message]))  # (no role Pi knows, or an array or object as a role: left out)
    if role == "bashExecution":
        assert sent <= 1  # (none when excluded from the context)
    else:
        assert sent == (isinstance(role, str) and role in _SENT)
    assert isinstance(tool_calls(message), list)


def test_consumers_agree_with_the_view_on_a_real_session(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "before-compaction.jsonl")
    calls = 0
    for message in session.context().messages:
        v = view(message)
        text, images = message_text(message)
        assert images == (0 if v.role == "assistant" else v.images)
        for call in v.tool_calls if v.role == "assistant" else []:
            calls += 1
            assert call.name in text and f"{call.name}(" in message_preview(message)
        for block in v.texts:
            assert block in text
    assert calls > 0
