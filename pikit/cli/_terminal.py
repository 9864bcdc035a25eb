"""Terminal-inert output: control characters from session text are shown, never obeyed.

Session text, labels, names and ids are untrusted: an escape sequence in them could write
to the clipboard (OSC 52), clear the screen or set the window title if printed as it is.
``inert`` shows every control character visibly, as ``cat -v`` and ``less``
do (``^[`` for ESC, ``^M`` for a carriage return, ``^?`` for DEL, ``M-^[`` for the C1
controls), bidirectional overrides as ``<U+202E>``, and a lone surrogate as U+FFFD. Newlines
and tabs stay. :func:`inert_streams` routes everything the command line prints for people
through it; ``--json`` output is written as bytes to the underlying buffer and stays exact.
:func:`cut_echoes` keeps an error line short when it echoes a long value the user gave.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from .._inert import cut_echoes, inert

__all__ = ["InertStream", "cut_echoes", "inert", "inert_streams", "trusted"]


class InertStream:
    """A text stream that passes everything written through :func:`inert`.

    Everything else (``buffer`` for exact bytes, ``isatty``, ``encoding``, ``flush``…)
    is the wrapped stream's; :attr:`unescaped` is the wrapped stream itself, for the few
    control sequences pikit writes on purpose (a progress line's carriage return).
    """

    def __init__(self, stream: TextIO) -> None:
        self.unescaped = stream

    def write(self, text: str) -> int:
        self.unescaped.write(inert(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unescaped, name)


def trusted(stream: TextIO | InertStream) -> TextIO:
    """The stream to write pikit's own control sequences to (unwrapped)."""
    return stream.unescaped if isinstance(stream, InertStream) else stream


@contextlib.contextmanager
def inert_streams() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` print inertly (restored afterwards)."""
    saved = sys.stdout, sys.stderr
    sys.stdout = InertStream(saved[0])
    sys.stderr = InertStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
