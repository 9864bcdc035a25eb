"""Probes of a compaction through real local servers of both protocols, and ``pikit evaluate --probes``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit.cli import main
from pikit.compaction import build_compaction
from pikit.errors import SummarizerError
from pikit.llm import MAX_GRADE, OfflineSummarizer, ProbeResult, probe
from pikit.llm._select import probe_client
from tests.compaction.test_evaluation import HEADER, _session, _span
from tests.entries import compaction
from tests.llm.servers import HANG, MALFORMED, OK, TEST_KEY, FakeLLMServer, Step, status

pytestmark = pytest.mark.timeout(120)  # (a hang guard: a loaded machine is slow)

SUMMARY = "ran pytest; src/app.py"
QUESTIONS = [
    {"kind": "decision", "question": "Which file must stay untouched?", "reference": "setup.cfg"},
    {"kind": "recall", "question": "Which error did the tests end with?",
     "reference": "FAILED tests/test_loader.py::test_parse - KeyError: 'port'"},
    {"kind": "artifact", "question": "Which file was edited?", "reference": "src/app.py"},
    {"kind": "continuation", "question": "Which test still fails?", "reference": "tests/test_loader.py::test_parse"},
]
# The questions come back ordered by kind: recall, artifact, continuation, decision.
ANSWERS = ["unknown", "src/app.py", "src/main.py", "unknown"]
ALONE = ["unknown", "src/app.py", "unknown", "unknown"]
# Abstaining beats a wrong answer: "unknown" gets 1, the wrong continuation answer 0.
GRADES = [1, 5, 0, 1]
ALONE_GRADES = [1, 5, 1, 1]


def _reply(key: str, value: Any) -> Step:
    return Step("ok", text=json.dumps({key: value}))


PHASES = (_reply("questions", QUESTIONS), _reply("answers", ANSWERS), _reply("answers", ALONE),
          _reply("grades", GRADES + ALONE_GRADES))
DEEP = "[" * 100_000 + "]" * 100_000  # deeper than any recursive parser or repr goes
# Answers that once cost the whole evaluation: nesting past the recursion limit, and a code fence
# left open over many lines, which a backtracking expression took minutes to refuse.
HOSTILE = {
    "deep-questions": Step("ok", text='{"questions": ' + DEEP + "}"),
    "deep-kind": Step("ok", text='{"questions": [{"kind": ' + DEEP + ', "question": "q", "reference": "r"}]}'),
    "deep-answer": Step("ok", text='{"answers": [' + DEEP + "]}"),
    "open-fence": Step("ok", text="```json\n" + "\n" * 50_000 + "{"),
}


def _steps(failure: Step) -> tuple[Step, ...]:
    """The replies that reach ``failure``: the answers phase comes after good questions."""
    return (PHASES[0], failure) if failure is HOSTILE["deep-answer"] else (failure,)


@pytest.fixture(params=["openai", "anthropic"])
def server(request: pytest.FixtureRequest) -> Any:
    with FakeLLMServer(request.param, api_key=TEST_KEY) as fake:
        yield fake


def _client(server: FakeLLMServer, **kwargs: Any) -> Any:
    base = server.base_url if server.wire == "openai" else server.base_url.removesuffix("/v1")
    kwargs.setdefault("timeout", 2.0)
    kwargs.setdefault("retries", 0)
    return probe_client(f"{server.wire}/test-model", base_url=base, **kwargs)


def _user_prompt(server: FakeLLMServer, i: int) -> str:
    messages = server.requests[i].body["messages"]
    return str(messages[-1]["content"])


def test_three_phases_and_the_scores(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY" if server.wire == "openai" else "ANTHROPIC_API_KEY", TEST_KEY)
    server.script(*PHASES)
    with _client(server) as client:
        result = probe(_session(SUMMARY), "c9", client=client)

    assert isinstance(result, ProbeResult) and result.compaction_id == "c9"
    assert result.model == f"{server.wire}/test-model"
    assert [p.kind for p in result.probes] == ["recall", "artifact", "continuation", "decision"]
    assert [p.score for p in result.probes] == GRADES
    assert result.records()[1] == {"kind": "artifact", "question": "Which file was edited?",
                                   "reference": "src/app.py", "answer": "src/app.py", "score": 5,
                                   "summaryAnswer": "src/app.py", "summaryScore": 5}
    assert result.scores == {"overall": sum(GRADES) / (4 * MAX_GRADE), "recall": 0.2, "artifact": 1.0,
                             "continuation": 0.0, "decision": 0.2}
    assert result.summary_scores["continuation"] == 0.2 and result.summary_scores["overall"] == 0.4
    assert len(server.requests) == 4
    asked, answered, alone, graded = (_user_prompt(server, i) for i in range(4))
    assert SUMMARY in alone and "Thanks, go on." not in alone                     # the summary alone
    assert "Question 8: Which file must stay untouched?" in graded
    assert "KeyError: 'port'" in asked and "/repo/src/loader.py" in asked       # the replaced span
    assert SUMMARY in answered and "Thanks, go on." in answered                  # the compacted context alone
    assert "KeyError" not in answered and "/repo/src/loader.py" not in answered
    assert "1. Which error did the tests end with?" in answered
    assert "Reference: setup.cfg\nAnswer: unknown" in graded


def test_a_long_span_is_bounded() -> None:
    from pikit.llm import MAX_PROMPT_CHARS
    from pikit.llm._probes import bounded

    text = "a" * 10 + "b" * (3 * MAX_PROMPT_CHARS) + "c" * 10
    cut = bounded(text)
    assert len(cut) < MAX_PROMPT_CHARS + 100 and cut.startswith("a" * 10) and cut.endswith("c" * 10)
    assert "characters left out" in cut and bounded("short") == "short"


def test_without_a_summary_the_summary_answers_are_unknown_without_a_call(server: FakeLLMServer,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from pikit.llm._probes import run_probes

    monkeypatch.setenv("OPENAI_API_KEY" if server.wire == "openai" else "ANTHROPIC_API_KEY", TEST_KEY)
    server.script(PHASES[0], PHASES[1], _reply("grades", [*GRADES, 1, 1, 1, 1]))
    with _client(server) as client:
        result = run_probes([{"role": "user", "content": "x"}],
                            [{"role": "user", "content": "kept"}], client=client)
    assert len(server.requests) == 3
    assert [p.summary_answer for p in result.probes] == ["unknown"] * 4
    assert result.summary_scores["overall"] == 0.2


@pytest.mark.parametrize("failure", [status(500), MALFORMED, OK, _reply("questions", [{"kind": "mood"}]),
                                     *HOSTILE.values()],
                         ids=["http-500", "malformed-json", "prose-not-json", "unknown-kind", *HOSTILE])
def test_a_failed_call_raises(server: FakeLLMServer, failure: Step, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY" if server.wire == "openai" else "ANTHROPIC_API_KEY", TEST_KEY)
    server.script(*_steps(failure))
    with _client(server) as client, pytest.raises(SummarizerError) as caught:
        probe(_session(SUMMARY), "c9", client=client)
    assert TEST_KEY not in str(caught.value)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 200


def test_answers_that_do_not_match_the_questions_raise(server: FakeLLMServer,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY" if server.wire == "openai" else "ANTHROPIC_API_KEY", TEST_KEY)
    server.script(PHASES[0], _reply("answers", ["only one"]))
    with _client(server) as client, pytest.raises(SummarizerError, match="1 answers to 4 questions"):
        probe(_session(SUMMARY), "c9", client=client)


def test_a_hanging_server_meets_the_deadline(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY" if server.wire == "openai" else "ANTHROPIC_API_KEY", TEST_KEY)
    server.script(HANG)
    with _client(server, timeout=0.3) as client, pytest.raises(SummarizerError):
        probe(_session(SUMMARY), "c9", client=client)


def test_the_model_is_named_with_its_provider() -> None:
    with pytest.raises(SummarizerError, match="provider/model in model="):
        probe_client("gpt-4o-mini")


# --- pikit evaluate --probes -----------------------------------------------------------------


@pytest.fixture
def compacted(tmp_path: Path) -> Path:
    path = tmp_path / "c.jsonl"
    entries = [HEADER, *_span(), compaction("c9", "u2", 9, "u2", summary=SUMMARY, tokens_before=5000)]
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n", encoding="utf-8")
    return path


def _evaluate(capsys: pytest.CaptureFixture[str], server: FakeLLMServer, path: Path, *flags: str) -> tuple[int, str,
                                                                                                          str]:
    base = server.base_url if server.wire == "openai" else server.base_url.removesuffix("/v1")
    code = main(["evaluate", str(path), "--probes", f"{server.wire}/test-model", "--base-url", base,
                 "--retries", "0", *flags])
    out, err = capsys.readouterr()
    return code, out, err


def _deterministic(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    assert main(["evaluate", str(path), "--json"]) == 0
    [item] = json.loads(capsys.readouterr().out)["compactions"]
    return dict(item)


def test_cli_json_adds_the_probes(server: FakeLLMServer, compacted: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY" if server.wire == "openai" else "ANTHROPIC_API_KEY", TEST_KEY)
    plain = _deterministic(capsys, compacted)
    server.script(*PHASES)
    code, out, err = _evaluate(capsys, server, compacted, "--json")
    assert code == 0 and err == ""
    [item] = json.loads(out)["compactions"]
    probes = item.pop("probes")
    assert item == plain
    assert list(probes) == ["model", "questions", "scores", "summaryScores"]
    assert probes["model"] == f"{server.wire}/test-model"
    assert [q["score"] for q in probes["questions"]] == GRADES
    assert list(probes["questions"][0]) == ["kind", "question", "reference", "answer", "score", "summaryAnswer",
                                            "summaryScore"]
    assert probes["scores"]["artifact"] == 1.0
    assert TEST_KEY not in out


def test_cli_plain_prints_a_probe_section(server: FakeLLMServer, compacted: Path,
                                          capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY" if server.wire == "openai" else "ANTHROPIC_API_KEY", TEST_KEY)
    server.script(*PHASES)
    code, out, _ = _evaluate(capsys, server, compacted)
    assert code == 0
    assert f"  probes ({server.wire}/test-model): 35% overall from the context, 40% from the summary alone, " \
           "4 questions" in out
    assert "    5/5 5/5  artifact      Which file was edited?" in out


@pytest.mark.parametrize("failure", [status(500), MALFORMED, HANG, *HOSTILE.values()],
                         ids=["http-500", "malformed-json", "timeout", *HOSTILE])
def test_cli_failure_keeps_the_deterministic_result(server: FakeLLMServer, compacted: Path, failure: Step,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY" if server.wire == "openai" else "ANTHROPIC_API_KEY", TEST_KEY)
    plain = _deterministic(capsys, compacted)
    server.script(*_steps(failure))
    code, out, err = _evaluate(capsys, server, compacted, "--json", "--timeout", "0.5")
    assert code == 0
    [item] = json.loads(out)["compactions"]
    probes = item.pop("probes")
    assert item == plain
    assert list(probes) == ["error"] and probes["error"]
    assert err.count("\n") == 1 and err.startswith("pikit: probes of compaction 'c9' failed, the deterministic")
    assert TEST_KEY not in out + err


def test_cli_probe_model_without_provider_is_one_line(compacted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", str(compacted), "--probes", "gpt-4o-mini"])
    _, err = capsys.readouterr()
    assert code == 1 and err.count("\n") == 1 and "--probes" in err


def test_an_evaluation_or_a_compaction_pikit_ran(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY" if server.wire == "openai" else "ANTHROPIC_API_KEY", TEST_KEY)
    session = _session(SUMMARY)
    evaluation = pikit.evaluate(session, "c9")
    ran = build_compaction(session, "u2", keep_recent_tokens=1, summarizer=OfflineSummarizer())
    server.script(*PHASES, *PHASES)
    with _client(server) as client:
        assert probe(session, evaluation, client=client).compaction_id == "c9"
        assert probe(session, ran, client=client).compaction_id == ran.entry["id"]
    assert str(ran.entry["summary"])[:40] in _user_prompt(server, 5)
