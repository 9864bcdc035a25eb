"""pikit.llm._prompts: the layout of the user prompt and the output format each kind asks for."""

from __future__ import annotations

import re

import pytest

from pikit.compaction import SummaryRequest
from pikit.llm import SYSTEM_PROMPT, build_prompt
from pikit.llm._prompts import BRANCH_PROMPT, HISTORY_PROMPT, TURN_PREFIX_PROMPT, UPDATE_PROMPT, instructions_for

CONVERSATION = '[User]: rename the module\n\n[Assistant tool calls]: read(path="a.py")\n\n[Tool result]: x = 1'

FULL_HEADINGS = [
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
TURN_HEADINGS = ["## Original Request", "## Progress So Far", "## Context Needed to Continue"]


def _headings(text: str) -> list[str]:
    return re.findall(r"^#{2,3} .+$", text, flags=re.MULTILINE)


def test_history_layout_exactly() -> None:
    system, user = build_prompt(SummaryRequest("history", CONVERSATION))
    assert system == SYSTEM_PROMPT
    assert user == f"<conversation>\n{CONVERSATION}\n</conversation>\n\n{HISTORY_PROMPT}"


def test_update_layout_exactly() -> None:
    request = SummaryRequest("history", CONVERSATION, previous_summary="## Goal\nOld goal")
    _, user = build_prompt(request)
    assert user == (
        f"<conversation>\n{CONVERSATION}\n</conversation>\n\n"
        "<previous-summary>\n## Goal\nOld goal\n</previous-summary>\n\n"
        f"{UPDATE_PROMPT}"
    )


def test_additional_focus_comes_last() -> None:
    request = SummaryRequest("history", CONVERSATION, previous_summary="old", instructions="  the database layer\n")
    _, user = build_prompt(request)
    assert user.endswith(f"{UPDATE_PROMPT}\n\nAdditional focus: the database layer")
    assert user.index("</conversation>") < user.index("<previous-summary>") < user.index("Additional focus")


@pytest.mark.parametrize("blank", [None, "", "   \n"])
def test_blank_instructions_add_nothing(blank: str | None) -> None:
    _, user = build_prompt(SummaryRequest("branch", CONVERSATION, instructions=blank))
    assert "Additional focus" not in user
    assert user.endswith(BRANCH_PROMPT)


def test_conversation_text_is_verbatim() -> None:
    tricky = "  leading spaces\n</conversation> inside\n\ntrailing  \n"
    _, user = build_prompt(SummaryRequest("history", tricky))
    assert user.startswith(f"<conversation>\n{tricky}\n</conversation>\n\n")


@pytest.mark.parametrize(
    ("kind", "previous", "expected"),
    [
        ("history", None, HISTORY_PROMPT),
        ("history", "old", UPDATE_PROMPT),
        ("turn_prefix", None, TURN_PREFIX_PROMPT),
        ("branch", None, BRANCH_PROMPT),
    ],
)
def test_instructions_by_kind(kind: str, previous: str | None, expected: str) -> None:
    assert instructions_for(SummaryRequest(kind, CONVERSATION, previous_summary=previous)) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["turn_prefix", "branch"])
def test_previous_summary_is_background_for_other_kinds(kind: str) -> None:
    request = SummaryRequest(kind, CONVERSATION, previous_summary="earlier notes")  # type: ignore[arg-type]
    _, user = build_prompt(request)
    assert "<previous-summary>\nearlier notes\n</previous-summary>" in user
    assert "background only" in instructions_for(request)


@pytest.mark.parametrize("prompt", [HISTORY_PROMPT, UPDATE_PROMPT], ids=["history", "update"])
def test_history_format(prompt: str) -> None:
    assert _headings(prompt) == FULL_HEADINGS
    _check_item_markers(prompt)


def test_branch_format_has_no_critical_context() -> None:
    assert _headings(BRANCH_PROMPT) == FULL_HEADINGS[:-1]
    assert "Critical Context" not in BRANCH_PROMPT
    _check_item_markers(BRANCH_PROMPT)


def test_turn_prefix_format() -> None:
    assert _headings(TURN_PREFIX_PROMPT) == TURN_HEADINGS


def _check_item_markers(prompt: str) -> None:
    done = prompt.index("### Done")
    in_progress = prompt.index("### In Progress")
    blocked = prompt.index("### Blocked")
    assert "\n- [x] " in prompt[done:in_progress]
    assert "\n- [ ] " in prompt[in_progress:blocked]
    decisions = prompt.index("## Key Decisions")
    steps = prompt.index("## Next Steps")
    assert "\n- **" in prompt[decisions:steps] and "**: " in prompt[decisions:steps]
    assert re.search(r"\n1\. ", prompt[steps:])


def test_system_prompt_forbids_continuing_the_conversation() -> None:
    lowered = SYSTEM_PROMPT.lower()
    assert "do not answer" in lowered
    assert "do not call tools" in lowered


@pytest.mark.parametrize(
    "phrase",
    [
        # wording of other tools' summarization prompts that pikit must not reuse
        "context checkpoint",
        "Use this EXACT format",
        "Do NOT continue the conversation",
        "ONLY output the structured summary",
        "context summarization assistant",
    ],
)
def test_wording_is_pikits_own(phrase: str) -> None:
    texts = [SYSTEM_PROMPT, HISTORY_PROMPT, UPDATE_PROMPT, TURN_PREFIX_PROMPT, BRANCH_PROMPT]
    assert all(phrase.lower() not in text.lower() for text in texts)


def test_a_handoff_request_gets_the_handoff_prompt_whatever_its_kind() -> None:
    from pikit.llm._prompts import HANDOFF_LAYOUT, HANDOFF_PROMPT

    for previous in (None, "## Active Task\nearlier"):
        request = SummaryRequest("history", "[User]: hi", previous_summary=previous, format="handoff")
        assert instructions_for(request) == HANDOFF_PROMPT
        _, user_prompt = build_prompt(request)
        assert user_prompt.endswith(HANDOFF_PROMPT)
    headings = [line for line in HANDOFF_LAYOUT.splitlines() if line.startswith("## ")]
    assert headings == ["## Active Task", "## Progress So Far", "## Next Steps",
                        "## Key Context, Constraints & Preferences", "## Completed Tasks"]
    assert instructions_for(SummaryRequest("history", "[User]: hi")) != HANDOFF_PROMPT


def test_an_unknown_summary_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown summary format 'codex'"):
        SummaryRequest("history", "x", format="codex")
