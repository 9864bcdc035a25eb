"""Building compaction / branch summary / label / context edit entries, and writing them."""

from __future__ import annotations

import os
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import pikit
from pikit import Entry, Session
from pikit._context.projection import project_path
from pikit.cli._json import compaction as compaction_json
from pikit.compaction import (
    SummaryRequest,
    SummaryResult,
    build_branch_summary,
    build_compaction,
    context_edit_entry,
    label_entry,
    prepare_compaction,
    write_entry,
)
from pikit.compaction._entries import BRANCH_SUMMARY_PREAMBLE
from pikit.errors import EntryError, PikitError, SummarizerError, UnknownEntryError, WriteError
from tests.entries import asst, call, session_of, text, tool_result, usage, user

SPLIT = "\n\n---\n\n**Turn Context (split turn):**\n\n"
HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
COMPACTION_KEYS = ["type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore", "details"]


class Scripted:
    """A summarizer answering ``<kind>#<n>`` and recording every request."""

    name = "scripted"

    def __init__(self, usages: list[dict[str, Any] | None] | None = None, fail_at: int | None = None) -> None:
        self.requests: list[SummaryRequest] = []
        self.usages = usages or []
        self.fail_at = fail_at

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        n = len(self.requests)
        self.requests.append(request)
        if self.fail_at == n:
            raise SummarizerError("scripted failure: the model stopped for length")
        return SummaryResult(f"{request.kind}#{n}", self.usages[n] if n < len(self.usages) else None)


def ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def file_lists(read: list[str], modified: list[str]) -> str:
    blocks = []
    if read:
        blocks.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
    if modified:
        blocks.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
    return "".join("\n\n" + b for b in blocks)


@pytest.fixture(scope="module")
def sample(sample_sessions: Path) -> Session:
    return pikit.load(sample_sessions / "refactor-auth.jsonl")


def small_session() -> Session:
    """Two turns; the first reads and edits files. Estimates: 100 tokens per 400 characters."""
    return session_of(HEADER, [
        user("u1", None, 1, "a" * 400),
        asst("a1", "u1", 2, [call("c1", "read", path="src/a.py"), call("c2", "edit", path="src/b.py"),
                             call("c3", "bash", command="ls")], usage(100, 10)),
        tool_result("t1", "a1", 3, text("x" * 400)),
        asst("a2", "t1", 4, text("done " * 80), usage(300, 10)),
        user("u2", "a2", 5, "b" * 400),
        asst("a3", "u2", 6, text("c" * 400), usage(500, 10)),
    ])


# ---------------------------------------------------------------- build_compaction


def test_compaction_reproduces_the_recorded_one(sample: Session) -> None:
    recorded = sample.entry("3f00573f").data
    leaf = recorded["parentId"]
    summarizer = Scripted([usage(100, 20), usage(7, 3, cache_read=5)])
    result = build_compaction(sample, leaf, keep_recent_tokens=4000, summarizer=summarizer)
    entry = result.entry
    assert list(entry) == [*COMPACTION_KEYS, "usage", "systemMessage"]
    assert entry["type"] == "compaction"
    assert entry["parentId"] == leaf
    assert entry["id"] not in sample.by_id and isinstance(entry["id"], str)
    assert entry["firstKeptEntryId"] == recorded["firstKeptEntryId"] == "7848d89e"
    assert entry["tokensBefore"] == recorded["tokensBefore"] == 13883
    assert entry["details"] == recorded["details"]
    # the same figures as the preparation alone
    prep = prepare_compaction(sample.branch(leaf), 4000)
    assert prep is not None
    assert entry["firstKeptEntryId"] == prep.first_kept_entry_id
    assert entry["tokensBefore"] == prep.tokens_before == result.tokens_before
    assert entry["details"] == {"readFiles": prep.read_files, "modifiedFiles": prep.modified_files}


