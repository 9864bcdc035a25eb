"""Compaction settings as Pi resolves them.

Pi reads ``~/.pi/agent/settings.json`` (the agent folder moves with
``PI_CODING_AGENT_DIR``) and ``<project>/.pi/settings.json`` and merges them recursively,
the project winning. ``compaction.modelOverrides["provider/modelId"]`` may override
``reserveTokens`` and ``keepRecentTokens`` for one exact model id; each value resolves on
its own: model override → ordinary setting → default. A bad value is an error naming the
file and the key, never silently replaced by a default.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import jsjson
from .._format.reading import NotRegularFileError, open_regular
from ..errors import SettingsError

__all__ = ["DEFAULTS", "CompactionSettings", "Settings", "load_settings", "merge"]

DEFAULTS: dict[str, Any] = {
    "compaction": {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000},
    "branchSummary": {"reserveTokens": 16384},
}
_MAX_SAFE = 2**53 - 1
_ABSENT: Any = object()


@dataclass(frozen=True)
class CompactionSettings:
    """The effective compaction settings for one model, and where each value came from."""

    enabled: bool
    reserve_tokens: int
    keep_recent_tokens: int
    model: str | None = None
    sources: Mapping[str, str] = field(default_factory=dict)

    def threshold(self, context_window: int) -> int:
        """The context size above which Pi compacts: ``context_window - reserve_tokens``."""
        return context_window - self.reserve_tokens

    def should_compact(self, context_tokens: int, context_window: int) -> bool:
        """Pi's trigger: enabled and ``context_tokens > context_window - reserve_tokens``."""
        return self.enabled and context_tokens > context_window - self.reserve_tokens


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Recursive merge: objects merge key by key, anything else in ``override`` replaces."""
    out = dict(base)
    # Iterative: a settings file may nest objects deeper than Python's recursion limit.
    pending = [(out, override)]
    while pending:
        target, source = pending.pop()
        for key, value in source.items():
            current = target.get(key)
            if isinstance(current, Mapping) and isinstance(value, Mapping):
                target[key] = merged = dict(current)
                pending.append((merged, value))
            else:
                target[key] = value
    return out


def _show(value: Any, limit: int = 60) -> str:
    """A setting's value for an error message: its JSON, cut short (nesting of any depth)."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except RecursionError:
        text = jsjson.stringify(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_token_count(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer() \
        and 0 <= value <= _MAX_SAFE


@dataclass
class Settings:
    """Merged settings and the files they came from."""

    data: dict[str, Any]
    files: list[str] = field(default_factory=list)

    def _where(self) -> str:
        return " + ".join(self.files) if self.files else "the built-in defaults"

    def _check(self, value: Any, key: str) -> None:
        # Absent is fine; anything present (null included) must be a token count, as in Pi.
        if value is not _ABSENT and not _is_token_count(value):
            raise SettingsError(f"{self._where()}: {key} is {_show(value)}; expected a non-negative whole number")

    def _compaction(self) -> Mapping[str, Any]:
        section = self.data.get("compaction", {})
        if not isinstance(section, Mapping):
            raise SettingsError(f"{self._where()}: compaction must be an object, got {_show(section)}")
        return section

    def overrides(self) -> dict[str, dict[str, Any]]:
        """All ``compaction.modelOverrides`` (validated)."""
        raw = self._compaction().get("modelOverrides", {})
        if not isinstance(raw, Mapping):
            raise SettingsError(f"{self._where()}: compaction.modelOverrides must be an object")
        for model in raw:
            self.for_model(model)
        return {k: dict(v) for k, v in raw.items()}

    def for_model(self, model: str | None = None) -> CompactionSettings:
        """The effective compaction settings for ``provider/modelId`` (exact, case-sensitive)."""
        section = self._compaction()
        enabled = section.get("enabled")
        if enabled is None:  # absent or null: the default, as in Pi
            enabled = DEFAULTS["compaction"]["enabled"]
        if not isinstance(enabled, bool):
            raise SettingsError(f"{self._where()}: compaction.enabled is {_show(enabled)}; expected true or false")
        overrides = section.get("modelOverrides")
        if overrides is not None and not isinstance(overrides, Mapping):
            raise SettingsError(f"{self._where()}: compaction.modelOverrides must be an object")
        entry = overrides.get(model, _ABSENT) if model is not None and overrides is not None else _ABSENT
        if entry is not _ABSENT and not isinstance(entry, Mapping):
            raise SettingsError(f'{self._where()}: compaction.modelOverrides["{model}"] must be an object')
        values: dict[str, int] = {}
        sources: dict[str, str] = {}
        for key in ("reserveTokens", "keepRecentTokens"):
            ordinary = section.get(key, _ABSENT)
            self._check(ordinary, f"compaction.{key}")
            override = entry.get(key, _ABSENT) if entry is not _ABSENT else _ABSENT
            self._check(override, f'compaction.modelOverrides["{model}"].{key}')
            if override is not _ABSENT:
                values[key], sources[key] = int(override), f"modelOverrides[{model}]"
            elif ordinary is not _ABSENT:
                values[key], sources[key] = int(ordinary), "settings"
            else:
                values[key], sources[key] = DEFAULTS["compaction"][key], "default"
        return CompactionSettings(enabled, values["reserveTokens"], values["keepRecentTokens"], model, sources)

    @property
    def branch_summary_reserve_tokens(self) -> int:
        """``branchSummary.reserveTokens`` (the budget is the context window minus this)."""
        section = self.data.get("branchSummary", {})
        if not isinstance(section, Mapping):
            raise SettingsError(f"{self._where()}: branchSummary must be an object, got {_show(section)}")
        value = section.get("reserveTokens", _ABSENT)
        self._check(value, "branchSummary.reserveTokens")
        return int(value) if value is not _ABSENT else DEFAULTS["branchSummary"]["reserveTokens"]


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open_regular(path) as handle:
            raw = handle.read()
    except FileNotFoundError:
        return None
    except NotRegularFileError as exc:
        raise SettingsError(f"{path}: is {exc.kind}, not a regular file; give the path of a settings.json") from None
    except OSError as exc:
        raise SettingsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    # As Node reads it: invalid UTF-8 becomes U+FFFD, a BOM is text (JSON.parse rejects it).
    text = raw.decode("utf-8", errors="replace")
    if not text.strip():
        return {}
    try:
        data = jsjson.loads(text)
    except jsjson.JSONParseError as exc:
        raise SettingsError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: must hold a JSON object")
    return data


def agent_dir() -> str:
    """Pi's agent folder: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    env = os.environ.get("PI_CODING_AGENT_DIR")
    if env:
        return os.path.expanduser(env)
    return os.path.join(os.path.expanduser("~"), ".pi", "agent")


def load_settings(path: str | None = None, *, cwd: str | None = None) -> Settings:
    """Settings from ``path`` alone, or Pi's global and project files merged (project wins).

    ``cwd`` is the project folder (default: the current directory).
    """
    if path is not None:
        data = _read(path)
        if data is None:
            raise SettingsError(f"{path}: no such settings file; check the path")
        settings = Settings(data, [path])
    else:
        files = [os.path.join(agent_dir(), "settings.json"),
                 os.path.join(cwd or os.getcwd(), ".pi", "settings.json")]
        merged: dict[str, Any] = {}
        found = []
        for file in files:
            data = _read(file)
            if data is not None:
                merged = merge(merged, data)
                found.append(file)
        settings = Settings(merged, found)
    settings.for_model(None)
    return settings
