"""``pikit export-corpus --site``: what the folder holds and when it is written (the browser test opens it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pikit.corpus import Corpus
from pikit.errors import WriteError
from tests.corpus.corpora import assistant, header, user, write

MARKUP = "<script>alert(1)</script>"


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    for name in ("a", "b"):
        write(root / f"{name}.jsonl", header(f"s-{name}", cwd=f"/home/dev/{name}"),
              user("u1", None, "2026-11-02T10:00:00.000Z", f"Fix {MARKUP} in {name}"),
              assistant("a1", "u1", "2026-11-02T10:00:05.000Z", 100, cost=0.5))
    return root


def test_pages_are_escaped_and_a_session_gone_loses_its_page(tmp_path: Path) -> None:
    from pikit.export._site import export_site, page_name

    root, out = _root(tmp_path), tmp_path / "site"
    with Corpus.open(root, index=tmp_path / "i.duckdb", workers=1) as corpus:
        first = export_site(corpus, out)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert MARKUP not in index and "&lt;script&gt;alert(1)&lt;/script&gt;" in index
    assert f'href="sessions/{page_name(str(root / "a.jsonl"))}"' in index
    assert len([p for p in first.written if "/sessions/" in p]) == 2
    (root / "b.jsonl").unlink()
    with Corpus.open(root, index=tmp_path / "i.duckdb", workers=1) as corpus:
        second = export_site(corpus, out)
    assert [Path(p).name for p in second.removed] == [page_name(str(root / "b.jsonl"))]
    assert sorted(p.name for p in (out / "sessions").iterdir()) == [page_name(str(root / "a.jsonl"))]
    assert "b.jsonl" not in (out / "index.html").read_text(encoding="utf-8")
    (out / "usage-by-day.html").write_text("changed", encoding="utf-8")
    with Corpus.open(root, index=tmp_path / "i.duckdb", workers=1) as corpus:
        third = export_site(corpus, out)
    assert [Path(p).name for p in third.written] == ["usage-by-day.html"]  # what differs, and only that


def test_a_folder_of_other_files_is_refused(tmp_path: Path) -> None:
    from pikit.export._site import export_site

    out = tmp_path / "taken"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    with Corpus.open(_root(tmp_path), index=tmp_path / "i.duckdb", workers=1) as corpus:
        try:
            export_site(corpus, out)
        except WriteError as exc:
            assert "holds files and no pikit-site.json" in str(exc)
        else:
            raise AssertionError("a folder of other files was written into")
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    done = subprocess.run([sys.executable, "-m", "pikit", "export-corpus", str(tmp_path / "sessions"), "--site",
                           str(out), "--index", str(tmp_path / "i.duckdb")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1
