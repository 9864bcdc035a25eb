"""``pikit mcp``: the SDK's own client against the server as a subprocess, on the sample corpus."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.corpus.corpora import header, user, write

pytest.importorskip("mcp")

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample_corpus" / "sessions"
SESSION = "13b16623"  # a sample session with a compaction, a long context and a branch
SESSION_FILE = next(SAMPLE.rglob(f"*_{SESSION}-*.jsonl"))
TOKEN = "ghp_" + "Zq8rT2mW9xK4vB7nL1pY6cD3fH5jS0aE2gU8"  # a planted GitHub token


def _client(root: Path, index: Path, *extra: str) -> Callable[[Callable[[Any], Awaitable[Any]]], Any]:
    """Run ``work(session)`` with an initialized client of ``pikit mcp ROOT`` (a real subprocess)."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    def run(work: Callable[[Any], Awaitable[Any]]) -> Any:
        async def main() -> Any:
            params = StdioServerParameters(command=sys.executable, args=["-m", "pikit", "mcp", str(root), "--index",
                                                                         str(index), *extra])
            async with stdio_client(params) as (read, write_), ClientSession(read, write_) as session:
                await session.initialize()
                with anyio.fail_after(300):
                    return await work(session)

        # In a thread of its own: a test that ran before in this worker may have left an event loop
        # running in the main thread (a notebook's kernel client does), where anyio.run would refuse.
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(anyio.run, main).result()

    return run


def _cli(*args: str) -> Any:
    done = subprocess.run([sys.executable, "-m", "pikit", *args, "--json"], capture_output=True, timeout=300,
                          check=True)
    return json.loads(done.stdout)


async def _answer(session: Any, name: str, arguments: dict[str, Any]) -> Any:
    """A tool's answer, its parts joined when it came in parts."""
    result = await session.call_tool(name, arguments)
    assert not result.is_error, result.content
    found = result.structured_content
    assert json.loads(result.content[0].text) == found
    if "parts" not in found:
        return found
    pieces = [found["json"]]
    for part in range(1, found["parts"]):
        more = await session.call_tool(name, {**arguments, "part": part})
        assert more.structured_content["part"] == part
        pieces.append(more.structured_content["json"])
    return {"parts": found["parts"], "answer": json.loads("".join(pieces))}


@pytest.mark.slow
def test_the_tools_answer_as_the_commands_do(tmp_path: Path) -> None:
    index = tmp_path / "index.duckdb"
    leaf = _cli("info", str(SESSION_FILE))["leaf"]
    compaction = _cli("evaluate", str(SESSION_FILE))["compactions"][0]["id"]
    calls = {
        "sessions": ({"limit": 200}, ["sessions", str(SAMPLE), "--index", str(index)]),
        "search": ({"query": "migration", "limit": 5}, ["search", str(SAMPLE), "migration", "--limit", "5",
                                                         "--index", str(index)]),
        "usage": ({"by": "day,model"}, ["usage", str(SAMPLE), "--by", "day,model", "--index", str(index)]),
        "problems": ({}, ["problems", str(SAMPLE), "--index", str(index)]),
        "tree": ({"session": SESSION}, ["info", str(SESSION_FILE)]),
        "compactions": ({"session": SESSION}, ["evaluate", str(SESSION_FILE)]),
        "show": ({"session": SESSION, "entry": compaction}, ["show", str(SESSION_FILE), compaction]),
        "diff": ({"session": SESSION, "compaction": compaction}, ["diff", str(SESSION_FILE), "--compaction",
                                                                  compaction]),
        "context": ({"session": SESSION, "leaf": leaf}, ["context", str(SESSION_FILE), "--leaf", leaf]),
    }

    async def work(session: Any) -> dict[str, Any]:
        tools = (await session.list_tools()).tools
        assert sorted(t.name for t in tools) == sorted(calls)
        for tool in tools:
            assert tool.output_schema["type"] == "object" and tool.output_schema["properties"], tool.name
            assert tool.input_schema["type"] == "object" and tool.annotations.read_only_hint
        return {name: await _answer(session, name, arguments) for name, (arguments, _) in calls.items()}

    answers = _client(SAMPLE, index)(work)
    for name, (_, argv) in calls.items():
        expected = _cli(*argv)
        found = answers[name]
        if name == "context":  # the sample's long context is larger than one answer: it comes in parts
            assert found["parts"] > 1
            found = found["answer"]
        if name in ("sessions", "problems"):
            assert found.pop("nextOffset") is None
        assert found == expected, name


def test_pages_errors_and_resources(tmp_path: Path) -> None:
    async def work(session: Any) -> dict[str, Any]:
        first = await _answer(session, "sessions", {"limit": 2})
        second = await _answer(session, "sessions", {"limit": 2, "offset": first["nextOffset"]})
        wrong = await session.call_tool("tree", {"session": "no-such-session"})
        outside = await session.call_tool("tree", {"session": str(ROOT / "data" / "sample_sessions" /
                                                                  "quick-tour.jsonl")})
        listed = await session.list_resources()
        text = (await session.read_resource(f"pikit://session/{SESSION}")).contents[0].text
        return {"first": first, "second": second, "wrong": wrong, "outside": outside, "listed": listed,
                "text": text}

    got = _client(SAMPLE, tmp_path / "index.duckdb")(work)
    assert len(got["first"]["sessions"]) == 2 and got["first"]["nextOffset"] == 2
    assert {s["sessionId"] for s in got["first"]["sessions"]}.isdisjoint(s["sessionId"]
                                                                         for s in got["second"]["sessions"])
    for key in ("wrong", "outside"):
        assert got[key].is_error and "no session of this corpus" in got[key].content[0].text
    assert len(got["listed"].resources) == 37 and all(str(r.uri).startswith("pikit://session/")
                                                      for r in got["listed"].resources)
    assert got["text"].startswith("# ") and "What the model sees" in got["text"]


def test_redact_applies_to_every_answer(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    write(root / "a.jsonl", header("secret-session"),
          user("u1", None, "2026-11-02T10:00:00.000Z", f"deploy with {TOKEN} please"),
          user("u2", "u1", "2026-11-02T10:01:00.000Z", "and the deploy log"))

    def every_answer(*extra: str) -> str:
        async def work(session: Any) -> str:
            out = [await _answer(session, "sessions", {}), await _answer(session, "search", {"query": "deploy"}),
                   await _answer(session, "tree", {"session": "secret"}),
                   await _answer(session, "show", {"session": "secret", "entry": "u1"}),
                   await _answer(session, "context", {"session": "secret"})]
            text = (await session.read_resource("pikit://session/secret-session")).contents[0].text
            return json.dumps(out) + text

        return str(_client(root, tmp_path / f"index{len(extra)}.duckdb", *extra)(work))

    assert TOKEN in every_answer()
    redacted = every_answer("--redact")
    assert TOKEN not in redacted and TOKEN[:12] not in redacted and "[REDACTED:github-token:" in redacted
