"""``pikit evaluate``: the JSON contract, the readable table of lost facts, one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pikit.cli import main
from tests.compaction.test_evaluation import HEADER, _span
from tests.entries import compaction, session_of, user


def _write(path: Path, entries: list[dict]) -> Path:
    session_of(HEADER, entries)  # the entries load
    path.write_text("\n".join(json.dumps(e) for e in [HEADER, *entries]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def compacted(tmp_path: Path) -> Path:
    summary = "ran pytest; changed src/app.py"
    entries = [*_span(), compaction("c9", "u2", 9, "u2", summary=summary, tokens_before=5000)]
    return _write(tmp_path / "c.jsonl", entries)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json(compacted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "evaluate", str(compacted), "--json")
    assert code == 0 and err == ""
    [item] = json.loads(out)["compactions"]
    assert list(item) == ["id", "strategy", "model", "tokensBefore", "tokensAfter", "tokensSaved", "estimatedBefore",
                          "compression",
                          "keyRecall", "recall", "judgedBy", "facts"]
    assert item["judgedBy"] is None
    key = [f["kept"] for f in item["facts"] if f["importance"] == "key"]
    assert item["keyRecall"] == sum(key) / len(key) and {f["importance"] for f in item["facts"]} == {"key", "minor"}
    assert item["id"] == "c9" and item["strategy"] == "pi" and item["tokensBefore"] == 5000
    assert item["tokensSaved"] == 5000 - item["tokensAfter"]
    assert item["recall"]["modified_file"] == 1 and item["recall"]["read_file"] == 0
    assert {"kind": "modified_file", "importance": "key", "text": "src/app.py", "source": "a2",
            "kept": True} in item["facts"]
    assert set(item["recall"]) == {"overall", *{f["kind"] for f in item["facts"]}}


def test_plain_lists_the_lost_facts(compacted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "evaluate", str(compacted))
    assert code == 0
    assert re.match(r"compaction c9 \(pi, anthropic/claude\): \d+ of \d+ key facts kept \(\d+%\); \d+ of \d+ facts "
                    r"in all \(\d+%\)", out.splitlines()[0])
    assert "  lost (" in out and "key facts first" in out
    assert re.search(r"^    read_file +minor +a1 +/repo/src/loader\.py$", out, re.MULTILINE)
    lost = out.split("lost (")[1].splitlines()[1:]
    assert [line.split()[1] for line in lost] == sorted((line.split()[1] for line in lost), key=lambda w: w != "key")
    assert "src/app.py" not in out.split("lost (")[1]


def test_one_compaction_and_all(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entries = [*_span(), compaction("c9", "u2", 9, "u2"), user("side", "r3", 10, "other branch")]
    path = _write(tmp_path / "b.jsonl", entries)
    code, _, err = _run(capsys, "evaluate", str(path))
    assert code == 1 and err.count("\n") == 1
    assert "has no compaction: nothing to evaluate (--all evaluates every compaction in the file)" in err
    code, out, _ = _run(capsys, "evaluate", str(path), "--all", "--json")
    assert code == 0 and [c["id"] for c in json.loads(out)["compactions"]] == ["c9"]
    code, out, _ = _run(capsys, "evaluate", str(path), "--compaction", "c9", "--json")
    assert code == 0 and [c["id"] for c in json.loads(out)["compactions"]] == ["c9"]


def test_not_a_compaction_is_one_line(compacted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "evaluate", str(compacted), "--compaction", "a1")
    assert code == 1 and out == ""
    assert err == "pikit: error: entry a1 is a message entry, not a compaction: pass --compaction the id of a " \
                  "compaction entry\n"
    code, _, err = _run(capsys, "evaluate", str(compacted), "--compaction", "nope")
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err


def test_nothing_compacted_in_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "n.jsonl", _span())
    code, _, err = _run(capsys, "evaluate", str(path), "--all")
    assert code == 1 and err.endswith("holds no compaction: nothing to evaluate\n")
