"""The command line read by people: short previews, --limit/--tail, paging, grammar and hints."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pikit
from pikit.cli import main
from pikit.cli._demo import preview, project_root
from pikit.cli._pager import pager_command
from pikit.compaction import CompactionSettings, SimulationResult, simulate
from pikit.llm import OfflineSummarizer
from tests.procs import on_a_terminal, pikit as run_pikit

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
    assert ("sizes: the recorded usage as in `pikit context` while the replay holds the recorded context (every "
            "check), else Pi's estimate of what it holds") in out
    assert "final 10,599 (at the end of the branch)" in out  # `pikit context` reports 10,599 here
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


# ---------------------------------------------------------------- simulate: what the output says is what happened
@pytest.fixture
def before_compaction(shared_sessions: Path) -> Path:
    return shared_sessions / "before-compaction.jsonl"


def _replay(path: Path, window: int, reserve: int, keep: int) -> SimulationResult:
    return simulate(pikit.load(path), OfflineSummarizer(), context_window=window,
                    settings=CompactionSettings(True, reserve, keep))


@pytest.mark.parametrize(("shared", "window", "reserve", "keep"), [
    (False, 16384, 3000, 4000),  # the threshold tops the scale, one bar per check
    (False, 8000, 3000, 20000),  # the largest size does
    (True, 64000, 16384, 20000),  # 484 checks: a bar per 6
])
def test_simulate_sparkline_legend_says_what_the_bars_are(capsys: pytest.CaptureFixture[str], before_compaction: Path,
                                                          shared: bool, window: int, reserve: int, keep: int) -> None:
    path = before_compaction if shared else SAMPLE
    _, out, _ = run(capsys, "simulate", path, "--context-window", window, "--reserve-tokens", reserve,
                    "--keep-recent-tokens", keep)
    lines = out.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("context after each check: ")]
    bars = lines[at].removeprefix("context after each check: ")
    legend = re.fullmatch(r"  each bar: the (?:size after one check|largest size after (?:up to )?(\d+) checks) "
                          r"\(and any compaction there\); heights in eighths of ([\d,]+) tokens \((.+)\): "
                          r"█ = ([\d,]+) to ([\d,]+)", lines[at + 1])
    assert legend is not None, lines[at + 1]
    step = int(legend[1] or 1)
    top, low, high = (int(legend[i].replace(",", "")) for i in (2, 4, 5))
    result = _replay(path, window, reserve, keep)
    sizes = [after for _, _, _, after in result.trace]
    assert step == max(1, len(sizes) // 72)
    sampled = [max(sizes[i:i + step]) for i in range(0, len(sizes), step)]
    assert len(bars) == len(sampled)
    assert top == high == max([*sampled, result.threshold])
    assert legend[3] == ("the threshold" if top == result.threshold else "the largest size after a check")
    for bar, size in zip(bars, sampled, strict=True):
        level = "▁▂▃▄▅▆▇█".index(bar)
        assert level * top / 8 <= size and (size < (level + 1) * top / 8 or size == top), (bar, size)
        assert (bar == "█") == (low <= size <= high), (bar, size)


def test_simulate_flags_every_check_over_the_window(capsys: pytest.CaptureFixture[str],
                                                   before_compaction: Path) -> None:
    path = before_compaction
    _, out, _ = run(capsys, "simulate", path, "--context-window", 40000)
    result = _replay(path, 40000, 16384, 20000)
    over = [t for t in result.trace if t[2] > 40000]
    largest = max(over, key=lambda t: t[2])
    assert largest[2] == result.peak_tokens == 89_782
    assert (f"over the window: at {len(over)} checks the context exceeds the context window 40,000 (it would not "
            f"have fit); the first after entry {over[0][1]} (at {over[0][0]}, {over[0][2]:,} tokens), the largest "
            f"after {largest[1]} (at {largest[0]}, 89,782)") in out
    _, out, _ = run(capsys, "simulate", path, "--context-window", "40000,1000000", "--keep-recent-tokens", 20000)
    rows = [line.split() for line in out.splitlines() if line.lstrip().startswith(("40,000", "1,000,000"))]
    assert [row[-1] for row in rows] == [f"{len(over):,}", "0"]
    _, out, _ = run(capsys, "simulate", path, "--context-window", 10**6)
    assert "over the window" not in out


@pytest.mark.parametrize(("window", "reserve"), [(15000, 3000), (8000, 9000)])
def test_simulate_warnings_agree_with_the_counts(capsys: pytest.CaptureFixture[str], window: int,
                                                 reserve: int) -> None:
    """keepRecentTokens 20,000 over these thresholds: nothing is ever compacted, and no line says Pi compacts."""
    _, out, err = run(capsys, "simulate", SAMPLE, "--context-window", window, "--reserve-tokens", reserve,
                      "--keep-recent-tokens", 20000)
    result = _replay(SAMPLE, window, reserve, 20000)
    assert result.events == [] and result.runaway is not None
    fired = [t for t in result.trace if t[2] > result.threshold]
    untried = len(fired) - len(result.skipped)
    assert untried > 0
    assert (f"{len(result.trace)} checks (after each assistant message), 0 compactions, {len(result.skipped)} "
            f"triggers with nothing to compact, {untried} triggers not replayed (a runaway from entry "
            f"{result.runaway[1]})") in out
    assert "would compact" not in err
    if result.threshold > 0:
        index = result.runaway[0]
        after = [t for t in fired if t[0] > index]
        assert "there was nothing to compact" in err and "did not bring the context under" not in err
        assert (f"the trigger fired at {len(after)} of the {sum(1 for t in result.trace if t[0] > index)} checks "
                f"that followed, and the replay compacted only now and then ({len(after)} of them fired without a "
                "simulated compaction)") in err
    else:
        assert "the threshold is not positive, so Pi's compaction trigger fires after every assistant message" in err


def test_a_replay_whose_reserve_exceeds_the_window_draws_its_sizes(tmp_path: Path) -> None:
    """reserveTokens above the window: Pi's trigger fires at every check, and the sizes after the compactions
    come from what the new context holds, so the sparkline has sizes to draw (it once met a negative one)."""
    from tests.redaction import planted

    session = planted.write(tmp_path)
    result = run_pikit("simulate", session, "--context-window", "3000", "--keep-recent-tokens", "200")
    assert result.returncode == 0, result.stderr
    assert "context after each check: " in result.stdout.decode() and b"Traceback" not in result.stderr
