"""Building the explorer holds about what it shows: at most the file's size on top of the loaded session
and its context at the leaf."""

from __future__ import annotations

import gc
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import pikit
from pikit._format import reading
from pikit.widgets import SessionExplorer
from tests.procs import env

_REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated 4 MB session (deterministic: branches, labels, compactions, an image)."""
    path = tmp_path_factory.mktemp("generated") / "generated-4mb.jsonl"
    subprocess.run([sys.executable, str(_REPO / "benchmarks" / "make_session.py"), "--mb", "4", "-o", str(path),
                    "-q"], check=True, timeout=300, env=env())
    return path


def _held(build: object) -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_building_the_explorer_adds_at_most_the_file_size(generated: Path, tree_basic: pikit.Session,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    SessionExplorer(tree_basic)  # what any explorer pays once: the imports, the token encoding
    # Loaded as a large file is: entries indexed, each parsed when first needed.
    monkeypatch.setattr(reading, "KEEP_ALL_BELOW", 1 << 20)
    session = pikit.load(generated)
    assert not any(entry.is_parsed for entry in session.entries)
    # The context at the leaf (what the explorer shows on the right) is bounded by the context
    # window, not the file: read it first, so that what is measured is what grows with the file.
    session.context()
    gc.collect()
    tracemalloc.start()
    try:
        before = _held(None)
        explorer = SessionExplorer(session)
        added = _held(explorer) - before
    finally:
        tracemalloc.stop()
    size = generated.stat().st_size
    # Every entry's parsed form and a view model per entry would be several times the file.
    assert added <= 1.0 * size, f"the explorer holds {added / size:.2f}x the file"
    assert len(explorer.tree.row_ids) > 500  # the whole tree is still laid out
