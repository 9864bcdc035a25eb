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

import gc
import os
from collections.abc import Iterable, Iterator
from typing import Any

from .._session import load
from ..compaction._evaluation import Evaluation, compaction_entry, recorded_evaluations
from ..compaction._factkinds import FACT_KINDS
from ..errors import PikitError

__all__ = ["evaluate_files", "evaluation_rows"]


def _row(file_id: int, session_id: Any, path: str, item: Evaluation) -> tuple[Any, ...]:
    recall = item.recall
    key = [kept for fact, kept in zip(item.facts, item.kept, strict=True) if fact.importance == "key"]
    return (file_id, session_id, path, item.compaction_id, item.strategy, item.model, item.tokens_before,
            item.tokens_after, item.tokens_saved, item.compression, len(item.facts), sum(item.kept), len(key),
            sum(key), item.key_recall, recall["overall"], *(recall.get(kind) for kind in FACT_KINDS))


def evaluation_rows(path: str, file_id: int, session_id: Any) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The ``evaluations`` rows (one per compaction) and ``evaluation_facts`` rows (one per fact) of one file."""
    try:
        session = load(path)
    except (PikitError, OSError, ValueError):
        return [], []
    evaluations: list[tuple[Any, ...]] = []
    facts: list[tuple[Any, ...]] = []
    compactions = [e for e in session.entries if e.type == "compaction" and isinstance(e.id, str)]
    items = recorded_evaluations(session, [compaction_entry(session, e.id) for e in compactions])
    for entry, item in zip(compactions, items, strict=True):
        evaluations.append(_row(file_id, session_id, path, item))
        facts.extend((file_id, session_id, path, entry.id, f.kind, f.importance, f.text,
                      f.source if isinstance(f.source, str) else None, kept)
                     for f, kept in zip(item.facts, item.kept, strict=True))
    return evaluations, facts


def _rows(job: tuple[int, str, Any]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """One job's rows, with the cyclic garbage collector paused (as the ``pikit`` command runs): a loaded
    file is acyclic parsed JSON, which the collector would only traverse again and again (a tenth of the
    time); what the file leaves is freed as it goes out of use, and the collector resumes after it."""
    file_id, path, session_id = job
    paused = gc.isenabled()
    gc.disable()
    try:
        return evaluation_rows(path, file_id, session_id)
    finally:
        if paused:
            gc.enable()


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def evaluate_files(jobs: list[tuple[int, str, Any]], workers: int = 1) -> Iterator[tuple[str, list[tuple[Any, ...]]]]:
    """``(table, rows)`` for each ``(file id, path, session id)`` job, in the jobs' order, by ``workers``
    processes (forkserver, as the scan's) or in this one.

    The workers run at this process's priority: it writes nothing until every file is evaluated (a scan's
    workers yield to its writer, these have none to yield to). The largest files are given out first, so
    that no worker is left with a large one while the other has finished.
    """
    if workers <= 1 or len(jobs) < 4:
        results: Iterable[tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]] = map(_rows, jobs)
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        order = sorted(range(len(jobs)), key=lambda i: -_size(jobs[i][1]))
        done: dict[int, tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]] = {}
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
                for i, rows in zip(order, pool.map(_rows, [jobs[i] for i in order]), strict=False):
                    done[i] = rows
        except BrokenProcessPool:  # (a worker could not start, as in a script without a main guard, or died)
            pass  # what is left is evaluated here
        results = (done[i] if i in done else _rows(jobs[i]) for i in range(len(jobs)))
    for evaluations, facts in results:
        yield "evaluations", evaluations
        yield "evaluation_facts", facts
