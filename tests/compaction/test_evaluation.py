"""Evaluating compactions: the facts of a replaced span, kept or lost, for every kind of fact."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

import pikit
from pikit import compaction as pc
from pikit.compaction import FACT_KINDS, Evaluation, Fact, evaluate_span, extract_facts
from pikit.compaction._kept import normalize
from pikit.errors import EntryError
from tests.entries import asst, call, compaction, session_of, text, tool_result, user

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/repo"}

#: One fact of every kind planted in the replaced span, with the text a summary keeping it would hold.
PLANTED = {
    "task": "Please update the loader.",
    "decision": "We'll use a dict instead of a list, because lookups are faster.",
    "finding": "1 failed",
    "progress": "Fixed the port parsing in the loader.",
    "read_file": "src/loader.py",  # read as /repo/src/loader.py: kept by its path relative to cwd
    "modified_file": "src/app.py (changed)",
    "command": "pytest -q tests/test_loader.py",
    "error": "FAILED tests/test_loader.py::test_parse - KeyError: 'port'",
    "identifier": "planted_helper",
    "constraint": "You must never touch setup.cfg.",
    "number": "3.14.2",
    "url": "https://example.com/docs/page",
}


def _span() -> list[dict[str, Any]]:
    return [
        user("u1", None, 1, "Please update the loader. Its helper is `planted_helper`. You must never touch setup.cfg. "
                            "See https://example.com/docs/page for version 3.14.2."),
        asst("a1", "u1", 2, [call("c1", "read", path="/repo/src/loader.py")]),
        tool_result("r1", "a1", 3, text("def load(): ...")),
        asst("a2", "r1", 4, [*text("We'll use a dict instead of a list, because lookups are faster."),
                             call("c2", "edit", path="src/app.py", oldText="x = 1", newText="y = 2")]),
        tool_result("r2", "a2", 5, text("edited"), name="edit"),
        asst("a3", "r2", 6, [call("c3", "bash", command="pytest  -q\n tests/test_loader.py")]),
        tool_result("r3", "a3", 7, text("FAILED tests/test_loader.py::test_parse - KeyError: 'port'\n1 failed"),
                    name="bash", isError=True),
        asst("a4", "r3", 8, text("Fixed the port parsing in the loader.")),
        user("u2", "a4", 9, "Thanks, go on."),
    ]


def _session(summary: str) -> pikit.Session:
    return session_of(HEADER, [*_span(), compaction("c9", "u2", 10, "u2", summary=summary, tokens_before=5000)])


def _evaluation(summary: str) -> Evaluation:
    result = pikit.evaluate(_session(summary), "c9")
    assert isinstance(result, Evaluation)
    return result


def test_every_kind_is_planted_once() -> None:
    facts = _evaluation("").facts
    assert {f.kind for f in facts} == set(FACT_KINDS)
    by_kind = {f.kind: f for f in facts}
    assert by_kind["read_file"] == Fact("read_file", "/repo/src/loader.py", "a1", "minor")
    assert by_kind["command"] == Fact("command", "pytest -q tests/test_loader.py", "a3", "key")
    assert by_kind["task"] == Fact("task", PLANTED["task"], "u1", "key")
    assert by_kind["finding"].source == "r3" and by_kind["progress"].source == "a4"
    assert by_kind["error"].source == "r3"
    assert by_kind["constraint"].text == "You must never touch setup.cfg."


@pytest.mark.parametrize("kind", FACT_KINDS)
def test_a_planted_fact_is_lost_when_the_summary_omits_it(kind: str) -> None:
    others = " ".join(t for k, t in PLANTED.items() if k != kind and t not in PLANTED[kind])
    evaluation = _evaluation(f"## Goal\n{others}")
    lost = {f.kind for f in evaluation.lost}
    assert kind in lost
    assert evaluation.recall[kind] == 0.0


@pytest.mark.parametrize("kind", FACT_KINDS)
def test_a_planted_fact_is_kept_when_the_summary_holds_it(kind: str) -> None:
    evaluation = _evaluation(f"## Goal\n{PLANTED[kind]}")
    assert evaluation.recall[kind] == 1.0
    assert kind not in {f.kind for f in evaluation.lost}


def test_matching_is_normalized() -> None:
    summary = ("Files changed: ./SRC/App.py and src\\loader.py; ran `pytest -q   tests/test_loader.py`; "
               "the user said “you must NEVER touch setup.cfg.”; PLANTED_HELPER; https://example.com/docs/page/")
    recall = _evaluation(summary).recall
    for kind in ("read_file", "modified_file", "command", "identifier", "constraint", "url"):
        assert recall[kind] == 1.0, kind
    assert normalize("20,000", "number") == "20000" and normalize("./src//a.py", "read_file") == "src/a.py"
    assert _evaluation("port 20,000").recall["number"] == 0.0
    numbers = evaluate_span([("x", {"role": "user", "content": "about 20000 and 4_096"})],
                            [{"role": "user", "content": "20,000 or 4096"}], tokens_before=2, tokens_after=1,
                            strategy="test")
    assert numbers.recall == {"overall": 1.0, "number": 1.0}


def test_whole_words_only() -> None:
    recall = _evaluation("planted_helpers, version 3.14.25").recall
    assert recall["identifier"] == 0.0 and recall["number"] == 0.0


def test_figures_and_kept_context() -> None:
    evaluation = _evaluation("nothing")
    assert evaluation.tokens_before == 5000
    assert evaluation.tokens_after == evaluation.tokens_before - evaluation.tokens_saved
    # the compression ratio is in one unit, Pi's estimate on both sides: not the recorded tokensBefore (5000)
    # over an estimate after
    estimated = sum(_session("nothing").context("u2").estimates)
    assert evaluation.estimated_before == estimated != 5000
    assert evaluation.compression == pytest.approx(estimated / evaluation.tokens_after)
    assert evaluation.replaced_ids == ["u1", "a1", "r1", "a2", "r2", "a3", "r3", "a4"]
    assert evaluation.strategy == "pi" and evaluation.model == "anthropic/claude"
    # A fact the kept messages hold survives without the summary: the constraint is kept verbatim.
    kept = evaluate_span([("x", {"role": "user", "content": "You must keep the plan."})],
                         [{"role": "user", "content": "You must keep the plan."}], tokens_before=10, tokens_after=5,
                         strategy="test")
    assert kept.recall == {"overall": 1.0, "constraint": 1.0}


def test_previous_summary_is_part_of_the_span() -> None:
    entries = [*_span(), compaction("c9", "u2", 10, "u2", summary="kept `old_name`\n\n<modified-files>\nlib/x.py\n"
                                                                 "</modified-files>"),
               user("u3", "c9", 10, "more"), asst("a4", "u3", 11, text("ok")),
               compaction("c10", "a4", 12, "u3", summary="fresh start")]
    session = session_of(HEADER, entries)
    second = pikit.evaluate(session, "c10")
    assert isinstance(second, Evaluation)
    lost = {(f.kind, f.text, f.source) for f in second.lost}
    assert ("modified_file", "lib/x.py", "c9") in lost
    assert ("identifier", "old_name", "c9") in lost
    both = pikit.evaluate(session)
    assert [e.compaction_id for e in both] == ["c9", "c10"]  # type: ignore[union-attr]


def test_bad_input_is_an_entry_error() -> None:
    session = _session("s")
    with pytest.raises(EntryError, match="u1 is a message entry, not a compaction"):
        pikit.evaluate(session, "u1")
    with pytest.raises(EntryError, match="has no compaction"):
        pikit.evaluate(session_of(HEADER, _span()))


def test_a_compaction_pikit_ran() -> None:
    from pikit.llm import OfflineSummarizer

    session = session_of(HEADER, _span())
    result = pc.build_compaction(session, keep_recent_tokens=1, summarizer=OfflineSummarizer())
    evaluation = pikit.evaluate(session, result)
    assert isinstance(evaluation, Evaluation) and evaluation.strategy == "pikit"
    assert evaluation.tokens_before == result.tokens_before and evaluation.tokens_after == result.tokens_after
    assert evaluation.recall["modified_file"] == 1.0  # the file lists are appended to every summary
    assert evaluation.facts


def test_repr_and_card_escape_session_text() -> None:
    entries = [user("u1", None, 1, "Use `<script>x</script>` only <b>here</b>."), user("u2", "u1", 2, "ok"),
               compaction("c9", "u2", 3, "u2", summary="")]
    evaluation = pikit.evaluate(session_of(HEADER, entries), "c9")
    assert isinstance(evaluation, Evaluation)
    assert repr(evaluation).startswith("<Evaluation of 'c9' (pi): 0/")
    card = evaluation._repr_html_()
    assert "<script>" not in card and "<b>here" not in card
    assert html.escape("<b>here</b>.", quote=True) in card


def test_a_compaction_whose_parent_is_an_object_is_evaluated_as_a_first_entry() -> None:
    """A parent id no entry can have (an object) links to nothing: the compaction has no context before it."""
    entries = [user("u1", None, 1, "Please update the loader."), compaction("c9", {"id": "u1"}, 2, "u1")]
    evaluation = pikit.evaluate(session_of(HEADER, entries), "c9")
    assert isinstance(evaluation, Evaluation) and evaluation.facts == []


@pytest.mark.parametrize("name", ["before-compaction", "compaction-chain", "retain-none", "system-replay"])
def test_shared_sessions_evaluate(shared_sessions: Path, name: str) -> None:
    session = pikit.load(shared_sessions / f"{name}.jsonl")
    evaluations = pikit.evaluate(session)
    assert isinstance(evaluations, list) and evaluations
    for evaluation in evaluations:
        assert evaluation.facts and len(evaluation.kept) == len(evaluation.facts)
        assert 0.0 <= (evaluation.recall["overall"] or 0.0) <= 1.0
        evaluation._repr_html_()


def test_the_compression_ratio_is_in_one_unit(shared_sessions: Path) -> None:
    """The recorded tokensBefore of before-compaction.jsonl starts from a request's recorded usage (system prompt and
    tools included); the size after is Pi's estimate. The ratio divides Pi's estimate by Pi's estimate."""
    session = pikit.load(shared_sessions / "before-compaction.jsonl")
    evaluations = pikit.evaluate(session)
    assert isinstance(evaluations, list) and evaluations
    for evaluation in evaluations:
        parent = session.by_id[evaluation.compaction_id].parent_id
        assert evaluation.estimated_before == sum(session.context(parent).estimates)
        assert evaluation.tokens_after == sum(session.context(evaluation.compaction_id).estimates)
        assert evaluation.compression == evaluation.estimated_before / evaluation.tokens_after
        assert evaluation.compression < evaluation.tokens_before / evaluation.tokens_after


