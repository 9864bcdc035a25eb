"""The rules of fact extraction and matching, one case each: the kinds a follow-up agent needs, the noise left
out, and what counts as kept."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import example, given, strategies as st

from pikit.compaction import Fact, evaluate_span, extract_facts
from pikit.compaction._factrules import (
    _BOUNDARY,
    _SUMMARY_LINE,
    _TEST_SUMMARY,
    command_weight,
    has_digit,
    sentences,
    summary_sections,
    task_sentence,
    text_cache,
)
from pikit.compaction._facts import _ERROR_LINES, _ERROR_START
from pikit.compaction._kept import Haystack, _is_word_char
from tests._format.test_message import BLOCK, JSON, ROLES


def _facts(*messages: dict[str, Any]) -> list[Fact]:
    return extract_facts([(f"e{i}", m) for i, m in enumerate(messages)])


def _texts(facts: list[Fact], kind: str) -> list[str]:
    return [f.text for f in facts if f.kind == kind]


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _assistant(text: str = "", **call: Any) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    if call:
        name = call.pop("name")
        content.append({"type": "toolCall", "id": "t", "name": name, "arguments": call})
    return {"role": "assistant", "content": content}


def _bash(command: str, output: str, code: int = 0) -> dict[str, Any]:
    return {"role": "bashExecution", "command": command, "output": output, "exitCode": code}


def _holds(kind: str, text: str, context: str, **kwargs: Any) -> bool:
    return Haystack(context, **kwargs).holds(Fact(kind, text, "x"))


@pytest.mark.parametrize(("sentence", "task"), [
    ("ok, create a branch refactor", True), ("I want you to do a deep analysis", True),
    ("can we put more stuff into that?", True), ("Why does src/index.ts fail on a cold start?", True),
    ("ok, this looks amazing, start implementing", True), ("I'd like to refactor the auth module.", True),
    ("will this also allow us to test the agent core?", False), ("do we load them once?", False),
    ("i feel like this is one big mess", False)])
def test_a_task_is_a_request_in_the_users_words(sentence: str, task: bool) -> None:
    assert task_sentence(sentence) is task


def test_kinds_a_follow_up_agent_needs() -> None:
    facts = _facts(
        _user("ok, create a branch refactor. Will this work? You must never touch setup.cfg."),
        _assistant("We'll use a dict instead of a list, because lookups are faster. Found the cause. "
                   "The issue is the cache key. Fixed the parser in `load_cfg`. Now let me look."),
        _bash('git commit -m "WP1: extract the loader"', "[main 1a2b] WP1"),
        _bash("pytest -q", "....\n4 passed in 0.1s"),
    )
    assert _texts(facts, "task") == ["ok, create a branch refactor."]
    assert _texts(facts, "decision") == ["We'll use a dict instead of a list, because lookups are faster."]
    assert _texts(facts, "finding") == ["Found the cause.", "The issue is the cache key.", "4 passed in 0.1s"]
    assert _texts(facts, "progress") == ["Fixed the parser in `load_cfg`.", "WP1: extract the loader"]
    assert _texts(facts, "constraint") == ["You must never touch setup.cfg."]
    assert _texts(facts, "command") == ["pytest -q"]  # the commit is progress, not a command
    assert {f.kind: f.importance for f in facts}["identifier"] == "minor"
    assert {f.importance for f in facts if f.kind in ("task", "decision", "finding", "progress")} == {"key"}


def test_an_earlier_test_run_is_superseded_by_the_last() -> None:
    facts = _facts(_bash("pytest", "1 failed, 3 passed"), _bash("pytest", "4 passed"))
    assert [(f.text, f.importance) for f in facts if f.kind == "finding"] == [("1 failed, 3 passed", "minor"),
                                                                              ("4 passed", "key")]


def test_a_ticked_checklist_item_is_progress() -> None:
    facts = _facts(_assistant(name="edit", path="PLAN.md", oldText="- [ ] Add the parser",
                              newText="- [x] Add the parser"))
    assert [(f.kind, f.text, f.importance) for f in facts if f.kind == "progress"] == [
        ("progress", "done: Add the parser", "minor")]


PLAN = """# Plan

