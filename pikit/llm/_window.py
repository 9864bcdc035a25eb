"""A context window and where it came from, for every budget, threshold and cost pikit shows."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .._formatting import fmt_int

__all__ = ["UNKNOWN_WINDOW_HINT", "ContextWindow", "model_spec", "model_window"]

UNKNOWN_WINDOW_HINT = "pass --context-window or add the model to ~/.pi/agent/models.json"
"""What to do about a model whose window no source knows."""


@dataclass(frozen=True)
class ContextWindow:
    """A context window in tokens (``None``: unknown) and its source.

    ``source`` is a model source (``"catalog pi 1.6.0"``, ``"models.json"``,
    ``"models-store.json"``), the flag or argument that gave the window (``"--context-window"``,
    ``"a setting/argument"``), or ``None`` when the window is unknown.
    """

    tokens: int | None
    source: str | None
    model: str | None = None

    @property
    def known(self) -> bool:
        """Whether the window is known."""
        return self.tokens is not None

    def threshold(self, reserve_tokens: int) -> int | None:
        """``tokens - reserve_tokens``, Pi's compaction threshold (``None`` when the window is unknown)."""
        return None if self.tokens is None else self.tokens - reserve_tokens

    def describe(self, hint: str = UNKNOWN_WINDOW_HINT) -> str:
        """``"window 200,000 (catalog pi 1.6.0)"``, or ``"window unknown: <hint>"``."""
        if self.tokens is None:
            return f"window unknown: {hint}"
        return f"window {fmt_int(self.tokens)} ({self.source})"


def model_window(model: str | None, *, given: int | None = None, given_source: str = "--context-window",
                 agent_dir: str | os.PathLike[str] | None = None) -> ContextWindow:
    """The window of ``model`` (``"provider/modelId"``): ``given`` when not ``None`` (named
    ``given_source``), else the model's window as Pi resolves it, else unknown."""
    if given is not None:
        return ContextWindow(given, given_source, model)
    if model:
        from ._models import lookup_model

        info = lookup_model(model, agent_dir=agent_dir)
        if info is not None and info.context_window is not None:
            return ContextWindow(info.context_window, info.window_source, model)
    return ContextWindow(None, None, model)


def model_spec(model: Any) -> str | None:
    """``"provider/modelId"`` of a projection's model (``{"provider", "modelId"}``), ``None`` when none is recorded."""
    if not isinstance(model, dict) or model.get("modelId") is None:
        return None
    provider = model.get("provider")
    return f"{provider}/{model['modelId']}" if provider else str(model["modelId"])
