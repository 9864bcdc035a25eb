"""``export-corpus --parquet`` when writing fails: one line, and the tables all written or none.

A read-only folder and a folder in the way are real; a write that fails part-way is real too (a
file-size limit the child runs under, which holds root as well), and a full disk (ENOSPC) is
simulated in this process, in the layer that writes each table.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pikit.corpus import TABLES, Corpus, _export as export_module, export_parquet
from pikit.errors import WriteError
from tests.corpus.test_index_access import _file_size_limit, _unprivileged
from tests.procs import env, one_error_line


@pytest.fixture(scope="module")
def index(sample_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of the sample corpus with its compactions evaluated, made once (the runs below find nothing new to
    scan or evaluate: what they write is the Parquet tables)."""
    path = tmp_path_factory.mktemp("index") / "index.duckdb"
    with Corpus.open(sample_corpus, index=path) as corpus:
        corpus.evaluate()
    return path


def _export(sample_corpus: Path, index: Path, out: Path, *flags: str, prefix: tuple[str, ...] = (),
            preexec: Any = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*prefix, sys.executable, "-m", "pikit", "export-corpus", str(sample_corpus), "--index",
                           str(index), "--parquet", str(out), *flags], capture_output=True, timeout=300, env=env(),
                          preexec_fn=preexec)


def test_a_folder_in_the_way_is_one_line_before_anything_is_written(sample_corpus: Path, index: Path,
                                                                    tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "sessions.parquet").mkdir(parents=True)
    (out / "messages.parquet").write_bytes(b"an earlier export")
    unscanned = tmp_path / "unscanned.duckdb"
    one_error_line(_export(sample_corpus, unscanned, out, "--force"), str(out / "sessions.parquet"), "is a folder")
    assert not unscanned.exists()  # refused before the scan
    assert sorted(os.listdir(out)) == ["messages.parquet", "sessions.parquet"]
    assert (out / "messages.parquet").read_bytes() == b"an earlier export"
    with Corpus.open(None, index=index, scan=False) as corpus, pytest.raises(WriteError, match="is a folder"):
        export_parquet(corpus, out, overwrite=True)
    assert sorted(os.listdir(out)) == ["messages.parquet", "sessions.parquet"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_read_only_folder_is_one_line_and_nothing_is_left(sample_corpus: Path, index: Path, tmp_path: Path) -> None:
    out = tmp_path / "read-only"
    out.mkdir()
    prefix = tuple(_unprivileged())
    out.chmod(0o555)
    try:
        one_error_line(_export(sample_corpus, index, out, prefix=prefix), str(out), "Permission denied")
        assert os.listdir(out) == []
    finally:
        out.chmod(0o755)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")
def test_an_index_that_cannot_grow_is_one_line_naming_its_folder(sample_corpus: Path, tmp_path: Path) -> None:
    """The export evaluates the compactions into the index first: a write of the index that fails for want of
    room is the index's one line (its folder, make room or another --index), never a database traceback."""
    fresh = tmp_path / "index" / "fresh.duckdb"
    fresh.parent.mkdir()
    with Corpus.open(sample_corpus, index=fresh):
        pass  # scanned, not evaluated
    limit = _file_size_limit(100_000)  # the evaluations outgrow it in the write-ahead log
    line = one_error_line(_export(sample_corpus, fresh, tmp_path / "out", preexec=limit), str(fresh.parent),
                          "cannot write the corpus index there (File too large)", "make room")
    assert "--index" in line and not (tmp_path / "out").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")
def test_a_write_that_fails_part_way_leaves_nothing(sample_corpus: Path, index: Path, tmp_path: Path) -> None:
    """The first table fits under the limit and the second does not (the limit holds for root too)."""
    out = tmp_path / "new"
    line = one_error_line(_export(sample_corpus, index, out, preexec=_file_size_limit(100_000)), str(out),
                          "File too large", "make room")
    assert "nothing was written" in line
    assert not out.exists()  # the folder the export made goes with the tables
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "sessions.parquet").write_bytes(b"an earlier export")
    one_error_line(_export(sample_corpus, index, kept, "--force", preexec=_file_size_limit(100_000)), str(kept))
    assert os.listdir(kept) == ["sessions.parquet"] and (kept / "sessions.parquet").read_bytes() == b"an earlier export"


def test_a_full_disk_after_five_tables_leaves_none(index: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import duckdb

    real = export_module._copy_table
    written: list[str] = []

    def full_at_the_sixth(corpus: Corpus, name: str, folder: str, redact: bool) -> str:
        if len(written) == 5:
            partial = Path(folder) / f".{name}.parquet.partial"
            partial.write_bytes(b"PAR1 half a table")  # as a write that stopped part-way leaves it
            raise duckdb.IOException(f'IO Error: Could not write file "{partial}": No space left on device')
        written.append(name)
        return real(corpus, name, folder, redact)

    monkeypatch.setattr(export_module, "_copy_table", full_at_the_sixth)
    out = tmp_path / "out"
    with Corpus.open(None, index=index, scan=False) as corpus, pytest.raises(WriteError) as failed:
        export_parquet(corpus, out)
    message = str(failed.value)
    assert "No space left on device" in message and "make room" in message and "\n" not in message
    assert str(out) in message and "Traceback" not in message
    assert len(written) == 5 and not out.exists()
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    written.clear()
    with Corpus.open(None, index=index, scan=False) as corpus, pytest.raises(WriteError):
        export_parquet(corpus, out, overwrite=True)
    assert os.listdir(out) == ["notes.txt"]
    monkeypatch.undo()
    with Corpus.open(None, index=index, scan=False) as corpus:
        export_parquet(corpus, out, overwrite=True)
    assert sorted(os.listdir(out)) == sorted(["notes.txt", *(f"{name}.parquet" for name in TABLES)])
