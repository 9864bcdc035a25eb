"""Argument parsing for every ``pikit`` command; implementations load lazily."""

from __future__ import annotations

import argparse
import importlib
import math
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from .._inert import echo
from .._limits import MIN_POLL, ONE_DAY
from .._progress import BYTES, ENTRIES, WORTH_SHOWING
from .._version import __version__
from ._terminal import cut_echoes

Runner = Callable[[argparse.Namespace], int]


def _lazy(target: str) -> Runner:
    module_name, func_name = target.split(":")

    def run(args: argparse.Namespace) -> int:
        module = importlib.import_module(f"._{module_name}", __package__)
        result: int = getattr(module, func_name)(args)
        return result

    return run


_MAX_WHOLE = 2**53 - 1  # JavaScript's Number.MAX_SAFE_INTEGER: Pi's counts are JavaScript numbers
_MAX_SWEEP = 100  # values in one N[,N...] list


def _shown(number: float) -> str:
    return f"{number:,}" if isinstance(number, int) else f"{number:,g}"


def _ranged(parse: Callable[[str], Any], noun: str, low: float, high: float, *,
            above: bool = False) -> Callable[[str], Any]:
    """An option's type: the text ``parse``d, from ``low`` (or ``above`` it) to ``high``.

    NaN, the infinities and numbers past ``high`` (``1e400`` parses as infinity) are refused:
    every comparison with NaN is false. The text is echoed shortened.
    """
    bounds = f"above {_shown(low)} and at most {_shown(high)}" if above else f"{_shown(low)} to {_shown(high)}"

    def check(text: str) -> Any:
        try:
            value = parse(text)
        except ValueError:
            digits = text.strip()
            if not digits.removeprefix(digits[:1] if digits[:1] in ("+", "-") else "").isdecimal():
                raise argparse.ArgumentTypeError(f"expected {noun}, got {echo(text)}") from None
            value = math.nan  # a whole number too long for int() (over 4,300 digits): out of range
        if not ((low < value) if above else (low <= value)) or not value <= high:
            raise argparse.ArgumentTypeError(f"expected {noun} ({bounds}), got {echo(text)}")
        return value

    return check


_count = _ranged(int, "a whole number", 0, _MAX_WHOLE)
_tokens = _ranged(int, "a number of tokens", 0, _MAX_WHOLE)
_window = _ranged(int, "a number of tokens", 1, _MAX_WHOLE)
_timeout = _ranged(float, "a number of seconds", 0, ONE_DAY, above=True)
_idle = _ranged(float, "a number of seconds", 0, ONE_DAY)
_poll = _ranged(float, "a number of seconds", MIN_POLL, ONE_DAY)
_retries = _ranged(int, "a number of retries", 0, 100)
_port = _ranged(int, "a port number", 1, 65_535)
_fraction = _ranged(float, "a fraction of the window", 0, 1, above=True)


def _token_list(text: str) -> list[int]:
    """``N[,N...]``: token counts for a sweep (at most ``_MAX_SWEEP`` of them)."""
    parts = [part for part in text.split(",") if part.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(f"expected whole numbers separated by commas, got {echo(text)}")
    if len(parts) > _MAX_SWEEP:
        raise argparse.ArgumentTypeError(f"expected at most {_MAX_SWEEP} values, got {len(parts):,}")
    return [_tokens(part) for part in parts]


def _session_arg(p: argparse.ArgumentParser, *, progress: bool = True, redact: bool = True) -> None:
    p.add_argument("file", metavar="FILE", help="a Pi session file (.jsonl)")
    p.add_argument("--strict", action="store_true", help="fail on the first damaged line instead of skipping it")
    if progress:
        _progress_arg(p)
    if redact:
        p.add_argument("--redact", action="store_true",
                       help="replace secrets by placeholders in everything shown or written (as `pikit redact`)")
        _redaction_args(p, implies=" (implies --redact)")


def _regex(text: str) -> str:
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"not a regular expression ({exc}): {echo(text)}") from None
    return text


