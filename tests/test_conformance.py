"""The conformance kit: pikit's command line against Pi's own goldens (the measure of parity)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest


def _conftest_golden() -> Path:
    # Load the suite's conftest by path: a plain `import conftest` may find another folder's conftest.
    spec = importlib.util.spec_from_file_location("_pikit_tests_conftest", Path(__file__).with_name("conftest.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    golden: Path = module.GOLDEN
    return golden


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_conformance_kit_passes_completely(shared_sessions: Path) -> None:
    golden = _conftest_golden()
    checker = golden.parent / "check.py"
    assert checker.is_file(), f"conformance kit not found at {checker}"
    assert list(golden.glob("*.golden.json")), f"no goldens in {golden}"
    result = subprocess.run(
        [sys.executable, str(checker), str(golden), str(shared_sessions), "--pikit", f"{sys.executable} -m pikit"],
        capture_output=True, text=True, timeout=900, check=False, cwd=Path(__file__).resolve().parent.parent,
    )
    lines = result.stdout.strip().splitlines()
    assert lines, result.stderr
    last = lines[-1]
    assert result.returncode == 0, f"{last}\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}"
    assert last.startswith("conformance: ") and last.endswith("(100.0%)"), last
    matched, total = last.split()[1].split("/")
    assert matched == total and int(total) > 1000
