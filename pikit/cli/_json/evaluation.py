"""The ``--json`` object of ``pikit evaluate`` (documented in ``docs/json.md``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...compaction._evaluation import Evaluation


def evaluations(items: Iterable[Evaluation]) -> dict[str, Any]:
    """``{"compactions": [evaluation object, ...]}`` in the order given."""
    return {"compactions": [evaluation(e) for e in items]}


def evaluation(item: Evaluation) -> dict[str, Any]:
    """One compaction: its figures, recall per kind and every fact with whether it was kept."""
    return {
        "id": item.compaction_id,
        "strategy": item.strategy,
        "model": item.model,
        "tokensBefore": item.tokens_before,
        "tokensAfter": item.tokens_after,
        "tokensSaved": item.tokens_saved,
        "compression": item.compression,
        "recall": item.recall,
        "facts": item.records(),
    }
