"""pikit.evaluate on the compactions a replay simulated: each strategy's event, message by message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit.compaction import CompactionSettings, Evaluation, SimulationEvent, SimulationResult, simulate
from pikit.llm import get_summarizer
from tests.entries import asst, call, session_of, text, tool_result, user
from tests.procs import one_error_line, pikit as run

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/repo"}
SETTINGS = CompactionSettings(True, 3000, 4000, None)


def _session() -> pikit.Session:
    return session_of(HEADER, [
        user("u1", None, 1, "Rename `first_helper` everywhere."),
        asst("a1", "u1", 2, [call("c1", "bash", command="sed -i s/first_helper/x/ src")]),
        tool_result("r1", "a1", 3, text("FATAL: permission denied on src/vault"), name="bash", isError=True),
        user("u2", "r1", 4, "Then rename `second_helper`, and keep `tail_helper` as it is."),
        asst("a2", "u2", 5, text("Done.")),
    ])


def _event(**fields: Any) -> SimulationEvent:
    base: dict[str, Any] = {"after_entry_id": "a2", "branch_index": 4, "tokens_before": 900, "tokens_after": 100,
                            "first_kept_entry_id": "u2", "is_split_turn": False, "summarized_messages": 3,
                            "summary_tokens": 10, "strategy": "test"}
    return SimulationEvent(**{**base, **fields})


def _one(session: pikit.Session, *events: SimulationEvent) -> list[Evaluation]:
    result = SimulationResult("a2", 16384, SETTINGS, events=list(events), strategy="test")
    found = pikit.evaluate(session, result)
    assert isinstance(found, list)
    return found


def _kept(evaluation: Evaluation) -> dict[str, bool]:
    return {f.text: k for f, k in zip(evaluation.facts, evaluation.kept, strict=True)}


def test_replaced_entries_are_the_span_and_the_summary_and_kept_messages_the_context() -> None:
    [e] = _one(_session(), _event(summary="Renamed first_helper.", replaced=("u1", "a1", "r1"), kept=("u2", "a2")))
    assert e.compaction_id == "a2" and e.strategy == "test" and (e.tokens_before, e.tokens_after) == (900, 100)
    facts = _kept(e)
    assert facts["first_helper"] is True  # in the summary
    assert facts["sed -i s/first_helper/x/ src"] is False
    assert facts["FATAL: permission denied on src/vault"] is False
    assert "second_helper" not in facts  # u2 was kept, not replaced


def test_the_cut_middle_of_a_truncated_message_is_lost_and_its_head_and_tail_kept() -> None:
    def kept(tokens: int) -> dict[str, bool]:
        [e] = _one(_session(), _event(summary="s", replaced=("u1", "a1", "r1"), kept=("u2",),
                                      truncated=("u2", tokens)))
        return _kept(e)
    # u2 is 61 bytes; 12 tokens keep its first 24 ("Then rename `second_hel") and its last 24
    assert kept(12) == {"Rename `first_helper` everywhere.": False,
                        "Then rename `second_helper`, and keep `tail_helper` as it is.": False,
                        "first_helper": False, "sed -i s/first_helper/x/ src": False,
                        "FATAL: permission denied on src/vault": False,
                        "second_helper": False, "tail_helper": True}
    assert kept(14)["second_helper"] is True  # 28 bytes from the head hold the first name


def test_a_masked_result_is_replaced_once_and_its_placeholder_holds_nothing() -> None:
    first = _event(masked=("r1",), kept=("u1", "a1", "r1", "u2", "a2"), summarized_messages=1)
    again = _event(masked=("r1",), kept=("u1", "a1", "r1", "u2", "a2"), summarized_messages=1, after_entry_id="x")
    one, two = _one(_session(), first, again)
    assert _kept(one) == {"FATAL: permission denied on src/vault": False}
    assert two.facts == []  # already masked before this compaction: not replaced by it


def test_a_new_summary_replaces_the_previous_one() -> None:
    first = _event(summary="Kept note: `summary_only_name`.", replaced=("u1",), kept=("a1", "r1", "u2", "a2"))
    second = _event(summary="Nothing.", replaced=("a1", "r1"), kept=("u2", "a2"), after_entry_id="a2b")
    _, later = _one(_session(), first, second)
    assert _kept(later)["summary_only_name"] is False
    assert "a2" in later.replaced_ids  # the previous summary's source: the entry its compaction came after


def test_every_strategy_on_the_sample_is_evaluated_per_event(sample_sessions: Path) -> None:
    session = pikit.load(sample_sessions / "refactor-auth.jsonl")
    runs = simulate(session, get_summarizer("offline"), context_window=16384, settings=SETTINGS,
                    strategy=["pi", "codex-inline", "mask-at-threshold", "truncate"], keep_turns=2)
    assert isinstance(runs, list)
    found = pikit.evaluate(session, runs)
    assert isinstance(found, list)
    assert [e.strategy for e in found] == [r.strategy for r in runs for _ in r.events]
    assert [e.compaction_id for e in found] == [ev.after_entry_id for r in runs for ev in r.events]
    codex = [e for e in found if e.strategy == "codex-inline"]
    assert codex and all(e.tokens_after is not None and e.tokens_before is not None for e in codex)
    assert all(set(e.replaced_ids) <= set(session.by_id) for e in found)
    # each evaluation's compression is its event's, in one unit: Pi's estimate before over Pi's estimate after
    events = [ev for r in runs for ev in r.events]
    assert [e.compression for e in found] == [ev.compression for ev in events]
    assert all(e.compression is not None for e in found)


def test_cli_evaluate_strategy(sample_sessions: Path, tmp_path: Path) -> None:
    path = sample_sessions / "refactor-auth.jsonl"
    flags = ["--context-window", "16384", "--reserve-tokens", "3000", "--keep-recent-tokens", "4000"]
    done = run("evaluate", path, "--strategy", "codex-inline,truncate", *flags, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {c["strategy"] for c in data["compactions"]} == {"codex-inline", "truncate"}
    assert all(0 <= c["recall"]["overall"] <= 1 for c in data["compactions"] if c["recall"]["overall"] is not None)
    plain = run("evaluate", path, "--strategy", "codex-inline", *flags)
    assert plain.returncode == 0 and b"(codex-inline, " in plain.stdout
    assert one_error_line(run("evaluate", path, "--strategy", "truncate", "--context-window", "900000"),
                          "simulated no compaction")
    assert one_error_line(run("evaluate", path, "--strategy", "nope", *flags), "unknown --strategy 'nope'")
    assert one_error_line(run("evaluate", path, "--strategy", "pi", "--compaction", "3f00"), "not allowed with")


@pytest.mark.parametrize("flag", [["--threshold", "0"], ["--keep-turns", "-1"]])
def test_cli_evaluate_strategy_settings_are_checked(sample_sessions: Path, flag: list[str]) -> None:
    done = run("evaluate", sample_sessions / "refactor-auth.jsonl", "--strategy", "pi-percent", *flag)
    assert one_error_line(done, f"argument {flag[0]}")


def test_tradeoff_frame_scores_every_replay_on_common_ground_and_the_chart_draws_a_point_each(
        sample_sessions: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from pikit import charts, frames
    from pikit.compaction import common_ground, ground_recall

    session = pikit.load(sample_sessions / "refactor-auth.jsonl")
    runs = [simulate(session, get_summarizer("offline"), context_window=16384, settings=SETTINGS, strategy=name)
            for name in ("pi", "codex-inline", "none")]
    quiet = simulate(session, get_summarizer("offline"), context_window=200_000, settings=SETTINGS, strategy="pi")
    df = frames.strategy_tradeoff(session, [*runs, quiet], labels=["pi", "codex", "none", "pi, large window"])
    assert list(df["label"]) == ["pi", "codex", "none", "pi, large window"]
    facts = set(df["facts"])
    assert len(facts) == 1 and facts.pop() > 0  # one pool for every replay
    for row, replay in zip(df.to_dict("records"), [*runs, quiet], strict=True):
        assert row["recall"] == ground_recall(common_ground(session, replay))
        assert row["input_tokens"] == replay.input_tokens and row["points"] == 8
    assert df["recall"].iloc[2] == 1.0 and df["recall"].iloc[3] == 1.0  # nothing compacted: everything held
    assert 0 < df["recall"].iloc[1] < df["recall"].iloc[0] < 1
    fig = charts.strategy_tradeoff(df)
    points = [c for c in fig.axes[0].collections if c.get_gid() == "tradeoff"]
    assert [len(c.get_offsets()) for c in points] == [1, 1, 1, 1]
    names = [t.get_text() for t in fig.legends[0].get_texts()] if fig.legends else \
        [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    # grouped by strategy, a marker per setting; none's requests over the window said in its name
    assert names == ["pi", "pi: pi, large window", "codex-inline: codex", "none (14 requests over the window)"]
    assert not fig.axes[0].texts  # no label printed on the plot, over another
    with pytest.raises(ValueError, match="labels must name every replay"):
        frames.strategy_tradeoff(session, runs, labels=["one"])
