"""The evaluation of every compaction a file records, as rows of the corpus tables ``evaluations`` and
``evaluation_facts``.

They are computed when first asked for (:meth:`pikit.corpus.Corpus.evaluate`, which the two
tables' properties call), not by the scan: evaluating loads a file whole, which costs more
than the scan's lean pass over it, and only files that record a compaction are loaded. Each
compaction, on any branch, is evaluated by :func:`pikit.evaluate` (the rules of
``pikit evaluate``). A file the scan reads again loses its evaluation with its other rows and
is evaluated again when next asked. A file that cannot be loaded gets no evaluation rows
(its other rows say why).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._session import load
from ..compaction._evaluation import Evaluation, evaluate
from ..compaction._facts import FACT_KINDS
from ..errors import PikitError

__all__ = ["evaluate_files", "evaluation_rows"]


def _row(file_id: int, session_id: Any, path: str, item: Evaluation) -> tuple[Any, ...]:
    recall = item.recall
    return (file_id, session_id, path, item.compaction_id, item.strategy, item.model, item.tokens_before,
            item.tokens_after, item.tokens_saved, item.compression, len(item.facts), sum(item.kept),
            recall["overall"], *(recall.get(kind) for kind in FACT_KINDS))


def evaluation_rows(path: str, file_id: int, session_id: Any) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The ``evaluations`` rows (one per compaction) and ``evaluation_facts`` rows (one per fact) of one file."""
    try:
        session = load(path)
    except (PikitError, OSError, ValueError):
        return [], []
    evaluations: list[tuple[Any, ...]] = []
    facts: list[tuple[Any, ...]] = []
    for entry in session.entries:
        if entry.type != "compaction" or not isinstance(entry.id, str):
            continue
        item = evaluate(session, entry.id)
        if not isinstance(item, Evaluation):
            continue
        evaluations.append(_row(file_id, session_id, path, item))
        facts.extend((file_id, session_id, path, entry.id, f.kind, f.text,
                      f.source if isinstance(f.source, str) else None, kept)
                     for f, kept in zip(item.facts, item.kept, strict=True))
    return evaluations, facts


def _rows(job: tuple[int, str, Any]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    file_id, path, session_id = job
    return evaluation_rows(path, file_id, session_id)


def evaluate_files(jobs: list[tuple[int, str, Any]], workers: int = 1) -> Iterator[tuple[str, list[tuple[Any, ...]]]]:
    """``(table, rows)`` for each ``(file id, path, session id)`` job, by ``workers`` processes (forkserver, as
    the scan's, at its lower priority) or in this one."""
    if workers <= 1 or len(jobs) < 4:
        results: Iterator[tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]] = map(_rows, jobs)
        for evaluations, facts in results:
            yield "evaluations", evaluations
            yield "evaluation_facts", facts
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from ._filescan import yield_to_writer

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver"),
                             initializer=yield_to_writer) as pool:
        for evaluations, facts in pool.map(_rows, jobs, chunksize=4):
            yield "evaluations", evaluations
            yield "evaluation_facts", facts
