"""The corpus index: declared tables, incremental re-scans, problems, the no-double-counting rule, memory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import pikit
from pikit.corpus import TABLES, Corpus
from pikit.corpus._frames import COLUMNS
from tests.corpus.corpora import assistant, header, user, write

DAY = "2026-11-02T"


def _corpus(root: Path, tmp_path: Path, **options: object) -> Corpus:
    return Corpus.open(root, index=tmp_path / "index.duckdb", **{"workers": 1, **options})  # type: ignore[arg-type]


def test_tables_have_the_declared_columns_in_duckdb_and_pandas(sample_corpus: Path, tmp_path: Path) -> None:
    with _corpus(sample_corpus, tmp_path) as corpus:
        for table, specs in TABLES.items():
            described = corpus.connection.execute(f'DESCRIBE SELECT * FROM "{table}"').fetchall()
            names = [row[0] for row in described if row[0] != "file_id"]
            assert names == [name for name, _, _ in specs], table
            frame = corpus.table(table)
            assert list(frame.columns) == [c.name for c in COLUMNS[table]]
            assert [str(t) for t in frame.dtypes] == [c.dtype for c in COLUMNS[table]], table
            assert len(frame) > 0, table


def test_sessions_table_describes_each_file(sample_corpus: Path, tmp_path: Path) -> None:
    with _corpus(sample_corpus, tmp_path) as corpus:
        sessions = corpus.sessions
        assert len(sessions) == 37  # the damaged file and the version-1 file are sessions too
        assert sessions.started.is_monotonic_decreasing
        v1 = sessions[sessions.version == 1]
        assert len(v1) == 1 and v1.entries.iloc[0] > 5
        assert v1.leaf_id.iloc[0] == pikit.load(v1.path.iloc[0]).leaf_id  # the id pikit's migration gives it
        forks = sessions[sessions.parent_session.notna()]
        assert len(forks) >= 6 and (forks.copied_cost > 0).all()
        assert (sessions.abandoned_branches > 0).sum() >= 5
        assert sessions.name.notna().sum() >= 30 and sessions.first_user_message.notna().all()
        entry_types = json.loads(sessions.entry_types.iloc[0])
        assert entry_types["message"] == sessions.messages.iloc[0]


def test_no_double_counting_of_forked_copies(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    source = write(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_s1.jsonl", header("s1"),
                   user("u1", None, DAY + "08:00:01.000Z", "first"), assistant("a1", "u1", DAY + "08:00:02.000Z", 100))
    # a fork to another project: every entry copied (same ids and timestamps), then its own turn
    write(root / "--home-dev-zzz--" / "2026-11-02T09-00-00-000Z_s2.jsonl",
          header("s2", "/home/dev/zzz", str(source), DAY + "09:00:00.000Z"),
          user("u1", None, DAY + "08:00:01.000Z", "first"), assistant("a1", "u1", DAY + "08:00:02.000Z", 100),
          user("u2", "a1", DAY + "09:00:01.000Z", "second"), assistant("a2", "u2", DAY + "09:00:02.000Z", 7))
    with _corpus(root, tmp_path) as corpus:
        rows = {r["key"]: r for r in corpus.usage_rows("session", timezone="UTC")}
        assert rows["s1"]["inputTokens"] == 100 and rows["s2"]["inputTokens"] == 7
        assert corpus.usage_rows("day", timezone="UTC")[0]["inputTokens"] == 107
        messages = corpus.sql("SELECT session_id, entry_id, counted FROM messages WHERE role = 'assistant' "
                              "ORDER BY session_id, entry_id")
        assert messages.values.tolist() == [["s1", "a1", True], ["s2", "a1", False], ["s2", "a2", True]]
        sessions = corpus.sessions.set_index("session_id")
        assert sessions.loc["s2", "input_tokens"] == 7 and sessions.loc["s2", "copied_cost"] == 0.01


def test_appended_lines_are_read_alone_and_a_partial_line_waits(sample_corpus: Path, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    shutil.copytree(sample_corpus, root)
    target = sorted(root.glob("--home-dev-shop-api--/*.jsonl"))[0]
    on_active = "SELECT entry_id FROM messages WHERE path = $p AND on_active_branch"
    with _corpus(root, tmp_path) as corpus:
        before = corpus.sql("SELECT count(*) AS n FROM messages").n[0]
        leaf = corpus.sql(f"SELECT leaf_id FROM sessions WHERE path = '{target}'").leaf_id[0]
        active = set(corpus.sql(on_active, {"p": str(target)}).entry_id)
    assert active
    line = json.dumps(assistant("beefcafe", leaf, "2026-11-09T10:00:00.000Z", 5000, 1.5)).encode() + b"\n"
    with target.open("ab") as out:
        out.write(line[:40])  # a line being written
    with _corpus(root, tmp_path) as corpus:
        assert corpus.last_scan is not None
        assert (corpus.last_scan.read_appended, corpus.last_scan.bytes_read) == (1, 0)
        assert corpus.sql("SELECT count(*) AS n FROM messages").n[0] == before
        assert corpus.sql("SELECT kind FROM problems WHERE path = $p", {"p": str(target)}).kind.tolist() == \
            ["unfinished-line"]
    with target.open("ab") as out:
        out.write(line[40:])
    with _corpus(root, tmp_path) as corpus:
        assert corpus.last_scan.read_appended == 1 and corpus.last_scan.bytes_read == len(line)
        assert corpus.last_scan.unchanged == 36
        assert corpus.sql("SELECT count(*) AS n FROM messages").n[0] == before + 1
        row = corpus.sql(f"SELECT leaf_id, cost FROM sessions WHERE path = '{target}'")
        assert row.leaf_id[0] == "beefcafe"
        assert set(corpus.sql(on_active, {"p": str(target)}).entry_id) == active | {"beefcafe"}
        assert corpus.usage_rows("day", timezone="UTC")[-1]["key"] == "2026-11-09"
        assert corpus.sql("SELECT count(*) AS n FROM problems WHERE path = $p", {"p": str(target)}).n[0] == 0


def test_an_index_kept_up_with_growth_equals_a_fresh_one(sample_corpus: Path, tmp_path: Path) -> None:
    """Lines appended to files (some in two scans, one line cut in half) leave every table as a fresh scan has it."""
    root = tmp_path / "sessions"
    shutil.copytree(sample_corpus, root)
    files = sorted(root.glob("*/*.jsonl"))
    grown = [files[i] for i in (0, 5, 11, 20)]
    tails = {}
    for path in grown:  # hold back each file's last entries, to append them later
        lines = path.read_bytes().split(b"\n")[:-1]
        keep = max(2, len(lines) - 6)
        path.write_bytes(b"\n".join(lines[:keep]) + b"\n")
        tails[path] = lines[keep:]

    def table_rows(corpus: Corpus) -> dict[str, list[str]]:
        return {table: sorted(map(repr, corpus.table(table).itertuples(index=False))) for table in TABLES}

    with _corpus(root, tmp_path, workers=2):
        pass
    for step in range(2):
        for path, tail in tails.items():
            chunk = tail[:3] if step == 0 else tail[3:]
            data = b"".join(line + b"\n" for line in chunk)
            with path.open("ab") as out:
                out.write(data[:-7] if step == 0 and path == grown[0] else data)  # one line cut short
        if step == 0:
            with _corpus(root, tmp_path, workers=2) as corpus:
                assert corpus.last_scan is not None and corpus.last_scan.read_appended == len(grown)
            with grown[0].open("ab") as out:
                out.write((b"".join(line + b"\n" for line in tails[grown[0]][:3]))[-7:])
    with _corpus(root, tmp_path, workers=2) as corpus, \
            Corpus.open(root, index=tmp_path / "fresh.duckdb", workers=1) as fresh:
        assert corpus.last_scan is not None and corpus.last_scan.read_appended == len(grown)
        kept, anew = table_rows(corpus), table_rows(fresh)
        for table in TABLES:
            assert kept[table] == anew[table], table
        assert corpus.search_sessions("the") == fresh.search_sessions("the")


def test_a_file_read_on_from_its_mark_keeps_its_earlier_search_text(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    path = write(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_s.jsonl", header("s"),
                 user("u1", None, DAY + "08:00:01.000Z", "alpha"), assistant("a1", "u1", DAY + "08:00:02.000Z", 5))
    with _corpus(root, tmp_path) as corpus:
        assert corpus.search_sessions("alpha") == [str(path)]
    with path.open("a") as out:
        out.write(json.dumps(user("u2", "a1", DAY + "08:00:03.000Z", "beta"), separators=(",", ":")) + "\n")
    with _corpus(root, tmp_path) as corpus, Corpus.open(root, index=tmp_path / "fresh.duckdb", workers=1) as fresh:
        assert corpus.last_scan is not None and corpus.last_scan.read_appended == 1
        for words in ("alpha", "beta", "alpha beta"):
            assert corpus.search_sessions(words) == fresh.search_sessions(words) == [str(path)], words


def test_a_cost_too_large_for_a_double_is_infinity_as_in_javascript(tmp_path: Path) -> None:
    """JSON.parse makes a 401-digit number Infinity; the scan does too, and JSON prints it as null."""
    root = tmp_path / "sessions"
    huge = json.dumps(assistant("a1", None, DAY + "08:00:02.000Z", 5), separators=(",", ":")).replace(
        '"total":0.01', '"total":1' + "0" * 400)
    path = write(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_s.jsonl", header("s"),
                 tail=huge.encode() + b"\n")
    with _corpus(root, tmp_path) as corpus:
        assert corpus.connection.execute("SELECT cost, countable FROM messages").fetchall() == [(float("inf"), True)]
        assert corpus.problems.empty and corpus.sessions.path.tolist() == [str(path)]
    # a day with -Infinity besides: the totals' cost is NaN, printed as null, as JSON.stringify does
    write(root / "--home-dev-app--" / "2026-11-03T08-00-00-000Z_t.jsonl", header("t"),
          tail=huge.replace('"total":1', '"total":-1').replace("2026-11-02T", "2026-11-03T").encode() + b"\n")
    printed = subprocess.run([sys.executable, "-m", "pikit", "usage", str(root), "--by", "day", "--json",
                              "--timezone", "UTC", "--index", str(tmp_path / "cli.duckdb")],
                             capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(printed.stdout)
    assert [row["cost"] for row in report["rows"]] == [None, None] and report["totals"]["cost"] is None


@pytest.mark.parametrize("state_bytes", [1, 1 << 30])
@pytest.mark.slow
def test_a_scan_cut_short_is_completed_by_the_next(state_bytes: int, sample_corpus: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Interrupted with messages written but other tables and states not (or written too): the next scan
    leaves every table as a fresh scan has it."""
    from pikit.corpus import _index as index

    monkeypatch.setattr(index, "_FLUSH_ROWS", 300)
    monkeypatch.setattr(index, "_STATE_BYTES", state_bytes)

    def stop_after_half(done: int, total: int) -> None:
        if done > total // 2:
            raise KeyboardInterrupt

    corpus = Corpus.open(sample_corpus, index=tmp_path / "index.duckdb", workers=1, scan=False)
    with corpus, pytest.raises(KeyboardInterrupt):
        corpus.scan(stop_after_half)
    with _corpus(sample_corpus, tmp_path) as again, \
            Corpus.open(sample_corpus, index=tmp_path / "fresh.duckdb", workers=1) as fresh:
        for table in TABLES:
            assert sorted(map(repr, again.table(table).itertuples(index=False))) == \
                sorted(map(repr, fresh.table(table).itertuples(index=False))), table
        assert again.usage_rows("session", timezone="UTC") == fresh.usage_rows("session", timezone="UTC")


