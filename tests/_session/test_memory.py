"""What a caller drops is freed, and loading changes no process-wide state."""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

import pikit
from pikit.cli import main
from tests.procs import env


def _touch_everything(session: pikit.Session) -> None:
    """Use the caches a notebook would build: projections, the ancestry index, the tree, the report."""
    session.context()
    session.context(session.entries[len(session.entries) // 2].id)
    _ = session.ancestry, session.report.problems, session.tree(), session.flatten()
    session.branch()


def test_a_dropped_session_is_freed_by_reference_counting(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "before-compaction.jsonl")
    _touch_everything(session)
    report = weakref.ref(session.report)
    entries = [weakref.ref(session.entries[0]), weakref.ref(session.entries[-1])] if hasattr(
        session.entries[0], "__weakref__") else []
    ref = weakref.ref(session)
    collecting = gc.isenabled()
    gc.disable()  # prove there is no cycle: nothing but reference counting may free it
    try:
        del session
        assert ref() is None and report() is None
        assert all(r() is None for r in entries)
    finally:
        if collecting:
            gc.enable()


def test_a_projection_kept_alone_does_not_keep_a_cycle(shared_sessions: Path) -> None:
    session = pikit.load(shared_sessions / "before-compaction.jsonl")
    projection = session.context()
    ref = weakref.ref(session)
    del session
    gc.collect()
    assert projection.tokens > 0  # the projection still works on its own
    del projection
    gc.collect()
    assert ref() is None


def test_loading_leaves_the_collector_and_argparse_alone(shared_sessions: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    translate = argparse._  # type: ignore[attr-defined]
    frozen = gc.get_freeze_count()
    thresholds = gc.get_threshold()
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            session = pikit.load(shared_sessions / "large-session.v1.jsonl")
            session.context()
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
    assert main(["info", str(shared_sessions / "tree-basic.jsonl")]) == 0
    assert main(["context", str(shared_sessions / "tree-basic.jsonl"), "--json"]) == 0
    capsys.readouterr()
    assert gc.get_freeze_count() == frozen and gc.get_threshold() == thresholds and gc.isenabled()
    assert argparse._ is translate  # type: ignore[attr-defined]


_LOOP = """
import gc, sys, pikit
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) * 1024
path, loops = sys.argv[1], int(sys.argv[2])
s = pikit.load(path); s.context(); del s; gc.collect()
start = rss()
peak = start
for i in range(loops):
    s = pikit.load(path)
    s.context()
    del s
    peak = max(peak, rss())
gc.collect()
print(start, rss(), peak)
"""


@pytest.mark.timeout(600)
@pytest.mark.slow
def test_rss_stays_flat_over_200_loads(shared_sessions: Path) -> None:
    # 200 loads and drops of the 2.4 MB session, in a fresh interpreter, with the collector on.
    proc = subprocess.run([sys.executable, "-c", _LOOP, str(shared_sessions / "before-compaction.jsonl"), "200"],
                          capture_output=True, text=True, timeout=540, env=env())
    assert proc.returncode == 0, proc.stderr
    start, end, peak = map(int, proc.stdout.split())
    assert end - start < 50 * 2**20, f"RSS grew {(end - start) / 2**20:.1f} MiB (peak {peak / 2**20:.0f} MiB)"
    print(f"RSS {start / 2**20:.0f} → {end / 2**20:.0f} MiB (peak {peak / 2**20:.0f} MiB) over 200 loads")