```bash
# Run it
npx tsx src/cli.ts
```

## Work packages

### WP5: Model management

- [ ] Add `setModel()` method
- [ ] Verify with `npm run check`

### WP6: Thinking level

- [ ] Verify with `npm run check`
"""


def _call(call: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": name, "arguments": arguments}]}


def _outlines(*messages: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    return {f.text: f.outline for f in _facts(*messages) if f.kind == "progress"}


def test_a_ticked_item_knows_the_headings_it_is_under_in_the_file() -> None:
    """From a write of the file in the span, or a whole read of it (before or after the tick), followed through its
    edits; not a ``#`` line of a fenced block."""
    tick = _assistant(name="edit", path="PLAN.md", oldText="- [ ] Add `setModel()` method",
                      newText="- [x] Add `setModel()` method")
    wp6 = _assistant(name="edit", path="PLAN.md", oldText="level\n\n- [ ] Verify with `npm run check`",
                     newText="level\n\n- [x] Verify with `npm run check`")
    wp5 = ("WP5: Model management", "Work packages", "Plan")
    assert _outlines(_call("w", "write", path="PLAN.md", content=PLAN), tick) == {"done: Add `setModel()` method": wp5}
    read = [_call("r", "read", path="PLAN.md"), {"role": "toolResult", "toolCallId": "r", "toolName": "read",
                                                 "content": [{"type": "text", "text": PLAN}]}]
    assert _outlines(*read, tick, wp6) == {"done: Add `setModel()` method": wp5,
                                           "done: Verify with `npm run check`": ("WP6: Thinking level", *wp5[1:])}
    ticked = PLAN.replace("- [ ] Add", "- [x] Add")
    read_after = [_call("r", "read", path="PLAN.md"), {"role": "toolResult", "toolCallId": "r", "toolName": "read",
                                                       "content": [{"type": "text", "text": ticked}]}]
    assert _outlines(tick, *read_after) == {"done: Add `setModel()` method": wp5}
    part = [_call("p", "read", path="PLAN.md", offset=1, limit=3),
            {"role": "toolResult", "toolCallId": "p", "toolName": "read",
             "content": [{"type": "text", "text": "# Plan"}]}]
    assert _outlines(_call("w", "write", path="PLAN.md", content=PLAN), *part, tick) == {
        "done: Add `setModel()` method": wp5}  # (a part read does not replace the whole text)
    assert _outlines(tick) == {"done: Add `setModel()` method": ()}


def test_a_ticked_item_is_done_where_its_work_package_is() -> None:
    done = Fact("progress", "done: Add `setModel()` method", "x", "minor", ("WP5: Model management", "Plan"))
    assert Haystack("## Completed (WP1-WP6)\nAll green.").holds(done)
    assert Haystack("| WP5 | Model management | ✅ |").holds(done)
    assert not Haystack("## Next\nWP5: Model management").holds(done)
    assert not Haystack("## Completed (WP1-WP4)").holds(done)


def test_exploratory_commands_are_noise_and_builds_are_key() -> None:
    assert command_weight('cd /repo && grep -n "a\\|b" src/x.ts | head -20') is None
    assert command_weight("tail -30 log.txt") is None and command_weight("mkdir -p src/core") is None
    assert command_weight("git status --short && git log --oneline -3") is None
    assert command_weight("cd /repo && npm run check") == "key"
    assert command_weight("git checkout -b refactor") == "key"
    assert command_weight("cp a.ts b.ts") == "minor"
    facts = _facts(_bash("npm run check 2>&1 | head -50", "ok"), _bash("npm run check 2>&1 | tail -20", "ok"))
    assert _texts(facts, "command") == ["npm run check"]  # one command, however its output was cut


def test_sentences_are_not_split_at_abbreviations() -> None:
    assert sentences("if we do e.g. compact or branch, listeners must stay. Then go on.") == [
        "if we do e.g. compact or branch, listeners must stay.", "Then go on."]
    assert sentences("1. Keep the old code. 2. Write the tests.") == ["1. Keep the old code.", "2. Write the tests."]
    assert _texts(_facts(_user("Plan:\n1. Keep the old code around.\n- write the tests first")), "task") == [
        "Keep the old code around.", "write the tests first"]
    facts = _facts(_user("if we do e.g. compact or branch, those listeners should still be there"))
    assert _texts(facts, "constraint") == ["if we do e.g. compact or branch, those listeners should still be there"]


