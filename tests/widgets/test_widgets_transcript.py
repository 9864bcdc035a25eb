"""The transcript in message bodies: sanitized Markdown, readable tool calls, the page's text budget."""

from __future__ import annotations

from html.parser import HTMLParser

from pikit._format.message import ToolCall
from pikit.widgets import context_rows
from pikit.widgets._calls import call_parts
from pikit.widgets._html import BODY_CHARS, message_body
from pikit.widgets._views import context_page, render_table
from tests.entries import asst, call, session_of, text, user

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}


def _elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    found: list[tuple[str, dict[str, str | None]]] = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, dict(attrs)))

    Parser().feed(html)
    return found


def _assistant(*blocks: dict[str, object]) -> str:
    return message_body({"role": "assistant", "content": list(blocks)})


def test_markdown_is_rendered_and_sanitized() -> None:
    html = _assistant(*text("# Plan\n\n- **one** `code`\n\n<script>alert(1)</script>\n\n"
                            "<img src=x onerror=alert(2)>\n\n"
                            "[bad](javascript:alert(3)) [data](data:text/html,x) [ok](https://example.org/a) "
                            "[mail](mailto:a@b.c) ![pic](https://example.org/p.png) \u202e"))
    tags = _elements(html)
    names = [t for t, _ in tags]
    assert "h1" in names and "strong" in names and "code" in names and "li" in names
    assert not {"script", "img", "iframe"} & set(names)
    assert all(not k.startswith("on") for _, attrs in tags for k in attrs)
    hrefs = [attrs["href"] for t, attrs in tags if t == "a"]
    assert hrefs == ["https://example.org/a", "mailto:a@b.c"]
    assert "&lt;script&gt;" in html and "[image: pic https://example.org/p.png]" in html
    assert "\u202e" not in html and "&lt;U+202E&gt;" in html


def test_tool_calls_are_readable() -> None:
    bash = call_parts(ToolCall("bash", {"command": "ls -la\necho \"hi\"", "timeout": 5}, "c1"))
    assert [(p.language, p.text) for p in bash] == [("bash", 'ls -la\necho "hi"'),
                                                    ("json", '{\n  "timeout": 5\n}')]
    edit = call_parts(ToolCall("edit", {"path": "a.py", "oldText": "x = 1\ny = 2", "newText": "x = 1\ny = 3"}, "c2"))
    assert edit[0].language == "diff" and edit[0].label == "a.py"
    assert edit[0].text.splitlines()[-2:] == ["-y = 2", "+y = 3"]
    write = call_parts(ToolCall("write", {"path": "src/x.ts", "content": "export {}\n"}, "c3"))
    assert [(p.label, p.language, p.text) for p in write] == [("src/x.ts", "typescript", "export {}\n")]
    other = call_parts(ToolCall("ask", {"question": "line 1\nline 2", "n": 1}, "c4"))
    assert other[0].text == '{\n  "question": "(below)",\n  "n": 1\n}' and other[1].text == "line 1\nline 2"
    html = _assistant(call("c1", "bash", command='grep -n "x" a.py'))
    assert 'grep -n &quot;x&quot; a.py' in html and "\\&quot;" not in html  # shown as a command, not JSON
    diff = _assistant(call("c2", "edit", path="a.py", oldText="a", newText="b"))
    assert '<span class="pikit-minus">-a</span>' in diff and '<span class="pikit-plus">+b</span>' in diff


def test_the_page_text_budget_keeps_the_newest_bodies() -> None:
    big = "z" * (BODY_CHARS * 2)
    entries = []
    parent = None
    for i in range(60):
        entries.append(user(f"u{i}", parent, 2 * i, f"question {i} " + big))
        entries.append(asst(f"a{i}", f"u{i}", 2 * i + 1, text(f"answer {i}")))
        parent = f"a{i}"
    session = session_of(HEADER, entries)
    projection = session.context()
    rows = context_rows(projection)
    page = context_page(projection, rows, 0, len(rows), labels={})
    whole = render_table(page)
    bounded = render_table(page, anchors=True, text_budget=10 * BODY_CHARS)
    assert len(whole) > 60 * BODY_CHARS and len(bounded) < 12 * BODY_CHARS
    assert "question 59" in bounded and "answer 59" in bounded and "question 0 " not in bounded
    assert "older messages, ≈" in bounded and "are not inlined" in bounded
    assert bounded.count('id="entry-a59"') == 1 and 'href="#entry-a59"' in bounded
    assert 'id="entry-' not in whole
    assert f"question 0 {'z' * (BODY_CHARS - 11)}\n… (20,011 more characters not shown)" in whole
