"""The evaluations of an index's recorded compactions: which files to evaluate, and the rows written.

The files are evaluated by ``pikit.corpus._evaluate`` (in worker processes); this module
writes what they give into the ``evaluations`` and ``evaluation_facts`` tables.
"""

from __future__ import annotations

from typing import Any

from ._evaluate import evaluate_files
from ._filescan import Columns, pack, stored_columns
from ._index import Index, _workers_can_start
from ._indexfile import transaction

__all__ = ["evaluate"]


def _sharing(index: Index, todo: list[tuple[Any, ...]]) -> list[tuple[list[int], frozenset[str]]]:
    """The jobs of ``todo`` (by index) in groups of files that hold a compaction entry id in common (a session
    and its forks, which copy the branch they start from), each with the ids its files share."""
    number = {row[0]: i for i, row in enumerate(todo)}
    shared = index.con.execute("""SELECT entry_id, list(DISTINCT file_id) FROM compactions
                                  WHERE file_id IN (SELECT unnest($ids))
                                  GROUP BY entry_id HAVING count(DISTINCT file_id) > 1""",
                               {"ids": list(number)}).fetchall()
    parent = list(range(len(todo)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for _, files in shared:
        first = root(number[files[0]])
        for other in files[1:]:
            parent[root(number[other])] = first
    groups: dict[int, list[int]] = {}
    for i in range(len(todo)):
        groups.setdefault(root(i), []).append(i)
    ids: dict[int, set[str]] = {}
    for entry_id, files in shared:
        ids.setdefault(root(number[files[0]]), set()).add(entry_id)
    return [(members, frozenset(ids[top])) for top, members in groups.items() if len(members) > 1]


def evaluate(index: Index, workers: int = 1) -> int:
    """Evaluate the compactions of every file that records one and has not been evaluated since it was last
    read (table ``evaluated``; a file read again loses its evaluation with its other rows); return how many
    files were evaluated. ``workers`` processes load the files (``pikit.corpus._evaluate``)."""
    todo = index.con.execute("""SELECT s.file_id, f.path, s.session_id FROM sessions s JOIN files f USING (file_id)
                                WHERE s.compactions > 0 AND s.file_id NOT IN (SELECT file_id FROM evaluated)
                                ORDER BY f.path_order""").fetchall()
    if not todo:
        return 0
    parts: dict[str, list[Columns]] = {"evaluations": [], "evaluation_facts": []}
    for table, rows in evaluate_files(todo, workers if _workers_can_start() else 1, _sharing(index, todo)):
        if rows:
            columns = stored_columns(table)
            parts[table].append(Columns([c for c, _ in columns], [d for _, d in columns],
                                        [pack(list(values), d) for values, (_, d) in
                                         zip(zip(*rows, strict=True), columns, strict=True)]))
    with transaction(index.con):
        for table, table_parts in parts.items():
            index._insert(table, table_parts)
        index.con.execute("INSERT INTO evaluated SELECT unnest($ids)", {"ids": [row[0] for row in todo]})
    return len(todo)
