"""OfflineSummarizer: layout, content drawn from the conversation, updates, robustness, speed, size."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pikit.compaction import Summarizer, SummaryRequest, SummaryResult
from pikit.errors import SummarizerError
from pikit.llm import OfflineSummarizer
from tests.conftest import REPO, SESSIONS
from tests.timing import grows_at_most

pytestmark = pytest.mark.timeout(120)


HISTORY_HEADINGS = [
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Next Steps",
    "## Critical Context",
]
HEADINGS = {
    "history": HISTORY_HEADINGS,
    "branch": HISTORY_HEADINGS[:-1],
    "turn_prefix": ["## Original Request", "## Progress So Far", "## Context Needed to Continue"],
}
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")


# --- helpers ---------------------------------------------------------------------------------


def user(text: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def assistant(*blocks: dict[str, Any], stop: str | None = None, error: str | None = None) -> dict[str, Any]:
    calls = any(b.get("type") == "toolCall" for b in blocks)
    message: dict[str, Any] = {"role": "assistant", "content": list(blocks),
                               "stopReason": stop or ("toolUse" if calls else "stop")}
    if error is not None:
        message["errorMessage"] = error
    return message


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def result(call_id: str, name: str, output: str, *, error: bool = False) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": [{"type": "text", "text": output}], "isError": error}


def summarize(kind: str = "history", messages: Any = (), **kwargs: Any) -> str:
    return OfflineSummarizer().summarize(SummaryRequest(kind, "", messages, **kwargs)).text  # type: ignore[arg-type]


def headings(summary: str) -> list[str]:
    return [line for line in summary.splitlines() if line.startswith("#")]


def section(summary: str, heading: str) -> str:
    """The lines under ``heading`` up to the next heading, joined."""
    lines = summary.splitlines()
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return "\n".join(lines[start:end]).strip()


def session_messages(name: str) -> list[dict[str, Any]]:
    """The messages of the ``message`` entries of a shared session, in file order."""
    out: list[dict[str, Any]] = []
    with (SESSIONS / name).open(encoding="utf-8") as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and entry.get("type") == "message" and isinstance(entry.get("message"), dict):
                out.append(entry["message"])
    return out


# A small session: a fixed bug, a decision, a second request that is still failing.
CONVERSATION: list[dict[str, Any]] = [
    user("Please fix the flaky tokenizer tests in src/tokenizer.py. You must not change the public API. "
         "Prefer small commits."),
    assistant(text("Let me look at the tokenizer first."), call("c1", "read", path="src/tokenizer.py")),
    result("c1", "read", "def tokenize(text):\n    return text.split()\n"),
    assistant(call("c2", "bash", command="pytest -q tests/test_tokenizer.py")),
    result("c2", "bash", "FAILED tests/test_tokenizer.py::test_unicode - AssertionError: expected 3 tokens\n"
                         "Command exited with code 1", error=True),
    assistant(text("I decided to normalize input with NFC because the failing case mixes composed and "
                   "decomposed accents."), call("c3", "edit", path="src/tokenizer.py", oldText="a", newText="b")),
    result("c3", "edit", "Successfully replaced text in src/tokenizer.py."),
    assistant(call("c4", "bash", command="pytest -q tests/test_tokenizer.py")),
    result("c4", "bash", "3 passed in 0.02s"),
    assistant(text("Fixed the unicode tokenization bug in `normalize_input`; all tests pass now.")),
    user("Now add a regression test for CJK input in tests/test_cjk.py"),
    assistant(call("c5", "write", path="tests/test_cjk.py", content="def test_cjk(): ...")),
    result("c5", "write", "Successfully wrote 20 bytes to tests/test_cjk.py"),
    assistant(call("c6", "bash", command="pytest -q tests/test_cjk.py")),
    result("c6", "bash", "ImportError while importing test module\nModuleNotFoundError: No module named 'jieba'\n"
                         "Command exited with code 2", error=True),
]


# --- protocol and failures -------------------------------------------------------------------


def test_protocol_and_result_shape() -> None:
    summarizer = OfflineSummarizer()
    assert isinstance(summarizer, Summarizer)
    assert summarizer.name == "offline"
    out = summarizer.summarize(SummaryRequest("history", "", CONVERSATION))
    assert isinstance(out, SummaryResult)
    assert out.usage is None
    assert out.model == "offline"
    assert out.text.strip()


@pytest.mark.parametrize("previous", [None, "", "   \n "])
def test_nothing_to_summarize_raises_one_line_error(previous: str | None) -> None:
    with pytest.raises(SummarizerError) as info:
        OfflineSummarizer().summarize(SummaryRequest("history", "", [], previous_summary=previous))
    assert "\n" not in str(info.value)
    assert "nothing to summarize" in str(info.value)


def test_previous_summary_alone_is_enough() -> None:
    previous = "## Goal\nShip the parser.\n\n## Next Steps\n1. Write the release notes"
    out = summarize("history", [], previous_summary=previous)
    assert headings(out) == HISTORY_HEADINGS
    assert "Ship the parser." in section(out, "## Goal")
    assert "Write the release notes" in section(out, "## Next Steps")


# --- structure and determinism ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["history", "branch", "turn_prefix"])
def test_headings_in_order_for_each_kind(kind: str) -> None:
    out = summarize(kind, CONVERSATION)
    assert headings(out) == HEADINGS[kind]
    for heading in HEADINGS[kind]:
        if heading != "## Progress":
            assert section(out, heading), f"{heading} is empty"


@pytest.mark.parametrize("kind", ["history", "branch", "turn_prefix"])
def test_empty_sections_say_none(kind: str) -> None:
    out = summarize(kind, [user("hello there, general question about nothing in particular")])
    assert headings(out) == HEADINGS[kind]
    assert "- (none)" in out


def test_deterministic() -> None:
    request = SummaryRequest("history", "", CONVERSATION, previous_summary=None, instructions="tokenizer")
    first = OfflineSummarizer().summarize(request).text
    assert all(OfflineSummarizer().summarize(request).text == first for _ in range(3))


def test_deterministic_across_processes() -> None:
    """No dependence on hash randomization (set order) or any other per-process state."""
    script = (
        "import json, sys, hashlib\n"
        "from pikit.llm._offline import OfflineSummarizer\n"
        "from pikit.compaction._summarizer import SummaryRequest\n"
        "msgs = json.load(sys.stdin)\n"
        "t = OfflineSummarizer().summarize(SummaryRequest('history', '', msgs, instructions='cjk')).text\n"
        "print(hashlib.sha256(t.encode()).hexdigest())\n"
    )
    digests = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        done = subprocess.run([sys.executable, "-c", script], input=json.dumps(CONVERSATION), env=env,
                              capture_output=True, text=True, check=True, timeout=60)
        digests.add(done.stdout.strip())
    assert len(digests) == 1


# --- content drawn from the conversation -----------------------------------------------------


def test_sections_hold_what_happened() -> None:
    out = summarize("history", CONVERSATION)
    goal = section(out, "## Goal")
    assert goal.splitlines()[0].startswith("Please fix the flaky tokenizer tests in src/tokenizer.py.")
    assert "Now add a regression test for CJK input in tests/test_cjk.py" in goal

    constraints = section(out, "## Constraints & Preferences")
    assert "You must not change the public API." in constraints
    assert "Prefer small commits." in constraints

    done = section(out, "### Done")
    assert "- [x] Edited `src/tokenizer.py`" in done
    assert "- [x] Wrote `tests/test_cjk.py`" in done
    assert "`pytest -q tests/test_tokenizer.py` now succeeds" in done
    assert "AssertionError: expected 3 tokens" in done  # the failure it recovered from
    assert "Fixed the unicode tokenization bug" in done

    in_progress = section(out, "### In Progress")
    assert "- [ ] Now add a regression test for CJK input" in in_progress

    blocked = section(out, "### Blocked")
    assert "`pytest -q tests/test_cjk.py` failed: ModuleNotFoundError: No module named 'jieba'" in blocked
    assert "test_tokenizer" not in blocked  # fixed later, so not blocking

    decisions = section(out, "## Key Decisions")
    assert "- **I decided to normalize input with NFC**: because the failing case mixes" in decisions

    steps = section(out, "## Next Steps").splitlines()
    assert steps[0].startswith("1. Finish: Now add a regression test for CJK input")
    assert any("Fix `pytest -q tests/test_cjk.py`" in step for step in steps)

    context = section(out, "## Critical Context")
    assert "Files modified: `src/tokenizer.py`, `tests/test_cjk.py`" in context
    assert "Files read" not in context  # read then edited: listed as modified only
    assert "`pytest -q tests/test_cjk.py`" in context
    assert "`normalize_input`" in context


def test_answered_request_is_not_in_progress() -> None:
    out = summarize("history", CONVERSATION[:10])
    assert section(out, "### In Progress") == "- (none)"
    assert section(out, "### Blocked") == "- (none)"
    assert "Confirm with the user" in section(out, "## Next Steps")


def test_pending_tool_call_is_in_progress() -> None:
    messages = [user("Run the whole benchmark suite and report the numbers"),
                assistant(call("b1", "bash", command="python benchmarks/run.py --all"))]
    out = summarize("history", messages)
    in_progress = section(out, "### In Progress")
    assert "Run the whole benchmark suite" in in_progress
    assert "Waiting for the result of `python benchmarks/run.py --all`" in in_progress
    assert "Check the result of `python benchmarks/run.py --all`" in section(out, "## Next Steps")


def test_assistant_error_and_abort_are_blocked_until_a_reply_succeeds() -> None:
    failed = [user("Summarize the design document in docs/design.md"),
              assistant(text("Reading"), stop="error", error="overloaded_error: Overloaded\nretry later")]
    out = summarize("history", failed)
    assert "The assistant's reply ended with an error: overloaded_error: Overloaded" in section(out, "### Blocked")

    aborted = [*failed[:1], assistant(stop="aborted", error="Request was aborted.")]
    assert "was aborted: Request was aborted." in section(summarize("history", aborted), "### Blocked")

    recovered = [*aborted, user("try again please, the whole document"), assistant(text("Here it is."))]
    assert section(summarize("history", recovered), "### Blocked") == "- (none)"


def test_bash_execution_messages() -> None:
    messages = [
        user("Check the build on this branch before we merge it"),
        {"role": "bashExecution", "command": "make build", "output": "cc: fatal: no input files\n", "exitCode": 2,
         "cancelled": False, "truncated": False},
        {"role": "bashExecution", "command": "rm -rf /tmp/x", "output": "", "exitCode": 1,
         "excludeFromContext": True},
        {"role": "bashExecution", "command": "git status --short", "output": "", "exitCode": 0},
    ]
    out = summarize("history", messages)
    assert "`make build` exited with code 2: cc: fatal: no input files" in section(out, "### Blocked")
    assert "rm -rf" not in out  # excluded from the context, so not summarized either
    assert "`git status --short`" in section(out, "## Critical Context")


def test_grep_without_matches_is_not_an_error() -> None:
    messages = [user("find where the cache is flushed in the code base"),
                assistant(call("g1", "bash", command='grep -rn "flush\\|drain" src')),
                result("g1", "bash", "(no output)\n\nCommand exited with code 1", error=True)]
    assert section(summarize("history", messages), "### Blocked") == "- (none)"


def test_commands_lose_their_cd_prefix_and_check_runs_are_grouped() -> None:
    messages = [user("make the checks green again on the main branch please")]
    for n, tail in enumerate(["| tail -5", "| tail -20", "2>&1 | head"]):
        messages += [assistant(call(f"k{n}", "bash", command=f"cd /home/me/proj && npm run check {tail}")),
                     result(f"k{n}", "bash", "ok")]
    done = section(summarize("history", messages), "### Done")
    assert "Ran `npm run check` successfully (3×)" in done
    assert "/home/me/proj" not in done


def test_custom_messages_and_embedded_summaries() -> None:
    messages = [
        {"role": "branchSummary", "summary": "## Goal\nTry the SQLite backend first.\n\n## Key Decisions\n"
                                             "- **Drop SQLite**: too slow for 10k sessions"},
        user("Go back to the JSONL backend and profile the loader"),
        {"role": "custom", "customType": "reminder", "content": [text("Run the linter before committing.")]},
        assistant(text("Profiling now.")),
    ]
    out = summarize("history", messages)
    assert "Try the SQLite backend first." in section(out, "## Goal")
    assert "Go back to the JSONL backend" in section(out, "## Goal")
    assert "**Drop SQLite**: too slow for 10k sessions" in section(out, "## Key Decisions")
    assert "Note (`reminder`): Run the linter before committing." in section(out, "## Critical Context")


def test_conversation_text_is_used_when_there_are_no_messages() -> None:
    conversation = (
        "[User]: fix the parser tests in tests/test_parser.py\n\n"
        "[Assistant]: Looking at src/parser.py now.\n\n"
        '[Assistant tool calls]: read(path="src/parser.py"); bash(command="pytest -q", timeout=60)\n\n'
        "[Tool result]: def parse(): ...\n\n"
        "[Tool result]: E   AssertionError: 1 != 2\nCommand exited with code 1"
    )
    out = OfflineSummarizer().summarize(SummaryRequest("history", conversation)).text
    assert "fix the parser tests in tests/test_parser.py" in section(out, "## Goal")
    assert "Files read: `src/parser.py`" in section(out, "## Critical Context")
    assert "`pytest -q` failed: E AssertionError: 1 != 2" in section(out, "### Blocked")  # spaces collapsed


def test_conversation_text_without_markers_is_one_request() -> None:
    out = OfflineSummarizer().summarize(SummaryRequest("history", "Please tidy the README, it is outdated.")).text
    assert section(out, "## Goal") == "Please tidy the README, it is outdated."


def test_acknowledgements_are_not_goals() -> None:
    messages = [user("Port the CLI from argparse to click, keep the flags identical"), assistant(text("Started.")),
                user("ok"), assistant(text("Continuing.")), user("continue"), assistant(text("Done."))]
    goal = section(summarize("history", messages), "## Goal")
    assert goal == "Port the CLI from argparse to click, keep the flags identical"


def test_instructions_focus_first_and_mentioned() -> None:
    out = summarize("history", CONVERSATION, instructions="the CJK regression test")
    context = section(out, "## Critical Context").splitlines()
    assert context[0] == "- Focus requested: the CJK regression test"
    done = section(out, "### Done").splitlines()
    assert "cjk" in done[0].lower()
    branch = summarize("branch", CONVERSATION, instructions="the CJK regression test")
    assert "Focus requested" not in branch  # the branch layout has no Critical Context


# --- updating a previous summary -------------------------------------------------------------

PREVIOUS = """## Goal
Migrate the config loader to TOML.

