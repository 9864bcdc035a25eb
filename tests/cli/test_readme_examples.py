"""The README's command-line examples of ``pikit diff`` and ``export-corpus`` print what it shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.procs import pikit as run_pikit

REPO = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```text\n\$ pikit (diff [^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _examples() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer((REPO / "README.md").read_text(encoding="utf-8"))]


def test_the_readme_has_the_examples() -> None:
    assert len(_examples()) >= 1


@pytest.mark.parametrize(("command", "shown"), _examples())
def test_each_example_prints_what_the_readme_shows(command: str, shown: str) -> None:
    done = run_pikit(*shlex.split(command), cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8") == shown
