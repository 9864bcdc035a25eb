"""The code stays clean: ruff and mypy pass on the package and the tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def test_ruff_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "pikit", "tests", "benchmarks", "data"],
                            cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# ---------------------------------------------------------------- size limits
MAX_COMPLEXITY = 25
MAX_MODULE_LINES = 600
PACKAGE = REPO / "pikit"


def _functions(blocks: list[Any]) -> list[Any]:
    """Every function and method radon found, closures and nested classes' methods included."""
    out = []
    for block in blocks:
        if hasattr(block, "methods"):
            out += _functions(list(block.methods) + list(getattr(block, "inner_classes", [])))
        else:
            out.append(block)
            out += _functions(list(getattr(block, "closures", [])))
    return out


def test_no_function_is_too_complex() -> None:
    """No function or method in pikit/ above cyclomatic complexity 25 (radon's measure)."""
    from radon.complexity import cc_visit

    too_complex = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for function in _functions(cc_visit(path.read_text(encoding="utf-8"))):
            if function.complexity > MAX_COMPLEXITY:
                too_complex.append(f"{path.relative_to(REPO)}:{function.lineno} {function.fullname} "
                                   f"({function.complexity})")
    assert too_complex == [], f"split these functions (limit {MAX_COMPLEXITY}): {too_complex}"


def test_no_module_is_too_long() -> None:
    """No module in pikit/ above 600 lines: a module that grows past it is split by what it holds."""
    too_long = [f"{path.relative_to(REPO)} ({lines} lines)" for path in sorted(PACKAGE.rglob("*.py"))
                if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert too_long == [], f"split these modules (limit {MAX_MODULE_LINES} lines): {too_long}"


def test_the_complexity_measure_sees_methods_and_closures() -> None:
    from radon.complexity import cc_visit

    branches = "\n".join(f"        if x == {i}:\n            return {i}" for i in range(30))
    code = (f"class A:\n    def m(self, x):\n{branches}\n        return -1\n\n"
            f"def f():\n    def g(x):\n{branches}\n    return g\n")
    found = {fn.name: fn.complexity for fn in _functions(cc_visit(code))}
    assert found["m"] > MAX_COMPLEXITY and found["g"] > MAX_COMPLEXITY


def test_every_data_file_of_the_package_is_installed() -> None:
    """Each file in pikit/ that is not Python is declared package data, so a wheel carries it."""
    import fnmatch
    import tomllib

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    data = [p for p in (REPO / "pikit").rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")
            and "__pycache__" not in p.parts]
    assert data, "the package has data files (the catalog snapshot, the widgets' front ends)"
    for path in data:
        package = ".".join(path.parent.relative_to(REPO).parts)
        assert any(fnmatch.fnmatch(path.name, pattern) for pattern in declared.get(package, [])), path
