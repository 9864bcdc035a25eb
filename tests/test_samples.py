"""The project's generated sample sessions: reproducible, clean, and what Pi itself computes.

``PI_ANSWERS`` below was computed once with Pi 1.5.2's own code (the conformance kit's
reference install) over the committed samples; the suite never needs node. To refresh it
after changing the generator, run Pi on the new files (``pi_dump.mjs``, or its
``prepareCompaction`` / ``buildSessionProjection`` / ``collectEntriesForBranchSummary``
directly) and paste the new figures; the digest is the conformance kit's (sha256 of
canonical JSON, first 16 hex digits).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import pikit
from pikit.compaction import collect_branch, prepare_branch, prepare_compaction

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "data" / "sample_sessions"
CLEAN = ["refactor-auth.jsonl", "quick-tour.jsonl", "xss-and-unicode.jsonl", "wide-tree.jsonl"]

MAIN_LEAF = "0ce8fc25"
ABANDONED_LEAF = "10b305af"
STRATEGY_REQUEST = "eb9bf783"
COMPACTIONS = ["3f00573f", "f6135720"]
BRANCH_SUMMARY = "d7511703"
CONTEXT_EDIT = "f4a084d6"

# Pi 1.5.2's answers for the committed samples (keepRecentTokens 4000 where a compaction is prepared).
PI_ANSWERS: dict[str, Any] = {
    "refactor-auth.jsonl": {
        "leaves": {
            ABANDONED_LEAF: {"messages": "490ba317c0736f46", "count": 52, "sources": "fa96e22d60e0526d",
                             "tokens": 11330, "compact": {"firstKeptEntryId": "6ef320c8", "isSplitTurn": True,
                                                          "tokensBefore": 11330,
                                                          "conversationText": "189d9191973bb3f3"}},
            MAIN_LEAF: {"messages": "19cb52da3801a9d3", "count": 59, "sources": "9227d8a318086234", "tokens": 10599,
                        "compact": {"firstKeptEntryId": "346e2115", "isSplitTurn": True, "tokensBefore": 10599,
                                    "conversationText": "fbb722076a8b4cb2"}},
        },
        # prepareCompaction at each compaction's parent entry
        "compactions": {
            "3f00573f": {"firstKeptEntryId": "7848d89e", "isSplitTurn": True, "tokensBefore": 13883,
                         "readFiles": ["docs/auth.md", "package.json", "scripts/seed_users.py", "src/app.ts",
                                       "src/auth/login.ts", "src/auth/logout.ts", "src/auth/middleware.ts",
                                       "src/auth/password.ts", "src/auth/refresh.ts", "src/config.ts",
                                       "src/db/refreshTokens.ts", "tests/auth/login.test.ts",
                                       "tests/auth/refresh.test.ts", "tests/helpers/db.ts"],
                         "modifiedFiles": ["docs/auth-refactor-plan.md"], "conversationText": "7a2194467ec1f548"},
            "f6135720": {"firstKeptEntryId": "96b6bdfb", "isSplitTurn": True, "tokensBefore": 13530,
                         "readFiles": ["docs/auth.md", "package.json", "scripts/seed_users.py", "src/app.ts",
                                       "src/auth/logout.ts", "src/auth/middleware.ts", "src/auth/password.ts",
                                       "src/config.ts", "src/db/pool.ts", "src/db/refreshTokens.ts",
                                       "src/db/users.ts", "tests/auth/login.test.ts", "tests/auth/refresh.test.ts",
                                       "tests/helpers/db.ts"],
                         "modifiedFiles": ["docs/auth-refactor-plan.md", "src/auth/login.ts", "src/auth/refresh.ts",
                                           "src/auth/tokens.ts"], "conversationText": "e7194197fa806dcb"},
        },
        # collectEntriesForBranchSummary(old leaf, selected user message) + prepareBranchEntries(budget 0)
        "branch_summary": {"from": ABANDONED_LEAF, "to": STRATEGY_REQUEST, "commonAncestorId": STRATEGY_REQUEST,
                           "entryIds": "8797406ddb3d0615", "messages": "6b6114dec5e39aaf", "totalTokens": 2835,
                           "readFiles": [],
                           "modifiedFiles": ["src/auth/cookies.ts", "src/auth/login.ts", "src/auth/refresh.ts",
                                             "src/auth/strategies/ApiKeyStrategy.ts",
                                             "src/auth/strategies/AuthStrategy.ts",
                                             "src/auth/strategies/PasswordStrategy.ts",
                                             "src/auth/strategies/RefreshTokenStrategy.ts",
                                             "src/auth/strategies/registry.ts", "src/db/apiKeys.ts"]},
    },
    "quick-tour.jsonl": {
        "leaves": {
            "47eca65e": {"messages": "89020485d007ba7a", "count": 8, "sources": "24f5ecb71fbeeac2", "tokens": 523},
            "1527c10e": {"messages": "816f3a5aec95f5a6", "count": 8, "sources": "e7f2ca0877f94355", "tokens": 574},
        },
    },
}

SUMMARY_HEADINGS = ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress",
                    "### Blocked", "## Key Decisions", "## Next Steps"]


def digest(value: Any) -> str:
    """The conformance kit's digest: sha256 of canonical JSON, first 16 hex digits."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def msg(entry: pikit.Entry) -> dict[str, Any]:
    """The message of a ``message`` entry."""
    message = entry.message
    assert message is not None, entry
    return message


