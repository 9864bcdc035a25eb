"""The session browser without a browser: rows, sorting keys, a selection that opens the explorer."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pandas as pd
import pytest

from pikit.corpus import Corpus
from pikit.widgets import SessionBrowser, SessionExplorer
from pikit.widgets._views.browser import BROWSER_COLUMNS, browser_rows
from tests import procs
from tests.timing import grows_at_most

SAMPLE_CORPUS = Path(__file__).resolve().parents[2] / "data" / "sample_corpus" / "sessions"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    with Corpus.open(SAMPLE_CORPUS, index=":memory:", workers=1) as opened:
        yield opened


def test_rows_hold_keys_and_texts(corpus: Corpus) -> None:
    rows = browser_rows(corpus.sessions.to_dict("records"))
    n = len(BROWSER_COLUMNS)
    assert len(rows) == 37 and all(len(r) == 1 + 2 * n for r in rows)
    by_path = {r[0]: r for r in rows}
    first = corpus.sessions.iloc[0]
    row = by_path[first.path]
    assert row[1 + n + 2] == first.title
    cost = [c.field for c in BROWSER_COLUMNS].index("cost")
    assert row[1 + cost] == pytest.approx(first.cost) and row[1 + n + cost] == f"{first.cost:,.2f}"


def test_a_selection_opens_the_session_below(corpus: Corpus) -> None:
    browser = SessionBrowser(corpus)
    assert browser.explorer is None and browser.detail.children == ()
    path = corpus.sessions.path.iloc[3]
    browser.table.selected_path = path  # what a click in the page does
    assert browser.selected_path == path
    assert isinstance(browser.explorer, SessionExplorer)
    assert str(browser.explorer.session.path) == path
    assert browser.detail.children == (browser.explorer,)
    row = corpus.sessions.iloc[3]
    assert (browser.table.selected_id, browser.table.resume) == (row.session_id, row.resume)
    assert browser.table.resume == f"pi --session {path}"  # (a plain path needs no quotes)
    browser.selected_path = ""
    assert browser.explorer is None
    assert browser.table.resume == browser.table.selected_id == ""


def test_the_resume_command_without_the_column_is_quoted(tmp_path: Path) -> None:
    odd = str(tmp_path / "it's here" / "s.jsonl")
    browser = SessionBrowser(pd.DataFrame([{"path": odd, "session_id": "s1", "started": None}]))
    browser.table.selected_path = odd
    assert browser.table.resume == "pi --session " + shlex.quote(odd)
    assert shlex.split(browser.table.resume) == ["pi", "--session", odd]


def test_a_lone_surrogate_in_a_path_gives_a_resume_command() -> None:
    odd = "/tmp/a\ud800b\udcffc.jsonl"  # a surrogate no file name holds, and one a byte that is not UTF-8 gives
    browser = SessionBrowser(pd.DataFrame([{"path": odd, "session_id": "s1", "started": None}], dtype=object))
    browser.table.selected_path = odd
    assert browser.table.resume == "pi --session $'/tmp/a\\xef\\xbf\\xbdb\\xffc.jsonl'"


def test_a_session_that_cannot_be_opened_shows_an_error(corpus: Corpus, tmp_path: Path) -> None:
    browser = SessionBrowser(corpus.sessions)
    browser.selected_path = str(tmp_path / "gone.jsonl")
    assert browser.explorer is None and "cannot open" in browser.detail.children[0].value


def _records(n: int) -> pd.DataFrame:
    return pd.DataFrame([
        {"path": f"/s/{i}.jsonl", "started": pd.Timestamp("2026-11-02", tz="UTC") + pd.Timedelta(minutes=i),
         "project": f"--p{i % 7}--", "name": f"<b>session {i}</b>", "first_user_message": "x",
         "entries": i, "leaves": 1, "compactions": 0, "cost": i / 100, "models": "anthropic/claude"}
        for i in range(n)])


@pytest.mark.slow
def test_thousands_of_rows_are_cheap() -> None:
    many, few = _records(5000), _records(500)
    browser = SessionBrowser(many)
    assert len(browser.table.rows) == 5000
    # ten times the rows cost at most about ten times the CPU time
    assert grows_at_most(lambda: SessionBrowser(few), lambda: SessionBrowser(many), 30)
    assert browser.table.rows[0][1 + len(BROWSER_COLUMNS) + 2] == "<b>session 0</b>"  # plain text, set as text


def _kept(browser: SessionBrowser) -> set[str]:
    """The paths of the rows the table shows for its search (what the page draws)."""
    kept = json.loads(browser.table.matches)
    assert kept["search"] == browser.table.search
    rows = browser.table.rows
    return {rows[i][0] for i in kept["rows"]} if kept["rows"] is not None else {r[0] for r in rows}


@pytest.fixture(scope="module")
def cli_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli-index") / "corpus.duckdb"


# "makefile" is in the messages of most sessions but in the shown columns of a few; "anthropic" is in the
# models column of many and in no message.
@pytest.mark.parametrize("words", ["makefile", "MAKEFILE parser", "anthropic", "no-such-word-anywhere", ""])
def test_the_search_box_finds_what_pikit_sessions_search_finds(corpus: Corpus, cli_index: Path, words: str) -> None:
    proc = procs.pikit("sessions", SAMPLE_CORPUS, "--index", cli_index, "--json",
                       *(["--search", words] if words else []), timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    listed = {row["path"] for row in json.loads(proc.stdout)["sessions"]}
    browser = SessionBrowser(corpus)
    assert browser.table.searchable
    browser.table.search = words  # what typing in the page does
    assert _kept(browser) == listed == (set(corpus.search_sessions(words)) if words else set(corpus.sessions.path))
    assert browser.table.shown_count == len(listed)


def _with_in_messages(word: str) -> set[str]:
    """The session files whose user or assistant text holds ``word`` (in any case), read from the files."""
    found = set()
    for path in SAMPLE_CORPUS.rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                message = json.loads(line).get("message") or {}
            except ValueError:
                continue
            if message.get("role") in ("user", "assistant") and any(
                    word in block.get("text", "").lower() for block in message["content"] if block["type"] == "text"):
                found.add(str(path))
                break
    return found


def test_the_search_reads_message_text_not_the_columns(corpus: Corpus) -> None:
    browser = SessionBrowser(corpus)
    n = len(BROWSER_COLUMNS)
    in_columns = {r[0] for r in browser.table.rows if "makefile" in " ".join(r[1 + n:]).lower()}
    browser.table.search = "makefile"
    in_messages = _with_in_messages("makefile")
    assert 2 <= len(in_columns) < len(in_messages) < 37
    assert _kept(browser) == in_messages and in_columns < _kept(browser)
    browser.table.search = "anthropic"  # a models column word, in no message
    assert _kept(browser) == set() and browser.table.shown_count == 0
    browser.table.search = "  "
    assert len(_kept(browser)) == 37


def test_a_sessions_frame_alone_has_no_text_to_search(corpus: Corpus) -> None:
    browser = SessionBrowser(corpus.sessions)
    assert not browser.table.searchable
    browser.table.search = "makefile"
    assert len(_kept(browser)) == 37 and browser.table.shown_count == 37


def test_a_failing_search_says_so_and_shows_no_rows(tmp_path: Path) -> None:
    opened = Corpus.open(SAMPLE_CORPUS, index=tmp_path / "index.duckdb", workers=1)
    browser = SessionBrowser(opened)
    opened.close()
    browser.table.search = "makefile"
    assert _kept(browser) == set() and browser.table.shown_count == 0
    assert browser.errors.layout.display is None
    assert "cannot search the messages for “makefile”" in browser.errors.outputs[0]["data"]["text/html"]


def test_a_lone_surrogate_in_the_words_finds_what_the_command_line_finds(corpus: Corpus, cli_index: Path) -> None:
    words = "makefile \udced\udca0\udc80"  # what Python makes of the bytes ED A0 80 in an argument
    proc = procs.pikit("sessions", SAMPLE_CORPUS, "--index", cli_index, "--json", "--search", words, timeout=300)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr.decode()
    assert json.loads(proc.stdout)["sessions"] == []
    browser = SessionBrowser(corpus)
    browser.table.search = words
    assert _kept(browser) == set() and browser.errors.layout.display == "none"
    browser.table.search = "makefile \ud800"  # as a page may send it
    assert _kept(browser) == set() and browser.table.matches.decode("utf-8")  # valid UTF-8 for the page


def test_the_search_lists_entries_and_a_hit_opens_its_session_there(corpus: Corpus) -> None:
    browser = SessionBrowser(corpus)
    browser.table.search = "migration"
    hits = corpus.search("migration", limit=20)
    assert browser.hits == hits and len(browser.hits_box.children) == len(hits) > 0
    assert all(h.snippet in b.tooltip for h, b in zip(hits, browser.hits_box.children, strict=True))
    off = next((h for h in corpus.search("migration", limit=400) if not h.on_active_branch), hits[-1])
    browser.open_entry(off.path, off.entry_id)  # what a click on its button does
    assert browser.selected_path == off.path and browser.explorer is not None
    assert browser.explorer.session.path == off.path and browser.explorer.selected_id == off.entry_id
    browser.hits_box.children[0].click()
    assert browser.selected_path == hits[0].path and browser.explorer.selected_id == hits[0].entry_id
    browser.table.search = ""
    assert browser.hits == [] and browser.hits_box.children == ()
