"""Self-test of the real-browser harness: JupyterLab + Chromium + ipywidgets/anywidget + kernel_exec.

The browser tests drive a small notebook exactly like a user would (open, run all, click) and
check the Python side through :func:`kernel_exec` on the very kernel the page is using.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser import jupyter as harness
from tests.browser.jupyter import (
    JupyterServer,
    KernelExecError,
    kernel_exec,
    open_notebook,
    run_all,
    screenshot,
    wait_for_kernel_output,
    write_notebook,
)

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

NOTEBOOK = "harness_selftest.ipynb"
PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'

CELLS: list[str | tuple[str, str]] = [
    ("markdown", "# pikit browser-harness self-test"),
    textwrap.dedent(
        """\
        import html

        import ipywidgets as widgets

        clicks = 0
        counter = widgets.IntText(value=0, description="Clicks")
        counter.add_class("harness-counter")
        button = widgets.Button(description="Harness increment", tooltip="harness increment")
        button.add_class("harness-button")


        def on_click(_button):
            global clicks
            clicks += 1
            counter.value = clicks


        button.on_click(on_click)
        widgets.VBox([button, counter])
        """
    ),
    textwrap.dedent(
        f"""\
        PAYLOAD = {PAYLOAD!r}
        escaped = widgets.HTML(value=html.escape(PAYLOAD))
        escaped.add_class("harness-escaped")
        escaped
        """
    ),
    textwrap.dedent(
        '''\
        import anywidget
        import traitlets


        class HarnessCounter(anywidget.AnyWidget):
            _esm = """
            function render({ model, el }) {
              const button = document.createElement("button");
              button.className = "harness-any-button";
              button.setAttribute("aria-label", "harness anywidget increment");
              const update = () => { button.textContent = `count is ${model.get("value")}`; };
              button.addEventListener("click", () => {
                model.set("value", model.get("value") + 1);
                model.save_changes();
              });
              model.on("change:value", update);
              update();
              el.appendChild(button);
            }
            export default { render };
            """
            value = traitlets.Int(0).tag(sync=True)


        any_counter = HarnessCounter()
        any_counter
        '''
    ),
]


@pytest.fixture(scope="module")
def notebook(jupyter_server: JupyterServer) -> str:
    """Write the self-test notebook into the server's root dir; return its name."""
    write_notebook(jupyter_server, NOTEBOOK, CELLS)
    return NOTEBOOK


@pytest.fixture
def ready_page(page: Page, jupyter_server: JupyterServer, notebook: str) -> Page:
    """The self-test notebook opened in JupyterLab with every cell executed."""
    open_notebook(page, jupyter_server, notebook)
    run_all(page)
    return page


# ------------------------------------------------------------------------------------------
# Browser tests
# ------------------------------------------------------------------------------------------


@pytest.mark.browser
def test_button_click_changes_python_state(ready_page: Page, jupyter_server: JupyterServer) -> None:
    """Clicking an ipywidgets.Button in Chromium runs its on_click handler in the kernel."""
    page = ready_page
    assert kernel_exec(jupyter_server, NOTEBOOK, "print(clicks, counter.value)") == "0 0\n"

    button = page.locator(".harness-button")
    button.click()
    button.click()

    wait_for_kernel_output(jupyter_server, NOTEBOOK, "print(clicks, counter.value)", "2 2")
    # The handler's trait change comes back to the browser view too.
    page.wait_for_function(
        "() => document.querySelector('.harness-counter input').value === '2'", timeout=60_000
    )
    screenshot(page, "harness-selftest")


@pytest.mark.browser
def test_escaped_html_renders_as_text(ready_page: Page, jupyter_server: JupyterServer) -> None:
    """An html.escape'd payload in widgets.HTML is shown literally and executes nothing."""
    page = ready_page
    widget = page.locator(".harness-escaped")
    widget.wait_for()
    text = widget.inner_text()
    assert "<script>window.__pwned=1</script>" in text
    assert '<img src=x onerror="window.__pwned=2">' in text
    assert widget.locator("img, script").count() == 0
    page.wait_for_timeout(500)  # give a (wrongly) injected <img onerror> time to fire
    assert page.evaluate("() => typeof window.__pwned") == "undefined"

    # Control: the same payload unescaped does execute, so the check above is not vacuous.
    # (This also shows kernel_exec-driven trait changes reach the browser view.)
    kernel_exec(jupyter_server, NOTEBOOK, "escaped.value = PAYLOAD")
    page.wait_for_function("() => window.__pwned === 2", timeout=60_000)


