"""Progress on long work: loading a session file, scanning a corpus, replaying a branch.

The three report through one protocol. A library function that may take long takes
``progress=``:

* ``None`` (the default): a bar in a Jupyter notebook when the work is long enough to be worth
  one (:data:`WORTH_SHOWING`) and tqdm is installed; nothing anywhere else;
* ``False``: nothing;
* ``True``: a bar when the work is long enough: tqdm's (``tqdm.auto``: a widget in a notebook,
  text on stderr elsewhere), or without tqdm a :class:`Line` on stderr;
* a :class:`Display` (such as :class:`Line`): drawn by it, when the work is long enough;
* a callback ``(done, total)``: called as the work goes, whatever its size.

Nothing is written unless asked for, and nothing process-wide changes: tqdm is imported only
when a bar is shown, and its bars start no monitor thread. The command line passes a
:class:`Line` on stderr when stderr is a terminal; notebooks get tqdm's widget.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TextIO, TypeVar, runtime_checkable

from ._formatting import fmt_int

__all__ = ["BYTES", "ENTRIES", "WORTH_SHOWING", "Bar", "Display", "Line", "Progress", "ProgressCallback",
           "in_notebook", "reporting", "tracked"]

#: The units of work: bytes of files (loading, scanning) and entries of a branch (replaying).
BYTES = "B"
ENTRIES = "entries"
#: The amount of work from which a display shows it (below, it takes well under a second or so).
#: A replay counts each entry once per setting it is replayed under.
WORTH_SHOWING = {BYTES: 32_000_000, ENTRIES: 5_000}
_REDRAW_SECONDS = 0.1  # a Line redraws at most this often

ProgressCallback = Callable[[int, int], None]
T = TypeVar("T")


@runtime_checkable
class Display(Protocol):
    """How progress is drawn: one piece of work at a time, from :meth:`start` to :meth:`finish`."""

    def start(self, label: str, total: int, unit: str) -> None:
        """Work of ``total`` ``unit`` begins (``label`` says what it is, in plain printable text)."""

    def update(self, done: int, total: int) -> None:
        """``done`` of ``total`` are done."""

    def finish(self) -> None:
        """The work ended (completed or not): remove what was drawn."""


Progress = bool | ProgressCallback | Display | None


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (as ``tqdm.auto`` tells; IPython is not imported)."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if get_ipython is not None else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _figures(done: int, total: int, unit: str) -> str:
    share = f" ({100 * done // total}%)" if total else ""
    if unit == BYTES:
        return f"{done / 1e6:,.0f} / {total / 1e6:,.0f} MB{share}"
    return f"{fmt_int(done)} / {fmt_int(total)} {unit}{share}"


class Line:
    """Progress as one line on a terminal stream, redrawn in place (at most ten times a second),
    cut to the terminal's width, and cleared when the work ends.

    Also a context manager: leaving the block clears a line still shown (an error, Ctrl-C).
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.label, self.unit = "", ""
        self.shown = False
        self._drawn = 0.0

    def start(self, label: str, total: int, unit: str) -> None:
        """Begin a line for ``label`` (drawn at the first update)."""
        self.label, self.unit, self._drawn = label, unit, 0.0

    def update(self, done: int, total: int) -> None:
        """Redraw the line (unless it was drawn less than a tenth of a second ago and the work goes on)."""
        now = time.monotonic()
        if done < total and now - self._drawn < _REDRAW_SECONDS:
            return
        self._drawn = now
        figures = _figures(done, total, self.unit)
        try:
            width = os.get_terminal_size(self.stream.fileno()).columns or 80  # (0: a terminal of unknown size)
        except (AttributeError, OSError, ValueError):
            width = 80
        label = self.label
        if len(label) + len(figures) + 2 >= width:
            label = label[: max(width - len(figures) - 4, 0)] + "…"
        self.stream.write(f"\r{label}: {figures}\033[K")
        self.stream.flush()
        self.shown = True

    def finish(self) -> None:
        """Clear the line, if one is shown."""
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False

    def __enter__(self) -> Line:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()


@functools.cache
def _tqdm() -> Any:
    """tqdm.auto's class, without the monitor thread tqdm would otherwise start for its first bar."""
    from tqdm.auto import tqdm

    return type("tqdm", (tqdm,), {"monitor_interval": 0})


class Bar:
    """Progress as a tqdm bar (``tqdm.auto``: a widget in a notebook, text on stderr elsewhere),
    removed when the work ends."""

    def __init__(self) -> None:
        self._bar: Any = None

    def start(self, label: str, total: int, unit: str) -> None:
        """Open a bar for ``label``."""
        options = {"unit": "B", "unit_scale": True} if unit == BYTES else {"unit": f" {unit}"}
        self._bar = _tqdm()(total=total, desc=label, leave=False, **options)

    def update(self, done: int, total: int) -> None:
        """Move the bar to ``done``."""
        self._bar.update(done - self._bar.n)

    def finish(self) -> None:
        """Close the bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _display(progress: bool | Display | None) -> Display | None:
    if isinstance(progress, Display):
        return progress
    if progress is False or (progress is None and not in_notebook()):
        return None
    import importlib.util

    if importlib.util.find_spec("tqdm") is not None:
        return Bar()
    return Line(sys.stderr) if progress else None


def _printable(label: str) -> str:
    """``label`` as plain text any display shows as it is (tqdm's widget takes its label as HTML)."""
    return "".join(c if c.isprintable() and c not in "<>&" else "?" for c in label)


@contextlib.contextmanager
def reporting(progress: Progress, label: str, total: int, unit: str) -> Iterator[ProgressCallback | None]:
    """Report work of ``total`` ``unit`` (:data:`BYTES` or :data:`ENTRIES`) as ``progress`` asks.

    Yields the callback to call with ``(done, total)`` as the work goes, or ``None`` when nothing
    is to be reported (no display wanted, or work too short for one: :data:`WORTH_SHOWING`). A
    display is finished when the block ends, however it ends.
    """
    if callable(progress) and not isinstance(progress, Display):
        yield progress
        return
    display = _display(progress)
    if display is None or total < WORTH_SHOWING[unit]:
        yield None
        return
    display.start(_printable(label), total, unit)
    try:
        yield display.update
    finally:
        display.finish()


def tracked(items: Iterable[T], progress: Progress, label: str, total: int, unit: str,
            weight: Callable[[T], int] | None = None) -> Iterator[T]:
    """``items`` as they come, reported with :func:`reporting` after each: one unit per item, or
    ``weight(item)`` (counted up to ``total``; when the items end short of it, the work is done all the same).
    """
    with reporting(progress, label, total, unit) as callback:
        if callback is None:
            yield from items
            return
        done = 0
        for item in items:
            yield item
            done = min(done + (1 if weight is None else weight(item)), total)
            callback(done, total)
        if done < total:
            callback(total, total)
