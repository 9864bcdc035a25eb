"""``python -m pikit.replay``: :func:`pikit.replay.replay` from a shell, with progress on stderr."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from .._replaying import replay
from ..errors import PikitError
from ._flags import error_line
from ._terminal import cut_echoes

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    argv: Sequence[str] = ()

    def error(self, message: str) -> NoReturn:  # the user's values echoed shortened and inert
        self.exit(2, cut_echoes(f"pikit.replay: error: {message} (see `python -m pikit.replay --help`)",
                                self.argv) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pikit.replay SESSION OUT [--speed N] [--max-gap S] [--torn] [--force]``."""
    parser = _Parser(prog="python -m pikit.replay",
                     description="Replay a session into a new file at a readable pace, as if Pi were writing it.")
    parser.add_argument("session", metavar="SESSION", help="the session to replay (read only)")
    parser.add_argument("out", metavar="OUT", help="the new file to write")
    parser.add_argument("--speed", type=float, default=5.0, help="times the original pace (default 5)")
    parser.add_argument("--max-gap", type=float, default=2.0, metavar="SECONDS",
                        help="the longest pause between two lines (default 2)")
    parser.add_argument("--torn", action="store_true", help="write each line in two halves (a pause between)")
    parser.add_argument("--force", action="store_true", help="write OUT again from the start if it exists")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(parser.argv)

    def progress(number: int, _line: bytes) -> None:
        if not args.quiet:
            sys.stderr.write(f"\rreplayed {number:,} lines")
            sys.stderr.flush()

    try:
        count = replay(args.session, args.out, speed=args.speed, max_gap=args.max_gap, torn=args.torn,
                       force=args.force, on_line=progress)
    except PikitError as exc:
        print(error_line("pikit.replay", exc, parser.argv), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\npikit.replay: interrupted", file=sys.stderr)
        return 130
    if not args.quiet:
        sys.stderr.write(f"\rreplayed {count:,} lines into {args.out}\n")
    return 0
