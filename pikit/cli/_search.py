"""``pikit search``: the entries of a corpus whose text matches, where each is, with a snippet."""

from __future__ import annotations

import argparse

from ._corpus import _client, _dump, _opened
from ._json import search as search_json


def _marked(snippet: str, highlights: tuple[tuple[int, int], ...]) -> str:
    """The snippet with each match between « and »."""
    out, at = [], 0
    for start, end in highlights:
        out += [snippet[at:start], "«", snippet[start:end], "»"]
        at = end
    return "".join(out) + snippet[at:]


def run(args: argparse.Namespace) -> int:
    from ..corpus._search import search_query

    search_query(args.query, kinds=args.kinds, regex=args.regex, limit=args.limit, offset=args.offset)  # (mistakes
    # in QUERY, --in, --regex are said before any scanning)
    with _client(args) as client, _opened(args, client) as corpus:
        found = corpus.search(args.query, kinds=args.kinds, regex=args.regex, limit=args.limit + 1,
                              offset=args.offset)
    more = len(found) > args.limit
    found = found[:args.limit]
    if args.json:
        _dump(search_json.search(args.query, found, offset=args.offset, more=more))
        return 0
    for hit in found:
        when = (hit.timestamp or "no timestamp")[:19].replace("T", " ")
        branch = "" if hit.on_active_branch else "  (off the active branch)"
        print(f"{when}  {hit.kind:<9} {hit.entry_id or f'#{hit.entry_index}'}{branch}")
        print(f"  {_marked(hit.snippet, hit.highlights)}")
        print(f"  {hit.path}")
    shown = f"hits {args.offset + 1:,} to {args.offset + len(found):,}" if found else "no hits"
    print(f"{shown}{f'; more with --offset {args.offset + len(found)}' if more else ''}")
    return 0
