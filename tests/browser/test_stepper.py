"""The compaction stepper of notebook 03 in JupyterLab + Chromium: step through it with real clicks
and keys, and check the highlighted entries on the page against ``prepare_compaction`` in the kernel.

Also: the explorer and the compaction panel open the stepper (and the explorer's tree and context
highlight each step's entries), and a session full of script-bearing HTML renders as text at
every step. Screenshots of the stepper at three steps (and opened from the explorer and the panel)
go to ``test-artifacts/stepper-*.png``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.jupyter import REPO_ROOT, JupyterServer, kernel_exec, open_notebook, run_all, wait_for_kernel_output
from tests.browser.test_explorer import kernel_value, save_element

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Locator, Page

NOTEBOOK_03 = "notebooks/03-compaction-step-by-step.ipynb"
SAMPLE = "data/sample_sessions/refactor-auth.jsonl"

# What each step must highlight, computed in the kernel from prepare_compaction (and, for the
# walk, from the estimates of the context entries: the suffix that first reaches the budget).
EXPECTED = """
import json as _j
from pikit.compaction._preparation import prepare_compaction as _prepare
_ctx = session.context(stepper.leaf_id)
_prep = _prepare(_ctx.path, stepper.keep_recent_tokens, _ctx)
_ids = [pe.entry.id for pe in _ctx.entries]
_start = 1 if _prep.previous_compaction is not None else 0
_reached = next(i for i in range(len(_ids) - 1, _start - 1, -1)
                if sum(pe.tokens for pe in _ctx.entries[i:]) >= stepper.keep_recent_tokens)
_prefix = _ids[_prep.turn_start_index:_prep.first_kept_index] if _prep.is_split_turn else [_prep.first_kept_entry_id]
print(_j.dumps({"1": _ids[_reached:], "2": [_ids[_reached]], "3": [_prep.first_kept_entry_id], "4": _prefix,
                "5": _prep.summarized_entry_ids, "6": _prep.summarized_entry_ids,
                "kept": [pe.entry.id for pe in _ctx.entries[_prep.first_kept_index:] if pe.messages]}))
"""


@pytest.fixture(scope="module")
def workspace(jupyter_server: JupyterServer) -> Path:
    """Notebook 03 and the sample session it reads, in the server root (the repository's layout)."""
    root = jupyter_server.root_dir
    for relative in (NOTEBOOK_03, SAMPLE):
        source = REPO_ROOT / relative
        if not source.is_file():
            pytest.fail(f"{relative} is missing from the repository")
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, root / relative)
    return root


def highlighted_on_page(stepper: Locator) -> tuple[list[str], int]:
    """The highlighted rows the page shows, and how many highlighted entries its folds hide."""
    shown = stepper.locator("tr.pikit-step-hl").evaluate_all("(rows) => rows.map((r) => r.dataset.entryId)")
    folded = stepper.locator("tr.pikit-step-fold").evaluate_all(
        "(rows) => rows.reduce((n, r) => n + Number(r.dataset.highlighted), 0)")
    return shown, folded


def wait_for_step(page: Page, server: JupyterServer, number: int, notebook: str = NOTEBOOK_03) -> None:
    """Until the kernel (its ``stepper``) and the page both show step ``number``."""
    wait_for_kernel_output(server, notebook, "print(stepper.step)", str(number))
    page.wait_for_function(
        "(n) => !!document.querySelector(`.pikit-stepper .pikit-step[data-step=\"${n}\"]`)", arg=number,
        timeout=60_000)


