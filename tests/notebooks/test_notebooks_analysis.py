"""Notebooks 02 and 03 run top to bottom, offline, with no error and the expected outputs."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = REPO / "notebooks"
SAMPLE = REPO / "data" / "sample_sessions" / "refactor-auth.jsonl"
NOTEBOOKS = ["02-keep-recent-and-reserve.ipynb", "03-compaction-step-by-step.ipynb"]

pytestmark = pytest.mark.slow


def _snapshot() -> dict[str, float]:
    """Files (and their modification times) under the folders a notebook could write to by mistake."""
    out = {}
    for folder in (NOTEBOOK_DIR, SAMPLE.parent):
        for path in folder.rglob("*"):
            if path.is_file() and ".ipynb_checkpoints" not in path.parts and "__pycache__" not in path.parts:
                out[str(path)] = path.stat().st_mtime
    return out


@pytest.fixture(scope="module", params=NOTEBOOKS)
def executed(request: pytest.FixtureRequest) -> tuple[str, Any, float]:
    if not SAMPLE.exists():
        pytest.fail(f"{SAMPLE} is missing: generate it with `python data/sample_sessions/generate.py`")
    name = request.param
    nb = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
    before = _snapshot()
    started = time.monotonic()
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK_DIR)}}).execute()
    elapsed = time.monotonic() - started
    assert _snapshot() == before, "the notebook wrote next to the notebooks or the sample sessions"
    return name, nb, elapsed


def _outputs(nb: Any) -> list[dict[str, Any]]:
    return [out for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])]


def _text(nb: Any) -> str:
    parts = []
    for out in _outputs(nb):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        else:
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def _images(nb: Any) -> int:
    return sum(1 for out in _outputs(nb) if "image/png" in out.get("data", {}))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_saved_clean(name: str) -> None:
    nb = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    assert nb.metadata["kernelspec"]["name"] == "python3"
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)
    markdown = [cell for cell in nb.cells if cell.cell_type == "markdown"]
    assert len(markdown) >= 8, "explanations between the code cells"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    source = "\n".join(cell.source for cell in code)
    assert "refactor-auth.jsonl" in source
    assert "/work/" not in source and "shared/sessions" not in source  # only the bundled sample


def test_runs_without_errors(executed: tuple[str, Any, float]) -> None:
    name, nb, _ = executed
    errors = [out for out in _outputs(nb) if out.get("output_type") == "error"]
    assert not errors, f"{name}: {errors[0].get('ename')}: {errors[0].get('evalue')}"
    warnings = [out.get("text", "") for out in _outputs(nb) if out.get("name") == "stderr"]
    assert not any("Traceback" in w for w in warnings)
    assert "removed" in _text(nb)  # the temporary folder is cleaned up at the end


def test_expected_outputs(executed: tuple[str, Any, float]) -> None:
    name, nb, _ = executed
    text = _text(nb)
    if name.startswith("02"):
        assert _images(nb) >= 4  # sweep curve, what-if sawtooth, comparison, compaction bars
        assert "modelOverrides[" in text  # a value resolved from an override
        assert "SettingsError:" in text and "non-negative" in text
        assert "keep_recent_tokens" in text and "threshold" in text
        assert re.search(r'"compactions": [1-9]', text), "the what-if replay compacts at least once"
    else:
        assert _images(nb) >= 5  # calibration, recorded growth, budget before/after, lineage bars
        by_hand = re.search(r"cut by hand\s+: index (\d+)", text)
        by_pikit = re.search(r"pikit's cut\s+: index (\d+)", text)
        assert by_hand and by_pikit and by_hand.group(1) == by_pikit.group(1)
        reached_by_hand = re.search(r"the running sum reaches [\d,]+ at index (\d+)", text)
        reached_by_trace = re.search(r"the walk reaches [\d,]+ at context entry (\d+)", text)
        assert reached_by_hand and reached_by_trace and reached_by_hand.group(1) == reached_by_trace.group(1)
        assert "<CompactionStepper at" in text  # the stepper is shown
        assert re.search(r"7\. The new context \(\d+ entries highlighted\)", text)
        tokens = re.search(r"tokens before ([\d,]+) -> after ([\d,]+)", text)
        assert tokens, "the offline compaction ran"
        before, after = (int(g.replace(",", "")) for g in tokens.groups())
        assert after < before
        assert "## Goal" in text
        assert "<modified-files>" in text or "<read-files>" in text
        assert "stale" in text and "firstKeptEntryId" in text
