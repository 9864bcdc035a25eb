"""pikit._progress: one protocol for the progress of loading, scanning and replaying; shown only for long work,
only where asked for, drawn by the caller's display."""

from __future__ import annotations

import io
import itertools
import sys
import threading
from pathlib import Path

import pytest

import pikit
from pikit._progress import BYTES, ENTRIES, WORTH_SHOWING, Line, in_notebook, reporting, tracked
from pikit.compaction import CompactionSettings, simulate, sweep
from pikit.corpus import Corpus
from pikit.llm import get_summarizer
from tests.long_work import REFACTOR, SAMPLE_CORPUS, WIDE_TREE, WIDE_TREE_BRANCH, big_corpus, big_session

LONG = WORTH_SHOWING[BYTES]


class Recorder:
    """A display that keeps what it is told."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def start(self, label: str, total: int, unit: str) -> None:
        self.calls.append(("start", label, total, unit))

    def update(self, done: int, total: int) -> None:
        self.calls.append(("update", done, total))

    def finish(self) -> None:
        self.calls.append(("finish",))


def test_a_callback_hears_all_work_and_a_display_only_long_work() -> None:
    heard: list[tuple[int, int]] = []
    with reporting(lambda done, total: heard.append((done, total)), "loading x", 10, BYTES) as callback:
        assert callback is not None
        callback(10, 10)
    assert heard == [(10, 10)]
    shown = Recorder()
    with reporting(shown, "loading x", LONG - 1, BYTES) as callback:
        assert callback is None
    assert shown.calls == []
    with reporting(shown, "replaying", WORTH_SHOWING[ENTRIES], ENTRIES) as callback:
        assert callback is not None
        callback(1, WORTH_SHOWING[ENTRIES])
    assert shown.calls == [("start", "replaying", 5000, ENTRIES), ("update", 1, 5000), ("finish",)]


def test_a_display_is_finished_however_the_work_ends() -> None:
    shown = Recorder()
    with pytest.raises(KeyboardInterrupt), reporting(shown, "scanning", LONG, BYTES):
        raise KeyboardInterrupt
    assert shown.calls[-1] == ("finish",)


def test_nothing_is_shown_unless_asked_outside_a_notebook(capsys: pytest.CaptureFixture[str]) -> None:
    assert not in_notebook()
    for progress in (None, False):
        with reporting(progress, "loading x", 10 * LONG, BYTES) as callback:
            assert callback is None
    assert capsys.readouterr() == ("", "")


def test_labels_reach_a_display_as_plain_text() -> None:
    shown = Recorder()
    with reporting(shown, "loading \x1b]52;c;eA==\x07<img src=x>&\u202e\ud800.jsonl", LONG, BYTES):
        pass
    assert shown.calls[0][1] == "loading ?]52;c;eA==??img src=x????.jsonl"


def test_a_line_redraws_in_place_a_few_times_a_second_and_is_cleared() -> None:
    stream = io.StringIO()
    with Line(stream) as line:
        line.start("replaying 9,000 entries", 9000, ENTRIES)
        for done in range(1, 9001):
            line.update(done, 9000)
        drawn = stream.getvalue()
    assert drawn.startswith("\rreplaying 9,000 entries: 1 / 9,000 entries (0%)\x1b[K")
    assert drawn.endswith("\rreplaying 9,000 entries: 9,000 / 9,000 entries (100%)\x1b[K")
    assert drawn.count("\r") < 100  # (not 9,000 redraws)
    assert stream.getvalue() == drawn + "\r\x1b[K"  # cleared when the block ends
    quiet = io.StringIO()
    with Line(quiet) as line:
        line.start("loading x", LONG, BYTES)
    assert quiet.getvalue() == ""  # never drawn: nothing to clear


def test_a_line_fits_the_terminal() -> None:
    stream = io.StringIO()  # (no terminal: 80 columns)
    line = Line(stream)
    label = "loading 2026-11-03T09-31-04-530Z_b00b0a75-1961-4803-99e3-e91e5077ac80.jsonl"
    line.start(label, 36_000_000, BYTES)
    line.update(12_000_000, 36_000_000)
    text = stream.getvalue()
    assert text == f"\r{label[:60]}…: 12 / 36 MB (33%)\x1b[K"
    assert len(text) - len("\r\x1b[K") == 79


def test_true_draws_a_tqdm_bar_without_starting_a_thread(capsys: pytest.CaptureFixture[str]) -> None:
    from tqdm import TMonitor

    threads = set(threading.enumerate())
    with reporting(True, "loading big.jsonl", LONG, BYTES) as callback:
        assert callback is not None
        callback(LONG // 2, LONG)
        callback(LONG, LONG)
        started = set(threading.enumerate()) - threads
    assert not any(isinstance(t, TMonitor) for t in started)
    err = capsys.readouterr().err
    assert "loading big.jsonl" in err and "/32.0M" in err


def test_true_without_tqdm_draws_a_line_on_stderr(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)  # (not importable)
    with reporting(True, "loading big.jsonl", LONG, BYTES) as callback:
        assert callback is not None
        callback(LONG, LONG)
    assert capsys.readouterr().err == "\rloading big.jsonl: 32 / 32 MB (100%)\x1b[K\r\x1b[K"


def test_tracked_counts_items_or_their_weight_up_to_the_total() -> None:
    heard: list[tuple[int, int]] = []
    assert list(tracked("abc", lambda d, t: heard.append((d, t)), "x", 3, ENTRIES)) == ["a", "b", "c"]
    assert heard == [(1, 3), (2, 3), (3, 3)]
    heard.clear()
    assert list(tracked([5, 7], lambda d, t: heard.append((d, t)), "x", 10, BYTES, weight=int)) == [5, 7]
    assert heard == [(5, 10), (10, 10)]
    heard.clear()
    assert list(tracked([5, 3], lambda d, t: heard.append((d, t)), "x", 10, BYTES, weight=int)) == [5, 3]
    assert heard == [(5, 10), (8, 10), (10, 10)]  # (ended short of the estimate: done all the same)
    assert list(tracked("abc", None, "x", 3, ENTRIES)) == ["a", "b", "c"]


def test_load_reports_its_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = big_session(tmp_path)
    size = path.stat().st_size
    pikit.load(path)
    assert capsys.readouterr() == ("", "")  # no notebook, not asked: nothing
    shown = Recorder()
    pikit.load(path, progress=shown)
    assert shown.calls[0] == ("start", "loading big.jsonl", size, BYTES)
    assert shown.calls[-2:] == [("update", size, size), ("finish",)]
    assert pikit.load(REFACTOR, progress=shown) is not None and shown.calls[-1] == ("finish",)  # short: not shown


def test_a_scan_reports_the_bytes_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = big_corpus(tmp_path / "sessions")
    size = sum(p.stat().st_size for p in root.rglob("*.jsonl"))
    shown = Recorder()
    with Corpus.open(root, index=tmp_path / "index.duckdb", workers=1, progress=shown) as corpus:
        assert corpus.last_scan is not None and corpus.last_scan.read_whole == 41
        assert shown.calls[0] == ("start", "scanning 41 files", size, BYTES)
        updates = [call[1] for call in shown.calls if call[0] == "update"]
        # one per file; the last says all is read (a torn last line is left for the next scan: 42)
        assert updates == sorted(updates) and updates[-2] == corpus.last_scan.bytes_read < updates[-1] == size
        assert len(updates) == 42
        assert shown.calls[-1] == ("finish",)
        heard: list[tuple[int, int]] = []
        corpus.scan(lambda done, total: heard.append((done, total)))  # nothing changed: nothing to read
        assert heard == []
    assert capsys.readouterr().err == ""


def test_a_replay_reports_its_entries_and_a_sweep_all_of_them() -> None:
    session = pikit.load(WIDE_TREE)
    summarizer = get_summarizer("offline")
    heard: list[tuple[int, int]] = []
    simulate(session, summarizer, context_window=16384, settings=CompactionSettings(True, 3000, 4000),
             progress=lambda done, total: heard.append((done, total)))
    assert heard == [(i, WIDE_TREE_BRANCH) for i in range(1, WIDE_TREE_BRANCH + 1)]
    shown = Recorder()
    runs = sweep(session, summarizer, context_windows=[16384, 24000, 32000],
                 settings=iter([CompactionSettings(True, 3000, 4000)]), progress=shown)
    total = 3 * WIDE_TREE_BRANCH
    assert len(runs) == 3
    assert shown.calls[0] == ("start", "replaying 1,878 entries under 3 settings", total, ENTRIES)
    assert [call[1] for call in shown.calls[1:-1]] == list(range(1, total + 1))
    assert shown.calls[-1] == ("finish",)
    short = Recorder()
    sweep(session, summarizer, context_windows=[16384, 24000], settings=[CompactionSettings(True, 3000, 4000)],
          progress=short)
    assert short.calls == []


@pytest.mark.slow
def test_the_dask_scan_reports_results_as_they_arrive(tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    size = sum(p.stat().st_size for p in SAMPLE_CORPUS.rglob("*.jsonl"))
    heard: list[tuple[int, int]] = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client, \
            Corpus.open(SAMPLE_CORPUS, index=tmp_path / "dask.duckdb", client=client,
                        progress=lambda done, total: heard.append((done, total))):
        pass
    assert len(heard) == 37 + 1 and {total for _, total in heard} == {size}  # (+1: a torn last line, left unread)
    assert all(a <= b for (a, _), (b, _) in itertools.pairwise(heard)) and heard[-1] == (size, size)
