"""Summarizers for the compaction widgets' tests, and a look at the folder they write to."""

from __future__ import annotations

from pathlib import Path

from pikit.compaction import SummaryRequest, SummaryResult
from pikit.errors import SummarizerError


class FakeSummarizer:
    """Answers every request with a fixed summary (and records what it was asked)."""

    name = "fake"

    def __init__(self, text: str = "## Goal\nRefactor the auth module.") -> None:
        self.text = text
        self.requests: list[SummaryRequest] = []

    @property
    def calls(self) -> int:
        """How many requests it answered."""
        return len(self.requests)

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        self.requests.append(request)
        return SummaryResult(self.text, None)


class FailingSummarizer:
    """Fails every request, as a model that stopped for length."""

    name = "failing"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        raise SummarizerError("the model stopped for length: nothing was written")


def files_in(folder: Path) -> list[str]:
    """The names of the files in ``folder``, sorted."""
    return sorted(p.name for p in folder.iterdir())