_WORDS = st.sampled_from(["fix", "the", "`parse_cfg`", "must", "never", "v1.2.3", "20,000", "4096", "src/a.py",
                          "https://x.org/a", "Error: boom", "only", ".", "\n", "!", "don't", "1.2.3.4.5", "“q”"])
_TEXT = st.lists(_WORDS, max_size=30).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "bash", "error"]), _TEXT), max_size=8))
def test_a_context_that_keeps_the_span_loses_nothing(parts: list[tuple[str, str]]) -> None:
    span: list[tuple[Any, dict[str, Any]]] = []
    for i, (role, body) in enumerate(parts):
        if role == "user":
            message: dict[str, Any] = {"role": "user", "content": body}
        elif role == "assistant":
            message = {"role": "assistant", "content": [{"type": "text", "text": body},
                                                        call("c", "bash", command=body),
                                                        call("d", "edit", path=body[:20] or "p", newText=body)]}
        elif role == "bash":
            message = {"role": "bashExecution", "command": body, "output": body, "exitCode": 1}
        else:
            message = {"role": "toolResult", "content": text(body), "isError": True}
        span.append((f"e{i}", message))
    evaluation = evaluate_span(span, [m for _, m in span], tokens_before=2, tokens_after=1, strategy="all")
    assert evaluation.lost == []
    assert extract_facts(span) == evaluation.facts


