"""Lone surrogates in ids and file names, through a real page and back: a click finds the right entry.

A lone surrogate cannot travel in a Jupyter message as text, so the kernel sends the tree's ids
(and the browser's paths) as JSON escapes in a binary buffer; the page's ``JSON.parse`` gives
them back as JavaScript strings and a click sends them to the kernel again. The hostile session
has two sibling entries whose ids differ only in a lone surrogate: clicking each must select it.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.jupyter import JupyterServer, kernel_exec, open_notebook, run_all, write_notebook
from tests.widgets.synthetic import hostile_session_lines, write_session

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

NOTEBOOK = "unicode_round_trip.ipynb"
CELLS = [textwrap.dedent("""\
    import os, pandas as pd, pikit
    from pikit.widgets import SessionBrowser, SessionExplorer
    from tests.widgets.synthetic import TWINS, UNSAFE
    explorer = SessionExplorer(pikit.load("unicode-hostile.jsonl"), mode="all")
    explorer"""), textwrap.dedent("""\
    undecodable = os.fsdecode(b"unicode-hostile-\\xff.jsonl")
    browser = SessionBrowser(pd.DataFrame([{"path": undecodable, "name": "n" + UNSAFE}], dtype=object))
    browser""")]


def _value(server: JupyterServer, expression: str) -> Any:
    return json.loads(kernel_exec(server, NOTEBOOK, f"import json as _j; print(_j.dumps({expression}))"))


@pytest.mark.browser
def test_clicks_send_back_ids_and_paths_with_lone_surrogates(page: Page, jupyter_server: JupyterServer) -> None:
    root = jupyter_server.root_dir
    write_session(root / "unicode-hostile.jsonl", hostile_session_lines())
    (Path(os.fsdecode(os.fsencode(root) + b"/unicode-hostile-\xff.jsonl"))
     .write_bytes((root / "unicode-hostile.jsonl").read_bytes()))
    write_notebook(jupyter_server, NOTEBOOK, CELLS)
    open_notebook(page, jupyter_server, NOTEBOOK)
    run_all(page)
    tree = page.locator(".pikit-explorer").first
    tree.locator(".pikit-tree-row").first.wait_for(state="visible")
    for twin in (1, 0):
        row = _value(jupyter_server, f"explorer.tree.row_ids.index(TWINS[{twin}])")
        cell = tree.locator(f'.pikit-tree-row[data-row="{row}"]')
        # The page holds the exact id: "twin " and the lone surrogate U+D800 or U+D801.
        assert cell.evaluate(f"(el) => el.dataset.entryId === 'twin ' + String.fromCharCode({0xD800 + twin})")
        cell.click()
        page.wait_for_function("(n) => document.querySelector(`.pikit-tree-row[data-row='${n}']`)"
                               ".classList.contains('pikit-leaf')", arg=row, timeout=60_000)
        assert _value(jupyter_server, f"[explorer.tree.selected_id == TWINS[{twin}], explorer.leaf_id == TWINS[{twin}]]"
                      ) == [True, True]
    shown = " ".join(tree.locator(".pikit-tree-row").all_text_contents())
    assert "^[]52;c;" in shown and "<U+202E>evil" in shown and "\u202e" not in shown  # visible, inert

    # The session browser: a row whose file name is not valid UTF-8 opens that very file.
    page.locator(".pikit-browser-row").first.click()
    page.locator(".pikit-session-browser .pikit-explorer").first.wait_for(state="visible", timeout=30_000)
    assert _value(jupyter_server, "browser.explorer.session.path == undecodable")
