"""Messages recovered from Pi's serialized conversation text (when a request carries none)."""

from __future__ import annotations

import json
import re
from typing import Any

from .text import _SCAN_LIMIT

_BLOCK_RE = re.compile(r"(?:^|\n\n)\[(User|Assistant|Assistant tool calls|Tool result)\]: ")
_CALL_NAME_RE = re.compile(r"(?:^|; )([A-Za-z_][\w.\-]*)\(")
_ARG_RE = re.compile(r"(?:\(|, )(path|command)=")
_EXIT_RE = re.compile(r"Command exited with code [1-9]|^Error\b")


def _messages_from_text(text: str) -> list[dict[str, Any]]:
    """Rebuild rough AgentMessages from Pi's serialized conversation text.

    Tool results are paired with the calls in order; one counts as failed when it says
    ``Command exited with code N`` (N > 0) or starts with ``Error``. Text without Pi's block
    markers is read as one user message.
    """
    parts = _BLOCK_RE.split(text[:5_000_000])
    if len(parts) == 1:
        return [{"role": "user", "content": text[:_SCAN_LIMIT]}] if text.strip() else []
    messages: list[dict[str, Any]] = []
    waiting: list[tuple[str, str]] = []
    decoder = json.JSONDecoder()
    count = 0
    for label, body in zip(parts[1::2], parts[2::2], strict=False):
        if label == "User":
            messages.append({"role": "user", "content": body})
        elif label == "Assistant":
            messages.append({"role": "assistant", "content": [{"type": "text", "text": body}],
                             "stopReason": "stop"})
        elif label == "Assistant tool calls":
            blocks: list[dict[str, Any]] = []
            starts = list(_CALL_NAME_RE.finditer(body))
            for index, start in enumerate(starts):
                end = starts[index + 1].start() if index + 1 < len(starts) else len(body)
                arguments: dict[str, Any] = {}
                for arg in _ARG_RE.finditer(body, start.end() - 1, end):
                    try:
                        value, _ = decoder.raw_decode(body, arg.end())
                    except ValueError:
                        continue
                    arguments[arg.group(1)] = value
                count += 1
                call_id = f"text-call-{count}"
                waiting.append((call_id, start.group(1)))
                blocks.append({"type": "toolCall", "id": call_id, "name": start.group(1),
                               "arguments": arguments})
            last = messages[-1] if messages else None
            if last is not None and last.get("role") == "assistant" and last.get("stopReason") == "stop":
                last["content"] = [*last["content"], *blocks]
                last["stopReason"] = "toolUse"
            else:
                messages.append({"role": "assistant", "content": blocks, "stopReason": "toolUse"})
        else:
            call_id, name = waiting.pop(0) if waiting else ("", "tool")
            messages.append({"role": "toolResult", "toolCallId": call_id, "toolName": name,
                             "content": body, "isError": bool(_EXIT_RE.search(body))})
    return messages