def check_highlights(page: Page, server: JupyterServer, stepper: Locator, number: int,
                     expected: dict[str, Any]) -> list[str]:
    kernel = kernel_value(server, NOTEBOOK_03, "list(stepper.highlighted)")
    shown, folded = highlighted_on_page(stepper)
    if number == 7:
        new_id = kernel_value(server, NOTEBOOK_03, "stepper.result.entry['id']")
        want = [new_id, *expected["kept"]]
    elif number == 3:
        want = kernel  # the nearest cut point and the final cut: the last one is prepare_compaction's
        assert kernel[-1] == expected["3"][0]
    else:
        want = expected[str(number)]
    assert kernel == want, f"step {number}: the stepper highlights {kernel}, prepare_compaction says {want}"
    assert set(shown) <= set(want), f"step {number}: {sorted(set(shown) - set(want))} highlighted by mistake"
    assert len(shown) + folded == len(want), f"step {number}: {len(shown)} shown + {folded} folded != {len(want)}"
    assert len(set(shown)) == len(shown)
    return shown


@pytest.mark.browser
def test_notebook_03_steps_through_a_compaction(page: Page, jupyter_server: JupyterServer, workspace: Path) -> None:
    nb = NOTEBOOK_03
    open_notebook(page, jupyter_server, nb)
    run_all(page, timeout=240)
    stepper = page.locator(".pikit-stepper").first
    stepper.wait_for(state="visible", timeout=30_000)
    stepper.scroll_into_view_if_needed()
    kernel_exec(jupyter_server, nb, "assert stepper.step == 1 and stepper.status == 'ready'")
    expected = _load_expected(jupyter_server)
    assert expected["2"][0] == kernel_value(jupyter_server, nb, "stepper.trace.preparation.projection.entries"
                                                                "[stepper.trace.cut.reached_index].entry.id")

    back = stepper.locator(".pikit-step-back button, button.pikit-step-back").first
    forward = stepper.locator(".pikit-step-next button, button.pikit-step-next").first
    assert back.is_disabled() and forward.is_enabled()
    wait_for_step(page, jupyter_server, 1)
    check_highlights(page, jupyter_server, stepper, 1, expected)
    assert stepper.locator("th", has_text="running sum").count() == 1
    save_element(page, stepper, "stepper-step1-walk")

    # Step 2 with the → key (the focus anywhere in the stepper), steps 3 and 4 with the Next button.
    stepper.locator(".pikit-step-sentence").click()
    page.keyboard.press("ArrowRight")
    wait_for_step(page, jupyter_server, 2)
    check_highlights(page, jupyter_server, stepper, 2, expected)
    for number in (3, 4):
        forward.click()
        wait_for_step(page, jupyter_server, number)
        check_highlights(page, jupyter_server, stepper, number, expected)
    sentence = stepper.locator(".pikit-step-sentence").inner_text()
    split = kernel_value(jupyter_server, nb, "stepper.trace.preparation.is_split_turn")
    assert ("turn prefix" in sentence) if split else ("no turn is split" in sentence)
    save_element(page, stepper, "stepper-step4-split-turn")

    # Step 5 from the keyboard: Tab to the Next button, press Enter.
    forward.focus()
    page.keyboard.press("Enter")
    wait_for_step(page, jupyter_server, 5)
    check_highlights(page, jupyter_server, stepper, 5, expected)
    assert "<read-files>" in stepper.locator(".pikit-step-text").inner_text() or \
        "no file" in stepper.locator(".pikit-step-text").inner_text()

    # Steps 6 and 7 with the slider's keyboard handle: the summary is written on the way.
    handle = stepper.locator(".pikit-step-slider .noUi-handle, .pikit-step-slider [role=slider]").first
    handle.focus()
    page.keyboard.press("ArrowRight")
    wait_for_step(page, jupyter_server, 6)
    check_highlights(page, jupyter_server, stepper, 6, expected)
    summary = kernel_value(jupyter_server, nb, "stepper.result.entry['summary']")
    assert summary.splitlines()[0] in stepper.locator(".pikit-step-text").inner_text()
    page.keyboard.press("ArrowRight")
    wait_for_step(page, jupyter_server, 7)
    check_highlights(page, jupyter_server, stepper, 7, expected)
    after = kernel_value(jupyter_server, nb, "stepper.result.tokens_after")
    assert f"{after:,}" in stepper.locator(".pikit-step-figures").inner_text()
    assert forward.is_disabled()
    save_element(page, stepper, "stepper-step7-new-context")

    # Back goes back; a new keepRecentTokens typed in the box moves the cut, still as prepare_compaction says.
    back.click()
    wait_for_step(page, jupyter_server, 6)
    box = stepper.locator(".pikit-step-keep input")
    box.fill("2500")
    box.press("Enter")
    wait_for_kernel_output(jupyter_server, nb, "print(stepper.keep_recent_tokens)", "2500")
    kernel_exec(jupyter_server, nb, "stepper.step = 5")
    wait_for_step(page, jupyter_server, 5)
    check_highlights(page, jupyter_server, stepper, 5, _load_expected(jupyter_server))


