"""A click on a tree row counts even when the row is painted again between the press and the release.

The tree keeps only the rows in view in the DOM and paints them anew on a scroll, a resize or a
model change. A paint that lands between the press and the release (a page busy laying itself
out) replaces the element pressed, and the browser then fires no click at all: the press and the
release on the same row must still select it, once.
"""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.jupyter import JupyterServer, kernel_exec, open_notebook, run_all, write_notebook
from tests.widgets.synthetic import big_session_lines, write_session

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Locator, Page

NOTEBOOK = "tree_clicks.ipynb"
CELLS = [textwrap.dedent("""\
    import pikit
    from pikit.widgets import SessionExplorer
    explorer = SessionExplorer(pikit.load("tree-clicks.jsonl"), mode="all")
    selected = []
    explorer.tree.on_select(lambda entry_id, _text: selected.append(entry_id))
    explorer""")]


def _value(server: JupyterServer, expression: str) -> Any:
    return json.loads(kernel_exec(server, NOTEBOOK, f"import json as _j; print(_j.dumps({expression}))"))


def _wait_selected(page: Page, row: int) -> None:
    """Wait (a hang guard of a minute) until the row carries the selection mark the kernel sends back."""
    page.wait_for_function("(n) => document.querySelector(`.pikit-tree-row[data-row='${n}']`)"
                           ".classList.contains('pikit-selected')", arg=row, timeout=60_000)


def _press_repaint_release(page: Page, tree: Locator, row: int) -> None:
    """Press the mouse on a row, let the tree paint (as a scroll does), then release it on the same spot."""
    cell = tree.locator(f'.pikit-tree-row[data-row="{row}"]')
    box = cell.bounding_box()
    assert box is not None
    pressed = cell.element_handle()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    tree.locator(".pikit-tree-viewport").dispatch_event("scroll")
    page.wait_for_function("(el) => !el.isConnected", arg=pressed, timeout=60_000)  # replaced by the paint
    page.mouse.up()


@pytest.mark.browser
def test_a_press_and_release_across_a_repaint_select_the_row_once(page: Page, jupyter_server: JupyterServer) -> None:
    write_session(jupyter_server.root_dir / "tree-clicks.jsonl", big_session_lines(40, fork_every=1000))
    write_notebook(jupyter_server, NOTEBOOK, CELLS)
    open_notebook(page, jupyter_server, NOTEBOOK)
    run_all(page)
    tree = page.locator(".pikit-explorer").first
    tree.locator(".pikit-tree-row").first.wait_for(state="visible")
    first, second = rows = [_value(jupyter_server, "explorer.tree.leaf_row") - n for n in (3, 5)]  # in view
    ids = [_value(jupyter_server, f"explorer.tree.row_ids[{row}]") for row in rows]

    _press_repaint_release(page, tree, first)
    _wait_selected(page, first)
    tree.locator(f'.pikit-tree-row[data-row="{second}"]').click()  # a plain click: no repaint in between
    _wait_selected(page, second)
    # One selection each, in order: the release selected the row pressed, and no click repeated it.
    assert _value(jupyter_server, "selected") == ids
