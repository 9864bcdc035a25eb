#!/usr/bin/env python3
"""Whole-process benchmark: ``pikit context FILE --json`` against Pi's own code on the same file.

    python benchmarks/bench_context.py                       # the real session + two generated 100 MB ones
    python benchmarks/bench_context.py FILE... --runs 7 --piref /tmp/pikit-piref

For each file, in one run of this script: one warm-up of each side (its output is kept
and compared byte for byte), then RUNS timed runs alternating pikit, Pi, pikit, Pi, ...
Each run is one child process whose stdout goes to a file; the parent waits for it with
``os.wait4``, which returns that child's own resource usage: the peak RSS (``ru_maxrss``)
and CPU time are exact per run, not sampled. Wall time is measured around spawn and wait.
Medians are reported with pikit/Pi ratios and the targets of the specification
(time <= 0.5x Pi on 100 MB sessions, <= 1.0x on the real 2.4 MB one; peak memory <= 1.5x).

Pi's side is ``node /work/shared/conformance/pi_context.mjs PIREF FILE``: it loads the file
with Pi's session manager, projects the last entry and prints the same JSON. Pi writes no
trailing newline and pikit writes one; the comparison ignores that single final newline.
Missing generated sessions are made first with ``make_session.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
REAL = Path("/work/shared/sessions/before-compaction.jsonl")
PI_SCRIPT = Path("/work/shared/conformance/pi_context.mjs")
GENERATED = {
    "session-100mb-s1.jsonl": ["--mb", "100"],
    "session-100mb-nocompact-s1.jsonl": ["--mb", "100", "--no-compaction"],
}


def run_once(cmd: list[str], out_path: Path, env: dict[str, str] | None = None, cwd: Path = ROOT) -> dict[str, Any]:
    """Run ``cmd`` with stdout to ``out_path``; wall time, CPU time and peak RSS of that child alone."""
    with open(out_path, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, env=env, cwd=cwd)
        # wait4 reaps this very child and returns its rusage (not the sum over all children).
        stderr = b""
        if proc.stderr is not None:
            stderr = proc.stderr.read()
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.stderr is not None:
            proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed with status {proc.returncode}:\n{stderr.decode(errors='replace')}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "user": ru.ru_utime, "sys": ru.ru_stime,
            "rss_mb": ru.ru_maxrss / 1024}  # Linux reports KiB


def first_difference(a: bytes, b: bytes) -> str:
    """Where two outputs part, with a little context, and the JSON path when both parse."""
    n = min(len(a), len(b))
    i = next((k for k in range(0, n, 1 << 16) if a[k:k + (1 << 16)] != b[k:k + (1 << 16)]), None)
    where = n if i is None else i + next(k for k in range(1 << 16) if a[i + k:i + k + 1] != b[i + k:i + k + 1])
    text = f"first difference at byte {where} (pikit {len(a)} bytes, Pi {len(b)} bytes)\n" \
           f"  pikit: {a[max(0, where - 80):where + 80]!r}\n  pi:    {b[max(0, where - 80):where + 80]!r}"
    try:
        path = _json_diff_path(json.loads(a), json.loads(b), "$")
    except ValueError:
        path = None
    if path:
        text += f"\n  JSON path: {path}"
    return text


def _json_diff_path(x: Any, y: Any, path: str) -> str | None:
    stack = [(x, y, path)]
    while stack:
        x, y, path = stack.pop()
        if type(x) is not type(y):
            return f"{path} ({type(x).__name__} vs {type(y).__name__})"
        if isinstance(x, dict):
            if list(x) != list(y):
                return f"{path} (keys {list(x)[:8]} vs {list(y)[:8]})"
            stack.extend((x[k], y[k], f"{path}.{k}") for k in reversed(list(x)))
        elif isinstance(x, list):
            if len(x) != len(y):
                return f"{path} (length {len(x)} vs {len(y)})"
            stack.extend((x[k], y[k], f"{path}[{k}]") for k in reversed(range(len(x))))
        elif x != y:
            return f"{path} ({str(x)[:60]!r} vs {str(y)[:60]!r})"
    return None


def describe(path: Path) -> dict[str, Any]:
    size = path.stat().st_size
    with open(path, "rb") as f:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
    return {"file": str(path), "name": path.name, "mb": size / 1e6, "entries": max(0, lines - 1)}


def bench_file(path: Path, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    sides: dict[str, tuple[list[str], dict[str, str] | None, Path]] = {}
    for i, root in enumerate(args.roots):
        env = dict(os.environ)
        env["PYTHONPATH"] = str(root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        name = "pikit" if i == 0 else f"pikit@{i}"
        sides[name] = ([sys.executable, "-m", "pikit", "context", str(path), "--json"], env, root)
    sides["pi"] = (["node", str(args.pi_script), str(args.piref), str(path)], None, ROOT)
    info = describe(path)
    print(f"\n{info['name']}: {info['mb']:.1f} MB, {info['entries']} entries", file=sys.stderr)
    outputs = {}
    for side, (cmd, side_env, cwd) in sides.items():  # warm-up, output kept for the comparison
        out = tmp / f"{side}.json"
        r = run_once(cmd, out, side_env, cwd)
        data = out.read_bytes()
        outputs[side] = data[:-1] if data.endswith(b"\n") else data
        print(f"  warm-up {side:8} {r['wall']:7.3f} s  {r['rss_mb']:7.1f} MB", file=sys.stderr)
    identical: dict[str, bool] = {}
    diffs: dict[str, str | None] = {}
    for side in sides:
        if side == "pi":
            continue
        identical[side] = outputs[side] == outputs["pi"]
        diffs[side] = None if identical[side] else first_difference(outputs[side], outputs["pi"])
        if diffs[side]:
            print(f"  OUTPUT OF {side} DIFFERS: " + str(diffs[side]), file=sys.stderr)
    del outputs
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    for i in range(args.runs):
        for side, (cmd, side_env, cwd) in sides.items():
            r = run_once(cmd, tmp / "out.json", side_env, cwd)
            runs[side].append(r)
            print(f"  run {i + 1} {side:8} {r['wall']:7.3f} s  cpu {r['cpu']:7.3f} s  {r['rss_mb']:7.1f} MB",
                  file=sys.stderr)
    med = {side: {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "rss_mb")}
           for side, rs in runs.items()}
    target = args.target_large if info["mb"] >= 50 else 1.0
    rows = []
    for side, root in zip([s for s in sides if s != "pi"], args.roots, strict=True):
        rows.append({**info, "side": side, "root": str(root), "identical": identical[side], "diff": diffs[side],
                     "pikit": med[side], "pi": med["pi"],
                     "time_ratio": med[side]["wall"] / med["pi"]["wall"],
                     "cpu_ratio": med[side]["cpu"] / med["pi"]["cpu"],
                     "rss_ratio": med[side]["rss_mb"] / med["pi"]["rss_mb"],
                     "time_target": target, "rss_target": args.rss_target})
    return {"file": info, "runs": runs, "rows": rows}


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    several = len(meta["roots"]) > 1
    lines = [
        f"`pikit context FILE --json` vs Pi ({meta['date']}, {meta['machine']}, "
        f"{meta['runs']} alternating runs each after one warm-up; medians; load average {meta['load']})",
    ]
    if several:
        lines += [""] + [f"- {'pikit' if i == 0 else f'pikit@{i}'}: {root}" for i, root in enumerate(meta["roots"])]
    lines += [
        "",
        f"| session | size | entries |{' pikit |' if several else ''} pikit wall | Pi wall | ratio (target) "
        "| pikit CPU | Pi CPU | CPU ratio | pikit peak RSS | Pi peak RSS | ratio (target) | same JSON |",
        f"|---|---:|---:|{'---|' if several else ''}---:|---:|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for result in results:
        for r in result["rows"]:
            a, b = r["pikit"], r["pi"]
            ok_t = "pass" if r["time_ratio"] <= r["time_target"] else "FAIL"
            ok_m = "pass" if r["rss_ratio"] <= r["rss_target"] else "FAIL"
            side = f" {r['side']} |" if several else ""
            lines.append(
                f"| {r['name']} | {r['mb']:.1f} MB | {r['entries']:,} |{side}"
                f" {a['wall']:.3f} s | {b['wall']:.3f} s "
                f"| **{r['time_ratio']:.2f}×** (≤ {r['time_target']:g}×, {ok_t}) "
                f"| {a['cpu']:.3f} s | {b['cpu']:.3f} s | {r['cpu_ratio']:.2f}× "
                f"| {a['rss_mb']:.0f} MB | {b['rss_mb']:.0f} MB "
                f"| **{r['rss_ratio']:.2f}×** (≤ {r['rss_target']:g}×, {ok_m}) | {'yes' if r['identical'] else 'NO'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", type=Path,
                   help=f"sessions (default: {REAL} and the generated {', '.join(GENERATED)})")
    p.add_argument("--runs", type=int, default=7, help="timed runs of each side (default 7)")
    p.add_argument("--piref", type=Path, default=Path("/tmp/pikit-piref"), help="Pi's reference install")
    p.add_argument("--pi-script", type=Path, default=PI_SCRIPT)
    p.add_argument("--pikit-root", type=Path, action="append", dest="roots",
                   help="a checkout pikit runs from (PYTHONPATH and working directory; default: this one); "
                        "repeat it to compare several (e.g. before/after a patch) in the same alternation")
    p.add_argument("--target-large", type=float, default=0.5, help="time ratio target for files >= 50 MB")
    p.add_argument("--rss-target", type=float, default=1.5)
    p.add_argument("--json-out", type=Path, help="also save every measurement as JSON")
    args = p.parse_args(argv)
    args.roots = [r.resolve() for r in (args.roots or [ROOT])]
    if not (args.piref / "node_modules").is_dir():
        raise SystemExit(f"Pi's reference is not installed at {args.piref}; run "
                         f"bash /work/shared/conformance/setup_piref.sh {args.piref}")
    files = args.files
    if not files:
        files = [REAL]
        for name, gen_args in GENERATED.items():
            path = DATA / name
            if not path.exists():
                print(f"generating {path} ...", file=sys.stderr)
                subprocess.run([sys.executable, str(HERE / "make_session.py"), *gen_args, "-o", str(path)], check=True)
            files.append(path)
    load_before = os.getloadavg()
    results = []
    with tempfile.TemporaryDirectory(prefix="pikit-bench-", dir=DATA if DATA.is_dir() else None) as tmp:
        for path in files:
            results.append(bench_file(path, args, Path(tmp)))
    load_after = os.getloadavg()
    meta = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, "
                   f"node {subprocess.run(['node', '--version'], capture_output=True, text=True).stdout.strip()}",
        "runs": args.runs,
        "roots": [str(r) for r in args.roots],
        "load": f"{load_before[0]:.1f} → {load_after[0]:.1f}",
    }
    table = markdown(results, meta)
    print(table)
    if args.json_out:
        args.json_out.write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    bad = [r for result in results for r in result["rows"] if not r["identical"]]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
