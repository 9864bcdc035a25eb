"""pikit._context.describe: titles of sessions (named or not)."""

from __future__ import annotations

from pathlib import Path

import pikit
from pikit import Session
from pikit._context.describe import cut_words, display_title, first_request, session_title
from tests.entries import user

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "sample_sessions"


def _info(i: str, p: str, name: object) -> dict[str, object]:
    return {"type": "session_info", "id": i, "parentId": p, "timestamp": "2026-01-01T00:00:09.000Z", "name": name}


def test_named_session_is_titled_by_its_name() -> None:
    session = pikit.load(str(SAMPLES / "refactor-auth.jsonl"))
    assert session.title == session.name == "Refactor auth module (shop-api)"


def test_unnamed_session_is_titled_by_file_name_and_first_request() -> None:
    session = pikit.load(str(SAMPLES / "quick-tour.jsonl"))
    assert session.name is None
    assert session.title == "quick-tour — What does src/cart/total.ts compute? Keep it short."
    assert "(no name)" not in session.title


def test_title_is_one_line_and_cut_to_width() -> None:
    session = Session.from_entries([user("a", None, 1, "first   line\n\nsecond line " + "word " * 50)])
    session.path = "/somewhere/2026-01-01_abc.jsonl"
    title = session_title(session, width=40)
    assert title.startswith("2026-01-01_abc — first line second line")
    assert len(title) == 40 and title.endswith("…") and "\n" not in title
    assert first_request(session) is not None and first_request(session).startswith("first line second")


def test_title_without_path_or_request() -> None:
    session = Session.from_entries([], header={"type": "session", "version": 3, "id": "0123456789ab", "cwd": ""})
    assert session.title == "session 01234567"
    named = Session.from_entries([user("a", None, 1, "hi"), _info("b", "a", "  My   run\n")])
    assert named.title == "My run"


def test_a_file_pi_named_is_titled_by_its_first_request_cut_at_a_word(tmp_path: Path) -> None:
    request = "Explain why the nightly build of the payments service fails only on the second retry attempt"
    session = Session.from_entries([user("a", None, 1, request)])
    session.path = str(tmp_path / "2026-11-30T10-04-05-123Z_0199c0de-0000-7000-8000-000000000001.jsonl")
    assert session.title == "Explain why the nightly build of the payments service fails only on the…"
    assert len(session.title) <= 72 and request.startswith(session.title[:-1].rstrip())
    assert request[len(session.title) - 1] == " "  # cut between words
    session.path = str(tmp_path / "notes.jsonl")  # a name of the user's own says something: it stays
    assert session.title.startswith("notes — Explain why")


def test_cut_words_keeps_whole_words() -> None:
    assert cut_words("alpha beta gamma", 12) == "alpha beta…"
    assert cut_words("alpha beta gamma", 16) == "alpha beta gamma"
    assert cut_words("supercalifragilistic word", 10) == "supercali…"  # one long word: cut inside it
    assert display_title(None, "/s/2026-11-30T10-04-05-123Z_x.jsonl", None) == "2026-11-30T10-04-05-123Z_x"
    assert display_title(None, "/s/x1.jsonl", "Hello there", session_id="x1") == "Hello there"
