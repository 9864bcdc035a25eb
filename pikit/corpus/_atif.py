"""A session's active branch as an ATIF trajectory (the Agent Trajectory Interchange Format).

ATIF is the trajectory format of Harbor and Terminal-Bench (read by NeMo DataDesigner and
Inspect Scout too); pikit writes version ``ATIF-v1.8``, the models of Harbor 0.26.0
(``harbor.models.trajectories``). :func:`atif_trajectory` walks the branch from the root to the
leaf, entry by entry, and makes one step of each entry the model saw or that changed what it
saw; ``docs/atif.md`` lists the mapping. In short:

- a user message, a custom message and a user's ``!`` command (``bashExecution``) are
  ``user`` steps; a system message is a ``system`` step;
- an assistant message is an ``agent`` step: its text the ``message``, its thinking the
  ``reasoning_content``, its tool calls the ``tool_calls``, the provider's usage the
  ``metrics`` (``prompt_tokens`` = input + cache read + cache write, ``cached_tokens`` = cache
  read, ``completion_tokens`` = output, ``cost_usd`` = the recorded cost), the thinking level
  in effect the ``reasoning_effort``;
- a tool result joins the ``observation`` of the agent step that called it (``source_call_id``);
- a compaction, a branch summary and a context edit are ``system`` steps whose observation
  holds what the model sees in place of the older context (the summary, the replacement),
  with the figures in ``extra.pi``.

Every step carries its entry id in ``extra.pi.entry_id``. Pure Python: no pydantic, no
Harbor; the tests check the output against the schema of Harbor's models.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .._context.tokens import estimate_tokens
from .._format.content import content_text
from .._format.entry import Entry
from .._format.message import ImageBlock, TextBlock, ThinkingBlock, ToolCall, view
from .._session import Session

__all__ = ["AGENT_NAME", "ATIF_VERSION", "atif_trajectory"]

ATIF_VERSION = "ATIF-v1.8"
AGENT_NAME = "pi"


def _timestamp(value: Any) -> str | None:
    """An ISO 8601 timestamp ATIF accepts, or ``None``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value


def _number(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value == value \
        and abs(value) != float("inf") else None


def _metrics(usage: Any) -> dict[str, Any] | None:
    """ATIF metrics from Pi's usage: prompt_tokens counts cached tokens too, as ATIF defines it."""
    if not isinstance(usage, Mapping):
        return None
    parts = {key: _number(usage.get(key)) for key in ("input", "output", "cacheRead", "cacheWrite")}
    out: dict[str, Any] = {}
    if parts["input"] is not None:
        out["prompt_tokens"] = parts["input"] + (parts["cacheRead"] or 0) + (parts["cacheWrite"] or 0)
    if parts["output"] is not None:
        out["completion_tokens"] = parts["output"]
    if parts["cacheRead"] is not None:
        out["cached_tokens"] = parts["cacheRead"]
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, Mapping) else None
    if isinstance(total, int | float) and not isinstance(total, bool) and total == total and abs(total) != float("inf"):
        out["cost_usd"] = float(total)
    extra = {key: value for key, value in (("cache_write_tokens", parts["cacheWrite"]),
                                           ("total_tokens", _number(usage.get("totalTokens")))) if value is not None}
    if extra:
        out["extra"] = extra
    return out or None


def _text(message: Mapping[str, Any]) -> str:
    """The text of a message's content (images named in brackets: ATIF keeps images as files, pikit writes none)."""
    parts = []
    for block in view(message).blocks:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ImageBlock):
            parts.append(f"[image{': ' + block.mime_type if block.mime_type else ''}]")
    return "\n".join(parts)


