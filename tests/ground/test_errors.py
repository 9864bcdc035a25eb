"""Errors in the library's own words: a message names a parameter as a Python caller writes it, never a flag.

The command line says the same messages with its flags (tests/cli/test_flags.py).
"""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import pytest

import pikit.errors
from pikit.errors import PikitError, Wording, WriteError

PACKAGE = Path(pikit.errors.__file__).resolve().parent
#: A command-line flag in a message: ``--force``, ``-o OUT``.
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*|-o [A-Z]+)\b")
FORCE = {"overwrite": "--force"}


def test_a_wording_names_its_parameters_in_the_library_words_unless_told_otherwise() -> None:
    message = Wording("{path}: exists; pass {overwrite} to replace it, or {speed} ({n:,})",
                      {"overwrite": "overwrite=True", "speed": "speed"}, path="/tmp/{speed}", n=12345)
    assert str(message) == "/tmp/{speed}: exists; pass overwrite=True to replace it, or speed (12,345)"
    # a value is never read as a template
    assert message.worded(FORCE) == "/tmp/{speed}: exists; pass --force to replace it, or speed (12,345)"
    error = WriteError(message)
    assert str(error) == str(message) and error.args == (str(message),) and error.wording is message
    assert error.worded({"overwrite": "--force", "speed": "--speed"}).endswith("pass --force to replace it, "
                                                                               "or --speed (12,345)")
    again = pickle.loads(pickle.dumps(error))  # (as a worker process sends it back)
    assert type(again) is WriteError and again.worded(FORCE) == message.worded(FORCE)


def test_an_error_without_a_wording_is_worded_as_it_is() -> None:
    error = PikitError("plain", 2)
    assert error.wording is None and error.args == ("plain", 2) and error.worded({"plain": "--plain"}) == str(error)


def _messages(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string in what a module raises, or passes to an error or a :class:`Wording`
    (a module-level constant it names included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for target in node.targets if isinstance(target, ast.Name)}
    found: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        called = node.func if isinstance(node, ast.Call) else None
        name = called.id if isinstance(called, ast.Name) else called.attr if isinstance(called, ast.Attribute) else ""
        if isinstance(node, ast.Raise) or name.endswith("Error") or name == "Wording":
            for part in ast.walk(node):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    found.add((part.lineno, part.value))
                elif isinstance(part, ast.Name) and part.id in constants:
                    found.add((part.lineno, constants[part.id]))
    return sorted(found)


def flags_in_library_errors(package: Path) -> list[str]:
    """Every flag in an error message of the library (the package outside its command line)."""
    return [f"{path.relative_to(package)}:{line}: {text!r}" for path in sorted(package.rglob("*.py"))
            if path.relative_to(package).parts[0] != "cli" and path.name != "__main__.py"
            for line, text in _messages(path) if FLAG.search(text)]


def test_no_library_error_names_a_flag() -> None:
    assert flags_in_library_errors(PACKAGE) == []


@pytest.mark.parametrize(("text", "flag"), [("or pass --force to", "--force"), ("(-o OUT)", "-o OUT"),
                                            ("--max-gap must be", "--max-gap"), ("pass overwrite=True", None),
                                            ("var(--jp-font)", "--jp-font"), ("YYYY-MM-DD", None),
                                            ("a--b", None), ("max_gap must be", None)])
def test_the_flag_pattern(text: str, flag: str | None) -> None:
    found = FLAG.search(text)
    assert (found.group(1) if found else None) == flag
