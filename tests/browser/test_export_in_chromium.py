"""`pikit export` in a real Chromium: the page opens with no console errors and no requests,
planted markup stays text, and the parts are there (tree with the active path, budget, charts,
context). Screenshots go to ``test-artifacts/`` (``export-*.png``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.jupyter import REPO_ROOT, open_file, screenshot

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

SAMPLES = REPO_ROOT / "data" / "sample_sessions"
PLANTED = "<script>document.title='pwned';window.__planted=1</script><img src=x onerror=\"window.__planted=2\">"


def _export(session: Path, out: Path, tmp_path: Path, *extra: str) -> Path:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"compaction": {"reserveTokens": 3000, "keepRecentTokens": 4000}}),
                        encoding="utf-8")
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    done = subprocess.run([sys.executable, "-m", "pikit", "export", str(session), "-o", str(out), "--settings",
                           str(settings), "--context-window", "16384", *extra], capture_output=True, text=True,
                          timeout=120, check=False, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr.startswith(f"wrote {out}")
    return out



def test_exported_page_loads_nothing_and_shows_every_part(page: Page, tmp_path: Path) -> None:
    out = _export(SAMPLES / "refactor-auth.jsonl", tmp_path / "page.html", tmp_path)
    problems, requests = open_file(page, out)
    assert problems == []
    assert requests == [out.as_uri()]  # the page itself, nothing else
    assert page.title() == "Refactor auth module (shop-api) · pikit"
    # the tree: the active path is visible, the abandoned branch folded
    leaf_row = page.locator(".pikit-static-tree #leaf")
    assert leaf_row.is_visible() and "0ce8fc25" in leaf_row.inner_text()
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, "export-page")
    folded = page.locator(".pikit-static-tree details.pikit-off")
    assert folded.count() >= 1 and folded.first.get_attribute("open") is None
    off_row = folded.first.locator(".pikit-row").first
    assert not off_row.is_visible()
    folded.first.locator("summary").click()
    assert off_row.is_visible()
    # budget, charts, context
    assert page.locator(".pikit-budget, [class*=budget]").first.is_visible()
    assert page.locator('svg[aria-label="tokensBefore and tokensAfter of each compaction"]').count() == 1
    assert page.locator('svg[aria-label="context size along the branch"]').count() == 1
    rows = page.locator("table.pikit-context-table tbody tr")
    assert rows.count() == 59
    assert "threshold 13,384" in page.inner_text("body")
    screenshot(page, "export-page-full", full_page=True)


def test_planted_markup_in_a_session_renders_as_text(page: Page, tmp_path: Path) -> None:
    source = (SAMPLES / "xss-and-unicode.jsonl").read_text(encoding="utf-8").rstrip("\n").split("\n")
    last = json.loads(source[-1])
    planted = {"type": "message", "id": "planted1", "parentId": last["id"], "timestamp": last["timestamp"],
               "message": {"role": "user", "content": PLANTED, "timestamp": 1773517999000}}
    label = {"type": "label", "id": "planted2", "parentId": "planted1", "timestamp": last["timestamp"],
             "targetId": "planted1", "label": PLANTED}
    session = tmp_path / "planted.jsonl"
    session.write_text("\n".join([*source, json.dumps(planted), json.dumps(label)]) + "\n", encoding="utf-8")
    out = _export(session, tmp_path / "planted.html", tmp_path, "--leaf", "planted2")
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html and "<img" not in html
    problems, requests = open_file(page, out)
    assert problems == [] and requests == [out.as_uri()]
    assert page.evaluate("window.__planted") is None
    assert page.title().startswith("<script>alert('session name')</script> reviews")
    body = page.inner_text("body")
    assert "<script>document.title='pwned';window.__planted=1</script>" in body
    assert page.locator("script").count() == 0 and page.locator("img").count() == 0
    screenshot(page, "export-planted")


def test_transcript_anchors_and_no_script_from_session_text(page: Page, tmp_path: Path) -> None:
    session = tmp_path / "planted.jsonl"
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}
    answer = [{"type": "text", "text": f"# Heading\n\n**bold** {PLANTED}\n\n[run](javascript:window.__planted=3) "
                                       "[docs](https://example.org/)\n\n![pic](https://example.org/p.png)"},
              {"type": "toolCall", "id": "c1", "name": "edit",
               "arguments": {"path": "a.py", "oldText": "x = 1\n", "newText": f"x = 2  # {PLANTED}\n"}}]
    lines = [header,
             {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
              "message": {"role": "user", "content": "go", "timestamp": 1767225601000}},
             {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-01-01T00:00:02.000Z",
              "message": {"role": "assistant", "content": answer, "provider": "anthropic",
                          "model": "claude-sonnet-4-5", "stopReason": "toolUse", "timestamp": 1767225602000}}]
    session.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = _export(session, tmp_path / "planted.html", tmp_path)
    problems, requests = open_file(page, out)
    assert problems == [] and requests == [out.as_uri()]
    assert page.evaluate("window.__planted") is None and page.title().endswith("· pikit")
    row = page.locator("#entry-a1")
    assert row.count() == 1 and row.locator("a.pikit-anchor").get_attribute("href") == "#entry-a1"
    assert page.locator("#entry-u1").count() == 1
    body = row.locator(".pikit-md")
    assert body.locator("h1").inner_text() == "Heading" and body.locator("strong").inner_text() == "bold"
    assert body.locator("script, img").count() == 0
    assert [a.get_attribute("href") for a in body.locator("a").all()] == ["https://example.org/"]
    assert "<script>" in body.inner_text()
    assert row.locator(".pikit-minus").first.inner_text() == "--- a/a.py"
    row.locator("a.pikit-anchor").click()
    assert page.url.endswith("#entry-a1") and page.evaluate("window.__planted") is None
    screenshot(page, "export-transcript", full_page=True)
