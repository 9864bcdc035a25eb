"""Usage counts every message once: copies across files, version-1 files and their migrated copies, re-read files."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pikit.corpus import Corpus
from tests.corpus.corpora import (
    assistant,
    header,
    legacy,
    legacy_header,
    pi_migrated,
    user,
    write,
)

DAY = "2026-11-02T"


def _usage(root: Path, index: Path | str = ":memory:", by: str = "session") -> dict[str, Any]:
    with Corpus.open(root, index=index, workers=1) as corpus:
        return {row["key"]: row for row in corpus.usage_rows(by, timezone="UTC")}


def _totals(rows: dict[str, Any]) -> tuple[Any, ...]:
    return (sum(r["inputTokens"] for r in rows.values()), sum(r["outputTokens"] for r in rows.values()),
            round(math.fsum(r["cost"] for r in rows.values()), 9))


def _same_raw_id() -> list[dict[str, Any]]:
    """A version-1 file whose entries carry raw ids: two different calls share one (and one timestamp); every raw
    parent names the first entry, so by the raw ids the file has many branches."""
    ts = f"{DAY}09:00:00.000Z"
    entries = [user("u1", None, f"{DAY}08:59:00.000Z", "hello")]
    for k in range(8):
        entries.append(assistant(f"a{k}", "u1", ts if k < 2 else f"{DAY}09:0{k}:00.000Z", 100 * (k + 1),
                                 0.5 + k))
    raw = [legacy(entries[0], "r0", None)] + [legacy(e, "same" if k < 2 else f"r{k}", "r0")
                                             for k, e in enumerate(entries[1:])]
    return [legacy_header("old"), *raw]


def test_legacy_entries_sharing_a_raw_id_both_count(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    write(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_old.jsonl", *_same_raw_id())
    rows = _usage(root)
    assert rows["old"]["inputTokens"] == sum(100 * (k + 1) for k in range(8))
    assert rows["old"]["cost"] == pytest.approx(sum(0.5 + k for k in range(8)))


def test_legacy_branches_come_from_the_migrated_tree(tmp_path: Path) -> None:
    """Pi migrates a version-1 file into one chain (each entry's parent the one before it), whatever raw ids say."""
    root = tmp_path / "sessions"
    write(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_old.jsonl", *_same_raw_id())
    with Corpus.open(root, index=":memory:", workers=1) as corpus:
        assert corpus.rows("SELECT leaves, abandoned_branches FROM sessions") == [(1, 0)]
        assert corpus.rows("SELECT count(*), bool_and(is_active) FROM branches") == [(1, True)]
        ids = [r[0] for r in corpus.rows("SELECT entry_id FROM messages ORDER BY entry_index")]
    import pikit

    session = pikit.load(root / "--home-dev-app--" / "2026-11-02T08-00-00-000Z_old.jsonl")
    assert ids == [e.id for e in session.entries]  # the ids pikit.load and pikit migrate give


def _legacy_and_copy(root: Path, how: str) -> Path:
    """A version-1 session file and beside it its copy migrated by ``pikit migrate`` or as Pi migrates (returned)."""
    ts = [f"{DAY}09:0{k}:00.000Z" for k in range(6)]
    v3 = [user("u1", None, ts[0], "hello")] + [assistant(f"a{k}", "u1", ts[k], 100 * k, 0.25 * k)
                                               for k in range(1, 6)]
    objects = [legacy_header("old"), *(legacy(e) for e in v3)]
    folder = root / "--home-dev-app--"
    source = write(folder / "2026-11-02T08-00-00-000Z_old.v1.jsonl", *objects)
    copy = folder / "2026-11-02T08-00-00-000Z_old.jsonl"
    if how == "pikit":
        subprocess.run([sys.executable, "-m", "pikit", "migrate", str(source), "-o", str(copy)], check=True,
                       capture_output=True)
    else:
        write(copy, *pi_migrated(objects))
    return copy


@pytest.mark.parametrize("how", ["pikit", "pi"])
def test_a_legacy_file_beside_its_migrated_copy_counts_once(tmp_path: Path, how: str) -> None:
    root = tmp_path / "sessions"
    copy = _legacy_and_copy(root, how)
    both = _usage(root)
    copy.unlink()
    alone = _usage(root)
    assert set(both) == {"old"} and _totals(both) == _totals(alone)
    assert alone["old"]["cost"] == pytest.approx(0.25 * 15)


def test_a_migrated_copy_that_grew_counts_what_it_added(tmp_path: Path) -> None:
    """The copy Pi goes on writing: what it appended counts; a message changed in it is not the legacy one."""
    root = tmp_path / "sessions"
    copy = _legacy_and_copy(root, "pi")
    lines = copy.read_text().splitlines()
    last = json.loads(lines[-1])
    grown = assistant("b1", last["id"], f"{DAY}10:00:00.000Z", 1000, 2.0)
    copy.write_text("\n".join(lines) + "\n" + json.dumps(grown) + "\n")
    rows = _usage(root)
    assert rows["old"]["inputTokens"] == 100 * 15 + 1000
    assert rows["old"]["cost"] == pytest.approx(0.25 * 15 + 2.0)


def test_a_real_legacy_file_beside_pis_migration(tmp_path: Path, shared_sessions: Path) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    for name in ("large-session.v1.jsonl", "large-session.jsonl"):
        (root / name).symlink_to(shared_sessions / name)
    both = _usage(root)
    (root / "large-session.jsonl").unlink()
    alone = _usage(root)
    assert len(both) == 1 and _totals(both) == _totals(alone)
    assert alone[next(iter(alone))]["cost"] > 1


@pytest.mark.parametrize("how", ["pikit", "pi"])
def test_sessions_list_a_legacy_file_and_its_copy_as_one(tmp_path: Path, how: str) -> None:
    """The listing and the browser show the migrated copy only; the table keeps both rows, and says which is which."""
    from pikit.widgets import SessionBrowser

    root = tmp_path / "sessions"
    copy = _legacy_and_copy(root, how)
    run = [sys.executable, "-m", "pikit", "sessions", str(root), "--index", str(tmp_path / "i.duckdb")]
    listed = json.loads(subprocess.run([*run, "--json"], capture_output=True, text=True, check=True).stdout)
    assert [s["path"] for s in listed["sessions"]] == [str(copy)]
    text = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    assert text.endswith("1 session(s) (and 1 version-1 file not listed: the same session as its migrated copy)\n")
    with Corpus.open(root, index=":memory:") as corpus:
        table = corpus.sessions
        legacy = table[table.version == 1]
        assert list(legacy.migrated_to) == [str(copy)] and table[table.version == 3].migrated_to.isna().all()
        assert [row[0] for row in SessionBrowser(corpus).table.rows] == [str(copy)]
    copy.unlink()
    with Corpus.open(root, index=str(tmp_path / "i.duckdb")) as corpus:
        assert corpus.sessions.migrated_to.isna().all()  # the copy gone, the old file stands alone again


def _forked_corpus(root: Path, n: int) -> list[Path]:
    """``n`` sessions, each forked into another folder (the fork copies its parent's entries); the parents."""
    parents = []
    for k in range(n):
        sid, folder = f"p{k:02d}", root / f"--home-dev-p{k:02d}--"
        entries = [user(f"u{k}", None, f"{DAY}08:{k:02d}:00.000Z", "go")]
        entries += [assistant(f"a{k}-{j}", f"u{k}", f"{DAY}08:{k:02d}:{j:02d}.000Z", 10 * j + k, 0.01 * j)
                    for j in range(1, 9)]
        parent = write(folder / f"2026-11-02T08-{k:02d}-00-000Z_{sid}.jsonl",
                       header(sid, timestamp=f"{DAY}08:00:00.000Z"), *entries)
        child = root / "--home-dev-a-fork--" / f"2026-11-02T09-{k:02d}-00-000Z_c{k:02d}.jsonl"
        write(child, header(f"c{k:02d}", cwd="/home/dev/a-fork", parent=str(parent),
                            timestamp=f"{DAY}09:{k:02d}:00.000Z"),
              *entries, assistant(f"c{k}", f"a{k}-8", f"{DAY}09:{k:02d}:30.000Z", 7, 0.5))
        parents.append(parent)
    return parents


def test_a_shrunk_file_gives_its_keys_back_to_their_copies(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    parents = _forked_corpus(root, 12)
    index = tmp_path / "kept.duckdb"
    before = _usage(root, index, "day")
    for parent in parents[::3]:  # cut to the header and two entries: the other copies now count in the fork
        lines = parent.read_bytes().splitlines(keepends=True)
        parent.write_bytes(b"".join(lines[:3]))
    with Corpus.open(root, index=index, workers=1) as corpus:  # read again: the shrunk files whole
        assert corpus.last_scan is not None and corpus.last_scan.read_whole == len(parents[::3])
        again = {row["key"]: row for row in corpus.usage_rows("day", timezone="UTC")}
    fresh = _usage(root, tmp_path / "fresh.duckdb", "day")
    assert again == fresh and _totals(again) == _totals(before)


def test_a_session_costs_the_same_everywhere(sample_corpus: Path, tmp_path: Path) -> None:
    """``pikit sessions``, ``pikit usage --by session``, ``Corpus.sessions`` and the session browser agree."""
    from pikit.widgets._views.browser import browser_rows

    index = str(tmp_path / "i.duckdb")

    def cli(*args: str) -> dict[str, Any]:
        done = subprocess.run([sys.executable, "-m", "pikit", *args, str(sample_corpus), "--index", index, "--json"],
                              capture_output=True, text=True, check=True)
        return json.loads(done.stdout)

    listed: dict[str, float] = {}
    for row in cli("sessions")["sessions"]:
        listed[row["sessionId"]] = listed.get(row["sessionId"], 0.0) + row["cost"]
    by_session = {row["key"]: row["cost"] for row in cli("usage", "--by", "session")["rows"]}
    with Corpus.open(sample_corpus, index=index, workers=1) as corpus:
        frame = corpus.sessions
        records = frame.to_dict("records")
    framed = frame.groupby("session_id")["cost"].sum().to_dict()
    assert set(listed) == set(by_session) == set(framed) and len(listed) > 10
    copied = 0
    for key, cost in by_session.items():
        assert listed[key] == pytest.approx(cost, rel=1e-12, abs=1e-12), key
        assert framed[key] == pytest.approx(cost, rel=1e-12, abs=1e-12), key
    shown = {row[0]: row for row in browser_rows(records)}
    for record in records:
        assert f"{record['cost']:,.2f}" in shown[record["path"]]
        copied += record["copied_cost"] > 0
    assert copied > 3  # the corpus holds forks, whose copies count in their originals


def _session_costs(corpus: Corpus) -> tuple[dict[str, float], dict[str, float]]:
    """Per session: the cost its session rows show, and the cost ``usage --by session`` reports."""
    listed = dict(corpus.rows("SELECT session_id, fsum(cost) FROM sessions GROUP BY session_id"))
    return listed, {row["key"]: row["cost"] for row in corpus.usage_rows("session")}


def test_session_rows_show_what_counts(tmp_path: Path) -> None:
    """A fork whose parent is not (or no longer) in the corpus shows its copies; a legacy file beside its copy
    shows nothing the copy counts."""
    root = tmp_path / "sessions"
    parents = _forked_corpus(root, 3)
    _legacy_and_copy(root, "pi")
    index = tmp_path / "i.duckdb"
    with Corpus.open(root, index=index, workers=1) as corpus:
        listed, reported = _session_costs(corpus)
        assert listed == pytest.approx(reported, rel=1e-12, abs=1e-12) and len(listed) == 7
        assert corpus.rows("SELECT count(*) FROM sessions WHERE session_id = 'old' AND cost = 0") == [(1,)]
    parents[0].unlink()
    with Corpus.open(root, index=index, workers=1) as corpus:
        listed, reported = _session_costs(corpus)
        assert listed == pytest.approx(reported, rel=1e-12, abs=1e-12) and "p00" not in listed
        assert listed["c00"] == pytest.approx(0.5 + 0.01 * sum(range(1, 9)))
    with Corpus.open(root, index=tmp_path / "fresh.duckdb", workers=1) as corpus:
        assert _session_costs(corpus)[0] == listed
