"""Compaction runs: the branch's compaction history, one run's record, and the summarizer wrapper."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._formatting import plural
from .._session import Session
from .._tree.sessiontree import CURRENT
from ..compaction._summarizer import Summarizer, SummaryRequest, SummaryResult
from ._state import state_for
from ._views.compaction import CompactionPoint, RunSettings
from ._views.diff import diff_frame

if TYPE_CHECKING:
    from .._context.diff import ProjectionDiff
    from .._context.projection import Projection
    from ..compaction._entries import CompactionResult
    from ..compaction._evaluation import Evaluation

__all__ = ["CompactionRun", "Reporting", "SummarizerFactory", "compaction_history", "default_factory"]

SummarizerFactory = Callable[[str, "str | None", "str | None"], Summarizer]
"""``factory(name, model, base_url) -> Summarizer``."""


def compaction_history(session: Session, leaf: Any = CURRENT, *, new_ids: Sequence[Any] = ()) -> list[CompactionPoint]:
    """Every compaction on the branch at ``leaf``, oldest first.

    ``tokens_before`` is what the entry recorded; ``tokens_after`` is the context size of the
    projection the compaction leaves (Pi does not record it). ``new_ids`` are flagged ``new``.
    """
    state = state_for(session)
    out = []
    for entry in session.branch(leaf):
        if entry.type != "compaction":
            continue
        before = entry.data.get("tokensBefore")
        out.append(CompactionPoint(entry.id, int(before) if isinstance(before, int | float) else 0,
                                   state.projection(entry.id).tokens, entry.data.get("firstKeptEntryId"),
                                   entry.id in new_ids))
    return out


@dataclass(frozen=True)
class CompactionRun:
    """One compaction run of the panel: its settings, the entry written, and the contexts around it.

    ``before`` is the context at the leaf the run compacted, ``after`` the context the new
    compaction leaves (in ``session``, the file written, loaded); ``diff`` compares them.
    """

    number: int
    leaf_id: Any
    settings: RunSettings
    result: CompactionResult
    path: str
    session: Session
    before: Projection
    after: Projection

    @property
    def point(self) -> CompactionPoint:
        """The run's bar pair in the chart."""
        return CompactionPoint(self.result.entry["id"], self.result.tokens_before, self.after.tokens,
                               self.result.entry.get("firstKeptEntryId"), new=True)

    @property
    def diff(self) -> ProjectionDiff:
        """Before against after: only what the compaction changed."""
        from .._context.diff import diff_contexts

        return diff_contexts(self.before, self.after)

    def diff_frame(self) -> Any:
        """:attr:`diff` as a pandas DataFrame."""
        return diff_frame(self.diff)

    @property
    def evaluation(self) -> Evaluation:
        """What the compaction kept and lost (:func:`pikit.evaluate` of :attr:`result`)."""
        from ..compaction._evaluation import evaluate

        evaluation = evaluate(self.session, self.result)
        assert not isinstance(evaluation, list)
        return evaluation

    def to_record(self) -> dict[str, Any]:
        """A flat dict (a DataFrame row)."""
        return {"run": self.number, "leaf_id": self.leaf_id, "compaction_id": self.result.entry["id"],
                "keep_recent_tokens": self.settings.keep_recent_tokens,
                "reserve_tokens": self.settings.reserve_tokens, "context_window": self.settings.context_window,
                "summarizer": self.settings.summarizer, "tokens_before": self.result.tokens_before,
                "tokens_after": self.after.tokens, "first_kept_entry_id": self.result.entry.get("firstKeptEntryId"),
                "path": self.path}

    def __repr__(self) -> str:
        return (f"<CompactionRun #{self.number} {self.result.entry['id']} {self.settings.caption}: "
                f"{self.result.tokens_before} → {self.after.tokens}>")


class Reporting:
    """Wraps a summarizer to report each call to the panel."""

    def __init__(self, inner: Summarizer, report: Callable[[str], None]) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)
        self.report = report
        self.calls = 0

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        self.calls += 1
        what = {"history": "the history", "turn_prefix": "the split turn's beginning"}.get(request.kind, request.kind)
        self.report(f"summarizing {what} ({plural(len(request.messages), 'message')}) with {self.name}…")
        return self.inner.summarize(request)


def default_factory(name: str, model: str | None, base_url: str | None) -> Summarizer:
    from ..llm._select import get_summarizer

    return get_summarizer(name, model=model or None, base_url=base_url or None)
