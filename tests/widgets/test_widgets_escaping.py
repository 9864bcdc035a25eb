"""Session text reaches the page as text: every HTML string is escaped, the tree uses textContent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ipywidgets as widgets

import pikit
from pikit.compaction import Settings
from pikit.widgets import BudgetBar, CompactionPanel, ContextDiff, ContextView, SessionExplorer, TreeView
from tests.widgets.synthetic import PAYLOAD


def html_values(widget: Any) -> Iterator[str]:
    """Every HTML string under ``widget`` (HTML widgets, recursively through boxes)."""
    if isinstance(widget, widgets.HTML | widgets.HTMLMath):
        yield widget.value
    for child in getattr(widget, "children", ()):
        yield from html_values(child)


def assert_escaped(widget: Any) -> int:
    checked = 0
    for value in html_values(widget):
        lowered = value.lower()
        assert "<script" not in lowered, value[:500]
        assert "<img" not in lowered, value[:500]
        assert 'onerror="' not in lowered, value[:500]
        checked += 1
    return checked


def test_every_widget_escapes_session_text(hostile: pikit.Session, tmp_path: Path) -> None:
    explorer = SessionExplorer(hostile)
    escaped_payload = "&lt;script&gt;window.__pikit_pwned=1&lt;/script&gt;"
    assert escaped_payload in explorer.context_view.body.value
    assert escaped_payload in explorer.children[1].value  # the session name in the header
    built: list[Any] = [explorer]
    for entry in hostile.entries:  # every leaf, so every entry type is rendered somewhere
        explorer.leaf_id = entry.id
        assert_escaped(explorer)
        built.append(ContextView(hostile, entry.id, page_size=500))
    compaction = next(e.id for e in hostile.entries if e.type == "compaction")
    built.append(ContextDiff(hostile, hostile.entries[4].id, hostile.leaf_id))
    built.append(ContextDiff(hostile, compaction=compaction))
    built.append(BudgetBar(hostile))
    panel = CompactionPanel(hostile, hostile.entries[9].id, settings=Settings({}), output_dir=tmp_path)
    panel.keep_recent_tokens = 1
    built.append(panel)
    assert sum(assert_escaped(w) for w in built) > 20
    # The payload is shown, as text.
    assert any(escaped_payload in v for w in built for v in html_values(w))


def test_tree_sends_text_and_renders_it_with_text_content(hostile: pikit.Session) -> None:
    tree = TreeView(hostile, mode="all")
    texts = [row[6] for row in tree.rows] + [row[5] for row in tree.rows]
    assert any(PAYLOAD[:20] in t for t in texts)  # raw text travels as JSON data ...
    esm = "\n".join(line for line in str(TreeView._esm).splitlines() if not line.lstrip().startswith("//"))
    assert "innerHTML" not in esm and "insertAdjacentHTML" not in esm  # ... and is set with textContent
    assert "textContent" in esm


def test_chart_and_previews_escape_ids(hostile_path: Path, tmp_path: Path) -> None:
    session = pikit.load(hostile_path)

    class Fake:
        name = "fake <img src=x onerror=1>"

        def summarize(self, request: Any) -> Any:
            from pikit.compaction import SummaryResult

            return SummaryResult("summary " + PAYLOAD, None)

    panel = CompactionPanel(session, session.entries[9].id, settings=Settings({}), output_dir=tmp_path,
                            summarizer=Fake())
    panel.keep_recent_tokens = 1
    panel.run()
    assert panel.status == "done", panel.message.value
    assert_escaped(panel)
