"""Writing next to a running Pi, two runs at once, interruptions, output mistakes, file modes.

Every test here runs real processes: ``pikit`` as a user runs it, and a Pi-like writer
(``node`` appending lines with ``fs.appendFileSync``, exactly as Pi appends its entries).
Loops are bounded and every process has a time limit.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pikit
from pikit import WriteError
from pikit._format.write import Appender, append_lines, write_new
from tests.procs import ctrl_c_reaches_it, env, one_error_line, pikit as run_pikit, popen

REFACTOR = Path(__file__).resolve().parents[2] / "data" / "sample_sessions" / "refactor-auth.jsonl"

# A Pi-like writer: N entries appended one line per appendFileSync call (Pi's own way).
NODE_WRITER = """
const fs = require('fs');
const [path, n, tag, pause] = process.argv.slice(1);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
for (let i = 0; i < Number(n); i++) {
  if (Number(pause)) Atomics.wait(sleeper, 0, 0, Number(pause));
  const entry = {type: 'custom', id: `${tag}${i}`, parentId: null, timestamp: new Date().toISOString(),
                 customType: 'pi-writer', data: {pad: 'x'.repeat(200 + (i % 7) * 300)}};
  fs.appendFileSync(path, JSON.stringify(entry) + '\\n');
}
"""

PY_APPENDER = """
import json, sys
from pikit._format.write import append_lines
path, n, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for i in range(n):
    entry = {"type": "custom", "id": f"{tag}{i}", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
             "customType": "pikit-writer", "data": {"pad": "y" * (100 + (i % 5) * 900)}}
    append_lines(path, [json.dumps(entry, separators=(",", ":")).encode()] * 1)
"""


def _pi_writer(path: Path, n: int, tag: str, pause_ms: int = 0) -> subprocess.Popen[bytes]:
    if shutil.which("node"):
        return subprocess.Popen(["node", "-e", NODE_WRITER, str(path), str(n), tag, str(pause_ms)])
    # Without node: the same O_APPEND writes from Python.
    return subprocess.Popen([sys.executable, "-c", PY_WRITER, str(path), str(n), tag, str(pause_ms)], env=env())


PY_WRITER = """
import json, os, sys
import time
path, n, tag, pause = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
for i in range(n):
    time.sleep(pause / 1000)
    line = json.dumps({"type": "custom", "id": f"{tag}{i}", "parentId": None, "customType": "pi-writer",
                       "data": {"pad": "x" * (200 + (i % 7) * 300)}}, separators=(",", ":")) + "\\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, line.encode())
    os.close(fd)
