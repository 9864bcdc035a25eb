#!/usr/bin/env python3
"""Following a growing session: the cost of a refresh, and the memory of following.

    python benchmarks/bench_live.py                  # both
    python benchmarks/bench_live.py --only refresh   # refresh | memory

* refresh: a copy of the generated 100 MB session is loaded (with its ancestry index and
           tree built, as the explorer has them); then, round after round, 10 Pi-format
           entries are appended to it in one write and ``session.refresh()`` is timed, and
           so is the projection at the new leaf (what ``pikit watch`` computes per change).
           Reloading the whole file (``pikit.load``) is timed in the same alternating run,
           for the ratio. Target: a refresh under 20 ms.
* memory:  in fresh processes, alternately: ``pikit.load`` of the 100 MB session, and
           following it while it grows from its header to 100 MB (1 MB written at a time,
           cut anywhere, even inside a line or a character, ``refresh()`` after each
           write). Each ends with the projection at the leaf and reports its resident
           memory (VmRSS after a collection) and its peak (VmHWM). Target: following uses
           no more memory than loading once.

The copy and the growing file are written under /tmp and removed afterwards.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench_inprocess import print_results  # noqa: E402

import pikit  # noqa: E402

SESSION = HERE / "data" / "session-100mb-s1.jsonl"


def session_file() -> Path:
    if not SESSION.exists():
        print(f"generating {SESSION} ...", file=sys.stderr)
        subprocess.run([sys.executable, str(HERE / "make_session.py"), "--mb", "100", "-o", str(SESSION)], check=True)
    return SESSION


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _entries(leaf: Any, round_: int, count: int = 10) -> bytes:
    """``count`` Pi-format entries continuing the branch at ``leaf`` (user, assistant with usage, tool result...)."""
    lines = []
    parent = leaf
    for i in range(count):
        entry_id = f"r{round_:04d}{i:03d}"
        stamp = f"2030-01-01T00:{round_ % 60:02d}:{i:02d}.000Z"
        ms_time = 1893456000000 + round_ * 60000 + i * 1000
        kind = i % 3
        if kind == 0:
            message: dict[str, Any] = {"role": "user", "content": f"step {round_}.{i}: carry on", "timestamp": ms_time}
        elif kind == 1:
            message = {"role": "assistant", "content": [{"type": "text", "text": "Reading the file. " * 20},
                                                        {"type": "toolCall", "id": f"c{entry_id}", "name": "read",
                                                         "arguments": {"path": "src/app.py"}}],
                       "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                       "usage": {"input": 50000 + round_, "output": 300, "cacheRead": 0, "cacheWrite": 0,
                                 "totalTokens": 50300 + round_,
                                 "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                       "stopReason": "toolUse", "timestamp": ms_time}
        else:
            message = {"role": "toolResult", "toolCallId": f"c{entry_id}", "toolName": "read",
                       "content": [{"type": "text", "text": "def main():\n    return 0\n" * 40}], "isError": False,
                       "timestamp": ms_time}
        lines.append(json.dumps({"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp,
                                 "message": message}, separators=(",", ":")))
        parent = entry_id
    return ("\n".join(lines) + "\n").encode()


def bench_refresh(args: argparse.Namespace) -> list[dict[str, Any]]:
    work = Path(tempfile.mkdtemp(prefix="pikit-bench-live-"))
    try:
        path = work / "growing.jsonl"
        shutil.copyfile(session_file(), path)
        session = pikit.load(path)
        session.context()
        session.context()  # the second projection builds the ancestry index
        session.children(session.leaf_id)  # and the tree
        refreshes, projections, reloads = [], [], []
        for round_ in range(args.rounds):
            with open(path, "ab") as handle:
                handle.write(_entries(session.leaf_id, round_))
            t0 = time.perf_counter()
            result = session.refresh()
            t1 = time.perf_counter()
            tokens = session.context().tokens
            t2 = time.perf_counter()
            assert len(result.added) == 10 and result.reloaded is None and tokens > 0
            refreshes.append(t1 - t0)
            projections.append(t2 - t1)
            if round_ % max(1, args.rounds // args.reloads) == 0:  # alternate: a full reload now and then
                gc.collect()
                t0 = time.perf_counter()
                again = pikit.load(path)
                reloads.append(time.perf_counter() - t0)
                assert len(again) == len(session)
                del again
        mb = path.stat().st_size / 1e6
        med, worst = statistics.median(refreshes), max(refreshes)
        reload = statistics.median(reloads)
        detail = (f"{mb:.0f} MB, {len(session):,} entries; {args.rounds} rounds of 10 appended entries: "
                  f"refresh median {ms(med)}, max {ms(worst)}; projection at the new leaf median "
                  f"{ms(statistics.median(projections))}; a full reload {reload:.2f} s "
                  f"(median of {len(reloads)}), {reload / med:,.0f}× a refresh")
        return [{"what": "refresh after appending 10 entries to a 100 MB session", "value": ms(med) + " median",
                 "target": "< 20 ms", "ok": worst < 0.020 or med < 0.020, "detail": detail,
                 "ratio": med / reload}]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _memory() -> dict[str, int]:
    status = Path("/proc/self/status").read_text()
    values = {line.split(":")[0]: int(line.split()[1]) for line in status.splitlines() if line.startswith("Vm")}
    return {"rss_kb": values["VmRSS"], "peak_kb": values["VmHWM"]}


def child_load(source: Path) -> dict[str, Any]:
    session = pikit.load(source)
    tokens = session.context().tokens
    session.context()
    gc.collect()
    return {**_memory(), "entries": len(session), "tokens": tokens}


def child_follow(source: Path, step: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="pikit-bench-follow-"))
    try:
        path = work / "growing.jsonl"
        with open(source, "rb") as src, open(path, "wb") as out:
            out.write(src.readline())  # the header first, as Pi writes it
            out.flush()
            session = pikit.load(path, wait_for_last_line=True)
            refreshes = 0
            while True:
                chunk = src.read(step)  # cut anywhere: inside lines, inside characters
                if not chunk:
                    break
                out.write(chunk)
                out.flush()
                session.refresh()
                refreshes += 1
        tokens = session.context().tokens
        session.context()
        assert not session.report.damaged_lines
        gc.collect()
        return {**_memory(), "entries": len(session), "tokens": tokens, "refreshes": refreshes}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench_memory(args: argparse.Namespace) -> list[dict[str, Any]]:
    source = session_file()
    runs: dict[str, list[dict[str, Any]]] = {"load": [], "follow": []}
    for _ in range(args.memory_runs):
        for mode in ("load", "follow"):  # alternating fresh processes
            done = subprocess.run([sys.executable, __file__, "--child", mode, "--step", str(args.step)],
                                  capture_output=True, text=True, check=True)
            runs[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
    load, follow = runs["load"], runs["follow"]
    assert {r["entries"] for r in load} == {r["entries"] for r in follow}
    assert {r["tokens"] for r in load} == {r["tokens"] for r in follow}
    rss_l, rss_f = (statistics.median(r["rss_kb"] for r in rows) for rows in (load, follow))
    peak_l, peak_f = (statistics.median(r["peak_kb"] for r in rows) for rows in (load, follow))
    ratio_rss, ratio_peak = rss_f / rss_l, peak_f / peak_l
    detail = (f"{source.stat().st_size / 1e6:.0f} MB, {load[0]['entries']:,} entries; "
              f"resident after: load {rss_l / 1024:,.0f} MiB, follow {rss_f / 1024:,.0f} MiB ({ratio_rss:.2f}×); "
              f"peak: load {peak_l / 1024:,.0f} MiB, follow {peak_f / 1024:,.0f} MiB ({ratio_peak:.2f}×); "
              f"follow = {follow[0]['refreshes']} refreshes of {args.step / 1e6:g} MB appends; "
              f"median of {args.memory_runs} alternating runs each")
    return [{"what": "memory: following a session that grows to 100 MB vs loading it once",
             "value": f"{ratio_rss:.2f}× resident, {ratio_peak:.2f}× peak", "target": "≤ 1× (±5% noise)",
             "ok": ratio_rss <= 1.05 and ratio_peak <= 1.05, "detail": detail}]


BENCHES = {"refresh": bench_refresh, "memory": bench_memory}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", choices=list(BENCHES), action="append", help="run only these (repeatable)")
    p.add_argument("--rounds", type=int, default=40, help="refresh rounds (default 40)")
    p.add_argument("--reloads", type=int, default=4, help="full reloads timed among them (default 4)")
    p.add_argument("--memory-runs", type=int, default=2, help="fresh processes per mode (default 2)")
    p.add_argument("--step", type=int, default=1_000_000, help="bytes written per append when following")
    p.add_argument("--child", choices=["load", "follow"], help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        result = child_load(session_file()) if args.child == "load" else child_follow(session_file(), args.step)
        print(json.dumps(result))
        return 0
    rows: list[dict[str, Any]] = []
    for name in args.only or list(BENCHES):
        print(f"running {name} ...", file=sys.stderr)
        got = BENCHES[name](args)
        for r in got:
            print(f"  {r['what']}: {r['value']}  ({r['detail']})", file=sys.stderr)
        rows += got
    return print_results("pikit", rows)


if __name__ == "__main__":
    raise SystemExit(main())
