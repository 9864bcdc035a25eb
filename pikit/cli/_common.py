"""Shared pieces of the commands: loading with progress, output, formatting."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .. import jsjson
from .._formatting import fmt_int, plural
from .._progress import Line, Progress
from ..errors import WriteError
from ._terminal import trusted

if TYPE_CHECKING:
    from .._redaction.redactor import Redactor
    from .._redaction.session import RedactionReport
    from .._session import Session
    from ..compaction._settings import Settings


@contextlib.contextmanager
def terminal_progress(args: Any) -> Iterator[Progress]:
    """Progress of the command's long work (loading, scanning, replaying; ``pikit._progress``): a
    line on stderr when stderr is a terminal, unless ``--no-progress``; nothing otherwise.

    The line is cleared when the block ends, however it ends.
    """
    if getattr(args, "no_progress", False) or not sys.stderr.isatty():
        yield False
        return
    with Line(trusted(sys.stderr)) as line:
        yield line


def open_session(args: Any, *, note_v1: bool = False, info_hint: bool = True) -> Session:
    """Load the command's FILE, with progress on an interactive terminal and a damage warning
    (pointing to ``pikit info``, unless ``info_hint`` is false: ``info`` itself lists the damage;
    and, with ``note_v1`` and not for JSON output, a note that a version-1 file's ids are pikit's)."""
    from .._session import load

    path = args.file
    if redacting(args) and getattr(args, "dry_run", None) is False:  # compact, branch-summary: would write
        raise WriteError("--redact applies to what is shown (--dry-run); to write, first make a redacted copy with "
                         "`pikit redact FILE -o OUT` and run on OUT")
    redactor, numbering, shown = None, None, path
    if redacting(args):
        from .._redaction.redactor import Placeholders

        output = getattr(args, "output", None)
        if output is not None and getattr(args, "dry_run", None) is None:  # export, fork, migrate: a file written
            from .._format.write import check_target

            check_target(output, source=path, overwrite=getattr(args, "force", False))  # (the copy's path is shown)
        redactor, numbering = redactor_from(args), Placeholders()
        shown = redactor.redact_text(path, numbering)  # the name shown in notes, numbered as in the copy
    with terminal_progress(args) as progress:
        session = load(path, strict=getattr(args, "strict", False), progress=progress)
    damaged = session.report.damaged_lines
    if damaged:
        lines = ", ".join(str(p.line) for p in damaged[:5]) + (" ..." if len(damaged) > 5 else "")
        hint = f" (see `pikit info {shlex.quote(shown)}`)" if info_hint else ""
        print(f"pikit: warning: {shown}: skipped {plural(len(damaged), 'damaged line')}: {lines}{hint}",
              file=sys.stderr)
    if note_v1 and session.report.migrated_from == 1 and not getattr(args, "json", False):
        print(f"pikit: note: {V1_IDS_NOTE.format(path=shown)}", file=sys.stderr)
    if redactor is not None:
        from .._redaction.session import redact

        session, report = redact(session, redactor, placeholders=numbering)
        print(f"pikit: note: {report_line(report)}", file=sys.stderr)
    return session


def redacting(args: Any) -> bool:
    """Whether the command runs on a redacted session: ``--redact``, or any of its options."""
    return any(getattr(args, name, False) for name in ("redact", "redact_pattern", "redact_allow",
                                                        "redact_allow_pattern", "redact_emails", "keep_images"))


def redactor_from(args: Any) -> Redactor:
    """The :class:`~pikit.Redactor` the redaction flags describe."""
    import re

    from .._redaction.redactor import Redactor

    allow: list[str | re.Pattern[str]] = [*args.redact_allow, *(re.compile(p) for p in args.redact_allow_pattern)]
    return Redactor(patterns=args.redact_pattern, allow=allow, emails=args.redact_emails,
                    keep_images=args.keep_images)


def report_line(report: RedactionReport) -> str:
    """What a redaction replaced, in one line: counts per kind, never a value."""
    if not report.counts:
        return "redacted nothing: no secret found"
    ranked = sorted(report.counts.items(), key=lambda kv: (-kv[1], kv[0]))
    kinds = ", ".join(f"{kind} {fmt_int(n)}" for kind, n in ranked)
    where = plural(len(report.entries), "entry") + (" and the header" if report.header else "")
    return f"redacted {plural(report.total, 'string')} in {where}: {kinds}"


#: What ``info``, ``tree`` and ``context`` say about a version-1 file's entry ids.
V1_IDS_NOTE = ("{path} is a version-1 session: the file stores no entry ids, so pikit derives them from each entry "
               "(the same in every run) and the ids shown are pikit's; `pikit migrate {path} -o OUT` writes a copy "
               "that keeps them")


def session_settings(args: Any, session: Session) -> Settings:
    """``--settings FILE``, or Pi's global settings merged with the project settings of the
    session's folder (when that folder exists on this machine)."""
    from ..compaction._settings import load_settings

    cwd = session.header.get("cwd")
    return load_settings(args.settings, cwd=cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None)


def print_json(value: Any) -> None:
    """Print JSON exactly as JavaScript's ``JSON.stringify`` would.

    Redirected output is byte for byte what Pi prints (no trailing newline); a terminal
    gets a newline so the prompt starts on its own line.
    """
    out = sys.stdout.buffer
    for piece in jsjson.iter_stringify_bytes(value):
        out.write(piece)
    if sys.stdout.isatty():
        out.write(b"\n")
    out.flush()


def width() -> int:
    """The terminal width (80 when not a terminal)."""
    return shutil.get_terminal_size((100, 24)).columns


def one_line(text: str, limit: int) -> str:
    """Collapse whitespace and cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"
