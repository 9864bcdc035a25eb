"""`pikit export-corpus --site` in a real Chromium: the index, the session pages and the usage pages open from
the disk with no console error and no request, every link resolves, the script sorts and filters (and the
links are there without it), a planted token is in no file with --redact, and a re-run after one session grew
rewrites that session's page only. Screenshots go to ``test-artifacts/`` (``site-*.png``).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.jupyter import REPO_ROOT, screenshot
from tests.corpus.corpora import header, user, write

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

SAMPLE = REPO_ROOT / "data" / "sample_corpus" / "sessions"
TOKEN = "ghp_" + "Zq8rT2mW9xK4vB7nL1pY6cD3fH5jS0aE2gU8"
PLANTED = "<script>window.__planted=1</script><img src=x onerror=\"window.__planted=2\">"


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    shutil.copytree(SAMPLE, root)
    write(root / "--home-dev-secret--" / "2026-11-09T10-00-00-000Z_planted.jsonl",
          header("planted-session", cwd="/home/dev/secret"),
          user("u1", None, "2026-11-09T10:00:00.000Z", f"Rotate {TOKEN} now {PLANTED}"),
          user("u2", "u1", "2026-11-09T10:01:00.000Z", f"the token was {TOKEN}"))
    return root


def _export(root: Path, out: Path, tmp_path: Path, *extra: str) -> str:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    done = subprocess.run([sys.executable, "-m", "pikit", "export-corpus", str(root), "--site", str(out), "--index",
                           str(tmp_path / "index.duckdb"), *extra], capture_output=True, text=True, timeout=600,
                          env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _open(page: Page, path: Path) -> tuple[list[str], list[str]]:
    problems: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return problems, requests


def _links(page_file: Path) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="([^"]*)"', page_file.read_text(encoding="utf-8"))]


def test_the_site_opens_links_resolve_and_the_script_sorts_and_filters(page: Page, browser: Browser,
                                                                      tmp_path: Path) -> None:
    out = tmp_path / "site"
    _export(_corpus(tmp_path), out, tmp_path, "--redact")
    pages = sorted(out.rglob("*.html"))
    assert len(pages) == 3 + 38
    for file in pages:  # every link: a file of the site, or an anchor of the page
        ids = set(re.findall(r'id="([^"]*)"', file.read_text(encoding="utf-8")))
        for link in _links(file):
            if link.startswith("#"):
                assert html.unescape(link[1:]) in {html.unescape(i) for i in ids}, (file.name, link)
            else:
                assert not re.match(r"[a-z]+:", link), (file.name, link)  # nothing outside the folder
                assert (file.parent / link.split("#")[0]).is_file(), (file.name, link)
    for file in pages:
        problems, requests = _open(page, file)
        assert problems == [] and requests == [file.as_uri()], (file.name, problems, requests)
    problems, _ = _open(page, out / "index.html")
    assert page.evaluate("window.__planted") is None and problems == []
    rows = page.locator("#sessions tbody tr")
    assert rows.count() == 38
    page.fill("#filter", "zebra")  # in no title and no first message
    assert page.locator("#sessions tbody tr:not([hidden])").count() == 0
    page.fill("#filter", "rotate")
    assert page.locator("#sessions tbody tr:not([hidden])").count() == 1
    page.fill("#filter", "")
    page.locator("#sessions th", has_text="Cost $").click()
    page.locator("#sessions th", has_text="Cost $").click()  # descending: the most expensive first
    costs = [float(c or 0) for c in page.locator("#sessions tbody tr td:nth-child(6)").evaluate_all(
        "cells => cells.map(c => c.getAttribute('data-sort'))")]
    assert costs == sorted(costs, reverse=True) and costs[0] > costs[-1]
    screenshot(page, "site-index")
    page.locator("#sessions tbody tr a").first.click()
    page.wait_for_load_state("load")
    assert page.locator(".pikit-page h1").count() == 1
    screenshot(page, "site-session")
    no_script = browser.new_context(java_script_enabled=False).new_page()
    no_script.goto((out / "index.html").as_uri())
    assert no_script.locator("#sessions tbody tr a").count() == 38
    no_script.context.close()


def test_redaction_reaches_every_file_and_a_rerun_rewrites_what_changed(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    out = tmp_path / "site"
    _export(root, out, tmp_path, "--redact")
    for file in out.rglob("*"):
        if file.is_file():
            data = file.read_bytes()
            assert TOKEN.encode() not in data and TOKEN[4:16].encode() not in data, file
    assert "[REDACTED:github-token:" in (out / "index.html").read_text(encoding="utf-8")
    before = {p: p.stat().st_mtime_ns for p in (out / "sessions").iterdir()}
    grown = root / "--home-dev-secret--" / "2026-11-09T10-00-00-000Z_planted.jsonl"
    with grown.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(user("u3", "u2", "2026-11-09T10:02:00.000Z", "one more")) + "\n")
    said = _export(root, out, tmp_path, "--redact")
    assert "1 session page written" in said
    changed = [p.name for p, t in before.items() if p.stat().st_mtime_ns != t]
    assert len(changed) == 1 and changed[0].startswith("2026-11-09T10-00-00-000Z_planted-")
    said = _export(root, out, tmp_path)  # without --redact: every page is written anew
    assert "38 session pages written" in said
    assert TOKEN in (out / "index.html").read_text(encoding="utf-8")
