"""What a class sees, in a real JupyterLab + Chromium: two compaction runs kept side by side in the
chart, the budget before and after, keyboard navigation in the tree, and nothing clipped.

Screenshots go to ``test-artifacts/`` (``teaching-*.png``).
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.jupyter import (
    REPO_ROOT,
    JupyterServer,
    kernel_exec,
    open_notebook,
    run_all,
    wait_for_kernel_output,
    write_notebook,
)
from tests.browser.test_explorer import kernel_value, save_element
from tests.widgets.synthetic import deep_session_lines, write_session

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

SAMPLE = "data/sample_sessions/refactor-auth.jsonl"
NOTEBOOK = "teaching.ipynb"
CELLS: list[str | tuple[str, str]] = [
    textwrap.dedent("""\
        import tempfile
        import pikit
        from pikit.compaction._settings import Settings
        from pikit.widgets import CompactionPanel, SessionExplorer
        session = pikit.load("data/sample_sessions/refactor-auth.jsonl")
        WINDOW, RESERVE, KEEP = 16_384, 3_000, 4_000"""),
    textwrap.dedent("""\
        panel = CompactionPanel(session, settings=Settings({}), output_dir=tempfile.mkdtemp(),
                                context_window=WINDOW, reserve_tokens=RESERVE, keep_recent_tokens=KEEP)
        panel"""),
    textwrap.dedent("""\
        explorer = SessionExplorer(session, context_window=WINDOW, reserve_tokens=RESERVE, keep_recent_tokens=KEEP)
        explorer"""),
    textwrap.dedent("""\
        deep = SessionExplorer(pikit.load("deep.jsonl"), mode="all")
        deep"""),
    textwrap.dedent("""\
        from pikit.widgets import ContextDiff
        last = panel.last_run
        ContextDiff(last.session, compaction=last.result.entry["id"]) if last else None
        """),
]
DIFF_CELL = 4


@pytest.fixture(scope="module")
def teaching(jupyter_server: JupyterServer) -> Path:
    root = jupyter_server.root_dir
    (root / SAMPLE).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO_ROOT / SAMPLE, root / SAMPLE)
    write_session(root / "deep.jsonl", deep_session_lines(60))
    write_notebook(jupyter_server, NOTEBOOK, CELLS)
    return root


@pytest.mark.browser
def test_two_runs_stay_in_the_chart(page: Page, jupyter_server: JupyterServer, teaching: Path) -> None:
    """Run a compaction twice from the button with different settings: both groups are in the chart."""
    open_notebook(page, jupyter_server, NOTEBOOK)
    run_all(page, timeout=180)
    panel = page.locator(".pikit-compaction-panel").first
    panel.wait_for(state="visible")
    run_button = panel.locator(".pikit-run-compaction")
    for number, (keep, reserve) in enumerate(((4_000, 3_000), (1_500, 6_000)), start=1):
        kernel_exec(jupyter_server, NOTEBOOK, f"panel.keep_recent_tokens = {keep}\npanel.reserve_tokens = {reserve}")
        page.wait_for_function("(v) => document.querySelector('.pikit-keep-slider .widget-readout')"
                               ".textContent.replace(/[^0-9]/g, '') === v", arg=str(keep), timeout=60_000)
        run_button.click()
        wait_for_kernel_output(jupyter_server, NOTEBOOK, "print(len(panel.runs), panel.status)", f"{number} done",
                               timeout=60)
    page.wait_for_function("() => document.querySelectorAll('.pikit-compaction-chart .pikit-chart-run').length === 2",
                           timeout=60_000)
    labels = panel.locator(".pikit-chart-run .pikit-chart-label").all_text_contents()
    assert labels == ["run 1", "run 2"]
    chart_text = panel.locator(".pikit-compaction-chart").text_content() or ""
    assert "keep 4k · reserve 3k · offline" in chart_text and "keep 1.5k · reserve 6k · offline" in chart_text
    groups = kernel_value(jupyter_server, NOTEBOOK,
                          "[[g.label, g.settings and [g.settings.keep_recent_tokens, g.settings.reserve_tokens, "
                          "g.settings.summarizer], [p.id for p in g.points]] for g in panel.chart_groups]")
    assert [g[0] for g in groups] == ["this branch", "run 1", "run 2"]
    assert groups[1][1] == [4_000, 3_000, "offline"] and groups[2][1] == [1_500, 6_000, "offline"]
    ids = kernel_value(jupyter_server, NOTEBOOK, "[r.result.entry['id'] for r in panel.runs]")
    assert [g[2] for g in groups[1:]] == [[ids[0]], [ids[1]]]
    for entry_id in ids:  # each run's bars are in the page
        assert panel.locator(f'.pikit-chart-run rect.pikit-chart-bar:has(title:text("{entry_id} tokensBefore"))'
                             ).count() == 1
    # The budget before and after the last run, one above the other.
    compared = panel.locator(".pikit-before-after .pikit-budget")
    assert compared.count() == 2
    boxes = [compared.nth(i).bounding_box() for i in range(2)]
    assert boxes[0] and boxes[1] and boxes[0]["y"] + boxes[0]["height"] <= boxes[1]["y"] + 1
    assert "Before run 2" in (compared.nth(0).text_content() or "")
    assert "After run 2" in (compared.nth(1).text_content() or "")
    # The chart spans the panel.
    chart_width = panel.locator(".pikit-compaction-chart svg").bounding_box()
    panel_width = panel.bounding_box()
    assert chart_width and panel_width and chart_width["width"] > 0.9 * panel_width["width"]
    # The threshold label is inside its bar, not cut off.
    for bar in panel.locator(".pikit-budget").all():
        mark, box = bar.locator(".pikit-mark-threshold").bounding_box(), bar.bounding_box()
        assert mark and box and mark["x"] >= box["x"] - 1 and mark["x"] + mark["width"] <= box["x"] + box["width"] + 1
    save_element(page, panel, "teaching-01-panel-after-two-runs")

    # The before/after diff of the last run shows only what the compaction changed.
    page.evaluate("""async (index) => {
        const notebook = window.jupyterapp.shell.currentWidget;
        notebook.content.activeCellIndex = index;
        await window.jupyterapp.commands.execute('notebook:run-cell');
    }""", DIFF_CELL)
    diff = page.locator(".pikit-context-diff").first
    diff.wait_for(state="visible", timeout=30_000)
    changed = diff.locator('tr.pikit-diff-row[data-status="added"], tr.pikit-diff-row[data-status="removed"]')
    assert changed.count() > 0
    assert changed.locator(".pikit-kind-system").count() == 0
    assert diff.locator('tr[data-status="added"][data-note="summary"]').count() == 1
    assert diff.locator('tr[data-status="removed"][data-note="summarized"]').count() > 0
    assert diff.locator('tr[data-status="same"] .pikit-kind-system').count() == 1
    save_element(page, diff, "teaching-05-diff-of-the-last-run")

    # Clearing removes the runs from the chart (Python side and page).
    panel.locator(".pikit-clear-runs").click()
    wait_for_kernel_output(jupyter_server, NOTEBOOK, "print(len(panel.runs))", "0")
    page.wait_for_function("() => document.querySelectorAll('.pikit-compaction-chart .pikit-chart-run').length === 0",
                           timeout=60_000)


KEY_FOCUS = "() => Number(document.querySelector('.pikit-explorer .pikit-tree').dataset.focusRow)"


@pytest.mark.browser
def test_tree_keyboard_and_layout(page: Page, jupyter_server: JupyterServer, teaching: Path) -> None:
    """Arrows move, Enter selects, "/" jumps to the search; nothing is clipped or scrolls sideways."""
    open_notebook(page, jupyter_server, NOTEBOOK)
    run_all(page, timeout=180)
    explorer = page.locator(".pikit-explorer").first
    explorer.wait_for(state="visible")
    explorer.scroll_into_view_if_needed()
    viewport = explorer.locator(".pikit-tree-viewport")
    viewport.focus()
    anchor = kernel_value(jupyter_server, NOTEBOOK, "explorer.tree.anchor_row")
    page.wait_for_function(f"() => ({KEY_FOCUS})() === {anchor}", timeout=60_000)
    viewport.press("Home")
    viewport.press("ArrowDown")
    viewport.press("ArrowDown")
    viewport.press("ArrowDown")
    viewport.press("ArrowUp")
    assert page.evaluate(KEY_FOCUS) == 2
    viewport.press("Enter")
    ids = kernel_value(jupyter_server, NOTEBOOK, "explorer.tree.row_ids")
    wait_for_kernel_output(jupyter_server, NOTEBOOK, "print(explorer.selected_id)", str(ids[2]))
    expected = kernel_value(jupyter_server, NOTEBOOK, f"pikit._tree.tree.selection(session.by_id[{ids[2]!r}])[0]")
    assert kernel_value(jupyter_server, NOTEBOOK, "explorer.leaf_id") == expected
    # Left goes to the parent row.
    parent_row = kernel_value(jupyter_server, NOTEBOOK, "explorer.tree.rows[2][2]")
    viewport.press("ArrowLeft")
    assert page.evaluate(KEY_FOCUS) == parent_row
    # "/" jumps to the search box; typing there searches.
    viewport.press("/")
    search = explorer.locator(".pikit-search input")
    assert search.evaluate("(input) => document.activeElement === input")
    search.fill("strategy")
    search.press("Enter")
    wait_for_kernel_output(jupyter_server, NOTEBOOK, "print(explorer.tree.search)", "strategy")
    hidden = kernel_value(jupyter_server, NOTEBOOK, "explorer.hidden")
    assert hidden > 0
    page.wait_for_function("(n) => document.querySelector('.pikit-explorer .pikit-tree-status').textContent"
                           ".includes(`${n} of `)", arg=f"{hidden:,}", timeout=60_000)
    save_element(page, explorer, "teaching-02-explorer-search")

    # Layout: the count-all button is not cut short; the left pane does not scroll sideways.
    kernel_exec(jupyter_server, NOTEBOOK, "explorer.context_view.count_button.layout.display = None")
    button = explorer.locator(".pikit-count-all")
    button.wait_for(state="visible", timeout=60_000)
    assert button.evaluate("(b) => b.scrollWidth <= b.clientWidth + 1")
    assert "count all" in (button.text_content() or "")
    for pane in explorer.locator(".pikit-explorer-pane").all():
        assert pane.evaluate("(p) => p.scrollWidth <= p.clientWidth + 1")
    assert explorer.evaluate("(e) => e.scrollWidth <= e.clientWidth + 1")
    save_element(page, explorer, "teaching-03-explorer-count-all")


@pytest.mark.browser
def test_deep_rows_keep_their_text(page: Page, jupyter_server: JupyterServer, teaching: Path) -> None:
    """Rows 100+ levels deep still show most of their text, and say how deep they are."""
    open_notebook(page, jupyter_server, NOTEBOOK)
    run_all(page, timeout=180)
    tree = page.locator(".pikit-explorer").nth(1).locator(".pikit-tree")
    tree.scroll_into_view_if_needed()
    deepest = kernel_value(jupyter_server, NOTEBOOK,
                           "max(range(len(deep.tree.rows)), key=lambda i: deep.tree.rows[i][1])")
    level = kernel_value(jupyter_server, NOTEBOOK, f"deep.tree.rows[{deepest}][1]")
    assert level > 100
    height = kernel_value(jupyter_server, NOTEBOOK, "deep.tree.row_height")
    tree.locator(".pikit-tree-viewport").evaluate("(el, top) => { el.scrollTop = top; }",
                                                  max(0, deepest * height - 120))
    row = tree.locator(f'.pikit-tree-row[data-row="{deepest}"]')
    row.wait_for(state="visible", timeout=60_000)
    widths = row.evaluate("""(r) => ({row: r.getBoundingClientRect().width,
        text: r.querySelector('.pikit-tree-text').getBoundingClientRect().width,
        indent: r.querySelector('.pikit-tree-indent').getBoundingClientRect().width,
        depth: (r.querySelector('.pikit-tree-depth') || {}).textContent})""")
    assert widths["indent"] <= 0.21 * widths["row"], widths
    assert widths["text"] >= 0.4 * widths["row"], widths
    assert widths["depth"] == f"↳{level}"
    save_element(page, tree, "teaching-04-deep-tree")


OVERSIZED_NB = "oversized.ipynb"
OVERSIZED_CELLS: list[str | tuple[str, str]] = [
    textwrap.dedent("""\
        import os, tempfile
        import pikit
        from pikit.compaction._settings import Settings
        from pikit.compaction._summarizer import SummaryResult
        from pikit.widgets import CompactionPanel

        class Verbose:
            name = "verbose"
            calls = 0
            def summarize(self, request):
                Verbose.calls += 1
                return SummaryResult("## Goal\\n" + "word " * 200_000, None)

        out = tempfile.mkdtemp()
        panel = CompactionPanel(pikit.load("data/sample_sessions/refactor-auth.jsonl"), settings=Settings({}),
                                output_dir=out, summarizer=Verbose(), keep_recent_tokens=4_000)
        panel"""),
]


@pytest.mark.browser
def test_a_larger_summary_is_refused_then_written_on_request(page: Page, jupyter_server: JupyterServer,
                                                              teaching: Path) -> None:
    """Run compaction with a summary larger than what it replaces: the panel shows the numbers and
    writes nothing; **Write it anyway** writes that summary without a second summarizer call."""
    write_notebook(jupyter_server, OVERSIZED_NB, OVERSIZED_CELLS)
    open_notebook(page, jupyter_server, OVERSIZED_NB)
    run_all(page, timeout=180)
    panel = page.locator(".pikit-compaction-panel").first
    panel.wait_for(state="visible")
    anyway = panel.locator(".pikit-write-anyway")
    assert not anyway.is_visible()
    panel.locator(".pikit-run-compaction").click()
    wait_for_kernel_output(jupyter_server, OVERSIZED_NB, "print(panel.status, os.listdir(out))", "refused []",
                           timeout=60)
    status = panel.locator(".pikit-compaction-status")
    status.locator(".pikit-error").wait_for(state="visible", timeout=60_000)
    text = status.text_content() or ""
    numbers = kernel_value(jupyter_server, OVERSIZED_NB,
                           "[f'{panel.refused_result.summary_tokens:,}', f'{panel.refused_result.replaced_tokens:,}']")
    assert "larger than what it replaces" in text and "nothing written" in text
    assert f"({numbers[0]} tokens)" in text and f"({numbers[1]} tokens)" in text
    calls = kernel_value(jupyter_server, OVERSIZED_NB, "Verbose.calls")
    anyway.wait_for(state="visible", timeout=60_000)
    save_element(page, panel, "teaching-06-larger-summary-refused")
    anyway.click()
    wait_for_kernel_output(jupyter_server, OVERSIZED_NB, "print(panel.status, len(os.listdir(out)), Verbose.calls)",
                           f"done 1 {calls}", timeout=60)
    panel.locator(".pikit-compaction-done").wait_for(state="visible", timeout=60_000)
    assert not anyway.is_visible()