"""


def _copy(tmp_path: Path, source: Path = REFACTOR, name: str = "session.jsonl") -> Path:
    target = tmp_path / name
    shutil.copyfile(source, target)
    return target


# ---------------------------------------------------------------- races with Pi
@pytest.mark.timeout(240)
def test_appends_never_overwrite_lines_a_concurrent_writer_appends(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = path.read_bytes()
    n_pi, n_pikit, rounds = 400, 150, 3
    for r in range(rounds):
        pi = _pi_writer(path, n_pi, f"pi{r}-")
        ours = subprocess.Popen([sys.executable, "-c", PY_APPENDER, str(path), str(n_pikit), f"pk{r}-"], env=env())
        assert pi.wait(timeout=120) == 0 and ours.wait(timeout=120) == 0
    data = path.read_bytes()
    assert data.startswith(before)  # nothing before the appends changed
    ids = []
    for line in data[len(before):].split(b"\n")[:-1]:
        ids.append(json.loads(line)["id"])  # every line whole: valid JSON, never two glued together
    expected = {f"{who}{r}-{i}" for r in range(rounds) for who, n in (("pi", n_pi), ("pk", n_pikit))
                for i in range(n)}
    assert sorted(ids) == sorted(expected)  # none lost, none doubled
    assert pikit.load(path).report.damaged_lines == []


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_in_place_compaction_while_pi_appends_loses_nothing(tmp_path: Path) -> None:
    outcomes = {"appended": 0, "refused": 0}
    for attempt in range(6):
        path = _copy(tmp_path, name=f"race{attempt}.jsonl")
        pi = _pi_writer(path, 300, f"pi{attempt}-", pause_ms=1 + attempt)
        time.sleep(0.1 * attempt)
        proc = run_pikit("compact", path, "--leaf", "0ce8fc25", "--keep-recent-tokens", "4000", "--in-place",
                         timeout=120)
        assert pi.wait(timeout=120) == 0
        if proc.returncode == 0:
            outcomes["appended"] += 1
        else:
            one_error_line(proc, "changed since it was loaded")
            outcomes["refused"] += 1
        session = pikit.load(path)
        assert session.report.damaged_lines == []
        ids = {e.id for e in session.entries}
        assert {f"pi{attempt}-{i}" for i in range(300)} <= ids  # every one of Pi's lines is there
        compactions = [e for e in session.entries if e.type == "compaction"]
        assert len(compactions) == 2 + (proc.returncode == 0)
    assert sum(outcomes.values()) == 6


@pytest.mark.timeout(600)
@pytest.mark.slow
def test_two_in_place_runs_at_once_never_both_compact(tmp_path: Path) -> None:
    reasons = {"another pikit run is appending": 0, "changed since it was loaded": 0, "nothing to compact": 0}
    pairs = 12
    for attempt in range(pairs):
        path = _copy(tmp_path, name=f"pair{attempt}.jsonl")
        procs = [popen("compact", path, "--keep-recent-tokens", "4000", "--in-place") for _ in range(2)]
        results = [p.communicate(timeout=120) for p in procs]
        session = pikit.load(path)
        assert session.report.damaged_lines == []
        new = [e for e in session.entries if e.type == "compaction"][2:]
        assert len(new) == 1, [p.returncode for p in procs]  # exactly one of the two compacted
        assert sorted(p.returncode for p in procs) == [0, 1]
        err = next(err.decode() for p, (_, err) in zip(procs, results, strict=True) if p.returncode)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        # The loser was locked out, saw the file change under it, or (it loaded after the
        # winner wrote) found the compaction already there.
        reason = next(r for r in reasons if r in err)
        reasons[reason] += 1
    assert sum(reasons.values()) == pairs
    print(f"two in-place runs at once, {pairs} pairs: {reasons}")


def test_a_second_appender_is_refused_while_the_first_holds_the_lock(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom pikit._format.write import Appender\n"
                               "a = Appender(sys.argv[1]); print('locked', flush=True); time.sleep(30)", str(path)],
                              env=env(), stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
        with pytest.raises(WriteError, match="another pikit run is appending"):
            Appender(str(path))
        proc = run_pikit("compact", path, "--keep-recent-tokens", "4000", "--in-place", timeout=60)
        one_error_line(proc, "another pikit run is appending")
    finally:
        holder.kill()
        holder.wait(10)
        holder.stdout.close()  # type: ignore[union-attr]
    with Appender(str(path)) as appender:  # the lock went with the process
        appender.append([b'{"type":"custom","id":"after","parentId":null}'])


# ---------------------------------------------------------------- the last line
def test_a_damaged_last_line_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    damaged = path.read_bytes() + b'{"type":"message","id":"half'
    path.write_bytes(damaged)
    proc = run_pikit("compact", path, "--keep-recent-tokens", "4000", "--in-place")
    one_error_line(proc, "last line has no newline", "-o OUT")
    assert path.read_bytes() == damaged


SLOW_WRITER = """
import sys, time
path, rest = sys.argv[1], sys.argv[2].encode()
for _ in range(40):  # Pi in the middle of a long line: it keeps growing, 10 ms at a time
    with open(path, "ab") as out:
        out.write(b" ")
    time.sleep(0.01)
with open(path, "ab") as out:
    out.write(rest)
"""


def test_a_line_still_being_written_is_waited_for_not_called_damaged(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = path.read_bytes()
    half, rest = b'{"type":"custom","id":"pi-line","parentId":null,', b'"customType":"pi-writer"}\n'
    path.write_bytes(before + half)
    writer = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, str(path), rest.decode()])
    deadline = time.monotonic() + 30
    while path.stat().st_size == len(before + half) and time.monotonic() < deadline:
        time.sleep(0.002)  # the writer has started
    ours = b'{"type":"custom","id":"ours","parentId":null}'
    assert append_lines(str(path), [ours]) is False  # waited for the line, then appended after it
    assert writer.wait(timeout=30) == 0
    data = path.read_bytes()
    assert data.startswith(before + half) and data.endswith(rest + ours + b"\n")
    assert pikit.load(path).report.damaged_lines == []


def test_a_whole_last_line_without_newline_is_ended_and_said(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    data = path.read_bytes().rstrip(b"\n")
    path.write_bytes(data)
    proc = run_pikit("compact", path, "--keep-recent-tokens", "4000", "--in-place")
    assert proc.returncode == 0, proc.stderr
    assert b"last line had no newline; one was added" in proc.stderr
    new = path.read_bytes()
    assert new.startswith(data + b"\n{") and new.endswith(b"\n")
    assert pikit.load(path).report.damaged_lines == []


# ---------------------------------------------------------------- interruption
SLOW_WRITE = """
import sys, time
import pikit._format.write as w
real = w._write_new
def slow(path, pieces, source, overwrite):
    def trickle():
        pieces_ = iter(pieces)
        yield next(pieces_)
        while True:  # the temporary file holds a first piece: wait here for the signal, however late it comes
            time.sleep(0.01)
    return real(path, trickle(), source, overwrite)
