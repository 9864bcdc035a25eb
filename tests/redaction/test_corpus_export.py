"""export-corpus --redact: no planted value in any Parquet table or ATIF trajectory."""

from __future__ import annotations

import shutil
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


def _site_files(folder: Path) -> str:
    """Every file of a site, and every file name in it."""
    return _written(folder) + "\n" + "\n".join(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture(scope="module")
def named_corpus(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The planted session twice: once with a secret in its file name."""
    folder = tmp_path_factory.mktemp("named") / "sessions"
    shutil.copytree(corpus, folder)
    shutil.copy(folder / "planted.jsonl", folder / f"planted-{planted.SECRETS['github-token'][0]}.jsonl")
    return folder


def test_export_corpus_site_without_redact_holds_the_values(named_corpus: Path, tmp_path: Path) -> None:
    proc = run("export-corpus", named_corpus, "--index", tmp_path / "i.duckdb", "--site", tmp_path / "site",
               extra_env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert set(planted.SECRETS) <= set(planted.survivors(_site_files(tmp_path / "site")))


def test_export_corpus_site_redact_writes_no_value_in_any_file_or_name(named_corpus: Path, tmp_path: Path) -> None:
    proc = run("export-corpus", named_corpus, "--index", tmp_path / "i.duckdb", "--site", tmp_path / "site",
               "--redact", *FLAGS, extra_env=ENV)
    assert proc.returncode == 0, proc.stderr
    written = _site_files(tmp_path / "site")
    assert "[REDACTED:" in written and "sessions/REDACTED-" in written  # a file name redacted too
    assert planted.survivors(written) == []
    assert planted.survivors(proc.stdout + proc.stderr) == []
    assert len(list((tmp_path / "site" / "sessions").glob("*.html"))) == 2
