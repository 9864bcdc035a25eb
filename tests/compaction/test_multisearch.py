"""Which of many texts occur in one, in one pass: exactly what ``in`` finds, however often a text says them."""

from __future__ import annotations

from hypothesis import given, strategies as st

from pikit.compaction._multisearch import occurring

_PIECES = ["a", "b", "ab", " ", "\u00e9", "\U0001f600", "\ud800", "\n"]


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join),
       st.sets(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6).map("".join), max_size=10))
def test_texts_looked_for_in_one_pass_are_those_in_finds(text: str, needles: set[str]) -> None:
    """The sentences and commands of a span are looked for in the context all at once; each is found where ``in``
    finds it (overlapping, nested, astral characters and lone surrogates)."""
    expected = {needle for needle in needles if needle in text}
    assert occurring(text, needles) == expected
    assert occurring(text, needles, most=2) == expected  # (the rest searched for one by one)


def test_a_text_that_says_a_sentence_over_and_over_is_read_once_up_to_a_bound() -> None:
    """Every occurrence is reported by the one pass: past the bound, what is not found yet is searched for."""
    text = "run the tests again. " * 60_000 + "the end"
    needles = {"run the tests again.", "tests again", "the end", "not there"}
    assert occurring(text, needles) == {"run the tests again.", "tests again", "the end"}
