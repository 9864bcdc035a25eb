"""``pikit export-corpus``: a corpus as data sets (its index tables as Parquet, its sessions as ATIF) and as a
static site (a page per session, an index and usage pages)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from .._formatting import fmt_int, plural
from ..errors import PikitError
from ._common import redacting, redactor_from

if TYPE_CHECKING:
    from .._session import Session
    from ..corpus._corpus import Corpus


def run(args: argparse.Namespace) -> int:
    from ..corpus._export import check_folder, export_atif, export_parquet, parquet_files
    from ._corpus import _opened, _problems_note

    outs = {flag: out for flag, out in (("--parquet", args.parquet), ("--atif", args.atif), ("--site", args.site))
            if out is not None}
    if not outs:
        raise PikitError("give --parquet OUT, --atif OUT, --site OUT or several: what to export")
    if len({os.path.abspath(out) for out in outs.values()}) < len(outs):
        raise PikitError(f"{', '.join(outs)} need folders of their own")
    for out, files in ((args.parquet, parquet_files()), (args.atif, [])):
        if out is not None:
            check_folder(out, overwrite=args.force, files=files)  # before the scan: a mistake costs nothing
    if args.site is not None:
        from ..export._site import check_site

        check_site(args.site)
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
            _site(args, corpus)
    return 0


def _site(args: argparse.Namespace, corpus: Corpus) -> None:
    """``--site OUT``: the site written (incrementally), then what it wrote in a few lines."""
    from ..compaction._settings import load_settings
    from ..export._page import PageSettings, page_settings
    from ..export._site import write_site

    def settings_of(session: Session) -> PageSettings:
        cwd = session.header.get("cwd")
        settings = load_settings(None, cwd=cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None)
        return page_settings(session, session.leaf_id, settings)

    done = write_site(corpus, args.site, settings_of, redactor=redactor_from(args) if redacting(args) else None)
    _redaction_note(done.redacted, redacting(args))
    pages = sum(1 for name in done.written if name.startswith("sessions/"))
    print(f"wrote the site of {plural(done.sessions, 'session')} to {done.folder}: {plural(pages, 'session page')} "
          f"written, {fmt_int(done.kept)} unchanged, {fmt_int(len(done.removed))} removed; the index and usage pages "
          f"rewritten. Open {os.path.join(done.folder, 'index.html')} in any browser.")
    for path, why in done.skipped.items():
        print(f"  skipped {path}: {why}")


def _redaction_note(counts: dict[str, int], redacted: bool) -> None:
    """One line on stderr: what the export's redaction replaced (counts per kind, never a value)."""
    if not redacted:
        return
    if not counts:
        print("pikit: note: redacted nothing: no secret found", file=sys.stderr)
        return
    kinds = ", ".join(f"{kind} {fmt_int(n)}" for kind, n in sorted(counts.items()))
    print(f"pikit: note: redacted {plural(sum(counts.values()), 'string')}: {kinds}", file=sys.stderr)
