"""pikit.redact: every planted secret goes, in every field; the tree, ids and usage stay."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import pikit
from pikit._redaction.session import redacted_lines
from pikit._redaction.walk import BLANK_IMAGE
from tests.redaction import planted

OPTIONS = {"patterns": [r"ACME-[0-9]{12}"], "emails": True, "allow": [planted.ALLOWED],
           "environment": {"MY_SERVICE_TOKEN": planted.ENV_TOKEN, "HOME": "/home/dev/somewhere"}}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> pikit.Session:
    return pikit.load(planted.write(tmp_path_factory.mktemp("planted")))


@pytest.fixture(scope="module")
def redacted(source: pikit.Session) -> tuple[pikit.Session, pikit.RedactionReport]:
    return pikit.redact(source, pikit.Redactor(**OPTIONS))


def test_the_planted_session_has_every_kind_in_every_field() -> None:
    assert len(planted.SECRETS) >= 15
    text = "".join(json.dumps(o) for o in planted.entries())
    assert set(planted.SECRETS) <= set(planted.survivors(text))


def test_no_value_survives_in_any_form(redacted: tuple[pikit.Session, pikit.RedactionReport]) -> None:
    copy, _ = redacted
    assert planted.survivors(b"\n".join(redacted_lines(copy))) == []


def test_the_tree_ids_and_usage_stay(source: pikit.Session,
                                     redacted: tuple[pikit.Session, pikit.RedactionReport]) -> None:
    copy, _ = redacted
    assert [(e.id, e.parent_id, e.type, e.timestamp) for e in copy.entries] == \
           [(e.id, e.parent_id, e.type, e.timestamp) for e in source.entries]
    assert copy.tree() == {**source.tree(), "labels": copy.tree()["labels"]}
    assert copy.leaf_id == source.leaf_id and copy.header["id"] == source.header["id"]
    assert [e.message.get("usage") for e in copy.entries if e.message] == \
           [e.message.get("usage") for e in source.entries if e.message]
    assert copy.entry("a0000005").message["toolCallId"] == "toolu_01"


def test_the_source_is_not_changed(source: pikit.Session) -> None:
    before = [e.raw for e in source.entries]
    pikit.redact(source, **OPTIONS)
    assert [e.raw for e in source.entries] == before
    assert planted.survivors(b"\n".join(before))


def test_placeholders_are_stable_within_a_run(redacted: tuple[pikit.Session, pikit.RedactionReport]) -> None:
    copy, report = redacted
    text = b"\n".join(redacted_lines(copy)).decode()
    github = set(re.findall(r"\[REDACTED:github-token:\d+\]", text))
    # three distinct github tokens (ghp_, gho_ and the one used as an argument key is the ghp_ one)
    assert len(github) == report.distinct["github-token"] == 3
    for entry in copy.entries:
        if entry.type == "label":
            assert entry["label"] == copy.entry("a0000001")["name"]  # the same text, the same placeholders
    again, _ = pikit.redact(copy.__class__(copy.header, list(copy.entries)), **OPTIONS)
    assert b"\n".join(redacted_lines(again)).count(b"[REDACTED:") == text.count("[REDACTED:")


def test_images_are_dropped_or_kept(source: pikit.Session,
                                    redacted: tuple[pikit.Session, pikit.RedactionReport]) -> None:
    copy, report = redacted
    blocks = [b for b in copy.entry("a0000003").message["content"] if b["type"] == "image"]
    assert blocks == [{"type": "image", "data": BLANK_IMAGE, "mimeType": "image/png"}]
    assert report.counts["image"] == 2
    kept, kept_report = pikit.redact(source, keep_images=True, environment=False)
    assert kept.entry("a0000003").message["content"][1]["data"] == planted.IMAGE
    assert "image" not in kept_report.counts


def test_allow_list_and_user_patterns(source: pikit.Session) -> None:
    copy, _ = pikit.redact(source, **OPTIONS)
    assert planted.ALLOWED in copy.entry("a000000c").message["content"]
    plain, _ = pikit.redact(source, environment=False)
    text = b"\n".join(redacted_lines(plain)).decode()
    assert planted.ALLOWED not in text
    assert planted.USER_PATTERN_VALUE in text and planted.EMAIL in text  # not asked for
    assert planted.ENV_TOKEN in text  # not in this environment
    pattern, _ = pikit.redact(source, environment=False, allow=[re.compile(r"ghp_\w+")])
    assert planted.ALLOWED in pattern.entry("a000000c").message["content"]


def test_the_environment_value_is_redacted(source: pikit.Session, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", planted.ENV_TOKEN)
    copy, report = pikit.redact(source)
    assert planted.ENV_TOKEN not in b"\n".join(redacted_lines(copy)).decode()
    assert report.counts["env"] > 0


def test_the_report_counts_kinds_and_entries_never_values(
        redacted: tuple[pikit.Session, pikit.RedactionReport]) -> None:
    copy, report = redacted
    assert {"github-token", "private-key", "env", "pattern", "email"} <= set(report.counts)
    assert set(report.entries) <= {e.id for e in copy.entries} and "a0000002" in report.entries
    assert report.header and report.total == sum(report.counts.values())
    stamp = copy.header["redactedBy"]
    assert stamp["tool"] == "pikit" and stamp["counts"] == report.counts
    assert planted.survivors(json.dumps([report.counts, report.entries, report.header, repr(report)])) == []


def test_a_private_key_goes_whole(redacted: tuple[pikit.Session, pikit.RedactionReport]) -> None:
    copy, _ = redacted
    text = b"\n".join(redacted_lines(copy)).decode()
    assert "BEGIN RSA PRIVATE KEY" not in text and "END RSA PRIVATE KEY" not in text


def test_hashes_ids_and_paths_are_kept() -> None:
    redactor = pikit.Redactor(environment=False)
    kept = ["commit 3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345", "id 0db2eb3b-5ed8-4b70-88c6-a3f7104eb251",
            "toolu_01WuL7wXYE2pFBxf9HwRvBYq", "/usr/lib/python3.11/site-packages/pkg/module_name.py",
            "model claude-sonnet-4-5-20250929",
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "const apiKey = parsed.apiKey || process.env.KEY", "token: string;", "with basic structure",
            "return { ...file, token: test_schema }", "{ ...retry, token: compactResult(x) }",
            "f(password: userPassword)"]
    for text in kept:
        assert redactor.spans(text) == [], text


def test_hostile_input_does_not_crash(tmp_path: Path) -> None:
    from tests.weird import weird_sessions

    redactor = pikit.Redactor(environment=False, emails=True)
    for path in weird_sessions(tmp_path).values():
        try:
            session = pikit.load(path)
        except pikit.NotASessionError:
            continue  # not a session: nothing to redact
        copy, _ = pikit.redact(session, redactor)
        assert [e.id for e in copy.entries] == [e.id for e in session.entries]
        list(redacted_lines(copy))
    huge = "\ud800 " + ("x" * 3_000_000) + " ghp_" + "A" * 36 + " \udfff"
    session = pikit.loads(json.dumps({"type": "session", "version": 3, "id": "h", "timestamp": "t", "cwd": "/"}) + "\n"
                          + json.dumps({"type": "message", "id": "e1", "parentId": None, "timestamp": "t",
                                        "message": {"role": "user", "content": huge, "timestamp": 1}}))
    copy, report = pikit.redact(session, redactor)
    assert report.counts == {"github-token": 1}
    assert copy.entry("e1").message["content"].startswith("\ud800 ")


def test_a_bad_expression_is_one_error_naming_the_parameter() -> None:
    with pytest.raises(pikit.PikitError, match=r"^patterns: not a regular expression"):
        pikit.Redactor(patterns=["("], environment=False)


def test_one_numbering_across_sessions(source: pikit.Session) -> None:
    redactor = pikit.Redactor(environment=False)
    numbering = pikit.Placeholders()
    first, report = pikit.redact(source, redactor, placeholders=numbering)
    second, _ = pikit.redact(source, redactor, placeholders=numbering)
    assert [e.raw for e in first.entries] == [e.raw for e in second.entries]
    fresh, _ = pikit.redact(pikit.loads(json.dumps(planted.entries()[0]) + "\n" + json.dumps(
        {"type": "message", "id": "z1", "parentId": None, "timestamp": "t",
         "message": {"role": "user", "content": "new " + "ghp_" + "Z" * 36, "timestamp": 1}})),
        redactor, placeholders=numbering)
    after = report.distinct["github-token"] + 1  # numbered after the source's tokens
    assert fresh.entry("z1").message["content"] == f"new [REDACTED:github-token:{after}]"


def test_without_detect_secrets_one_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    for name in [m for m in sys.modules if m.split(".")[0] == "detect_secrets"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "detect_secrets", None)  # an import of it fails
    with pytest.raises(pikit.PikitError, match=r"pikit\[redact\]"):
        pikit.Redactor(environment=False)
    assert pikit.Redactor(environment=False, library=False, entropy=None).spans("ghp_" + "a" * 36)


def test_a_redacted_copy_is_never_refreshed_from_its_source(tmp_path: Path) -> None:
    path = planted.write(tmp_path)
    copy, _ = pikit.redact(pikit.load(path), environment=False)
    token = "ghp_" + "N4m" * 12
    with path.open("a", encoding="utf-8") as file:  # Pi goes on writing the source
        file.write(json.dumps({"type": "message", "id": "z9", "parentId": "a000000e", "timestamp": "t",
                               "message": {"role": "user", "content": token, "timestamp": 1}}) + "\n")
    with pytest.raises(pikit.PikitError, match="redacted copy is not refreshed"):
        copy.refresh()
    assert "z9" not in copy.by_id
    assert pikit.load(path).entry("z9").message["content"] == token
