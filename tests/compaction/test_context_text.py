"""The text of a context as the evaluation reads it: its normalization, and its lines, where the evaluation looks for
a file said to have changed."""

from __future__ import annotations

from hypothesis import example, given, strategies as st

from pikit.compaction._context_text import ContextLines, _casefold, _plain, _plain_part

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


_PIECES = ["\n\n", "\n", " ", "a", "B", "\u00c9", "e\u0301", "\u0301", "\ufb01", "\u00df", "\u03a3", "\u201c", "`",
           "\\", "\u00a0", "\u2028", "\x1c", "\uff21", "x\u200b", "\U0001f600", "\ud800"]


@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
@example("caf\u00e9\n\n\u0301A \u201cB\u201d\n\n\n\n  \n\nC\\d")  # (a combining mark after the blank line)
def test_a_text_normalized_paragraph_by_paragraph_is_normalized_as_a_whole(text: str) -> None:
    """Splitting a text outside ASCII at its blank lines changes nothing: nothing composes, folds or joins across
    one, and the whitespace it leaves is one space either way (the lines are case folded the same way too)."""
    assert _plain(text) == _plain_part(text)
    assert _casefold(text) == text.casefold()
