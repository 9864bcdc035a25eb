"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PIKIT_SHARED", REPO.parent / "shared"))
SESSIONS = SHARED / "sessions"
GOLDEN = SHARED / "conformance" / "golden"
SAMPLES = REPO / "data" / "sample_sessions"


@pytest.fixture(scope="session")
def shared_sessions() -> Path:
    """The folder of sessions recorded by Pi (read-only; never copy them into the repo)."""
    if not SESSIONS.is_dir():
        pytest.fail(f"shared sessions not found at {SESSIONS}; set PIKIT_SHARED to the shared/ folder")
    return SESSIONS


@pytest.fixture(scope="session")
def sample_sessions() -> Path:
    """The project's own generated sample sessions."""
    return SAMPLES


@pytest.fixture
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Pi agent folder that ``PI_CODING_AGENT_DIR`` points at."""
    folder = tmp_path / "agent"
    folder.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(folder))
    return folder
