"""Replaying a session into a new file at a readable pace, as if Pi were writing it.

:func:`replay` is public as :func:`pikit.replay.replay`. The header is written at once; then
each line follows after the time that separated it from the previous entry in the original
(its timestamps), divided by ``speed`` and capped at ``max_gap`` seconds. Lines are appended
whole, one write each, and flushed, the way Pi writes them; ``torn=True`` writes every line in
two halves with a pause between, to show that a follower never reports a line still being
written. Follow the new file with ``pikit watch`` or the explorer
(``SessionExplorer(pikit.follow(out))``): any class can watch the context grow and compaction
happen without a running Pi.

The source is only read. ``out`` must not exist unless ``force=True`` (then it is emptied and
written again from the start, which a follower sees as a rewrite and reloads).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from typing import BinaryIO

from ._format.reading import MAX_LINE_BYTES
from ._format.timestamps import parse_ms
from ._limits import ONE_DAY
from .errors import PikitError, Wording
from .jsjson import loads as js_loads

__all__ = ["MAX_GAP", "replay"]

#: The longest ``max_gap``: a day, in seconds (every pause stays a wait that ``time.sleep`` can make).
MAX_GAP = ONE_DAY


def _lines(source: str) -> Iterator[bytes]:
    from ._format.reading import open_regular

    with open_regular(source) as handle:
        pending = b""
        while True:
            chunk = handle.read(1024 * 1024)
            if not chunk:
                break
            parts = (pending + chunk).split(b"\n")
            pending = parts.pop()
            if len(pending) > MAX_LINE_BYTES:
                raise PikitError(f"{source}: a line longer than {MAX_LINE_BYTES:,} bytes; not a session to replay")
            yield from (part + b"\n" for part in parts)
        if pending:
            yield pending + b"\n"


def _time_ms(line: bytes) -> int | None:
    try:
        value = js_loads(line)
    except ValueError:
        return None
    return parse_ms(value.get("timestamp")) if isinstance(value, dict) else None


def replay(source: str | os.PathLike[str], out: str | os.PathLike[str], *, speed: float = 5.0, max_gap: float = 2.0,
           torn: bool = False, force: bool = False, sleep: Callable[[float], None] = time.sleep,
           on_line: Callable[[int, bytes], None] | None = None) -> int:
    """Write ``source`` line by line into ``out`` at ``speed`` times the original pace.

    Pauses are the gaps between the entries' timestamps divided by ``speed`` (a line
    without a usable timestamp waits ``1 / speed`` seconds), at most ``max_gap`` seconds.
    Returns the number of lines written. ``on_line(number, line)`` is called after each.
    """
    if not 0 < speed < math.inf:  # also refuses NaN
        raise PikitError(Wording("{speed} must be more than 0 and finite (1 is the original pace, 5 five times "
                                 "faster)", {"speed": "speed"}))
    if not 0 <= max_gap <= MAX_GAP:
        raise PikitError(Wording("{max_gap} must be 0 to {most:,.0f} seconds", {"max_gap": "max_gap"}, most=MAX_GAP))
    source, out = os.fspath(source), os.fspath(out)
    if not os.path.isfile(source):
        raise PikitError(f"{source}: no such session file; check the path")
    if os.path.isdir(out):
        raise PikitError(f"{out}: is a folder; give the path of a new file to replay into")
    if os.path.exists(out) and os.path.samefile(source, out):
        raise PikitError(f"{out}: is the source itself; replay into a new file")
    if os.path.exists(out) and not force:
        raise PikitError(Wording("{out}: already exists; give a new file or {force} to write it again from the start",
                                 {"force": "force=True"}, out=out))
    written = 0
    previous: int | None = None
    with _created(out) as handle:
        for line in _lines(source):
            if written:
                now = _time_ms(line)
                gap = (now - previous) / 1000 if now is not None and previous is not None else 1.0
                sleep(min(max(gap, 0.0) / speed, max_gap))
                previous = now if now is not None else previous
            else:
                previous = _time_ms(line)
            if torn and len(line) > 2:
                half = len(line) // 2
                _write(handle, line[:half])
                sleep(min(0.2, max_gap))
                line = line[half:]
            _write(handle, line)
            written += 1
            if on_line is not None:
                on_line(written, line)
    return written


def _created(out: str) -> BinaryIO:
    try:
        return open(out, "wb")
    except OSError as exc:
        raise PikitError(f"{out}: cannot be written ({exc.strerror}); give a path in a folder you can write") from None


def _write(handle: BinaryIO, data: bytes) -> None:
    handle.write(data)
    handle.flush()