def _load_expected(server: JupyterServer) -> dict[str, Any]:
    import json

    return json.loads(kernel_exec(server, NOTEBOOK_03, EXPECTED))


REACH_NB = "stepper_reach.ipynb"
REACH_CELLS = [
    "import tempfile\nimport pikit\nfrom pikit.compaction._settings import Settings\n"
    "from pikit.widgets import CompactionPanel, SessionExplorer\n"
    f"session = pikit.load({SAMPLE!r})\nWORK = tempfile.mkdtemp(prefix='pikit-stepper-')",
    "explorer = SessionExplorer(session, keep_recent_tokens=4000)\nexplorer",
    "panel = CompactionPanel(session, settings=Settings({}), keep_recent_tokens=3000, output_dir=WORK)\npanel",
]


@pytest.mark.browser
def test_explorer_and_panel_open_the_stepper(page: Page, jupyter_server: JupyterServer, workspace: Path) -> None:
    from tests.browser.jupyter import write_notebook

    write_notebook(jupyter_server, REACH_NB, REACH_CELLS)
    open_notebook(page, jupyter_server, REACH_NB)
    run_all(page, timeout=180)

    # The explorer: Step through opens a stepper on its leaf; a leaf move in the kernel moves it too.
    explorer = page.locator(".pikit-explorer").first
    explorer.locator(".pikit-open-stepper").first.click()
    stepper = explorer.locator(".pikit-stepper").first
    stepper.wait_for(state="visible", timeout=20_000)
    leaf = kernel_value(jupyter_server, REACH_NB, "explorer.leaf_id")
    assert kernel_value(jupyter_server, REACH_NB, "explorer.stepper.leaf_id") == leaf
    assert leaf in stepper.locator(".pikit-step-header").inner_text()
    other = kernel_value(jupyter_server, REACH_NB, "session.branch()[-20].id")
    kernel_exec(jupyter_server, REACH_NB, f"explorer.leaf_id = {other!r}")
    page.wait_for_function("([el, t]) => el.innerText.includes(t)",
                           arg=[stepper.locator(".pikit-step-header").element_handle(), other], timeout=60_000)
    walked = kernel_value(jupyter_server, REACH_NB, "list(explorer.stepper.highlighted)")
    shown, folded = highlighted_on_page(stepper)
    assert set(shown) <= set(walked) and len(shown) + folded == len(walked)
    # The walked entries are highlighted in the explorer's own context view and tree, the others not.
    page.wait_for_function(
        "([scope, id]) => { const td = document.querySelector("
        "`${scope} .pikit-context-body tr[data-entry-id=\"${id}\"] > td`);"
        " return td && getComputedStyle(td).boxShadow !== 'none'; }", arg=[".pikit-explorer", other], timeout=60_000)
    styled = page.evaluate(
        "(scope) => Array.from(document.querySelectorAll(`${scope} .pikit-context-body tr[data-entry-id]`))"
        ".filter((tr) => getComputedStyle(tr.cells[0]).boxShadow !== 'none').map((tr) => tr.dataset.entryId)",
        ".pikit-explorer")
    assert styled and set(styled) <= set(walked)
    tree_lit = page.evaluate(
        "(scope) => Array.from(document.querySelectorAll(`${scope} .pikit-tree-row`))"
        ".filter((r) => getComputedStyle(r).boxShadow !== 'none').map((r) => r.dataset.entryId)", ".pikit-explorer")
    assert set(tree_lit) <= set(walked)
    save_element(page, explorer, "stepper-in-explorer-step1")

    # The panel: Step through, then Next to the summary, written by the panel's summarizer.
    panel = page.locator(".pikit-compaction-panel").first
    panel.scroll_into_view_if_needed()
    panel.locator(".pikit-open-stepper").first.click()
    panel_stepper = panel.locator(".pikit-stepper").first
    panel_stepper.wait_for(state="visible", timeout=20_000)
    assert kernel_value(jupyter_server, REACH_NB, "panel.stepper.keep_recent_tokens") == 3000
    forward = panel_stepper.locator(".pikit-step-next button, button.pikit-step-next").first
    for number in range(2, 7):
        forward.click()
        wait_for_kernel_output(jupyter_server, REACH_NB, "print(panel.stepper.step)", str(number))
    page.wait_for_function("(el) => el.querySelector('.pikit-step[data-step=\"6\"] .pikit-step-text') !== null",
                           arg=panel_stepper.element_handle(), timeout=60_000)
    assert kernel_value(jupyter_server, REACH_NB, "panel.stepper.status") == "ready"
    assert kernel_value(jupyter_server, REACH_NB, "panel.stepper.result.preparation.keep_recent_tokens") == 3000
    save_element(page, panel_stepper, "stepper-from-panel-step6-summary")
    kernel_exec(jupyter_server, REACH_NB, "import shutil; shutil.rmtree(WORK)")


