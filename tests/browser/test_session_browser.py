"""The session browser in a real JupyterLab + Chromium: notebook 04, a click from the table into the explorer."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.jupyter import REPO_ROOT, JupyterServer, kernel_exec, open_notebook, run_all, screenshot

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

NOTEBOOK_04 = "notebooks/04-a-corpus-of-sessions.ipynb"


@pytest.fixture(scope="module")
def workspace(jupyter_server: JupyterServer) -> Path:
    """Notebook 04 and the sample corpus in the server root (the repository's relative layout)."""
    root = jupyter_server.root_dir
    (root / "notebooks").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO_ROOT / NOTEBOOK_04, root / NOTEBOOK_04)
    shutil.copytree(REPO_ROOT / "data" / "sample_corpus" / "sessions", root / "data" / "sample_corpus" / "sessions",
                    dirs_exist_ok=True)
    return root


def _value(server: JupyterServer, expression: str) -> Any:
    return json.loads(kernel_exec(server, NOTEBOOK_04, f"import json as _j; print(_j.dumps({expression}))"))


@pytest.mark.browser
def test_click_a_session_row_opens_the_explorer(page: Page, jupyter_server: JupyterServer, workspace: Path) -> None:
    open_notebook(page, jupyter_server, NOTEBOOK_04)
    run_all(page, timeout=240)
    table = page.locator(".pikit-browser").first
    table.wait_for(state="visible", timeout=30_000)
    kernel_exec(jupyter_server, NOTEBOOK_04, "browser.selected_path = ''")
    assert _value(jupyter_server, "browser.explorer is None")

    # sort by cost, most expensive first: the heading click is handled in the page
    table.locator('.pikit-browser-heading[data-column="6"]').click()
    page.wait_for_function("() => document.querySelector('.pikit-browser-heading[data-column=\"6\"]')"
                           ".textContent.includes('▼')", timeout=60_000)
    assert _value(jupyter_server, "[browser.table.sort_column, browser.table.sort_descending]") == [6, True]
    # search keeps the sessions whose messages hold the words: those of corpus.search (and pikit sessions
    # --search), not those whose shown columns do
    table.locator(".pikit-browser-search").fill("makefile")
    found = _value(jupyter_server, "sorted(corpus.search_sessions('makefile'))")
    assert 2 < len(found) < 37
    count = table.locator(".pikit-browser-count")
    page.wait_for_function("n => document.querySelector('.pikit-browser-count').textContent === n + ' of 37 sessions'",
                           arg=str(len(found)), timeout=20_000)
    assert _value(jupyter_server, "browser.table.shown_count") == len(found)
    shown = table.locator(".pikit-browser-row").evaluate_all("rows => rows.map(r => r.dataset.path)")
    assert shown and set(shown) <= set(found)
    table.locator(".pikit-browser-search").fill("anthropic")  # in the models column, in no message
    page.wait_for_function("() => document.querySelector('.pikit-browser-count').textContent === '0 of 37 sessions'",
                           timeout=20_000)
    assert count.text_content() == "0 of 37 sessions"
    table.locator(".pikit-browser-search").fill("")
    page.wait_for_function("() => document.querySelectorAll('.pikit-browser-row').length >= 10", timeout=60_000)

    first = table.locator(".pikit-browser-row").first
    path = first.get_attribute("data-path")
    first.click()
    page.locator(".pikit-session-browser .pikit-explorer").first.wait_for(state="visible", timeout=30_000)
    assert _value(jupyter_server, "browser.selected_path") == path
    assert _value(jupyter_server, "str(browser.explorer.session.path)") == path
    costliest = _value(jupyter_server, "max(browser.table.rows, key=lambda r: r[7])[0]")
    assert path == costliest
    # under the table: the session's id and the command that resumes it, in a field to select or copy
    command = table.locator(".pikit-browser-command")
    command.wait_for(state="visible", timeout=60_000)
    assert command.input_value() == f"pi --session {shlex.quote(path)}"
    assert command.get_attribute("readonly") is not None
    session_id = _value(jupyter_server, "str(corpus.sessions.set_index('path').session_id[browser.selected_path])")
    assert table.locator(".pikit-browser-id").text_content() == session_id
    assert table.locator(".pikit-browser-copy").is_visible()
    page.locator(".pikit-session-browser .pikit-tree-row").first.wait_for(state="visible", timeout=30_000)
    page.locator(".pikit-session-browser").first.scroll_into_view_if_needed()
    screenshot(page, "session-browser-click")