def _redaction_args(p: argparse.ArgumentParser, *, implies: str = "") -> None:
    p.add_argument("--redact-pattern", action="append", type=_regex, metavar="REGEX", default=[],
                   help=f"also redact what this expression matches (its first group if it has one); "
                        f"repeatable{implies}")
    p.add_argument("--redact-allow", action="append", metavar="VALUE", default=[],
                   help=f"never redact this exact value; repeatable{implies}")
    p.add_argument("--redact-allow-pattern", action="append", type=_regex, metavar="REGEX", default=[],
                   help=f"never redact a value this expression matches whole; repeatable{implies}")
    p.add_argument("--redact-emails", action="store_true", help=f"also redact e-mail addresses{implies}")
    p.add_argument("--keep-images", action="store_true",
                   help=f"keep inline images (by default their data is replaced by a blank image){implies}")


def _progress_arg(p: argparse.ArgumentParser) -> None:
    megabytes, entries = WORTH_SHOWING[BYTES] // 10**6, WORTH_SHOWING[ENTRIES]
    p.add_argument("--no-progress", action="store_true",
                   help=f"no progress line on stderr (a terminal gets one for long work: {megabytes} MB or more to "
                        f"read, a replay of {entries:,} entries or more)")


def _strategy_args(p: argparse.ArgumentParser, strategy_help: str | None) -> None:
    """--strategy (when ``strategy_help`` is given) and the strategies' own settings."""
    if strategy_help is not None:
        p.add_argument("--strategy", metavar="NAME[,NAME...]",
                       help=f"{strategy_help}: pi, pi-percent, none, codex-inline, mask-observations, "
                            "mask-at-threshold, truncate")
    p.add_argument("--threshold", type=_fraction, metavar="F",
                   help="pi-percent: compact when the context exceeds F × the window, F in (0, 1] (default 0.8)")
    p.add_argument("--keep-observations", type=_count, default=10, metavar="N",
                   help="mask-observations: keep the last N tool outputs before every request (default 10, the "
                        "setting of the paper it follows)")
    p.add_argument("--keep-turns", type=_count, default=10, metavar="N",
                   help="mask-at-threshold: keep the tool output of the last N turns (default 10)")
    p.add_argument("--auto-compact-limit", type=_tokens, metavar="N",
                   help="codex-inline: compact at N tokens (capped at 90%% of the window)")


def _json_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the machine-readable JSON contract")


def _long_output_args(p: argparse.ArgumentParser, what: str) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument("--limit", type=_count, metavar="N", help=f"show only the first N {what} (plain output)")
    group.add_argument("--tail", type=_count, metavar="N", help=f"show only the last N {what} (plain output)")
    _pager_arg(p)


def _pager_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-pager", action="store_true",
                   help="never page (by default a terminal gets long output through $PAGER, as git does)")


