"""export-corpus --redact: no planted value in any Parquet table or ATIF trajectory."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.procs import pikit as run
from tests.redaction import planted
from tests.redaction.test_redact_cli import ENV, FLAGS


def _written(folder: Path) -> str:
    """Every file under ``folder`` as text: the Parquet tables read back value by value, the rest as is."""
    parts = []
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".parquet":
            rows = duckdb.sql(f"SELECT * FROM read_parquet('{path}')").fetchall()
            parts += [str(value) for row in rows for value in row]
            parts.append(path.read_bytes().decode("utf-8", "surrogateescape"))
        elif path.is_file():
            parts.append(path.read_bytes().decode("utf-8", "surrogatepass"))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus") / "sessions"
    folder.mkdir()
    planted.write(folder)
    return folder


def test_without_redact_the_exports_hold_the_values(corpus: Path, tmp_path: Path) -> None:
    proc = run("export-corpus", corpus, "--index", tmp_path / "i.duckdb", "--parquet", tmp_path / "pq",
               "--atif", tmp_path / "atif", extra_env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert planted.survivors(_written(tmp_path / "pq"))  # the index's text columns hold some
    assert set(planted.SECRETS) <= set(planted.survivors(_written(tmp_path / "atif")))


def test_export_corpus_redact_writes_no_value(corpus: Path, tmp_path: Path) -> None:
    proc = run("export-corpus", corpus, "--index", tmp_path / "i.duckdb", "--parquet", tmp_path / "pq",
               "--atif", tmp_path / "atif", "--redact", *FLAGS, extra_env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count(b"pikit: note: redacted ") == 2  # one line per export, counts only
    for folder in (tmp_path / "pq", tmp_path / "atif"):
        written = _written(folder)
        assert "[REDACTED:" in written, folder
        assert planted.survivors(written) == [], folder
    assert planted.survivors(proc.stdout + proc.stderr) == []
    with duckdb.connect(str(tmp_path / "i.duckdb"), read_only=True) as index:  # the index keeps its values
        held = "\n".join(str(v) for row in index.sql("SELECT * FROM sessions").fetchall() for v in row)
    assert planted.survivors(held)


def _cut_corpus(folder: Path) -> tuple[Path, list[str]]:
    """Sessions whose texts the index cuts, each cut through a token; one ATIF skips, its name a token."""
    from pikit.compaction._facts import MAX_FACT_CHARS
    from pikit.corpus._scan import TEXT_LIMIT
    from tests.corpus import corpora

    tokens = ["ghp_" + "Q7w" * 12, "ghp_" + "Z3k" * 12, "ghp_" + "M9p" * 12, "ghp_" + "R5t" * 12]
    first = "x" * (TEXT_LIMIT - 16) + " " + tokens[0] + " and more"  # the cut leaves 15 of its characters
    t = "2026-11-02T08:00:{:02d}.000Z"
    corpora.write(folder / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_0f1e2d3c-0000-4000-8000-000000000001.jsonl",
                  corpora.header("0f1e2d3c-0000-4000-8000-000000000001"), corpora.user("u1", None, t.format(1), first),
                  corpora.assistant("a1", "u1", t.format(2), 100))
    command = "make " + "y" * (MAX_FACT_CHARS - 25) + " " + tokens[1]  # the fact's cut leaves 19 of its characters
    call = {"type": "message", "id": "a2", "parentId": "u2", "timestamp": t.format(4), "message": {
        "role": "assistant", "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "toolUse",
        "usage": {"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 11, "cost": {"total": 0}},
        "content": [{"type": "toolCall", "id": "toolu_1", "name": "bash", "arguments": {"command": command}}]}}
    result = {"type": "message", "id": "r2", "parentId": "a2", "timestamp": t.format(5), "message": {
        "role": "toolResult", "toolCallId": "toolu_1", "toolName": "bash", "isError": False,
        "content": [{"type": "text", "text": "done"}]}}
    compaction = {"type": "compaction", "id": "c2", "parentId": "a3", "timestamp": t.format(7), "summary": "short",
                  "firstKeptEntryId": "u3", "tokensBefore": 500}
    corpora.write(folder / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_0f1e2d3c-0000-4000-8000-000000000002.jsonl",
                  corpora.header("0f1e2d3c-0000-4000-8000-000000000002"),
                  corpora.user("u2", None, t.format(3), tokens[2] + "x" * 80 + " what now"), call, result,
                  corpora.assistant("a3", "r2", t.format(6), 100), compaction,
                  corpora.user("u3", "c2", t.format(8), "go on"))
    corpora.write(folder / "--home-dev-app--" / f"{tokens[3]}.jsonl", corpora.header("empty"))
    return folder, tokens


def test_redacted_texts_are_redacted_whole_before_they_are_cut(tmp_path: Path) -> None:
    """The index holds texts cut short (a first user message, a title, a fact); a token at the cut
    leaves no piece of it in Parquet, and a skipped file's name is redacted."""
    folder, tokens = _cut_corpus(tmp_path / "sessions")
    proc = run("export-corpus", folder, "--index", tmp_path / "i.duckdb", "--parquet", tmp_path / "pq",
               "--atif", tmp_path / "atif", "--redact", extra_env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert b"skipped" in proc.stdout and b"[REDACTED:github-token:" in proc.stdout
    written = _written(tmp_path / "pq") + _written(tmp_path / "atif") + (proc.stdout + proc.stderr).decode()
    pieces = [token[:12] for token in tokens] + [token[4:16] for token in tokens]
    assert [piece for piece in pieces if piece in written] == []
    facts = duckdb.sql(f"SELECT text FROM read_parquet('{tmp_path / 'pq' / 'evaluation_facts.parquet'}') "
                       "WHERE kind = 'command'").fetchall()
    assert facts and all(text.startswith("make yyy") for (text,) in facts)
    first = duckdb.sql(f"SELECT first_user_message, title FROM read_parquet('{tmp_path / 'pq' / 'sessions.parquet'}') "
                       "WHERE first_user_message LIKE 'xxx%'").fetchall()
    assert first[0][0].startswith("x" * 100) and first[0][0].endswith(" [REDACTED:githu") and len(first[0][0]) == 4000


def _site_files(folder: Path) -> str:
    """Every file of a site, and every file name in it."""
    return _written(folder) + "\n" + "\n".join(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_export_corpus_site_without_redact_holds_the_values(corpus: Path, tmp_path: Path) -> None:
    proc = run("export-corpus", corpus, "--index", tmp_path / "i.duckdb", "--site", tmp_path / "site",
               extra_env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert set(planted.SECRETS) <= set(planted.survivors(_site_files(tmp_path / "site")))


def test_export_corpus_site_redact_writes_no_value_in_any_file_or_name(corpus: Path, tmp_path: Path) -> None:
    proc = run("export-corpus", corpus, "--index", tmp_path / "i.duckdb", "--site", tmp_path / "site",
               "--redact", *FLAGS, extra_env=ENV)
    assert proc.returncode == 0, proc.stderr
    written = _site_files(tmp_path / "site")
    assert "[REDACTED:" in written and "sessions/REDACTED-" in written  # a file name redacted too
    assert planted.survivors(written) == []
    assert planted.survivors(proc.stdout + proc.stderr) == []
    assert len(list((tmp_path / "site" / "sessions").glob("*.html"))) == 1
