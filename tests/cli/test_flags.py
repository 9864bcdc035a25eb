"""The command line shows the library's errors with its flags: one table maps each parameter to its flag."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pikit.errors
from pikit.cli._flags import FLAGS, in_flags
from pikit.errors import Wording, WriteError
from tests.procs import one_error_line, pikit as run_pikit

PACKAGE = Path(pikit.errors.__file__).resolve().parent
SAMPLE = PACKAGE.parent / "data" / "sample_sessions" / "refactor-auth.jsonl"


def _named_parameters() -> dict[str, list[str]]:
    """Each parameter a :class:`Wording` of the library names, with where."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Wording":
                parameters = node.args[1]
                assert isinstance(parameters, ast.Dict), f"{path}:{node.lineno}: give the parameters as a dict"
                for key in parameters.keys:
                    assert isinstance(key, ast.Constant) and isinstance(key.value, str)
                    found.setdefault(key.value, []).append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_every_parameter_a_library_error_names_has_its_flag_and_every_flag_is_named() -> None:
    named = _named_parameters()
    assert {"speed", "max_gap", "force", "overwrite", "output", "index"} <= set(named)
    assert set(named) == set(FLAGS), named


def test_the_flags_replace_the_parameters_words() -> None:
    error = WriteError(Wording("{path}: pass {overwrite}, or {other}", {"overwrite": "overwrite=True",
                                                                       "other": "other=1"}, path="p"))
    assert in_flags(error) == "p: pass --force, or other=1"  # a parameter without a flag keeps its words
    assert in_flags(WriteError("no parameters")) == "no parameters"


def test_a_file_that_exists_is_refused_with_force(tmp_path: Path) -> None:
    exists = tmp_path / "exists.jsonl"
    exists.write_text("keep\n")
    commands: list[list[str | Path]] = [["migrate", SAMPLE, "-o", exists], ["export", SAMPLE, "-o", exists],
                                        ["fork", SAMPLE, "--leaf", "1cbf6f30", "-o", exists]]
    for argv in commands:
        line = one_error_line(run_pikit(*argv))
        assert line == f"pikit: error: {exists}: already exists; choose a new output path (or pass --force to " \
                       "replace it)", line
    assert exists.read_text() == "keep\n"


def test_a_damaged_last_line_is_refused_with_the_output_flag(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(SAMPLE.read_bytes() + b'{"type":"mess')
    line = one_error_line(run_pikit("compact", damaged, "--keep-recent-tokens", "4000", "--in-place"))
    assert line == (f"pikit: error: {damaged}: the last line has no newline and is damaged (an interrupted write?); "
                    "pikit will not append to it or repair it. Write a copy with -o OUT instead")


def test_an_index_that_is_not_one_is_refused_with_the_index_flag(tmp_path: Path) -> None:
    (tmp_path / "sessions" / "p").mkdir(parents=True)
    shutil.copy(SAMPLE, tmp_path / "sessions" / "p" / "s.jsonl")
    index = tmp_path / "notes.duckdb"
    index.write_text("not a database\n")
    for command in ("usage", "sessions", "problems"):
        line = one_error_line(run_pikit(command, tmp_path / "sessions", "--index", index))
        assert line == (f"pikit: error: {index}: is not a DuckDB database; pikit writes only into its own index: "
                        "pass a new path or an index pikit made to --index"), line
