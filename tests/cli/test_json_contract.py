"""docs/json.md documents every key of the ``--json`` contract, and nothing else.

Each command runs on the bundled samples; the keys of every object the contract defines
(the top-level object and the objects nested in it, but not the session data passed
through: messages, entries, maps keyed by ids) must be exactly the keys listed in the
tables of that command's section of docs/json.md.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pikit import jsjson
from pikit._tree.refresh import BranchSwitch
from pikit.cli import _json
from pikit.cli._json import watch as watch_json
from pikit.cli._watch_status import Status
from tests.llm.servers import FakeLLMServer
from tests.llm.test_probes import PHASES
from tests.procs import pikit as run_pikit

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "json.md"
SAMPLES = REPO / "data" / "sample_sessions"
CORPUS = REPO / "data" / "sample_corpus" / "sessions"
QUICK, REFACTOR, DAMAGED = SAMPLES / "quick-tour.jsonl", SAMPLES / "refactor-auth.jsonl", SAMPLES / "damaged.jsonl"

#: (arguments after the command, the paths of the contract's objects in its output) per run of each documented
#: command; ``*`` stands for every value of an object or every item of an array. ``{tmp}`` is the test's folder,
#: ``{probes}`` the base URL of a local OpenAI-protocol server answering the probes of the first compaction (those
#: of the next fail: its answers are not the JSON the probes ask for).
RUNS: dict[str, list[tuple[list[str], list[str]]]] = {
    "pikit context": [(["context", str(QUICK)], ["", "leaves.*"])],
    "pikit diff": [(["diff", str(QUICK), "1527c10e", "ddc79522"], ["", "totals", "rows.*"]),
                   (["diff", str(REFACTOR), "--compaction", "f6135720"], ["", "totals", "rows.*"])],
    "pikit show": [(["show", str(QUICK), "1d4d"], [""]), (["show", str(REFACTOR), "f6135720"], [""])],
    "pikit tree": [(["tree", str(QUICK)], [""])],
    "pikit redact": [(["redact", str(QUICK), "-o", "{tmp}/redacted.jsonl", "--redact-pattern", "auth"], [""])],
    "pikit info": [(["info", str(DAMAGED)], ["", "problems.*"])],
    "pikit compact --dry-run": [(["compact", str(QUICK), "--dry-run", "--keep-recent-tokens", "100,100000"],
                                 ["", "leaves.*.*"])],
    "pikit compact": [(["compact", str(QUICK), "--keep-recent-tokens", "100", "-o", "{tmp}/compacted.jsonl"], [""])],
    "pikit branch-summary --dry-run": [(["branch-summary", str(QUICK), "--pair", "47eca65e:1527c10e", "--dry-run"],
                                        ["", "pairs.*"])],
    "pikit branch-summary": [(["branch-summary", str(QUICK), "--pair", "47eca65e:1527c10e", "-o",
                               "{tmp}/summarized.jsonl"], [""])],
    "pikit simulate": [(["simulate", str(REFACTOR), "--context-window", "8000,16384", "--reserve-tokens", "3000",
                         "--keep-recent-tokens", "6000"],  # a runaway and overflows at 8,000
                        ["", "runs.*", "runs.*.totals", "runs.*.totals.runawayAt", "runs.*.events.*",
                         "runs.*.trace.*", "runs.*.overflows.*", "thresholds.*"]),
                       (["simulate", str(REFACTOR), "--context-window", "16384", "--reserve-tokens", "3000",
                         "--keep-recent-tokens", "4000", "--strategy", "pi,pi-percent,none,codex-inline,"
                         "mask-observations,mask-at-threshold,truncate", "--keep-turns", "2", "--threshold", "0.7"],
                        ["", "runs.*", "runs.*.totals", "runs.*.totals.cost", "runs.*.events.*", "runs.*.trace.*",
                         "runs.*.commonGround", "runs.*.commonGround.points.*", "thresholds.*"])],
    "pikit evaluate": [(["evaluate", str(REFACTOR)], ["", "compactions.*", "compactions.*.facts.*"]),
                       (["evaluate", str(REFACTOR), "--probes", "openai/probe-model", "--base-url", "{probes}",
                         "--retries", "0"],
                        ["", "compactions.*", "compactions.*.probes", "compactions.*.probes.questions.*"])],
    "pikit settings": [(["settings", "--settings", "{tmp}/settings.json", "--model", "p/m"],
                        ["", "effective", "effective.sources", "branchSummary"])],
    "pikit watch": [(["watch", str(REFACTOR), "--idle-exit", "0", "--context-window", "16384"],
                     ["", "lastCompaction"])],
    "pikit models": [(["models", "openai-codex/gpt-6.2-sol"], ["", "cost", "cost.tiers.*"]),
                     (["models", "opus-4-5", "--agent-dir", "{tmp}"], ["", "models.*", "models.*.cost"])],
    "pikit sessions": [(["sessions", str(CORPUS), "--index", "{tmp}/index.duckdb"], ["", "sessions.*"])],
    "pikit usage": [(["usage", str(CORPUS), "--by", "month", "--index", "{tmp}/index.duckdb"],
                     ["", "rows.*", "totals"]),
                    (["usage", str(CORPUS), "--by", "session", "--split", "branch", "--index", "{tmp}/index.duckdb"],
                     ["", "rows.*", "totals"]),
                    (["usage", str(CORPUS), "--by", "day,model", "--index", "{tmp}/index.duckdb"],
                     ["", "rows.*", "totals"]),
                    (["usage", str(CORPUS), "--by", "month,session,project", "--index", "{tmp}/index.duckdb"],
                     ["", "rows.*", "totals"]),
                    (["usage", str(CORPUS), "--by", "week,model", "--index", "{tmp}/index.duckdb"],
                     ["", "rows.*", "totals"])],
    "pikit problems": [(["problems", str(CORPUS), "--index", "{tmp}/index.duckdb"], ["", "problems.*"])],
    "pikit search": [(["search", str(CORPUS), "migration", "--limit", "3", "--index", "{tmp}/index.duckdb"],
                      ["", "hits.*"])],
}


def documented() -> dict[str, set[str]]:
    """Per command section of docs/json.md (``## `pikit …```), the keys in the first column of its tables."""
    sections: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        heading = re.fullmatch(r"## `(pikit [^`]+)`", line)
        if heading:
            current = sections.setdefault(heading.group(1), set())
        elif line.startswith("## "):
            current = None
        elif current is not None:
            row = re.match(r"\| `([A-Za-z]+)` \|", line)
            if row:
                current.add(row.group(1))
    return sections


def objects(value: Any, path: str) -> Iterator[dict[str, Any]]:
    """The objects at ``path`` (dotted keys, ``*`` for every value or item) in ``value``; nulls skipped."""
    found = [value]
    for step in filter(None, path.split(".")):
        deeper: list[Any] = []
        for item in found:
            if step == "*":
                deeper.extend(item.values() if isinstance(item, dict) else item)
            elif isinstance(item, dict) and step in item:
                deeper.append(item[step])
        found = deeper
    yield from (item for item in found if item is not None)


def emitted(command: str, tmp_path: Path, probes: str = "") -> set[str]:
    """Every key of the contract's objects in the runs of ``command`` on the samples."""
    keys: set[str] = set()
    for argv, paths in RUNS[command]:
        args = [a.replace("{tmp}", str(tmp_path)).replace("{probes}", probes) for a in argv]
        done = run_pikit(*args, "--json", timeout=120, cwd=tmp_path,
                         extra_env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "TZ": "UTC"})
        assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
        lines = done.stdout.splitlines()
        assert lines, command
        for line in lines:
            out = jsjson.loads(line)
            for path in paths:
                objs = list(objects(out, path))
                assert objs, (command, path)
                for obj in objs:
                    keys.update(obj)
    return keys


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    path = tmp_path / "settings.json"
    overrides = {"p/m": {"keepRecentTokens": 5}}
    path.write_text(json.dumps({"compaction": {"reserveTokens": 3000, "modelOverrides": overrides},
                                "branchSummary": {"reserveTokens": 2048}}), encoding="utf-8")
    return path


