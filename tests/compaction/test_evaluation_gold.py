"""pikit's evaluation against a careful reader's: the gold set in ``tests/data/lab-gold`` (its README says how
it was labelled and how to label more).

Every fact pikit reports for a gold compaction must be labelled there; on the labelled facts pikit's kept/lost
verdicts must agree with the reader's, its fact lists must stay clean, and every key fact the reader found
must still be reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit.compaction import Evaluation
from tests.conftest import REPO

GOLD = Path(__file__).parents[1] / "data" / "lab-gold"
#: The sessions whose summaries a model wrote or were written for the sample (not generated from templates).
REWORDED = ("shared:before-compaction.jsonl", "data/sample_sessions/refactor-auth.jsonl")
"""The sessions whose summaries reword (a model wrote them, or they were written for the sample), beside every
public recording."""


def _reworded(reference: str) -> bool:
    return reference in REWORDED or reference.startswith("public:")


@dataclass
class _Compaction:
    name: str
    head: dict[str, Any]
    facts: dict[tuple[str, str], dict[str, Any]]
    missed: list[dict[str, Any]] = field(default_factory=list)


def _read(path: Path) -> _Compaction:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    head, records = lines[0], lines[1:]
    return _Compaction(path.stem, head, {(r["kind"], r["text"]): r for r in records if not r.get("missed")},
                       [r for r in records if r.get("missed")])


def _gold() -> list[_Compaction]:
    return [_read(path) for path in sorted((GOLD / "gold").glob("*.jsonl"))]


def _session(reference: str, shared: Path) -> pikit.Session:
    if reference.startswith("shared:"):
        return pikit.load(shared / reference.removeprefix("shared:"))
    if reference.startswith("public:"):
        return pikit.load(GOLD / "public" / reference.removeprefix("public:"))
    return pikit.load(REPO / reference)


def _readings(compaction: _Compaction) -> tuple[str, ...]:
    """The readings a record needs: both, except for a public recording whose second reading is still to come."""
    pending = compaction.head.get("readingB") == "pending"
    assert not pending or compaction.head["session"].startswith("public:"), \
        f"{compaction.name}: only a public recording may wait for reading B"
    return ("a",) if pending else ("a", "b")


def _kappa(pairs: list[tuple[bool, bool]]) -> float:
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    expected = sum((sum(a == v for a, _ in pairs) / n) * (sum(b == v for _, b in pairs) / n) for v in (True, False))
    return (observed - expected) / (1 - expected)


@pytest.fixture(scope="module")
def judged(shared_sessions: Path) -> list[tuple[_Compaction, Evaluation]]:
    out = []
    for gold in _gold():
        evaluation = pikit.evaluate(_session(gold.head["session"], shared_sessions), gold.head["compaction"])
        assert isinstance(evaluation, Evaluation)
        out.append((gold, evaluation))
    return out


def test_the_gold_set_covers_thirty_compactions_read_twice() -> None:
    gold = _gold()
    assert len([compaction for compaction in gold if _readings(compaction) == ("a", "b")]) >= 30
    for compaction in gold:
        for reading in ("a", "b"):
            path = GOLD / "readings" / reading / f"{compaction.name}.jsonl"
            assert path.is_file() == (reading in _readings(compaction)), f"{compaction.name}: reading {reading}"
        if _readings(compaction) == ("a",):
            assert _read(GOLD / "readings" / "a" / f"{compaction.name}.jsonl") == compaction, \
                f"{compaction.name}: a record waiting for its second reading is reading A"
        for record in compaction.facts.values():
            assert record["label"] in ("kept", "lost", "not-a-fact")
            assert record["label"] == "not-a-fact" or record["importance"] in ("key", "minor")


@pytest.mark.parametrize(("session", "readings"), [
    ("public:recording.jsonl", ("a",)), ("shared:before-compaction.jsonl", None),
    ("data/sample_sessions/refactor-auth.jsonl", None)])
def test_only_a_public_recording_may_wait_for_its_second_reading(session: str,
                                                                  readings: tuple[str, ...] | None) -> None:
    waiting = _Compaction("waiting", {"session": session, "compaction": "c0ffee00", "readingB": "pending"}, {})
    if readings is None:
        with pytest.raises(AssertionError, match="only a public recording may wait"):
            _readings(waiting)
    else:
        assert _readings(waiting) == readings
    assert _readings(_Compaction("read", {"session": session, "compaction": "c0ffee00"}, {})) == ("a", "b")


def test_every_public_recording_is_listed_with_its_licence() -> None:
    sources = (GOLD / "public" / "SOURCES.md").read_text(encoding="utf-8")
    for compaction in _gold():
        if compaction.head["session"].startswith("public:"):
            recording = GOLD / "public" / compaction.head["session"].removeprefix("public:")
            assert recording.is_file() and recording.with_suffix(".LICENSE").is_file(), recording.name
            assert f"`{recording.name}`" in sources, recording.name


def test_every_reported_fact_is_labelled(judged: list[tuple[_Compaction, Evaluation]]) -> None:
    unlabelled = [(gold.name, f.kind, f.text) for gold, evaluation in judged for f in evaluation.facts
                  if (f.kind, f.text) not in gold.facts]
    assert not unlabelled, f"label these facts (tests/data/lab-gold/README.md says how): {unlabelled[:10]}"


def _pairs(judged: list[tuple[_Compaction, Evaluation]]) -> list[tuple[bool, bool]]:
    """(the reader's kept, pikit's kept) for every reported fact the reader labelled kept or lost."""
    return [(gold.facts[f.kind, f.text]["label"] == "kept", kept) for gold, evaluation in judged
            for f, kept in zip(evaluation.facts, evaluation.kept, strict=True)
            if gold.facts.get((f.kind, f.text), {}).get("label") in ("kept", "lost")]


@pytest.mark.parametrize(("which", "accuracy_bar", "kappa_bar"), [
    ("all", 0.96, 0.90), ("reworded", 0.87, 0.73), ("generated", 0.99, 0.98)])
def test_kept_and_lost_agree_with_the_reader(judged: list[tuple[_Compaction, Evaluation]], which: str,
                                             accuracy_bar: float, kappa_bar: float) -> None:
    """On the whole set, on the summaries a model wrote or that were written for the sample (which reword), and on
    the generated ones (which repeat their templates)."""
    chosen = [(gold, e) for gold, e in judged
              if which == "all" or _reworded(gold.head["session"]) == (which == "reworded")]
    pairs = _pairs(chosen)
    accuracy = sum(a == b for a, b in pairs) / len(pairs)
    assert accuracy >= accuracy_bar, f"accuracy {accuracy:.3f} over {len(pairs)} facts"
    assert _kappa(pairs) >= kappa_bar, f"Cohen's kappa {_kappa(pairs):.3f} over {len(pairs)} facts"


def test_key_recall_is_the_readers(judged: list[tuple[_Compaction, Evaluation]]) -> None:
    pairs = [(gold.facts[f.kind, f.text]["label"] == "kept", kept) for gold, evaluation in judged
             for f, kept in zip(evaluation.facts, evaluation.kept, strict=True)
             if gold.facts.get((f.kind, f.text), {}).get("importance") == "key"
             and gold.facts[f.kind, f.text]["label"] != "not-a-fact"]
    reader, rules = (sum(flags) / len(pairs) for flags in zip(*pairs, strict=True))
    assert abs(reader - rules) <= 0.05, f"key recall {rules:.3f} by pikit's rules, {reader:.3f} by the reader"


def test_few_reported_facts_are_noise(judged: list[tuple[_Compaction, Evaluation]]) -> None:
    reported = [(gold, f) for gold, evaluation in judged for f in evaluation.facts]
    noise = [f.text for gold, f in reported if gold.facts.get((f.kind, f.text), {}).get("label") == "not-a-fact"]
    assert len(noise) <= 0.12 * len(reported), f"{len(noise)} of {len(reported)} reported facts are noise"


def test_every_gold_key_fact_is_still_reported(judged: list[tuple[_Compaction, Evaluation]]) -> None:
    missing = [(gold.name, kind, text) for gold, evaluation in judged
               for (kind, text), record in gold.facts.items()
               if record.get("importance") == "key" and record["label"] != "not-a-fact"
               and (kind, text) not in {(f.kind, f.text) for f in evaluation.facts}]
    assert not missing, missing[:10]


@pytest.mark.parametrize(("kind", "what"), [("task", "a user task"), ("decision", "a stated choice")])
def test_a_task_and_a_choice_are_reported_where_the_reader_found_one(
        judged: list[tuple[_Compaction, Evaluation]], kind: str, what: str) -> None:
    found = [gold for gold, _ in judged
             if any(r["kind"] == kind and r["label"] != "not-a-fact" for r in [*gold.facts.values(), *gold.missed])]
    assert found, f"the gold set holds no compaction with {what}"
    silent = [gold.name for gold, evaluation in judged if gold in found
              and not any(f.kind == kind for f in evaluation.facts)]
    assert not silent, f"{what} the reader found, no {kind} fact reported: {silent}"
