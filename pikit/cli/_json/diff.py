"""The ``--json`` objects of ``pikit diff`` and ``pikit show`` (documented in ``docs/json.md``)."""

from __future__ import annotations

from typing import Any

from ..._context.diff import DiffRow, DiffTotals, ProjectionDiff


def diff(result: ProjectionDiff, *, compaction: Any, ancestor: Any) -> dict[str, Any]:
    """The two leaves, the compaction compared (or ``None``), the shared path's end, the totals and every row."""
    return {
        "a": result.a.leaf_id,
        "b": result.b.leaf_id,
        "compaction": compaction,
        "ancestor": ancestor,
        "totals": totals(result.totals),
        "rows": [row(r) for r in result.rows],
    }


def totals(t: DiffTotals) -> dict[str, Any]:
    """Counts of each status and their token figures."""
    return {
        "added": t.added, "removed": t.removed, "changed": t.changed, "same": t.same,
        "addedTokens": t.added_tokens, "removedTokens": t.removed_tokens, "changedDelta": t.changed_delta,
        "estimateA": t.estimate_a, "estimateB": t.estimate_b, "estimateDelta": t.estimate_delta,
        "tokensA": t.tokens_a, "tokensB": t.tokens_b, "tokensDelta": t.tokens_delta,
    }


def row(r: DiffRow) -> dict[str, Any]:
    """One aligned message (without its body: ``pikit context --json`` prints the messages)."""
    return {
        "status": r.status, "note": r.note, "indexA": r.index_a, "indexB": r.index_b,
        "sourceA": r.source_a, "sourceB": r.source_b, "roleA": r.role_a, "roleB": r.role_b,
        "estimateA": r.estimate_a, "estimateB": r.estimate_b, "delta": r.delta,
    }


def show(what: Any, *, label: Any) -> dict[str, Any]:
    """One entry (``what`` is a ``Seen`` of ``pikit show``): as stored, then what the model sees of it at the leaf."""
    entry, context = what.entry, what.context
    messages = context.messages if context is not None else []
    return {
        "id": entry.id,
        "line": entry.line,
        "label": label,
        "entry": entry.data,
        "leaf": what.projection.leaf_id,
        "status": what.status,
        "by": what.by,
        "messages": messages,
        "estimates": context.estimates if context is not None else [],
    }
