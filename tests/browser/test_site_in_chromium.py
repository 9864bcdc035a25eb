"""`pikit export-corpus --site` in a real Chromium, from file:// with no server: the index, a session page
and the usage pages open with no console error and load nothing from outside the folder; the search
filters the rows, the headers sort them, and without script the index is still every session as a link.
Screenshots go to ``test-artifacts/`` (``site-*.png``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.jupyter import REPO_ROOT, open_file, screenshot
from tests.procs import env

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

SAMPLE_CORPUS = REPO_ROOT / "data" / "sample_corpus" / "sessions"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "pikit", "export-corpus", str(SAMPLE_CORPUS), "--index",
                           str(tmp / "i.duckdb"), "--site", str(tmp / "site")], capture_output=True, text=True,
                          timeout=600, check=False, env=env(PI_CODING_AGENT_DIR=str(tmp / "agent")))
    assert done.returncode == 0, done.stderr
    return tmp / "site"



def _search_rows(site: Path) -> list[str]:
    text = (site / "data.js").read_text(encoding="utf-8")
    rows = json.loads(text[text.index("=") + 1:].rstrip().rstrip(";"))["rows"]
    return ["\n".join(row).lower() for row in rows]


def test_the_index_opens_and_its_search_filters_the_rows(page: Page, site: Path) -> None:
    problems, requests = open_file(page, site / "index.html")
    assert problems == []
    assert sorted(requests) == sorted((site / name).as_uri() for name in ("index.html", "data.js", "site.js"))
    rows = page.locator("#pikit-sessions tbody tr")
    assert rows.count() == 37
    screenshot(page, "site-index")
    texts = _search_rows(site)
    for query in ("migration", "cold start", "HANDLES the"):
        page.fill("#pikit-query", query)
        words = query.lower().split()
        expected = sum(all(w in text for w in words) for text in texts)
        assert 0 < expected < 37
        assert page.locator("#pikit-sessions tbody tr:visible").count() == expected, query
        assert page.inner_text("#pikit-count") == f"{expected} of 37 sessions"
        shown = page.locator("#pikit-sessions tbody tr:visible").evaluate_all(
            "rows => rows.map(row => Number(row.getAttribute('data-row')))")
        assert all(all(w in texts[i] for w in words) for i in shown)
    screenshot(page, "site-index-search")
    page.fill("#pikit-query", "no-such-word-anywhere")
    assert page.locator("#pikit-sessions tbody tr:visible").count() == 0
    page.fill("#pikit-query", "")
    assert page.locator("#pikit-sessions tbody tr:visible").count() == 37


def test_the_headers_sort_the_rows(page: Page, site: Path) -> None:
    problems, _ = open_file(page, site / "index.html")
    page.get_by_role("button", name="Cost").click()
    costs = [float(c.replace("$", "").replace(",", ""))
             for c in page.locator("#pikit-sessions tbody tr td:nth-child(6)").all_inner_texts()]
    assert costs == sorted(costs, reverse=True)
    page.get_by_role("button", name="Cost").click()
    costs = [float(c.replace("$", "").replace(",", ""))
             for c in page.locator("#pikit-sessions tbody tr td:nth-child(6)").all_inner_texts()]
    assert costs == sorted(costs)
    page.get_by_role("button", name="Title").click()
    titles = page.locator("#pikit-sessions tbody tr td:nth-child(1)").all_inner_texts()
    assert titles == sorted(titles, key=str.lower, reverse=True)
    assert problems == []


def test_without_script_the_index_is_every_session_as_a_link(browser: Browser, site: Path) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto((site / "index.html").as_uri())
        assert page.locator("#pikit-sessions tbody tr td.pikit-title a").count() == 37
        assert not page.locator("#pikit-search").is_visible()  # the search needs the script: hidden without it
    finally:
        context.close()


def test_a_title_opens_the_session_page_which_links_back(page: Page, site: Path) -> None:
    problems, _ = open_file(page, site / "index.html")
    link = page.locator("#pikit-sessions tbody tr td.pikit-title a", has_text="A faster retry in config.ts").last
    link.click()
    page.wait_for_load_state("load")
    assert page.url.startswith((site / "sessions").as_uri())
    assert page.locator("h1").inner_text() == "A faster retry in config.ts"
    assert page.locator('svg[aria-label="context size along the branch"]').count() == 1
    assert page.locator("[id^=entry-]").count() > 10
    screenshot(page, "site-session")
    page.get_by_role("link", name="← all sessions").click()
    page.wait_for_load_state("load")
    assert page.url.startswith((site / "index.html").as_uri() + "#s-")
    assert problems == []


@pytest.mark.parametrize("by", ["day", "model"])
def test_the_usage_pages_open_with_their_charts(page: Page, site: Path, by: str) -> None:
    problems, requests = open_file(page, site / "usage" / f"{by}.html")
    assert problems == [] and requests == [(site / "usage" / f"{by}.html").as_uri()]
    for chart in (f"cost by {by}", f"tokens by {by}"):
        box = page.locator(f'svg[aria-label="{chart}"]').bounding_box()
        assert box is not None and box["width"] > 800 and box["height"] > 80
    screenshot(page, f"site-usage-{by}", full_page=True)
    page.get_by_role("link", name="Sessions").click()
    page.wait_for_load_state("load")
    assert page.url == (site / "index.html").as_uri()


def test_a_compaction_count_opens_that_sessions_compactions(page: Page, site: Path) -> None:
    problems, _ = open_file(page, site / "index.html")
    page.locator('#pikit-sessions a[href$="#compactions"]').first.click()
    page.wait_for_load_state("load")
    assert page.url.endswith("#compactions")
    section = page.locator("#compactions")
    assert section.is_visible() and section.bounding_box() is not None
    assert page.evaluate("document.getElementById('compactions').getBoundingClientRect().top") < 50
    assert page.locator('#compactions svg[aria-label="tokensBefore and tokensAfter of each compaction"]').count() == 1
    assert problems == []
