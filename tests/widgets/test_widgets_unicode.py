"""Lone surrogates, NUL, terminal escapes and bidi overrides: every widget sends valid, inert state.

The hostile session (:func:`tests.widgets.synthetic.hostile_session_lines`) carries
:data:`~tests.widgets.synthetic.UNSAFE` in its text, ids, labels, name, cwd, tool names, file
paths and model names. Each widget's state is packed as the kernel packs it
(:mod:`tests.widgets.wire`); what the page shows must be inert; the ids a click sends back stay
exact and find their entry.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pandas as pd
import pytest

import pikit
from pikit import Follower
from pikit.compaction import Settings
from pikit.corpus import Corpus
from pikit.widgets import (
    BudgetBar,
    CompactionPanel,
    CompactionStepper,
    ContextDiff,
    ContextView,
    SessionBrowser,
    SessionExplorer,
    SessionTable,
    TreeView,
)
from pikit.widgets._views.browser import BROWSER_COLUMNS
from tests.widgets import wire
from tests.widgets.synthetic import TWINS, UNSAFE, hostile_session_lines, write_session

SHOWN = ("\ufffd", "^@", "^[]52;c;cm0gLXJmIH4K^G^[[2J", "M-^[31m", "<U+202E>evil<U+202C>", "<U+2066>iso<U+2069>")


def _exact_rows(widget: widgets.Widget, where: str) -> bool:
    """The id of a tree row and the path of a browser row travel exactly (a click sends them back)."""
    return isinstance(widget, TreeView | SessionTable) and where.startswith("rows_data[") and where.endswith("[0]")


def check(before: list[str]) -> int:
    return wire.check_sent(wire.new_widgets(before), exact=_exact_rows)


@pytest.fixture
def before() -> list[str]:
    """The widgets that exist before the test (only the test's own are checked)."""
    return list(wire._instances)


@pytest.mark.slow
def test_every_widget_sends_valid_inert_state_at_every_leaf(hostile: pikit.Session, before: list[str],
                                                            tmp_path: Path) -> None:
    explorer = SessionExplorer(hostile, mode="all")
    explorer.open_stepper()
    for entry in hostile.entries:
        explorer.leaf_id = entry.id
        check(before)
        explorer.select(entry.id)  # a user message puts its text in the editor
        check(before)
    compaction = next(e.id for e in hostile.entries if e.type == "compaction")
    ContextView(hostile, page_size=500)
    ContextDiff(hostile, hostile.entries[4].id, TWINS[0])
    ContextDiff(hostile, compaction=compaction)
    BudgetBar(hostile, TWINS[0])
    for entry in hostile.entries:
        CompactionStepper(hostile, entry.id, keep_recent_tokens=1)
    for leaf in (hostile.entries[9].id, TWINS[0]):  # the main branch, and one with an unsafe model name
        panel = CompactionPanel(hostile, leaf, settings=Settings({}), output_dir=tmp_path)
        panel.keep_recent_tokens = 1
        panel.run()
        assert panel.status == "done", panel.message.value
    assert check(before) > 10_000


def test_what_the_page_shows_is_visible_and_the_kernel_keeps_it_exact(hostile: pikit.Session) -> None:
    explorer = SessionExplorer(hostile, mode="all")
    user = next(e for e in hostile.entries if e.role == "user")
    explorer.select(user.id)
    assert explorer.tree.editor_text == user.data["message"]["content"]  # exact, in Python
    assert UNSAFE in explorer.tree.editor_text
    for shown in SHOWN:
        assert shown in explorer.editor.value  # shown in the page, not obeyed
    texts = " ".join(row[6] for row in explorer.tree.rows)
    labels = " ".join(row[5] for row in explorer.tree.rows)
    html = explorer.context_view.body.value + explorer._header.value
    for shown in SHOWN:
        assert shown in texts and shown in labels
        assert shown.replace("<", "&lt;").replace(">", "&gt;") in html


def test_a_click_sends_back_the_exact_id_of_its_row(hostile: pikit.Session) -> None:
    tree = SessionExplorer(hostile, mode="all").tree
    rows = pikit.jsjson.loads(tree.rows_data)  # as the page's JSON.parse reads the buffer
    assert rows == tree.rows
    assert {*TWINS, "alt " + UNSAFE, "compaction " + UNSAFE} <= {cells[0] for cells in rows}
    for row, cells in enumerate(rows):
        tree._on_front_end_msg(tree, wire.from_browser({"event": "select", "id": cells[0], "row": row}), [])
        assert tree.selected_id == tree.row_ids[row] and tree.selected_row == row
    # A row number that moved meanwhile: the id decides, and the twins stay apart.
    first, second = (tree.row_ids.index(twin) for twin in TWINS)
    tree._on_front_end_msg(tree, wire.from_browser({"event": "select", "id": TWINS[1], "row": first}), [])
    assert tree.selected_id == TWINS[1] and tree.selected_row == second and tree.leaf_id == TWINS[1]


def test_following_a_hostile_file_sends_valid_state(hostile_path: Path, tmp_path: Path,
                                                    before: list[str]) -> None:
    lines = hostile_path.read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[:8]))
    follower = Follower(path, background=False)
    explorer = SessionExplorer(follower)
    follower.stop()  # driven by hand, one change at a time
    with open(path, "ab") as handle:
        handle.write(b"".join(lines[8:]))  # the compaction with an unsafe id arrives
    assert follower.check() is not None
    assert explorer.leaf_id == follower.session.entries[-1].id
    assert "^[]52;c;" in explorer.live_bar.callout.value
    check(before)


