"""A directory of Pi sessions as data: an incremental DuckDB index, usage and compaction analytics.

>>> from pikit.corpus import Corpus
>>> corpus = Corpus.open()                       # Pi's sessions directory, indexed in the cache folder
>>> corpus.sessions.head()                       # one row per session file, newest first
>>> corpus.sql("SELECT model, count(*) FROM compactions GROUP BY model")
>>> corpus.usage("day")                          # the numbers @ccusage/pi shows, per day

The layer sits above the core and imports DuckDB, pandas and Dask only when they are used.
"""

from __future__ import annotations

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ._corpus import Corpus, default_index_path
    from ._discover import default_root
    from ._index import ScanReport
    from ._indexfile import CorpusIndexError, IndexHeldError, IndexRebuiltWarning
    from ._schema import TABLES

__all__ = ["TABLES", "Corpus", "CorpusIndexError", "IndexHeldError", "IndexRebuiltWarning", "ScanReport",
           "default_index_path", "default_root"]

if not typing.TYPE_CHECKING:  # (type checkers see the imports above)
    __getattr__, __dir__ = _lazy.exports(__name__, {
        ".corpus": ("Corpus", "default_index_path"),
        ".discover": ("default_root",),
        ".index": ("ScanReport",),
        ".indexfile": ("CorpusIndexError", "IndexHeldError", "IndexRebuiltWarning"),
        ".schema": ("TABLES",),
    })
