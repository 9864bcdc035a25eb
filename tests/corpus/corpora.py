"""Small hand-made corpora for the corpus tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def header(session_id: str, cwd: str = "/home/dev/app", parent: str | None = None,
           timestamp: str = "2026-11-02T08:00:00.000Z") -> dict[str, Any]:
    """A v3 session header."""
    head: dict[str, Any] = {"type": "session", "version": 3, "id": session_id, "timestamp": timestamp, "cwd": cwd}
    if parent is not None:
        head["parentSession"] = parent
    return head


def assistant(entry_id: str, parent: str | None, timestamp: str, tokens: int, cost: float = 0.01,
              model: str = "claude-sonnet-4-5") -> dict[str, Any]:
    """An assistant message entry with usage."""
    usage = {"input": tokens, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens + 10,
             "cost": {"total": cost}}
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": "assistant", "content": [{"type": "text", "text": f"answer {entry_id}"}],
                        "provider": "anthropic", "model": model, "usage": usage, "stopReason": "stop"}}


def user(entry_id: str, parent: str | None, timestamp: str, text: str) -> dict[str, Any]:
    """A user message entry."""
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": timestamp,
            "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def write(path: Path, *objects: dict[str, Any], tail: bytes = b"") -> Path:
    """Write JSONL lines (and raw bytes after them)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(json.dumps(o, separators=(",", ":")).encode() + b"\n" for o in objects) + tail)
    return path


def legacy_header(session_id: str, cwd: str = "/home/dev/app", timestamp: str = "2026-11-02T08:00:00.000Z"
                  ) -> dict[str, Any]:
    """A version-1 session header (no version field)."""
    return {"type": "session", "id": session_id, "timestamp": timestamp, "cwd": cwd}


def legacy(entry: dict[str, Any], raw_id: str | None = None, raw_parent: str | None = None) -> dict[str, Any]:
    """A version-1 entry made of a v3 one: no id and parent, or the raw ones given (ids Pi's migration replaces)."""
    out = {k: v for k, v in entry.items() if k not in ("id", "parentId")}
    if raw_id is not None:
        out["id"] = raw_id
        out["parentId"] = raw_parent
    return out


def pi_migrated(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A version-1 file's objects migrated as Pi migrates them: every entry a fresh random id."""
    import copy

    from pikit._format.migration import migrate, new_id

    migrated = copy.deepcopy(objects)
    migrate(migrated, lambda _position, _obj, taken: new_id(taken))
    return migrated