class _Parser(argparse.ArgumentParser):
    """One line on stderr for a usage mistake (not the whole usage block), echoing the
    user's values shortened and inert (argparse quotes them whole)."""

    _argv: list[str] | None = None

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        self.exit(2, cut_echoes(f"pikit: error: {message} (see `{self.prog} --help`)", self._argv or ()) + "\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # An unknown command is said here, from the value and the command names themselves (argparse's own
        # message lists every command, and its wording is argparse's to change or translate).
        if isinstance(action, argparse._SubParsersAction):
            commands = list(action.choices or ())
            if value not in commands:
                self.error(_unknown_command(value, commands))
        super()._check_value(action, value)


def _unknown_command(given: str, commands: list[str]) -> str:
    """An unknown command said without the list of every command (``--help`` has it), a close one suggested."""
    import difflib

    close = difflib.get_close_matches(given, commands, n=1, cutoff=0.6)
    return f"unknown command {given!r}" + (f"; did you mean {close[0]}?" if close else "")


class _CommandParser(_Parser):
    """A subcommand's parser: it reports arguments it does not know itself, so the message
    points to the subcommand's help and suggests the option that was probably meant."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}{self._suggestion(extras)}")
        return parsed, extras

    def _suggestion(self, extras: list[str]) -> str:
        import difflib

        known = [o for action in self._actions for o in action.option_strings if o.startswith("--")]
        for extra in extras:
            if extra.startswith("--"):
                close = difflib.get_close_matches(extra.split("=", 1)[0], known, n=1, cutoff=0.6)
                if close:
                    return f"; did you mean {close[0]}?"
        return ""


class _Commands:
    """The subcommands: every one's parser, or (``wanted``) only that command's, the others stand-ins that take
    their arguments and keep nothing (building every parser costs a command that reads a small file a third of
    its time in this process)."""

    def __init__(self, sub: argparse._SubParsersAction[_CommandParser], wanted: str | None) -> None:
        self.sub, self.wanted, self.found = sub, wanted, False

    def add_parser(self, name: str, **options: Any) -> Any:
        if self.wanted is None or self.wanted in (name, *options.get("aliases", ())):
            self.found = True
            return self.sub.add_parser(name, **options)
        return _Unused()


class _Unused:
    """A parser not built: every call takes its arguments and gives itself."""

    def __getattr__(self, name: str) -> Callable[..., _Unused]:
        return self._take

    def _take(self, *args: Any, **options: Any) -> _Unused:
        return self


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``pikit`` argument parser: with ``argv``, only the parser of the command it names (of every command
    when it names none: help, a mistake)."""
    wanted = argv[0] if argv and not argv[0].startswith("-") else None
    parser, found = _build(wanted)
    return parser if found or wanted is None else _build(None)[0]


def _build(wanted: str | None) -> tuple[argparse.ArgumentParser, bool]:
    """The parser (with only ``wanted``'s subcommand: see :class:`_Commands`), and whether it has ``wanted``."""
    parser = _Parser(
        prog="pikit",
        description="Look inside Pi coding-agent sessions: the tree, what the model saw, what compaction does.",
    )
    parser.add_argument("--version", action="version", version=f"pikit {__version__}")
    sub = _Commands(parser.add_subparsers(metavar="COMMAND", parser_class=_CommandParser), wanted)

    p = sub.add_parser("context", help="what the model sees at a leaf: messages, sources, token figures")
    _session_arg(p)
    p.add_argument("--leaf", action="append", metavar="ID", help="entry id (or unique prefix); repeatable; "
                   "default: the file's last entry")
    p.add_argument("--count", action="store_true", help="also count real tokens with tiktoken (plain output)")
    _long_output_args(p, "messages")
    _json_arg(p)
    p.set_defaults(run=_lazy("context:run"))

    p = sub.add_parser("diff", help="what changes in the context between two leaves, or across a compaction")
    _session_arg(p)
    p.add_argument("a", metavar="A", nargs="?", help="the first leaf: an entry id (or unique prefix)")
    p.add_argument("b", metavar="B", nargs="?", help="the second leaf")
    p.add_argument("--compaction", metavar="ID", help="instead of A and B: the context before this compaction "
                   "(at its parent) against the context it leaves")
    p.add_argument("--all", action="store_true", help="list every unchanged message (by default long runs of "
                   "them are folded)")
    _pager_arg(p)
    _json_arg(p)
    p.set_defaults(run=_lazy("diff:run"))

    p = sub.add_parser("show", help="one entry in full: as stored, and the messages the model sees from it")
    _session_arg(p)
    p.add_argument("id", metavar="ID", help="the entry: an id or a unique prefix")
    p.add_argument("--leaf", metavar="ID", help="the leaf whose context to look in (default: the last entry)")
    _pager_arg(p)
    _json_arg(p)
    p.set_defaults(run=_lazy("show:run"))

    p = sub.add_parser("tree", help="the entry tree, like Pi's /tree")
    _session_arg(p)
    p.add_argument("--leaf", metavar="ID", help="mark this entry as the active leaf (default: the last entry)")
    p.add_argument("--filter", default="default", choices=["default", "no-tools", "user-only", "labeled-only", "all"],
                   help="which entries to show (Pi's filter modes)")
    p.add_argument("--search", default="", metavar="TEXT", help="only entries whose text contains every word")
    _long_output_args(p, "rows")
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

    p = sub.add_parser("redact", help="write a copy of a session with its secrets replaced by placeholders")
    p.add_argument("file", metavar="FILE", help="a Pi session file (.jsonl)")
    p.add_argument("--strict", action="store_true", help="fail on the first damaged line instead of skipping it")
    _progress_arg(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the new file (must not exist)")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists (never the source)")
    _redaction_args(p)
    p.add_argument("--json", action="store_true", help="print the report (counts, never values) as JSON")
    p.set_defaults(run=_lazy("redact:run"))

    p = sub.add_parser("export", help="a self-contained HTML page (tree, context, budget, compactions) or Markdown")
    _session_arg(p)
    p.add_argument("--leaf", metavar="ID", help="the leaf to show (default: the last entry)")
    p.add_argument("-o", "--output", required=True, metavar="PAGE", help="the file to write (must not exist)")
    p.add_argument("--force", action="store_true", help="replace PAGE if it exists (never the source)")
    p.add_argument("--format", choices=["html", "markdown"], default="html",
                   help="html (default): the page; markdown: the branch as the model saw it")
    p.add_argument("--tree", action="store_true",
                   help="with --format markdown: every branch of the tree, the abandoned ones marked")
    p.add_argument("--filter", default="default", choices=["default", "no-tools", "user-only", "labeled-only", "all"],
                   help="which entries the tree shows (Pi's filter modes)")
    p.add_argument("--model", metavar="PROVIDER/ID", help="the model for the budget (default: the leaf's)")
    p.add_argument("--context-window", type=_tokens, metavar="N", help="default: the model's window, as Pi resolves it")
    p.add_argument("--reserve-tokens", type=_tokens, metavar="N",
                   help="tokens reserved for the answer (default: the effective setting)")
    p.add_argument("--keep-recent-tokens", type=_tokens, metavar="N",
                   help="tokens of recent context a compaction keeps (default: the effective setting)")
    p.add_argument("--settings", metavar="FILE", help="a settings.json instead of Pi's global+project files")
    p.set_defaults(run=_lazy("export:run"))

    p = sub.add_parser("info", help="a summary of a session file and any damage found")
    _session_arg(p)
    _json_arg(p)
    p.set_defaults(run=_lazy("files:run_info"))

    p = sub.add_parser("models", help="the models Pi knows: window, output limit, prices, and where each comes from")
    p.add_argument("query", nargs="?", metavar="QUERY",
                   help="PROVIDER/ID for one model, or any part of provider/id to filter the list")
    p.add_argument("--agent-dir", metavar="DIR",
                   help="Pi's agent folder (default: $PI_CODING_AGENT_DIR, else ~/.pi/agent)")
    _json_arg(p)
    p.set_defaults(run=_lazy("models:run"))

    p = sub.add_parser("watch", help="follow a session while Pi writes it: a live gauge of the context")
    _session_arg(p, progress=False, redact=False)
    p.add_argument("--context-window", type=_window, metavar="N",
                   help="the context window in tokens (default: the leaf's model's, as Pi resolves it; "
                        "unknown without it for a model no source knows)")
    p.add_argument("--reserve-tokens", type=_tokens, metavar="N",
                   help="tokens reserved for the answer (default: the effective setting)")
    p.add_argument("--settings", metavar="FILE", help="a settings.json instead of Pi's global+project files")
    p.add_argument("--idle-exit", type=_idle, metavar="SECONDS",
                   help="end after this long without a change (at most 86,400; exit status 1 if the file never "
                        "appeared)")
    p.add_argument("--poll", type=_poll, metavar="SECONDS",
                   help="poll the file at this interval (0.01 to 86,400) instead of using file-system notifications")
    p.add_argument("--json", action="store_true", help="one JSON object per change, one per line")
    p.set_defaults(run=_lazy("watch:run"))

    _add_compaction_commands(sub)
    _add_corpus_commands(sub)
    return parser, sub.found


def _source_args(p: argparse.ArgumentParser, index_note: str = "") -> None:
    """DIR, --agent-dir and --index: the sessions a corpus command reads, and its index."""
    p.add_argument("dir", metavar="DIR", nargs="?", default=None,
                   help="a sessions directory, a glob or a file (default: Pi's, $PI_CODING_AGENT_DIR/sessions "
                        "or ~/.pi/agent/sessions)")
    p.add_argument("--agent-dir", metavar="DIR", action="append", dest="agent_dir",
                   help="instead of DIR: an agent directory of Pi's layout (sessions in DIR/sessions/), or a store "
                        "by name: pi, omp (oh-my-pi, ~/.omp/agent), openclaw (every agent in ~/.openclaw/agents); "
                        "repeat it for several")
    p.add_argument("--index", metavar="PATH", help="the DuckDB index file: a new path or an index pikit made "
                   f"(default: one per directory in the user's cache folder){index_note}")


def _corpus_args(p: argparse.ArgumentParser) -> None:
    _source_args(p)
    p.add_argument("--engine", choices=["local", "dask"], default="local",
                   help="scan here (default) or on a Dask cluster")
    p.add_argument("--scheduler", metavar="ADDRESS|local", help="with --engine dask: a scheduler address "
                   "(tcp://host:8786, or tls://host:8786 with Dask's TLS settings) or 'local' for a two-worker "
                   "cluster on this machine")
    _progress_arg(p)
    _json_arg(p)


def _add_corpus_commands(sub: _Commands) -> None:
    p = sub.add_parser("sessions", help="every session of a directory, newest first (indexed, incremental)")
    _corpus_args(p)
    p.add_argument("--search", metavar="WORDS", help="only sessions whose user and assistant message text holds "
                   "every word (any case; not thinking, tool calls or tool output; as SessionBrowser searches)")
    p.add_argument("--sort", metavar="COLUMN[:asc|:desc]",
                   help="order by a column of the sessions table (numbers and dates largest first, text A to Z; "
                        ":asc or :desc to choose; default: started:desc)")
    p.add_argument("--limit", type=_count, metavar="N", help="only the first N sessions (after --sort)")
    p.set_defaults(run=_lazy("corpus:run_sessions"))

    p = sub.add_parser("search", help="the entries whose text holds every word (or matches --regex): where each is, "
                       "with a snippet")
    _corpus_args(p)
    p.add_argument("query", metavar="QUERY", help="words (each in the entry's text, any case) or, with --regex, a "
                   "regular expression")
    p.add_argument("--in", dest="kinds", metavar="KIND[,KIND]", help="which texts: user, assistant, thinking, tool "
                   "(a tool result's first 500 characters), summary (compactions, branch summaries); default: all")
    p.add_argument("--regex", action="store_true", help="QUERY is a regular expression (RE2, as Python also reads "
                   "it; case-sensitive unless it starts with (?i))")
    p.add_argument("--limit", type=_count, default=50, metavar="N", help="at most N hits (default 50)")
    p.add_argument("--offset", type=_count, default=0, metavar="N", help="skip the first N hits (the next page)")
    p.set_defaults(run=_lazy("search:run"))

    p = sub.add_parser("mcp", help="a read-only MCP server over stdio: sessions, search, contexts, compactions, usage "
                       "for an agent or any MCP client")
    _source_args(p)
    p.add_argument("--redact", action="store_true",
                   help="replace secrets by placeholders in everything the server returns (as `pikit redact`)")
    _redaction_args(p, implies=" (implies --redact)")
    p.set_defaults(run=_lazy("mcp:run"), engine="local", scheduler=None, no_progress=True, json=True)

    p = sub.add_parser("usage", help="tokens and cost by day, month, session, model or project")
    _corpus_args(p)
    p.add_argument("--by", metavar="KEY[,KEY]", default="day",
                   help="how to group: day, week (its Monday's date), month, session, model or project (default: "
                        "day); several, comma-separated (day,model), give a row per combination")
    p.add_argument("--since", metavar="DATE", help="from this date on (YYYY-MM-DD or YYYYMMDD)")
    p.add_argument("--last", type=_count, metavar="N", help="the last N days, today included (instead of --since)")
    p.add_argument("--csv", action="store_true", help="the rows as CSV (a header line, the JSON keys as columns)")
    p.add_argument("--until", metavar="DATE", help="up to this date (inclusive)")
    p.add_argument("--timezone", metavar="TZ", help="time zone of days and months (default: the machine's)")
    p.add_argument("--split", choices=["branch"], help="split usage between active and abandoned branches")
    p.set_defaults(run=_lazy("corpus:run_usage"))

    p = sub.add_parser("export-corpus", help="a corpus as data sets (its index tables as Parquet, its sessions' "
                       "active branches as ATIF trajectories) or as a static site to browse")
    _source_args(p, "; only read by the export")
    p.add_argument("--parquet", metavar="OUT", help="write each index table as OUT/TABLE.parquet")
    p.add_argument("--atif", metavar="OUT", help="write each session's active branch as an ATIF trajectory, "
                   "OUT/SESSION.json")
    p.add_argument("--site", metavar="OUT", help="write a static site that opens in any browser: OUT/index.html "
                   "lists the sessions (search, sorting), a page per session, usage by day and by model; a re-run "
                   "rewrites only the pages of sessions that changed")
    p.add_argument("--force", action="store_true", help="write into an OUT that is not empty, replacing files of "
                   "the same names (not --site: it writes only into a new or empty folder or a site it wrote)")
    _progress_arg(p)
    p.add_argument("--redact", action="store_true",
                   help="replace secrets by placeholders in every table value, trajectory and site page (as "
                   "`pikit redact`)")
    _redaction_args(p, implies=" (implies --redact)")
    p.set_defaults(run=_lazy("export_corpus:run"))

    p = sub.add_parser("problems", help="what the corpus index could not read: damaged lines, non-sessions, …")
    _corpus_args(p)
    p.set_defaults(run=_lazy("corpus:run_problems"))


def _probe_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--probes", metavar="PROVIDER/ID",
                   help="also probe each compaction with this model: questions about what it replaced, answered from "
                        "what it left and graded (anthropic/ID speaks Anthropic's protocol, any other provider "
                        "OpenAI's; the key from OPENAI_API_KEY or ANTHROPIC_API_KEY; default: no probes, no network)")
    p.add_argument("--judge", metavar="PROVIDER/ID",
                   help="judge each recorded compaction's facts with this model (does the context after it still "
                        "hold each?) instead of pikit's rules; a failed call keeps pikit's verdicts (default: no "
                        "judge, no network)")
    p.add_argument("--base-url", metavar="URL",
                   help="--probes, --judge: API base URL (OpenAI-compatible or Anthropic)")
    p.add_argument("--timeout", type=_timeout, default=120.0, metavar="S",
                   help="--probes, --judge: seconds per attempt (default 120)")
    p.add_argument("--retries", type=_retries, default=3, metavar="N",
                   help="--probes, --judge: extra attempts on 429/5xx/connection errors (default 3)")


