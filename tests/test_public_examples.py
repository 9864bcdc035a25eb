"""What users read uses only public names, and every name it uses exists.

The README, the notebooks and docs/*.md are the examples people copy. Their code (a notebook's
code cells, the README's and docs' fenced blocks) never imports or names a private path
(``pikit._x``, ``pikit.<pkg>._x``, ``from pikit.x import _y``), and every ``pikit.<dotted name>``
the README or a notebook mentions, in code or in prose, is a public attribute: each step is
declared in its module's ``__all__`` or is a public submodule, as an import shows.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
GUIDE = sorted((REPO / "docs" / "guide").glob("*.md"))
DOCS = sorted((REPO / "docs").glob("*.md")) + GUIDE

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
DOTTED = re.compile(r"(?<![\w.])pikit(?:\.[A-Za-z_]\w*)+")
"""A dotted name that starts with ``pikit`` (``python -m pikit.replay``, ``pikit.load(path)``)."""


def _is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


# ---------------------------------------------------------------- reading the sources
def _fenced_blocks(markdown: str) -> list[tuple[str, str]]:
    """(language, code) of every fenced block of ``markdown``."""
    return [(match.group(1).strip(), match.group(2)) for match in FENCE.finditer(markdown)]


def _python_source(code: str) -> str:
    """The Python of a code block or cell: doctest prompts kept without their output, magics left out."""
    lines = code.splitlines()
    if any(line.startswith(">>>") for line in lines):
        return "\n".join(line[4:] for line in lines if line.startswith((">>> ", "... ")) or line in (">>>", "..."))
    return "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))


def _notebook_cells(path: Path) -> list[tuple[str, str]]:
    """(cell type, source) of every cell of the notebook at ``path``."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [(cell["cell_type"], "".join(cell["source"])) for cell in notebook["cells"]]


