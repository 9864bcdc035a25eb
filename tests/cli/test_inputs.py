"""Options and inputs that must neither hang nor trace: numbers out of range, impossible time
zones, long or hostile values echoed in errors, paths with glob characters, a byte order mark.

Every case runs ``python -m pikit`` as a real process with a time limit and expects one error
line on stderr (``tests/procs.py``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from pikit._inert import echo
from pikit.cli._app import _regex, build_parser
from pikit.cli._terminal import cut_echoes, inert
from tests.procs import one_error_line, pikit

HEADER = {"type": "session", "version": 3, "id": "sess-inputs", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
USER = {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "hello", "timestamp": 1767225601000}}
REPLY = {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-01-01T00:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "provider": "anthropic",
                     "model": "claude", "stopReason": "stop", "timestamp": 1767225602000,
                     "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15}}}
BOM = b"\xef\xbb\xbf"
#: An error line that echoes a 10,000-character value stays shorter than this (its own words and a short prefix).
SHORT = 400


def session_lines(session_id: str = "sess-inputs") -> list[bytes]:
    return [json.dumps(obj).encode() for obj in ({**HEADER, "id": session_id}, USER, REPLY)]


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(session_lines()) + b"\n")
    return path


# ---------------------------------------------------------------- numbers
def _typed_options() -> list[tuple[str, argparse.Action]]:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [(name, action) for name, sub in commands.choices.items() for action in sub._actions
            if action.type is not None and action.type is not _regex]  # (expressions: tests/redaction)


def test_every_number_option_refuses_what_is_not_a_finite_number_in_range() -> None:
    typed = _typed_options()
    assert {"--idle-exit", "--poll", "--timeout", "--retries", "--limit", "--context-window", "--budget",
            "--keep-recent-tokens", "--reserve-tokens", "--port"} <= {a.option_strings[-1] for _, a in typed}
    for command, action in typed:
        for bad in ("nan", "NaN", "inf", "-inf", "1e400", "-1", "9" * 5000, "1" * 10_000 + "x", "", "0x10"):
            with pytest.raises(argparse.ArgumentTypeError) as refused:
                assert callable(action.type)
                action.type(bad)
            assert len(str(refused.value)) < SHORT, (command, action.option_strings, bad)


@pytest.mark.parametrize(
    "argv",
    [
        ["watch", "{file}", "--idle-exit", "nan"],  # never ended: every comparison with NaN is false
        ["watch", "{file}", "--idle-exit", "1e400"],
        ["watch", "{file}", "--idle-exit", "-1"],
        ["watch", "{file}", "--poll", "0"],  # a busy loop
        ["watch", "{file}", "--poll", "inf"],
        ["watch", "{file}", "--context-window", "9" * 5000],
        ["context", "{file}", "--tail", "99999999999999999999"],
        ["tree", "{file}", "--limit", "9" * 5000],
        ["export", "{file}", "-o", "{out}", "--context-window", "99999999999999999999"],
        ["compact", "{file}", "--dry-run", "--keep-recent-tokens", "1," + "9" * 5000],
        ["compact", "{file}", "--dry-run", "--timeout", "nan"],
        ["branch-summary", "{file}", "--dry-run", "--pair", "u1:a1", "--retries", "9" * 5000],
        ["branch-summary", "{file}", "--dry-run", "--pair", "u1:a1", "--budget", "9007199254740992"],
        ["simulate", "{file}", "--context-window", "0,99999999999999999999"],
        ["simulate", "{file}", "--context-window", "1000", "--reserve-tokens", "9007199254740992"],
        ["demo", "--headless", "--port", "-1"],
    ],
)
def test_numbers_out_of_range_are_one_line_at_once(session: Path, argv: list[str]) -> None:
    args = [a.replace("{file}", str(session)).replace("{out}", str(session.parent / "page.html")) for a in argv]
    option = next(a for a in reversed(args) if a.startswith("--"))
    done = pikit(*args, timeout=30)
    line = one_error_line(done, option, "expected")
    assert done.returncode == 2 and len(line) < SHORT and done.stdout == b""
    assert not (session.parent / "page.html").exists()


def test_sweeps_are_bounded(session: Path) -> None:
    many = ",".join(str(1000 + i) for i in range(101))
    one_error_line(pikit("compact", session, "--dry-run", "--keep-recent-tokens", many, timeout=30),
                   "--keep-recent-tokens", "at most 100 values")
    eleven = ",".join(str(1000 + i) for i in range(11))
    done = pikit("simulate", session, "--context-window", eleven, "--reserve-tokens", eleven,
                 "--keep-recent-tokens", eleven, timeout=30)
    one_error_line(done, "1,331 replays", "at most 1,000")
    ten = ",".join(str(1000 + i) for i in range(10))
    done = pikit("simulate", session, "--context-window", ten, "--reserve-tokens", ten, "--keep-recent-tokens", ten,
                 "--json", timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["runs"]) == 1000


def test_watch_still_ends_after_a_finite_idle_exit(session: Path) -> None:
    done = pikit("watch", session, "--idle-exit", "0.2", "--poll", "0.05", "--json", timeout=30)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["entries"] == 2


def test_replay_refuses_what_is_not_a_finite_pace(session: Path) -> None:
    import subprocess
    import sys

    from tests.procs import env

    out = session.parent / "replayed.jsonl"
    for args in (["--speed", "nan"], ["--speed", "inf"], ["--max-gap", "nan"], ["--max-gap", "1e300"]):
        done = subprocess.run([sys.executable, "-m", "pikit.replay", str(session), str(out), *args, "--quiet"],
                              capture_output=True, timeout=30, env=env())
        err = done.stderr.decode()
        assert done.returncode == 1 and err.count("\n") == 1 and args[0] in err and "Traceback" not in err, err
    for value in ("x" * 10_000, "\x1b]52;c;cGlraXQ=\x07"):  # not a number: echoed shortened and inert
        done = subprocess.run([sys.executable, "-m", "pikit.replay", str(session), str(out), "--speed", value],
                              capture_output=True, timeout=30, env=env())
        err = done.stderr.decode()
        assert done.returncode == 2 and err.count("\n") == 1 and len(err) < 300 and "\x1b" not in err, err


# ---------------------------------------------------------------- time zones
@pytest.mark.parametrize("zone", ["A" * 10_000, "Europe", "Etc", "../../../../etc/passwd", "/etc/localtime",
                                  "Europe/Berlin/", "zone.tab", "No/Such_Zone", "\x1b]0;title\x07"],
                         ids=lambda zone: zone[:20].encode("unicode_escape").decode())
def test_a_time_zone_that_cannot_be_one_is_one_line(session: Path, zone: str) -> None:
    index = session.parent / "index.duckdb"
    done = pikit("usage", session.parent, "--index", index, "--timezone", zone, timeout=60)
    line = one_error_line(done, "unknown time zone", "IANA")
    assert len(line) < SHORT and "\x1b" not in line and not index.exists()


def test_a_real_time_zone_still_works(session: Path) -> None:
    done = pikit("usage", session.parent, "--index", session.parent / "index.duckdb", "--timezone", "Asia/Tokyo",
                 "--json", timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rows"][0]["key"] == "2026-01-01"


# ---------------------------------------------------------------- what errors echo
LONG = "2026-01-01" + "9" * 10_000
HOSTILE = "x\x1b]52;c;aGk=\x07\x1b[2J\u202eevil\x9b"


def test_echo_quotes_a_short_prefix_and_is_inert() -> None:
    assert echo("Europe/Berlin") == "'Europe/Berlin'"
    assert echo("x" * 61) == "'" + "x" * 60 + "…' (61 characters)"
    unsafe = [chr(c) for c in range(0x110000) if inert(chr(c)) != chr(c)]  # what a terminal would obey
    assert len(unsafe) > 2000
    assert all(inert(echo(c)) == echo(c) and "\n" not in echo(c) for c in unsafe)


def test_cut_echoes_cuts_only_long_values_given() -> None:
    path = "/home/dev/.pi/agent/sessions/" + "p" * 200 + ".jsonl"  # a real path is shown whole
    long = "9" * 10_000
    message = f"{path}: no such file; {long!r} is not a date; --x={long}"
    cut = cut_echoes(message, ["usage", path, "--since=" + long])
    assert cut.startswith(path + ": no such file; '99") and cut.count("(10,000 characters)") == 2
    assert "9" * 61 not in cut
    assert cut_echoes("a \x1b[2J b", []) == "a ^[[2J b"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["usage", "{dir}", "--index", "{index}", "--since", LONG], "is not a date"),
        (["usage", "{dir}", "--index", "{index}", "--until", LONG], "is not a date"),
        (["usage", "{dir}", "--index", "{index}", "--by", LONG], "--by must be one of"),
        (["context", "{file}", "--leaf", LONG], "no entry id is or starts with"),
        (["branch-summary", "{file}", "--dry-run", "--pair", LONG], "FROM:TO"),
        (["context", "{dir}/" + LONG], "cannot be read"),
        (["tree", "{file}", "--" + LONG], "unrecognized arguments"),
        (["tree", "{file}", "--json=" + LONG], "ignored explicit argument"),
        ([LONG], "unknown command"),
        (["settings", "--settings", "{dir}/" + LONG], "cannot be read"),
        (["sessions", "{dir}/" + LONG, "--index", "{index}"], "no such file or folder"),
    ],
)
def test_a_long_value_is_echoed_as_a_short_prefix(session: Path, argv: list[str], needle: str) -> None:
    args = [a.replace("{file}", str(session)).replace("{dir}", str(session.parent))
            .replace("{index}", str(session.parent / "index.duckdb")) for a in argv]
    line = one_error_line(pikit(*args, timeout=60), needle, "…", "characters")
    assert len(line) < SHORT, line


@pytest.mark.parametrize(
    "argv",
    [
        ["usage", "{dir}", "--index", "{index}", "--since", HOSTILE],
        ["usage", "{dir}", "--index", "{index}", "--timezone", HOSTILE],
        ["tree", "{file}", "--filter", HOSTILE],
        ["tree", "{file}", "--leaf", HOSTILE],
        ["tree", "{file}", "--" + HOSTILE],
        ["context", "{dir}/" + HOSTILE],
        ["watch", "{file}", "--idle-exit", HOSTILE],
        [HOSTILE],
    ],
)
def test_an_echoed_value_is_terminal_inert(session: Path, argv: list[str]) -> None:
    args = [a.replace("{file}", str(session)).replace("{dir}", str(session.parent))
            .replace("{index}", str(session.parent / "index.duckdb")) for a in argv]
    line = one_error_line(pikit(*args, timeout=60))
    assert not set(line) & set("\x1b\x07\x9b\u202e"), line
    assert "evil" in line  # the value is still shown, its controls visible


def test_a_real_path_is_shown_whole(tmp_path: Path) -> None:
    name = "2026-01-01T00-00-00-000Z_0196a3b0-0000-7000-8000-000000000000.jsonl"
    room = 250 - len(str(tmp_path)) - len(name) - 3  # (a parallel run's temporary folders are longer)
    assert room >= 20, tmp_path
    missing = tmp_path / ("d" * (room // 2)) / ("e" * (room - room // 2)) / name
    assert len(str(missing)) == 250
    line = one_error_line(pikit("info", missing, timeout=30))
    assert str(missing) in line


# ---------------------------------------------------------------- paths with glob characters
def test_an_existing_path_wins_over_a_glob(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "br[ack]et.jsonl").write_bytes(b"\n".join(session_lines("sess-bracket")) + b"\n")
    (folder / "braet.jsonl").write_bytes(b"\n".join(session_lines("sess-glob-match")) + b"\n")  # what the glob matches
    index = tmp_path / "index.duckdb"

    def listed(target: str) -> list[str]:
        done = pikit("sessions", target, "--index", index, "--json", timeout=120)
        assert done.returncode == 0, done.stderr
        return [s["sessionId"] for s in json.loads(done.stdout)["sessions"]]

    assert listed(str(folder / "br[ack]et.jsonl")) == ["sess-bracket"]
    assert listed(str(folder / "br[ae]et.jsonl")) == ["sess-glob-match"]  # a pattern that names no file still globs
    assert sorted(listed(str(folder / "*.jsonl"))) == ["sess-bracket", "sess-glob-match"]


# ---------------------------------------------------------------- a byte order mark
# Pi reads a session with Node's StringDecoder, which keeps U+FEFF, and JSON.parse refuses it: the
# header line is skipped as malformed, the first object parsed is not a header, and Pi refuses
# the file ("Session file is not a valid pi session"). A line holding nothing but the BOM is blank
# to Pi (String.prototype.trim removes U+FEFF), so a header after it is read.
def test_a_bom_before_the_header_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(BOM + b"\n".join(session_lines()) + b"\n")
    for argv in (["info", path], ["context", path, "--json"]):
        line = one_error_line(pikit(*argv, timeout=30), "line 1", "byte order mark")
        assert "line 2" not in line
    one_error_line(pikit("tree", path, "--strict", timeout=30), f"{path}:1: ", "byte order mark")
    header_only = tmp_path / "header-only.jsonl"
    header_only.write_bytes(BOM + session_lines()[0] + b"\n")
    one_error_line(pikit("info", header_only, timeout=30), "line 1", "byte order mark")


def test_a_bom_elsewhere_is_what_pi_makes_of_it(tmp_path: Path) -> None:
    alone = tmp_path / "bom-line.jsonl"
    alone.write_bytes(BOM + b"\n" + b"\n".join(session_lines()) + b"\n")
    done = pikit("info", alone, "--json", timeout=30)
    assert done.returncode == 0 and json.loads(done.stdout)["entries"] == 2, done.stderr
    inside = tmp_path / "bom-inside.jsonl"
    header, user, reply = session_lines()
    inside.write_bytes(b"\n".join([header, user, BOM + reply]) + b"\n")
    done = pikit("info", inside, timeout=30)
    assert done.returncode == 0 and "line 3: a UTF-8 byte order mark (BOM)" in done.stdout.decode(), done.stdout


def test_an_unknown_command_is_named_with_a_close_one() -> None:
    """The list of every command is --help's: an unknown one is said in a short line, a close one suggested."""
    line = one_error_line(pikit("serach", "x"), "unknown command 'serach'", "did you mean search?")
    assert "choose from" not in line and "context" not in line
    assert "did you mean" not in one_error_line(pikit("zzzz"), "unknown command 'zzzz'")


def test_an_unknown_command_is_said_whatever_argparse_words_its_error(monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The line is made from the command given and the command names, not read back from argparse's
    message: a translated or reworded argparse says the same."""
    monkeypatch.setattr(argparse, "_", lambda text: f"[{text}]")  # argparse's gettext: every message reworded
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["serach", "x"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == ("pikit: error: unknown command 'serach'; did you mean search? "
                                       "(see `pikit --help`)\n")


# ---------------------------------------------------------------- one command's parser
def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_a_command_line_builds_the_parser_of_its_command_only_and_the_same_one() -> None:
    every = _commands(build_parser())
    assert len(every) > 20
    for name, full in every.items():
        only = _commands(build_parser([name, "--json"]))
        assert list(only) == [name]
        assert only[name].format_help() == full.format_help()
        assert only[name].get_default("run") is not None
    for argv in (["--help"], ["no-such-command"], [], None):  # (help and mistakes list every command)
        assert list(_commands(build_parser(argv))) == list(every)
