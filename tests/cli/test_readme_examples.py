"""The README's examples of ``pikit diff`` and of the data-set exports print what it shows.

``pikit diff`` runs from the repository's root, 100 columns wide (the width of output that is
not a terminal). The export section's command and its Python blocks run in a fresh folder
that links ``data`` and ``tests`` to the repository's, so that the README's relative paths
(run from the repository's root) mean the same there.
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
from pathlib import Path

import pytest

from tests.procs import pikit as run_pikit

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"^```text\n\$ pikit ((?:diff|export-corpus) [^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
SECTION = README[README.index("### Data sets: Parquet and ATIF"):README.index("### Beyond one machine: Dask")]


def _examples(text: str, command: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(text) if m.group(1).startswith(command)]


@pytest.mark.parametrize(("command", "shown"), _examples(README, "diff"))
def test_each_diff_example_prints_what_the_readme_shows(command: str, shown: str) -> None:
    done = run_pikit(*shlex.split(command), cwd=REPO, timeout=120, extra_env={"COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8") == shown


@pytest.mark.timeout(600)
def test_the_export_section_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "data").symlink_to(REPO / "data")
    (tmp_path / "tests").symlink_to(REPO / "tests")
    [(command, shown)] = _examples(SECTION, "export-corpus")
    done = run_pikit(*shlex.split(command), cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8") == shown
    blocks = re.findall(r"^```python\n(.*?)^```", SECTION, re.MULTILINE | re.DOTALL)
    assert len(blocks) == 2
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        globs: dict[str, object] = {}
        for i, block in enumerate(blocks):
            test = doctest.DocTestParser().get_doctest(block, globs, f"README export block {i}", "README.md", 0)
            runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
            runner.run(test)
            assert runner.tries > 0 and runner.failures == 0, f"README export block {i}"
    finally:
        os.chdir(here)


@pytest.mark.timeout(600)
def test_the_site_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    (tmp_path / "data").symlink_to(REPO / "data")
    site = README[README.index("### A site to browse"):README.index("## Sharing a session safely")]
    [(command, shown)] = _examples(site, "export-corpus")
    done = run_pikit(*shlex.split(command), cwd=tmp_path, timeout=300,
                     extra_env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8") == shown
    assert (tmp_path / "site" / "index.html").is_file()
