"""The README's commands and code blocks run as shown, and so do the guide's ``diff``, export and site examples.

Every ``$ pikit …`` block of the README runs from the repository's root, 100 columns wide (the
width of output that is not a terminal), and prints what the README shows; every Python block
runs as a doctest, in order, from the repository's root. The corpus index goes to a fresh
cache folder. The set-up block's test command is the one CI runs.

In the guide, ``pikit diff`` examples (the command line's page) run the same way; the corpus
page's export section runs in a fresh folder that links ``data`` and ``tests`` to the
repository's, so that its relative paths (from the repository's root) mean the same there, and
its site example runs in a fresh folder too.
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
GUIDE = REPO / "docs" / "guide"
CLI_PAGE = (GUIDE / "cli.md").read_text(encoding="utf-8")
CORPUS_PAGE = (GUIDE / "corpus.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"^```text\n\$ pikit ([^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
PYTHON = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
SETUP = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)
SECTION = CORPUS_PAGE[CORPUS_PAGE.index("## Data sets: Parquet and ATIF"):
                      CORPUS_PAGE.index("## Beyond one machine: Dask")]


def _examples(text: str, command: str = "") -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(text) if m.group(1).startswith(command)]


def _run_doctests(blocks: list[str], name: str) -> None:
    globs: dict[str, object] = {}
    for i, block in enumerate(blocks):
        test = doctest.DocTestParser().get_doctest(block, globs, f"{name} block {i}", name, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        assert runner.tries > 0 and runner.failures == 0, f"{name} block {i}"


def test_the_readme_has_its_recipes() -> None:
    assert len(_examples(README)) >= 3
    assert len(PYTHON.findall(README)) >= 3


@pytest.mark.parametrize(("command", "shown"), _examples(README), ids=[c for c, _ in _examples(README)])
def test_each_readme_command_prints_what_it_shows(command: str, shown: str, tmp_path: Path) -> None:
    done = run_pikit(*shlex.split(command), cwd=REPO, timeout=300,
                     extra_env={"COLUMNS": "100", "XDG_CACHE_HOME": str(tmp_path), "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8") == shown


def test_the_readme_python_blocks_run_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(REPO)
    _run_doctests(PYTHON.findall(README), "README.md")


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    [setup] = SETUP.findall(README)
    install, tests = setup.strip().splitlines()
    assert install.startswith("python3 -m pip install -e \".[test]\"")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests in ci


@pytest.mark.parametrize(("command", "shown"), _examples(CLI_PAGE, "diff"))
def test_each_diff_example_prints_what_the_guide_shows(command: str, shown: str) -> None:
    done = run_pikit(*shlex.split(command), cwd=REPO, timeout=120, extra_env={"COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8") == shown


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_export_section_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "data").symlink_to(REPO / "data")
    (tmp_path / "tests").symlink_to(REPO / "tests")
    [(command, shown)] = _examples(SECTION, "export-corpus")
    done = run_pikit(*shlex.split(command), cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8") == shown
    blocks = PYTHON.findall(SECTION)
    assert len(blocks) == 2
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        _run_doctests(blocks, "docs/guide/corpus.md export section")
    finally:
        os.chdir(here)


@pytest.mark.timeout(600)
def test_the_site_example_prints_what_the_guide_shows(tmp_path: Path) -> None:
    (tmp_path / "data").symlink_to(REPO / "data")
    site = CORPUS_PAGE[CORPUS_PAGE.index("## A site to browse"):]
    [(command, shown)] = _examples(site, "export-corpus")
    done = run_pikit(*shlex.split(command), cwd=tmp_path, timeout=300,
                     extra_env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8") == shown
    assert (tmp_path / "site" / "index.html").is_file()