def _arguments(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else ({} if value is None else {"value": value})


class _Builder:
    """The steps of one branch, with the agent steps waiting for their tool results."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.calls: dict[str, dict[str, Any]] = {}  # tool call id -> the agent step that made it
        self.effort: str | None = None

    def add(self, entry: Entry, source: str, message: str, **fields: Any) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": len(self.steps) + 1}
        when = _timestamp(entry.timestamp)
        if when is not None:
            step["timestamp"] = when
        step["source"] = source
        step["message"] = message
        step.update({k: v for k, v in fields.items() if v is not None and k != "pi"})
        step["extra"] = {"pi": {"entry_id": str(entry.id), "type": str(entry.type), **(fields.get("pi") or {})}}
        self.steps.append(step)
        return step

    def message(self, entry: Entry, message: Mapping[str, Any]) -> None:
        role = message.get("role")
        if role == "assistant":
            self.assistant(entry, message)
        elif role == "toolResult":
            self.tool_result(entry, message)
        elif role == "system":
            self.add(entry, "system", content_text(message.get("content")), pi={"role": "system"})
        elif role == "bashExecution":
            bash = view(message).bash
            assert bash is not None
            self.add(entry, "user", f"$ {bash.command}", observation={"results": [{"content": bash.output}]},
                     pi={"role": "bashExecution", "exit_code": _number(bash.exit_code),
                         "exclude_from_context": bash.exclude_from_context})
        elif role in ("branchSummary", "compactionSummary"):
            summary = view(message).summary or ""
            self.add(entry, "system", "", observation={"results": [{"content": summary}]}, pi={"role": role})
        else:
            self.add(entry, "user", _text(message), pi={"role": str(role)})

    def assistant(self, entry: Entry, message: Mapping[str, Any]) -> None:
        seen = view(message)
        text = [b.text for b in seen.blocks if isinstance(b, TextBlock)]
        thinking = [b.thinking for b in seen.blocks if isinstance(b, ThinkingBlock)]
        calls: list[dict[str, Any]] = []
        for k, block in enumerate(b for b in seen.blocks if isinstance(b, ToolCall)):
            call_id = block.id if block.id else f"{entry.id}:{k}"
            calls.append({"tool_call_id": call_id, "function_name": block.name,
                          "arguments": _arguments(block.arguments)})
        provider, model = message.get("provider"), message.get("model")
        name = (f"{provider}/{model}" if isinstance(provider, str) and provider else model) \
            if isinstance(model, str) and model else None
        step = self.add(entry, "agent", "\n".join(text), model_name=name, reasoning_effort=self.effort,
                        reasoning_content="\n".join(thinking) if thinking else None, tool_calls=calls or None,
                        metrics=_metrics(message.get("usage")), llm_call_count=1,
                        pi={"stop_reason": seen.stop_reason, "error_message": seen.error_message})
        for call in calls:
            self.calls[call["tool_call_id"]] = step

    def tool_result(self, entry: Entry, message: Mapping[str, Any]) -> None:
        seen = view(message)
        content = _text(message)
        step = self.calls.get(seen.tool_call_id) if seen.tool_call_id is not None else None
        if step is None:  # a result whose call is not on the branch: a step of its own
            self.add(entry, "system", "", observation={"results": [{"content": content}]},
                     pi={"role": "toolResult", "tool_call_id": seen.tool_call_id, "tool_name": seen.tool_name,
                         "is_error": seen.is_error})
            return
        step.setdefault("observation", {"results": []})["results"].append(
            {"source_call_id": seen.tool_call_id, "content": content,
             "extra": {"pi": {"entry_id": str(entry.id), "tool_name": seen.tool_name, "is_error": seen.is_error}}})

    def entry(self, entry: Entry, session: Session) -> None:
        kind, data = entry.type, entry.data
        if kind == "message" and isinstance(entry.message, Mapping):
            self.message(entry, entry.message)
        elif kind == "custom_message":
            self.add(entry, "user", content_text(data.get("content")),
                     pi={"custom_type": data.get("customType") if isinstance(data.get("customType"), str) else None})
        elif kind == "thinking_level_change":
            level = data.get("thinkingLevel")
            self.effort = level if isinstance(level, str) and level != "off" else None
        elif kind == "compaction":
            self.compaction(entry, session)
        elif kind == "branch_summary":
            summary = data.get("summary")
            self.add(entry, "system", "", observation={"results": [{"content": summary if isinstance(summary, str)
                                                                    else ""}]},
                     pi={"context_management": "branch_summary", "from_id": _id(data.get("fromId"))})
        elif kind == "context_edit":
            replacement = data.get("replacement")
            content = content_text(replacement.get("content")) if isinstance(replacement, Mapping) else None
            self.add(entry, "system", "", observation={"results": [{"content": content}]},
                     pi={"context_management": "context_edit", "target_id": _id(data.get("targetId")),
                         "omitted": replacement is None})

    def compaction(self, entry: Entry, session: Session) -> None:
        """The context-management step: the summary the model sees in place of the older entries."""
        data = entry.data
        summary = data.get("summary")
        projection = session.context(entry.id)
        self.add(entry, "system", "", observation={"results": [{"content": summary if isinstance(summary, str)
                                                                else ""}]},
                 pi={"context_management": "compaction", "tokens_before": _number(data.get("tokensBefore")),
                     "tokens_after_estimate": sum(estimate_tokens(m) for m in projection.messages),
                     "first_kept_entry_id": _id(data.get("firstKeptEntryId")),
                     "summarized_entry_ids": [str(i) for i in projection.summarized_ids]})


def _id(value: Any) -> str | None:
    return None if value is None else str(value)


def atif_trajectory(session: Session, leaf: Any = None, *, agent_version: str = "unknown") -> dict[str, Any] | None:
    """The branch at ``leaf`` (default: the session's current leaf) as an ATIF trajectory (a JSON-ready dict);
    ``None`` when the branch has no step (ATIF asks for at least one)."""
    leaf_id = session.leaf_id if leaf is None else session.resolve_leaf(leaf)
    builder = _Builder()
    for entry in session.branch(leaf_id):
        builder.entry(entry, session)
    if not builder.steps:
        return None
    steps = builder.steps
    metrics = [s["metrics"] for s in steps if "metrics" in s]
    final: dict[str, Any] = {
        "total_prompt_tokens": sum(m.get("prompt_tokens", 0) for m in metrics),
        "total_completion_tokens": sum(m.get("completion_tokens", 0) for m in metrics),
        "total_cached_tokens": sum(m.get("cached_tokens", 0) for m in metrics),
        "total_cost_usd": math.fsum(m.get("cost_usd", 0.0) for m in metrics),
        "total_steps": len(steps),
    }
    models = [s["model_name"] for s in steps if "model_name" in s]
    agent: dict[str, Any] = {"name": AGENT_NAME, "version": agent_version}
    if models:
        agent["model_name"] = models[0]
    header = session.header
    session_id = header.get("id")
    out: dict[str, Any] = {"schema_version": ATIF_VERSION}
    if isinstance(session_id, str):
        out["session_id"] = session_id
    if leaf_id is not None:
        out["trajectory_id"] = f"{session_id}:{leaf_id}" if isinstance(session_id, str) else str(leaf_id)
    out["agent"] = agent
    out["steps"] = steps
    out["final_metrics"] = final
    out["extra"] = {"pi": {"leaf_id": _id(leaf_id), "cwd": header.get("cwd") if isinstance(header.get("cwd"), str)
                           else None, "session_version": header.get("version"),
                           "parent_session": header.get("parentSession")
                           if isinstance(header.get("parentSession"), str) else None}}
    return out
