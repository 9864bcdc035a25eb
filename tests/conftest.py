"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis judges neither the time of one example (deadline) nor how fast inputs are made
# (too_slow): on a loaded machine both depend on the load, not on the code.
settings.register_profile("pikit", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("pikit")

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PIKIT_SHARED", REPO.parent / "shared"))
SESSIONS = SHARED / "sessions"
GOLDEN = SHARED / "conformance" / "golden"
SAMPLES = REPO / "data" / "sample_sessions"

ONE_WORKER = {"jupyter_server": "jupyterlab", "ccusage": "npm-ccusage", "ccusage20": "npm-ccusage20",
              "pi_install": "npm-pi"}
"""Session fixtures worth setting up once: the tests that use one run on one worker of ``-n auto --dist loadgroup``."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Group the tests of a costly session fixture (a JupyterLab server, an npm install) on one worker."""
    for item in items:
        groups = sorted({ONE_WORKER[name] for name in getattr(item, "fixturenames", ()) if name in ONE_WORKER})
        if groups and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(groups[0]))


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
def agent(tmp_path: Path) -> Path:
    """An empty Pi agent folder, for the tests that pass it explicitly (the environment is left alone)."""
    folder = tmp_path / "agent"
    folder.mkdir()
    return folder


@pytest.fixture
def agent_dir(agent: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Pi agent folder that ``PI_CODING_AGENT_DIR`` points at."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    return agent