def _summarizer_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--summarizer", choices=["offline", "openai", "anthropic"], default=None,
                   help="who writes the summary (default: offline, embedded, no network)")
    p.add_argument("--model", metavar="PROVIDER/ID", help="model for the settings overrides and the HTTP summarizers")
    p.add_argument("--base-url", metavar="URL", help="API base URL (OpenAI-compatible or Anthropic)")
    p.add_argument("--timeout", type=_timeout, default=120.0, metavar="S", help="seconds per attempt (default 120)")
    p.add_argument("--retries", type=_retries, default=3, metavar="N",
                   help="extra attempts on 429/5xx/connection errors (default 3)")
    p.add_argument("--instructions", metavar="TEXT", help="extra focus for the summary")
    p.add_argument("--settings", metavar="FILE", help="a settings.json to use instead of Pi's global+project files")
    p.add_argument("--dry-run", action="store_true", help="prepare only: no summary, nothing written")
    p.add_argument("-o", "--output", metavar="OUT", help="write a copy of FILE plus the new entry to OUT")
    p.add_argument("--in-place", action="store_true", help="append the new entry to FILE itself (fsync)")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists (never the source)")


_COMPACT_EPILOG = """\
the --dry-run table, one row per keepRecentTokens value:
  firstKept   the first entry kept verbatim (the cut point)
  split       yes when the cut falls inside a turn (a user message and the replies to it)
  summarize   messages the summary replaces (before the cut, after any previous summary)
  prefix      messages of the split turn before the cut: the turn's beginning, summarized
              separately and added to the summary so the kept half still makes sense
  kept≈       estimated tokens (Pi's chars/4 estimate) of what stays verbatim after the cut
  files       files read / modified in the summarized span (listed at the end of the summary)
"""


