"""The compactions' windows follow the model facts: a models.json written or changed later is read on the next scan."""

from __future__ import annotations

import json
from pathlib import Path

from corpora import assistant, header, user, write

from pikit.corpus import Corpus

DAY = "2026-11-02T"


def _models_json(agent: Path, window: int) -> None:
    (agent / "models.json").write_text(json.dumps({"providers": {"acme": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
        "models": [{"id": "m1", "contextWindow": window}]}}}))


def _corpus(root: Path) -> None:
    reply = assistant("a1", "u1", f"{DAY}08:01:00.000Z", 90_000)
    reply["message"]["provider"], reply["message"]["model"] = "acme", "m1"
    write(root / "--nowhere--" / "2026-11-02T08-00-00-000Z_s1.jsonl", header("s1", cwd="/nonexistent/app"),
          user("u1", None, f"{DAY}08:00:00.000Z", "go"), reply,
          {"type": "compaction", "id": "c1", "parentId": "a1", "timestamp": f"{DAY}08:02:00.000Z",
           "summary": "## Goal", "firstKeptEntryId": "a1", "tokensBefore": 90_000})


def test_a_models_json_written_later_gives_the_windows_on_the_next_scan(tmp_path: Path, agent_dir: Path) -> None:
    agent = agent_dir  # (the session's cwd names no folder: no project settings)
    root, index = tmp_path / "sessions", tmp_path / "index.duckdb"
    _corpus(root)
    columns = ["context_window", "reserve_tokens", "threshold", "over_threshold"]
    unknown = ["context_window", "threshold", "over_threshold"]
    with Corpus.open(root, index=index) as corpus:  # a model nothing states: unknown, no threshold
        assert corpus.compactions[unknown].isna().all(axis=None)
    _models_json(agent, 100_000)
    with Corpus.open(root, index=index) as corpus:  # no session file changed, the facts did
        assert corpus.compactions[columns].iloc[0].tolist() == [100_000, 16_384, 83_616, 6_384]
    _models_json(agent, 200_000)
    with Corpus.open(root, index=index) as corpus:
        assert corpus.compactions[columns].iloc[0].tolist() == [200_000, 16_384, 183_616, -93_616]
    (agent / "models.json").unlink()
    with Corpus.open(root, index=index) as corpus:
        assert corpus.compactions[unknown].isna().all(axis=None)
