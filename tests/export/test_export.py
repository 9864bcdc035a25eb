"""pikit.export and `pikit export`: one self-contained, escaped page (the browser side is in tests/browser)."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import pikit
from pikit import Session
from pikit.errors import WriteError
from pikit.export import PageSettings, render_page, write_page
from pikit.export._page import CSP
from pikit.export._tree import MAX_INDENT, render_tree
from tests.conftest import SESSIONS
from tests.entries import user
from tests.procs import env as child_env

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "sample_sessions"
SETTINGS = PageSettings("anthropic/claude-sonnet-4-5", 16_384, 3_000, 4_000)


@pytest.fixture(scope="module")
def refactor() -> Session:
    return pikit.load(str(SAMPLES / "refactor-auth.jsonl"))


def test_page_is_self_contained(refactor: Session) -> None:
    page = render_page(refactor, SETTINGS)
    assert page.startswith("<!DOCTYPE html>")
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in page
    assert "default-src 'none'" in CSP and "script-src" not in CSP
    assert "<script" not in page and "<link" not in page and "<iframe" not in page and "@import" not in page
    # no URL to fetch: only the SVG namespace, which is an identifier, not a request
    urls = set(re.findall(r"(?:https?:)?//[^\s\"'<>)]+", page))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls


def test_page_holds_tree_budget_charts_and_context(refactor: Session) -> None:
    page = render_page(refactor, SETTINGS)
    assert "<h1>Refactor auth module (shop-api)</h1>" in page
    assert 'id="leaf" data-entry-id="0ce8fc25"' in page
    assert page.count('<details class="pikit-off">') >= 1
    assert "threshold 13,384" in page
    assert 'aria-label="tokensBefore and tokensAfter of each compaction"' in page
    assert 'aria-label="context size along the branch"' in page
    assert page.count("<tr class=\"pikit-context-row") == 59


def test_other_leaf(refactor: Session) -> None:
    page = render_page(refactor, SETTINGS, "10b305af")
    assert 'id="leaf" data-entry-id="10b305af"' in page and "leaf <code>10b305af</code>" in page


def _parse(page: str) -> tuple[set[str], list[str]]:
    """The element names of ``page`` and every event-handler attribute, as a browser's parser sees them."""
    tags: set[str] = set()
    handlers: list[str] = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tags.add(tag)
            handlers.extend(f"{tag}.{name}" for name, _ in attrs if name.startswith("on"))

    Parser().feed(page)
    return tags, handlers


def test_session_text_is_escaped() -> None:
    session = pikit.load(str(SAMPLES / "xss-and-unicode.jsonl"))
    page = render_page(session, SETTINGS)
    assert "<script" not in page and "<img" not in page
    tags, handlers = _parse(page)
    assert not {"script", "img", "iframe", "object", "embed", "link"} & tags and handlers == []
    assert "&lt;script&gt;alert(&#x27;session name&#x27;)&lt;/script&gt;" in page


def test_active_path_open_other_branches_folded(refactor: Session) -> None:
    html = render_tree(refactor, "0ce8fc25")
    rows = refactor.flatten("0ce8fc25")
    off = sum(1 for r in rows if not r.on_active_path)
    folded = re.findall(r'<details class="pikit-off"><summary>([\d,]+) entr', html)
    assert sum(int(n.replace(",", "")) for n in folded) == off > 0
    assert html.count('class="pikit-row') == len(rows)


def test_deep_rows_keep_readable_text() -> None:
    entries = [user("e0", None, 0, "root")]
    entries += [user(f"e{i}", f"e{i - 1}", i % 60, f"message {i}") for i in range(1, 400)]
    entries.append(user("x1", "e5", 1, "a side branch"))
    session = Session.from_entries(entries)
    html = render_tree(session, "x1", mode="all")
    indents = [float(v) for v in re.findall(r"padding-left: ([\d.]+)em", html)]
    assert max(indents) <= MAX_INDENT * 1.1 + 0.2 + 1e-9
    assert "depth" in html or max(r.indent for r in session.flatten("x1", mode="all")) <= MAX_INDENT


