"""Pytest fixtures for real-browser tests: a JupyterLab server, Chromium and a page.

Fixtures:
    jupyter_server: session-scoped :class:`~tests.browser.jupyter.JupyterServer` (``url``,
        ``token``, ``root_dir``, …), shut down with its kernels at the end of the session.
    browser: session-scoped Playwright ``Browser`` (Debian's ``/usr/bin/chromium``, headless).
    page: function-scoped Playwright ``Page`` (1400x1000) in a fresh browser context; on failure
        a screenshot is saved to ``test-artifacts/`` and the browser console is attached.

Tests marked ``@pytest.mark.browser`` are skipped with the reason when chromium or a needed
Python package is missing — unless ``CI`` is set, in which case they fail loudly instead.
When a test using ``jupyter_server`` fails, the tail of the server log is attached to the report.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

_REPO_ROOT = Path(__file__).resolve().parents[2]
if str(_REPO_ROOT) not in sys.path:  # make `tests.browser.jupyter` importable under plain `pytest`
    sys.path.insert(0, str(_REPO_ROOT))

from tests.browser.jupyter import (  # noqa: E402 - needs the sys.path entry above
    CHROMIUM_ARGS,
    CHROMIUM_PATH,
    JupyterServer,
    ci_enabled,
    missing_browser_prerequisites,
    screenshot,
    start_jupyter_server,
)

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Browser, Page, Playwright

VIEWPORT_WIDTH, VIEWPORT_HEIGHT = 1400, 1000
_CONSOLE = pytest.StashKey[list[str]]()


def _require_prerequisites(*, browser: bool = True) -> None:
    """Skip (locally) or fail (in CI) when the server or browser stack is incomplete."""
    missing = missing_browser_prerequisites(include_browser=browser)
    if not missing:
        return
    reason = "browser tests need: " + "; ".join(missing)
    if ci_enabled():
        pytest.fail(f"{reason} (CI is set, so this is an error, not a skip)", pytrace=False)
    pytest.skip(reason)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``browser`` tests as skipped up front when prerequisites are missing outside CI."""
    if ci_enabled():
        return
    missing = missing_browser_prerequisites()
    if not missing:
        return
    skip = pytest.mark.skip(reason="browser tests need: " + "; ".join(missing))
    for item in items:
        if item.get_closest_marker("browser") is not None:
            item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """On failure: screenshot the page, attach the server log tail and the browser console."""
    report: pytest.TestReport = yield
    if report.failed:
        page = getattr(item, "funcargs", {}).get("page")
        console = item.stash.get(_CONSOLE, [])
        if page is not None and report.when in ("setup", "call"):
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid)
            try:
                console.append(f"[harness] failure screenshot: {screenshot(page, f'{name}-failure')}")
            except Exception as exc:  # the page may be gone; never mask the real failure
                console.append(f"[harness] failure screenshot failed: {exc}")
        server = getattr(item, "funcargs", {}).get("jupyter_server")
        # (A server that failed to start is not in funcargs; its error message has the log tail.)
        if isinstance(server, JupyterServer):
            report.sections.append((f"jupyter server log (tail of {server.log_path})", server.log_tail()))
        if console:
            report.sections.append(("browser console", "\n".join(console[-200:])))
    return report


@pytest.fixture(scope="session")
def jupyter_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    """A ``jupyter lab`` for the whole session on 127.0.0.1 (free port, random token)."""
    _require_prerequisites(browser=False)
    server = start_jupyter_server(tmp_path_factory.mktemp("jupyter"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def _playwright() -> Iterator[Playwright]:
    """The Playwright driver (sync API), started once per session."""
    _require_prerequisites()
    from playwright.sync_api import sync_playwright

    manager = sync_playwright()
    playwright = manager.start()
    try:
        yield playwright
    finally:
        playwright.stop()


@pytest.fixture(scope="session")
def browser(_playwright: Playwright) -> Iterator[Browser]:
    """Headless Debian Chromium driven by Playwright (never downloads a browser)."""
    try:
        instance = _playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
    except Exception as exc:
        message = f"cannot launch chromium at {CHROMIUM_PATH}: {exc}"
        if ci_enabled():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    try:
        yield instance
    finally:
        instance.close()


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh 1400x1000 page; screenshot + console log are kept when the test fails."""
    context = browser.new_context(viewport={"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT})
    context.set_default_timeout(30_000)
    console: list[str] = []
    request.node.stash[_CONSOLE] = console
    new_page = context.new_page()
    new_page.on("console", lambda msg: console.append(f"[{msg.type}] {msg.text}"))
    new_page.on("pageerror", lambda err: console.append(f"[pageerror] {err}"))
    try:
        yield new_page
    finally:
        context.close()
