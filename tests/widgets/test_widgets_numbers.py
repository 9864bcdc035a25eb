"""One number format everywhere: every count the widgets, the exported page and the command line's
plain output show has the thousands separator (131,027, never 131027).

The session here holds no digit in its text, ids or model names, so every run of four digits or
more in what is drawn is a number pikit wrote: it must be grouped. Its figures are large on
purpose: over a thousand messages, tokensBefore 131,027, usage totals over 100,000.
"""

from __future__ import annotations

import html
import json
import re
import string
from pathlib import Path
from typing import Any

import pytest

import pikit
import pikit.widgets as pw
from pikit.export import PageSettings, render_page
from pikit.export._tree import render_tree
from tests import procs
from tests.entries import asst, compaction, text, ts, usage, user

MESSAGES = 1_060
WORDS = "the parser keeps every branch of the tree and the summary of what was cut "


def _id(n: int) -> str:
    """An entry id of letters only ("baaaaa", ...): no digit can come from an id."""
    letters = string.ascii_lowercase
    out = ""
    for _ in range(6):
        n, rest = divmod(n, 26)
        out = letters[rest] + out
    return "e" + out


def _lines() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    parent = None
    for i in range(MESSAGES):
        entry_id = _id(i)
        if i % 2 == 0:
            entries.append(user(entry_id, parent, i, WORDS * (60 if i == 40 else 2)))
        else:
            entries.append(asst(entry_id, parent, i, text(WORDS * 3), usage=usage(120_000 + i, 2_345),
                                model="claude"))
        parent = entry_id
        if i == 30:  # a compaction early on: the context after it still holds over a thousand messages
            cut = _id(10_000)
            entries.append(compaction(cut, parent, i, _id(20), summary=WORDS * 50, tokens_before=131_027))
            parent = cut
    return entries


@pytest.fixture(scope="module")
def big_numbers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    header = {"type": "session", "version": 3, "id": "numbers", "timestamp": ts(0), "cwd": "/home/dev/parser"}
    path = tmp_path_factory.mktemp("numbers") / "numbers.jsonl"
    lines = [header, *_lines()]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


_UNGROUPED = re.compile(r"(?<![\w.,:/+-])\d{4,}(?![\w:/-])")  # 12345, not 12,345, 2026-01-01 or 00:17:30


def _shown(markup: str) -> str:
    """The text a reader sees in ``markup``: no tags, attributes, styles or scripts, and no ids (an
    entry made now, such as the stepper's new compaction, has a random id that may be all digits)."""
    markup = re.sub(r"<(style|script)\b.*?</\1>", " ", markup, flags=re.S)
    markup = re.sub(r'<(span|td)\b[^>]*class="[^"]*\bpikit-id\b[^"]*"[^>]*>[^<]*</\1>', " ", markup)
    return html.unescape(re.sub(r"<[^>]*>", " ", markup))


def _ungrouped(what: str, shown: str) -> list[str]:
    return [f"{what}: …{shown[max(0, m.start() - 40):m.end() + 20]!r}…" for m in _UNGROUPED.finditer(shown)]


def _widget_html(widget: Any) -> str:
    """Every HTML string a widget and its children hold."""
    parts, todo = [], [widget]
    while todo:
        item = todo.pop()
        if isinstance(getattr(item, "value", None), str):
            parts.append(item.value)
        todo.extend(getattr(item, "children", ()))
    return "\n".join(parts)


def test_the_session_has_no_digits_of_its_own(big_numbers: Path) -> None:
    session = pikit.load(big_numbers)
    assert len(session.context().messages) > 1_000 and session.context().compaction is not None
    for entry in session.entries:
        data = entry.data
        readable = [data.get("id"), data.get("parentId"), data.get("summary"), data.get("firstKeptEntryId"),
                    json.dumps((data.get("message") or {}).get("content"))]
        assert not any(ch.isdigit() for value in readable if value for ch in str(value))


def test_widgets_group_every_number(big_numbers: Path) -> None:
    session = pikit.load(big_numbers)
    leaf = session.leaf_id
    found: list[str] = []
    widgets = {
        "context view": pw.ContextView(session, page_size=2_000, encoding=None),
        "budget bar": pw.BudgetBar(session),
        "explorer": pw.SessionExplorer(session),
        "stepper": pw.CompactionStepper(session, keep_recent_tokens=20_000),
        "panel": pw.CompactionPanel(session),
        "diff": pw.ContextDiff(session, _id(10_000), leaf),
    }
    stepper = widgets["stepper"]
    for step in range(1, 8):  # every step of the walk
        stepper.step = step
        found += _ungrouped(f"stepper step {step}", _shown(_widget_html(stepper)))
    for name, widget in widgets.items():
        found += _ungrouped(name, _shown(_widget_html(widget)))
    tree = pw.TreeView(session)
    for row in json.loads(tree.rows_data):
        found += _ungrouped("tree row", f"{row[4]} {row[5]} {row[6]}")
    assert any("131,027 tokens before" in row[6] for row in json.loads(tree.rows_data))
    assert not found, "\n".join(found)


def test_the_exported_page_groups_every_number(big_numbers: Path) -> None:
    session = pikit.load(big_numbers)
    page = render_page(session, PageSettings("anthropic/claude", 200_000, 16_384, 20_000))
    tree = render_tree(session, pikit._tree.sessiontree.CURRENT, mode="all")
    assert "131,027 tokens before" in _shown(tree)
    found = _ungrouped("page", _shown(page)) + _ungrouped("tree", _shown(tree))
    assert not found, "\n".join(found)


@pytest.mark.parametrize("argv", [
    ["info"], ["tree", "--filter", "all"], ["context"], ["compact", "--dry-run", "--keep-recent-tokens", "2000,20000"],
    ["simulate", "--context-window", "200000,400000", "--reserve-tokens", "16384"],
    ["simulate", "--context-window", "200000", "--keep-recent-tokens", "2000"],
])
def test_the_command_line_groups_every_number(big_numbers: Path, argv: list[str]) -> None:
    proc = procs.pikit(*argv, big_numbers, timeout=300, extra_env={"COLUMNS": "200"})
    out = proc.stdout.decode("utf-8")
    assert proc.returncode == 0, proc.stderr.decode()
    found = _ungrouped(" ".join(argv), out.replace(str(big_numbers), "FILE"))
    assert not found, "\n".join(found)
    if argv[0] == "tree":
        assert "131,027 tokens before" in out