HOSTILE_STEPPER_NB = "stepper_hostile.ipynb"


@pytest.mark.browser
def test_hostile_session_steps_render_as_text(page: Page, jupyter_server: JupyterServer, workspace: Path) -> None:
    """Every step of a session full of <script> and <img onerror> shows them as text; nothing runs."""
    from tests.browser.jupyter import write_notebook
    from tests.widgets.synthetic import PAYLOAD, hostile_session_lines, write_session

    write_session(workspace / "stepper-hostile.jsonl", hostile_session_lines())
    write_notebook(jupyter_server, HOSTILE_STEPPER_NB, [
        "import pikit\nfrom pikit.widgets import CompactionStepper, SessionExplorer\n"
        "hostile = pikit.load('stepper-hostile.jsonl')\n"
        "leaf = next(e.id for e in reversed(hostile.entries) if e.type == 'message')",
        "explorer = SessionExplorer(hostile, leaf, mode='all')\nstepper = explorer.open_stepper()\n"
        "stepper.keep_recent_tokens = 1\nexplorer",
    ])
    open_notebook(page, jupyter_server, HOSTILE_STEPPER_NB)
    run_all(page, timeout=180)
    stepper = page.locator(".pikit-stepper").first
    stepper.wait_for(state="visible", timeout=20_000)
    texts = []
    for number in range(1, 8):
        kernel_exec(jupyter_server, HOSTILE_STEPPER_NB, f"stepper.step = {number}")
        wait_for_step(page, jupyter_server, number, HOSTILE_STEPPER_NB)
        texts.append(stepper.text_content() or "")
    page.wait_for_timeout(800)  # time for an (incorrectly) injected <img onerror> to fire
    assert page.evaluate("() => typeof window.__pikit_pwned") == "undefined"
    assert stepper.locator("script").count() == 0 and stepper.locator("img").count() == 0
    assert any(PAYLOAD in text for text in texts), "the payload is shown, as text"
    assert kernel_value(jupyter_server, HOSTILE_STEPPER_NB, "stepper.status") == "ready"

