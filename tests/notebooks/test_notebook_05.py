"""Notebook 05 runs top to bottom, offline, and draws its strategy, trade-off and corpus charts."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "05-compaction-strategies.ipynb"

pytestmark = pytest.mark.slow


def test_saved_clean() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)
    assert nb.cells[0].source.startswith("# ")
    source = "\n".join(cell.source for cell in code)
    assert "sample_sessions" in source and "sample_corpus" in source and "/work/" not in source


def test_runs_top_to_bottom() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    data = REPO / "data"
    before = {p: p.stat().st_mtime for p in data.rglob("*") if p.is_file()}
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])]
    assert not [out for out in outputs if out.get("output_type") == "error"]
    assert sum(1 for out in outputs if "image/png" in out.get("data", {})) == 3
    shown = "\n".join(out.get("data", {}).get("text/plain", "") + out.get("text", "") for out in outputs)
    for strategy in ("pi-percent", "none", "codex-inline", "mask-observations", "truncate", "keep-30"):
        assert strategy in shown, strategy
    assert "recall" in shown and "modified files" in shown  # common ground, and a recall over part of the pool
    assert "<Evaluation of '3f00573f' (pi)" in shown and "facts kept" in shown
    assert "anthropic/claude-sonnet-4-5" in shown  # the corpus query, per model
    assert {p: p.stat().st_mtime for p in data.rglob("*") if p.is_file()} == before
