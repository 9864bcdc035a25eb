"""``pikit redact`` and ``--redact``: no planted value in any output, the copy loads like its source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pikit
from tests.procs import one_error_line, pikit as run
from tests.redaction import planted

FLAGS = ["--redact-pattern", r"ACME-[0-9]{12}", "--redact-emails", "--redact-allow", planted.ALLOWED]
ENV = {"MY_SERVICE_TOKEN": planted.ENV_TOKEN}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return planted.write(tmp_path_factory.mktemp("planted"))


@pytest.fixture(scope="module")
def copy(source: Path) -> Path:
    out = source.with_name("redacted.jsonl")
    proc = run("redact", source, "-o", out, *FLAGS, "--json", extra_env=ENV)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["output"] == str(out) and report["counts"]["github-token"] > 0
    assert planted.survivors(proc.stdout + proc.stderr) == []
    return out


def test_the_copy_holds_no_planted_value(source: Path, copy: Path) -> None:
    assert planted.survivors(source.read_bytes())  # the source keeps them all: it is never changed
    assert planted.survivors(copy.read_bytes()) == []
    assert planted.ALLOWED.encode() in copy.read_bytes()


def _without_redactions(value: Any, other: Any) -> None:
    """``value`` (the copy's) equals ``other`` (the source's) but where a string holds a placeholder."""
    stack = [(value, other)]
    while stack:
        a, b = stack.pop()
        if isinstance(a, dict):
            assert isinstance(b, dict) and len(a) == len(b)
            for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True):
                assert ka == kb or "[REDACTED:" in ka
                stack.append((va, vb))
        elif isinstance(a, list):
            assert isinstance(b, list) and len(a) == len(b)
            stack += list(zip(a, b, strict=True))
        elif isinstance(a, str) and a != b:
            assert "[REDACTED:" in a or a == planted.BLANK_IMAGE_DATA, (a[:80], b[:80])
        else:
            assert a == b


def test_the_copy_loads_and_projects_like_the_source(source: Path, copy: Path) -> None:
    before, after = pikit.load(source), pikit.load(copy)
    assert after.tree() == {**before.tree(), "labels": after.tree()["labels"]}
    assert after.report.problems == []
    assert "redactedBy" in after.header and after.header["redactedBy"]["tool"] == "pikit"
    for leaf in ("a000000c", "a000000e"):
        mine = json.loads(run("context", copy, "--leaf", leaf, "--json").stdout)["leaves"][leaf]
        theirs = json.loads(run("context", source, "--leaf", leaf, "--json").stdout)["leaves"][leaf]
        for figures in ("estimates", "tokens"):  # chars/4 follows the text's length
            mine.pop(figures), theirs.pop(figures)
        _without_redactions(mine, theirs)


def test_an_existing_output_is_one_error_line(source: Path, copy: Path) -> None:
    before = copy.read_bytes()
    one_error_line(run("redact", source, "-o", copy), "already exists", "--force")
    assert copy.read_bytes() == before
    one_error_line(run("redact", source, "-o", source, "--force"), "refusing to write over the source")
    assert run("redact", source, "-o", copy, "--force", *FLAGS, extra_env=ENV).returncode == 0


@pytest.mark.parametrize("command", [
    ["context", "--json"], ["context", "--leaf", "a000000c", "--json"], ["tree", "--json"], ["info", "--json"],
    ["tree", "--filter", "all"], ["context"],
    ["compact", "--dry-run", "--json", "--keep-recent-tokens", "10"],
])
def test_redact_on_json_and_plain_output(source: Path, command: list[str]) -> None:
    proc = run(command[0], source, *command[1:], "--redact", *FLAGS, extra_env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert planted.survivors(proc.stdout + proc.stderr) == []
    assert b"pikit: note: redacted " in proc.stderr


def test_without_redact_the_values_show(source: Path) -> None:
    proc = run("context", source, "--json", extra_env=ENV)
    assert set(planted.SECRETS) <= set(planted.survivors(proc.stdout))


def test_export_redact_writes_no_value(source: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    proc = run("export", source, "-o", page, "--redact", *FLAGS, "--filter", "all", extra_env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert b"[REDACTED:" in page.read_bytes()
    assert planted.survivors(page.read_bytes()) == []
    kept = tmp_path / "kept.html"
    assert run("export", source, "-o", kept, "--keep-images", extra_env=ENV).returncode == 0  # implies --redact
    assert b"[REDACTED:" in kept.read_bytes()


@pytest.mark.parametrize("command", [["export"], ["export", "--format", "markdown"], ["fork", "--leaf", "a000000c"],
                                     ["migrate"]])
def test_a_redacted_output_over_the_source_is_refused(source: Path, command: list[str]) -> None:
    """The copy's path is redacted (the file name holds a token): the source is still known and kept."""
    before = source.read_bytes()
    one_error_line(run(command[0], source, *command[1:], "-o", source, "--force", "--redact"),
                   "refusing to write over the source")
    assert source.read_bytes() == before


def test_writing_a_compaction_of_a_redacted_view_is_refused(source: Path, tmp_path: Path) -> None:
    one_error_line(run("compact", source, "--redact", "-o", tmp_path / "c.jsonl"), "pikit redact FILE -o OUT")
    assert not (tmp_path / "c.jsonl").exists()


def test_a_bad_pattern_is_one_error_line(source: Path, tmp_path: Path) -> None:
    one_error_line(run("redact", source, "-o", tmp_path / "x.jsonl", "--redact-pattern", "("),
                   "--redact-pattern", "not a regular expression")
    one_error_line(run("tree", source, "--redact-allow-pattern", "[a"), "--redact-allow-pattern")


@pytest.mark.parametrize("command", [["fork", "--leaf", "a000000c"], ["migrate"]])
def test_fork_and_migrate_redact_what_they_write(source: Path, tmp_path: Path, command: list[str]) -> None:
    out = tmp_path / "out.jsonl"
    proc = run(command[0], source, *command[1:], "-o", out, "--redact", *FLAGS, extra_env=ENV)
    assert proc.returncode == 0, proc.stderr
    assert planted.survivors(out.read_bytes()) == []
    if command[0] == "migrate":  # a copy keeps the header (a fork makes a new one, as Pi does)
        assert "redactedBy" in pikit.load(out).header
