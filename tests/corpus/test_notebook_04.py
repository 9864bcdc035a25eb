"""Notebook 04 runs top to bottom, offline, and draws its four charts."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "04-a-corpus-of-sessions.ipynb"

pytestmark = pytest.mark.slow


def test_saved_clean() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)
    assert nb.cells[0].source.startswith("# ")
    source = "\n".join(cell.source for cell in code)
    assert "sample_corpus" in source and "/work/" not in source


def test_runs_top_to_bottom() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    before = {p: p.stat().st_mtime for p in (REPO / "data" / "sample_corpus").rglob("*") if p.is_file()}
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])]
    assert not [out for out in outputs if out.get("output_type") == "error"]
    images = sum(1 for out in outputs if "image/png" in out.get("data", {}))
    assert images == 4
    text = "\n".join(out.get("text", "") for out in outputs if out.get("output_type") == "stream")
    assert "37 read whole" in text and "37 unchanged" in text and "entries" in text
    widgets = [out for out in outputs if "application/vnd.jupyter.widget-view+json" in out.get("data", {})]
    assert widgets, "the session browser is displayed"
    assert {p: p.stat().st_mtime for p in (REPO / "data" / "sample_corpus").rglob("*") if p.is_file()} == before
