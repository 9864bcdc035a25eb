"""What a reader counts as kept and the literal rules miss, one class of rewording each: done items covered by a
list or a range of what is done, names in another form, sentences with words added, a choice carried by its names."""

from __future__ import annotations

from typing import Any

from pikit.compaction import Fact
from pikit.compaction._kept import Haystack

DONE = """## Completed Work (WP1-WP16)
All core refactoring is done:
- `bash-executor.ts` created (`src/core/bash-executor.ts`)
- `main-new.ts` and `cli-new.ts` created
- Old code preserved: `main.ts` still works

## Next Steps (WP17-WP20)
1. Move files"""


def _holds(kind: str, text: str, context: str, **kwargs: Any) -> bool:
    return Haystack(context, **kwargs).holds(Fact(kind, text, "x"))


def test_a_numbered_item_is_kept_where_the_context_lists_it_or_its_range_as_done() -> None:
    assert _holds("progress", "We've completed WP1-WP13.", DONE)
    assert _holds("progress", "WP15: Create InteractiveMode using AgentSession", DONE)
    assert _holds("progress", "WP4 Prompting (prompt, queue, abort, reset) ✅", DONE)
    assert _holds("progress", "Step 4: the middleware verifies through tokens.ts", "Steps 3 and 4 done; all green.")
    assert not _holds("progress", "WP18: Remove the old renderer", DONE)  # only planned
    assert not _holds("progress", "We've completed WP1-WP18.", DONE)
    assert not _holds("progress", "Step 4: the middleware verifies through tokens.ts", "Step 4 is not done yet.")


def test_a_made_item_is_kept_where_the_context_says_that_name_is_done_or_changed() -> None:
    assert _holds("progress", "done: Create `src/core/bash-executor.ts` with basic structure", DONE)
    assert _holds("progress", "done: Copy main.ts to main-new.ts", DONE)
    assert _holds("progress", "done: Create `src/a.ts` with basic structure", "**New files:**\n- `/repo/src/a.ts`")
    assert not _holds("progress", "done: Create `src/a.ts` with basic structure", "Read `src/a.ts` first.")
    assert not _holds("progress", "done: Create `ping.ts` with `retry()`", "- `ping.ts` created")  # retry() unnamed
    assert not _holds("progress", "done: Verify `main.ts` still builds", DONE)  # not something made


def test_a_plain_word_name_is_kept_only_where_the_context_writes_it_as_code() -> None:
    assert not _holds("identifier", "session.compact()", "We compact the log when it grows.")
    assert not _holds("identifier", "branch()", "Work happens on the refactor branch.")
    assert _holds("identifier", "session.compact()", "Call `compact()` after a reset.")
    assert _holds("identifier", "branch()", "switchSession(path), branch(entryIndex)")


def test_a_name_is_kept_by_its_getter_or_setter() -> None:
    assert _holds("identifier", "SessionStats", "switchSession(path), getSessionStats(), exportToHtml()")
    assert _holds("identifier", "QueueMode", "setQueueMode(mode)")
    assert not _holds("identifier", "SessionStats", "forgetSessionStats()")
    assert not _holds("identifier", "stats", "getStats()")  # a plain word: only as code of its own


def test_a_sentence_with_words_added_and_none_replaced_keeps_it() -> None:
    fact = "Refactor the auth module (`src/auth`, Express + TypeScript) into small pieces without changing the API."
    assert _holds("task", fact, "Refactor the auth module (`src/auth`, Express 4 + TypeScript on Node 20) into small "
                                "pieces without changing the API.")
    assert not _holds("task", fact, "Refactor the auth module (`src/auth`, Koa + TypeScript) into small pieces "
                                    "without changing the API.")


def test_names_contractions_and_generic_words_are_read_as_a_reader_reads_them() -> None:
    # a hyphenated path is one name; "write" and "writing" agree
    fact = "Check both, then write the plan to docs/auth-refactor-plan.md - small steps, each one green."
    assert _holds("task", fact,
                  "The user agreed that the fallback has to go and asked to check `scripts/seed_users.py` and "
                  "`docs/auth.md` before writing a plan to `docs/auth-refactor-plan.md`: small steps, each one green.")
    # "Don't" and "yet" carry no content; with one word left, the generic "files" counts
    assert _holds("constraint", "Don't edit any files yet.", "Analysis first: no file edits until the user has seen "
                                                               "the findings")
    assert not _holds("constraint", "Don't edit any files yet.", "The edit is done.")
    assert _holds("task", "what about thinking levels etc.?", "| WP6 | Thinking level + queue mode | ✅ |")
    # a camel-case name of the context holds its words
    assert _holds("task", "how do we set things on the agentsession?",
                  "## AgentSession Key API\nsetModel(model), cycleModel()")
    # nor do prepositions such as "around"
    assert _holds("decision", "can we make it so we keep the old code around for reference?",
                  "**Keep old code for reference** - Create new files instead of modifying existing ones")


def test_a_choice_between_named_things_is_kept_by_a_sentence_naming_them_all() -> None:
    fact = "**Naming clarity**: `InteractiveMode` instead of `TuiRenderer`"
    assert _holds("decision", fact, "- Rename class `TuiRenderer` → `InteractiveMode`")
    assert not _holds("decision", fact, "`InteractiveMode` is new.\n\n`TuiRenderer` stays for reference.")
    assert not _holds("decision", "Use `InteractiveMode` for the new code", "`InteractiveMode` is new.")
