#!/usr/bin/env python3
"""Memory of each surface, as whole processes, per MB of session.

    python benchmarks/bench_memory.py                   # the generated 100 MB and 250 MB sessions
    python benchmarks/bench_memory.py --large           # also the 1 GB one (generated if missing: minutes)
    python benchmarks/bench_memory.py --mb 25 --runs 3 --json out.json

Every measure is a fresh process (``python -c`` with pikit from this checkout); the peak RSS is
the child's own ``ru_maxrss`` (``os.wait4``), and the best (lowest) of ``--runs`` runs is kept.
"Per MB" is the peak over that of a process that only imports pikit (``import pikit``), divided by
the file's size in MB (10⁶ bytes):

* load:      ``pikit.load(path)``; also its resident memory after a collection;
* context:   ``pikit context FILE --json`` (the CLI, output to a file);
* explorer:  ``pikit.load(path)``, then ``SessionExplorer(session)``; the resident memory after
             the load and after building the explorer (each after a collection), their difference
             ("added", what the explorer holds over the loaded session) and the process peak;
* tree:      ``pikit tree FILE --limit 20`` and ``--tail 20`` (output to a file);
* export:    ``pikit export FILE -o PAGE.html``;
* following: ``pikit.follow(path)`` of the whole file, then the context at the leaf.

Sessions are ``make_session.py --mb N`` ones, generated when missing into ``benchmarks/data`` under
``--name`` (default ``session-{mb}mb-s1.jsonl``, the generator's own name; ``--data`` for another folder).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"

_STATUS = """
def _status(key):
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    return 0.0
"""

_SNIPPETS = {
    "load": _STATUS + """
import gc, json, sys, pikit
session = pikit.load(sys.argv[1]); gc.collect()
print(json.dumps({"rss_mb": _status("VmRSS:")}))
""",
    "explorer": _STATUS + """
import gc, json, sys, pikit
from pikit.widgets import SessionExplorer
session = pikit.load(sys.argv[1]); gc.collect()
loaded = _status("VmRSS:")
explorer = SessionExplorer(session); gc.collect()
built = _status("VmRSS:")
print(json.dumps({"loaded_mb": loaded, "built_mb": built, "added_mb": built - loaded,
                  "rows": len(explorer.tree.row_ids), "build_ms": explorer.build_ms}))
""",
    "following": _STATUS + """
import gc, json, sys, pikit
follower = pikit.follow(sys.argv[1])
projection = follower.session.context(); gc.collect()
print(json.dumps({"rss_mb": _status("VmRSS:"), "messages": len(projection.messages)}))
""",
}


def run_child(cmd: list[str], out: Path) -> dict[str, Any]:
    """Run ``cmd`` with stdout to ``out``; its peak RSS (MB), CPU and wall time, and its JSON line if any."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    start = time.perf_counter()
    with out.open("wb") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd[:4])}… failed: {err.decode(errors='replace').strip()[-400:]}")
    result: dict[str, Any] = {"peak_mb": usage.ru_maxrss / 1024, "cpu_s": usage.ru_utime + usage.ru_stime,
                              "wall_s": wall}
    text = out.read_bytes()
    if text.startswith(b"{") and len(text) < 10_000:
        result.update(json.loads(text))
    return result


def commands(path: Path, tmp: Path) -> dict[str, list[str]]:
    py = sys.executable
    cli = [py, "-m", "pikit"]
    return {
        "import pikit": [py, "-c", "import pikit"],
        "load": [py, "-c", _SNIPPETS["load"], str(path)],
        "context": [*cli, "context", str(path), "--json"],
        "explorer": [py, "-c", _SNIPPETS["explorer"], str(path)],
        "tree --limit 20": [*cli, "tree", str(path), "--limit", "20", "--no-pager"],
        "tree --tail 20": [*cli, "tree", str(path), "--tail", "20", "--no-pager"],
        "export": [*cli, "export", str(path), "-o", str(tmp / "page.html"), "--force", "--no-progress"],
        "following": [py, "-c", _SNIPPETS["following"], str(path)],
    }


