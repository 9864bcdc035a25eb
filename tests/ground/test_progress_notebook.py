"""Progress in a notebook: in a real Jupyter kernel (nbclient), long loading, scanning and replaying show a tqdm
bar widget by default; short work and ``progress=False`` show none."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.long_work import REFACTOR, REPO, WIDE_TREE, WIDE_TREE_BRANCH, big_corpus, big_session

pytestmark = pytest.mark.slow

WIDGET = "application/vnd.jupyter.widget-view+json"


def _run(cells: list[str], folder: Path) -> Any:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    NotebookClient(nb, timeout=300, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def test_long_work_shows_a_bar_widget_in_a_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    big = big_session(tmp_path)
    root = big_corpus(tmp_path / "sessions")
    corpus_bytes = sum(p.stat().st_size for p in root.rglob("*.jsonl"))
    nb = _run([
        "import pikit\nfrom pikit.corpus import Corpus\nfrom pikit.llm import get_summarizer\n"
        "from pikit.compaction import CompactionSettings, sweep\nprint(pikit.__file__)",
        f"session = pikit.load({str(big)!r})",
        f"small = pikit.load({str(REFACTOR)!r})",
        f"quiet = pikit.load({str(big)!r}, progress=False)",
        f"Corpus.open({str(root)!r}, index={str(tmp_path / 'index.duckdb')!r}).close()",
        f"runs = sweep(pikit.load({str(WIDE_TREE)!r}), get_summarizer('offline'),"
        " context_windows=[16384, 24000, 32000], settings=[CompactionSettings(True, 3000, 4000)])",
    ], tmp_path)
    cells = nb.cells
    assert [o for c in cells for o in c.outputs if o.get("output_type") == "error"] == []
    assert cells[0].outputs[0]["text"].strip() == str(REPO / "pikit" / "__init__.py")
    bars = [[o for o in c.outputs if WIDGET in o.get("data", {})] for c in cells]
    assert [len(b) for b in bars] == [0, 1, 0, 0, 1, 1]
    assert "loading big.jsonl" in bars[1][0]["data"]["text/plain"]
    assert "scanning 41 files" in bars[4][0]["data"]["text/plain"]
    assert "replaying 1,878 entries under 3 settings" in bars[5][0]["data"]["text/plain"]
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    progress = [m["state"] for m in state.values() if m["model_name"] == "FloatProgressModel"]
    # each bar went to its end, and was removed when the work ended
    assert sorted((p["max"], p["value"]) for p in progress) == sorted(
        (float(n), float(n)) for n in (big.stat().st_size, corpus_bytes, 3 * WIDE_TREE_BRANCH))
    boxes = [m["state"] for m in state.values() if m["model_name"] == "HBoxModel"]
    layouts = [state[box["layout"].removeprefix("IPY_MODEL_")]["state"] for box in boxes]
    assert [layout.get("visibility") for layout in layouts] == ["hidden"] * 3
