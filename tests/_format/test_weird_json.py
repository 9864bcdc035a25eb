"""Weird but parseable JSON: odd ids, unknown roles, lone surrogates, NUL, BOMs, mixed line endings.

No command and no core API may answer any of them with a traceback; Pi's behaviour stays
the reference where it has one (a BOM before the header is not a session, for Pi either).
Every command runs as a real process with a time limit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pikit
from pikit import NotASessionError
from pikit.compaction import CompactionSettings, prepare_compaction, simulate
from pikit.llm import OfflineSummarizer
from tests.procs import pikit as run_pikit
from tests.weird import weird_sessions

COMMANDS = [
    ["tree"], ["tree", "--json"], ["tree", "--filter", "all"], ["tree", "--search", "text"],
    ["context"], ["context", "--json"], ["info"], ["info", "--json"],
    ["compact", "--dry-run", "--keep-recent-tokens", "1,10,100"], ["compact", "--dry-run", "--json"],
    ["simulate", "--context-window", "40"], ["simulate", "--context-window", "40,60", "--keep-recent-tokens", "5,50"],
    ["simulate", "--context-window", "40", "--json"],
    ["simulate", "--context-window", "40", "--strategy", "pi,none,mask-observations,codex-inline,truncate"],
    ["evaluate", "--all"], ["evaluate", "--all", "--json"],
]


def _simulate(session: pikit.Session) -> None:
    settings = CompactionSettings(True, reserve_tokens=10, keep_recent_tokens=5)
    simulate(session, OfflineSummarizer(), context_window=40, settings=settings)


@pytest.fixture(scope="module")
def weird(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return weird_sessions(tmp_path_factory.mktemp("weird"))


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", ["odd-ids", "odd-roles", "odd-lab", "surrogates-and-nul", "bom-first",
                                  "bom-later", "mixed-endings", "everything"])
@pytest.mark.slow
def test_no_command_answers_with_a_traceback(weird: dict[str, Path], name: str, tmp_path: Path) -> None:
    path = weird[name]
    index = tmp_path / "i.duckdb"
    writes = [["migrate", "-o", tmp_path / "m.jsonl"], ["export", "-o", tmp_path / "page.html"],
              ["compact", "--keep-recent-tokens", "1", "-o", tmp_path / "c.jsonl"],
              ["sessions", "--index", index], ["sessions", "--search", "text", "--json", "--index", index],
              ["usage", "--by", "session", "--index", index], ["usage", "--by", "day", "--json", "--index", index]]
    for argv in [*COMMANDS, *writes]:
        proc = run_pikit(argv[0], path, *argv[1:], timeout=60)
        err = proc.stderr.decode("utf-8", "replace")
        assert "Traceback" not in err and proc.returncode in (0, 1), (argv, err)
        if proc.returncode:
            assert len([line for line in err.splitlines() if line.startswith("pikit: error:")]) == 1, err
        if name == "bom-first" and argv[0] in ("sessions", "usage"):  # a corpus lists it as a problem
            assert proc.returncode == 0 and "1 not-a-session" in err
        elif name == "bom-first":
            assert proc.returncode == 1 and "not a session header" in err  # as in Pi


def test_odd_ids_are_reported_and_the_rest_works(weird: dict[str, Path]) -> None:
    session = pikit.load(weird["odd-ids"])
    kinds = {p.kind for p in session.report.problems}
    assert "bad-id" in kinds
    for entry_id in list(session.by_id):
        ctx = session.context(entry_id)
        assert len(ctx.messages) == len(ctx.estimates)
        prepare_compaction(session.branch(entry_id), 1)
    for mode in ("default", "no-tools", "user-only", "labeled-only", "all"):
        session.flatten(mode=mode)
    assert session.tree()["roots"]
    assert session.context(7).path[-1].id == 7 and "" in session.by_id
    _simulate(session)


def test_unknown_roles_load_project_and_compact(weird: dict[str, Path]) -> None:
    session = pikit.load(weird["odd-roles"])
    ctx = session.context()
    assert len(ctx.messages) >= 10 and all(isinstance(n, int) and n >= 0 for n in ctx.estimates)
    for keep in (1, 10, 1000):
        prepare_compaction(session.branch(), keep, ctx)
    _simulate(session)


def test_lone_surrogates_stay_exact_in_json_and_show_as_replacement_characters(weird: dict[str, Path]) -> None:
    path = weird["surrogates-and-nul"]
    proc = run_pikit("context", path, "--json", timeout=60)
    assert proc.returncode == 0 and b"lone \\udfff and \\u0000 nul" in proc.stdout
    proc = run_pikit("context", path, timeout=60)
    text = proc.stdout.decode("utf-8")  # valid UTF-8: no surrogate reached the terminal
    assert "lone \ufffd and ^@ nul" in text
    proc = run_pikit("tree", path, "--filter", "all", timeout=60)
    assert proc.returncode == 0 and "x\ufffd^@y" in proc.stdout.decode("utf-8")  # the label
    session = pikit.load(path)
    assert session.name == "name \udc00\x00" and "s\ud800" in session.by_id


def test_raw_nul_bytes_and_raw_control_characters_damage_their_line_only(tmp_path: Path) -> None:
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'
    good = b'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}'
    bad = [b'{"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"x\x00y"}}',
           b'\x00\x00\x00', b'{"type":"label","id":"c"\x1b,"parentId":"a"}']
    path = tmp_path / "raw.jsonl"
    path.write_bytes(b"\n".join([header, good, *bad, good.replace(b'"a"', b'"d"', 1)]) + b"\n")
    session = pikit.load(path)
    assert [e.id for e in session.entries] == ["a", "d"]
    assert [p.line for p in session.report.damaged_lines] == [3, 4, 5]
    proc = run_pikit("info", path, timeout=60)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr


def test_mixed_line_endings_load_every_entry(weird: dict[str, Path]) -> None:
    session = pikit.load(weird["mixed-endings"])
    assert [e.id for e in session.entries] == ["m1", "m2", "m3", "m4", "m5"]
    assert session.report.damaged_lines == []


def test_a_bom_before_the_header_is_not_a_session_and_later_costs_one_line(weird: dict[str, Path]) -> None:
    with pytest.raises(NotASessionError):
        pikit.load(weird["bom-first"])
    later = pikit.load(weird["bom-later"])
    assert [e.id for e in later.entries] == ["b1", "b3"] and [p.line for p in later.report.damaged_lines] == [3]


@pytest.mark.parametrize("name", ["odd-ids", "odd-roles", "surrogates-and-nul", "bom-later", "mixed-endings",
                                  "everything"])
def test_every_widget_lays_out_and_follows_clicks_on_odd_sessions(weird: dict[str, Path], name: str) -> None:
    from pikit.widgets import CompactionPanel, CompactionStepper, SessionExplorer

    session = pikit.load(weird[name])
    explorer = SessionExplorer(session)
    for entry_id in explorer.tree.row_ids:  # every row clicked: the leaf moves, the context follows
        explorer.tree.select(entry_id)
        assert explorer.context_view.leaf_id == explorer.tree.leaf_id
    CompactionPanel(session)
    CompactionStepper(session)
    assert session._repr_html_()


def test_the_corpus_names_the_bom_of_a_file_that_starts_with_one(weird: dict[str, Path], tmp_path: Path) -> None:
    proc = run_pikit("problems", weird["bom-first"], "--index", tmp_path / "i.duckdb", "--json", timeout=60)
    assert proc.returncode == 0, proc.stderr
    problems = json.loads(proc.stdout)["problems"]
    assert [p["kind"] for p in problems] == ["not-a-session"]
    assert "byte order mark" in problems[0]["message"] and problems[0]["message"].startswith("line 1")
