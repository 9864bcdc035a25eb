"""The session browser without a browser: rows, sorting keys, a selection that opens the explorer."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest

from pikit.corpus import Corpus
from pikit.widgets import SessionBrowser, SessionExplorer
from pikit.widgets.views.browser import BROWSER_COLUMNS, browser_rows

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
    assert row[1 + n + 2] == (first["name"] or first.first_user_message)
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
    browser.selected_path = ""
    assert browser.explorer is None


def test_a_session_that_cannot_be_opened_shows_an_error(corpus: Corpus, tmp_path: Path) -> None:
    browser = SessionBrowser(corpus.sessions)
    browser.selected_path = str(tmp_path / "gone.jsonl")
    assert browser.explorer is None and "cannot open" in browser.detail.children[0].value


def test_thousands_of_rows_are_cheap() -> None:
    records = [{"path": f"/s/{i}.jsonl", "started": pd.Timestamp("2026-11-02", tz="UTC") + pd.Timedelta(minutes=i),
                "project": f"--p{i % 7}--", "name": f"<b>session {i}</b>", "first_user_message": "x",
                "entries": i, "leaves": 1, "compactions": 0, "cost": i / 100, "models": "anthropic/claude"}
               for i in range(5000)]
    start = time.perf_counter()
    browser = SessionBrowser(pd.DataFrame(records))
    assert time.perf_counter() - start < 2.0
    assert len(browser.table.rows) == 5000
    assert browser.table.rows[0][1 + len(BROWSER_COLUMNS) + 2] == "<b>session 0</b>"  # plain text, set as text
