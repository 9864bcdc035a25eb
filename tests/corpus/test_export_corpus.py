"""``pikit export-corpus``: the index tables as Parquet, every session's active branch as valid ATIF."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import pikit
from pikit.corpus import ATIF_VERSION, TABLES, Corpus, atif_trajectory, export_atif, export_parquet
from pikit.errors import WriteError
from tests.corpus.atif_check import problems
from tests.procs import pikit as run_pikit
from tests.weird import weird_sessions

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "sample_sessions"


@pytest.fixture(scope="module")
def exported(sample_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export")
    done = run_pikit("export-corpus", sample_corpus, "--index", out / "index.duckdb", "--parquet", out / "parquet",
                     "--atif", out / "atif", timeout=300)
    assert done.returncode == 0, done.stderr
    return out


def test_every_table_is_written_with_its_declared_columns(exported: Path) -> None:
    import duckdb

    con = duckdb.connect()
    with Corpus.open(None, index=exported / "index.duckdb", scan=False) as corpus:
        for name, columns in TABLES.items():
            path = exported / "parquet" / f"{name}.parquet"
            described = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()
            assert [row[0] for row in described] == [c for c, _, _ in columns], name
            got = con.execute(f"SELECT count(*) FROM read_parquet('{path}')").fetchone()
            assert got is not None and got[0] == corpus.rows(f'SELECT count(*) FROM "{name}"')[0][0] > 0, name
    assert sorted(os.listdir(exported / "parquet")) == sorted(f"{name}.parquet" for name in TABLES)


def test_the_parquet_reads_back_in_pandas(exported: Path) -> None:
    import pandas as pd

    sessions = pd.read_parquet(exported / "parquet" / "sessions.parquet")
    with Corpus.open(None, index=exported / "index.duckdb", scan=False) as corpus:
        want = corpus.sessions
    assert sorted(sessions["path"]) == sorted(want["path"])
    assert sessions["cost"].sum() == pytest.approx(want["cost"].sum())


def test_every_trajectory_is_valid_atif(exported: Path) -> None:
    files = sorted((exported / "atif").iterdir())
    with Corpus.open(None, index=exported / "index.duckdb", scan=False) as corpus:
        sessions = corpus.rows("SELECT count(*) FROM sessions WHERE migrated_to IS NULL")[0][0]
    assert len(files) == sessions
    kinds: set[str] = set()
    for path in files:
        document = json.loads(path.read_text(encoding="utf-8"))
        assert problems(document) == [], path.name
        assert document["schema_version"] == ATIF_VERSION
        kinds.update(step["extra"]["pi"].get("context_management", "") for step in document["steps"])
    assert {"compaction", "branch_summary"} <= kinds


def test_a_compaction_is_a_context_management_step_with_the_summary() -> None:
    session = pikit.load(str(SAMPLES / "refactor-auth.jsonl"))
    document = atif_trajectory(session)
    assert document is not None and problems(document) == []
    steps = [s for s in document["steps"] if s["extra"]["pi"].get("context_management") == "compaction"]
    compactions = [e for e in session.branch() if e.type == "compaction"]
    assert [s["extra"]["pi"]["entry_id"] for s in steps] == [e.id for e in compactions]
    last = steps[-1]
    assert last["source"] == "system" and last["observation"]["results"][0]["content"] == compactions[-1]["summary"]
    assert last["extra"]["pi"]["tokens_before"] == compactions[-1]["tokensBefore"]
    assert last["extra"]["pi"]["summarized_entry_ids"] == session.context(compactions[-1].id).summarized_ids


def test_usage_becomes_step_metrics_and_tool_results_observations() -> None:
    session = pikit.load(str(SAMPLES / "quick-tour.jsonl"))
    document = atif_trajectory(session)
    assert document is not None and problems(document) == []
    agent = [s for s in document["steps"] if s["source"] == "agent"]
    first = next(e for e in session.branch() if e.role == "assistant")
    usage = first.message["usage"]  # type: ignore[index]
    assert agent[0]["metrics"]["prompt_tokens"] == usage["input"] + usage["cacheRead"] + usage["cacheWrite"]
    assert agent[0]["metrics"]["completion_tokens"] == usage["output"]
    assert agent[0]["metrics"]["cached_tokens"] == usage["cacheRead"]
    assert agent[0]["metrics"]["cost_usd"] == usage["cost"]["total"]
    call = agent[0]["tool_calls"][0]
    assert call["function_name"] == "read"
    assert agent[0]["observation"]["results"][0]["source_call_id"] == call["tool_call_id"]
    totals = document["final_metrics"]
    assert totals["total_completion_tokens"] == sum(s["metrics"]["completion_tokens"] for s in agent)
    assert totals["total_steps"] == len(document["steps"])


@pytest.mark.parametrize("name", ["xss-and-unicode.jsonl", "wide-tree.jsonl", "damaged.jsonl"])
def test_the_other_samples_make_valid_atif(name: str) -> None:
    document = atif_trajectory(pikit.load(str(SAMPLES / name)))
    assert document is not None and problems(document) == []


def test_weird_sessions_make_valid_atif_or_none(tmp_path: Path) -> None:
    for name, path in weird_sessions(tmp_path).items():
        try:
            session = pikit.load(str(path))
        except pikit.SessionFileError:
            continue
        document = atif_trajectory(session)
        if document is not None:
            assert problems(json.loads(json.dumps(document))) == [], name


def test_the_checker_catches_what_harbor_refuses() -> None:
    document = atif_trajectory(pikit.load(str(SAMPLES / "quick-tour.jsonl")))
    assert document is not None
    broken = json.loads(json.dumps(document))
    broken["steps"][1]["step_id"] = 7
    assert broken["steps"][0]["source"] == "user"
    broken["steps"][0]["metrics"] = {"prompt_tokens": 1}
    with_results = next(s for s in broken["steps"] if "observation" in s and s["source"] == "agent")
    with_results["observation"]["results"][0]["source_call_id"] = "nope"
    assert len(problems(broken)) == 3
    del broken["agent"]
    assert any("'agent' is a required property" in p for p in problems(broken))


def test_out_must_be_new_or_empty_unless_force(sample_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    index = tmp_path / "index.duckdb"
    done = run_pikit("export-corpus", sample_corpus, "--index", index, "--parquet", out, timeout=300)
    assert done.returncode == 1
    assert done.stderr.decode().startswith(f"pikit: error: {out}: is not empty;") and b"--force" in done.stderr
    assert sorted(os.listdir(out)) == ["keep.txt"]
    assert not index.exists()  # refused before the scan
    done = run_pikit("export-corpus", sample_corpus, "--index", index, "--parquet", out, "--force", timeout=300)
    assert done.returncode == 0, done.stderr
    assert (out / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert (out / "sessions.parquet").is_file()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    done = run_pikit("export-corpus", sample_corpus, "--index", index, "--atif", tmp_path / "file", "--force")
    assert done.returncode == 1 and b"is not a folder" in done.stderr


@pytest.mark.parametrize("case", ["empty", "not-a-session", "missing"])
def test_a_dir_that_is_no_corpus_is_one_line(tmp_path: Path, case: str) -> None:
    source = tmp_path / "src"
    if case == "empty":
        source.mkdir()
    elif case == "not-a-session":
        source.write_text('{"not": "a header"}\n', encoding="utf-8")
    done = run_pikit("export-corpus", source, "--index", tmp_path / "i.duckdb", "--parquet", tmp_path / "out")
    assert done.returncode == 1
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pikit: error:"), lines
    assert not (tmp_path / "out").exists()


def test_an_index_pikit_did_not_make_is_left_alone(sample_corpus: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.duckdb"
    foreign.write_bytes(b"not a database")
    done = run_pikit("export-corpus", sample_corpus, "--index", foreign, "--parquet", tmp_path / "out")
    assert done.returncode == 1 and b"--index" in done.stderr
    assert foreign.read_bytes() == b"not a database"


def test_the_export_only_reads_the_index_once_its_evaluations_are_filled_in(sample_corpus: Path,
                                                                             tmp_path: Path) -> None:
    index = tmp_path / "index.duckdb"
    with Corpus.open(sample_corpus, index=index) as corpus:
        assert corpus.rows("SELECT count(*) FROM evaluations")[0][0] == 0  # filled in on demand
        export_parquet(corpus, tmp_path / "a")
        tables = {name: corpus.rows(f'SELECT count(*) FROM "{name}"')[0][0] for name in TABLES}
        assert tables["evaluations"] == corpus.rows("SELECT count(*) FROM compactions")[0][0] > 0
        assert tables["evaluation_facts"] > 0
        export_parquet(corpus, tmp_path / "c")
        export_atif(corpus, tmp_path / "b")
        assert {name: corpus.rows(f'SELECT count(*) FROM "{name}"')[0][0] for name in TABLES} == tables
        with pytest.raises(WriteError, match="pass overwrite=True"):
            export_parquet(corpus, tmp_path / "a")


def test_a_session_gone_since_the_scan_is_skipped(sample_corpus: Path, tmp_path: Path) -> None:
    copy = tmp_path / "sessions"
    shutil.copytree(sample_corpus, copy)
    with Corpus.open(copy, index=tmp_path / "index.duckdb") as corpus:
        gone = corpus.rows("SELECT path FROM sessions WHERE migrated_to IS NULL ORDER BY path")[0][0]
        os.remove(gone)
        done = export_atif(corpus, tmp_path / "out")
    assert list(done.skipped) == [gone]
    assert len(done.files) == len(os.listdir(tmp_path / "out"))