@pytest.mark.browser
def test_anywidget_click_syncs_trait(ready_page: Page, jupyter_server: JupyterServer) -> None:
    """An anywidget with inline _esm renders, and its browser-side click syncs a traitlet."""
    page = ready_page
    button = page.locator(".harness-any-button")
    button.wait_for()
    assert button.inner_text() == "count is 0"
    for _ in range(3):
        button.click()

    wait_for_kernel_output(jupyter_server, NOTEBOOK, "print(any_counter.value)", "3")
    kernel_exec(jupyter_server, NOTEBOOK, "any_counter.value = 41")
    page.wait_for_function(
        "() => document.querySelector('.harness-any-button').textContent === 'count is 41'",
        timeout=60_000,
    )
    screenshot(page, "harness-selftest-anywidget")


@pytest.mark.browser
def test_kernel_exec_reports_errors(ready_page: Page, jupyter_server: JupyterServer) -> None:
    """kernel_exec returns stdout, raises KernelExecError with the traceback, leaves the counter alone."""
    count = "print(get_ipython().execution_count)"
    before = kernel_exec(jupyter_server, NOTEBOOK, count)
    assert kernel_exec(jupyter_server, NOTEBOOK, "print('a'); print('b')") == "a\nb\n"
    with pytest.raises(KernelExecError) as info:
        kernel_exec(jupyter_server, NOTEBOOK, "print('before'); 1 / 0")
    assert info.value.ename == "ZeroDivisionError"
    assert info.value.stdout == "before\n"
    assert "1 / 0" in info.value.traceback
    # store_history=False: the notebook's execution counter does not move.
    assert kernel_exec(jupyter_server, NOTEBOOK, count) == before
    # The same kernel as the browser's notebook: it sees the notebook's variables.
    assert kernel_exec(jupyter_server, NOTEBOOK, "print(type(any_counter).__name__)") == "HarnessCounter\n"


@pytest.mark.browser
def test_run_all_surfaces_cell_errors(page: Page, jupyter_server: JupyterServer) -> None:
    """run_all raises with the traceback when a cell fails (instead of passing silently)."""
    write_notebook(jupyter_server, "harness_failing.ipynb", ["x = 1", "raise ValueError('boom')", "y = 2"])
    open_notebook(page, jupyter_server, "harness_failing.ipynb")
    with pytest.raises(harness.HarnessError, match="ValueError: boom"):
        run_all(page)


# ------------------------------------------------------------------------------------------
# Fast checks of the harness itself (no browser)
# ------------------------------------------------------------------------------------------


def test_ci_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    """CI counts as set for any value except empty/0/false/no."""
    for value, expected in [("true", True), ("1", True), ("", False), ("0", False), ("false", False)]:
        monkeypatch.setenv("CI", value)
        assert harness.ci_enabled() is expected
    monkeypatch.delenv("CI")
    assert harness.ci_enabled() is False


def test_missing_chromium_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A missing chromium binary is named in the skip/fail reason."""
    monkeypatch.setattr(harness, "CHROMIUM_PATH", str(tmp_path / "no-chromium"))
    missing = harness.missing_browser_prerequisites()
    assert any("no-chromium" in reason for reason in missing)
    assert not any("chromium" in r for r in harness.missing_browser_prerequisites(include_browser=False))


def test_artifacts_dir_is_at_repo_root() -> None:
    """Screenshots go to <repo>/test-artifacts (git-ignored)."""
    assert harness.ARTIFACTS_DIR == harness.REPO_ROOT / "test-artifacts"
    assert (harness.REPO_ROOT / "pyproject.toml").is_file()