def _add_compaction_commands(sub: _Commands) -> None:
    p = sub.add_parser("compact", help="prepare (--dry-run) or run a compaction", epilog=_COMPACT_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _session_arg(p)
    p.add_argument("--leaf", action="append", metavar="ID", help="leaf to compact at (repeatable with --dry-run)")
    p.add_argument("--keep-recent-tokens", type=_token_list, metavar="N[,N...]",
                   help="tokens of recent context to keep; a comma-separated list sweeps (dry run)")
    p.add_argument("--reserve-tokens", type=_tokens, metavar="N", help="tokens reserved for the answer")
    p.add_argument("--allow-larger-summary", action="store_true",
                   help="write the compaction even when its summary is larger than what it replaces")
    _summarizer_args(p)
    _json_arg(p)
    p.set_defaults(run=_lazy("compact:run"))

    p = sub.add_parser("branch-summary", help="prepare (--dry-run) or write a summary of an abandoned branch")
    _session_arg(p)
    p.add_argument("--pair", action="append", required=True, metavar="FROM:TO",
                   help="leave leaf FROM for entry TO (repeatable with --dry-run)")
    p.add_argument("--budget", type=_token_list, metavar="N[,N...]",
                   help="token budget for the gathered messages (0 = no limit); a list sweeps (dry run)")
    _summarizer_args(p)
    _json_arg(p)
    p.set_defaults(run=_lazy("branch:run"))

    p = sub.add_parser("simulate", help="replay a branch under other settings: where would Pi compact?")
    _session_arg(p)
    p.add_argument("--leaf", metavar="ID", help="the branch to replay (default: the last entry)")
    p.add_argument("--context-window", type=_token_list, required=True, metavar="N[,N...]",
                   help="context window(s) in tokens; a list sweeps")
    p.add_argument("--reserve-tokens", type=_token_list, metavar="N[,N...]", help="default: the effective setting")
    p.add_argument("--keep-recent-tokens", type=_token_list, metavar="N[,N...]", help="default: the effective setting")
    p.add_argument("--model", metavar="PROVIDER/ID", help="resolve settings overrides for this model")
    p.add_argument("--settings", metavar="FILE", help="a settings.json instead of Pi's global+project files")
    p.add_argument("--keep-existing", action="store_true", help="keep the compactions already in the file")
    p.add_argument("--sizes", choices=["usage", "estimate"], default="usage",
                   help="usage (default): start from the recorded usage, as `pikit context` does, and change it by "
                        "the estimate of what simulated compactions change; estimate: Pi's estimate alone")
    _strategy_args(p, "replay these compaction strategies side by side")
    p.add_argument("--summarizer", choices=["offline", "openai", "anthropic"], default=None,
                   help="who writes the simulated summaries (default: offline, embedded, no network; with an HTTP "
                        "summarizer --model names the model, one call per summary)")
    p.add_argument("--base-url", metavar="URL", help="API base URL of the HTTP summarizer (OpenAI-compatible or "
                   "Anthropic)")
    p.add_argument("--timeout", type=_timeout, default=120.0, metavar="S", help="seconds per attempt (default 120)")
    p.add_argument("--retries", type=_retries, default=3, metavar="N",
                   help="extra attempts on 429/5xx/connection errors (default 3)")
    _json_arg(p)
    p.set_defaults(run=_lazy("simulate:run"))

    p = sub.add_parser("evaluate", help="what each compaction kept of the span it replaced, and what it lost")
    _session_arg(p)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--compaction", metavar="ID", action="append",
                       help="the compaction entry to evaluate (repeat for several; default: every compaction on the "
                            "branch at the last entry)")
    which.add_argument("--all", action="store_true", help="every compaction in the file, on any branch")
    which.add_argument("--strategy", metavar="NAME[,NAME...]",
                       help="instead: the compactions these strategies simulate on the branch (as `pikit simulate "
                            "--strategy`): pi, pi-percent, none, codex-inline, mask-observations, mask-at-threshold, "
                            "truncate")
    p.add_argument("--leaf", metavar="ID", help="with --strategy: the branch to replay (default: the last entry)")
    p.add_argument("--context-window", type=_window, metavar="N",
                   help="with --strategy: the context window (default: the model's, as Pi resolves it)")
    p.add_argument("--reserve-tokens", type=_tokens, metavar="N", help="with --strategy: default: the effective "
                   "setting")
    p.add_argument("--keep-recent-tokens", type=_tokens, metavar="N",
                   help="with --strategy: default: the effective setting")
    p.add_argument("--model", metavar="PROVIDER/ID", help="with --strategy: the model whose window and settings "
                   "overrides apply (default: the branch's)")
    p.add_argument("--settings", metavar="FILE", help="with --strategy: a settings.json instead of Pi's global+project "
                   "files")
    _strategy_args(p, None)
    p.set_defaults(keep_existing=False, sizes="usage", summarizer=None)
    _probe_args(p)
    _json_arg(p)
    p.set_defaults(run=_lazy("evaluate:run"))

    p = sub.add_parser("settings", help="the effective compaction settings (and model overrides)")
    p.add_argument("--model", metavar="PROVIDER/ID", help="resolve compaction.modelOverrides for this exact model")
    p.add_argument("--settings", metavar="FILE", help="a settings.json instead of Pi's global+project files")
    _json_arg(p)
    p.set_defaults(run=_lazy("settings:run"))

    p = sub.add_parser("demo", help="the bundled sample session: tree and context, then the explorer notebook")
    p.add_argument("--headless", action="store_true",
                   help="no JupyterLab: run the notebooks top to bottom and report (for machines without a browser)")
    p.add_argument("--port", type=_port, default=None,
                   help="JupyterLab port (default: 8888, or the next free one; a port given here is used or refused)")
    p.set_defaults(run=_lazy("demo:run"))
