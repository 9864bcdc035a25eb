"""The corpus index holds the evaluation of every recorded compaction: filled in when asked, redone on change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pikit
from pikit import charts
from pikit.corpus import Corpus
from pikit.corpus._evaluate import evaluate_files
from tests.entries import compaction, ts, user

#: The corpus guide's query: whose summaries lose the most modified files, per model.
LOST_MODIFIED = """
SELECT e.model,
       count(*) AS modified_files,
       count(*) FILTER (WHERE NOT f.kept) AS lost,
       round(lost / modified_files, 3) AS lost_share
FROM evaluation_facts f
JOIN evaluations e USING (path, entry_id)
JOIN compactions c USING (path, entry_id)
WHERE f.kind = 'modified_file' AND NOT c.copied
GROUP BY e.model
ORDER BY lost_share DESC, e.model"""


def test_every_recorded_compaction_is_evaluated(sample_corpus: Path, tmp_path: Path) -> None:
    with Corpus.open(sample_corpus, index=str(tmp_path / "i.duckdb"), workers=1) as corpus:
        assert corpus.rows("SELECT count(*) FROM evaluations") == [(0,)]  # (not the scan's work)
        evaluations = corpus.evaluations
        assert len(evaluations) == corpus.rows("SELECT count(*) FROM compactions")[0][0] > 0
        assert corpus.evaluate() == 0  # nothing left to evaluate
        row = evaluations.iloc[0]
        expected = pikit.evaluate(pikit.load(row["path"]), row["entry_id"])
        assert isinstance(expected, pikit.compaction.Evaluation)
        assert (row["facts"], row["kept"]) == (len(expected.facts), sum(expected.kept))
        facts = corpus.evaluation_facts
        assert int(evaluations["facts"].sum()) == len(facts)
        lost = corpus.sql(LOST_MODIFIED)
        assert list(lost.columns) == ["model", "modified_files", "lost", "lost_share"] and len(lost)
        figure = charts.summary_recall(corpus)
        assert {p.get_gid() for p in figure.axes[0].patches} == {f"recall:{m}" for m in lost.model}


def test_a_changed_file_is_evaluated_again(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / "a.jsonl"
    header = {"type": "session", "version": 3, "id": "s", "timestamp": ts(0), "cwd": "/w"}
    lines = [header, user("u1", None, 1, "The name is `alpha_beta`."), user("u2", "u1", 2, "more"),
             compaction("c1", "u2", 3, "u2", summary="nothing")]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    with Corpus.open(folder, index=str(tmp_path / "i.duckdb"), workers=1) as corpus:
        assert corpus.evaluation_facts[["kind", "text", "kept"]].values.tolist() == [
            ["identifier", "alpha_beta", False]]
        with path.open("a", encoding="utf-8") as out:
            for line in (user("u3", "c1", 4, "Now `gamma_delta`."), user("u4", "u3", 5, "ok"),
                         compaction("c2", "u4", 6, "u4", summary="kept gamma_delta")):
                out.write(json.dumps(line) + "\n")
        corpus.scan()
        assert corpus.rows("SELECT count(*) FROM evaluations") == [(0,)]
        assert corpus.evaluate() == 1
        assert sorted(corpus.evaluations["entry_id"]) == ["c1", "c2"]
        kept = corpus.rows("SELECT kept FROM evaluation_facts WHERE entry_id = 'c2' AND text = 'gamma_delta'")
        assert kept == [(True,)]


def test_a_compaction_whose_id_a_later_entry_took_is_left_out(tmp_path: Path) -> None:
    """Its id names the later entry, which is no compaction: the other compactions are evaluated, nothing fails."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    header = {"type": "session", "version": 3, "id": "s", "timestamp": ts(0), "cwd": "/w"}
    lines = [header, user("u1", None, 1, "The name is `alpha_beta`."), user("u2", "u1", 2, "more"),
             compaction("c1", "u2", 3, "u2", summary="nothing"), user("u3", "c1", 4, "Now `gamma_delta`."),
             user("u4", "u3", 5, "ok"), compaction("c2", "u4", 6, "u4", summary="kept gamma_delta"),
             user("c1", "c2", 7, "this message took the first compaction's id")]
    (folder / "a.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    with Corpus.open(folder, index=str(tmp_path / "i.duckdb"), workers=1) as corpus:
        assert corpus.evaluate() == 1
        assert corpus.evaluations["entry_id"].tolist() == ["c2"]


def test_workers_give_the_rows_in_the_jobs_order(sample_corpus: Path, sample_sessions: Path,
                                                 shared_sessions: Path) -> None:
    """The workers take the largest files (or groups of files) first; the rows still come in the jobs' order, as
    this process computes them."""
    paths = [*sorted(sample_corpus.rglob("*.jsonl"), key=lambda p: p.stat().st_size),
             *sorted(sample_sessions.glob("*.jsonl")), *sorted(shared_sessions.glob("*.jsonl"))]
    jobs = [(number, str(path), f"s{number}") for number, path in enumerate(paths, 1)]
    here = list(evaluate_files(jobs, workers=1))
    assert sum(len(rows) for table, rows in here if table == "evaluations") > 10
    assert list(evaluate_files(jobs, workers=2)) == here
    grouped = [([5, 0, 3], frozenset({"any"})), ([len(jobs) - 1, 1], frozenset())]  # (out of order, as forks come)
    assert list(evaluate_files(jobs, workers=2, groups=grouped)) == here
    assert list(evaluate_files(jobs, workers=1, groups=grouped)) == here


NO_MAIN_GUARD = """
import json, sys
from pikit.corpus._evaluate import evaluate_files
jobs = [tuple(job) for job in json.loads(sys.argv[1])]
print(json.dumps(list(evaluate_files(jobs, workers=2))))
"""


def test_workers_that_cannot_start_leave_the_work_to_this_process(sample_corpus: Path, tmp_path: Path) -> None:
    """A script without a main guard: each worker runs the script again, cannot start workers of its own and
    dies; the evaluation goes on in the script's process, with the same rows."""
    import subprocess
    import sys

    from tests.procs import env

    paths = sorted(sample_corpus.rglob("*.jsonl"))
    jobs = [(number, str(path), f"s{number}") for number, path in enumerate(paths, 1)]
    script = tmp_path / "script.py"
    script.write_text(NO_MAIN_GUARD, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), json.dumps(jobs)], capture_output=True, text=True,
                          timeout=300, env=env(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    here = json.loads(json.dumps(list(evaluate_files(jobs, workers=1))))
    assert sum(len(rows) for table, rows in here if table == "evaluations") > 3
    assert json.loads(done.stdout) == here


def test_a_session_and_its_fork_share_the_evaluation_of_what_the_fork_copied(tmp_path: Path,
                                                                             monkeypatch: Any) -> None:
    """The fork copies the branch with its two compactions and adds one of its own: five rows, three spans
    worked out; the fork's copies have the original's facts."""
    from pikit.compaction import _evaluation

    folder = tmp_path / "sessions"
    folder.mkdir()
    header = {"type": "session", "version": 3, "id": "s", "timestamp": ts(0), "cwd": "/w"}
    branch = [user("u1", None, 1, "The name is `alpha_beta`."), user("u2", "u1", 2, "more"),
              compaction("c1", "u2", 3, "u2", summary="nothing"), user("u3", "c1", 4, "Now `gamma_delta`."),
              compaction("c2", "u3", 5, "u3", summary="kept gamma_delta")]
    fork = [{**header, "id": "f", "parentSession": str(folder / "a.jsonl")}, *branch,
            user("u4", "c2", 6, "And `epsilon`."), compaction("c3", "u4", 7, "u4", summary="none")]
    (folder / "a.jsonl").write_text("".join(json.dumps(x) + "\n" for x in [header, *branch]), encoding="utf-8")
    (folder / "b.jsonl").write_text("".join(json.dumps(x) + "\n" for x in fork), encoding="utf-8")
    evaluated: list[str] = []  # (the source of the last replaced message of each span worked out)
    work = _evaluation._facts_kept
    monkeypatch.setattr(_evaluation, "_facts_kept", lambda p, c, w: evaluated.append(p[-1][0]) or work(p, c, w))
    with Corpus.open(folder, index=str(tmp_path / "i.duckdb"), workers=1) as corpus:
        assert corpus.evaluate() == 2
        facts = corpus.rows("SELECT path, entry_id, kind, text, kept FROM evaluation_facts ORDER BY ALL")
    assert sorted(evaluated) == ["u1", "u2", "u3"]  # (c1, c2 and c3: each replaces up to its firstKept)
    by_file = {name: [row[1:] for row in facts if row[0].endswith(name)] for name in ("a.jsonl", "b.jsonl")}
    assert by_file["a.jsonl"] and by_file["a.jsonl"] == [row for row in by_file["b.jsonl"] if row[0] != "c3"]


def test_a_group_larger_than_a_workers_share_is_given_out_in_parts() -> None:
    """A session forked many times would hold one worker while the others wait: its group is cut into parts of
    at most a worker's share (a larger file alone), each part keeping the shared ids."""
    from pikit.corpus._evaluate import _split

    shared = frozenset({"k"})
    assert _split([([0, 1, 2, 3, 4], shared), ([5], frozenset())], [3, 3, 9, 3, 3, 1], 7) == [
        ([0, 1], shared), ([2], shared), ([3, 4], shared), ([5], frozenset())]


def test_lone_surrogates_in_a_session_are_stored_as_the_scan_stores_them(tmp_path: Path) -> None:
    """A lone surrogate (a valid JSON escape, not valid UTF-8) in a fact, a compaction id and a model name reaches
    the index as U+FFFD, as the scan writes the compaction's id, instead of failing the whole evaluation; the
    rows join the compactions table."""
    from tests.entries import asst, text

    folder = tmp_path / "sessions"
    folder.mkdir()
    header = {"type": "session", "version": 3, "id": "s", "timestamp": ts(0), "cwd": "/w"}
    lines = [header, user("u1", None, 1, "Rename `alpha_\ud800beta` \x1b[31mnow\x07."),
             asst("a1", "u1", 2, text("Renamed it."), model="m\udc00"), user("u2", "a1", 3, "more"),
             compaction("c\ud800", "u2", 4, "u2", summary="nothing")]
    (folder / "a.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    with Corpus.open(folder, index=str(tmp_path / "i.duckdb"), workers=1) as corpus:
        assert corpus.evaluate() == 1
        assert corpus.rows("SELECT e.entry_id, e.model FROM evaluations e JOIN compactions c USING (path, entry_id)"
                           ) == [("c\ufffd", "anthropic/m\ufffd")]
        texts = [row[0] for row in corpus.rows("SELECT text FROM evaluation_facts")]
    assert any("alpha_\ufffdbeta" in t for t in texts) and not any("\ud800" in t for t in texts)
