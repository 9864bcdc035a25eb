"""Fixtures for the corpus tests: the bundled corpus, small hand-made corpora, @ccusage/pi from npm."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE_CORPUS = REPO / "data" / "sample_corpus" / "sessions"
CCUSAGE_VERSION = "18.0.11"


@pytest.fixture(scope="session")
def sample_corpus() -> Path:
    """The bundled sample corpus (read-only)."""
    return SAMPLE_CORPUS


@pytest.fixture(scope="session")
def ccusage(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``@ccusage/pi`` installed from npm into a temporary folder; the path of its executable."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is needed to install @ccusage/pi (Debian: apt-get install npm)")
    prefix = tmp_path_factory.mktemp("ccusage")
    result = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                             f"@ccusage/pi@{CCUSAGE_VERSION}"], capture_output=True, text=True, timeout=300,
                            check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return prefix / "node_modules" / ".bin" / "ccusage-pi"