def test_code_spans_pair_in_order_and_english_words_are_not_names() -> None:
    facts = _facts(_user("Use `a` or `load_cfg` and `x` then `with`."),
                   _assistant(name="write", path="a.md", content="an interface with the loader\nclass Loader:\n"))
    assert _texts(facts, "identifier") == ["load_cfg", "Loader"]  # not " or ", "with", nor "with" from prose


def test_the_error_is_the_line_that_says_what_failed() -> None:
    output = "> pi-monorepo@0.0.3 check\n> tsc\n\nsrc/a.ts(3,1): error TS2305: no exported member 'Q'.\nexit 2"
    assert _texts(_facts(_bash("npm run check", output, code=2)), "error") == [
        "src/a.ts(3,1): error TS2305: no exported member 'Q'."]
    assert _texts(_facts(_bash("make", "> pkg@1.0.0 build\nsomething odd\nstopped here", code=1)), "error") == [
        "stopped here"]


def test_the_error_is_the_diagnostic_not_the_code_its_frame_quotes() -> None:
    frame = ("src/a.ts:218:8 parse ━━━━━━━━━━\n\n  × expected a semicolon, but found none\n\n"
             "    216 │ \t * @throws Error if no model is selected\n  > 218 │ \tasync prompt() {\n"
             "        │ \t      ^^^^^^\n")
    assert _texts(_facts(_bash("npm run check", frame, code=1)), "error") == ["× expected a semicolon, but found none"]
    quoted = "  12 | raise Error('invalid input')\n> 13 | return x\ncheck failed\n"
    assert _texts(_facts(_bash("make", quoted, code=1)), "error") == ["check failed"]
    only_code = "    12 │ throw new Error('x')\n  > 13 │ }\n"
    assert _texts(_facts(_bash("make", only_code, code=1)), "error") == []


def test_line_numbers_and_short_numbers_are_not_facts() -> None:
    facts = _facts(_user("main.ts (~1100 lines), see line 2048 and :4096, runs 946-1116, port 8080, 100%, v1.2.3"))
    assert _texts(facts, "number") == ["8080", "v1.2.3"]


def test_an_earlier_summary_is_read_by_its_sections() -> None:
    summary = ("## Goal\nRefactor the loader.\n\n## Constraints & Preferences\n- Never touch setup.cfg\n\n"
               "## Key Decisions\n- **Plain modules** over classes\n\n## Next Steps\n1. Write the tests\n\n"
               "## Critical Context\n- (none)\n")
    assert summary_sections(summary) == [("task", "Refactor the loader."), ("constraint", "Never touch setup.cfg"),
                                         ("decision", "**Plain modules** over classes"),
                                         ("progress", "Write the tests")]
    facts = _facts({"role": "compactionSummary", "summary": summary})
    assert _texts(facts, "constraint") == ["Never touch setup.cfg"] and _texts(facts, "task") == [
        "Refactor the loader."]


def test_names_match_with_calls_and_qualifiers() -> None:
    assert _holds("identifier", "TuiRenderer.executeBash()", "it calls executeBash(command) once")
    assert _holds("identifier", "executeBash", "see Session.executeBash() for it")
    assert not _holds("identifier", "parse", "the parser runs")


def test_paths_match_by_package_relative_tail_and_unique_base_name() -> None:
    path = "/Users/x/pi-mono/packages/agent/src/core/agent-session.ts"
    assert _holds("read_file", path, "see src/core/agent-session.ts")
    assert _holds("read_file", path, "the class lives in `agent-session.ts`")
    assert not _holds("read_file", path, "the class lives in `agent-session.ts`", ambiguous=["agent-session.ts"])


