"""The lines of a context's text, where the evaluation looks for a file said to have changed."""

from __future__ import annotations

from hypothesis import given, strategies as st

from pikit.compaction._context_text import ContextLines

TEXT = """## Files updated
- src/a.py

Notes on the review:
src/a.py reads well
<read-files>
src/b.py
</read-files>
<modified-files>
src/c.py
</modified-files>
# Ｃｈａｎｇｅｄ
src/d.py"""


def test_the_lines_that_hold_a_word_each_once_in_order() -> None:
    lines = ContextLines(TEXT)
    assert list(lines.holding("src/")) == [1, 4, 6, 9, 12]
    assert list(lines.holding("a.py")) == [1, 4]
    assert list(lines.holding("SRC/")) == []  # (the word is given case folded)
    assert lines[0] == "## files updated"


def test_the_file_list_a_line_is_in() -> None:
    lines = ContextLines(TEXT)
    assert [lines.block(n) for n in range(4, 12)] == [None, "read-files", "read-files", None, "modified-files",
                                                       "modified-files", None, None]


def test_a_heading_above_says_whether_something_changed() -> None:
    lines = ContextLines(TEXT)
    assert lines.under_change(1)  # under "## Files updated"
    assert not lines.under_change(4)  # under "Notes on the review:"
    assert lines.under_change(12)  # a heading in full-width letters, normalized before it is read


def test_a_heading_counts_for_forty_lines() -> None:
    text = "\n".join(["Changed files:", *["x"] * 39, "src/a.py", "src/b.py"])
    lines = ContextLines(text)
    assert lines.under_change(40) and not lines.under_change(41)


@given(st.lists(st.text(alphabet="ab\u00e9 .:#*", max_size=6), max_size=8), st.sampled_from(["a", "b", "é", " "]))
def test_holding_finds_the_lines_a_search_line_by_line_finds(parts: list[str], word: str) -> None:
    text = "\n".join(parts)
    assert list(ContextLines(text).holding(word)) == [n for n, line in enumerate(text.casefold().split("\n"))
                                                      if word in line]
