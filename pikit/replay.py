"""Replay a session into a new file at a readable pace, as if Pi were writing it.

    >>> from pikit.replay import replay
    >>> replay("data/sample_sessions/refactor-auth.jsonl", "/tmp/live.jsonl", speed=5)  # the lines written
    158

The header is written at once; then each line follows after the time that separated it from
the previous entry in the original, divided by ``speed`` and capped at ``max_gap`` seconds
(see :func:`replay`). Follow the new file with ``pikit watch`` or the explorer
(``SessionExplorer(pikit.follow(out))``): any class can watch the context grow and compaction
happen without a running Pi.

The same from a shell::

    python -m pikit.replay data/sample_sessions/refactor-auth.jsonl /tmp/live.jsonl --speed 5

This module is both: the library's function, and the program ``python -m`` runs.
"""

# It sits on the command line's floor (the program is ``cli._replay``), above the function it
# exports (``_replaying``).

from __future__ import annotations

from ._replaying import MAX_GAP, replay

__all__ = ["MAX_GAP", "replay"]

if __name__ == "__main__":
    import sys

    from .cli._replay import main

    sys.exit(main())