def test_write_page_refuses_the_source_and_existing_files(refactor: Session, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    assert write_page(refactor, SETTINGS, out) == str(out)
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    with pytest.raises(WriteError, match="already exists"):
        write_page(refactor, SETTINGS, out)
    write_page(refactor, SETTINGS, out, overwrite=True)
    with pytest.raises(WriteError, match="source"):
        write_page(refactor, SETTINGS, refactor.path or "", overwrite=True)


def test_cli_export(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    env_cmd = [sys.executable, "-m", "pikit", "export", str(SAMPLES / "quick-tour.jsonl"), "-o", str(out)]
    done = subprocess.run(env_cmd, capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
                          env=child_env())
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"wrote {out}: quick-tour — What does src/cart/total.ts compute?")
    assert "<h1>quick-tour — What does src/cart/total.ts compute? Keep it short.</h1>" in out.read_text("utf-8")
    again = subprocess.run(env_cmd, capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert again.returncode == 1 and again.stderr.count("\n") == 1 and "already exists" in again.stderr
    missing = subprocess.run([sys.executable, "-m", "pikit", "export", str(SAMPLES / "quick-tour.jsonl")],
                             capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert missing.returncode == 2 and "pikit export --help" in missing.stderr


def test_cli_export_names_the_window_and_its_source(tmp_path: Path) -> None:
    """claude-opus-4-5 is in Pi's catalog (window 200,000); a model no source knows has no window."""
    sessions = SESSIONS
    out = tmp_path / "page.html"
    done = subprocess.run([sys.executable, "-m", "pikit", "export", str(sessions / "before-compaction.jsonl"), "-o",
                           str(out)], capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
                          env={**child_env(), "PI_CODING_AGENT_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    page = out.read_text("utf-8")
    assert "window 200,000 (from catalog pi 1.6.0)" in page and "window 200,000 (catalog pi 1.6.0)" in page
    assert "128,000" not in page and "141.3%" not in page
    unknown = render_page(pikit.load(str(SAMPLES / "quick-tour.jsonl")), PageSettings("acme/x", None, 3_000, 4_000))
    assert "window unknown: pass --context-window or add the model to ~/.pi/agent/models.json" in unknown
    assert "pikit-budget-threshold" not in unknown and "pikit-mark-threshold" not in unknown
    assert ">threshold" not in unknown  # neither on the bar, its legend, the size chart nor the compaction chart


def test_empty_session_page() -> None:
    page = render_page(Session.from_entries([]), SETTINGS)
    assert "No messages: the model would get an empty context." in page
    assert "leaf reset" in page and "Fewer than two assistant messages" in page
    assert "This branch has no compaction yet" in page and "run one" not in page
    assert "None" not in page and "leaf none (empty branch) ·" in page
    # the reset leaf of a session that has entries
    page = render_page(pikit.load(str(SAMPLES / "quick-tour.jsonl")), SETTINGS, None)
    assert "None" not in page and "leaf none (empty branch) ·" in page


def test_cli_export_of_an_empty_branch(tmp_path: Path) -> None:
    source = tmp_path / "header.jsonl"
    source.write_text((SAMPLES / "quick-tour.jsonl").read_text("utf-8").splitlines()[0] + "\n", "utf-8")
    out = tmp_path / "page.html"
    done = subprocess.run([sys.executable, "-m", "pikit", "export", str(source), "-o", str(out)], capture_output=True,
                          text=True, timeout=120, check=False, cwd=tmp_path, env=child_env())
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"wrote {out}: header at none (empty branch) (open it in any browser; it loads nothing)\n"
    assert "None" not in out.read_text("utf-8")


def test_a_branch_without_compaction_says_so_for_a_page() -> None:
    session = pikit.load(str(SAMPLES / "quick-tour.jsonl"))
    assert not any(entry.type == "compaction" for entry in session.branch())
    page = render_page(session, SETTINGS)
    assert "This branch has no compaction yet: what the model sees at the leaf carries no compaction summary." \
        in page
    assert "run one to see" not in page  # the widgets' text, for widgets that can run one


def test_unsafe_characters_are_shown_inertly_in_every_part_of_the_page(tmp_path: Path) -> None:
    from tests.widgets.synthetic import TWINS, hostile_session_lines, write_session
    from tests.widgets.wire import NOT_INERT

    session = pikit.load(write_session(tmp_path / "hostile.jsonl", hostile_session_lines()))
    compaction = next(e.id for e in session.entries if e.type == "compaction")
    for leaf in (session.leaf_id, TWINS[0], compaction):  # ids, labels, names, paths and models all unsafe
        page = render_page(session, SETTINGS, leaf, tree_filter="all")
        assert not NOT_INERT.search(page), NOT_INERT.findall(page)
        for shown in ("\ufffd", "^@", "^[]52;c;cm0gLXJmIH4K^G^[[2J", "M-^[31m", "&lt;U+202E&gt;evil&lt;U+202C&gt;"):
            assert shown in page
        tags, handlers = _parse(page)
        assert not {"script", "img"} & tags and handlers == []
    written = write_page(session, SETTINGS, tmp_path / "page.html", TWINS[0])
    assert Path(written).read_bytes() == render_page(session, SETTINGS, TWINS[0]).rstrip("\n").encode() + b"\n"