def test_every_documented_command_is_checked() -> None:
    assert set(documented()) == set(RUNS)


@pytest.mark.timeout(300)
@pytest.mark.usefixtures("settings_file")
@pytest.mark.parametrize("command", list(RUNS))
def test_the_doc_lists_exactly_the_keys_each_command_prints(command: str, tmp_path: Path) -> None:
    with FakeLLMServer("openai") as server:
        server.script(*PHASES)
        keys = emitted(command, tmp_path, server.base_url)
    if command == "pikit watch":  # a change's event: not in a one-shot run, so from the shape itself
        for reading in (Status(None, 0, 0, 1, 1, False, 0, None, None, "", reloaded="rewritten"),
                        Status(None, 0, 0, 1, 1, False, 0, None, None, "", branch_switch=BranchSwitch("a", None))):
            event = watch_json.status(reading)["event"]
            assert event is not None
            keys.update(event)
    doc = documented()[command]
    assert sorted(keys - doc) == [], f"keys {command} prints that docs/json.md does not list"
    assert sorted(doc - keys) == [], f"keys docs/json.md lists for {command} that it does not print"


def test_every_family_module_points_to_the_doc() -> None:
    names = [m.name for m in pkgutil.iter_modules(_json.__path__)]
    assert sorted(names) == ["compaction", "context", "corpus", "diff", "evaluation", "models", "redact", "search",
                             "tree", "watch"]
    for name in names:
        module = importlib.import_module(f"pikit.cli._json.{name}")
        assert module.__doc__ is not None and "docs/json.md" in module.__doc__, name
