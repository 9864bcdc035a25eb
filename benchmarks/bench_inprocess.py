#!/usr/bin/env python3
"""In-process benchmarks of the pikit core, with the specification's targets.

    python benchmarks/bench_inprocess.py                # all of them
    python benchmarks/bench_inprocess.py --only moves   # moves | sweep | load | phases

* moves:  a 100k-entry session (generated, with compactions and branches); for many random
          entries (seeded): ``session.navigate(id)`` (Pi's /tree selection) then
          ``session.context()`` and its ``.tokens``. Target: median < 20 ms per move.
* sweep:  a 10k-entry linear branch (generated without compaction); one projection, then
          ``prepare_compaction(branch, k, projection=proj)`` for 50 keepRecentTokens values.
          Target: projection + 50 preparations < 1 s.
* load:   ``pikit.load(FILE)`` on the real 2.4 MB session and the generated 100 MB ones;
          seconds per MB (median of a few loads).
* phases: where the time of ``pikit context FILE --json`` goes (load, projection,
          estimates and context size, JSON encoding) on the same files.

Timings are wall clock (``time.perf_counter``) medians; the garbage collector is left on,
as in real use. Missing generated sessions are made with ``make_session.py``.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"

def _pikit_root(argv: list[str]) -> Path:
    """``--pikit-root DIR`` (read before pikit is imported): measure another checkout's pikit."""
    for i, arg in enumerate(argv):
        if arg == "--pikit-root" and i + 1 < len(argv):
            return Path(argv[i + 1]).resolve()
        if arg.startswith("--pikit-root="):
            return Path(arg.split("=", 1)[1]).resolve()
    return ROOT


sys.path.insert(0, str(_pikit_root(sys.argv[1:])))

import pikit  # noqa: E402
from pikit import jsjson  # noqa: E402
from pikit._context.projection import project_path  # noqa: E402
from pikit.compaction._preparation import prepare_compaction  # noqa: E402

REAL = Path("/work/shared/sessions/before-compaction.jsonl")
SESSIONS = {
    "moves": ("session-100000e-s1.jsonl", ["--entries", "100000"]),
    "sweep": ("session-10000e-nocompact-s1.jsonl", ["--entries", "10000", "--no-compaction"]),
    "100mb": ("session-100mb-s1.jsonl", ["--mb", "100"]),
    "100mb-flat": ("session-100mb-nocompact-s1.jsonl", ["--mb", "100", "--no-compaction"]),
}


def session_file(key: str) -> Path:
    name, gen_args = SESSIONS[key]
    path = DATA / name
    if not path.exists():
        print(f"generating {path} ...", file=sys.stderr)
        subprocess.run([sys.executable, str(HERE / "make_session.py"), *gen_args, "-o", str(path)], check=True)
    return path


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def bench_moves(args: argparse.Namespace) -> list[dict[str, Any]]:
    path = session_file("moves")
    t0 = time.perf_counter()
    session = pikit.load(path)
    load_s = time.perf_counter() - t0
    rng = random.Random(args.seed)
    ids = [e.id for e in session.entries]
    targets = rng.sample(ids, args.moves)
    times = []
    depths = []
    sizes = []
    for target in targets:
        t0 = time.perf_counter()
        session.navigate(target)
        ctx = session.context()
        tokens = ctx.tokens
        times.append(time.perf_counter() - t0)
        depths.append(len(ctx.path))
        sizes.append(len(ctx.messages))
        assert tokens >= 0
    times.sort()
    med = statistics.median(times)
    p90 = times[int(len(times) * 0.9)]
    detail = (f"{len(session.entries):,} entries ({path.stat().st_size / 1e6:.0f} MB, loaded in {load_s:.1f} s); "
              f"{args.moves} random targets: median path {statistics.median(depths):,.0f} entries, "
              f"median context {statistics.median(sizes):,.0f} messages; p90 {ms(p90)}, max {ms(times[-1])}")
    return [{"what": "move the leaf + re-project (navigate, context, .tokens), 100k entries",
             "value": ms(med) + " median", "target": "< 20 ms", "ok": med < 0.020, "detail": detail}]


