"""Progress on the command line: a line on stderr for long work when stderr is a terminal (a real pseudo-terminal
here), none when it is piped or with --no-progress, and standard output the same byte for byte either way."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.long_work import REFACTOR, WIDE_TREE, big_corpus, big_session
from tests.procs import env, on_a_terminal

pytestmark = pytest.mark.slow


def _stderr_on_a_terminal(*argv: str | Path) -> tuple[bytes, bytes]:
    """Run ``python -m pikit ARGV`` with stderr on a pseudo-terminal: (stdout, what the terminal got)."""
    done, screen = on_a_terminal(*argv, stream="stderr")
    assert done.returncode == 0, screen
    return done.stdout, screen


def _piped(*argv: str | Path) -> tuple[bytes, bytes]:
    done = subprocess.run([sys.executable, "-m", "pikit", *map(str, argv)], capture_output=True, env=env(),
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def _lines(screen: bytes) -> list[bytes]:
    """The progress lines drawn (each redrawn in place: a carriage return, the text, erase to the line's end)."""
    return [part.split(b"\x1b[K")[0] for part in screen.split(b"\r")[1:] if part.endswith(b"\x1b[K")
            and part != b"\x1b[K"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return big_corpus(tmp_path_factory.mktemp("corpus") / "sessions")


def test_a_cold_scan_shows_progress_on_a_terminal_only(corpus: Path, tmp_path: Path) -> None:
    argv = ("usage", corpus, "--by", "session", "--timezone", "UTC", "--json")
    shown_out, screen = _stderr_on_a_terminal(*argv, "--index", tmp_path / "a.duckdb")
    drawn = _lines(screen)
    assert drawn and all(line.startswith(b"scanning 41 files: ") and line.endswith(b"%)") for line in drawn)
    assert drawn[-1].endswith(b" MB (100%)")
    # cleared before anything else is written: the note about the damaged file starts a clean line
    assert b"\r\x1b[Kpikit: note: " in screen and b"^M" not in screen
    piped_out, piped_err = _piped(*argv, "--index", tmp_path / "b.duckdb")
    assert b"scanning" not in piped_err and b"\r" not in piped_err and b"\x1b" not in piped_err
    assert piped_out == shown_out  # the JSON is the same byte for byte
    silenced_out, silenced = _stderr_on_a_terminal(*argv, "--index", tmp_path / "c.duckdb", "--no-progress")
    assert _lines(silenced) == [] and b"scanning" not in silenced and silenced_out == shown_out
    warm_out, warm = _stderr_on_a_terminal(*argv, "--index", tmp_path / "a.duckdb")  # nothing to read: no line
    assert _lines(warm) == [] and warm_out == shown_out


def test_sessions_shows_the_scan_too(corpus: Path, tmp_path: Path) -> None:
    out, screen = _stderr_on_a_terminal("sessions", corpus, "--index", tmp_path / "s.duckdb")
    assert _lines(screen) and b"41 session(s)" in out


def test_a_long_replay_shows_progress_a_short_one_none(tmp_path: Path) -> None:
    argv = ("simulate", WIDE_TREE, "--context-window", "16384,24000,32000", "--reserve-tokens", "3000",
            "--keep-recent-tokens", "4000", "--json")
    shown_out, screen = _stderr_on_a_terminal(*argv)
    drawn = _lines(screen)
    assert drawn and all(line.startswith(b"replaying 1,878 entries under 3 settings: ") for line in drawn)
    assert drawn[-1] == b"replaying 1,878 entries under 3 settings: 5,634 / 5,634 entries (100%)"
    piped_out, piped_err = _piped(*argv)
    assert piped_err == b"" and piped_out == shown_out
    _, short = _stderr_on_a_terminal("simulate", WIDE_TREE, "--context-window", "16384", "--reserve-tokens", "3000",
                                     "--keep-recent-tokens", "4000")
    assert short == b""


def test_loading_a_big_file_shows_progress(tmp_path: Path) -> None:
    path = big_session(tmp_path)
    shown_out, screen = _stderr_on_a_terminal("info", path, "--json")
    drawn = _lines(screen)
    assert drawn and drawn[-1] == b"loading big.jsonl: 36 / 36 MB (100%)" and screen.endswith(b"\r\x1b[K")
    piped_out, piped_err = _piped("info", path, "--json")
    assert piped_err == b"" and piped_out == shown_out
    _, silenced = _stderr_on_a_terminal("info", path, "--json", "--no-progress")
    assert silenced == b""
    _, small = _stderr_on_a_terminal("info", REFACTOR, "--json")
    assert small == b""
