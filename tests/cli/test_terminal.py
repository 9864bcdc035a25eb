"""Human-readable output is terminal-inert: escape sequences from session text are shown, never sent.

Every command runs as a real process on a session whose text, labels, name, cwd and ids
carry OSC 52 (clipboard), clear-screen, set-title, a carriage return, BEL, a C1 CSI, a
bidirectional override and a lone surrogate.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import pikit
from pikit.cli._json import context as context_json
from pikit.cli._terminal import InertStream, inert
from tests.procs import pikit as run_pikit

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"
CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;owned\x07"
NASTY = f"{OSC52}{CLEAR}{TITLE}a\rb\x9b31m\u202e\ud800z"
# Anything a terminal acts on: C0 controls but newline and tab, DEL, C1, bidi overrides.
ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _line(obj: dict[str, object]) -> str:
    return json.dumps(obj, ensure_ascii=True)  # \ud800 stays an escape: the file is valid UTF-8


@pytest.fixture
def nasty(tmp_path: Path) -> Path:
    t = "2026-01-01T00:00:0{}.000Z"
    lines = [
        {"type": "session", "version": 3, "id": "s" + NASTY, "timestamp": t.format(0), "cwd": "/w" + NASTY},
        {"type": "session_info", "id": "n1", "parentId": None, "timestamp": t.format(1), "name": "name" + NASTY},
        {"type": "message", "id": "u1", "parentId": "n1", "timestamp": t.format(2),
         "message": {"role": "user", "content": "hello " + NASTY, "timestamp": 2}},
        {"type": "message", "id": "a1" + NASTY, "parentId": "u1", "timestamp": t.format(3),
         "message": {"role": "assistant", "content": [{"type": "text", "text": "answer " + NASTY},
                                                      {"type": "toolCall", "id": "c", "name": "bash" + NASTY,
                                                       "arguments": {"command": "ls " + NASTY}}],
                     "provider": "p" + NASTY, "model": "m" + NASTY, "usage": {"input": 5, "output": 5,
                                                                            "totalTokens": 10},
                     "stopReason": "stop", "timestamp": 3}},
        {"type": "label", "id": "l1", "parentId": "a1" + NASTY, "timestamp": t.format(4), "targetId": "u1",
         "label": "label" + NASTY},
        {"type": "message", "id": "u2", "parentId": "l1", "timestamp": t.format(5),
         "message": {"role": "user", "content": [{"type": "text", "text": "again " + NASTY}], "timestamp": 5}},
    ]
    path = tmp_path / "nasty.jsonl"
    path.write_text("\n".join(_line(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_inert_shows_controls_like_cat_v() -> None:
    assert inert("a\x1b[2Jb") == "a^[[2Jb"
    assert inert("x\ry\x07\x7f\x00") == "x^My^G^?^@"
    assert inert("\x9b31m") == "M-^[31m"
    assert inert("\u202eevil\u2066") == "<U+202E>evil<U+2066>"
    assert inert("lone \ud800 surrogate") == "lone \ufffd surrogate"
    assert inert("tab\tnewline\nemoji 😀 ü") == "tab\tnewline\nemoji 😀 ü"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("argv", [
    ["tree"], ["tree", "--filter", "all"], ["context"], ["context", "--leaf", "u1"], ["info"],
    ["compact", "--dry-run", "--keep-recent-tokens", "1"], ["simulate", "--context-window", "60"],
    ["branch-summary", "--pair", "u2:u1", "--dry-run"],
    ["context", "--leaf", "nope" + OSC52], ["tree", "--leaf", "zz" + CLEAR],
])
def test_every_command_prints_inertly(nasty: Path, argv: list[str]) -> None:
    # 100 columns, the width of output that is not a terminal (an inherited COLUMNS would cut the row short)
    proc = run_pikit(argv[0], nasty, *argv[1:], timeout=60, extra_env={"COLUMNS": "100"})
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert "Traceback" not in err, err
    assert not ACTIVE.search(out), repr(out)
    assert not ACTIVE.search(err), repr(err)
    shown = out + err
    if proc.returncode == 0 and argv[0] in ("tree", "context"):
        assert "^[]52;c;" in shown and "M-^[" in shown  # visible, not dropped


@pytest.mark.timeout(60)
def test_json_output_stays_exact(nasty: Path) -> None:
    proc = run_pikit("context", nasty, "--json", timeout=60)
    assert proc.returncode == 0
    session = pikit.load(nasty)
    expected = pikit.jsjson.stringify_bytes(context_json.context(session, ["u2"]))
    assert proc.stdout == expected
    assert b"\\u001b]52;c;" in proc.stdout and b"\\ud800" in proc.stdout and "\x9b".encode() in proc.stdout


def test_the_stream_wrapper_keeps_bytes_exact_and_exposes_the_original() -> None:
    import io

    raw = io.BytesIO()
    text = io.TextIOWrapper(raw, encoding="utf-8")
    stream = InertStream(text)  # type: ignore[arg-type]
    stream.write("a\x1bb\n")
    stream.flush()
    stream.buffer.write(b"\x1b exact")
    assert raw.getvalue() == b"a^[b\n\x1b exact" and stream.unescaped is text


def test_the_usage_column_follows_the_headers_rule(tmp_path: Path) -> None:
    t = "2026-01-01T00:00:0{}.000Z"
    usage = {"input": 100, "output": 20, "cacheRead": 5, "cacheWrite": 0}  # no totalTokens
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": t.format(0), "cwd": "/w"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": t.format(1),
         "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": t.format(2),
         "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "usage": usage,
                     "stopReason": "stop", "timestamp": 2}},
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": t.format(3),
         "message": {"role": "assistant", "content": [{"type": "text", "text": "cut"}], "timestamp": 3,
                     "usage": {**usage, "totalTokens": 999}, "stopReason": "aborted"}},
    ]
    path = tmp_path / "usage.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    out = run_pikit("context", path, timeout=60).stdout.decode()
    rows = {line.split()[2]: line for line in out.splitlines() if line[:3].strip().isdigit()}
    assert "125 reported by the provider" in out
    assert " 125 " in rows["a1"]  # the parts add up, as in the header
    assert "999" not in rows["a2"]  # an aborted message's usage is not used, by the header either


def test_text_without_control_characters_compiles_no_pattern() -> None:
    import subprocess
    import sys

    check = ("from pikit._inert import _compiled, inert, shell_quote, visible\n"
             "assert shell_quote('/home/dev/a b.jsonl') == \"'/home/dev/a b.jsonl'\"\n"
             "assert inert('plain') == visible('plain') == 'plain'\n"
             "assert _compiled.cache_info().currsize == 0\n"
             "assert inert('a\\x1b[2J') == 'a^[[2J' and _compiled.cache_info().currsize == 1\n")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