def test_texts_outside_ascii_still_reach_every_rule() -> None:
    """The quick checks that skip a pattern (no digit, no error word, no ``http``, no backtick, no tool call)
    leave a text outside ASCII to the patterns, which fold case and read digits beyond ASCII."""
    facts = extract_facts([
        ("u1", {"role": "user", "content": "the port ١٢٣٤ and `naïve_name` at https://例え.jp/x"}),
        ("r1", {"role": "toolResult", "toolName": "bash", "content": [{"type": "text", "text": "ok\nfaıled: é"}],
                "nestedCalls": {"calls": [{"name": "read", "arguments": {"path": "docs/ü.md"}}]}}),
        ("a1", {"role": "assistant", "content": "Done ✓"}),
    ])
    assert [(f.kind, f.text, f.source) for f in facts] == [
        ("error", "faıled: é", "r1"), ("read_file", "docs/ü.md", "r1"), ("identifier", "naïve_name", "u1"),
        ("number", "١٢٣٤", "u1"), ("url", "https://例え.jp/x", "u1")]


def _figures(e: Evaluation) -> tuple[Any, ...]:
    return (e.compaction_id, e.strategy, e.model, e.tokens_before, e.tokens_after, e.estimated_before, e.facts, e.kept,
            e.replaced_ids)


