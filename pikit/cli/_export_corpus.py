"""``pikit export-corpus``: a corpus as data sets, its index tables as Parquet and its sessions as ATIF."""

from __future__ import annotations

import argparse
import os
import sys

from .._formatting import fmt_int, plural
from ..errors import PikitError
from ._common import redacting, redactor_from


def run(args: argparse.Namespace) -> int:
    from ..corpus._export import check_folder, export_atif, export_parquet, parquet_files
    from ._corpus import _opened, _problems_note

    if args.parquet is None and args.atif is None and args.site is None:
        raise PikitError("give --parquet OUT, --atif OUT, --site OUT or several: what to export")
    outs = [os.path.abspath(out) for out in (args.parquet, args.atif, args.site) if out is not None]
    if len(set(outs)) < len(outs):
        raise PikitError("--parquet, --atif and --site need folders of their own")
    for out, files in ((args.parquet, parquet_files()), (args.atif, [])):
        if out is not None:
            check_folder(out, overwrite=args.force, files=files)  # before the scan: a mistake costs nothing
    redactor, placeholders = None, None
    if redacting(args):
        from .._redaction.redactor import Placeholders

        redactor, placeholders = redactor_from(args), Placeholders()  # one numbering for both exports
    with _opened(args, None, note_problems=False) as corpus:
        if not corpus.rows("SELECT count(*) FROM sessions")[0][0]:
            where = args.dir or ", ".join(args.agent_dir or ()) or "Pi's sessions directory"
            raise PikitError(f"{where}: holds no session files; nothing to export")
        _problems_note(args, corpus)
        if args.parquet is not None:
            done = export_parquet(corpus, args.parquet, overwrite=args.force, redactor=redactor,
                                  placeholders=placeholders)
            _redaction_note(done.redacted, redactor is not None)
            print(f"wrote {plural(len(done.files), 'table')} to {done.folder} as Parquet:")
            for path, rows in done.files.items():
                print(f"  {os.path.basename(path):<22} {fmt_int(rows):>9} rows")
        if args.atif is not None:
            done = export_atif(corpus, args.atif, overwrite=args.force, redactor=redactor, placeholders=placeholders)
            _redaction_note(done.redacted, redactor is not None)
            steps = sum(done.files.values())
            print(f"wrote {plural(len(done.files), 'ATIF trajectory', 'ATIF trajectories')} to {done.folder} "
                  f"({plural(steps, 'step')})")
            for path, why in done.skipped.items():
                print(f"  skipped {path}: {why}")
        if args.site is not None:
            _site(corpus, args, redactor, placeholders)
    return 0


def _site(corpus: object, args: argparse.Namespace, redactor: object, placeholders: object) -> None:
    from ..export._site import export_site

    fingerprint = repr((args.redact_pattern, args.redact_allow, args.redact_allow_pattern, args.redact_emails,
                        args.keep_images)) if redactor is not None else ""
    done = export_site(corpus, args.site, redactor=redactor, placeholders=placeholders,  # type: ignore[arg-type]
                       fingerprint=fingerprint)
    _redaction_note(done.redacted, redactor is not None)
    pages = [p for p in done.written if os.path.basename(os.path.dirname(p)) == "sessions"]
    print(f"wrote the site to {done.folder}: {plural(len(pages), 'session page')} written, "
          f"{len(done.unchanged)} file(s) unchanged{f', {len(done.removed)} removed' if done.removed else ''}; "
          f"open {os.path.join(done.folder, 'index.html')} in any browser")


def _redaction_note(counts: dict[str, int], redacted: bool) -> None:
    """One line on stderr: what the export's redaction replaced (counts per kind, never a value)."""
    if not redacted:
        return
    if not counts:
        print("pikit: note: redacted nothing: no secret found", file=sys.stderr)
        return
    kinds = ", ".join(f"{kind} {fmt_int(n)}" for kind, n in sorted(counts.items()))
    print(f"pikit: note: redacted {plural(sum(counts.values()), 'string')}: {kinds}", file=sys.stderr)