def session_file(mb: int, name: str, data: Path) -> Path:
    path = data / name.format(mb=mb)
    if not path.exists():
        print(f"generating {path.name} …", file=sys.stderr)
        subprocess.run([sys.executable, str(HERE / "make_session.py"), "--mb", str(mb), "-o", str(path), "-q"],
                       check=True, cwd=ROOT)
    return path


def bench(path: Path, runs: int, only: list[str] | None) -> dict[str, Any]:
    size_mb = path.stat().st_size / 1e6
    out: dict[str, Any] = {"file": path.name, "size_mb": size_mb, "surfaces": {}}
    with tempfile.TemporaryDirectory(prefix="pikit-mem-") as tmp:
        for surface, cmd in commands(path, Path(tmp)).items():
            if only and surface not in only and surface != "import pikit":
                continue
            best: dict[str, Any] | None = None
            for _ in range(runs):
                result = run_child(cmd, Path(tmp) / "out")
                if best is None or result["peak_mb"] < best["peak_mb"]:
                    best = result
            assert best is not None
            base = out["surfaces"].get("import pikit", {}).get("peak_mb", 0.0)
            best["peak_per_mb"] = (best["peak_mb"] - base) / size_mb
            out["surfaces"][surface] = best
            extra = ""
            if surface == "explorer":
                extra = (f"  loaded {best['loaded_mb']:.0f} MB, explorer adds {best['added_mb']:.0f} MB "
                         f"({best['added_mb'] / size_mb:.2f}x the file)")
            print(f"{path.name:>26} {surface:>16}: peak {best['peak_mb']:7.0f} MB ({best['peak_per_mb']:.2f}/MB)"
                  f"  cpu {best['cpu_s']:6.1f} s{extra}", flush=True)
    return out


def markdown(results: list[dict[str, Any]]) -> str:
    surfaces = [s for s in results[0]["surfaces"] if s != "import pikit"]
    base = results[0]["surfaces"].get("import pikit", {}).get("peak_mb", 0.0)
    head = ("| surface (import pikit alone: " + f"{base:.0f} MB) | "
            + " | ".join(f"{r['size_mb']:.0f} MB: peak RSS (per MB over import)" for r in results) + " |")
    lines = [head, "|---|" + "---|" * len(results)]
    for surface in surfaces:
        cells = []
        for r in results:
            s = r["surfaces"][surface]
            cell = f"{s['peak_mb']:.0f} MB ({s['peak_per_mb']:.2f})"
            if surface == "explorer":
                cell += f"; adds {s['added_mb']:.0f} MB ({s['added_mb'] / r['size_mb']:.2f}x)"
            cells.append(cell)
        lines.append(f"| {surface} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, action="append", help="session sizes in MB (default: 100 and 250)")
    parser.add_argument("--large", action="store_true", help="also the 1 GB session (generated if missing)")
    parser.add_argument("--name", default="session-{mb}mb-s1.jsonl",
                        help="file name of the generated sessions in benchmarks/data ({mb}: the size)")
    parser.add_argument("--data", type=Path, default=DATA, help="folder of the generated sessions")
    parser.add_argument("--runs", type=int, default=1, help="runs per measure; the lowest peak is kept")
    parser.add_argument("--only", action="append", help="only this surface (repeatable)")
    parser.add_argument("--json", type=Path, help="write the results as JSON")
    args = parser.parse_args(argv)
    sizes = args.mb or [100, 250]
    if args.large:
        sizes.append(1000)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    results = [bench(session_file(mb, args.name, args.data), args.runs, args.only) for mb in sizes]
    print()
    print(markdown(results))
    end = os.getloadavg()
    print(f"\nload average at the end {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"load": [load, end], "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
