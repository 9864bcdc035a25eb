"""Frames of compaction evaluations (:func:`pikit.evaluate`): one row per fact, or one per compaction.

Each function takes a session (every compaction on the branch at its current leaf is
evaluated), one :class:`~pikit.compaction.Evaluation` or several (recorded, pikit-run or
simulated compactions alike).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from .._tree.sessiontree import SessionTree
from ..compaction._evaluation import Evaluation, compactions_on_branch, evaluate
from ..compaction._factkinds import FACT_KINDS
from ._columns import build, table

__all__ = ["EVALUATION_COLUMNS", "EVALUATION_FACT_COLUMNS", "evaluation_facts", "evaluations"]

EVALUATION_FACT_COLUMNS = table("""
    compaction_id  string   the compaction evaluated
    strategy       string   the strategy that made it (pi for a recorded compaction)
    kind           string   the kind of fact (task, decision, finding, progress, constraint, error,
                            modified_file, read_file, command, identifier, number, url)
    importance     string   key (what a follow-up agent needs) or minor (a detail)
    text           string   the fact as extracted from the replaced span
    source         string   the entry the fact came from
    kept           boolean  whether the context after the compaction still holds it
""")

EVALUATION_COLUMNS = (*table("""
    compaction_id  string   the compaction evaluated
    strategy       string   the strategy that made it (pi for a recorded compaction)
    model          string   provider/modelId of the branch at the compaction
    tokens_before  Int64    context size before the compaction (the recorded tokensBefore)
    tokens_after   Int64    context size right after it
    tokens_saved   Int64    tokens_before - tokens_after
    compression    Float64  Pi's estimate of the context before / tokens_after (one unit)
    facts          Int64    facts extracted from the replaced span
    kept           Int64    facts the context after it still holds
    key_facts      Int64    the key facts among them
    key_kept       Int64    key facts the context after it still holds
    key_recall     Float64  key_kept / key_facts, the headline (<NA> without key facts)
    recall         Float64  kept / facts (<NA> without facts)
"""), *table("\n".join(f"    recall_{kind}  Float64  recall of the {kind} facts (<NA> when the span has none)"
                        for kind in FACT_KINDS), group="recall"))


def _items(source: SessionTree | Evaluation | Iterable[Evaluation]) -> list[Evaluation]:
    if isinstance(source, SessionTree):
        return [e for e in (evaluate(source, c.id) for c in compactions_on_branch(source))
                if isinstance(e, Evaluation)]
    if isinstance(source, Evaluation):
        return [source]
    out = list(source)
    for item in out:
        if not isinstance(item, Evaluation):
            raise TypeError(f"expected a session or Evaluation objects, got {type(item).__name__}")
    return out


def evaluation_facts(source: SessionTree | Evaluation | Iterable[Evaluation]) -> pd.DataFrame:
    """One row per fact of each evaluation (see :data:`EVALUATION_FACT_COLUMNS`)."""
    rows: list[dict[str, Any]] = []
    for item in _items(source):
        for record in item.records():
            rows.append({"compaction_id": item.compaction_id, "strategy": item.strategy, **record,
                         "source": str(record["source"]) if record["source"] is not None else None})
    return build(rows, EVALUATION_FACT_COLUMNS)


def evaluations(source: SessionTree | Evaluation | Iterable[Evaluation]) -> pd.DataFrame:
    """One row per evaluated compaction, with its recall per kind (see :data:`EVALUATION_COLUMNS`)."""
    rows: list[dict[str, Any]] = []
    for item in _items(source):
        recall = item.recall
        key = [k for f, k in zip(item.facts, item.kept, strict=True) if f.importance == "key"]
        rows.append({"compaction_id": item.compaction_id, "strategy": item.strategy, "model": item.model,
                     "tokens_before": item.tokens_before, "tokens_after": item.tokens_after,
                     "tokens_saved": item.tokens_saved, "compression": item.compression,
                     "facts": len(item.facts), "kept": sum(item.kept), "key_facts": len(key),
                     "key_kept": sum(key), "key_recall": item.key_recall, "recall": recall["overall"],
                     **{f"recall_{kind}": recall.get(kind) for kind in FACT_KINDS}})
    return build(rows, EVALUATION_COLUMNS)
