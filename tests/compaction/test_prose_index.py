"""The sentences of what a context says, indexed by content words: the candidates for a reworded fact are exactly
the sentences a count of each sentence's words finds."""

from __future__ import annotations

from collections import Counter

from hypothesis import example, given, strategies as st

from pikit.compaction._prose_index import SHARE, ProseIndex, _words

_WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo"]
_STEMS = sorted({stem for word in _WORDS for stem in _words(word)})
_SENTENCE = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=8).map(" ".join)
_LINE = st.one_of(_SENTENCE, st.lists(_SENTENCE, min_size=2, max_size=3).map(". ".join),
                  _SENTENCE.map(lambda s: f"## {s}"), _SENTENCE.map(lambda s: f"{s}:"), st.just(""))


def _counted(index: ProseIndex, words: set[str], required: set[str]) -> list[tuple[int, int]]:
    """The candidates as each sentence's words counted one by one."""
    held: list[set[str]] = [set() for _ in index.sentences]
    for word in {*words, *required}:
        for number in index._numbers.get(word, ()):
            held[number].add(word)
    least = len(words) - int((1 - SHARE) * len(words) + 1e-9)
    counts = Counter({n: len(words & held[n]) for n in range(len(held))})
    return sorted(((1000 * c // len(words), n) for n, c in counts.items()
                   if c and c >= least and required <= held[n]), reverse=True)


@given(st.lists(_LINE, max_size=30).map("\n".join), st.sets(st.sampled_from(_STEMS), min_size=1, max_size=9),
       st.sets(st.sampled_from(_STEMS), max_size=3), st.booleans())
@example("alpha bravo charlie delta echo\nalpha bravo charlie delta", {"alpha", "bravo", "charlie", "delta", "echo"},
         set(), False)  # (one of five words missing: still a candidate)
@example("## alpha bravo\ncharlie delta", {"alpha", "bravo", "charlie", "delta"}, {"alpha"}, False)  # (a heading's)
def test_candidates_are_the_sentences_holding_enough_words(prose: str, words: set[str], required: set[str],
                                                           narrowed: bool) -> None:
    """Each sentence holding every required word and at least :data:`SHARE` of the words (its own or its
    headings') is a candidate, with the share it holds, best first; no other sentence is."""
    index = ProseIndex(prose, set(_STEMS[::2]) if narrowed else None)
    assert index.candidates(words, required) == _counted(index, words, required)


def test_a_sentence_is_split_once_into_its_words_and_numbers() -> None:
    index = ProseIndex("Ran 42 tests. All passed")
    assert index.sentences == ["Ran 42 tests.", "All passed"]
    assert index.tokens(0) == (("ran", "42", "tests."), frozenset({"42"}))
    assert index.tokens(0) is index.tokens(0)
