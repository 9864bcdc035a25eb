"""Short reprs and escaped HTML cards of the core objects (each draws itself with pikit._card)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pikit
from pikit import Session
from pikit.compaction import CompactionSettings, simulate
from pikit.llm import OfflineSummarizer
from tests.entries import asst, user

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "sample_sessions"
SETTINGS = CompactionSettings(True, 3000, 4000)


@pytest.fixture(scope="module")
def refactor() -> Session:
    return pikit.load(str(SAMPLES / "refactor-auth.jsonl"))


@pytest.fixture(scope="module")
def hostile() -> Session:
    return pikit.load(str(SAMPLES / "xss-and-unicode.jsonl"))


def _objects(session: Session) -> list[object]:
    ctx = session.context()
    prep = pikit.compaction.prepare_compaction(session.branch(), 200, ctx)
    assert prep is not None
    result = simulate(session, OfflineSummarizer(), context_window=16_384, settings=SETTINGS)
    return [session, ctx, *ctx.entries, prep, result]


def test_reprs_are_short_single_lines(refactor: Session) -> None:
    for obj in _objects(refactor):
        text = repr(obj)
        assert len(text) < 260 and "\n" not in text, text
    ctx = refactor.context()
    assert repr(ctx) == "<Projection at '0ce8fc25': 59 messages, 10,599 tokens, compaction 'f6135720'>"
    assert repr(refactor).startswith("<Session 'Refactor auth module (shop-api)': 157 entries, leaf '0ce8fc25'")
    prep = pikit.compaction.prepare_compaction(refactor.branch(), 4000, ctx)
    assert repr(prep) == ("<Preparation at '0ce8fc25' keepRecentTokens=4,000: summarize 30 messages, split turn "
                          "(prefix 4), keep from '346e2115' (≈4,430 tokens), 10,599 tokens before>")


def test_html_cards_name_the_facts(refactor: Session) -> None:
    session, ctx, *rest = _objects(refactor)
    prep, result = rest[-2], rest[-1]
    assert "Refactor auth module (shop-api)" in session._repr_html_()  # type: ignore[attr-defined]
    card = ctx._repr_html_()  # type: ignore[attr-defined]
    assert "10,599 reported by the provider + 0 estimated after it" in card
    assert "f6135720" in card and "51 earlier messages" in card
    assert "to summarize</th><td" in prep._repr_html_()  # type: ignore[attr-defined]
    sim = result._repr_html_()  # type: ignore[attr-defined]
    assert "<svg" in sim and "threshold 13,384" in sim


def test_html_escapes_session_text(hostile: Session) -> None:
    for obj in _objects(hostile):
        card = obj._repr_html_()  # type: ignore[attr-defined]
        assert "<script" not in card and "<img" not in card
        assert not re.search(r"<[a-z]+[^>]*\son[a-z]+=", card)
    cards = "".join(obj._repr_html_() for obj in _objects(hostile))  # type: ignore[attr-defined]
    assert "&lt;script&gt;" in cards
    assert "&lt;img src=x onerror=alert(2)&gt;" in hostile.context().entries[2]._repr_html_()  # type: ignore[attr-defined]


def test_repr_shows_control_characters_as_escapes() -> None:
    session = Session.from_entries([user("a", None, 1, "clear \x1b[2J the screen"), asst("b", "a", 2, "ok")])
    text = repr(session)
    assert "\x1b" not in text and "\\x1b" in text
    assert "\x1b" not in repr(session.context().entries[0])


def test_empty_session_and_context_display() -> None:
    session = Session.from_entries([])
    assert "0 entries" in repr(session)
    assert "none (reset)" in session._repr_html_()
    ctx = session.context()
    assert repr(ctx) == "<Projection at None: 0 messages, 0 tokens>"
    assert "Projection" in ctx._repr_html_()


def _resolves(dotted: str, namespace: dict[str, object]) -> bool:
    """Whether ``pikit.a.b`` (a module path, then attributes) or ``session.x`` names something real."""
    import importlib

    head, *rest = dotted.split(".")
    if head in namespace:
        target: object = namespace[head]
    else:
        for cut in range(len(rest), -1, -1):
            try:
                target = importlib.import_module(".".join([head, *rest[:cut]]))
            except ImportError:
                continue
            rest = rest[cut:]
            break
        else:
            return False
    for name in rest:
        if not hasattr(target, name):
            return False
        target = getattr(target, name)
    return True


def test_every_name_a_card_hint_mentions_exists(refactor: Session) -> None:
    """The notes under the cards name what to call next: each of those names must exist."""
    objects = [*_objects(refactor), Session.from_entries([])]
    named = set()
    for obj in objects:
        card = obj._repr_html_()  # type: ignore[attr-defined]
        named.update(re.findall(r"\b(?:pikit|session)(?:\.[A-Za-z_]\w*)+", re.sub(r"<[^>]+>", " ", card)))
    assert "pikit.widgets.SessionExplorer" in named and "session.context" in named
    missing = sorted(n for n in named if not _resolves(n, {"session": refactor}))
    assert missing == []


def test_every_pikit_name_in_the_package_text_exists() -> None:
    """Messages, notes and docstrings that name ``pikit.something`` name something that exists."""
    import ast

    package = Path(pikit.__file__).resolve().parent
    missing = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                missing += [f"{path.name}: {name}" for name in re.findall(r"\bpikit(?:\.[A-Za-z_]\w*)+", node.value)
                            if not _resolves(name, {})]
    assert missing == []


def _diffs(session: Session) -> list[pikit.ProjectionDiff]:
    compactions = [e.id for e in session.entries if e.type == "compaction"]
    out = [pikit.diff_leaves(session, None, session.leaf_id), pikit.diff_leaves(session, session.leaf_id,
                                                                                session.leaf_id)]
    out.extend(pikit.diff_compaction(session, c) for c in compactions)
    return out


def test_diff_reprs_are_short_and_cards_bounded(refactor: Session) -> None:
    from pikit._card import TABLE_ROWS

    diffs = _diffs(refactor)
    for diff in diffs:
        for obj in (diff, diff.totals, *diff.rows):
            text = repr(obj)
            assert len(text) < 200 and "\n" not in text, text
        card = diff._repr_html_()  # type: ignore[attr-defined]
        assert len(card) < 16_000
        assert card.count("<tr>") <= TABLE_ROWS + 1 + 6  # header, shown changes, the totals' rows
    whole = diffs[0]
    assert repr(whole) == "<ProjectionDiff None → '0ce8fc25': +59 −0 ~0 =0, 0 → 10,599 tokens (+10,599)>"
    card = whole._repr_html_()  # type: ignore[attr-defined]
    assert "… 51 more changed messages" in card and "0 → 10,599" in card
    assert "both contexts send the same messages" in diffs[1]._repr_html_()  # type: ignore[attr-defined]
    assert "summarized" in diffs[2]._repr_html_()  # type: ignore[attr-defined]


def test_diff_cards_escape_session_text(hostile: Session) -> None:
    for diff in _diffs(hostile):
        card = diff._repr_html_()  # type: ignore[attr-defined]
        assert "<script" not in card and "<img" not in card
        assert not re.search(r"<[a-z]+[^>]*\son[a-z]+=", card)
    assert "&lt;script&gt;" in pikit.diff_leaves(hostile, None, hostile.leaf_id)._repr_html_()  # type: ignore[attr-defined]
    session = Session.from_entries([user("a\x1b]52", None, 1, "x"), asst("b", "a\x1b]52", 2, "ok")])
    diff = pikit.diff_leaves(session, None, "b")
    assert "\x1b" not in repr(diff) and "\x1b" not in repr(diff.rows[0])
