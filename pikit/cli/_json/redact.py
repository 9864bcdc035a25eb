"""The ``--json`` object of ``pikit redact`` (documented in ``docs/json.md``): counts, never values."""

from __future__ import annotations

from typing import Any

from ..._redaction.session import RedactionReport


def report(redaction: RedactionReport, source: str, output: str) -> dict[str, Any]:
    """What was replaced: in all, per kind, distinct per kind, in the header and per entry."""
    return {
        "source": source,
        "output": output,
        "at": redaction.at,
        "total": redaction.total,
        "counts": dict(redaction.counts),
        "distinct": dict(redaction.distinct),
        "header": dict(redaction.header),
        "entries": {str(k): dict(v) for k, v in redaction.entries.items()},
    }
