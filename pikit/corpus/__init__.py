"""A directory of Pi sessions as data: an incremental DuckDB index, usage and compaction analytics.

>>> from pikit.corpus import Corpus, connect
>>> corpus = Corpus.open()                       # Pi's sessions directory, indexed in the cache folder
>>> corpus.sessions.head()                       # one row per session file, newest first
>>> corpus.sql("SELECT model, count(*) FROM compactions GROUP BY model")
>>> corpus.usage("day")                          # the numbers @ccusage/pi shows, per day
>>> with connect("tcp://SCHEDULER:8786") as client:  # a Dask client whose scheduler was checked first
...     Corpus.open(client=client)

The layer sits above the core and imports DuckDB, pandas and Dask only when they are used.
"""

from __future__ import annotations

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ._atif import ATIF_VERSION as ATIF_VERSION, atif_trajectory as atif_trajectory
    from ._corpus import Corpus as Corpus, default_index_path as default_index_path
    from ._dask import (
        CONNECT_TIMEOUT as CONNECT_TIMEOUT,
        STALL_TIMEOUT as STALL_TIMEOUT,
        WORKERS_TIMEOUT as WORKERS_TIMEOUT,
        SchedulerError as SchedulerError,
        connect as connect,
    )
    from ._discover import default_root as default_root
    from ._export import (
        Exported as Exported,
        export_atif as export_atif,
        export_parquet as export_parquet,
        export_session as export_session,
    )
    from ._index import ScanReport as ScanReport
    from ._indexfile import (
        CorpusIndexError as CorpusIndexError,
        IndexHeldError as IndexHeldError,
        IndexRebuiltWarning as IndexRebuiltWarning,
    )
    from ._schema import TABLES as TABLES
    from ._search import SearchHit as SearchHit
    from ._searchtext import SEARCH_KINDS as SEARCH_KINDS

if not typing.TYPE_CHECKING:  # (type checkers read the declaration above)
    __getattr__, __dir__, __all__ = _lazy.exports(__name__)
