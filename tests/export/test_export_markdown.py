"""pikit.export.render_markdown and `pikit export --format markdown`: structure, and session text kept inert."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import mistune
import pytest

import pikit
from pikit import Session
from pikit.export import render_markdown
from pikit.export._mdtext import fence, inline, prose
from tests.entries import asst, call, session_of, text, user
from tests.procs import env as child_env

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "sample_sessions"
HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}
INJECTION = ("</details><script>alert(1)</script>\n# Not a heading\n[click](javascript:alert(1))\n"
             "<!-- a comment\n```\nbreak out\n````\n<img src=x onerror=alert(2)> \u202eexe.txt")


@pytest.fixture(scope="module")
def refactor_md() -> str:
    return render_markdown(pikit.load(str(SAMPLES / "refactor-auth.jsonl")))


def _tokens(md: str) -> list[dict[str, Any]]:
    parse = mistune.create_markdown(renderer=None)
    tokens: list[dict[str, Any]] = parse(md)  # type: ignore[assignment]
    return tokens


def _walk(tokens: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for token in tokens:
        out.append(token)
        out.extend(_walk(token.get("children") or []))
    return out


def test_refactor_auth_structure(refactor_md: str) -> None:
    md = refactor_md
    assert md.startswith("# Refactor auth module \\(shop\\-api\\)\n")
    headings = re.findall(r"^### (\d+) · ([a-z ]+) · (?:entry|carried by compaction) ", md, flags=re.M)
    assert [int(n) for n, _ in headings] == list(range(1, 60))  # the 59 messages, in order
    assert headings[0][1] == "system" and headings[1][1] == "compaction summary"
    # the system prompt is the one the compaction entry carries, not a message of that entry's own
    assert "### 1 · system · carried by compaction f6135720\n" in md
    assert "### 2 · compaction summary · entry f6135720\n" in md
    assert "> **Compaction summary**: what the model reads" in md
    assert "> **Compaction** f6135720 replaced 75 earlier entries" in md
    assert md.count("<details><summary>system prompt (folded)</summary>") == 1
    assert " · kept" in md and " · new" in md and "tokens (Pi's estimate)" in md
    assert "usage 10,599: the context size starts here" in md
    # every fence closes: the parser sees every tool call's code as a code block
    blocks = [t for t in _walk(_tokens(md)) if t["type"] == "block_code"]
    diffs = [b for b in blocks if (b.get("attrs") or {}).get("info") == "diff"]
    assert len(diffs) >= 10 and all(b["raw"].startswith("--- a/") for b in diffs)
    assert any((b.get("attrs") or {}).get("info") == "typescript" for b in blocks)  # a write, by its extension
    assert any((b.get("attrs") or {}).get("info") == "bash" for b in blocks)
    assert "**tool call** edit" in md and "src\\/auth\\/password\\.ts:" in md
    assert md.count("<details>") == md.count("</details>")


def test_the_whole_tree_marks_abandoned_branches() -> None:
    session = pikit.load(str(SAMPLES / "refactor-auth.jsonl"))
    md = render_markdown(session, tree=True)
    assert "## The whole tree" in md
    rows = re.findall(r"^### (\S+) · [^\n]*$", md[md.index("## The whole tree"):], flags=re.M)
    assert len(rows) == len(session.flatten(mode="all")) > 140
    assert md.count("**abandoned branch**") - 1 == sum(1 for r in session.flatten(mode="all")
                                                       if not r.on_active_path)
    assert md.count("· **leaf**") == 1 and "· on the branch" in md
    assert "## The whole tree" not in render_markdown(session)


def _injected() -> Session:
    return session_of(HEADER, [
        user("u1", None, 1, INJECTION),
        asst("a1", "u1", 2, [*text(INJECTION), call("c1", "bash", command="echo ````` " + INJECTION),
                             call("c2", "edit", path="a`b</details>.py", oldText="x\n```", newText=INJECTION),
                             call("c3", "wr<i>te", note=INJECTION)]),
    ])


def test_session_text_stays_inert() -> None:
    md = render_markdown(_injected())
    tokens = _walk(_tokens(md))
    # the only HTML is pikit's own <details> around thinking and system prompts (none here)
    assert [t for t in tokens if t["type"] in ("block_html", "inline_html")] == []
    assert [t for t in tokens if t["type"] in ("link", "image")] == []
    headings = [t for t in tokens if t["type"] == "heading"]
    assert all(h["attrs"]["level"] in (1, 2, 3) for h in headings)
    assert len([h for h in headings if h["attrs"]["level"] == 3]) == 2  # one per message
    html = mistune.html(md)
    assert "<script" not in html and "<img" not in html and "<!--" not in html and 'href="javascript' not in html
    assert "\u202e" not in md and "<U+202E>" in md
    # each injected tool call is whole inside one code block; the user's and the assistant's text is prose whose
    # every character is shown as written: no code span, no emphasis, no list or heading comes out of it
    codes = [t["raw"] for t in tokens if t["type"] == "block_code"]
    assert sum(1 for c in codes if "break out\n````\n" in c) >= 2
    quotes = re.findall(r"<blockquote>(.*?)</blockquote>", html, flags=re.S)
    assert len(quotes) == 2
    for quote in quotes:
        assert set(re.findall(r"</?[a-z0-9]+", quote)) <= {"<p", "</p", "<br"}  # no tag from the text itself
        assert "&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in quote and "```<br />" in quote


def test_prose_wraps_instead_of_scrolling(refactor_md: str) -> None:
    """What people and models wrote is a block quote of paragraphs: no line of it sits in a code block, which a
    reader would scroll sideways; tool calls and results stay code."""
    tokens = _walk(_tokens(refactor_md))
    codes = "\n".join(t["raw"] for t in tokens if t["type"] == "block_code")
    paragraphs = [t for t in tokens if t["type"] == "block_quote"]
    assert "You are a coding agent working inside the user's project." not in codes  # the system prompt
    assert "## Goal" not in codes  # the compaction summary
    html = mistune.html(refactor_md)
    assert "You are a coding agent working inside the user&#x27;s project." in html or \
        "You are a coding agent working inside the user's project." in html
    assert len(paragraphs) > 20 and "--- a/" in codes


def test_the_escaping_rule() -> None:
    assert prose("# h\n  - x <b>\n\nnext") == "> \\# h\\\n> \u00a0\u00a0\\- x \\<b\\>\n>\n> next\n"
    assert prose("a\r\nb\n\n\n") == "> a\\\n> b\n"
    assert inline("<b>&amp;[x](y)#*_`|\n# h") == "\\<b\\>\\&amp\\;\\[x\\]\\(y\\)\\#\\*\\_\\`\\| \\# h"
    assert fence("a ```` b") == "`````text\na ```` b\n`````\n"
    assert fence("x\r\ny\rz") == "```text\nx\ny^Mz\n```\n"
    assert fence("", "diff") == "```diff\n```\n"


def test_cli_markdown(tmp_path: Path) -> None:
    out = tmp_path / "s.md"
    done = subprocess.run([sys.executable, "-m", "pikit", "export", str(SAMPLES / "quick-tour.jsonl"), "--format",
                           "markdown", "--tree", "-o", str(out)], capture_output=True, text=True, timeout=120,
                          check=False, env=child_env())
    assert done.returncode == 0, done.stderr
    assert "(Markdown)" in done.stderr and out.read_text("utf-8").startswith("# quick\\-tour")
    html_tree = subprocess.run([sys.executable, "-m", "pikit", "export", str(SAMPLES / "quick-tour.jsonl"), "--tree",
                                "-o", str(tmp_path / "p.html")], capture_output=True, text=True, timeout=120,
                               check=False, env=child_env())
    assert html_tree.returncode == 1 and html_tree.stderr.count("\n") == 1 and "--format markdown" in html_tree.stderr


def test_cli_export_settings(tmp_path: Path) -> None:
    base = [sys.executable, "-m", "pikit", "export", str(SAMPLES / "refactor-auth.jsonl"), "--model",
            "anthropic/claude-sonnet-4-5", "--context-window", "16384"]
    done = subprocess.run([*base, "--reserve-tokens", "3000", "--keep-recent-tokens", "4000", "-o",
                           str(tmp_path / "p.html")], capture_output=True, text=True, timeout=120, check=False,
                          env=child_env())
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "p.html").read_text("utf-8")
    assert "reserveTokens 3,000, keepRecentTokens 4,000" in page and "threshold 13,384" in page
    for reserve in ("16384", "20000"):
        bad = subprocess.run([*base, "--reserve-tokens", reserve, "-o", str(tmp_path / "q.html")],
                             capture_output=True, text=True, timeout=120, check=False, env=child_env())
        assert bad.returncode == 1 and bad.stderr.count("\n") == 1, bad.stderr
        assert "--reserve-tokens" in bad.stderr and "not below the context window 16,384" in bad.stderr
        assert not (tmp_path / "q.html").exists()
