"""The ``--json`` object of ``pikit evaluate`` (documented in ``docs/json.md``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...compaction._evaluation import Evaluation
from ...llm._probes import ProbeResult


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
        "estimatedBefore": item.estimated_before,
        "compression": item.compression,
        "keyRecall": item.key_recall,
        "recall": item.recall,
        "judgedBy": item.judged_by,
        "facts": item.records(),
    }


def with_probes(data: dict[str, Any], probes: list[ProbeResult | str] | None) -> dict[str, Any]:
    """``data`` with each compaction's ``probes`` object (``--probes``); ``data`` unchanged without them."""
    if probes is not None:
        for compaction, result in zip(data["compactions"], probes, strict=True):
            compaction["probes"] = probe_object(result)
    return data


def probe_object(result: ProbeResult | str) -> dict[str, Any]:
    """``{"model", "questions", "scores", "summaryScores"}`` of one compaction's probes, or ``{"error"}`` when they
    failed."""
    if isinstance(result, str):
        return {"error": result}
    return {"model": result.model, "questions": result.records(), "scores": result.scores,
            "summaryScores": result.summary_scores}
