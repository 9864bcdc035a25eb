"""``pikit diff`` and ``pikit show``: readable output, JSON, bad input as one line, hostile text inert."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pikit import jsjson
from pikit.cli import main
from tests.weird import weird_sessions

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "sample_sessions"
QUICK, REFACTOR = SAMPLES / "quick-tour.jsonl", SAMPLES / "refactor-auth.jsonl"
HEADER = {"type": "session", "version": 3, "id": "two", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    try:
        code = main([os.fspath(a) if isinstance(a, Path) else str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def _message(entry_id: str, parent: str | None, text: str) -> dict[str, object]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1767225601000}}


@pytest.fixture
def two_trees(tmp_path: Path) -> Path:
    path = tmp_path / "two.jsonl"
    lines = [HEADER, _message("r1", None, "one"), _message("r1b", "r1", "one more"), _message("r2", None, "two")]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_diff_lists_each_message_with_markers_and_totals(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "diff", QUICK, "1527c10e", "ddc7")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "context diff: a 1527c10e → b ddc79522  (branches share the path up to 6d03f933)"
    assert lines[1] == "context size 574 → 387 (−187); estimates 455 → 280 (−175)"
    rows = [line for line in lines if line[:1] in ("+", "−", "~", "=") and "  " in line[:3]]
    assert [r[0] for r in rows] == ["="] * 4 + ["−"] * 4 + ["+"]
    assert "ddc79522" in rows[-1] and "+16" in rows[-1] and "user" in rows[-1]
    assert lines[-1] == "+1 added (+16), −4 removed (−191), ~0 changed (0), =4 same; 9 messages"


def test_diff_folds_long_unchanged_runs_unless_all(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", REFACTOR, "--compaction", "f6135720")
    assert code == 0
    assert out.startswith("compaction f6135720: the context at 6bc72f3f (before) → at f6135720 (after)\n")
    assert "summarized" in out and "previous summary" in out and "identical messages" in out
    code, every, _ = run(capsys, "diff", REFACTOR, "--compaction", "f6135720", "--all")
    assert "identical messages" not in every and len(every.splitlines()) > len(out.splitlines())


def test_diff_json_is_the_library_diff(capsys: pytest.CaptureFixture[str]) -> None:
    import pikit

    code, out, _ = run(capsys, "diff", REFACTOR, "--compaction", "f613", "--json")
    assert code == 0
    got = jsjson.loads(out)
    want = pikit.diff_compaction(pikit.load(str(REFACTOR)), "f6135720")
    assert got["compaction"] == "f6135720" and got["a"] == "6bc72f3f" and got["ancestor"] is None
    assert got["totals"]["tokensDelta"] == want.totals.tokens_delta == -7677
    assert [(r["status"], r["note"], r["delta"]) for r in got["rows"]] == [(r.status, r.note, r.delta)
                                                                          for r in want.rows]


@pytest.mark.parametrize(("argv", "needle"), [
    (["zzz", "1527c10e"], "no entry id is or starts with 'zzz'"),
    (["1527c10e"], "give two entries, A and B, or --compaction ID"),
    (["1527c10e", "ddc79522", "--compaction", "1d4d5299"], "not both"),
    (["--compaction", "1d4d5299"], "--compaction 1d4d5299 is a message entry, not a compaction"),
    (["--compaction", "nope"], "no entry id is or starts with 'nope'"),
])
def test_diff_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    code, out, err = run(capsys, "diff", QUICK, *argv)
    assert code == 1 and out == ""
    assert needle in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_diff_of_two_trees_is_refused(capsys: pytest.CaptureFixture[str], two_trees: Path) -> None:
    code, _, err = run(capsys, "diff", two_trees, "r1b", "r2")
    assert code == 1
    assert err == ("pikit: error: r1b and r2 are on different trees of the file (roots r1 and r2): their contexts "
                   "share no entry\n")
    assert run(capsys, "diff", two_trees, "r1", "r1b")[0] == 0


def test_show_prints_the_stored_entry_and_what_the_model_sees(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", QUICK, "1d4d")
    assert code == 0, err
    assert out.startswith("entry 1d4d5299: message/user, line 3\nparent 0ac2d426; timestamp 2026-03-12T14:03:49.822Z\n")
    assert '"parentId": "0ac2d426",' in out
    assert "as the model sees it at 1527c10e: sent as stored\n1 message, 13 tokens (Pi's estimate)" in out
    assert "message 0 of the context: user, 13 tokens" in out


@pytest.mark.parametrize(("argv", "status", "by"), [
    (["ddc79522", "--leaf", "1527c10e"], "off-branch", None),
    (["5e9ce2be"], "summarized", "f6135720"),
    (["f6135720"], "summary", None),
    (["c5d5015c"], "silent", None),
    (["7b017f20"], "kept", None),
])
def test_show_says_how_the_entry_reaches_the_model(capsys: pytest.CaptureFixture[str], argv: list[str], status: str,
                                                   by: str | None) -> None:
    session = QUICK if argv[0] == "ddc79522" else REFACTOR
    code, out, _ = run(capsys, "show", session, *argv, "--json")
    assert code == 0
    got = jsjson.loads(out)
    assert (got["status"], got["by"]) == (status, by)
    assert len(got["messages"]) == len(got["estimates"]) == (0 if status in ("off-branch", "summarized", "silent")
                                                             else len(got["messages"]))
    if status == "summary":
        assert "compactionSummary" in [m["role"] for m in got["messages"]]
    code, text, _ = run(capsys, "show", session, *argv)
    assert code == 0 and "as the model sees it at" in text


def test_show_of_an_edited_entry_names_the_edit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "edited.jsonl"
    edit = {"type": "context_edit", "id": "e1", "parentId": "u2", "timestamp": "2026-01-01T00:00:03.000Z",
            "targetId": "u1", "replacement": None}
    swap = {"type": "context_edit", "id": "e2", "parentId": "e1", "timestamp": "2026-01-01T00:00:04.000Z",
            "targetId": "u2", "replacement": {"content": "edited"}}
    lines = [HEADER, _message("u1", None, "first"), _message("u2", "u1", "second"), edit, swap]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    code, out, err = run(capsys, "show", path, "u1", "--json")
    assert code == 0, err
    got = jsjson.loads(out)
    assert (got["status"], got["by"], got["messages"]) == ("omitted", "e1", [])
    got = jsjson.loads(run(capsys, "show", path, "u2", "--json")[1])
    assert (got["status"], got["by"]) == ("replaced", "e2")
    assert got["messages"][0]["content"] == "edited" and got["entry"]["message"]["content"] == "second"
    out = run(capsys, "show", path, "u1")[1]
    assert "hidden: context edit e1 leaves its messages out" in out


def test_show_unknown_id_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", QUICK, "zz")
    assert code == 1 and out == "" and err == "pikit: error: no entry id is or starts with 'zz' in " \
        f"{QUICK}\n"


def test_hostile_text_is_inert(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    lines = [HEADER, _message("h1", None, "\x1b]52;c;SGVsbG8=\x07 \x1b[2J \u202e gnp.exe \x9b31m"),
             _message("h2\x1b[31m", "h1", "red \x1b[31m id")]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    for argv in (["show", path, "h1"], ["show", path, "h2"], ["diff", path, "h1", "h2"]):
        code, out, err = run(capsys, *argv)
        assert code == 0, err
        for char in ("\x1b", "\x07", "\x9b", "\u202e"):
            assert char not in out and char not in err, (argv, char)
    code, out, _ = run(capsys, "diff", path, "h1", "h2")
    assert "h2^[[31m" in out


def test_every_weird_session_shows_and_diffs_without_a_traceback(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    for name, path in weird_sessions(tmp_path).items():
        ids = [e["id"] for e in map(_parsed, path.read_bytes().splitlines()[1:]) if isinstance(e, dict)
               and isinstance(e.get("id"), str) and e["id"]]
        for entry_id in ids:
            for argv in (["show", path, entry_id], ["show", path, entry_id, "--json"]):
                code, _, err = run(capsys, *argv)
                assert code in (0, 1) and "Traceback" not in err, (name, argv, err)
        if len(ids) >= 2:
            for argv in (["diff", path, ids[0], ids[-1]], ["diff", path, ids[0], ids[-1], "--json"]):
                code, _, err = run(capsys, *argv)
                assert code in (0, 1) and "Traceback" not in err, (name, argv, err)


def _parsed(line: bytes) -> object:
    try:
        return json.loads(line.lstrip(b"\xef\xbb\xbf"))
    except ValueError:
        return None


def test_show_prints_the_stored_json_as_javascript_does(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "show", QUICK, "6d03f933")
    assert code == 0 and '"input": 0.000006,' in out and "6e-06" not in out
    path = tmp_path / "deep.jsonl"
    deep = "[" * 5000 + "]" * 5000
    path.write_text(json.dumps(HEADER) + "\n" + json.dumps(_message("d1", None, "x"))[:-1] + f', "extra": {deep}}}\n',
                    encoding="utf-8")
    code, out, err = run(capsys, "show", path, "d1")
    assert code == 0, err
    assert deep in out
