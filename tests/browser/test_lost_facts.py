"""What a compaction lost, in JupyterLab + Chromium: run a compaction in the panel, see the lost facts,
click one and check that the explorer's tree reveals its entry (scrolled into view, the leaf unmoved).

The explorer's stepper does the same at its last step. Screenshots of the panel's list, the whole
panel, the explorer and its stepper go to ``test-artifacts/lost-facts-*.png``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.jupyter import REPO_ROOT, JupyterServer, kernel_exec, open_notebook, run_all, wait_for_kernel_output
from tests.browser.test_explorer import kernel_value, save_element

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

SAMPLE = "data/sample_sessions/refactor-auth.jsonl"
NOTEBOOK = "lost_facts.ipynb"
CELLS = [
    "import tempfile\nimport pikit\nfrom pikit.compaction._settings import Settings\n"
    "from pikit.widgets import CompactionPanel, SessionExplorer\n"
    f"session = pikit.load({SAMPLE!r})\nWORK = tempfile.mkdtemp(prefix='pikit-lost-')",
    "explorer = SessionExplorer(session, tree_height=360, keep_recent_tokens=3000)\nexplorer",
    "panel = CompactionPanel(session, settings=Settings({}), keep_recent_tokens=3000, output_dir=WORK)\n"
    "panel.on_entry_link(explorer.reveal)\npanel",
]


@pytest.fixture(scope="module")
def workspace(jupyter_server: JupyterServer) -> Path:
    """The sample session in the server root (the repository's layout)."""
    source = REPO_ROOT / SAMPLE
    if not source.is_file():
        pytest.fail(f"{SAMPLE} is missing from the repository")
    target = jupyter_server.root_dir / SAMPLE
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return jupyter_server.root_dir


@pytest.mark.browser
def test_a_lost_fact_reveals_its_entry_in_the_tree(page: Page, jupyter_server: JupyterServer,
                                                   workspace: Path) -> None:
    from tests.browser.jupyter import write_notebook

    write_notebook(jupyter_server, NOTEBOOK, CELLS)
    open_notebook(page, jupyter_server, NOTEBOOK)
    run_all(page, timeout=180)
    leaf = kernel_value(jupyter_server, NOTEBOOK, "explorer.leaf_id")

    panel = page.locator(".pikit-compaction-panel").first
    panel.scroll_into_view_if_needed()
    assert panel.locator(".pikit-lost").count() == 0  # nothing run, nothing evaluated
    panel.locator(".pikit-run-compaction button, button.pikit-run-compaction").first.click()
    wait_for_kernel_output(jupyter_server, NOTEBOOK, "print(panel.status)", "done", timeout=60)
    lost = panel.locator(".pikit-lost-facts .pikit-lost").first
    lost.wait_for(state="visible", timeout=20_000)

    facts = kernel_value(jupyter_server, NOTEBOOK,
                         "[[f.kind, f.text, f.source] for f in panel.last_evaluation.lost[:panel.lost.limit]]")
    assert facts, "the offline summary of the sample loses identifiers"
    rows = lost.locator("tr.pikit-lost-fact")
    assert rows.count() == len(facts)
    assert [rows.nth(i).locator("td").first.inner_text() for i in range(len(facts))] == [f[0] for f in facts]
    recall = kernel_value(jupyter_server, NOTEBOOK, "round(panel.last_evaluation.recall['overall'] * 100)")
    assert f"recall {recall}%" in lost.inner_text()
    save_element(page, panel.locator(".pikit-lost-facts").first, "lost-facts-panel")
    save_element(page, panel, "lost-facts-panel-after-run")

    # The last fact listed: its entry lies far down the tree, out of view until revealed.
    source = facts[-1][2]
    link = lost.locator(f'button.pikit-lost-link[data-fact="{len(facts) - 1}"]')
    assert link.get_attribute("data-entry-id") == source
    link.click()
    wait_for_kernel_output(jupyter_server, NOTEBOOK, "print(explorer.tree.selected_id)", source)
    explorer = page.locator(".pikit-explorer").first
    selected = explorer.locator(".pikit-tree-row.pikit-selected")
    selected.wait_for(state="visible", timeout=60_000)
    assert selected.get_attribute("data-entry-id") == source
    box, viewport = selected.bounding_box(), explorer.locator(".pikit-tree-viewport").bounding_box()
    assert box and viewport
    assert viewport["y"] <= box["y"] and box["y"] + box["height"] <= viewport["y"] + viewport["height"]
    assert kernel_value(jupyter_server, NOTEBOOK, "explorer.leaf_id") == leaf  # revealed, not moved to
    save_element(page, explorer, "lost-facts-explorer-revealed")

    # The explorer's own stepper: its last step lists what the compaction lost; a click reveals the
    # entry in the tree, and the stepper stays at its step (the leaf did not move).
    explorer.locator(".pikit-open-stepper").first.click()
    stepper = explorer.locator(".pikit-stepper").first
    stepper.wait_for(state="visible", timeout=20_000)
    stepper.locator(".pikit-step-header").click()
    page.keyboard.press("End")
    wait_for_kernel_output(jupyter_server, NOTEBOOK, "print(explorer.stepper.step)", "7")
    first = kernel_value(jupyter_server, NOTEBOOK, "str(explorer.stepper.evaluation.lost[0].source)")
    link = stepper.locator('.pikit-lost-facts button.pikit-lost-link[data-fact="0"]')
    link.wait_for(state="visible", timeout=20_000)
    link.click()
    wait_for_kernel_output(jupyter_server, NOTEBOOK, "print(explorer.tree.selected_id)", first)
    page.wait_for_function(
        "(id) => document.querySelector('.pikit-explorer .pikit-tree-row.pikit-selected')?.dataset.entryId === id",
        arg=first, timeout=60_000)
    assert kernel_value(jupyter_server, NOTEBOOK, "[explorer.leaf_id, explorer.stepper.step]") == [leaf, 7]
    assert stepper.locator(".pikit-lost-facts .pikit-lost").is_visible()
    save_element(page, stepper, "lost-facts-stepper-step7")
    kernel_exec(jupyter_server, NOTEBOOK, "import shutil; shutil.rmtree(WORK)")
