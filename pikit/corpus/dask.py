"""Scanning a corpus on a Dask cluster: files partitioned across workers, per-file results combined here.

Each changed file is one task: a worker runs :func:`pikit.corpus.filescan.scan_file` on it (the
same lean pass as a local scan, from the stored mark for a file that grew) and returns its
rows; this process writes them into the index. The tables are therefore identical to a
local scan's: the same rows from the same code, and the counting order comes from the
paths, not from the order results arrive in.

Workers must see the files under the same paths: a shared filesystem (NFS, a cluster's
home directories) or URLs that fsspec serves (``s3://bucket/sessions``; install the
matching fsspec backend on the workers).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..progress import Progress
from . import index as _index
from .filescan import FileResult, scan_file

__all__ = ["scan_distributed"]


def scan_distributed(index: _index.Index, root: Any, client: Any, progress: Progress = None) -> _index.ScanReport:
    """Bring ``index`` in step with ``root`` using ``client``'s workers (a ``distributed.Client``); ``progress``
    is reported as results arrive (:func:`pikit.corpus.index.scan`)."""

    def run(jobs: list[_index.Job]) -> Iterator[FileResult]:
        from distributed import as_completed

        futures = client.map(scan_file, *zip(*jobs, strict=True), pure=False) if jobs else []
        try:
            for future in as_completed(futures):
                yield future.result()
                future.release()
        finally:
            for future in futures:
                future.release()

    return _index.scan(index, root, progress, runner=run)