def test_split_turn_makes_two_calls_and_joins_them(sample: Session) -> None:
    leaf = sample.entry("3f00573f").parent_id
    prep = prepare_compaction(sample.branch(leaf), 4000)
    assert prep is not None and prep.is_split_turn and prep.messages_to_summarize and prep.turn_prefix_messages
    summarizer = Scripted()
    entry = build_compaction(sample, leaf, keep_recent_tokens=4000, summarizer=summarizer).entry
    kinds = [r.kind for r in summarizer.requests]
    assert kinds == ["history", "turn_prefix"]
    history, prefix = summarizer.requests
    assert history.conversation_text == prep.conversation_text
    assert list(history.messages) == prep.messages_to_summarize
    assert history.previous_summary is None
    assert prefix.conversation_text == prep.turn_prefix_text
    assert list(prefix.messages) == prep.turn_prefix_messages
    details = entry["details"]
    assert entry["summary"] == "history#0" + SPLIT + "turn_prefix#1" + file_lists(
        details["readFiles"], details["modifiedFiles"])
    assert "<read-files>\ndocs/auth.md\npackage.json\n" in entry["summary"]
    assert entry["summary"].endswith("\n</read-files>\n\n<modified-files>\ndocs/auth-refactor-plan.md\n"
                                     "</modified-files>")
    assert "usage" not in entry  # the summarizer reported no usage


def test_update_passes_the_previous_summary_and_combines_usage(sample: Session) -> None:
    recorded = sample.entry("f6135720").data
    leaf = recorded["parentId"]
    summarizer = Scripted([usage(100, 20, 30, 40), usage(1, 2, 3, 4)])
    result = build_compaction(sample, leaf, keep_recent_tokens=4000, summarizer=summarizer)
    entry = result.entry
    assert summarizer.requests[0].kind == "history"
    assert summarizer.requests[0].previous_summary == sample.entry("3f00573f").data["summary"]
    assert entry["firstKeptEntryId"] == recorded["firstKeptEntryId"] == "96b6bdfb"
    assert entry["tokensBefore"] == recorded["tokensBefore"]
    assert entry["details"] == recorded["details"]
    assert entry["usage"]["input"] == 101
    assert entry["usage"]["output"] == 22
    assert entry["usage"]["cacheRead"] == 33
    assert entry["usage"]["cacheWrite"] == 44
    assert entry["usage"]["totalTokens"] == 190 + 10
    assert list(entry["usage"]) == ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]


def test_system_message_is_replayed_with_the_entry_timestamp(sample: Session) -> None:
    leaf = sample.entry("f6135720").parent_id
    entry = build_compaction(sample, leaf, keep_recent_tokens=4000, summarizer=Scripted()).entry
    expected = dict(sample.context(leaf).system_message or {})
    assert expected, "the sample has a system message"
    expected["timestamp"] = ms(entry["timestamp"])
    assert entry["systemMessage"] == expected
    assert entry["systemMessage"]["role"] == "system"
    assert sample.entry("5f9194a3").message["content"] in entry["systemMessage"]["content"]  # type: ignore[index]


def test_tokens_after_is_smaller_and_is_the_new_projection(sample: Session) -> None:
    leaf = sample.entry("3f00573f").parent_id
    result = build_compaction(sample, leaf, keep_recent_tokens=4000, summarizer=Scripted())
    assert result.tokens_after < result.tokens_before
    after = project_path([*sample.branch(leaf), Entry(result.entry)])
    assert after.context_ids[0] == result.entry["id"]
    assert after.context_ids[1] == "7848d89e"
    assert result.tokens_after == after.tokens
    assert compaction_json.compaction(result, "out.jsonl") == {
        "entry": result.entry, "tokensBefore": result.tokens_before, "tokensAfter": result.tokens_after,
        "output": "out.jsonl"}


