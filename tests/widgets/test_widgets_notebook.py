"""Notebook 01 runs top to bottom headless (nbclient), offline, and writes only to a temporary folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "01-explore-a-session.ipynb"
SAMPLES = REPO / "data" / "sample_sessions"


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.slow
def test_notebook_01_runs_top_to_bottom(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the kernel's tempfile.mkdtemp() lands here
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    before = _snapshot(SAMPLES)
    notebook_before = NOTEBOOK.read_bytes()

    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", store_widget_state=True,
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()

    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code)
    errors = [o for c in code for o in c.outputs if o.get("output_type") == "error"]
    assert errors == []
    text = "".join(o.get("text", "") for c in code for o in c.outputs if o.get("output_type") == "stream")
    assert "leaf is now 10b305af - abandoned: strategy pattern" in text
    widget_outputs = [o for c in code for o in c.outputs
                      if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(widget_outputs) >= 5  # explorer, context view, diff, compaction panel, diff after it
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    html = " ".join(str(m["state"].get("value", "")) for m in state.values())
    assert "pikit-compaction-done" in html and "tokensAfter" in html  # the run succeeded, in the panel
    assert "pikit-chart-bar" in html

    # Nothing next to the sample (or the notebook itself) changed; the new session went to TMPDIR.
    assert _snapshot(SAMPLES) == before
    assert NOTEBOOK.read_bytes() == notebook_before
    written = list(tmp_path.glob("pikit-explore-*/refactor-auth.compacted-*.jsonl"))
    assert len(written) == 1
    # Watch it live: the replay writes a new file that a second explorer follows.
    assert "entries so far; the leaf is" in text
    live = list(tmp_path.glob("pikit-explore-*/live-*/live.jsonl"))
    assert len(live) == 1 and (SAMPLES / "refactor-auth.jsonl").read_bytes().startswith(live[0].read_bytes())
