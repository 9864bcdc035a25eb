"""The explorer follows a file that the replay script writes, in JupyterLab and a real Chromium."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.jupyter import JupyterServer, kernel_exec, open_notebook, run_all, screenshot, write_notebook

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE = REPO_ROOT / "data" / "sample_sessions" / "refactor-auth.jsonl"
NOTEBOOK = "live_follow.ipynb"

SETUP = """\
import pikit
from pikit.widgets import SessionExplorer

live = pikit.follow("live-replay.jsonl")
explorer = SessionExplorer(live, context_window=16384, reserve_tokens=3000, keep_recent_tokens=4000)
explorer"""


def kernel_value(server: JupyterServer, expression: str) -> Any:
    return json.loads(kernel_exec(server, NOTEBOOK, f"import json as _j; print(_j.dumps({expression}))"))


def rendered(page: Page) -> dict[str, Any]:
    """What the browser shows: the tree's height in rows and the row marked as the leaf."""
    return page.evaluate("""() => {
        const tree = document.querySelector('.pikit-explorer .pikit-tree');
        const spacer = tree.querySelector('.pikit-tree-spacer');
        const leaf = tree.querySelector('.pikit-tree-row.pikit-leaf');
        const row = tree.querySelector('.pikit-tree-row');
        const height = row ? row.getBoundingClientRect().height : 24;
        return {rows: Math.round(parseFloat(spacer.style.height || '0') / height),
                leaf: leaf ? leaf.dataset.entryId : null,
                status: (document.querySelector('.pikit-live-status') || {}).textContent || ''};
    }""")


@pytest.mark.browser
def test_the_explorer_follows_a_replayed_session(page: Page, jupyter_server: JupyterServer) -> None:
    root = jupyter_server.root_dir
    target = root / "live-replay.jsonl"
    shutil.copyfile(SAMPLE, root / "sample.jsonl")
    # The explorer starts on the header and the system prompt: no model recorded yet.
    target.write_bytes(b"".join(SAMPLE.read_bytes().splitlines(keepends=True)[:2]))
    write_notebook(jupyter_server, NOTEBOOK, [SETUP])
    open_notebook(page, jupyter_server, NOTEBOOK)
    run_all(page, timeout=120)
    page.locator(".pikit-explorer .pikit-tree-row").first.wait_for(state="visible", timeout=30_000)
    page.locator(".pikit-live-status").wait_for(state="visible", timeout=30_000)
    assert "model not recorded" in page.locator(".pikit-explorer .pikit-budget-html").inner_text()
    first_entries = kernel_value(jupyter_server, "len(live.session)")
    first_leaf = kernel_value(jupyter_server, "explorer.leaf_id")
    first_view = rendered(page)
    assert first_view["rows"] > 0 and "live" in first_view["status"]
    # The replay script writes the session again from the start (a rewrite, reloaded), then a
    # line every few tenths of a second, while the notebook follows.
    replay = subprocess.Popen([sys.executable, "-m", "pikit.replay", str(root / "sample.jsonl"), str(target),
                               "--speed", "40", "--max-gap", "0.35", "--quiet", "--force"],
                              env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, cwd=REPO_ROOT)
    try:
        samples = []
        for _ in range(8):
            time.sleep(1.5)
            entries = kernel_value(jupyter_server, "len(live.session)")
            leaf = kernel_value(jupyter_server, "explorer.leaf_id")
            newest = kernel_value(jupyter_server, "live.session.entries[-1].id")
            samples.append((entries, leaf, newest, rendered(page)))
        screenshot(page, "live-follow")

        entries, leaf, newest, view = samples[-1]
        assert entries > first_entries, samples  # the kernel's session grew
        assert leaf != first_leaf, samples  # the kernel-side leaf moved on with it
        counts = [s[0] for s in samples]
        assert counts == sorted(counts)
        assert view["rows"] > first_view["rows"], (first_view, samples)  # the rendered tree grew
        # The browser marks the kernel's leaf (the newest entry, since nobody clicked elsewhere).
        page.wait_for_function(
            """(id) => { const l = document.querySelector('.pikit-explorer .pikit-tree-row.pikit-leaf');
                         return l && l.dataset.entryId === id; }""",
            arg=kernel_value(jupyter_server, "explorer.leaf_id"), timeout=60_000)
        assert kernel_value(jupyter_server, "explorer.live") is True
        assert kernel_value(jupyter_server, "live.engine") == "watchfiles"
        # The budget bar names the model the context names, in the kernel and on the page.
        model = kernel_value(jupyter_server, "explorer.context_view.header_view.model")
        assert model and kernel_value(jupyter_server, "explorer.budget.model") == model
        page.wait_for_function(
            """(model) => { const b = document.querySelector('.pikit-explorer .pikit-budget-html');
                            const c = document.querySelector('.pikit-explorer .pikit-context-header');
                            return b && c && b.textContent.includes(model) && c.textContent.includes(model)
                                   && !b.textContent.includes('model not recorded'); }""",
            arg=model, timeout=60_000)
    finally:
        replay.terminate()
        replay.wait(timeout=10)
        with contextlib.suppress(Exception):  # the kernel may be gone already; the follower thread is a daemon
            kernel_exec(jupyter_server, NOTEBOOK, "live.close()")
