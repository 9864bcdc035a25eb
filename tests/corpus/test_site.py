"""export-corpus --site: every link resolves, the numbers are the CLI's, re-runs rewrite only what changed,
and the folder is guarded (nothing written outside it, nothing written into a folder pikit did not make)."""

from __future__ import annotations

import json
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.procs import one_error_line, pikit as run

pytestmark = pytest.mark.filterwarnings("ignore")


class _Links(HTMLParser):
    """The ids, and the href/src addresses, of one HTML file."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value is not None:
                self.ids.add(value)
            if name in ("href", "src") and value is not None:
                self.links.append(value)


def _parsed(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def broken_links(site: Path) -> list[str]:
    """Every href/src of every page that names no file of the site, or an anchor its target lacks."""
    pages = {p.resolve(): _parsed(p) for p in site.rglob("*.html")}
    broken = []
    for page, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                broken.append(f"{page.name}: {link} leaves the site")
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.is_file() or site.resolve() not in target.parents:
                broken.append(f"{page.name}: {link} names no file of the site")
            elif parts.fragment and parts.fragment not in (pages[target] if target in pages else _parsed(target)).ids:
                broken.append(f"{page.name}: {link} names no anchor there")
    return broken


def site(corpus: Path, out: Path, index: Path, *extra: str, agent: Path) -> str:
    proc = run("export-corpus", corpus, "--index", index, "--site", out, *extra, timeout=600,
               extra_env={"PI_CODING_AGENT_DIR": str(agent)})
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


@pytest.fixture(scope="module")
def sample_site(tmp_path_factory: pytest.TempPathFactory, sample_corpus: Path) -> Path:
    tmp = tmp_path_factory.mktemp("site")
    site(sample_corpus, tmp / "site", tmp / "i.duckdb", agent=tmp / "agent")
    return tmp / "site"


def test_every_link_of_every_page_resolves(sample_site: Path) -> None:
    assert len(list((sample_site / "sessions").glob("*.html"))) == 37
    assert broken_links(sample_site) == []
    index = (sample_site / "index.html").read_text(encoding="utf-8")
    # every session is a link in the HTML itself, no script needed
    assert index.count('<td class="pikit-title"><a href="sessions/') == 37


def test_a_broken_link_is_found(sample_site: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(sample_site, copy)
    page = next((copy / "sessions").glob("*.html"))
    page.write_text(page.read_text(encoding="utf-8").replace("#s-", "#t-", 1), encoding="utf-8")
    (copy / "usage" / "model.html").unlink()
    found = broken_links(copy)
    assert any("names no anchor" in b for b in found) and any("usage/model.html names no file" in b for b in found)


def _cells(html: str, row_start: str) -> list[list[str]]:
    rows = re.findall(rf"<tr{row_start}.*?</tr>", html, flags=re.S)
    return [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)] for row in rows]


def test_the_index_has_the_numbers_of_pikit_sessions(sample_site: Path, sample_corpus: Path,
                                                     tmp_path: Path) -> None:
    proc = run("sessions", sample_corpus, "--index", tmp_path / "i.duckdb", "--json", timeout=300)
    sessions = json.loads(proc.stdout)["sessions"]
    index = (sample_site / "index.html").read_text(encoding="utf-8")
    cells = _cells(index, ' id="s-')
    assert len(cells) == len(sessions) == 37
    for row, session in zip(cells, sessions, strict=True):  # the same order: newest first
        import html

        assert html.unescape(row[0]) == session["title"]
        assert row[1] == session["project"]
        assert row[2] == session["started"][:16].replace("T", " ") + " UTC"
        assert row[5] == f"${session['cost']:,.2f}"
        assert row[6] == str(session["compactions"])
    assert index.count('.html#compactions">') == sum(1 for s in sessions if s["compactions"])  # links to them


@pytest.mark.parametrize("by", ["day", "model"])
def test_the_usage_pages_have_the_numbers_of_pikit_usage(sample_site: Path, sample_corpus: Path, tmp_path: Path,
                                                         by: str) -> None:
    proc = run("usage", sample_corpus, "--index", tmp_path / "i.duckdb", "--by", by, "--json", timeout=300)
    report = json.loads(proc.stdout)
    page = (sample_site / "usage" / f"{by}.html").read_text(encoding="utf-8")
    cells = _cells(page, r"(?: class=\"pikit-total\")?>")[1:]  # (the first is the header row)
    fields = ("inputTokens", "outputTokens", "cacheWriteTokens", "cacheReadTokens", "totalTokens", "cost",
              "summarizationTokens", "summarizationCost")
    expected = [[str(r["key"]), *(f"${r[f]:,.2f}" if f.endswith("ost") else f"{r[f]:,}" for f in fields)]
                for r in report["rows"]]
    totals = report["totals"]
    expected.append(["total", *(f"${totals[f]:,.2f}" if f.endswith("ost") else f"{totals[f]:,}" for f in fields)])
    assert cells == expected
    assert page.count("<svg") == 2 and f'aria-label="cost by {by}"' in page


def _times(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_a_rerun_rewrites_only_the_changed_session(sample_corpus: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "sessions"
    for source in sorted(sample_corpus.rglob("*.jsonl"))[:8]:  # eight sessions of the sample, in their folders
        (corpus / source.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, corpus / source.parent.name / source.name)
    out, index, agent = tmp_path / "site", tmp_path / "i.duckdb", tmp_path / "agent"
    said = site(corpus, out, index, agent=agent)
    assert "8 session pages written, 0 unchanged" in said
    before = _times(out)
    files = sorted(corpus.rglob("*.jsonl"))
    changed, removed = files[3], files[5]
    lines = changed.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])
    entry = {"type": "session_info", "id": "feedbeef", "parentId": last.get("id"),
             "timestamp": "2026-11-30T00:00:00.000Z", "name": "Renamed by the test"}
    with changed.open("a", encoding="utf-8") as file:
        file.write(json.dumps(entry) + "\n")
    said = site(corpus, out, index, agent=agent)
    assert "1 session page written, 7 unchanged, 0 removed" in said
    after = _times(out)
    rewritten = sorted(name for name in after if after[name] != before.get(name))
    pages = [name for name in rewritten if name.startswith("sessions/")]
    assert len(pages) == 1
    assert "Renamed by the test" in (out / pages[0]).read_text(encoding="utf-8")
    assert set(rewritten) - set(pages) <= {"index.html", "data.js", "site.js", "usage/day.html",
                                           "usage/model.html", ".pikit-site.json"}
    assert "Renamed by the test" in (out / "index.html").read_text(encoding="utf-8")
    # a session gone: its page goes, the others stay as they were
    removed.unlink()
    said = site(corpus, out, index, agent=agent)
    assert "0 session pages written, 7 unchanged, 1 removed" in said
    assert len(list((out / "sessions").glob("*.html"))) == 7
    assert broken_links(out) == []
    # what an interrupted write leaves is pikit's own: accepted, then removed
    (out / "sessions" / ".x.html.pikit-0123abcd.tmp").write_text("half a page", encoding="utf-8")
    # the settings the pages are drawn with changed: every page is rewritten
    agent.mkdir(exist_ok=True)
    (agent / "settings.json").write_text('{"compaction": {"reserveTokens": 1000}}', encoding="utf-8")
    said = site(corpus, out, index, agent=agent)
    assert "7 session pages written, 0 unchanged, 0 removed" in said
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    assert "reserveTokens 1,000" in (out / pages[0]).read_text(encoding="utf-8")


def test_the_site_is_refused_a_folder_pikit_did_not_write(sample_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    proc = run("export-corpus", sample_corpus, "--index", tmp_path / "i.duckdb", "--site", out)
    assert proc.returncode == 1
    one_error_line(proc, "notes.txt", "pikit did not write", "new or empty folder")
    assert os.listdir(out) == ["notes.txt"] and not (tmp_path / "i.duckdb").exists()  # refused before the scan


def test_a_site_holding_a_stranger_or_a_link_is_refused(tmp_path: Path) -> None:
    corpus = tmp_path / "sessions"
    corpus.mkdir()
    shutil.copy(next(iter(sorted(Path(__file__).resolve().parents[2].glob("data/sample_sessions/*.jsonl")))),
                corpus / "a.jsonl")
    out, index, agent = tmp_path / "site", tmp_path / "i.duckdb", tmp_path / "agent"
    site(corpus, out, index, agent=agent)
    (out / "sessions" / "extra.html").write_text("x", encoding="utf-8")
    proc = run("export-corpus", corpus, "--index", index, "--site", out)
    one_error_line(proc, "sessions/extra.html", "pikit did not write")
    (out / "sessions" / "extra.html").unlink()
    page = next((out / "sessions").glob("*.html"))
    page.unlink()
    outside = tmp_path / "outside.html"
    outside.write_text("keep me", encoding="utf-8")
    page.symlink_to(outside)
    proc = run("export-corpus", corpus, "--index", index, "--site", out)
    one_error_line(proc, "is a link")
    assert outside.read_text(encoding="utf-8") == "keep me"


def test_untrusted_file_names_and_titles_stay_inside_and_escaped(tmp_path: Path) -> None:
    corpus = tmp_path / "sessions"
    corpus.mkdir()
    planted = '<img src=x onerror="alert(1)"> ü ../'.replace("/", "∕")
    lines = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": '/home/<script>alert("p")</script>'},
             {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
              "message": {"role": "user", "content": f"{planted} </script><script>alert(2)</script>",
                          "timestamp": 1767225601000}}]
    (corpus / f"{planted}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    out = tmp_path / "site"
    site(corpus, out, tmp_path / "i.duckdb", agent=tmp_path / "agent")
    names = [p.name for p in (out / "sessions").iterdir()]
    assert len(names) == 1 and re.fullmatch(r"[A-Za-z0-9._-]+\.html", names[0])
    assert [p for p in tmp_path.rglob("*.htm*") if out not in p.parents] == []
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "<script>alert" not in text and "<img src=x" not in text, page
        assert len(re.findall(r"<script", text)) == (2 if page.name == "index.html" else 0), page
    data = (out / "data.js").read_text(encoding="utf-8")
    assert data.isascii() and "<" not in data and "alert(2)" in data
