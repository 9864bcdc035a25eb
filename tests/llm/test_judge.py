"""A model as the judge of what a compaction kept, through real local servers of both protocols, and
``pikit evaluate --judge``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit.cli import main
from pikit.compaction import Evaluation
from pikit.errors import SummarizerError
from pikit.llm import judge
from tests.compaction.test_evaluation import _session
from tests.llm.servers import MALFORMED, TEST_KEY, FakeLLMServer, Step, status
from tests.llm.test_probes import SUMMARY, _client, _user_prompt, compacted  # noqa: F401  (the fixture)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=["openai", "anthropic"])
def server(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY" if request.param == "openai" else "ANTHROPIC_API_KEY", TEST_KEY)
    with FakeLLMServer(request.param, api_key=TEST_KEY) as fake:
        yield fake


def _held(flags: list[bool]) -> Step:
    return Step("ok", text=json.dumps({"held": flags}))


def _evaluation() -> tuple[pikit.Session, Evaluation]:
    session = _session(SUMMARY)
    evaluation = pikit.evaluate(session, "c9")
    assert isinstance(evaluation, Evaluation) and evaluation.judged_by is None
    return session, evaluation


def test_the_verdicts_are_the_models(server: FakeLLMServer) -> None:
    session, evaluation = _evaluation()
    flags = [i % 2 == 0 for i in range(len(evaluation.facts))]
    server.script(_held(flags))
    with _client(server) as client:
        judged = judge(session, evaluation, client=client)
    assert judged.kept == flags and judged.facts == evaluation.facts
    assert judged.judged_by == f"{server.wire}/test-model"
    assert evaluation.kept != flags  # the deterministic evaluation is left as it was
    prompt = _user_prompt(server, 0)
    assert SUMMARY in prompt and "Thanks, go on." in prompt                   # the context after the compaction
    assert f"1. [{evaluation.facts[0].kind}] {evaluation.facts[0].text}" in prompt


def test_many_facts_take_several_calls(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from pikit.llm import _judge

    monkeypatch.setattr(_judge, "FACTS_PER_CALL", 5)
    session, evaluation = _evaluation()
    count = len(evaluation.facts)
    calls = -(-count // 5)
    server.script(*(_held([True] * min(5, count - 5 * i)) for i in range(calls)))
    with _client(server) as client:
        assert judge(session, evaluation, client=client).kept == [True] * count
    assert len(server.requests) == calls > 1


@pytest.mark.parametrize("failure", [status(500), MALFORMED, _held([True]), Step("ok", text='{"held": ["yes"]}')],
                         ids=["http-500", "malformed-json", "too-few-verdicts", "not-booleans"])
def test_a_failed_call_raises(server: FakeLLMServer, failure: Step) -> None:
    session, evaluation = _evaluation()
    server.script(failure)
    with _client(server) as client, pytest.raises(SummarizerError) as caught:
        judge(session, evaluation, client=client)
    assert TEST_KEY not in str(caught.value)


def _run(capsys: pytest.CaptureFixture[str], server: FakeLLMServer, path: Path, *flags: str) -> tuple[int, str, str]:
    base = server.base_url if server.wire == "openai" else server.base_url.removesuffix("/v1")
    code = main(["evaluate", str(path), "--judge", f"{server.wire}/test-model", "--base-url", base,
                 "--retries", "0", "--json", *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_holds_the_models_verdicts(server: FakeLLMServer, compacted: Path,  # noqa: F811
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", str(compacted), "--json"]) == 0
    [plain] = json.loads(capsys.readouterr().out)["compactions"]
    assert plain["judgedBy"] is None
    server.script(_held([True] * len(plain["facts"])))
    code, out, err = _run(capsys, server, compacted)
    [item] = json.loads(out)["compactions"]
    assert code == 0 and err == ""
    assert item["judgedBy"] == f"{server.wire}/test-model"
    assert [f["kept"] for f in item["facts"]] == [True] * len(plain["facts"]) and item["keyRecall"] == 1.0
    assert [f["text"] for f in item["facts"]] == [f["text"] for f in plain["facts"]]


def test_cli_failure_keeps_pikits_verdicts(server: FakeLLMServer, compacted: Path,  # noqa: F811
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", str(compacted), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    server.script(status(500))
    code, out, err = _run(capsys, server, compacted, "--timeout", "0.5")
    assert code == 0 and json.loads(out) == plain
    assert err.count("\n") == 1 and err.startswith("pikit: the judge of compaction 'c9' failed, pikit's verdicts")
    assert TEST_KEY not in out + err


def test_cli_judge_model_without_provider_is_one_line(compacted: Path,  # noqa: F811
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", str(compacted), "--judge", "gpt-4o-mini"])
    _, err = capsys.readouterr()
    assert code == 1 and err.count("\n") == 1 and "--judge" in err
