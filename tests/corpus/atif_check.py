"""An ATIF document checked as Harbor 0.26.0 checks it: its JSON Schema, and the rules of its models.

``tests/data/atif/trajectory.schema.json`` is the schema of Harbor's pydantic models (see the
README beside it). The models' validators add rules no JSON Schema states; :func:`problems`
checks them too, in the models' words.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "atif" / "trajectory.schema.json"
AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")


@cache
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _rules(document: dict[str, Any]) -> list[str]:
    out = []
    for i, step in enumerate(document.get("steps", [])):
        if step.get("step_id") != i + 1:
            out.append(f"steps[{i}].step_id: expected {i + 1} (sequential from 1), got {step.get('step_id')}")
        when = step.get("timestamp")
        if when is not None:
            try:
                datetime.fromisoformat(when.replace("Z", "+00:00"))
            except ValueError as exc:
                out.append(f"steps[{i}].timestamp: Invalid ISO 8601 timestamp: {exc}")
        if step.get("source") != "agent":
            out.extend(f"steps[{i}]: Field '{f}' is only applicable when source is 'agent'" for f in AGENT_ONLY
                       if step.get(f) is not None)
        elif step.get("llm_call_count") == 0:
            out.extend(f"steps[{i}]: Field '{f}' must be absent when llm_call_count is 0"
                       for f in ("metrics", "reasoning_content") if step.get(f) is not None)
        calls = {c["tool_call_id"] for c in step.get("tool_calls") or ()}
        for result in (step.get("observation") or {}).get("results", []):
            source = result.get("source_call_id")
            if source is not None and source not in calls:
                out.append(f"steps[{i}]: source_call_id {source!r} is not found in step {step.get('step_id')}'s "
                           "tool_calls")
    return out


def problems(document: Any) -> list[str]:
    """What makes ``document`` not a valid ATIF trajectory (nothing when it is one)."""
    found = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator().iter_errors(document)]
    return found or _rules(document)
