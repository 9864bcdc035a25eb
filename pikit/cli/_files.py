"""``pikit fork``, ``pikit migrate`` and ``pikit info``: new files from a session, and its health."""

from __future__ import annotations

import os
import sys
from argparse import Namespace

from .._context.describe import leaf_text
from .._formatting import fmt_int, plural
from ._common import V1_IDS_NOTE, open_session, print_json
from ._json import tree as tree_json


def run_fork(args: Namespace) -> int:
    from .._tree import fork  # (here: pikit info writes nothing)

    session = open_session(args)
    leaf = session.resolve_leaf(args.leaf)
    out = fork.fork(session, leaf, args.output, overwrite=args.force)
    print(f"wrote {out}: the branch at {leaf} ({plural(len(session.branch(leaf)), 'entry')})", file=sys.stderr)
    return 0


def run_migrate(args: Namespace) -> int:
    from .._format import write
    from .._tree import fork

    session = open_session(args)
    out = write.write_new(args.output, fork.migrated_lines(session), source=session.path, overwrite=args.force)
    was = session.report.migrated_from
    what = f"migrated from version {was}" if was is not None else "already current; copied"
    print(f"wrote {out}: {plural(len(session), 'entry')}, {what}", file=sys.stderr)
    return 0


def run_info(args: Namespace) -> int:
    session = open_session(args, info_hint=False)  # the damage and a version-1 file's ids: listed below
    report = session.report
    if args.json:
        print_json(tree_json.info(session))
        return 0
    print(f"{session.path}  ({plural(report.bytes, 'byte')}, {plural(report.lines, 'line')})")
    print(f"session {session.id}" + (f" “{session.name}”" if session.name else "")
          + f", cwd {session.header.get('cwd')}")
    if report.migrated_from is not None:
        print(f"format version {report.migrated_from}, migrated to 3 in memory (the file is unchanged)")
        if report.migrated_from == 1:
            print(V1_IDS_NOTE.format(path=session.path))
    print(f"{plural(len(session), 'entry')}, {plural(len(session.roots), 'root')}, "
          f"{plural(len(session.labels), 'label')}, leaf {leaf_text(session.leaf_id)}")
    for key, n in sorted(tree_json.entry_types(session).items(), key=lambda kv: -kv[1]):
        print(f"  {fmt_int(n):>7}  {key}")
    if report.problems:
        print(f"{plural(len(report.problems), 'problem')}: {report.summary()}")
        for p in report.problems[:50]:
            print(f"  {p}")
        if len(report.problems) > 50:
            print(f"  … {fmt_int(len(report.problems) - 50)} more (use --json for all)")
    else:
        print("no problems found")
    if os.path.getsize(args.file) != report.bytes:
        print("note: the file changed while it was being read", file=sys.stderr)
    return 0
