"""Argument parsing for every ``pikit`` command; implementations load lazily."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

from .. import __version__

Runner = Callable[[argparse.Namespace], int]


def _lazy(target: str) -> Runner:
    module_name, func_name = target.split(":")

    def run(args: argparse.Namespace) -> int:
        module = importlib.import_module(f"pikit.cli.{module_name}")
        result: int = getattr(module, func_name)(args)
        return result

    return run


def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected whole numbers separated by commas, got {text!r}") from None
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected non-negative whole numbers, got {text!r}")
    return values


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got {text!r}")
    return value


def _session_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a Pi session file (.jsonl)")
    p.add_argument("--strict", action="store_true", help="fail on the first damaged line instead of skipping it")


def _json_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the machine-readable JSON contract")


def build_parser() -> argparse.ArgumentParser:
    """The full ``pikit`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="pikit",
        description="Look inside Pi coding-agent sessions: the tree, what the model saw, what compaction does.",
    )
    parser.add_argument("--version", action="version", version=f"pikit {__version__}")
    sub = parser.add_subparsers(metavar="COMMAND")

    p = sub.add_parser("context", help="what the model sees at a leaf: messages, sources, token figures")
    _session_arg(p)
    p.add_argument("--leaf", action="append", metavar="ID", help="entry id (or unique prefix); repeatable; "
                   "default: the file's last entry")
    p.add_argument("--count", action="store_true", help="also count real tokens with tiktoken (plain output)")
    _json_arg(p)
    p.set_defaults(run=_lazy("context:run"))

    p = sub.add_parser("tree", help="the entry tree, like Pi's /tree")
    _session_arg(p)
    p.add_argument("--leaf", metavar="ID", help="mark this entry as the active leaf (default: the last entry)")
    p.add_argument("--filter", default="default", choices=["default", "no-tools", "user-only", "labeled-only", "all"],
                   help="which entries to show (Pi's filter modes)")
    p.add_argument("--search", default="", metavar="TEXT", help="only entries whose text contains every word")
    _json_arg(p)
    p.set_defaults(run=_lazy("tree:run"))

    p = sub.add_parser("fork", help="write the branch at a leaf as a new session file")
    _session_arg(p)
    p.add_argument("--leaf", required=True, metavar="ID", help="the leaf whose branch to keep")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the new file (must not exist)")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists (never the source)")
    p.set_defaults(run=_lazy("files:run_fork"))

    p = sub.add_parser("migrate", help="write a copy of a v1/v2 session in the current format")
    _session_arg(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the new file (must not exist)")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists (never the source)")
    p.set_defaults(run=_lazy("files:run_migrate"))

    p = sub.add_parser("info", help="a summary of a session file and any damage found")
    _session_arg(p)
    _json_arg(p)
    p.set_defaults(run=_lazy("files:run_info"))

    return parser
