"""Every ``--json`` output on the hostile session: exact as ``JSON.stringify`` writes it, never mangled.

The session (:func:`tests.widgets.synthetic.hostile_session_lines`) has lone surrogates, NUL,
terminal escapes, a C1 CSI and bidi overrides in its text, ids, labels, name, cwd, tool names,
paths and model names. JSON output keeps every one of them: lone surrogates and C0 controls as
the escapes JavaScript writes (``\\ud800``, ``\\u001b``), the rest as the characters themselves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pikit
from pikit import jsjson
from pikit.cli._json import watch as watch_json
from pikit.cli._watch import status_of
from tests.procs import pikit as run_pikit
from tests.widgets.synthetic import TWINS, UNSAFE, hostile_session_lines, write_session

# What JSON.stringify writes for UNSAFE: escapes for lone surrogates and C0 controls, the rest as is.
UNSAFE_JSON = jsjson.stringify(UNSAFE)[1:-1].encode("utf-8")


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return write_session(tmp_path / "sessions" / "--tmp--" / "hostile.jsonl", hostile_session_lines())


def _exact(stdout: bytes) -> object:
    """The output parsed as JavaScript parses it, after checking it holds UNSAFE exactly as JSON writes it."""
    assert b"\\ud800" in UNSAFE_JSON and "\u202e".encode() in UNSAFE_JSON and "\x9b".encode() in UNSAFE_JSON
    assert UNSAFE_JSON in stdout, stdout[:2000]
    assert b"M-^[" not in stdout and b"<U+202E>" not in stdout  # nothing went through the terminal's rule
    return jsjson.loads(stdout)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("argv", [
    ["tree"], ["context"], ["info"], ["compact", "--dry-run", "--keep-recent-tokens", "1"],
    ["branch-summary", "--pair", "label:0000000c", "--dry-run"], ["simulate", "--context-window", "3000"],
], ids=lambda argv: argv[0])  # (an argument cannot hold a lone surrogate: unique prefixes name those entries)
def test_every_session_command_prints_exact_json(hostile: Path, argv: list[str]) -> None:
    proc = run_pikit(argv[0], hostile, *argv[1:], "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    _exact(proc.stdout)


def test_tree_json_keeps_the_ids_exact(hostile: Path) -> None:
    proc = run_pikit("tree", hostile, "--json", timeout=60)
    tree = _exact(proc.stdout)
    assert proc.stdout == jsjson.stringify_bytes(pikit.load(hostile).tree())
    assert isinstance(tree, dict) and set(tree["children"]["alt " + UNSAFE]) == set(TWINS)


@pytest.mark.timeout(120)
def test_watch_json_prints_the_exact_escapes(hostile: Path, tmp_path: Path) -> None:
    lines = hostile.read_bytes().splitlines(keepends=True)
    main = tmp_path / "main.jsonl"
    main.write_bytes(b"".join(lines[:14]))  # up to the context edit after the compaction
    for path, leaf in ((main, None), (hostile, "label " + UNSAFE)):
        proc = run_pikit("watch", path, "--json", "--idle-exit", "0", "--context-window", "4000", timeout=60)
        assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
        assert proc.stdout.count(b"\n") == 1
        expected = watch_json.status(status_of(pikit.load(path), context_window=4000))
        assert proc.stdout == jsjson.stringify_bytes(expected) + b"\n"
        _exact(proc.stdout)
        status = jsjson.loads(proc.stdout)
        if leaf is None:
            assert status["lastCompaction"]["id"] == "compaction " + UNSAFE
        else:
            assert status["leafId"] == leaf


@pytest.mark.timeout(300)
def test_corpus_json_keeps_control_characters_exact(hostile: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "index.duckdb")
    proc = run_pikit("sessions", hostile.parent.parent, "--index", index, "--json", timeout=240)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    # The index holds lone surrogates as U+FFFD (DuckDB keeps valid UTF-8 only); the rest stays exact.
    stored = jsjson.stringify(pikit.jsjson.without_lone_surrogates(UNSAFE))[1:-1].encode("utf-8")
    assert stored in proc.stdout and b"\\u001b]52;c;" in proc.stdout and b"M-^[" not in proc.stdout
    (row,) = jsjson.loads(proc.stdout)["sessions"]
    assert UNSAFE.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd") in row["name"]
    proc = run_pikit("usage", hostile.parent.parent, "--index", index, "--by", "project", "--json", timeout=240)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert jsjson.loads(proc.stdout)["rows"]
