"""``pikit redact``: a copy of a session with its secrets replaced by placeholders."""

from __future__ import annotations

import sys
from argparse import Namespace

from .._format.write import check_target, write_new
from ._common import print_json, redactor_from, report_line, terminal_progress


def run(args: Namespace) -> int:
    from .._redaction.session import redact, redacted_lines
    from .._session import load
    from ._json import redact as redact_json

    check_target(args.output, source=args.file, overwrite=args.force)  # before the work
    redactor = redactor_from(args)
    with terminal_progress(args) as progress:
        session = load(args.file, strict=args.strict, progress=progress)
    copy, report = redact(session, redactor)
    damaged = session.report.damaged_lines
    if damaged:  # (named by the copy's path: a token in the file name is not printed)
        print(f"pikit: warning: {copy.path}: {len(damaged):,} damaged line(s) left out of the copy", file=sys.stderr)
    out = write_new(args.output, redacted_lines(copy), source=session.path, overwrite=args.force)
    print(f"wrote {out}: {report_line(report)}", file=sys.stderr)
    if args.json:
        print_json(redact_json.report(report, copy.path or args.file, out))
    return 0
