"""Which of many texts occur in one: a single pass of an Aho-Corasick automaton (pyahocorasick, in C).

Matching looks for each sentence and command of a replaced span, word for word, in the context
after it: a few hundred needles in a text of some hundred thousand characters, which one search
per needle would read a few hundred times.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

import ahocorasick

__all__ = ["occurring"]

#: How many occurrences the one pass reports before the needles it has not found are searched for one by one.
_MOST_OCCURRENCES = 100_000


def occurring(text: str, needles: AbstractSet[str], most: int = _MOST_OCCURRENCES) -> set[str]:
    """Which of ``needles`` (not empty) occur in ``text``, found in one pass over it by an Aho-Corasick automaton
    (pyahocorasick, in C): a context of some hundred thousand characters is read once for the few hundred sentences
    of a span, not once for each. The pass reports every occurrence, so a text that says some of them over and
    over is read up to ``most`` of them, and the needles not found by then are searched for one by one."""
    automaton = ahocorasick.Automaton()
    for needle in needles:
        automaton.add_word(needle, needle)
    found: set[str] = set()
    if len(automaton) == 0:
        return found
    automaton.make_automaton()
    for count, (_, needle) in enumerate(automaton.iter(text), 1):
        found.add(needle)
        if len(found) == len(needles):
            break
        if count == most:
            return found | {needle for needle in needles if needle not in found and needle in text}
    return found