def _table(path: str) -> pd.DataFrame:
    bad = "x" + UNSAFE
    record = {"path": path, "started": pd.Timestamp("2026-11-02", tz="UTC"), "project": "--p" + bad, "name": bad,
              "first_user_message": bad, "entries": 3, "leaves": 1, "compactions": 0, "cost": 0.5, "models": bad}
    return pd.DataFrame([record], dtype=object)  # (pandas' own string columns cannot even hold a surrogate)


def test_the_session_browser_sends_valid_rows_and_opens_an_undecodable_file_name(
        hostile_path: Path, tmp_path: Path, before: list[str]) -> None:
    target = os.fsdecode(os.fsencode(tmp_path) + b"/undecodable \xff name.jsonl")  # a lone surrogate in Python
    Path(target).write_bytes(hostile_path.read_bytes())
    browser = SessionBrowser(_table(target))
    check(before)
    sent = browser.table.rows[0][0]
    assert sent == target.replace("\udcff", "\\udcff")  # the escape, as JSON writes it
    assert browser.table.rows[0][1 + len(BROWSER_COLUMNS) + 2].startswith("xlone \ufffd and \ufffd NUL ^@")  # inert
    browser.table.set_state(wire.from_browser({"selected_path": sent}))  # what a click in the page sends
    assert isinstance(browser.explorer, SessionExplorer) and browser.explorer.session.path == target
    check(before)


def test_a_session_browser_click_that_fails_shows_the_error(tmp_path: Path) -> None:
    browser = SessionBrowser(_table(str(tmp_path / "nul \x00 in the name.jsonl")))
    browser.table.set_state(wire.from_browser({"selected_path": browser.table.rows[0][0]}))
    assert browser.explorer is None
    shown: Any = browser.detail.children[0]
    assert "cannot open" in shown.value and "ValueError" in shown.value and "^@" in shown.value


def test_the_session_browser_of_a_corpus_with_a_hostile_session(hostile_path: Path, tmp_path: Path,
                                                                before: list[str]) -> None:
    folder = tmp_path / "sessions" / "--tmp--"
    write_session(folder / "hostile.jsonl", hostile_session_lines())
    with Corpus.open(tmp_path / "sessions", index=":memory:", workers=1) as corpus:
        browser = SessionBrowser(corpus)
        browser.table.set_state(wire.from_browser({"selected_path": browser.table.rows[0][0]}))
        assert isinstance(browser.explorer, SessionExplorer)
        check(before)


def test_html_cards_of_the_core_objects_are_inert(hostile: pikit.Session) -> None:
    from pikit.compaction import CompactionSettings, simulate
    from pikit.llm import OfflineSummarizer

    ctx = hostile.context(TWINS[0])
    prep = pikit.compaction.prepare_compaction(hostile.branch(TWINS[0]), 1, ctx)
    result = simulate(hostile, OfflineSummarizer(), context_window=2_000, settings=CompactionSettings(True, 500, 1))
    for obj in (hostile, ctx, *ctx.entries, prep, result):
        card = obj._repr_html_()  # type: ignore[attr-defined]
        assert not wire.NOT_INERT.search(card), card
        card.encode("utf-8")
        assert "\x1b" not in repr(obj)
    assert "^[]52;c;" in hostile._repr_html_()  # type: ignore[attr-defined]


def test_a_session_file_name_that_is_not_utf8_is_shown_inertly_and_written_beside(
        hostile_path: Path, tmp_path: Path, before: list[str]) -> None:
    target = os.fsdecode(os.fsencode(tmp_path) + b"/undecodable \xff \x1b[2J.jsonl")
    Path(target).write_bytes(hostile_path.read_bytes())
    session = pikit.load(target)
    SessionExplorer(session)
    panel = CompactionPanel(session, session.entries[9].id, settings=Settings({}))
    check(before)
    assert "undecodable \ufffd ^[[2J.compacted-" in panel.output.value  # the box shows it inertly ...
    panel.keep_recent_tokens = 1
    panel.run()
    assert panel.status == "done", panel.message.value
    written = panel.runs[-1].path
    assert written.startswith(target[:-len(".jsonl")] + ".compacted-")  # ... the run writes the exact name
    assert Path(written).is_file()
    check(before)