# ---------------------------------------------------------------- what a piece of code names
def _chain(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; None when the chain does not start at a name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return [node.id, *parts] if isinstance(node, ast.Name) else None


def _python_names(source: str) -> tuple[set[str], list[str]]:
    """The pikit names a piece of Python uses (imports and attribute chains), and its private imports.

    A name bound by an import of pikit stands for its dotted path in the attribute chains that
    start at it (``from pikit import frames`` then ``frames.shorten``: ``pikit.frames.shorten``),
    unless the code assigns to that name too.
    """
    tree = ast.parse(source)
    names: set[str] = set()
    private: list[str] = []
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "pikit":
                    names.add(alias.name)
                    aliases[alias.asname or "pikit"] = alias.name if alias.asname else "pikit"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "pikit":
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                names.add(dotted)
                aliases[alias.asname or alias.name] = dotted
                if _is_private(alias.name):
                    private.append(f"from {node.module} import {alias.name}")
    assigned = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    for node in ast.walk(tree):
        chain = _chain(node) if isinstance(node, ast.Attribute) else None
        if chain and chain[0] in aliases and chain[0] not in assigned:
            names.add(".".join([aliases[chain[0]], *chain[1:]]))
    return names, private


def _code_names(language: str, code: str) -> tuple[set[str], list[str]]:
    """The pikit names in a code block or cell (Python read as Python, anything else as text) and its private ones."""
    names = set(DOTTED.findall(code))
    private: list[str] = []
    if language in ("python", "py", ""):
        try:
            found, private = _python_names(_python_source(code))
        except SyntaxError:
            if language != "":  # (an unlabelled fence may hold anything)
                raise
        else:
            names |= found
    private += sorted(name for name in names if any(_is_private(part) for part in name.split(".")[1:]))
    return names, private


# ---------------------------------------------------------------- resolving a name
@cache
def _problem(dotted: str) -> str | None:
    """Why ``dotted`` is not a public attribute of pikit (None when it is)."""
    parts = dotted.split(".")
    value = importlib.import_module(parts[0])
    where = parts[0]
    for part in parts[1:]:
        if _is_private(part):
            return f"{dotted}: {part!r} is private"
        if inspect.ismodule(value):
            module = value
            try:
                value = getattr(module, part)
            except AttributeError:
                try:
                    value = importlib.import_module(f"{module.__name__}.{part}")
                except ModuleNotFoundError:
                    return f"{dotted}: {where} has no {part!r}"
            submodule = inspect.ismodule(value) and value.__name__ == f"{module.__name__}.{part}"
            if not submodule and part not in getattr(module, "__all__", ()):
                return f"{dotted}: {part!r} is not declared in {where}.__all__"
        elif hasattr(value, part):
            value = getattr(value, part)
        else:
            return f"{dotted}: {where} has no {part!r}"
        where = f"{where}.{part}"
    return None


def _problems(names: set[str]) -> list[str]:
    return sorted(problem for problem in map(_problem, names) if problem)


# ---------------------------------------------------------------- the sources
def _readme_code() -> list[tuple[str, str]]:
    return _fenced_blocks(README.read_text(encoding="utf-8"))


def test_the_sources_are_there() -> None:
    assert len(NOTEBOOKS) >= 4 and len(GUIDE) >= 7 and len(_readme_code()) >= 5
    assert all(any(kind == "code" for kind, _ in _notebook_cells(path)) for path in NOTEBOOKS)


@pytest.mark.parametrize("path", GUIDE, ids=lambda p: p.name)
def test_guide_names_resolve_to_public_attributes(path: Path) -> None:
    """The guide pages hold what the README said at length: the same check."""
    text = path.read_text(encoding="utf-8")
    names = set(DOTTED.findall(text))
    for language, code in _fenced_blocks(text):
        names |= _code_names(language, code)[0]
    assert _problems(names) == []


def test_readme_code_uses_no_private_path() -> None:
    private = [name for language, code in _readme_code() for name in _code_names(language, code)[1]]
    assert private == []


def test_readme_names_resolve_to_public_attributes() -> None:
    text = README.read_text(encoding="utf-8")
    names = set(DOTTED.findall(text))
    for language, code in _fenced_blocks(text):
        names |= _code_names(language, code)[0]
    assert len(names) > 10
    assert _problems(names) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_code_uses_no_private_path(path: Path) -> None:
    private = [name for kind, source in _notebook_cells(path) if kind == "code"
               for name in _code_names("python", source)[1]]
    assert private == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_names_resolve_to_public_attributes(path: Path) -> None:
    names: set[str] = set()
    for kind, source in _notebook_cells(path):
        names |= _code_names("python", source)[0] if kind == "code" else set(DOTTED.findall(source))
    assert names
    assert _problems(names) == []


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_docs_code_uses_no_private_path(path: Path) -> None:
    private = [name for language, code in _fenced_blocks(path.read_text(encoding="utf-8"))
               for name in _code_names(language, code)[1]]
    assert private == []


# ---------------------------------------------------------------- the checks themselves
def test_the_checks_catch_private_paths() -> None:
    code = ("import pikit._lazy\nfrom pikit._format.loading import read_session\n"
            "from pikit.corpus._dask import connect\nfrom pikit.compaction import _entries\n"
            "import pikit\npikit.compaction._simulate.simulate\n"
            "from pikit import compaction\ncompaction._walkthrough\n")
    private = _code_names("python", code)[1]
    assert "from pikit.compaction import _entries" in private
    assert {"pikit._lazy", "pikit._format.loading.read_session", "pikit.corpus._dask.connect",
            "pikit.compaction._simulate.simulate", "pikit.compaction._walkthrough"} <= set(private)
    assert _code_names("bash", "python -m pikit._format.loading x\n")[1] == ["pikit._format.loading"]
    doctest = ">>> from pikit._tree.sessiontree import SessionTree\n>>> 1 + 1\n2\n"
    assert "pikit._tree.sessiontree.SessionTree" in _code_names("python", doctest)[1]
    assert _code_names("python", "import pikit\npikit.__version__\n")[1] == []


def test_the_checks_catch_names_that_are_missing_or_not_public() -> None:
    names, _ = _code_names("python", "%matplotlib inline\nfrom pikit import frames\nframes.nothing_here\n"
                                     "frames = None\nimport pikit.charts as charts\ncharts.budget\n")
    assert "pikit.frames.nothing_here" not in names  # (``frames`` is assigned to: not followed)
    assert "pikit.charts.budget" in names
    problems = _problems({"pikit.preparation.find_cut_point", "pikit.typing", "pikit.corpus.Corpus.nothing",
                          "pikit.llm.select", "pikit.frames.pd", "pikit._lazy.exports"})
    assert len(problems) == 6, problems
    assert _problems({"pikit.compaction.walkthrough", "pikit.replay", "pikit.Session.context", "pikit.jsjson.stringify",
                      "pikit.corpus.connect", "pikit.__version__"}) == []
