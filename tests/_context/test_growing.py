"""A projection grown entry by entry is the projection of the path so far (``pikit._context.growing``)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from pikit import ProjectedEntry, Projection
from pikit._context.growing import GrowingProjection
from pikit._context.projection import entry_messages, project_path
from tests.compaction.test_preparation import build, conversations


def _shape(proj: Projection) -> list[tuple[Any, list[dict[str, Any]], Any, list[int]]]:
    return [(pe.id, pe.messages, pe.edit.id if pe.edit is not None else None, pe.estimates) for pe in proj.entries]


@st.composite
def _edited_ahead(draw: Any) -> list[dict[str, Any]]:
    """Conversations whose context edits may also target an entry that comes after them."""
    entries: list[dict[str, Any]] = draw(conversations())
    for i, entry in enumerate(entries):
        if entry["type"] == "context_edit" and i + 1 < len(entries) and draw(st.booleans()):
            entry["targetId"] = entries[draw(st.integers(i + 1, len(entries) - 1))]["id"]
    return entries


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_edited_ahead())
def test_every_prefix_is_the_projection_of_the_path_so_far(entries: list[dict[str, Any]]) -> None:
    branch = build(entries).branch()
    alone, shared = GrowingProjection(), GrowingProjection()
    for n, entry in enumerate(branch, 1):
        plain = None if entry.type in ("compaction", "context_edit") else \
            ProjectedEntry(entry, entry_messages(entry), None, True)
        alone.append(entry)
        shared.append(entry, plain)  # (the caller's plain form, used where no edit applies)
        expected = project_path(branch[:n])
        for grown in (alone, shared):
            got = grown.projection()
            assert _shape(got) == _shape(expected)
            assert (got.leaf_id, got.model, got.thinking_level) == (expected.leaf_id, expected.model,
                                                                     expected.thinking_level)
            assert grown.compaction is expected.compaction
            assert grown.system_messages == [msg for pe in expected.entries for msg in pe.messages
                                             if msg.get("role") == "system"]
            assert grown.other_tokens == sum(e for pe in expected.entries
                                             for msg, e in zip(pe.messages, pe.estimates, strict=True)
                                             if msg.get("role") != "system")
            assert (got.tokens, got.size, got.system_message) == \
                (expected.tokens, expected.size, expected.system_message)
