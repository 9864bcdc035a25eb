"""The ``--json`` object of ``pikit context`` (documented in ``docs/json.md``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..._context.projection import Projection
from ..._session import Session


def context(session: Session, leaves: Iterable[Any]) -> dict[str, Any]:
    """``{"leaves": {leaf id: projection object}}``, one entry per leaf, in the order given."""
    out: dict[Any, Any] = {}
    for leaf in leaves:
        out[leaf] = projection(session.context(leaf))
    return {"leaves": out}


def projection(ctx: Projection) -> dict[str, Any]:
    """What the model sees at one leaf: the branch, the model, the messages and their sizes."""
    return {
        "path": [e.id for e in ctx.path],
        "model": ctx.model,
        "thinkingLevel": ctx.thinking_level,
        "messages": ctx.messages,
        "sources": ctx.sources,
        "estimates": ctx.estimates,
        "tokens": ctx.tokens,
    }