w._write_new = slow
sys.argv = ["pikit", *sys.argv[1:]]
from pikit.cli import run
run()
"""


@pytest.mark.timeout(300)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("command", ["compact", "migrate", "fork"])
def test_an_interrupted_write_leaves_nothing_behind(tmp_path: Path, shared_sessions: Path, signum: int,
                                                    command: str) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "new.jsonl"
    source = shared_sessions / ("large-session.v1.jsonl" if command == "migrate" else "large-session.jsonl")
    args = {"compact": ["compact", source, "--keep-recent-tokens", "2000", "-o", target],
            "migrate": ["migrate", source, "-o", target],
            "fork": ["fork", source, "--leaf", pikit.load(source).leaf_id, "-o", target]}[command]
    # The write stops after its first piece until the signal comes, so the signal lands while the temporary
    # file exists whatever the machine's load.
    proc = subprocess.Popen([sys.executable, "-c", SLOW_WRITE, *map(str, args)], env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=ctrl_c_reaches_it)
    deadline = time.monotonic() + 120
    while not any(out_dir.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, "the write never started"
        time.sleep(0.005)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, err
    text = err.decode()
    assert "Traceback" not in text and len(text.strip().splitlines()) == 1
    assert list(out_dir.iterdir()) == []  # neither the temporary file nor a partial output


# ---------------------------------------------------------------- output mistakes
@pytest.mark.slow
def test_output_mistakes_get_one_line(tmp_path: Path) -> None:
    source = _copy(tmp_path)
    leaf = pikit.load(source).leaf_id
    commands = {
        "compact": ["compact", source, "--keep-recent-tokens", "4000"],
        "branch-summary": ["branch-summary", source, "--pair", "0ce8fc25:d4e1a7b2"],
        "migrate": ["migrate", source],
        "fork": ["fork", source, "--leaf", leaf],
    }
    before = source.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    hard = tmp_path / "hard.jsonl"
    os.link(source, hard)
    unwritable = Path("/sys") if os.geteuid() == 0 else tmp_path / "locked"
    if os.geteuid() != 0:
        unwritable.mkdir()
        unwritable.chmod(0o500)
    for name, argv in commands.items():
        if name == "branch-summary":
            session = pikit.load(source)
            other = next(e.id for e in session.entries if e.id not in set(session.branch_ids()))
            argv = ["branch-summary", source, "--pair", f"{leaf}:{other}"]
        for target, extra, needle in [
            (source, ["--force"], "source file"),
            (link, ["--force"], "source file"),
            (hard, ["--force"], "source file"),
            (tmp_path, ["--force"], "is a directory"),
            (tmp_path, [], "is a directory"),
            (unwritable / "out.jsonl", [], "cannot write"),
            (tmp_path / "missing" / "out.jsonl", [], "does not exist"),
        ]:
            proc = run_pikit(*argv, "-o", target, *extra)
            one_error_line(proc, needle)
        assert source.read_bytes() == before
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers == []


# ---------------------------------------------------------------- modes
@pytest.mark.parametrize(("umask", "source_mode", "expected"), [
    (0o022, 0o644, 0o644), (0o022, 0o444, 0o644), (0o077, 0o644, 0o600), (0o022, 0o600, 0o600),
    (0o002, 0o664, 0o664), (0o022, 0o755, 0o644),
])
def test_new_files_get_the_mode_a_user_expects(tmp_path: Path, umask: int, source_mode: int, expected: int) -> None:
    source = _copy(tmp_path)
    source.chmod(source_mode)
    target = tmp_path / "out.jsonl"
    for argv in (["migrate", source, "-o", target], ["compact", source, "--keep-recent-tokens", "4000", "-o", target]):
        proc = subprocess.run([sys.executable, "-c", f"import os, sys; os.umask({umask}); "
                               "sys.argv = ['pikit', *sys.argv[1:]]\nfrom pikit.cli import run\nrun()",
                               *map(str, argv)], env=env(), capture_output=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert stat.S_IMODE(target.stat().st_mode) == expected
        target.unlink()


def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"old\n")
    target.chmod(0o640)
    write_new(target, [b"new"], overwrite=True)
    assert target.read_bytes() == b"new\n" and stat.S_IMODE(target.stat().st_mode) == 0o640


def test_append_lines_keeps_the_mode_and_refuses_non_files(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    path.chmod(0o604)
    append_lines(str(path), [b'{"type":"custom","id":"x","parentId":null}'])
    assert stat.S_IMODE(path.stat().st_mode) == 0o604
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(WriteError, match="FIFO"):
        append_lines(str(fifo), [b"x"])
