"""The ``pikit`` command line: every command's plain and --json output, errors, no writes to sources."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit import jsjson
from pikit.cli import main
from pikit.cli._json import compaction as compaction_json, context as context_json
from pikit.compaction import prepare_compaction

T0 = 1767225600000
HEADER = {"type": "session", "version": 3, "id": "sess-cli", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


def _ts(s: int) -> str:
    return f"2026-01-01T00:00:{s:02d}.000Z"


def _msg(i: str, p: Any, s: int, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": i, "parentId": p, "timestamp": _ts(s),
            "message": {**message, "timestamp": T0 + s * 1000}}


def _user(i: str, p: Any, s: int, text: str) -> dict[str, Any]:
    return _msg(i, p, s, {"role": "user", "content": text})


def _asst(i: str, p: Any, s: int, content: list[dict[str, Any]], total: int) -> dict[str, Any]:
    return _msg(i, p, s, {"role": "assistant", "content": content, "provider": "anthropic", "model": "claude",
                          "stopReason": "stop", "usage": {"input": total, "output": 0, "cacheRead": 0,
                                                          "cacheWrite": 0, "totalTokens": total}})


ENTRIES = [
    {"type": "model_change", "id": "aa000001", "parentId": None, "timestamp": _ts(1), "provider": "anthropic",
     "modelId": "claude"},
    _user("bb000002", "aa000001", 2, "please read the config file " * 5),
    _asst("cc000003", "bb000002", 3, [{"type": "text", "text": "reading"},
                                      {"type": "toolCall", "id": "t1", "name": "read",
                                       "arguments": {"path": "src/config.ts", "limit": 1.0}}], 120),
    _msg("dd000004", "cc000003", 4, {"role": "toolResult", "toolCallId": "t1", "toolName": "read",
                                     "content": [{"type": "text", "text": "config body " * 40}], "isError": False}),
    _asst("ee000005", "dd000004", 5, [{"type": "text", "text": "the config sets the port to 8080 " * 3}], 400),
    {"type": "label", "id": "ff000006", "parentId": "ee000005", "timestamp": _ts(6), "targetId": "bb000002",
     "label": "start"},
    _user("ab000007", "ff000006", 7, "now change the port " * 4),
    _asst("ac000008", "ab000007", 8, [{"type": "toolCall", "id": "t2", "name": "edit",
                                       "arguments": {"path": "src/config.ts", "old": "8080", "new": "9090"}}], 450),
    _user("ad000009", "ee000005", 9, "actually, explain it instead"),
    {"type": "session_info", "id": "ae000010", "parentId": "ad000009", "timestamp": _ts(10), "name": "Config work"},
]


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(e, ensure_ascii=False) for e in [HEADER, *ENTRIES]) + "\n",
                    encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str | os.PathLike[str]) -> tuple[int, str, str]:
    try:
        code = main([os.fspath(a) for a in argv])
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str | os.PathLike[str]) -> Any:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def assert_one_error_line(code: int, err: str, *needles: str) -> None:
    assert code != 0
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith("pikit: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, err)


# ---------------------------------------------------------------- context
def test_context_json(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    out = run_json(capsys, "context", session_file)
    session = pikit.load(session_file)
    assert list(out) == ["leaves"]
    assert list(out["leaves"]) == ["ae000010"]
    leaf = out["leaves"]["ae000010"]
    assert list(leaf) == ["path", "model", "thinkingLevel", "messages", "sources", "estimates", "tokens"]
    assert leaf["path"] == ["aa000001", "bb000002", "cc000003", "dd000004", "ee000005", "ad000009", "ae000010"]
    assert leaf["model"] == {"provider": "anthropic", "modelId": "claude"} and leaf["thinkingLevel"] == "off"
    assert leaf["sources"] == ["bb000002", "cc000003", "dd000004", "ee000005", "ad000009"]
    assert leaf["tokens"] == 400 + leaf["estimates"][-1]  # usage of ee000005 + the message after it
    assert leaf == json.loads(jsjson.stringify(context_json.projection(session.context())))
    # messages are printed as Pi prints them: 1.0 → 1
    assert leaf["messages"][1]["content"][1]["arguments"] == {"path": "src/config.ts", "limit": 1}


def test_context_json_bytes_are_javascript_json(capsysbinary: pytest.CaptureFixture[bytes], session_file: Path) -> None:
    assert main(["context", str(session_file), "--json"]) == 0
    out = capsysbinary.readouterr().out
    session = pikit.load(session_file)
    assert out.rstrip(b"\n") == jsjson.stringify_bytes(context_json.context(session, ["ae000010"]))
    assert b'"limit":1}' in out


def test_context_several_leaves_and_prefixes(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    out = run_json(capsys, "context", session_file, "--leaf", "ac00", "--leaf", "cc000003")
    assert list(out["leaves"]) == ["ac000008", "cc000003"]
    assert out["leaves"]["ac000008"]["path"][-3:] == ["ff000006", "ab000007", "ac000008"]
    assert out["leaves"]["ac000008"]["tokens"] == 450
    assert out["leaves"]["cc000003"]["sources"] == ["bb000002", "cc000003"]


def test_context_plain(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    code, out, err = run(capsys, "context", session_file, "--leaf", "ac000008")
    assert code == 0 and err == ""
    assert "context at ac000008" in out
    assert "anthropic/claude" in out and "thinking off" in out
    assert "450" in out
    for role in ("user", "assistant", "toolResult"):
        assert role in out


# ---------------------------------------------------------------- tree
def test_tree_json(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    out = run_json(capsys, "tree", session_file)
    assert out == {
        "roots": ["aa000001"],
        "children": {"aa000001": ["bb000002"], "bb000002": ["cc000003"], "cc000003": ["dd000004"],
                     "dd000004": ["ee000005"], "ee000005": ["ff000006", "ad000009"], "ff000006": ["ab000007"],
                     "ab000007": ["ac000008"], "ad000009": ["ae000010"]},
        "labels": {"bb000002": "start"},
    }


def test_tree_plain(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    code, out, err = run(capsys, "tree", session_file)
    assert code == 0 and err == ""
    assert "Config work" in out and "[start]" in out
    assert "ad000009" in out and "ab000007" in out
    code, out, _ = run(capsys, "tree", session_file, "--filter", "user-only", "--leaf", "ab000007")
    assert code == 0
    assert "bb000002" in out and "cc000003" not in out
    code, out, _ = run(capsys, "tree", session_file, "--search", "port", "--filter", "all")
    assert code == 0 and "ab000007" in out and "ad000009" not in out


# ---------------------------------------------------------------- info
def test_info(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    out = run_json(capsys, "info", session_file)
    assert out["sessionId"] == "sess-cli" and out["name"] == "Config work" and out["cwd"] == "/w"
    assert out["entries"] == 10 and out["roots"] == 1 and out["labels"] == 1 and out["leaf"] == "ae000010"
    assert out["problems"] == [] and out["migratedFrom"] is None
    assert out["bytes"] == session_file.stat().st_size
    assert out["types"]["message/user"] == 3
    code, text, _ = run(capsys, "info", session_file)
    assert code == 0 and "no problems found" in text and "sess-cli" in text


def test_info_reports_damage(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    with session_file.open("ab") as handle:
        handle.write(b'{"type":"message","id":"trunc')
    code, out, err = run(capsys, "info", session_file, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["problems"] == [{"kind": "damaged-line", "line": 12, "entryId": None,
                                   "message": report["problems"][0]["message"]}]
    assert err.startswith("pikit: warning: ") and "12" in err and err.count("\n") == 1
    # The report lists the damage: the warning does not send the reader to the command they just ran.
    code, out, err = run(capsys, "info", session_file)
    assert code == 0 and "line 12:" in out and "pikit info" not in err
    code, _, err = run(capsys, "tree", session_file)
    assert code == 0 and f"(see `pikit info {session_file}`)" in err


# ---------------------------------------------------------------- compact --dry-run
def test_compact_dry_run_json(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    out = run_json(capsys, "compact", session_file, "--leaf", "ac000008", "--keep-recent-tokens", "1,60,100000",
                   "--dry-run")
    per = out["leaves"]["ac000008"]
    assert list(per) == ["1", "60", "100000"]
    assert per["100000"] is None
    session = pikit.load(session_file)
    for keep in ("1", "60"):
        expected = prepare_compaction(session.branch("ac000008"), int(keep))
        assert expected is not None
        assert per[keep] == json.loads(jsjson.stringify(compaction_json.preparation(expected)))
    assert per["1"]["firstKeptEntryId"] == "ac000008" and per["1"]["isSplitTurn"] is True
    assert per["1"]["readFiles"] == ["src/config.ts"]


def test_compact_dry_run_plain(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    code, out, err = run(capsys, "compact", session_file, "--leaf", "ac000008", "--keep-recent-tokens", "1,100000",
                         "--dry-run")
    assert code == 0
    assert "nothing to compact" in out and "ac000008" in out
    assert "dry run" in err


def test_compact_dry_run_says_why_there_is_nothing_to_compact(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                              sample_sessions: Path, shared_sessions: Path) -> None:
    sample = sample_sessions / "refactor-auth.jsonl"
    session = pikit.load(sample)
    ctx = session.context()
    assert ctx.compaction is not None and ctx.entries[0].entry is ctx.compaction
    since = sum(pe.tokens for pe in ctx.entries[1:])  # what Pi's walk adds up after the last compaction
    assert since == 7789
    _, out, _ = run(capsys, "compact", sample, "--keep-recent-tokens", "4000,8000", "--dry-run")
    assert (f"     8,000  nothing to compact: only {since:,} tokens since the last compaction, under "
            "keepRecentTokens 8,000: all of it is kept") in out.splitlines()
    # a leaf that is a compaction, a branch that starts with its only cut point, an empty file
    chain = shared_sessions / "system-replay.jsonl"
    _, out, _ = run(capsys, "compact", chain, "--leaf", "e0a8d9d0", "--keep-recent-tokens", "0", "--dry-run")
    assert pikit.load(chain).entry("e0a8d9d0").type == "compaction"
    assert "nothing to compact: the leaf is a compaction (Pi compacts nothing right after one)" in out
    _, out, _ = run(capsys, "compact", sample, "--leaf", "8c444178", "--keep-recent-tokens", "8000", "--dry-run")
    walk = pikit.compaction.trace_compaction(session.branch("8c444178"), 8000).cut
    assert walk is not None and walk.reached_index == walk.start == 0
    kept = session.context("8c444178").entries[walk.cut.first_kept_index].id
    assert (f"nothing to compact: the newest {walk.running_sum(0):,} tokens reach keepRecentTokens 8,000 only at "
            f"{session.branch('8c444178')[0].id}, the first entry in the context: the cut falls at {kept}, with no "
            "message before it to summarize") in out
    empty = tmp_path / "header.jsonl"
    empty.write_text(json.dumps(HEADER) + "\n")
    code, out, _ = run(capsys, "compact", empty, "--dry-run")
    assert code == 0 and "nothing to compact: the branch is empty" in out and "None" not in out


# ---------------------------------------------------------------- branch-summary --dry-run
def test_branch_summary_dry_run(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    out = run_json(capsys, "branch-summary", session_file, "--pair", "ac000008:ae000010", "--pair",
                   "ae000010:ac000008", "--budget", "0,5", "--dry-run")
    pairs = out["pairs"]
    assert [(p["from"], p["to"], p["budget"]) for p in pairs] == [
        ("ac000008", "ae000010", 0), ("ac000008", "ae000010", 5), ("ae000010", "ac000008", 0),
        ("ae000010", "ac000008", 5)]
    first = pairs[0]
    assert list(first) == ["from", "to", "budget", "commonAncestorId", "entryIds", "messages", "totalTokens",
                           "readFiles", "modifiedFiles"]
    assert first["commonAncestorId"] == "ee000005"
    assert first["entryIds"] == ["ff000006", "ab000007", "ac000008"]
    assert [m["role"] for m in first["messages"]] == ["user", "assistant"]
    assert first["modifiedFiles"] == ["src/config.ts"]
    assert pairs[1]["messages"] == [] and pairs[1]["modifiedFiles"] == ["src/config.ts"]
    code, text, err = run(capsys, "branch-summary", session_file, "--pair", "ac00:ae00", "--dry-run")
    assert code == 0 and "ac000008 → ae000010" in text and "dry run" in err


# ---------------------------------------------------------------- fork / migrate
def _fingerprint(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def test_fork(capsys: pytest.CaptureFixture[str], session_file: Path, tmp_path: Path) -> None:
    before = _fingerprint(session_file)
    target = tmp_path / "fork.jsonl"
    code, out, err = run(capsys, "fork", session_file, "--leaf", "ac00", "-o", target)
    assert code == 0 and "wrote" in err and out == ""
    assert _fingerprint(session_file) == before
    forked = pikit.load(target)
    assert forked.header["parentSession"] == str(session_file.resolve())
    assert forked.branch_ids()[:-1] == ["aa000001", "bb000002", "cc000003", "dd000004", "ee000005", "ab000007",
                                        "ac000008"]
    assert forked.labels == {"bb000002": "start"}
    # refuses an existing output and the source itself
    code, _, err = run(capsys, "fork", session_file, "--leaf", "ac000008", "-o", target)
    assert_one_error_line(code, err, "already exists")
    code, _, err = run(capsys, "fork", session_file, "--leaf", "ac000008", "-o", session_file, "--force")
    assert_one_error_line(code, err, "source")
    assert _fingerprint(session_file) == before


def test_migrate(capsys: pytest.CaptureFixture[str], shared_sessions: Path, tmp_path: Path) -> None:
    legacy = shared_sessions / "large-session.v1.jsonl"
    before = _fingerprint(legacy)
    target = tmp_path / "migrated.jsonl"
    code, _, err = run(capsys, "migrate", legacy, "-o", target)
    assert code == 0 and "version 1" in err
    assert _fingerprint(legacy) == before
    migrated = pikit.load(target)
    assert migrated.report.ok and migrated.report.migrated_from is None and migrated.header["version"] == 3
    assert len(migrated) == len(pikit.load(legacy))
    code, _, err = run(capsys, "migrate", legacy, "-o", target)
    assert_one_error_line(code, err, "already exists")
    assert _fingerprint(legacy) == before


def test_migrate_current_file_copies(capsys: pytest.CaptureFixture[str], session_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "copy.jsonl"
    code, _, err = run(capsys, "migrate", session_file, "-o", target)
    assert code == 0 and "already current" in err
    assert target.read_bytes().split(b"\n")[1:] == session_file.read_bytes().split(b"\n")[1:]


# ---------------------------------------------------------------- errors
def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    for command in (["context"], ["tree"], ["info"], ["compact", "--dry-run", "--keep-recent-tokens", "1"]):
        code, out, err = run(capsys, command[0], missing, *command[1:])
        assert_one_error_line(code, err, str(missing), "no such file")
        assert out == ""


def test_unknown_leaf(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    code, _, err = run(capsys, "context", session_file, "--leaf", "zzzz")
    assert_one_error_line(code, err, "zzzz")
    code, _, err = run(capsys, "compact", session_file, "--leaf", "zzzz", "--dry-run", "--keep-recent-tokens", "1")
    assert_one_error_line(code, err, "zzzz")
    code, _, err = run(capsys, "fork", session_file, "--leaf", "zzzz", "-o", session_file.parent / "x.jsonl")
    assert_one_error_line(code, err, "zzzz")
    assert not (session_file.parent / "x.jsonl").exists()


def test_ambiguous_prefix_and_bad_pair(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    code, _, err = run(capsys, "context", session_file, "--leaf", "a")
    assert_one_error_line(code, err, "ambiguous")
    code, _, err = run(capsys, "branch-summary", session_file, "--pair", "ac000008", "--dry-run")
    assert_one_error_line(code, err, "FROM:TO")


def test_not_a_session(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("just some notes\nnot json\n")
    code, _, err = run(capsys, "context", text)
    assert_one_error_line(code, err, str(text))
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    code, _, err = run(capsys, "tree", empty)
    assert_one_error_line(code, err, "empty")
    code, _, err = run(capsys, "info", tmp_path)
    assert_one_error_line(code, err, "directory")


def test_strict_mode_names_the_line(capsys: pytest.CaptureFixture[str], session_file: Path) -> None:
    with session_file.open("ab") as handle:
        handle.write(b"garbage\n")
    code, _, err = run(capsys, "context", session_file, "--strict")
    assert_one_error_line(code, err, f"{session_file}:12")
    code, out, err = run(capsys, "context", session_file, "--json")
    assert code == 0 and json.loads(out)["leaves"]
    assert err.startswith("pikit: warning:") and err.count("\n") == 1


@pytest.mark.parametrize("bad", ["abc", "-5", "1,x", ""])
def test_bad_keep_recent_tokens_is_one_line(capsys: pytest.CaptureFixture[str], session_file: Path, bad: str) -> None:
    code, out, err = run(capsys, "compact", session_file, "--keep-recent-tokens", bad, "--dry-run")
    assert_one_error_line(code, err, "--keep-recent-tokens")
    assert out == ""


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["fork", "{file}", "-o", "{out}"], "--leaf"),
        (["context", "{file}", "--bogus"], "--bogus"),
        (["compact", "{file}", "--reserve-tokens", "x", "--dry-run"], "--reserve-tokens"),
        (["branch-summary", "{file}", "--dry-run"], "--pair"),
        (["context"], "FILE"),
        (["no-such-command"], "no-such-command"),
    ],
)
def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str], session_file: Path, argv: list[str],
                                   needle: str) -> None:
    out_path = session_file.parent / "out.jsonl"
    args = [a.replace("{file}", str(session_file)).replace("{out}", str(out_path)) for a in argv]
    code, out, err = run(capsys, *args)
    assert_one_error_line(code, err, needle)
    assert out == "" and not out_path.exists()


def test_context_of_a_header_only_session(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "header.jsonl"
    path.write_text(json.dumps(HEADER) + "\n")
    out = run_json(capsys, "context", path)
    assert out == {"leaves": {"null": {"path": [], "model": None, "thinkingLevel": "off", "messages": [],
                                       "sources": [], "estimates": [], "tokens": 0}}}


def test_an_empty_branch_prints_no_none(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "header.jsonl"
    path.write_text(json.dumps(HEADER) + "\n")
    for argv in (["context"], ["info"], ["tree"], ["simulate", "--context-window", "1000"],
                 ["simulate", "--context-window", "1000,2000"]):
        code, out, err = run(capsys, argv[0], path, *argv[1:])
        assert code == 0 and "None" not in out + err, (argv, out + err)
    _, out, _ = run(capsys, "context", path)
    assert out.startswith("context at none (empty branch)  (0 entries on the branch, 0 messages)")
    _, out, _ = run(capsys, "info", path)
    assert "0 entries, 0 roots, 0 labels, leaf none (empty branch)" in out


# ---------------------------------------------------------------- as a real process
def _pikit(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pikit", *(os.fspath(a) for a in args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_python_m_pikit_help() -> None:
    result = _pikit("--help")
    assert result.returncode == 0
    for command in ("context", "tree", "fork", "migrate", "compact", "branch-summary"):
        assert command in result.stdout
    version = _pikit("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"pikit {pikit.__version__}"


def test_process_errors_have_no_traceback(tmp_path: Path, session_file: Path) -> None:
    for args in (("context", tmp_path / "missing.jsonl"), ("tree", session_file, "--leaf", "nope"),
                 ("context", tmp_path)):
        result = _pikit(*args)
        assert result.returncode != 0
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith("pikit: error: ") and result.stderr.count("\n") == 1
        assert result.stdout == ""


def test_process_json_output(session_file: Path) -> None:
    result = _pikit("context", session_file, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["leaves"]["ae000010"]["tokens"] > 0


def test_v1_ids_are_the_same_in_every_run_and_said_to_be_pikits(shared_sessions: Path, tmp_path: Path) -> None:
    legacy = shared_sessions / "large-session.v1.jsonl"
    runs = [subprocess.run([sys.executable, "-m", "pikit", "info", str(legacy), "--json"], capture_output=True,
                           timeout=120, env={**os.environ, "PYTHONHASHSEED": str(seed)}) for seed in (1, 2)]
    leaves = [json.loads(run.stdout)["leaf"] for run in runs]
    assert leaves[0] == leaves[1] and isinstance(leaves[0], str)
    ids = [e.id for e in pikit.load(legacy).entries]
    assert ids == [e.id for e in pikit.load(legacy).entries] and len(set(ids)) == len(ids)
    # An id from one command works in the next, and the copy `pikit migrate` writes keeps them.
    tree = subprocess.run([sys.executable, "-m", "pikit", "context", str(legacy), "--leaf", ids[40]],
                          capture_output=True, text=True, timeout=120)
    assert tree.returncode == 0, tree.stderr
    assert "the ids shown are pikit's" in tree.stderr and "pikit migrate" in tree.stderr
    out = tmp_path / "migrated.jsonl"
    assert main(["migrate", str(legacy), "-o", str(out)]) == 0
    assert [e.id for e in pikit.load(out).entries] == ids
    info = subprocess.run([sys.executable, "-m", "pikit", "info", str(legacy)], capture_output=True, text=True,
                          timeout=120)
    assert "the ids shown are pikit's" in info.stdout and "pikit's" not in info.stderr
    assert "have no ids" not in info.stdout and "pikit derives them from each entry" in info.stdout
    current = subprocess.run([sys.executable, "-m", "pikit", "tree", str(shared_sessions / "tree-basic.jsonl")],
                             capture_output=True, text=True, timeout=120)
    assert "pikit's" not in current.stderr + current.stdout


def test_every_command_a_message_names_exists() -> None:
    """A hint is a command to run: every `pikit COMMAND` written in the package names a real command."""
    import argparse
    import ast
    import re

    from pikit.cli._app import build_parser

    parser = build_parser()
    commands = set(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)
    named: dict[str, str] = {}
    package = Path(pikit.__file__).resolve().parent
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for word in re.findall(r"`pikit ([a-z][a-z-]*)", node.value):
                    named[word] = path.name
    assert {"info", "problems", "migrate", "context"} <= set(named)
    unknown = {word: where for word, where in named.items() if word not in commands}
    assert unknown == {}
