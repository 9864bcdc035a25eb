"""Scanning a corpus on a Dask cluster: files partitioned across workers, per-file results combined here.

Each changed file is one task: a worker runs :func:`pikit.corpus.index.scan_file` on it (the
same lean pass as a local scan, from the stored mark for a file that grew) and returns its
rows; this process writes them into the index. The tables are therefore identical to a
local scan's: the same rows from the same code, and the counting order comes from the
paths, not from the order results arrive in.

Workers must see the files under the same paths: a shared filesystem (NFS, a cluster's
home directories) or URLs that fsspec serves (``s3://bucket/sessions``; install the
matching fsspec backend on the workers).
"""

from __future__ import annotations

from typing import Any

from . import index as _index

__all__ = ["scan_distributed"]


def scan_distributed(index: _index.Index, root: Any, client: Any) -> _index.ScanReport:
    """Bring ``index`` in step with ``root`` using ``client``'s workers (a ``distributed.Client``)."""
    from distributed import as_completed

    todo, listing, removed = _index.plan(index, root)
    report = _index.ScanReport(files=len(todo), removed=removed)
    changed = [job for job in todo if not _index.unchanged(job[0], job[2])]
    report.unchanged = len(todo) - len(changed)
    jobs = [(path, file_id, mark, index.state(file_id) if mark is not None else None)
            for path, file_id, mark in changed]
    futures = client.map(_index.scan_file, *zip(*jobs, strict=True), pure=False) if jobs else []
    index.con.execute("BEGIN")
    try:
        _index.collect(index, report, (future.result() for future in as_completed(futures)), None, len(jobs))
        _index.record_listing(index, listing)
        index.con.execute("COMMIT")
    except BaseException:
        index.con.execute("ROLLBACK")
        raise
    finally:
        for future in futures:
            future.release()
    report.problems = index.con.execute("SELECT count(*) FROM problems").fetchall()[0][0]
    return report
