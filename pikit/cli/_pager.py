"""Long output through a pager, as git does: only when standard output is a terminal.

The pager is ``$PIKIT_PAGER``, else ``$PAGER``, else ``less``; ``LESS`` defaults to ``FRX``
(quit at once when the text fits the screen, keep colours, leave the text on screen). An
empty value or ``cat`` turns paging off, as does ``--no-pager``. Piped or redirected output,
and ``--json`` output, never go through a pager.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator

from ._terminal import InertStream

__all__ = ["paged", "pager_command"]


def pager_command() -> list[str] | None:
    """The pager to run (an argument list), or ``None`` when paging is off or impossible."""
    for name in ("PIKIT_PAGER", "PAGER"):
        if name in os.environ:
            text = os.environ[name].strip()
            break
    else:
        text = "less"
    if not text or text == "cat":
        return None
    try:
        argv = shlex.split(text)
    except ValueError:
        return None
    if not argv or shutil.which(argv[0]) is None:
        return None
    return argv


@contextlib.contextmanager
def paged(enabled: bool = True) -> Iterator[None]:
    """Send what is printed inside the block to the pager when stdout is a terminal.

    Quitting the pager early is not an error: the rest of the output is dropped.
    """
    argv = pager_command() if enabled and sys.stdout.isatty() else None
    if argv is None:
        yield
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    sys.stdout.flush()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, env=env)
    assert process.stdin is not None
    stream = io.TextIOWrapper(process.stdin, encoding=sys.stdout.encoding or "utf-8", errors="replace",
                              line_buffering=False)
    original = sys.stdout
    sys.stdout = InertStream(stream)
    try:
        yield
    except BrokenPipeError:
        pass  # the pager was closed before the end
    finally:
        sys.stdout = original
        with contextlib.suppress(BrokenPipeError, OSError, ValueError):
            stream.close()
        with contextlib.suppress(KeyboardInterrupt):
            process.wait()