def test_a_rewritten_or_shrunk_file_is_read_again_whole(sample_corpus: Path, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    shutil.copytree(sample_corpus, root)
    target = sorted(root.glob("--home-dev-docs-site--/*.jsonl"))[1]
    with _corpus(root, tmp_path) as corpus:
        entries = corpus.sql(f"SELECT entries FROM sessions WHERE path = '{target}'").entries[0]
    lines = target.read_bytes().split(b"\n")
    target.write_bytes(b"\n".join(lines[:10]) + b"\n")  # shrunk (e.g. rewritten by a tool)
    with _corpus(root, tmp_path) as corpus:
        assert corpus.last_scan.read_whole == 1
        assert corpus.sql(f"SELECT entries FROM sessions WHERE path = '{target}'").entries[0] == 9 < entries
    target.write_bytes(b"\n".join([lines[0].replace(b'"cwd":"', b'"cwd":"/x'), *lines[1:12]]) + b"\n")
    with _corpus(root, tmp_path) as corpus:  # grew, but changed before the old end: whole again
        assert corpus.last_scan.read_whole == 1
        assert corpus.sql(f"SELECT cwd FROM sessions WHERE path = '{target}'").cwd[0].startswith("/x")


def test_removed_files_leave_the_index(sample_corpus: Path, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    shutil.copytree(sample_corpus, root)
    with _corpus(root, tmp_path):
        pass
    gone = sorted(root.glob("*/*.jsonl"))[3]
    gone.unlink()
    with _corpus(root, tmp_path) as corpus:
        assert corpus.last_scan.removed == 1
        assert str(gone) not in set(corpus.sessions.path)
        assert corpus.sql("SELECT count(*) AS n FROM messages WHERE path = $p", {"p": str(gone)}).n[0] == 0


@pytest.mark.skipif(sys.platform == "win32", reason="named pipes")
def test_bad_input_becomes_problems_and_never_stops_a_scan(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    good = write(root / "--a--" / "good.jsonl", header("good"), user("u1", None, DAY + "08:00:01.000Z", "hi"),
                 assistant("a1", "u1", DAY + "08:00:02.000Z", 10))
    write(root / "--a--" / "notes.jsonl", {"kind": "not a session", "n": 1})
    (root / "--a--" / "damaged.jsonl").write_bytes(json.dumps(header("dmg")).encode() + b"\n{broken\n\xff\xfe\n"
                                                   + json.dumps(user("u1", None, DAY + "08:00:03.000Z", "ok")).encode()
                                                   + b"\n")
    (root / "--a--" / "empty.jsonl").write_bytes(b"")
    os.mkfifo(root / "--a--" / "pipe.jsonl")
    (root / "--a--" / "folder.jsonl").mkdir()
    (root / "--b--").mkdir()
    with _corpus(root, tmp_path) as corpus:
        problems = corpus.problems
        kinds = {(Path(p).name, k) for p, k in zip(problems.path, problems.kind, strict=True)}
        assert kinds == {("notes.jsonl", "not-a-session"), ("damaged.jsonl", "damaged-line"),
                         ("empty.jsonl", "not-a-session"), ("pipe.jsonl", "unreadable")}
        assert sorted(problems[problems.kind == "damaged-line"].line.tolist()) == [2, 3]
        assert set(corpus.sessions.session_id) == {"good", "dmg"}
    assert good.exists()


def test_odd_but_valid_sessions_are_indexed_with_pis_estimates(tmp_path: Path) -> None:
    """Lone surrogates, NUL, odd ids and roles, BOMs, mixed line endings: indexed, estimates as the core's."""
    import pikit
    from pikit import estimate_tokens
    from tests.weird import weird_sessions

    (tmp_path / "weird").mkdir()
    files = weird_sessions(tmp_path / "weird")
    with _corpus(tmp_path / "weird", tmp_path) as corpus:
        assert len(corpus.sessions) + len(set(corpus.problems[corpus.problems.kind == "not-a-session"].path)) \
            == len(files)
        surrogates = str(files["surrogates-and-nul"])
        rows = corpus.sql("SELECT entry_index, estimate, entry_id FROM messages WHERE path = $p ORDER BY entry_index",
                          {"p": surrogates})
        session = pikit.load(surrogates)
        expected = [estimate_tokens(e.message) for e in session.entries if e.type == "message"]
        assert rows.estimate.tolist() == expected
        assert any("\ufffd" in str(i) for i in rows.entry_id)  # a lone surrogate in an id, stored as U+FFFD


def test_search_finds_the_sessions_holding_every_word_in_path_order(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    for name in ("c", "a", "b"):  # written out of order: the answer is sorted all the same
        write(root / "--home-dev-app--" / f"2026-11-02T08-00-00-000Z_{name}.jsonl", header(name),
              user("u1", None, DAY + "08:00:01.000Z", f"Fix the parser in {name}.py"))
    # a user message of an unusual shape (a block that is not an object) still has its text found
    odd = user("u1", None, DAY + "08:00:01.000Z", "Fix the lexer")
    odd["message"]["content"].append("stray")
    write(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_d.jsonl", header("d"), odd)
    with _corpus(root, tmp_path) as corpus:
        names = [Path(p).stem.split("_")[1] for p in corpus.search_sessions("FIX the")]
        assert names == ["a", "b", "c", "d"]
        assert [Path(p).stem.split("_")[1] for p in corpus.search_sessions("parser fix")] == ["a", "b", "c"]
        assert [Path(p).stem.split("_")[1] for p in corpus.search_sessions("lexer")] == ["d"]
        assert corpus.search_sessions("parser lexer") == [] and corpus.search_sessions("  ") == []
        assert corpus.sessions.set_index("session_id").loc["d", "first_user_message"] == "Fix the lexer"


def test_usage_of_an_unusual_shape_is_read_as_ccusage_reads_it(tmp_path: Path) -> None:
    """Fractions are cut to whole tokens; booleans, strings and huge numbers make a usage not countable."""
    root = tmp_path / "sessions"
    entries = [header("s")]
    shapes = [{"input": 10.7, "output": 2}, {"input": True, "output": 2}, {"input": "10", "output": 2},
              {"input": 2**62, "output": 2}, {"input": 2**61, "output": 2**61}, {"input": 5, "output": 1}]
    for k, shape in enumerate(shapes):
        entry = assistant(f"a{k}", f"a{k - 1}" if k else None, DAY + f"08:00:0{k}.000Z", 0)
        entry["message"]["usage"] = shape
        entries.append(entry)
    write(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_s.jsonl", *entries)
    with _corpus(root, tmp_path) as corpus:
        rows = corpus.connection.execute("SELECT entry_id, input_tokens, total_tokens, countable FROM messages "
                                         "ORDER BY entry_index").fetchall()
        assert rows == [("a0", 10, 12, True), ("a1", None, None, False), ("a2", None, None, False),
                        ("a3", None, None, False), ("a4", None, None, False), ("a5", 5, 6, True)]


def test_a_file_name_that_is_not_utf8_is_a_problem(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    write(root / "--a--" / "good.jsonl", header("good"), user("u1", None, DAY + "08:00:01.000Z", "hi"))
    odd = os.fsencode(root / "--a--") + b"/bad\xff.jsonl"
    with open(odd, "wb") as handle:
        handle.write((json.dumps(header("bad")) + "\n").encode())
    with _corpus(root, tmp_path) as corpus:
        assert corpus.sessions.session_id.tolist() == ["good"]
        problem = corpus.problems.iloc[0]
        assert problem.kind == "unreadable" and "not valid UTF-8" in problem.message
        assert problem.path.endswith("bad\ufffd.jsonl")


def test_a_file_that_vanishes_mid_scan_is_a_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pikit.corpus import _index as index

    root = tmp_path / "sessions"
    write(root / "--a--" / "one.jsonl", header("one"), user("u1", None, DAY + "08:00:01.000Z", "hi"))
    doomed = write(root / "--a--" / "two.jsonl", header("two"), user("u1", None, DAY + "08:00:01.000Z", "hi"))
    real_plan = index.plan

    def plan_then_delete(*args: object) -> object:
        found = real_plan(*args)  # type: ignore[arg-type]
        doomed.unlink()
        return found

    monkeypatch.setattr(index, "plan", plan_then_delete)
    with _corpus(root, tmp_path) as corpus:
        assert corpus.problems[["kind"]].values.ravel().tolist() == ["vanished"]
        assert corpus.sessions.session_id.tolist() == ["one"]


def test_an_empty_directory_and_a_missing_one(tmp_path: Path) -> None:
    from pikit.errors import PikitError

    (tmp_path / "empty").mkdir()
    with _corpus(tmp_path / "empty", tmp_path) as corpus:
        assert corpus.sessions.empty and corpus.problems.kind.tolist() == ["no-sessions"]
    with pytest.raises(PikitError, match="no such file or folder"):
        Corpus.open(tmp_path / "missing", index=":memory:")


def test_default_directory_honours_pis_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pikit.corpus import default_index_path, default_root

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    assert default_root() == str(tmp_path / "agent" / "sessions")
    write(tmp_path / "agent" / "sessions" / "--p--" / "s.jsonl", header("s"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with Corpus.open(workers=1) as corpus:
        assert corpus.sessions.session_id.tolist() == ["s"]
        assert corpus.index_path == default_index_path() and corpus.index_path.startswith(str(tmp_path / "cache"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/agent-elsewhere")
    assert default_root() == os.path.join(os.path.expanduser("~"), "agent-elsewhere", "sessions")


def test_globs_and_lists_of_files(sample_corpus: Path) -> None:
    with Corpus.open(str(sample_corpus / "--home-dev-infra--" / "*.jsonl"), index=":memory:", workers=1) as corpus:
        assert set(corpus.sessions.folder) == {"--home-dev-infra--"}
        assert set(corpus.sessions.project) == {"/home/dev/infra"}  # the header's cwd
    files = sorted(sample_corpus.glob("*/*.jsonl"))[:3]
    with Corpus.open(files, index=":memory:", workers=1) as corpus:
        assert len(corpus.sessions) == 3


@pytest.mark.slow
def test_parallel_scan_equals_one_process(sample_corpus: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from pikit.corpus import _index

    monkeypatch.setattr(_index, "POOL_BYTES", 0)  # (the sample is smaller than what a pool is started for)
    with Corpus.open(sample_corpus, index=":memory:", workers=1) as one, \
            Corpus.open(sample_corpus, index=":memory:", workers=2) as two:
        for table in TABLES:
            assert one.table(table).equals(two.table(table)), table


def _worker_state(path: str) -> tuple[bool, int, int]:
    import gc

    from pikit.corpus._filescan import scan_in_worker

    result = scan_in_worker(path, 1)
    return gc.isenabled(), os.nice(0), len(result.tables["messages"].values[0])


@pytest.mark.slow
def test_scan_workers_read_niced_and_without_the_cyclic_collector(sample_corpus: Path) -> None:
    """The pool's workers (pikit's own processes) run below the writer's priority and without the cyclic
    garbage collector; the process that started them keeps its own settings."""
    import gc
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from pikit.corpus._filescan import scan_file, start_worker

    path = str(sorted(sample_corpus.glob("*/*.jsonl"))[0])
    before = gc.isenabled(), os.nice(0)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver"), initializer=start_worker) as pool:
        states = [pool.submit(_worker_state, path).result(timeout=120) for _ in range(70)]  # (a collection at 64)
    assert {(enabled, nice) for enabled, nice, _ in states} == {(False, min(before[1] + 5, 19))}
    assert {rows for _, _, rows in states} == {len(scan_file(path, 1).tables["messages"].values[0])}
    assert (gc.isenabled(), os.nice(0)) == before


@pytest.mark.parametrize("force_pool", [False, True])
@pytest.mark.slow
def test_a_script_on_standard_input_scans_in_one_process(force_pool: bool, sample_corpus: Path) -> None:
    """Pool workers cannot start from a script read from stdin: the scan reads here (a broken pool falls back)."""

    from tests.procs import env

    script = "\n".join([
        "import pikit.corpus._index as index",
        "index._workers_can_start = lambda: True" if force_pool else "",
        "index.POOL_BYTES = 0",
        "from pikit.corpus import Corpus",
        f"with Corpus.open({str(sample_corpus)!r}, index=':memory:', workers=2) as corpus:",
        "    print(len(corpus.sessions), int(corpus.sql('SELECT count(*) AS n FROM messages').n[0]))"])
    proc = subprocess.run([sys.executable, "-"], input=script.encode(), capture_output=True, timeout=300, env=env())
    assert proc.returncode == 0, proc.stderr.decode()
    with Corpus.open(sample_corpus, index=":memory:", workers=1) as here:
        messages = int(here.sql("SELECT count(*) AS n FROM messages").n[0])
    assert proc.stdout.split() == [b"37", str(messages).encode()]
    if not force_pool:
        assert b"Traceback" not in proc.stderr


def test_packed_columns_become_the_same_values_in_numpy() -> None:
    import numpy as np

    from pikit.corpus._filescan import pack, to_numpy

    parts = [pack([1, 2], "Int64"), pack([3, None], "Int64"), pack([2**70], "Int64"), pack([1.5], "Int64")]
    assert [type(part).__name__ for part in parts] == ["array", "list", "list", "list"]
    assert to_numpy(np, parts).tolist() == [1, 2, 3, None, 2**70, 1.5]
    flags = to_numpy(np, [pack([True, False], "boolean"), pack([True], "boolean")])
    assert flags.dtype == bool and flags.tolist() == [True, False, True]
    costs = to_numpy(np, [pack([0.25], "Float64"), pack([1, 2], "Float64")])
    assert costs.dtype == np.float64 and costs.tolist() == [0.25, 1.0, 2.0]
    assert to_numpy(np, [pack(("a", None), "string"), pack(["b"], "string")]).tolist() == ["a", None, "b"]


def test_numbers_with_missing_values_become_masked_arrays() -> None:
    import numpy as np

    from pikit.corpus._filescan import pack, to_numpy

    counts = to_numpy(np, [pack([None] * 2_000, "Int64"), pack([3_000_000_000, None], "Int64")], "Int64")
    assert counts.dtype == np.int64 and counts.tolist() == [None] * 2_000 + [3_000_000_000, None]
    costs = to_numpy(np, [pack([None, 1], "Float64"), pack([0.5], "Float64")], "Float64")
    assert costs.dtype == np.float64 and costs.tolist() == [None, 1.0, 0.5]
    assert to_numpy(np, [pack([None, True], "boolean")], "boolean").tolist() == [None, True]
    huge = to_numpy(np, [pack([None, 2**70], "Int64")], "Int64")  # (not an int64: kept as it is)
    assert huge.dtype == object and huge.tolist() == [None, 2**70]


def test_a_count_beyond_32_bits_after_many_messages_without_usage(tmp_path: Path) -> None:
    """DuckDB types a column of Python objects by a sample of its values: a large total among many missing
    ones once stopped the scan ("out of range for type INT")."""
    lines, parent = [header("big")], None
    for i in range(3_000):
        stamp = f"{DAY}10:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
        lines.append(user(f"e{i}", parent, stamp, "hello") if i % 10 else
                     assistant(f"e{i}", parent, stamp, tokens=3_000_000_000 if i == 2_990 else 100))
        parent = f"e{i}"
    write(tmp_path / "s" / "big.jsonl", *lines)
    with Corpus.open(tmp_path / "s", index=tmp_path / "index.duckdb", workers=1) as corpus:
        assert corpus.sql("SELECT max(input_tokens) AS t FROM messages").t[0] == 3_000_000_000
        assert corpus.table("problems").empty


def test_compactions_and_branches(sample_corpus: Path, tmp_path: Path) -> None:
    with _corpus(sample_corpus, tmp_path) as corpus:
        compactions = corpus.compactions
        fired = compactions[compactions.threshold.notna()]
        assert len(fired) > 20 and (fired.over_threshold > 0).sum() >= len(fired) - 1  # the v1 one was manual
        assert (fired.threshold == fired.context_window - 16384).all()
        assert (compactions.tokens_after < compactions.tokens_before).all()
        assert compactions.summary_cost.notna().sum() > 20
        branches = corpus.branches
        active = branches[branches.is_active]
        assert len(active) == len(corpus.sessions) and (active.own_entries == active.length).all()
        abandoned = branches[branches.abandoned]
        assert (abandoned.own_entries < abandoned.length).all() and abandoned.fork_id.notna().all()
        assert corpus.sql("SELECT sum(cost) AS c FROM branches WHERE abandoned").c[0] > 0


def test_memory_does_not_grow_with_the_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows are written in batches (of 20,000 messages; 2,000 here) and nothing per file stays behind."""
    from pikit.corpus import _index as index

    monkeypatch.setattr(index, "_FLUSH_ROWS", 2_000)
    monkeypatch.setattr(index, "_STATE_BYTES", 64 * 1024)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "sample_corpus"))
    from generate import generate  # type: ignore[import-not-found]

    peaks = []
    for sessions in (6, 24):
        root = tmp_path / f"c{sessions}"
        generate(root, sessions=sessions, mb=0.4, seed=3)
        tracemalloc.start()
        with Corpus.open(root, index=tmp_path / f"i{sessions}.duckdb", workers=1):
            pass
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 1.6 * peaks[0], peaks


def test_a_long_scan_checkpoints_as_it_goes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB holds what is not checkpointed yet in memory, beyond its buffers: a scan checkpoints every
    ``_CHECKPOINT_ROWS`` messages, so its write-ahead log (and that memory) does not grow with the corpus."""
    from pikit.corpus import _index as index

    monkeypatch.setattr(index, "_FLUSH_ROWS", 200)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data" / "sample_corpus"))
    from generate import generate

    root = tmp_path / "sessions"
    generate(root, sessions=24, mb=0.4, seed=3)

    def largest_log(every: int) -> int:
        monkeypatch.setattr(index, "_CHECKPOINT_ROWS", every)
        wal = tmp_path / f"{every}.duckdb.wal"
        sizes = [0]
        with Corpus.open(root, index=tmp_path / f"{every}.duckdb", workers=1, scan=False) as corpus:
            corpus.scan(lambda done, total: sizes.append(wal.stat().st_size if wal.exists() else 0))
            assert corpus.sql("SELECT count(*) AS n FROM messages").n[0] > 10 * 500
        return max(sizes)

    checkpointed, not_checkpointed = largest_log(500), largest_log(1 << 40)
    assert 0 < checkpointed < not_checkpointed / 4, (checkpointed, not_checkpointed)


@pytest.mark.slow
def test_search_text_larger_than_duckdbs_memory_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A corpus grows scan after scan until its search text is larger than DuckDB's memory limit (24 MB here):
    every scan completes and every file's words are found. (A checkpoint rewrites a table's last row group
    holding its strings in memory: the search text is kept in short rows, one per entry.)"""
    from pikit.corpus import _index as index
    from pikit.corpus._scan import TEXT_LIMIT

    monkeypatch.setattr(index, "_MEMORY_LIMIT", "24MB")
    words = [f"w{k}" for k in range(1_000)]
    root = tmp_path / "sessions"
    for batch in range(8):
        for number in range(batch * 10, batch * 10 + 10):
            lines, parent = [header(f"s{number}")], None
            for i in range(400):
                text = " ".join(words[(number * 7 + i * 13 + j) % len(words)] for j in range(250))
                lines.append(user(f"e{i}", parent, f"{DAY}10:{i // 60:02d}:{i % 60:02d}.000Z",
                                  f"{text} file{number}x"))
                parent = f"e{i}"
            write(root / f"s{number:02d}.jsonl", *lines)
        with Corpus.open(root, index=tmp_path / "index.duckdb", workers=1) as corpus:
            assert corpus.last_scan is not None and corpus.last_scan.read_whole == 10
    with Corpus.open(root, index=tmp_path / "index.duckdb", workers=1) as corpus:
        sizes = corpus.sql("SELECT sum(length(text)) AS total, max(length(text)) AS longest FROM texts")
        assert sizes.total[0] > 30_000_000 and sizes.longest[0] <= TEXT_LIMIT
        assert corpus.search_sessions("file7x") == [str(root / "s07.jsonl")]
        assert corpus.search_sessions("file79x w3") == [str(root / "s79.jsonl")]


def test_the_layer_imports_heavy_packages_lazily() -> None:

    code = ("import sys, pikit.corpus, pikit.cli._corpus, pikit.cli._app; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'duckdb', 'pandas', 'pyarrow', 'dask', "
            "'distributed', 'numpy', 'fsspec'}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("which", ["sample", "shared"])
def test_estimates_and_usage_equal_the_core(which: str, sample_corpus: Path, shared_sessions: Path) -> None:
    """The lean scan's per-message figures are the core's (Pi's estimate, the usage), file by file."""
    import pikit
    from pikit import estimate_tokens

    root = sample_corpus if which == "sample" else shared_sessions
    with Corpus.open(root, index=":memory:", workers=1) as corpus:
        rows = corpus.sql("SELECT path, entry_index, entry_id, role, estimate, input_tokens FROM messages")
        for path, group in rows.groupby("path"):
            session = pikit.load(path)
            messages = [e for e in session.entries if e.type == "message"]
            assert len(messages) == len(group), path
            for entry, row in zip(messages, group.sort_values("entry_index").itertuples(), strict=True):
                assert row.estimate == estimate_tokens(entry.message), (path, entry.id)
                if session.report.migrated_from is None:  # a v1 file gets fresh ids when loaded
                    assert row.entry_id == entry.id
                usage = (entry.message or {}).get("usage") if entry.role == "assistant" else None
                if isinstance(usage, dict) and isinstance(usage.get("input"), int):
                    assert row.input_tokens == usage["input"]


def test_settling_only_the_copies_equals_counting_everything_again(sample_corpus: Path, tmp_path: Path) -> None:
    with _corpus(sample_corpus, tmp_path) as corpus:
        query = "SELECT path, entry_index, counted FROM messages ORDER BY path, entry_index"
        first = corpus.sql(query)
        corpus._index.recount(None)
        assert corpus.sql(query).equals(first)
        assert first.counted.sum() > 500


def test_a_failed_insert_raises_its_own_error_and_the_index_goes_on() -> None:
    import duckdb

    from pikit.corpus._filescan import Columns
    from pikit.corpus._index import _STATE_COLUMNS, Index
    from pikit.corpus._indexfile import transaction

    def states(file_id: object) -> list[Columns]:
        return [Columns(*_STATE_COLUMNS, [[file_id], [1], [2], [3], [b"mark"], [b"state"]])]

    index = Index(":memory:")
    with pytest.raises(duckdb.ConversionException), transaction(index.con):
        index._insert("states", states("not a file id"))  # (the transaction aborts: unregistering fails too)
    with transaction(index.con):
        index._insert("states", states(7))
    assert index.con.execute("SELECT file_id, size FROM states").fetchall() == [(7, 1)]
    index.close()


def test_a_file_whose_id_is_wider_than_64_bits_is_scanned_and_read_again_next_time(tmp_path: Path) -> None:
    """Its scan state cannot be stored (msgpack holds 64-bit integers): its rows are, and the next scan reads it
    whole again rather than failing."""
    root = tmp_path / "sessions"
    wide = 2 ** 70
    write(root / "wide.jsonl", header("w1"), user("u1", None, f"{DAY}09:00:00.000Z", "hi"),
          {**assistant("a1", "u1", f"{DAY}09:00:01.000Z", 1000, 0.5), "parentId": wide})
    write(root / "plain.jsonl", header("p1"), user("u1", None, f"{DAY}10:00:00.000Z", "hi"),
          assistant("a1", "u1", f"{DAY}10:00:01.000Z", 2000, 0.25))
    for _ in range(2):
        with _corpus(root, tmp_path) as corpus:
            assert corpus.last_scan is not None and corpus.last_scan.problems == 0
            assert corpus.sql("SELECT sum(cost) AS c FROM sessions").c[0] == pytest.approx(0.75)
            assert corpus.sql("SELECT count(*) AS n FROM messages").n[0] == 4
    assert corpus.last_scan.read_whole == 1 and corpus.last_scan.unchanged == 1  # (the wide one read again)