def pikit_json(*args: str) -> Any:
    """Run the ``pikit`` command line and parse its ``--json`` output."""
    done = subprocess.run([sys.executable, "-m", "pikit", *args, "--json"], cwd=REPO, capture_output=True,
                          text=True, encoding="utf-8", timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def load_generator() -> ModuleType:
    """``data/sample_sessions/generate.py`` as a module."""
    spec = importlib.util.spec_from_file_location("sample_sessions_generate", SAMPLES / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    return load_generator()


@pytest.fixture(scope="module")
def regenerated(generator: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("samples")
    return out, generator.main(out)


@pytest.fixture(scope="module")
def story() -> pikit.Session:
    return pikit.load(SAMPLES / "refactor-auth.jsonl")


# --------------------------------------------------------------------------- reproducible
@pytest.mark.parametrize("name", [*CLEAN, "damaged.jsonl"])
def test_regenerating_gives_identical_bytes(regenerated: tuple[Path, dict[str, Any]], name: str) -> None:
    out, _ = regenerated
    committed = SAMPLES / name
    assert committed.exists(), f"{name} is missing: run python data/sample_sessions/generate.py"
    assert (out / name).read_bytes() == committed.read_bytes(), (
        f"{name} differs from a fresh run of generate.py: regenerate the samples (and the README figures)")


def test_generator_reports_the_ids_the_tests_use(regenerated: tuple[Path, dict[str, Any]]) -> None:
    _, marks = regenerated
    story = marks["refactor-auth.jsonl"]
    assert story["main_leaf"] == MAIN_LEAF
    assert story["abandoned_leaf"] == ABANDONED_LEAF
    assert story["strategy_request"] == STRATEGY_REQUEST
    assert story["compactions"] == COMPACTIONS
    assert story["branch_summary"] == BRANCH_SUMMARY
    assert story["context_edit"] == CONTEXT_EDIT
    assert marks["damaged.jsonl"]["damaged_lines"] == [6, 12, 18]


def test_readme_describes_every_sample() -> None:
    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    assert "python data/sample_sessions/generate.py" in readme
    for name in [*CLEAN, "damaged.jsonl"]:
        assert f"`{name}`" in readme
    for entry_id in [MAIN_LEAF, ABANDONED_LEAF, *COMPACTIONS, BRANCH_SUMMARY, CONTEXT_EDIT]:
        assert entry_id in readme


# --------------------------------------------------------------------------- loading
@pytest.mark.parametrize("name", CLEAN)
def test_sample_loads_without_problems(name: str) -> None:
    session = pikit.load(SAMPLES / name)
    assert session.report.ok, session.report.problems
    assert session.header["version"] == 3
    assert len(session.entries) > 10
    ids = [e.id for e in session.entries]
    assert len(ids) == len(set(ids))
    assert all(isinstance(i, str) and len(i) == 8 for i in ids)
    times = [e.time_ms or 0 for e in session.entries]
    assert all(times) and times == sorted(times)  # appended in time order


def test_damaged_sample_reports_exactly_three_lines() -> None:
    path = SAMPLES / "damaged.jsonl"
    before = path.read_bytes()
    damaged = pikit.load(path)
    assert path.read_bytes() == before  # never modified
    lines = damaged.report.damaged_lines
    assert [p.line for p in lines] == [6, 12, 18]
    assert "invalid UTF-8" in lines[1].message
    assert "truncated" in lines[2].message
    assert damaged.report.problems == lines  # nothing else wrong
    tour = pikit.load(SAMPLES / "quick-tour.jsonl")
    assert [e.id for e in damaged.entries] == [e.id for e in tour.entries]
    assert not before.endswith(b"\n")
    with pytest.raises(pikit.DamagedLineError):
        pikit.load(path, strict=True)


# --------------------------------------------------------------------------- the main story
def test_story_has_every_ingredient(story: pikit.Session) -> None:
    entries = story.entries
    assert story.leaf_id == MAIN_LEAF
    assert story.name == "Refactor auth module (shop-api)"
    system = msg(entries[0])
    assert system["role"] == "system" and system["content"] and system["sections"]
    assert [t["name"] for t in system["toolsAdded"]] == ["read", "write", "edit", "bash"]
    changes = [e for e in entries if e.type == "model_change"]
    assert [(e["provider"], e["modelId"]) for e in changes] == [("anthropic", "claude-sonnet-4-5")]
    assert [e["thinkingLevel"] for e in entries if e.type == "thinking_level_change"] == ["medium"]
    kinds = {e.type if e.type != "message" else e.role for e in entries}
    assert {"user", "assistant", "toolResult", "bashExecution", "custom_message", "context_edit", "label",
            "compaction", "branch_summary", "session_info"} <= kinds
    assistants = [msg(e) for e in entries if e.role == "assistant"]
    assert 40 <= len(assistants) <= 80
    blocks = {b["type"] for m in assistants for b in m["content"]}
    assert blocks == {"text", "thinking", "toolCall"}
    tools = {b["name"] for m in assistants for b in m["content"] if b["type"] == "toolCall"}
    assert tools == {"read", "write", "edit", "bash"}
    assert {m["stopReason"] for m in assistants} == {"toolUse", "stop"}
    for m in assistants:
        usage = m["usage"]
        assert usage["totalTokens"] == usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
        assert usage["cost"]["total"] == pytest.approx(sum(usage["cost"][k] for k in
                                                           ("input", "output", "cacheRead", "cacheWrite")))
    failed = [msg(e) for e in entries if e.role == "toolResult" and msg(e)["isError"]]
    assert any("1 failed" in m["content"][0]["text"] for m in failed)  # the failing test, fixed later


def test_story_tree_leaves_and_labels(story: pikit.Session) -> None:
    leaves = [e.id for e in story.entries if not story.children(e.id)]
    assert sorted(leaves) == sorted([MAIN_LEAF, ABANDONED_LEAF])
    assert set(story.labels.values()) == {"checkpoint: tests green", "abandoned: strategy pattern",
                                          "checkpoint: refactor done"}
    assert story.labels[ABANDONED_LEAF] == "abandoned: strategy pattern"
    main = story.branch_ids(MAIN_LEAF)
    assert ABANDONED_LEAF not in main and STRATEGY_REQUEST not in main
    assert [c for c in COMPACTIONS if c in main] == COMPACTIONS
    assert CONTEXT_EDIT in main and story[CONTEXT_EDIT]["targetId"] in main


def test_branch_summary_sits_where_tree_navigation_put_it(story: pikit.Session) -> None:
    summary = story[BRANCH_SUMMARY]
    request = story[STRATEGY_REQUEST]
    assert request.role == "user"
    assert summary["fromId"] == ABANDONED_LEAF
    assert summary.parent_id == request.parent_id  # /tree on a user message: the leaf goes to its parent
    assert BRANCH_SUMMARY in story.branch_ids(MAIN_LEAF)
    text = summary["summary"]
    for heading in SUMMARY_HEADINGS:
        assert heading in text
    assert "## Critical Context" not in text
    entries, ancestor = collect_branch(story, ABANDONED_LEAF, STRATEGY_REQUEST)
    prep = prepare_branch(entries, 0, ancestor)
    read, modified = prep.file_ops.lists()
    assert summary["details"] == {"readFiles": read, "modifiedFiles": modified}
    assert text.endswith(prep.file_lists_text)


@pytest.mark.parametrize("compaction_id", COMPACTIONS)
def test_compactions_are_pikits_own(story: pikit.Session, compaction_id: str) -> None:
    entry = story[compaction_id]
    branch = story.branch(entry.parent_id)
    prep = prepare_compaction(branch, 4000, story.context(entry.parent_id))
    assert prep is not None
    assert entry["firstKeptEntryId"] == prep.first_kept_entry_id
    assert entry["tokensBefore"] == prep.tokens_before
    read, modified = prep.file_ops.lists()
    assert entry["details"] == {"readFiles": read, "modifiedFiles": modified}
    assert entry["summary"].endswith(prep.file_lists_text)
    assert prep.is_split_turn and "**Turn Context (split turn):**" in entry["summary"]
    for heading in [*SUMMARY_HEADINGS, "## Critical Context"]:
        assert heading in entry["summary"]
    assert entry["systemMessage"]["role"] == "system"
    assert entry["usage"]["totalTokens"] > 0


def test_compactions_sit_where_pis_trigger_fires(story: pikit.Session, generator: ModuleType) -> None:
    """At every check point of the main branch (after a tool batch, after a final answer) the
    context is above ``contextWindow - reserveTokens`` exactly where a compaction follows."""
    threshold = generator.CONTEXT_WINDOW - generator.RESERVE_TOKENS
    branch = story.branch(MAIN_LEAF)
    fired = []
    for i, entry in enumerate(branch[:-1]):
        after = branch[i + 1]
        batch_done = entry.role == "toolResult" and after.role != "toolResult"
        answered = entry.role == "assistant" and msg(entry)["stopReason"] == "stop"
        if not (batch_done or answered):
            continue
        over = story.context(entry.id).tokens > threshold
        assert over == (after.type == "compaction"), f"check at {entry.id}"
        if over:
            fired.append(after.id)
            assert story.context(after.id).tokens < threshold / 2  # the sawtooth drops
    assert fired == COMPACTIONS


def test_usage_grows_then_drops_after_each_compaction(story: pikit.Session) -> None:
    branch = story.branch(MAIN_LEAF)
    sizes: list[int] = []
    drops = 0
    for entry in branch:
        if entry.type == "compaction":
            drops += 1
            sizes.append(-1)  # marks the compaction
        elif entry.role == "assistant":
            size = msg(entry)["usage"]["totalTokens"]
            if sizes and sizes[-1] == -1:
                assert size < sizes[-2] * 0.7  # the first call after a compaction sends much less
            sizes.append(size)
    assert drops == 2
    assert max(sizes) > 13_000


# --------------------------------------------------------------------------- the CLI, against Pi
@pytest.mark.parametrize("name", ["refactor-auth.jsonl", "quick-tour.jsonl"])
def test_context_matches_pi(name: str) -> None:
    want = PI_ANSWERS[name]["leaves"]
    args = [a for leaf in want for a in ("--leaf", leaf)]
    got = pikit_json("context", str(SAMPLES / name), *args)["leaves"]
    for leaf, expected in want.items():
        assert len(got[leaf]["messages"]) == expected["count"]
        assert got[leaf]["tokens"] == expected["tokens"], leaf
        assert digest(got[leaf]["sources"]) == expected["sources"], leaf
        assert digest(got[leaf]["messages"]) == expected["messages"], leaf


def test_compact_dry_run_matches_pi(story: pikit.Session) -> None:
    answers = PI_ANSWERS["refactor-auth.jsonl"]
    leaves = {leaf: a["compact"] for leaf, a in answers["leaves"].items()}
    leaves.update({story[c].parent_id: a for c, a in answers["compactions"].items()})
    args = [a for leaf in leaves for a in ("--leaf", leaf)]
    got = pikit_json("compact", str(SAMPLES / "refactor-auth.jsonl"), *args, "--keep-recent-tokens", "4000",
                     "--dry-run")["leaves"]
    for leaf, expected in leaves.items():
        prep = got[leaf]["4000"]
        for key in ("firstKeptEntryId", "isSplitTurn", "tokensBefore", "readFiles", "modifiedFiles"):
            if key in expected:
                assert prep[key] == expected[key], (leaf, key)
        assert digest(prep["conversationText"]) == expected["conversationText"], leaf


def test_branch_summary_dry_run_matches_pi() -> None:
    want = PI_ANSWERS["refactor-auth.jsonl"]["branch_summary"]
    got = pikit_json("branch-summary", str(SAMPLES / "refactor-auth.jsonl"), "--pair",
                     f"{want['from']}:{want['to']}", "--budget", "0", "--dry-run")["pairs"][0]
    assert got["commonAncestorId"] == want["commonAncestorId"]
    assert digest(got["entryIds"]) == want["entryIds"]
    assert digest(got["messages"]) == want["messages"]
    assert got["totalTokens"] == want["totalTokens"]
    assert (got["readFiles"], got["modifiedFiles"]) == (want["readFiles"], want["modifiedFiles"])


def test_tree_json_of_the_story() -> None:
    tree = pikit_json("tree", str(SAMPLES / "refactor-auth.jsonl"))
    assert len(tree["roots"]) == 1
    assert tree["labels"][ABANDONED_LEAF] == "abandoned: strategy pattern"


# --------------------------------------------------------------------------- the other samples
def test_quick_tour_is_small_with_one_branch_and_one_label() -> None:
    tour = pikit.load(SAMPLES / "quick-tour.jsonl")
    assert 10 <= len(tour.entries) <= 16
    assert len([e for e in tour.entries if not tour.children(e.id)]) == 2
    assert len([e for e in tour.entries if len(tour.children(e.id)) > 1]) == 1
    assert list(tour.labels.values()) == ["explained: cartTotal"]


def test_xss_sample_carries_every_hazard() -> None:
    raw = (SAMPLES / "xss-and-unicode.jsonl").read_bytes()
    text = raw.decode("utf-8")
    for needle in ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "&lt;b&gt;", "&amp;", "&#39;",
                   "质量", "ログイン", "로그인", "مرحبا", "שלום", "👩\u200d💻", "\u202e", "\\u001b["]:
        assert needle in text, needle
    assert "\u2028".encode() in raw and "\u2029".encode() in raw  # raw, as JSON.stringify leaves them
    session = pikit.load(SAMPLES / "xss-and-unicode.jsonl")
    assert len(raw.split(b"\n")) - 1 == len(session.entries) + 1  # U+2028 does not split a line
    results = [b for e in session.entries if e.role == "toolResult" for b in msg(e)["content"]]
    assert max(len(b.get("text", "")) for b in results) >= 3000
    contents = [msg(e).get("content") for e in session.entries if e.type == "message"]
    images = [b for c in contents if isinstance(c, list) for b in c if b.get("type") == "image"]
    assert {e["mimeType"] for e in images} == {"image/png"} and len(images) >= 2
    assert base64.b64decode(images[0]["data"]).startswith(b"\x89PNG\r\n\x1a\n")


def test_wide_tree_is_big_bushy_and_deep() -> None:
    path = SAMPLES / "wide-tree.jsonl"
    assert path.stat().st_size < 6_000_000
    tree = pikit.load(path)
    assert len(tree.entries) >= 10_000
    assert len([e for e in tree.entries if not tree.children(e.id)]) >= 50
    assert len(tree.labels) >= 10
    longest = run = 0
    for entry in tree.branch():
        run = run + 1 if len(tree.children(entry.id)) <= 1 else 0
        longest = max(longest, run)
    assert longest >= 300  # a long single-child chain on the active branch
    assert len(tree.branch()) >= 1_000
