"""Fixtures for the corpus tests: the bundled corpus, small hand-made corpora, @ccusage/pi and ccusage from npm."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE_CORPUS = REPO / "data" / "sample_corpus" / "sessions"
CCUSAGE_VERSION = "18.0.11"
# The maintained ccusage: a native program; 20.0.24 is the newest version with a published linux-x64 package.
CCUSAGE20_VERSION = "20.0.24"


@pytest.fixture(scope="session")
def sample_corpus() -> Path:
    """The bundled sample corpus (read-only)."""
    return SAMPLE_CORPUS


def _npm_install(tmp_path_factory: pytest.TempPathFactory, name: str, *packages: str) -> Path:
    """These npm packages installed into a temporary folder; its ``node_modules``."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(f"npm is needed to install {packages[0]} (Debian: apt-get install npm)")
    prefix = tmp_path_factory.mktemp(name)
    result = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", *packages],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return prefix / "node_modules"


@pytest.fixture(scope="session")
def ccusage(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``@ccusage/pi`` installed from npm into a temporary folder; the path of its executable."""
    return _npm_install(tmp_path_factory, "ccusage", f"@ccusage/pi@{CCUSAGE_VERSION}") / ".bin" / "ccusage-pi"


@pytest.fixture(scope="session")
def ccusage20(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ccusage`` 20 and its linux-x64 program installed from npm into a temporary folder; its executable."""
    modules = _npm_install(tmp_path_factory, "ccusage20", f"ccusage@{CCUSAGE20_VERSION}",
                           f"@ccusage/ccusage-linux-x64@{CCUSAGE20_VERSION}")
    return modules / ".bin" / "ccusage"