def test_a_changed_file_is_kept_only_where_the_context_says_it_changed() -> None:
    read_only = "<read-files>\nsrc/a.py\n</read-files>"
    assert not _holds("modified_file", "src/a.py", read_only)
    assert not _holds("modified_file", "src/a.py", "`src/a.py` keeps the cache in a module-level index.")
    assert _holds("modified_file", "src/a.py", "<modified-files>\nsrc/a.py\n</modified-files>")
    assert _holds("modified_file", "src/a.py", "Nothing else uses it, so the change stays local to `src/a.py`.")
    assert _holds("modified_file", "src/a.py", "**New files:**\n- `src/b.py`\n- `src/a.py` (88 lines)")
    kept_edit = evaluate_span([("e1", _assistant(name="edit", path="src/a.py", oldText="a", newText="b"))],
                              [_assistant(name="edit", path="src/a.py", oldText="b", newText="c")],
                              tokens_before=2, tokens_after=1, strategy="test")
    assert kept_edit.kept == [True]


def test_a_command_is_kept_by_its_words_not_by_its_cd_prefix() -> None:
    command = "cd /Users/someone/workspaces/a-rather-long-repository-name && git checkout -b refactor"
    assert not _holds("command", command, "cd /Users/someone/workspaces/a-rather-long-repository-name && ls")
    assert _holds("command", "cd /repo && npm run check", "Run `npm run check` after each step.")
    assert _holds("command", "cd /repo && npm run check", "npm run check")


def test_a_sentence_is_kept_by_its_words_names_and_numbers() -> None:
    assert _holds("constraint", "The HTTP contract is frozen: paths, status codes and cookie names",
                  "Paths, status codes and cookie names of the HTTP contract stay frozen.")
    assert not _holds("finding", "Nothing else uses the index, so the change stays local to `a.py`.",
                      "Nothing else uses the session, so the change stays local to `a.py`.")
    assert not _holds("finding", "Tests 8 failed | 34 passed (42)", "Tests 3 failed | 16 passed (19)")
    assert _holds("finding", "Tests 8 failed | 34 passed (42)", "Tests 8 failed | 34 passed (42)")
    assert _holds("progress", "done: Add `setModel()` method", "## API\nsetModel(model), cycleModel()")
    assert not _holds("progress", "done: Add `ModelCycleResult` interface", "## API\nsetModel(model)")


def test_key_recall_is_over_key_facts() -> None:
    evaluation = evaluate_span([("e1", _user("Please fix the loader. See `load_cfg`."))],
                               [_user("load_cfg")], tokens_before=2, tokens_after=1, strategy="test")
    assert [(f.kind, f.importance) for f in evaluation.facts] == [("task", "key"), ("identifier", "minor")]
    assert evaluation.kept == [False, True]
    assert evaluation.key_recall == 0.0 and evaluation.recall["overall"] == 0.5
    assert "0/1 key facts kept (0%), 1/2 facts (50%)" in repr(evaluation)
    assert evaluation.records()[0]["importance"] == "key"


def test_a_text_cache_keeps_short_texts_only() -> None:
    """Its memory is bounded in characters: a text longer than ``chars`` is read every time it is given."""
    reads: list[str] = []

    @text_cache(maxsize=2, chars=5)
    def length(text: str, extra: int) -> int:
        reads.append(text)
        return len(text) + extra

    assert [length("abc", 1), length("abc", 1), length("abcdefgh", 0), length("abcdefgh", 0)] == [4, 4, 8, 8]
    assert reads == ["abc", "abcdefgh", "abcdefgh"]
    length("x", 0), length("y", 0), length("abc", 1)  # (two answers kept: "abc" was the least recently used)
    assert reads[-1] == "abc"


_OUTPUT_PIECES = ["5 passed", "3 failed", "Tests:", " 4", "OK", "ok", "FAILED", " (errors=1)", "Ran 2 tests",
                  "ran 1 test", "test result: ok", "Found 3 errors", "12 specs completed", "# pass 3", "pass 2",
                  "fail 1", "=== ", "x", "Error", "error", "fatal:", "TypeError:", "panic:", "traceback", "\u017f",
                  "\u0663", "\u00b2", ":", " ", "\t", "\r", "\x0b", "\x85", "\u2028", "\n"]
_OUTPUT_LINE = st.tuples(st.sampled_from(["", " ", "\t", "\x0b"]),
                         st.lists(st.sampled_from(_OUTPUT_PIECES), max_size=3).map("".join),
                         st.sampled_from(["", " ", "\r"])).map("".join)