def test_every_compaction_evaluated_along_its_branch_equals_its_own_evaluation() -> None:
    from pikit.compaction._evaluation import recorded_evaluations

    session = session_of(HEADER, [
        user("u1", None, 1, "Rename `first_helper`."),
        asst("a1", "u1", 2, [call("c1", "bash", command="grep -rn first_helper src")]),
        tool_result("r1", "a1", 3, text("FATAL: permission denied on src/vault"), name="bash", isError=True),
        user("u2", "r1", 4, "Then `second_helper`."),
        {"type": "context_edit", "id": "e1", "parentId": "u2", "timestamp": "2026-01-01T00:00:05.000Z",
         "targetId": "u2", "replacement": {"content": "Then `edited_helper`."}},
        compaction("k1", "e1", 6, "u2", summary="Renamed `first_helper`."),
        user("u3", "k1", 7, "Now `third_helper`."),
        compaction("k2", "u3", 8, "u3", summary="Edited."),
        user("v1", "a1", 9, "A fork: `fork_helper`."),
        compaction("k3", "v1", 10, "v1"),
        compaction("k4", "k4", 11, "u1"),  # its own parent
        compaction("k5", "gone", 12, "u1"),  # a missing parent
    ])
    entries = [e for e in session.entries if e.type == "compaction"]
    along = recorded_evaluations(session, entries)
    own = [pikit.evaluate(session, e.id) for e in entries]
    assert [_figures(e) for e in along] == [_figures(e) for e in own]  # type: ignore[arg-type]
    assert {f.text for f in along[0].facts} >= {"first_helper", "FATAL: permission denied on src/vault"}
    branch = pikit.evaluate(session, leaf="k2")
    assert isinstance(branch, list)
    assert [_figures(e) for e in branch] == [_figures(e) for e in own[:2]]  # type: ignore[arg-type]


def test_a_compaction_a_fork_copies_is_evaluated_once() -> None:
    """Sessions that hold a compaction with the same span and context (a session and its fork, which may leave
    out a label) share its facts and verdicts through a :class:`SpanMemo`; a span one byte apart, or a session
    in another folder, is evaluated on its own; every evaluation equals the one made without the memo."""
    from pikit.compaction._evaluation import SpanMemo, recorded_evaluations

    def branch(word: str, label: bool = False) -> list[dict[str, Any]]:
        marked = [{"type": "label", "id": "l1", "parentId": "u1", "timestamp": "2026-01-01T00:00:01.500Z",
                   "targetId": "u1", "label": "start"}] if label else []
        return [user("u1", None, 1, f"Rename `{word}`."), *marked, user("u2", "l1" if label else "u1", 2, "Go on."),
                compaction("k1", "u2", 3, "u2", summary="Renamed it."), user("u3", "k1", 4, "Then `other_name`."),
                compaction("k2", "u3", 5, "u3", summary="Renamed `other_name`.")]

    memo = SpanMemo(frozenset({"k1", "k2"}))
    sessions = [session_of(HEADER, branch("first_name", label=True)),
                session_of({**HEADER, "id": "fork", "parentSession": "/s/one.jsonl"}, branch("first_name")),
                session_of(HEADER, branch("first_nome")),
                session_of({**HEADER, "cwd": "/elsewhere"}, branch("first_name"))]
    results = [recorded_evaluations(s, [e for e in s.entries if e.type == "compaction"], memo) for s in sessions]
    original, fork, changed, moved = results
    assert [a.facts[0] is b.facts[0] for a, b in zip(original, fork, strict=True)] == [True, True]
    # (the changed word is in k1's span only: k2's span and context are the original's)
    assert [a.facts[0] is b.facts[0] for a, b in zip(original, changed, strict=True)] == [False, True]
    assert [a.facts[0] is b.facts[0] for a, b in zip(original, moved, strict=True)] == [False, False]
    assert len(memo.found) == 5
    for session, result in zip(sessions, results, strict=True):
        alone = recorded_evaluations(session, [e for e in session.entries if e.type == "compaction"])
        assert [_figures(e) for e in result] == [_figures(e) for e in alone]
    assert "first_nome" in {f.text for f in changed[0].facts} - {f.text for f in original[0].facts}
    lone = session_of(HEADER, branch("first_\ud800"))  # (no key: JSON cannot hold it; evaluated on its own)
    assert SpanMemo.key([("u1", {"content": "\ud800"})], [], None) is None
    assert [_figures(e) for e in recorded_evaluations(lone, [lone.by_id["k1"]], memo)] == \
        [_figures(e) for e in recorded_evaluations(lone, [lone.by_id["k1"]])]