def bench_sweep(args: argparse.Namespace) -> list[dict[str, Any]]:
    path = session_file("sweep")
    session = pikit.load(path)
    branch = session.branch()
    totals = []
    projections = []
    prepared = 0
    for _ in range(args.repeat):
        gc.collect()
        t0 = time.perf_counter()
        proj = project_path(branch)
        total_tokens = proj.tokens
        t1 = time.perf_counter()
        values = [max(1, round(total_tokens * (i + 1) / 51)) for i in range(50)]
        prepared = 0
        for k in values:
            prep = prepare_compaction(branch, k, projection=proj)
            prepared += prep is not None
        t2 = time.perf_counter()
        projections.append(t1 - t0)
        totals.append(t2 - t0)
    total = statistics.median(totals)
    detail = (f"branch of {len(branch):,} entries, {len(proj.messages):,} messages, {total_tokens:,} tokens; "
              f"keepRecentTokens from {values[0]:,} to {values[-1]:,}; "
              f"projection {ms(statistics.median(projections))}, "
              f"50 preparations {ms(total - statistics.median(projections))} ({prepared} non-empty); "
              f"median of {args.repeat}")
    return [{"what": "sweep of 50 keepRecentTokens values, 10k-entry branch (1 projection + 50 prepare_compaction)",
             "value": ms(total), "target": "< 1 s", "ok": total < 1.0, "detail": detail}]


def _files() -> list[Path]:
    return [REAL, session_file("100mb"), session_file("100mb-flat")]


def bench_load(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for path in _files():
        mb = path.stat().st_size / 1e6
        times = []
        for _ in range(args.repeat):
            gc.collect()
            t0 = time.perf_counter()
            session = pikit.load(path)
            times.append(time.perf_counter() - t0)
            n = len(session.entries)
            del session
        med = statistics.median(times)
        rows.append({"what": f"load {path.name}", "value": f"{med / mb * 1000:.1f} ms/MB",
                     "target": "", "ok": None,
                     "detail": f"{mb:.1f} MB, {n:,} entries: {med:.3f} s ({mb / med:.0f} MB/s), "
                               f"median of {args.repeat}"})
    return rows


def bench_phases(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for path in _files():
        runs: dict[str, list[float]] = {}
        for _ in range(args.repeat):
            gc.collect()
            marks = [time.perf_counter()]
            session = pikit.load(path)
            marks.append(time.perf_counter())
            ctx = session.context()
            messages = ctx.messages
            marks.append(time.perf_counter())
            estimates = ctx.estimates
            tokens = ctx.tokens
            marks.append(time.perf_counter())
            out = {"leaves": {ctx.leaf_id: {"path": [e.id for e in ctx.path], "model": ctx.model,
                                            "thinkingLevel": ctx.thinking_level, "messages": messages,
                                            "sources": ctx.sources, "estimates": estimates, "tokens": tokens}}}
            data = jsjson.stringify_bytes(out)
            marks.append(time.perf_counter())
            names = ("load", "project", "estimates+tokens", "JSON encode")
            for name, a, b in zip(names, marks, marks[1:], strict=False):
                runs.setdefault(name, []).append(b - a)
            runs.setdefault("total", []).append(marks[-1] - marks[0])
            size = len(data)
            del session, ctx, messages, out, data
        parts = ", ".join(f"{k} {statistics.median(v):.3f} s" for k, v in runs.items())
        total = statistics.median(runs["total"])
        rows.append({"what": f"`context --json` phases, {path.name}", "value": f"{total:.3f} s",
                     "target": "", "ok": None, "detail": f"{parts}; output {size / 1e6:.1f} MB"})
    return rows


BENCHES = {"moves": bench_moves, "sweep": bench_sweep, "load": bench_load, "phases": bench_phases}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", choices=list(BENCHES), action="append", help="run only these (repeatable)")
    p.add_argument("--moves", type=int, default=300, help="random leaf moves (default 300)")
    p.add_argument("--repeat", type=int, default=3, help="repetitions of the sweep, loads and phases (default 3)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--pikit-root", type=Path, default=ROOT,
                   help="the checkout whose pikit is measured (default: this one)")
    args = p.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for name in args.only or list(BENCHES):
        print(f"running {name} ...", file=sys.stderr)
        got = BENCHES[name](args)
        for r in got:
            print(f"  {r['what']}: {r['value']}  ({r['detail']})", file=sys.stderr)
        rows += got
    return print_results("pikit in process", rows)


def print_results(what: str, rows: list[dict[str, Any]]) -> int:
    """The machine line and the results table (Markdown); the exit status: 1 when a target failed."""
    print(f"{what} from {Path(pikit.__file__).parent.parent} ({datetime.now(UTC):%Y-%m-%d}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f})\n")
    print("| measure | result | target | pass | details |")
    print("|---|---:|---|---|---|")
    for r in rows:
        ok = "" if r["ok"] is None else ("pass" if r["ok"] else "FAIL")
        print(f"| {r['what']} | {r['value']} | {r['target']} | {ok} | {r['detail']} |")
    return 0 if all(r["ok"] is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
