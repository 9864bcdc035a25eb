"""The evaluation of every compaction a file records, as rows of the corpus tables ``evaluations`` and
``evaluation_facts``.

They are computed when first asked for (:meth:`pikit.corpus.Corpus.evaluate`, which the two
tables' properties call), not by the scan: evaluating parses every entry of a file up to its last
compaction, which costs more than the scan's lean pass over it, and only files that record a
compaction are loaded. Each compaction, on any branch, is evaluated by :func:`pikit.evaluate`
(the rules of ``pikit evaluate``). A file the scan reads again loses its evaluation with its other rows and
is evaluated again when next asked. A file that cannot be loaded gets no evaluation rows
(its other rows say why).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..compaction._factkinds import FACT_KINDS
from ..errors import PikitError
from ..jsjson import without_lone_surrogates

if TYPE_CHECKING:
    from .._format.entry import Entry
    from ..compaction._evaluation import Evaluation, SpanMemo

__all__ = ["evaluate_files", "evaluation_rows"]


def _row(file_id: int, session_id: Any, path: str, compaction_id: str, item: Evaluation) -> tuple[Any, ...]:
    recall = item.recall
    key = [kept for fact, kept in zip(item.facts, item.kept, strict=True) if fact.importance == "key"]
    model = without_lone_surrogates(item.model) if item.model is not None else None
    return (file_id, session_id, path, compaction_id, item.strategy, model, item.tokens_before,
            item.tokens_after, item.tokens_saved, item.compression, len(item.facts), sum(item.kept), len(key),
            sum(key), item.key_recall, recall["overall"], *(recall.get(kind) for kind in FACT_KINDS))


def evaluation_rows(path: str, file_id: int, session_id: Any, memo: SpanMemo | None = None
                    ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The ``evaluations`` rows (one per compaction) and ``evaluation_facts`` rows (one per fact) of one file;
    ``memo`` carries the verdicts of compactions it shares with other files (:class:`SpanMemo`). The session's
    strings are stored with their lone surrogates as U+FFFD, as the scan stores them. The file is read as far as
    its last compaction (``read_session_through``), and on where what follows could
    change it. A compaction whose id a later entry that is no compaction took is not evaluated (its id names that
    entry)."""
    from .._format.loading import read_session_through
    from .._session import Session
    from ..compaction._evaluation import compaction_entry, recorded_evaluations

    try:
        session = Session.from_parts(read_session_through(path, "compaction"), path=path)
    except (PikitError, OSError, ValueError):
        return [], []
    evaluations: list[tuple[Any, ...]] = []
    facts: list[tuple[Any, ...]] = []
    compactions: list[tuple[Entry, Entry]] = []  # (each compaction entry, the entry its id names)
    for entry in session.entries:
        if entry.type == "compaction" and isinstance(entry.id, str):
            try:
                compactions.append((entry, compaction_entry(session, entry.id)))
            except PikitError:  # (a later entry that is no compaction took its id: nothing is evaluated by it)
                continue
    items = recorded_evaluations(session, [named for _, named in compactions], memo)
    for (entry, _), item in zip(compactions, items, strict=True):
        compaction_id = without_lone_surrogates(entry.id)
        evaluations.append(_row(file_id, session_id, path, compaction_id, item))
        facts.extend((file_id, session_id, path, compaction_id, f.kind, f.importance, without_lone_surrogates(f.text),
                      without_lone_surrogates(f.source) if isinstance(f.source, str) else None, kept)
                     for f, kept in zip(item.facts, item.kept, strict=True))
    return evaluations, facts


_Rows = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]


def _rows(group: list[tuple[int, str, Any]], shared: frozenset[str] = frozenset()) -> list[_Rows]:
    """The rows of each job of a group (files that hold the compactions ``shared``, each worked out once), with the
    cyclic garbage collector paused (as the ``pikit`` command runs): a loaded file is acyclic parsed JSON, which
    the collector would only traverse again and again (a tenth of the time); what the file leaves is freed as it
    goes out of use, and the collector resumes after the group."""
    from ..compaction._evaluation import SpanMemo  # (here: the process that only gathers rows never needs it)

    memo = SpanMemo(shared) if shared else None
    paused = gc.isenabled()
    gc.disable()
    try:
        return [evaluation_rows(path, file_id, session_id, memo) for file_id, path, session_id in group]
    finally:
        if paused:
            gc.enable()


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _split(grouped: list[tuple[list[int], frozenset[str]]], sizes: list[int], most: int
           ) -> list[tuple[list[int], frozenset[str]]]:
    """``grouped`` with each group larger than ``most`` bytes (a worker's share: a session forked many times) cut
    into parts of at most that size, or one file, so that the workers still share the work."""
    out: list[tuple[list[int], frozenset[str]]] = []
    for members, shared in grouped:
        part: list[int] = []
        total = 0
        for i in members:
            if part and total + sizes[i] > most:
                out.append((part, shared))
                part, total = [], 0
            part.append(i)
            total += sizes[i]
        out.append((part, shared))
    return out


def evaluate_files(jobs: list[tuple[int, str, Any]], workers: int = 1,
                   groups: Iterable[tuple[Iterable[int], frozenset[str]]] = ()
                   ) -> Iterator[tuple[str, list[tuple[Any, ...]]]]:
    """``(table, rows)`` for each ``(file id, path, session id)`` job, in the jobs' order, by ``workers``
    processes (forkserver, as the scan's) or in this one.

    ``groups`` (indexes into ``jobs`` and the compaction ids those files share; a job in none is a group of its
    own) puts a session and its forks in one process, where a shared compaction whose span and context are the
    same is worked out once. The workers run at this process's priority: it writes nothing until every file is
    evaluated (a scan's workers yield to its writer, these have none to yield to). The largest groups are given
    out first, so that no worker is left with a large one while the other has finished, and a group larger than
    a worker's share is given out in parts.
    """
    grouped: list[tuple[list[int], frozenset[str]]] = []
    placed: set[int] = set()
    for group, shared in groups:
        members = [i for i in dict.fromkeys(group) if 0 <= i < len(jobs) and i not in placed]
        placed.update(members)
        if members:
            grouped.append((members, shared))
    grouped.extend(([i], frozenset()) for i in range(len(jobs)) if i not in placed)
    done: dict[int, _Rows] = {}
    if workers > 1 and len(jobs) >= 4:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        sizes = [_size(path) for _, path, _ in jobs]
        grouped = _split(grouped, sizes, sum(sizes) // workers)
        grouped.sort(key=lambda group: -sum(sizes[i] for i in group[0]))
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
                work = pool.map(_rows, [[jobs[i] for i in members] for members, _ in grouped],
                                [shared for _, shared in grouped])
                for (members, _), rows in zip(grouped, work, strict=False):
                    done.update(zip(members, rows, strict=True))
        except BrokenProcessPool:  # (a worker could not start, as in a script without a main guard, or died)
            pass  # what is left is evaluated here
    home = {i: group for group in grouped for i in group[0]}
    for i in range(len(jobs)):
        if i not in done:
            members, shared = home[i]
            left = [m for m in members if m not in done]
            done.update(zip(left, _rows([jobs[m] for m in left], shared), strict=True))
        evaluations, facts = done.pop(i)
        yield "evaluations", evaluations
        yield "evaluation_facts", facts