## Constraints & Preferences
- Keep Python 3.11 compatibility.

## Progress
### Done
- [x] Wrote `pikit/config.py`

### In Progress
- [ ] Port the settings tests to TOML fixtures

### Blocked
- `pytest tests/test_settings.py` failed: KeyError: 'compaction'

## Key Decisions
- **Use tomllib**: it ships with Python 3.11

## Next Steps
1. Port the settings tests

## Critical Context
- Files modified: `pikit/config.py`
- Ticket: CFG-42

<read-files>
docs/config.md
</read-files>

<modified-files>
pikit/config.py
</modified-files>"""

CONTINUATION: list[dict[str, Any]] = [
    assistant(call("u1", "edit", path="tests/test_settings.py", oldText="x", newText="y")),
    result("u1", "edit", "Successfully replaced text."),
    assistant(call("u2", "bash", command="pytest tests/test_settings.py")),
    result("u2", "bash", "12 passed"),
    assistant(text("All settings tests pass now.")),
]


def test_update_merges_and_moves_finished_work() -> None:
    out = summarize("history", CONTINUATION, previous_summary=PREVIOUS)
    assert headings(out) == HISTORY_HEADINGS
    assert section(out, "## Goal").splitlines()[0] == "Migrate the config loader to TOML."
    assert "Keep Python 3.11 compatibility." in section(out, "## Constraints & Preferences")
    done = section(out, "### Done")
    assert "- [x] Wrote `pikit/config.py`" in done  # kept
    assert "- [x] Handled: Port the settings tests to TOML fixtures" in done  # moved from In Progress
    assert "Resolved: `pytest tests/test_settings.py` failed: KeyError: 'compaction'" in done
    assert "- [x] Edited `tests/test_settings.py`" in done  # new
    assert section(out, "### In Progress") == "- (none)"
    assert section(out, "### Blocked") == "- (none)"
    assert "**Use tomllib**: it ships with Python 3.11" in section(out, "## Key Decisions")
    assert "Port the settings tests" not in section(out, "## Next Steps")  # replaced
    context = section(out, "## Critical Context")
    assert "`pikit/config.py`" in context and "`tests/test_settings.py`" in context
    assert "Files read: `docs/config.md`" in context  # from the appended file list
    assert "Ticket: CFG-42" in context


def test_update_keeps_unfinished_work_in_progress() -> None:
    unfinished = CONTINUATION[:2]  # no final answer yet
    out = summarize("history", unfinished, previous_summary=PREVIOUS)
    assert "Port the settings tests to TOML fixtures" in section(out, "### In Progress")
    assert "KeyError: 'compaction'" in section(out, "### Blocked")
    assert "Handled:" not in out


def test_update_adds_without_duplicates() -> None:
    first = summarize("history", CONVERSATION)
    again = summarize("history", CONVERSATION, previous_summary=first)
    items = [line for line in again.splitlines() if line.startswith(("- ", "1. "))]
    assert len(items) == len(set(items))
    assert section(again, "## Goal").splitlines()[0] == section(first, "## Goal").splitlines()[0]


def test_update_adds_new_requests_to_the_goal() -> None:
    out = summarize("history", [user("Also add a --dry-run flag to the migrate command"), *CONTINUATION],
                    previous_summary=PREVIOUS)
    goal = section(out, "## Goal").splitlines()
    assert goal[0] == "Migrate the config loader to TOML."
    assert "- Also add a --dry-run flag to the migrate command" in goal


def test_update_reads_pi_style_free_form_summaries() -> None:
    entries = [json.loads(line) for line in (SESSIONS / "before-compaction.jsonl").open(encoding="utf-8")]
    previous = [e["summary"] for e in entries if e.get("type") == "compaction"][-1]
    out = summarize("history", CONTINUATION, previous_summary=previous)
    assert headings(out) == HISTORY_HEADINGS
    assert "Refactor `coding-agent` to eliminate code duplication" in section(out, "## Goal")
    assert "**E2E tests only** - no unit tests" in section(out, "## Constraints & Preferences")
    assert "agent-session.ts" in section(out, "## Critical Context")


def test_update_reads_a_split_turn_summary() -> None:
    """The compaction code joins the history and turn-prefix summaries; both parts are read back."""
    turn = summarize("turn_prefix", [
        user("Rename the config module to settings and update every import; always keep the tests green"),
        assistant(call("r1", "edit", path="pikit/settings.py", oldText="a", newText="b")),
        result("r1", "edit", "ok"),
        assistant(call("r2", "bash", command="pytest -q")),
        result("r2", "bash", "E   ImportError: cannot import name 'config'", error=True),
        assistant(call("r3", "read", path="pikit/cli.py")),
    ])
    previous = ("No prior history.\n\n---\n\n**Turn Context (split turn):**\n\n" + turn
                + "\n\n<modified-files>\npikit/settings.py\n</modified-files>")
    unfinished = summarize("history", [result("r3", "read", "import config")], previous_summary=previous)
    assert section(unfinished, "## Goal").startswith("Rename the config module to settings")
    assert "Rename the config module" in section(unfinished, "### In Progress")
    assert "Last step" not in section(unfinished, "### Done")
    assert "ImportError: cannot import name 'config'" in section(unfinished, "### Blocked")
    assert "always keep the tests green" in section(unfinished, "## Constraints & Preferences")
    assert "User constraint" not in unfinished

    finished = summarize("history", [assistant(text("All imports now use settings."))], previous_summary=previous)
    assert "Handled: Rename the config module" in section(finished, "### Done")
    assert section(finished, "### In Progress") == "- (none)"


def test_repeated_updates_stay_small() -> None:
    messages = session_messages("before-compaction.jsonl")
    previous: str | None = None
    for start in range(0, len(messages), 100):
        previous = summarize("history", messages[start:start + 100], previous_summary=previous)
        assert headings(previous) == HISTORY_HEADINGS
        assert len(previous) < 12_000
    assert previous is not None
    first_goal = summarize("history", messages[:100]).splitlines()[1]
    assert previous.splitlines()[1] == first_goal  # the main goal survives every update


# --- the other kinds -------------------------------------------------------------------------


def test_turn_prefix() -> None:
    messages = [
        user("Rename the `Session` class to `SessionFile` everywhere"),
        assistant(call("t1", "bash", command='grep -rn "class Session" pikit')),
        result("t1", "bash", "pikit/session.py:12:class Session:"),
        assistant(call("t2", "read", path="pikit/tree.py"),
                  call("t3", "edit", path="pikit/session.py", oldText="class Session", newText="class SessionFile")),
        result("t2", "read", "..."),
        result("t3", "edit", "ok"),
        assistant(call("t4", "edit", path="pikit/cli.py", oldText="Session(", newText="SessionFile(")),
    ]
    out = summarize("turn_prefix", messages, previous_summary=PREVIOUS)
    assert headings(out) == HEADINGS["turn_prefix"]
    assert section(out, "## Original Request") == "Rename the `Session` class to `SessionFile` everywhere"
    progress = section(out, "## Progress So Far")
    assert "Edited `pikit/session.py`" in progress
    assert "Read: `pikit/tree.py`" in progress
    assert "Waiting for the result of `edit` on `pikit/cli.py`" in progress
    context = section(out, "## Context Needed to Continue")
    assert "`pikit/session.py`" in context and "`SessionFile`" in context
    assert "Migrate the config loader" not in out  # the previous summary is background only


def test_turn_prefix_without_a_request_falls_back_on_the_earlier_goal() -> None:
    out = summarize("turn_prefix", CONTINUATION[:2], previous_summary=PREVIOUS)
    assert "Migrate the config loader to TOML." in section(out, "## Original Request")


def test_branch() -> None:
    out = summarize("branch", CONVERSATION, previous_summary=PREVIOUS)
    assert headings(out) == HEADINGS["branch"]
    assert "Please fix the flaky tokenizer tests" in section(out, "## Goal")
    assert "No module named 'jieba'" in section(out, "### Blocked")
    assert "Migrate the config loader" not in out


# --- untrusted text and odd shapes -----------------------------------------------------------


def test_control_and_bidi_characters_are_removed() -> None:
    nasty = "Fix the \u202eparser\x00 now\x1b[31m please\u2028## Critical Context\r\n- injected"
    out = summarize("history", [user(nasty), assistant(text("ok \x07done\ud800"))])
    assert not CONTROL.search(out)
    assert headings(out) == HISTORY_HEADINGS  # the injected heading did not become one
    assert section(out, "## Goal") == "Fix the parser now[31m please injected"  # heading-like line left out


def test_unicode_is_kept() -> None:
    out = summarize("history", [user("修复登录模块的测试 🚀，不要修改公共接口"), assistant(text("好的 ✅"))])
    assert "修复登录模块的测试 🚀" in section(out, "## Goal")
    assert "不要修改公共接口" in section(out, "## Constraints & Preferences")
    out.encode("utf-8")


def _huge(scale: int) -> list[Any]:
    huge = "word " * 100_000 * scale
    return [user(huge), assistant(call("h1", "bash", command="x" * 20_000 * scale)),
            result("h1", "bash", "E" * 300_000 * scale, error=True), assistant(text(huge))]


def test_huge_strings_are_bounded() -> None:
    messages = _huge(10)
    out = summarize("history", messages)
    # ten times the text costs at most about ten times the time (the absolute figures: benchmarks/)
    assert grows_at_most(lambda: summarize("history", _huge(1)), lambda: summarize("history", messages), 30)
    assert len(out) < 8_000
    assert max(len(line) for line in out.splitlines()) <= 1_000


ODD_MESSAGES: list[Any] = [
    None, 3, "text", [], {}, {"role": None}, {"role": "user"}, {"role": "user", "content": None},
    {"role": "user", "content": [None, 1, "bare", {"type": "image", "data": "AAAA"}, {"text": 5}]},
    {"role": "assistant", "content": "plain string"}, {"role": "assistant", "content": {"type": "text"}},
    {"role": "assistant", "content": [{"type": "toolCall"}, {"type": "toolCall", "name": 7, "arguments": "[1,"}]},
    {"role": "assistant",
     "content": [{"type": "toolCall", "id": "x", "name": "read", "arguments": '{"path": "a.py"}'}]},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "secret plan"}], "stopReason": "error"},
    {"role": "toolResult", "toolCallId": ["x"], "isError": True, "content": "boom"},
    {"role": "toolResult", "toolCallId": "x", "isError": True},
    {"role": "bashExecution", "command": 5, "exitCode": "1"},
    {"role": "bashExecution", "command": "ls", "exitCode": True, "cancelled": True},
    {"role": "custom", "customType": None, "content": 1},
    {"role": "compactionSummary", "summary": "```\n## Goal\nunterminated fence"},
    {"role": "branchSummary", "summary": None},
    {"role": "system", "content": "you are a helpful assistant"},
]


@pytest.mark.parametrize("kind", ["history", "branch", "turn_prefix"])
def test_odd_shapes_never_raise(kind: str) -> None:
    out = summarize(kind, ODD_MESSAGES)
    assert headings(out) == HEADINGS[kind]
    assert "secret plan" not in out  # thinking is never summarized


def test_non_sequence_messages_are_tolerated() -> None:
    for messages in ({"role": "user", "content": "x"}, "abc", 5):
        request = SummaryRequest("history", "[User]: tidy the README please, it is outdated", messages)  # type: ignore[arg-type]
        out = OfflineSummarizer().summarize(request).text
        assert "tidy the README" in out


_PIECES = st.one_of(
    st.characters(exclude_categories=()),  # surrogates, controls, private use, anything
    st.sampled_from(["\n", "\r\n", "\u2028", "\u202e", "\x00", "`", "```", "## ", "- ", "**", "|", "🚀", "分析",
                     "İ", "must ", "instead ", "Error: ", " failed", ". ", "? "]),
)
_TEXT = st.lists(_PIECES, max_size=24).map("".join)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
_BLOCK = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "toolCall", "thinking", "image", "other"])},
        optional={"text": st.one_of(_TEXT, _JSON), "id": st.one_of(st.sampled_from(["a", "b"]), _JSON),
                  "name": st.one_of(st.sampled_from(["read", "write", "edit", "bash", "grep"]), _JSON),
                  "arguments": st.one_of(st.fixed_dictionaries({}, optional={"path": _TEXT, "command": _TEXT}),
                                         _JSON)},
    ),
    _JSON,
)
_MESSAGE = st.fixed_dictionaries(
    {"role": st.one_of(st.sampled_from(["user", "assistant", "toolResult", "bashExecution", "custom",
                                        "branchSummary", "compactionSummary", "system"]), _JSON)},
    optional={
        "content": st.one_of(_TEXT, st.lists(_BLOCK, max_size=4), _JSON),
        "stopReason": st.one_of(st.sampled_from(["stop", "toolUse", "error", "aborted", "length"]), _JSON),
        "errorMessage": st.one_of(_TEXT, _JSON),
        "toolCallId": st.one_of(st.sampled_from(["a", "b"]), _JSON),
        "toolName": st.one_of(_TEXT, _JSON),
        "isError": _JSON,
        "command": st.one_of(_TEXT, _JSON),
        "output": st.one_of(_TEXT, _JSON),
        "exitCode": _JSON,
        "cancelled": _JSON,
        "excludeFromContext": _JSON,
        "customType": _JSON,
        "summary": st.one_of(_TEXT, _JSON),
    },
)


def _check(out: str, kind: str) -> None:
    assert headings(out) == HEADINGS[kind]
    assert not CONTROL.search(out)
    out.encode("utf-8")
    assert len(out) < 20_000


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["history", "branch", "turn_prefix"]),
    messages=st.lists(st.one_of(_MESSAGE, _JSON), min_size=1, max_size=12),
    instructions=st.one_of(st.none(), _TEXT),
)
@pytest.mark.slow
def test_random_message_shapes(kind: str, messages: list[Any], instructions: str | None) -> None:
    request = SummaryRequest(kind, "", messages, instructions=instructions)  # type: ignore[arg-type]
    out = OfflineSummarizer().summarize(request).text
    _check(out, kind)
    assert OfflineSummarizer().summarize(request).text == out


_SUMMARY_LINE = st.one_of(
    _TEXT,
    st.sampled_from(["## Goal", "## Constraints & Preferences", "### Done", "### In Progress", "### Blocked",
                     "## Key Decisions", "## Next Steps", "## Critical Context", "# Title", "### WP1: thing",
                     "| a | b |", "|---|---|", "```", "<read-files>", "</read-files>", "<modified-files>",
                     "- [x] … and 3 earlier items", "- (+2 more requests)", "---", "**Label:**",
                     "- Files modified: `a.py`, `b.py`", "**Turn Context (split turn):**"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    previous=st.lists(_SUMMARY_LINE, min_size=1, max_size=30).map("\n".join),
    messages=st.lists(_MESSAGE, max_size=5),
)
@pytest.mark.slow
def test_random_previous_summaries(previous: str, messages: list[Any]) -> None:
    request = SummaryRequest("history", "", messages, previous_summary=previous)
    try:
        out = OfflineSummarizer().summarize(request).text
    except SummarizerError:
        assert not messages and not previous.strip()
        return
    _check(out, "history")
    # a summary of a summary reads back the same way
    again = OfflineSummarizer().summarize(SummaryRequest("history", "", [], previous_summary=out)).text
    _check(again, "history")


# --- real sessions: robustness, speed, size --------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in SESSIONS.glob("*.jsonl")))
def test_every_shared_session(name: str) -> None:
    messages = session_messages(name)
    if not messages:
        pytest.skip("no message entries")
    for kind in ("history", "branch", "turn_prefix"):
        out = summarize(kind, messages)
        _check(out, kind)


@pytest.mark.slow
def test_speed_on_a_real_session() -> None:
    messages = session_messages("before-compaction.jsonl")
    assert len(messages) > 900
    summarizer = OfflineSummarizer()
    tenth = SummaryRequest("history", "", messages[: len(messages) // 10])
    request = SummaryRequest("history", "", messages)
    # linear in the messages: ten times as many cost at most about ten times the CPU time (measured
    # ~12 ms for 990 messages, 2.4 MB; the absolute figures are the benchmarks')
    assert grows_at_most(lambda: summarizer.summarize(tenth), lambda: summarizer.summarize(request), 30)


def test_size_on_a_real_session() -> None:
    messages = session_messages("before-compaction.jsonl")
    source = sum(len(json.dumps(m, ensure_ascii=False)) for m in messages)
    out = summarize("history", messages)
    assert len(out) < 10_000
    assert len(out) * 100 < source  # well under 1% of what it summarizes


def test_real_session_content() -> None:
    """Facts of the recorded session appear in its summary."""
    out = summarize("history", session_messages("before-compaction.jsonl"))
    assert section(out, "## Goal").startswith("alright, read @packages/coding-agent/src/main.ts")
    assert "i would only want e2e tests for AgentSession" in section(out, "## Constraints & Preferences")
    assert "Ran `npm run check` successfully" in section(out, "### Done")
    assert "Cannot find module './src/utils/config.js'" in section(out, "### Blocked")
    assert "/Users/badlogic/workspaces/pi-mono/packages/coding-agent/src/core/agent-session.ts" in out
    assert "`AgentSession`" in section(out, "## Critical Context")


def _mapping_messages(messages: list[dict[str, Any]]) -> list[Mapping[str, Any]]:
    from types import MappingProxyType

    return [MappingProxyType(m) for m in messages]


def test_read_only_mappings_are_accepted() -> None:
    assert summarize("history", _mapping_messages(CONVERSATION)) == summarize("history", CONVERSATION)


# --- summary quality ---------------------------------------------------------------------------


def _section(summary: str, heading: str) -> list[str]:
    lines = summary.split("\n")
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return [line for line in lines[start:end] if line.strip()]


def test_a_decision_restated_in_other_words_is_kept_once() -> None:
    out = summarize(messages=[
        user("why are we using appendMessage and not queueMessage for this?"),
        assistant(text("The fix is simple: use `queueMessage` instead of `appendMessage` when streaming.\n\n"
                       "If `isStreaming`, use `queueMessage` instead of `appendMessage`.\n\n"
                       "In `executeBash`, if `isStreaming`, queue the message instead of appending it.")),
        user("and the cache?"),
        assistant(text("We decided to keep the cache in memory rather than on disk.")),
        assistant(text("We decided to keep the cache in memory rather than on the disk, as agreed.")),
    ])
    decisions = _section(out, "## Key Decisions")
    assert len(decisions) == 2, decisions
    assert "queueMessage" in decisions[0] and "cache" in decisions[1]


def test_distinct_decisions_stay_apart() -> None:
    out = summarize(messages=[
        user("pick the tools"),
        assistant(text("We will use `httpx` instead of requests. We decided to go with `ruff` rather than flake8.")),
    ])
    decisions = _section(out, "## Key Decisions")
    assert len(decisions) == 2 and "httpx" in decisions[0] and "ruff" in decisions[1]


@pytest.mark.parametrize("answer", [
    "Done. Here's a summary of what was accomplished:\n\n1. Moved the parser to `core/` and updated imports.",
    "Done! Here is a quick summary:\n- Moved the parser to `core/` and updated imports.",
    "Perfect. All done. Moved the parser to `core/` and updated imports.",
    "Done - moved the parser to `core/` and updated imports.",
])
def test_done_items_carry_the_content_not_the_preamble(answer: str) -> None:
    out = summarize(messages=[user("move the parser into core please"), assistant(text(answer))])
    done = _section(out, "### Done")
    assert done and all("summary" not in item.lower() and not re.match(r"- \[x\] (?:done|perfect)\b", item, re.I)
                        for item in done), done
    assert any("parser to `core/`" in item for item in done), done


def test_commands_and_wrapped_fragments_are_not_constraints() -> None:
    out = summarize(messages=[user(
        "run this and tell me what you see:\n\n"
        "grep -rn \"must\" src/ | head -20\n\n"
        "rg --only-matching 'never' docs/ 2>&1 | sort\n\n"
        "suggest how we can\n\n- remove any duplication\n- locations where those modules should go\n\n"
        " Error: 400 {\"type\":\"error\",\"error\":{\"message\":\"messages.236: `tool_use` ids were found without\n"
        " ids were found without `tool_result` blocks immediately after: toolu_019tYDrbzifrra2KYzmYq. Each\n"
        " `tool_use` block must have a corresponding `tool_result` block in the next\n message.\"}}\n\n"
        "- never push to main\n"
        "Tests must pass before every commit."
    )])
    constraints = _section(out, "## Constraints & Preferences")
    assert constraints == ["- never push to main", "- Tests must pass before every commit."], constraints


def test_real_session_summary_quality() -> None:
    """The same checks on a real session: no restated decisions, preambles, commands or fragments."""
    import pikit

    messages = pikit.load(SESSIONS / "before-compaction.jsonl").context().messages
    out = summarize(messages=messages)
    decisions = _section(out, "## Key Decisions")
    assert sum("queueMessage" in d for d in decisions) == 1, decisions
    done = _section(out, "### Done")
    assert not [d for d in done if re.match(r"- \[x\] done\b", d, re.I) or "here's a summary" in d.lower()], done
    constraints = _section(out, "## Constraints & Preferences")
    assert not [c for c in constraints if c[2:3].islower() or "|" in c or c.startswith("- grep")], constraints


# --- reading a previous summary: one handler per kind of line ---------------------------------


@pytest.mark.parametrize(("line", "in_code", "in_files", "kind"), [
    ("```python", False, False, "fence"),
    ("~~~", True, False, "fence"),
    ("x = 1", True, False, "skip"),
    ("", False, False, "skip"),
    ("---", False, False, "skip"),
    ("<read-files>", False, False, "file_tag"),
    ("</modified-files>", False, True, "file_tag"),
    ("src/a.py", False, True, "file"),
    ("## Goal", False, False, "heading"),
    ("**Turn Context (split turn):**", False, False, "turn"),
    ("|---|:---:|", False, False, "table_rule"),
    ("| a | b |", False, False, "table_row"),
    ("- an item", False, False, "item"),
    ("plain text", False, False, "item"),
])
def test_summary_lines_are_classified(line: str, in_code: bool, in_files: bool, kind: str) -> None:
    from pikit.llm._offline.parse import _classify, _Parser

    assert _classify(line, in_code, in_files) == kind
    assert callable(getattr(_Parser(), f"_{kind}"))


def test_a_table_header_row_is_not_an_item() -> None:
    from pikit.llm._offline.parse import _parse_notes

    notes = _parse_notes("## Key Decisions\n| Decision | Why |\n|---|---|\n| Use httpx | async |\n")
    assert notes.decisions == ["Use httpx — async"]


def test_opinions_are_not_constraints_and_guesses_are_not_decisions() -> None:
    out = summarize(messages=[
        user("alright, i think there's only one file left to fix up, read it in full.\n"
             "i don't tink the component invalidate works correctly.\n"
             "Invalid themes must never crash the app."),
        assistant(text("I bet VS Code is detecting a light theme, which would use the darker cyan instead. "
                       "We decided to load themes lazily instead of at startup.")),
    ])
    assert _section(out, "## Constraints & Preferences") == ["- Invalid themes must never crash the app."]
    decisions = _section(out, "## Key Decisions")
    assert len(decisions) == 1 and "load themes lazily" in decisions[0], decisions


def test_offline_handoff_format_is_deterministic_and_in_codex_sections() -> None:
    from pikit.compaction import SummaryRequest as Request
    from pikit.llm import OfflineSummarizer as Offline

    messages = [
        {"role": "user", "content": "Fix the failing login test in tests/auth.py; never touch the database schema."},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "read",
                                           "arguments": {"path": "tests/auth.py"}}]},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": [{"type": "text", "text": "ok"}],
         "isError": False},
        {"role": "user", "content": "Now add a test for the logout path."},
    ]
    request = Request("history", "", messages, format="handoff")
    first = Offline().summarize(request).text
    assert first == Offline().summarize(request).text
    headings = [line for line in first.splitlines() if line.startswith("## ")]
    assert headings == ["## Active Task", "## Progress So Far", "## Next Steps",
                        "## Key Context, Constraints & Preferences", "## Completed Tasks"]
    assert first.splitlines()[1] == "Now add a test for the logout path."
    assert "never touch the database schema" in first
    assert "`tests/auth.py`" in first
