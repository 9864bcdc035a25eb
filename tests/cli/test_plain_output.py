"""The command line read by people: short previews, --limit/--tail, paging, grammar and hints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pikit.cli import main
from pikit.cli.demo import preview, project_root
from pikit.cli.pager import pager_command
from tests.procs import on_a_terminal

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample_sessions" / "refactor-auth.jsonl"
HEADER = {"type": "session", "version": 3, "id": "one", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
USER = {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "hello", "timestamp": 1767225601000}}


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    try:
        code = main([os.fspath(a) if isinstance(a, Path) else str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def one_entry(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(HEADER) + "\n" + json.dumps(USER) + "\n", encoding="utf-8")
    return path


def test_demo_preview_is_short_with_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    root = project_root()
    preview(SAMPLE, root)
    lines = capsys.readouterr().out.rstrip("\n").split("\n")
    assert 10 <= len(lines) <= 16, lines
    assert lines[0].startswith("Refactor auth module (shop-api) — data/sample_sessions/refactor-auth.jsonl")
    assert any(line.startswith("next: pikit tree") for line in lines)
    assert "tokens 10,599" in "\n".join(lines)


def test_tree_limit_and_tail(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tree", SAMPLE, "--limit", 5)
    lines = out.rstrip("\n").split("\n")
    assert code == 0 and len(lines) == 1 + 5 + 1
    assert "showing 138 (default)" in lines[0] and lines[-1].startswith("… 133 more rows")
    code, out, _ = run(capsys, "tree", SAMPLE, "--tail", 3)
    lines = out.rstrip("\n").split("\n")
    assert len(lines) == 1 + 1 + 3 and lines[1].startswith("… 135 earlier rows")
    code, _, err = run(capsys, "tree", SAMPLE, "--limit", 5, "--tail", 3)
    assert code == 2 and "not allowed with argument" in err


def test_context_tail_keeps_message_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "context", SAMPLE, "--tail", 2)
    lines = out.rstrip("\n").split("\n")
    assert code == 0
    assert "  … 57 earlier messages" in lines
    assert lines[-2].lstrip().startswith("57 ") and lines[-1].lstrip().startswith("58 ")
    code, out, _ = run(capsys, "context", SAMPLE, "--limit", 1)
    assert out.rstrip("\n").split("\n")[-1] == "  … 58 more messages"


def test_json_ignores_limits(capsys: pytest.CaptureFixture[str]) -> None:
    _, limited, _ = run(capsys, "context", SAMPLE, "--json", "--limit", 1)
    _, full, _ = run(capsys, "context", SAMPLE, "--json")
    assert limited == full


def test_counts_agree_with_their_nouns(capsys: pytest.CaptureFixture[str], one_entry: Path) -> None:
    _, out, _ = run(capsys, "tree", one_entry)
    assert "1 entry, 1 root, 0 labels" in out
    _, out, _ = run(capsys, "context", one_entry)
    assert "(1 entry on the branch, 1 message)" in out
    assert "model not recorded on this branch" in out and "unknown model" not in out
    _, out, _ = run(capsys, "info", one_entry)
    assert "1 entry, 1 root, 0 labels" in out


def test_mistyped_option_points_to_the_subcommand_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "tree", SAMPLE, "--limt", 3)
    assert code == 2 and err.count("\n") == 1
    assert "see `pikit tree --help`" in err and "did you mean --limit?" in err
    code, _, err = run(capsys, "simulate", SAMPLE, "--context-window", 1000, "--keep-recnt-tokens", 5)
    assert "see `pikit simulate --help`" in err and "did you mean --keep-recent-tokens?" in err


def test_dry_run_hint_follows_the_chosen_target(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, "compact", SAMPLE, "--dry-run", "--in-place", "--keep-recent-tokens", 4000)
    assert "-o" not in err and "drop --dry-run to append the compaction to FILE" in err
    _, _, err = run(capsys, "compact", SAMPLE, "--dry-run", "--keep-recent-tokens", 4000)
    assert "add -o OUT" in err


def test_compact_help_explains_the_dry_run_columns(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compact", "--help")
    assert code == 0
    assert "  prefix      messages of the split turn before the cut" in out
    assert "  kept≈       estimated tokens" in out


def test_simulate_warns_when_reserve_reaches_the_window(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "simulate", SAMPLE, "--context-window", 3000, "--reserve-tokens", 3000,
                         "--keep-recent-tokens", 1000)
    assert code == 0
    warnings = [line for line in err.split("\n") if line.startswith("pikit: warning:")]
    assert len(warnings) == 1 and "reserveTokens 3,000 ≥ the context window 3,000" in warnings[0]
    _, _, err = run(capsys, "simulate", SAMPLE, "--context-window", 16384, "--reserve-tokens", 3000,
                    "--keep-recent-tokens", 4000)
    assert "warning" not in err
    # The default keepRecentTokens (20,000) is above this threshold (13,384): a runaway, said once.
    _, _, err = run(capsys, "simulate", SAMPLE, "--context-window", 16384, "--reserve-tokens", 3000)
    warnings = [line for line in err.split("\n") if line.startswith("pikit: warning:")]
    assert len(warnings) == 1 and "runaway" in warnings[0] and "20,000 ≥ the threshold 13,384" in warnings[0]


def test_simulate_says_how_sizes_were_measured(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "simulate", SAMPLE, "--context-window", 10**6, "--keep-existing")
    assert "sizes: the recorded usage as in `pikit context` (every check), changed by simulated compactions" in out
    assert "final 10,599 tokens" not in out and "final 10,599," in out  # `pikit context` reports 10,599 here
    assert "0 compactions" in out and "left out" not in out
    _, out, _ = run(capsys, "simulate", SAMPLE, "--context-window", 10**6)
    assert "the branch's 2 recorded compactions left out" in out
    _, out, _ = run(capsys, "simulate", SAMPLE, "--context-window", 10**6, "--sizes", "estimate")
    assert "sizes: Pi's estimate alone (--sizes estimate)" in out


def test_pager_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIKIT_PAGER", raising=False)
    monkeypatch.setenv("PAGER", "cat")
    assert pager_command() is None
    monkeypatch.setenv("PAGER", "")
    assert pager_command() is None
    monkeypatch.setenv("PAGER", "no-such-pager-here --x")
    assert pager_command() is None
    monkeypatch.setenv("PIKIT_PAGER", "sh -c 'cat'")
    assert pager_command() == ["sh", "-c", "cat"]


def _on_a_terminal(argv: list[str], pager_file: Path, extra_env: dict[str, str] | None = None) -> str:
    """Run pikit with stdout on a pseudo-terminal and a pager that copies its input to ``pager_file``."""
    env = {**os.environ, "PAGER": f"sh -c 'cat > {pager_file}'", **(extra_env or {})}
    env.pop("PIKIT_PAGER", None)
    done, screen = on_a_terminal(*argv, environment=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return screen.decode("utf-8", "replace")


def test_terminal_output_goes_through_the_pager(tmp_path: Path) -> None:
    paged = tmp_path / "paged.txt"
    screen = _on_a_terminal(["tree", str(SAMPLE)], paged)
    assert paged.read_text(encoding="utf-8").count("\n") == 139 and "showing 138" not in screen
    paged.unlink()
    _on_a_terminal(["tree", str(SAMPLE), "--no-pager"], paged)
    assert not paged.exists()
    screen = _on_a_terminal(["context", str(SAMPLE), "--json"], paged)
    assert not paged.exists() and screen.count('"leaves"') == 1


def test_piped_output_is_never_paged(tmp_path: Path) -> None:
    paged = tmp_path / "paged.txt"
    env = {**os.environ, "PAGER": f"sh -c 'cat > {paged}'"}
    done = subprocess.run([sys.executable, "-m", "pikit", "context", str(SAMPLE)], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 0 and "context at 0ce8fc25" in done.stdout
    assert not paged.exists()
