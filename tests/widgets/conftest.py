"""Fixtures of the widget tests: sessions from the shared folder, a hostile one, a 10k-entry one.

The shared folder is found as the top-level conftest finds it (``PIKIT_SHARED``, else
``../shared``); a missing session fails the test with that hint instead of skipping it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[2]
if str(_REPO) not in sys.path:  # `tests.widgets.synthetic` for the tests, as for the benchmarks
    sys.path.insert(0, str(_REPO))

import pikit  # noqa: E402
from pikit import Session  # noqa: E402
from tests.conftest import SESSIONS  # noqa: E402
from tests.widgets.synthetic import big_session_lines, hostile_session_lines, write_session  # noqa: E402


def _shared(name: str) -> Path:
    path = SESSIONS / name
    if not path.is_file():
        pytest.fail(f"shared session {path} not found; set PIKIT_SHARED to the shared/ folder", pytrace=False)
    return path


@pytest.fixture(autouse=True)
def _no_user_settings(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Pi settings come from an empty agent folder, never from the developer's ~/.pi."""
    agent = tmp_path_factory.mktemp("pi-agent")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.chdir(agent)


@pytest.fixture
def tree_basic() -> Session:
    """A small branched session (a fork, a label, a branch summary)."""
    return pikit.load(_shared("tree-basic.jsonl"))


@pytest.fixture
def compaction_chain() -> Session:
    """A linear session with two compactions."""
    return pikit.load(_shared("compaction-chain.jsonl"))


@pytest.fixture
def context_edits() -> Session:
    """A session with context edits (omitted and replaced messages)."""
    return pikit.load(_shared("context-edits.jsonl"))


@pytest.fixture
def compaction_copy(tmp_path: Path) -> Path:
    """A private copy of compaction-chain.jsonl (for runs that write)."""
    target = tmp_path / "source" / "chain.jsonl"
    target.parent.mkdir()
    target.write_bytes(_shared("compaction-chain.jsonl").read_bytes())
    return target


@pytest.fixture
def hostile_path(tmp_path: Path) -> Path:
    """A session whose every text field carries script-bearing HTML."""
    return write_session(tmp_path / "hostile.jsonl", hostile_session_lines())


@pytest.fixture
def hostile(hostile_path: Path) -> Session:
    """The hostile session, loaded."""
    return pikit.load(hostile_path)


@pytest.fixture(scope="session")
def big_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A 10,000-entry synthetic session (branches, labels, compactions)."""
    yield write_session(tmp_path_factory.mktemp("big") / "big10k.jsonl", big_session_lines(10_000))


@pytest.fixture
def big(big_path: Path) -> Session:
    """The 10,000-entry session, loaded fresh."""
    return pikit.load(big_path)
