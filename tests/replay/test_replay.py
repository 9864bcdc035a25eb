"""pikit.replay: a session written again line by line, at a pace taken from its timestamps."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import pikit
import pikit.replay
from pikit import PikitError
from pikit.replay import replay

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample_sessions" / "refactor-auth.jsonl"


def test_the_copy_is_byte_for_byte_and_paced_by_the_timestamps(tmp_path: Path) -> None:
    out = tmp_path / "live.jsonl"
    pauses: list[float] = []
    sizes: list[int] = []
    count = replay(SAMPLE, out, speed=4, max_gap=1.5, sleep=pauses.append,
                   on_line=lambda _n, _line: sizes.append(out.stat().st_size))
    assert out.read_bytes() == SAMPLE.read_bytes()
    assert count == len(SAMPLE.read_bytes().splitlines()) == len(pauses) + 1
    assert sizes == sorted(sizes) and all(p <= 1.5 for p in pauses)
    times = [e.time_ms for e in pikit.load(SAMPLE).entries]
    assert pauses[1] == pytest.approx(min((times[1] - times[0]) / 4000, 1.5))


def test_torn_lines_arrive_in_two_writes(tmp_path: Path) -> None:
    out = tmp_path / "torn.jsonl"
    seen: list[bytes] = []

    def look(_seconds: float) -> None:
        if out.exists():
            seen.append(out.read_bytes())

    replay(SAMPLE, out, speed=1000, torn=True, sleep=look)
    assert out.read_bytes() == SAMPLE.read_bytes()
    assert any(not snapshot.endswith(b"\n") for snapshot in seen)  # a half line was visible


def test_replay_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    out.write_bytes(b"keep me\n")
    with pytest.raises(PikitError, match="already exists; give a new file or force=True to write it again"):
        replay(SAMPLE, out, sleep=lambda _s: None)
    assert out.read_bytes() == b"keep me\n"
    with pytest.raises(PikitError, match="source itself"):
        replay(SAMPLE, SAMPLE, force=True, sleep=lambda _s: None)
    replay(SAMPLE, out, force=True, sleep=lambda _s: None)
    assert out.read_bytes() == SAMPLE.read_bytes()


def test_a_folder_or_an_unwritable_path_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    with pytest.raises(PikitError, match=f"^{tmp_path}: is a folder; give the path of a new file to replay into$"):
        replay(SAMPLE, tmp_path, force=True, sleep=lambda _s: None)
    missing = tmp_path / "no-such-folder" / "x.jsonl"
    with pytest.raises(PikitError, match=r"no-such-folder/x.jsonl: cannot be written \(No such file or directory\)"):
        replay(SAMPLE, missing, sleep=lambda _s: None)
    done = subprocess.run([sys.executable, "-m", "pikit.replay", str(SAMPLE), str(tmp_path), "--force"],
                          capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1 and done.stderr == (f"pikit.replay: error: {tmp_path}: is a folder; give the path "
                                                    "of a new file to replay into\n")
    long = str(tmp_path / ("x" * 300) / "y.jsonl")  # a value the user gave is echoed short, as by pikit
    done = subprocess.run([sys.executable, "-m", "pikit.replay", str(SAMPLE), long], capture_output=True, text=True,
                          cwd=REPO, timeout=60, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1 and f"…' ({len(long)} characters): cannot be written" in done.stderr
    assert len(done.stderr) < 200 and "Traceback" not in done.stderr


@pytest.mark.parametrize(("options", "message"), [
    ({"speed": 0}, "speed must be more than 0 and finite (1 is the original pace, 5 five times faster)"),
    ({"speed": float("nan")}, "speed must be more than 0 and finite (1 is the original pace, 5 five times faster)"),
    ({"max_gap": -1}, "max_gap must be 0 to 86,400 seconds"),
    ({"max_gap": float("inf")}, "max_gap must be 0 to 86,400 seconds"),
])
def test_a_pace_out_of_range_is_refused_in_the_parameters_words(tmp_path: Path, options: dict[str, float],
                                                                 message: str) -> None:
    with pytest.raises(PikitError) as refused:
        replay(SAMPLE, tmp_path / "y.jsonl", **options)  # type: ignore[arg-type]
    assert str(refused.value) == message
    assert not (tmp_path / "y.jsonl").exists()


def test_the_module_exports_the_library_only() -> None:
    assert pikit.replay.__all__ == ["MAX_GAP", "replay"]
    assert not hasattr(pikit.replay, "main")


def test_the_module_runs_as_a_script(tmp_path: Path) -> None:
    out = tmp_path / "script.jsonl"
    done = subprocess.run([sys.executable, "-m", "pikit.replay", str(SAMPLE), str(out), "--speed", "1000",
                           "--max-gap", "0.001"], capture_output=True, text=True, cwd=REPO, timeout=120,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == SAMPLE.read_bytes() and "replayed" in done.stderr
    again = subprocess.run([sys.executable, "-m", "pikit.replay", str(SAMPLE), str(out)], capture_output=True,
                           text=True, cwd=REPO, timeout=60, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert again.returncode == 1 and "Traceback" not in again.stderr
    assert again.stderr == (f"pikit.replay: error: {out}: already exists; give a new file or --force to write it "
                            "again from the start\n")
    slow = subprocess.run([sys.executable, "-m", "pikit.replay", str(SAMPLE), str(tmp_path / "slow.jsonl"), "--speed",
                           "0"], capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert slow.returncode == 1 and slow.stderr == ("pikit.replay: error: --speed must be more than 0 and finite "
                                                    "(1 is the original pace, 5 five times faster)\n")