@given(st.lists(_OUTPUT_LINE, max_size=8).map("\n".join))
@example("\n".join(["=== 5 passed", "3 failed", "Tests: 4", "Test Files 2", "Ran 2 tests", "OK", "ok",
                    "FAILED (errors=1)", "test result: ok", "Found 3 errors", "12 specs completed", "# pass 3",
                    "pass 2", "fail 1"]))
def test_output_lines_are_found_after_each_newline_as_at_each_line_start(text: str) -> None:
    """The test summary and error line patterns start with a newline (found quickly) and are given the output after
    one: they find what the same patterns anchored at each line's start and end (``^``, ``$``) find."""
    summary = re.compile(rf"^\s*{_SUMMARY_LINE}\s*$", re.IGNORECASE | re.MULTILINE)
    found = [line.strip() for line in _TEST_SUMMARY.findall("\n" + text)]
    assert found == [line.strip() for line in summary.findall(text)]
    errors = re.compile(f"^{_ERROR_START}.*$", re.IGNORECASE | re.MULTILINE)
    assert [match[1] for match in _ERROR_LINES.finditer("\n" + text)] == errors.findall(text)
    assert has_digit(text) == any(c.isdigit() for c in text)


@given(st.lists(st.sampled_from(["a", "e.g", ".", "!", "?", ")", "]", '"', "'", "\u201d", "\u2019", " ", "\t", "\n",
                                 "\n\n", "\u2028", "1", "."]), max_size=30).map("".join))
@example("Done. Next (see a.b). Why?) x\n\nnew line!\u201d ok")
def test_sentence_ends_are_found_as_by_the_two_alternatives(text: str) -> None:
    """The sentence boundary pattern starts with one set of characters (found quickly): it finds each full stop,
    ``!`` or ``?`` with the brackets, quotes and space after it, and each run of newlines, as the two
    alternatives written plainly do."""
    plainly = re.compile(r"[.!?]([)\]\"'\u201d\u2019]*\s+)|\n+")
    assert [(m.span(), m[1]) for m in _BOUNDARY.finditer(text)] == [(m.span(), m[1]) for m in plainly.finditer(text)]


@given(st.lists(st.sampled_from(["g", "s", "e", "t", "get", "set", "x", "_", " ", ".", "\u00e9", "1", "getX", "(",
                                 "\u0663"]), max_size=20).map("".join))
@example("getFoo forget setBar x_setBaz \u00e9getQux")
def test_getters_and_setters_are_found_at_a_words_start(text: str) -> None:
    """The accessor pattern finds the names a search for ``get``/``set`` finds where no word character is before
    it."""
    haystack = Haystack(text)
    plain = haystack.text
    assert haystack.accessed == {m[1] for m in re.finditer(r"[gs]et(\w+)", plain)
                                 if not (m.start() and _is_word_char(plain[m.start() - 1]))}


_FIELDS = st.dictionaries(st.sampled_from(["toolName", "isError", "toolCallId", "nestedCalls", "summary", "command",
                                           "output", "exitCode", "excludeFromContext", "customType"]), JSON, max_size=5)


@given(st.lists(st.builds(lambda role, content, extra: {"role": role, "content": content, **extra},
                          ROLES, JSON | st.lists(BLOCK | JSON, max_size=4), _FIELDS), max_size=4))
@example([{"role": "toolResult", "toolName": ["bash"], "isError": True, "content": [{"type": "text", "text": "no"}]},
          {"role": {"user": 1}, "content": "x"}])
def test_any_json_messages_give_facts_and_verdicts(messages: list[dict[str, Any]]) -> None:
    """Whatever a message's fields hold (an array as a tool's name, an object as a role), the span's facts are
    read and each gets a verdict."""
    pairs = [(f"e{i}", m) for i, m in enumerate(messages)]
    facts = extract_facts(pairs)
    evaluation = evaluate_span(pairs, messages[-1:], tokens_before=None, tokens_after=None, strategy="pi")
    assert [(f.kind, f.text) for f in evaluation.facts] == [(f.kind, f.text) for f in facts]
    assert len(evaluation.kept) == len(facts)
