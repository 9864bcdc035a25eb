"""The ``--json`` output of ``pikit models`` (documented in ``docs/json.md``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...llm._models import ModelCatalog, ModelInfo


def model(info: ModelInfo) -> dict[str, Any]:
    """One model: ``{"provider", "id", "contextWindow", "maxTokens", "cost", "source"}``."""
    return info.to_json()


def models(catalog: ModelCatalog, found: Sequence[ModelInfo]) -> dict[str, Any]:
    """A listing: where the facts come from, what was ignored, and the models."""
    from ...llm._models import catalog_source

    return {"agentDir": str(catalog.agent_dir), "catalog": catalog_source(), "problems": list(catalog.problems),
            "models": [model(info) for info in found]}
