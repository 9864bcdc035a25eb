"""The command's entry point: parse, run, and turn every failure into one line."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from ..errors import PikitError
from ._app import build_parser
from ._flags import error_line
from ._terminal import inert, inert_streams

__all__ = ["main", "run"]


class _Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the command is, so that its clean-up runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise _Terminated(signum)


def main(argv: Sequence[str] | None = None, *, detach: bool = False) -> int:
    """Run the command line; return the exit status (``detach``: work left after the answer, such as writing a
    new corpus index, may go on in a process of its own after this one ends)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.detach = detach
    if not getattr(args, "run", None):
        parser.print_help(sys.stderr)
        return 2
    with inert_streams():  # session text reaches the terminal with its control characters shown, not obeyed
        mark = _catalogs_built()
        try:
            status = int(args.run(args) or 0)
        except PikitError as exc:
            _model_fact_warnings(mark)
            print(error_line("pikit", exc, argv), file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("pikit: interrupted", file=sys.stderr)
            return 130
        except _Terminated as exc:
            print(f"pikit: terminated ({signal.Signals(exc.signum).name})", file=sys.stderr)
            return 128 + exc.signum
        except BrokenPipeError:
            # The reader went away (e.g. `pikit tree big.jsonl | head`): not an error.
            sys.stderr.close()
            return 0
        _model_fact_warnings(mark)
        return status


def _catalogs_built() -> int:
    models = sys.modules.get("pikit.llm._models")  # (not imported for a command that needs no model facts)
    return 0 if models is None else int(models.catalogs_built())


def _model_fact_warnings(mark: int) -> None:
    """One warning line per problem of the model-fact files the command read (a file ignored, and why)."""
    models = sys.modules.get("pikit.llm._models")
    for problem in models.problems_since(mark) if models is not None else ():
        print(f"pikit: warning: {inert(problem)}", file=sys.stderr)


def run() -> None:
    """The ``pikit`` executable: :func:`main`, then exit without tearing the heap down.

    Freeing a loaded session object by object at interpreter exit costs a third of a
    second on a 100 MB session; the operating system reclaims the memory at once. Output
    is flushed first, and nothing else is pending: commands close the files they write.
    The cyclic garbage collector stays off: a command is one pass over acyclic parsed JSON,
    which the collector would only traverse again and again (a tenth of the time of
    ``context --json`` on a 100 MB session).
    SIGTERM and SIGHUP end the command the way Ctrl-C does: its clean-up runs (a file
    being written is removed, a lock released) before the process exits.
    """
    gc.disable()
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _terminate)
    status = main(detach=True)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):  # the reader went away, or stderr was closed
            stream.flush()
    os._exit(status)