def test_not_split_one_call_with_file_lists() -> None:
    session = small_session()
    summarizer = Scripted([usage(9, 1)])
    result = build_compaction(session, keep_recent_tokens=150, summarizer=summarizer)
    entry = result.entry
    assert [r.kind for r in summarizer.requests] == ["history"]
    assert [m["role"] for m in summarizer.requests[0].messages] == ["user", "assistant", "toolResult", "assistant"]
    assert entry["parentId"] == "a3"
    assert entry["firstKeptEntryId"] == "u2"
    assert entry["details"] == {"readFiles": ["src/a.py"], "modifiedFiles": ["src/b.py"]}
    assert entry["summary"] == ("history#0\n\n<read-files>\nsrc/a.py\n</read-files>"
                                "\n\n<modified-files>\nsrc/b.py\n</modified-files>")
    assert list(entry) == [*COMPACTION_KEYS, "usage"]  # no system message in this session
    assert entry["usage"]["totalTokens"] == 10
    # the kept user + assistant (100 tokens each) and the summary, estimated at ceil(chars / 4)
    assert result.tokens_after == 100 + 100 + -(-len(entry["summary"]) // 4)
    assert result.tokens_before == 510


def test_split_turn_without_history_uses_no_prior_history() -> None:
    session = session_of(HEADER, [
        user("u1", None, 1, "q" * 40),
        asst("a1", "u1", 2, [call("c1", "read", path="f.txt")]),
        tool_result("t1", "a1", 3, text("r" * 400)),
        asst("a2", "t1", 4, text("s" * 400)),
    ])
    summarizer = Scripted()
    entry = build_compaction(session, keep_recent_tokens=50, summarizer=summarizer).entry
    assert entry["firstKeptEntryId"] == "a2"
    assert [r.kind for r in summarizer.requests] == ["turn_prefix"]
    assert entry["summary"].startswith("No prior history." + SPLIT + "turn_prefix#0")


def test_nothing_to_compact() -> None:
    session = small_session()
    summarizer = Scripted()
    with pytest.raises(PikitError):
        build_compaction(session, keep_recent_tokens=10**6, summarizer=summarizer)
    assert summarizer.requests == []


def test_leaf_is_a_compaction(sample: Session) -> None:
    with pytest.raises(PikitError):
        build_compaction(sample, "3f00573f", keep_recent_tokens=4000, summarizer=Scripted())


@pytest.mark.parametrize("fail_at", [0, 1])
def test_summarizer_error_propagates_and_nothing_is_written(sample_sessions: Path, tmp_path: Path,
                                                            fail_at: int) -> None:
    source = tmp_path / "s.jsonl"
    shutil.copyfile(sample_sessions / "refactor-auth.jsonl", source)
    before = source.read_bytes()
    session = pikit.load(source)
    leaf = session.entry("3f00573f").parent_id
    with pytest.raises(SummarizerError, match="stopped for length"):
        build_compaction(session, leaf, keep_recent_tokens=4000, summarizer=Scripted(fail_at=fail_at))
    assert source.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["s.jsonl"]


# ---------------------------------------------------------------- build_branch_summary


def test_branch_summary_reproduces_the_recorded_one(sample: Session) -> None:
    recorded = sample.entry("d7511703").data
    summarizer = Scripted([usage(5, 6)])
    result = build_branch_summary(sample, "10b305af", "eb9bf783", summarizer=summarizer)
    entry = result.entry
    # selecting a user message in /tree puts the leaf on its parent
    assert entry["parentId"] == sample.entry("eb9bf783").parent_id == recorded["parentId"] == "4b0a624e"
    assert result.new_leaf == "4b0a624e"
    assert entry["fromId"] == "10b305af"
    assert list(entry) == ["type", "id", "parentId", "timestamp", "fromId", "summary", "details", "usage"]
    assert entry["type"] == "branch_summary"
    assert entry["details"] == recorded["details"]
    assert [r.kind for r in summarizer.requests] == ["branch"]
    assert entry["summary"] == BRANCH_SUMMARY_PREAMBLE + "branch#0" + file_lists(
        entry["details"]["readFiles"], entry["details"]["modifiedFiles"])
    assert entry["usage"]["totalTokens"] == 11


def test_branch_summary_target_not_a_user_message(sample: Session) -> None:
    result = build_branch_summary(sample, "10b305af", "087c4286", summarizer=Scripted())
    assert result.entry["parentId"] == "087c4286"
    assert "usage" not in result.entry


def test_branch_summary_with_no_content() -> None:
    session = session_of(HEADER, [
        user("u1", None, 1, "hi"), asst("a1", "u1", 2, text("hello")),
        {"type": "label", "id": "l1", "parentId": "a1", "timestamp": "2026-01-01T00:00:03.000Z",
         "targetId": "a1", "label": "x"},
    ])
    summarizer = Scripted()
    result = build_branch_summary(session, "l1", "a1", summarizer=summarizer)
    assert result.entry["summary"] == "No content to summarize"
    assert result.entry["parentId"] == "a1"
    assert result.entry["fromId"] == "l1"
    assert result.entry["details"] == {"readFiles": [], "modifiedFiles": []}
    assert summarizer.requests == []
    none = build_branch_summary(session, None, "a1", summarizer=summarizer)
    assert none.entry["fromId"] == "root"
    assert none.entry["summary"] == "No content to summarize"
    assert summarizer.requests == []


# ---------------------------------------------------------------- label / context edit


def test_label_entry(sample: Session) -> None:
    entry = label_entry(sample, "087c4286", "mine")
    assert list(entry) == ["type", "id", "parentId", "timestamp", "targetId", "label"]
    assert entry["parentId"] == sample.leaf_id == "0ce8fc25"
    assert entry["targetId"] == "087c4286" and entry["label"] == "mine"
    assert entry["id"] not in sample.by_id
    cleared = label_entry(sample, "087c4286", "", leaf="10b305af")
    assert "label" not in cleared and cleared["parentId"] == "10b305af"
    with pytest.raises(UnknownEntryError):
        label_entry(sample, "deadbeef", "x")


def test_context_edit_replacement_normalization() -> None:
    session = small_session()
    for target in ("a2", "t1"):
        entry = context_edit_entry(session, target, {"content": "short"})
        assert entry["replacement"] == {"content": [{"type": "text", "text": "short"}]}
        assert list(entry) == ["type", "id", "parentId", "timestamp", "targetId", "replacement"]
        assert entry["parentId"] == "a3" and entry["targetId"] == target
    assert context_edit_entry(session, "u1", {"content": "short"})["replacement"] == {"content": "short"}
    blocks = text("kept")
    assert context_edit_entry(session, "a2", {"content": blocks})["replacement"] == {"content": blocks}
    omitted = context_edit_entry(session, "u1", None)
    assert "replacement" in omitted and omitted["replacement"] is None


def test_context_edit_projects_as_intended() -> None:
    session = small_session()
    entry = context_edit_entry(session, "t1", {"content": "pruned"})
    after = project_path([*session.branch(), Entry(entry)])
    tool = after.messages[after.sources.index("t1")]
    assert tool["content"] == [{"type": "text", "text": "pruned"}]


@pytest.mark.parametrize("replacement", ["text", {"text": "x"}, {"content": 5}, 3])
def test_context_edit_bad_replacement(replacement: Any) -> None:
    with pytest.raises(EntryError):
        context_edit_entry(small_session(), "a2", replacement)


def test_context_edit_target_checks(sample: Session) -> None:
    with pytest.raises(UnknownEntryError):
        context_edit_entry(sample, "deadbeef", None)
    # on another branch
    with pytest.raises(EntryError) as info:
        context_edit_entry(sample, "10b305af", None)
    assert not isinstance(info.value, UnknownEntryError)
    # fine when the leaf is that branch
    assert context_edit_entry(sample, "10b305af", None, leaf="10b305af")["parentId"] == "10b305af"
    # on the branch but with no editable model content
    for target in ("6ecc07ca", "9300c78f", "3f00573f", "5f9194a3", "4b0a624e", "d7511703"):
        with pytest.raises(EntryError):
            context_edit_entry(sample, target, {"content": "x"})
    # a custom message keeps a string
    assert context_edit_entry(sample, "98dfc0dd", {"content": "y"})["replacement"] == {"content": "y"}


# ---------------------------------------------------------------- write_entry


@pytest.fixture
def copy(sample_sessions: Path, tmp_path: Path) -> Path:
    path = tmp_path / "refactor-auth.jsonl"
    shutil.copyfile(sample_sessions / "refactor-auth.jsonl", path)
    return path


def test_write_copy_is_source_plus_one_line(copy: Path, tmp_path: Path) -> None:
    session = pikit.load(copy)
    before = copy.read_bytes()
    leaf = session.entry("f6135720").parent_id
    result = build_compaction(session, leaf, keep_recent_tokens=4000, summarizer=Scripted([usage(1, 1)]))
    out = tmp_path / "out.jsonl"
    written = write_entry(session, result.entry, output=out)
    assert os.path.samefile(written, out)
    assert copy.read_bytes() == before
    assert out.read_bytes() == before + result.line + b"\n"
    assert b"\n" not in result.line
    reloaded = pikit.load(out)
    assert reloaded.report.damaged_lines == []
    assert reloaded.entries[-1].data == result.entry
    projection = reloaded.context(result.entry["id"])
    assert projection.compaction is not None and projection.compaction.id == result.entry["id"]
    assert projection.tokens == result.tokens_after
    assert projection.messages[0]["role"] == "system"
    assert projection.messages[1]["role"] == "compactionSummary"
    assert projection.messages[1]["summary"] == result.entry["summary"]
    assert projection.context_ids[1] == result.entry["firstKeptEntryId"]


def test_write_copy_of_unterminated_source(copy: Path, tmp_path: Path) -> None:
    data = copy.read_bytes().rstrip(b"\n")
    copy.write_bytes(data)
    session = pikit.load(copy)
    entry = label_entry(session, "087c4286", "again")
    out = tmp_path / "out.jsonl"
    write_entry(session, entry, output=out)
    assert out.read_bytes() == data + b"\n" + pikit.jsjson.stringify_bytes(entry) + b"\n"


def test_write_in_place_appends_one_line(copy: Path) -> None:
    session = pikit.load(copy)
    before = copy.read_bytes()
    entry = label_entry(session, "087c4286", "in place")
    assert write_entry(session, entry, in_place=True) == session.path
    assert copy.read_bytes() == before + pikit.jsjson.stringify_bytes(entry) + b"\n"
    reloaded = pikit.load(copy)
    assert reloaded.labels["087c4286"] == "in place"
    assert reloaded.leaf_id == entry["id"]


def test_write_in_place_terminates_an_unterminated_last_line(copy: Path) -> None:
    data = copy.read_bytes().rstrip(b"\n")
    copy.write_bytes(data)
    session = pikit.load(copy)
    assert session.leaf_id == "0ce8fc25"
    entry = context_edit_entry(session, "0ce8fc25", {"content": "short"})
    with pytest.warns(UserWarning, match="had no newline; one was added"):
        write_entry(session, entry, in_place=True)
    line = pikit.jsjson.stringify_bytes(entry)
    assert copy.read_bytes() == data + b"\n" + line + b"\n"
    reloaded = pikit.load(copy)
    assert reloaded.report.damaged_lines == []
    assert reloaded.context(entry["id"]).messages[-1]["content"] == [{"type": "text", "text": "short"}]


def test_write_needs_exactly_one_destination(copy: Path, tmp_path: Path) -> None:
    session = pikit.load(copy)
    before = copy.read_bytes()
    entry = label_entry(session, "087c4286", "x")
    with pytest.raises(WriteError):
        write_entry(session, entry)
    with pytest.raises(WriteError):
        write_entry(session, entry, output=tmp_path / "o.jsonl", in_place=True)
    assert copy.read_bytes() == before
    assert not (tmp_path / "o.jsonl").exists()


def test_write_refuses_the_source_and_existing_outputs(copy: Path, tmp_path: Path) -> None:
    session = pikit.load(copy)
    before = copy.read_bytes()
    entry = label_entry(session, "087c4286", "x")
    with pytest.raises(WriteError):
        write_entry(session, entry, output=copy)
    existing = tmp_path / "exists.jsonl"
    existing.write_bytes(b"keep me\n")
    with pytest.raises(WriteError):
        write_entry(session, entry, output=existing)
    assert existing.read_bytes() == b"keep me\n"
    assert copy.read_bytes() == before
    write_entry(session, entry, output=existing, overwrite=True)
    assert existing.read_bytes() == before + pikit.jsjson.stringify_bytes(entry) + b"\n"


def test_write_in_place_refuses_a_grown_file(copy: Path) -> None:
    session = pikit.load(copy)
    entry = label_entry(session, "087c4286", "x")
    with open(copy, "ab") as handle:
        handle.write(b'{"type":"label","id":"aaaa0000","parentId":"0ce8fc25","timestamp":"2026-03-10T09:00:00.000Z",'
                     b'"targetId":"0ce8fc25","label":"pi"}\n')
    grown = copy.read_bytes()
    with pytest.raises(WriteError, match="changed"):
        write_entry(session, entry, in_place=True)
    assert copy.read_bytes() == grown


def test_write_in_place_refuses_a_same_size_rewrite(copy: Path) -> None:
    session = pikit.load(copy)
    entry = label_entry(session, "087c4286", "x")
    data = copy.read_bytes()
    changed = data.replace(b"checkpoint: tests green", b"checkpoint: tests GREEN")
    assert changed != data and len(changed) == len(data)
    copy.write_bytes(changed)
    with pytest.raises(WriteError):
        write_entry(session, entry, in_place=True)


def test_write_needs_a_file_backed_session() -> None:
    session = small_session()
    with pytest.raises(WriteError):
        write_entry(session, label_entry(session, "a1", "x"), in_place=True)
