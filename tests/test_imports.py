"""The floors of the package: every import points down, nothing is heavy below the layers, no cycle.

The floors, from the ground up, are declared in :data:`FLOORS`; docs/architecture.md explains
them. A module may import its own floor and the floors below it, at module level, under
``TYPE_CHECKING`` and inside functions alike, and no imports of any kind form a cycle.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

import pikit
from pikit import _lazy

PACKAGE = Path(pikit.__file__).resolve().parent
HEAVY = ("pandas", "matplotlib", "ipywidgets", "anywidget", "httpx", "tiktoken", "pydantic", "tqdm", "numpy")


def _imported_in_fresh_interpreter(statement: str) -> list[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False,
                            cwd=PACKAGE.parent)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "statement",
    [
        "import pikit",
        "import pikit; [getattr(pikit, name) for name in pikit.__all__]",
        "import pikit.cli._context, pikit.cli._tree, pikit.cli._files",
        "import pikit.cli, pikit.cli._app, pikit.cli._common, pikit.cli._compact, pikit.cli._branch",
        "import pikit; s = pikit.loads(open(r'{sessions}/tree-basic.jsonl', 'rb').read()); s.context().tokens",
    ],
)
def test_core_imports_nothing_heavy(statement: str, shared_sessions: Path) -> None:
    modules = _imported_in_fresh_interpreter(statement.replace("{sessions}", str(shared_sessions)))
    assert "pikit" in modules
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert heavy == [], f"{statement!r} imported {heavy}"
    layers = sorted(m for m in modules if m.startswith(("pikit.llm", "pikit.frames", "pikit.charts", "pikit.widgets",
                                                        "pikit.corpus")))
    assert layers == [], f"{statement!r} imported {layers}"



# ---------------------------------------------------------------- the floors
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ground", ("_version", "_lazy", "errors", "jsjson", "_inert", "_limits", "_formatting", "_palette", "_progress",
                "_columns",
                "_card")),
    ("format", ("_format",)),
    ("tree", ("_tree",)),
    ("context", ("_context",)),
    ("compaction", ("compaction",)),
    ("session", ("_session",)),
    ("following", ("_following", "_replaying")),
    ("redaction", ("_redaction",)),
    ("llm", ("llm",)),
    ("frames", ("frames",)),
    ("corpus", ("corpus",)),
    ("charts", ("charts",)),
    ("widgets", ("widgets",)),
    ("export", ("export",)),
    ("cli", ("cli", "__main__", "replay")),
    ("surface", ("__init__",)),
)
"""Each floor, from the ground up, with the top-level modules and folders of ``pikit/`` it holds."""
CORE = ("ground", "format", "tree", "context", "compaction", "session", "following")
"""The floors that make up the core: pure Python, nothing heavy, never a layer."""


def _floor_of(parts: tuple[str, ...]) -> int:
    """The floor number of a module given its path inside the package (``("_format", "tail.py")``)."""
    first = parts[0][:-3] if parts[0].endswith(".py") else parts[0]
    for number, (_, holds) in enumerate(FLOORS):
        if first in holds:
            return number
    raise AssertionError(f"pikit/{parts[0]} is on no floor: add it to FLOORS")


def _imports(path: Path, package: Path | None = None) -> list[tuple[int, str]]:
    """(line, dotted module) of every pikit import in ``path``: module-level, type-only and in functions."""
    package = package or PACKAGE
    own = ".".join(path.relative_to(package.parent).with_suffix("").parts)
    base = own.rsplit(".", 1)[0]  # the package relative imports start from (``pikit.x`` for pikit/x/__init__.py too)
    modules = _modules(package)
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base.split(".")[: len(base.split(".")) - (node.level - 1)]
                target = ".".join([*anchor, *([node.module] if node.module else [])])
            elif node.module and node.module.split(".")[0] == package.name:
                target = node.module
            else:
                continue
            for alias in node.names:  # ``from . import errors`` names a module; ``from .x import y`` a name
                found.append((node.lineno, f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == package.name]
    return found


@functools.cache
def _modules(package: Path) -> frozenset[str]:
    """The dotted names of every module of ``package`` (read once per package)."""
    return frozenset(_dotted(p, package) for p in package.rglob("*.py"))


def _dotted(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _downward_violations(path: Path, package: Path | None = None) -> list[str]:
    package = package or PACKAGE
    own = _floor_of(path.relative_to(package).parts)
    out = []
    for line, target in _imports(path, package):
        rest = tuple(target.split(".")[1:])
        floor = _floor_of(rest) if rest else len(FLOORS) - 1  # the package itself: the surface
        if floor > own:
            out.append(f"{path.relative_to(package)}:{line} ({FLOORS[own][0]}) imports {target} ({FLOORS[floor][0]})")
    return out


def _cycles(package: Path) -> list[list[str]]:
    """The import cycles among the modules of ``package`` (strongly connected components), any kind of import."""
    graph: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        name = _dotted(path, package)
        graph[name] = {target for _, target in _imports(path, package) if target != name}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]  # an iterative Tarjan: no recursion
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_import_points_down(path: Path) -> None:
    assert _downward_violations(path) == []


def test_no_import_cycle_of_any_kind() -> None:
    assert _cycles(PACKAGE) == []


def _sample_package(tmp_path: Path) -> Path:
    package = tmp_path / "pikit"
    for folder in ("_format", "_context", "widgets", "frames"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    return package


def test_the_floor_check_catches_an_upward_import_of_any_kind(tmp_path: Path) -> None:
    package = _sample_package(tmp_path)
    (package / "widgets" / "view.py").write_text("from ..frames import build\nfrom .._format import tail\n")
    sample = package / "_format" / "sample.py"
    sample.write_text("from typing import TYPE_CHECKING\nfrom .._context import tokens\nimport pikit.widgets.view\n"
                      "if TYPE_CHECKING:\n    from ..frames import x\ndef f():\n    from pikit import widgets\n"
                      "from . import tail\n")
    found = _downward_violations(sample, package)
    assert len(found) == 4 and all("(format) imports" in v for v in found), found
    assert _downward_violations(package / "widgets" / "view.py", package) == []


def test_the_cycle_check_finds_type_only_and_in_function_cycles(tmp_path: Path) -> None:
    package = _sample_package(tmp_path)
    (package / "_format" / "a.py").write_text("from typing import TYPE_CHECKING\n"
                                              "if TYPE_CHECKING:\n    from .b import B\n")
    (package / "_format" / "b.py").write_text("def f():\n    from .a import A\n")
    (package / "_format" / "c.py").write_text("from .a import A\n")
    assert _cycles(package) == [["pikit._format.a", "pikit._format.b"]]


def test_every_top_level_module_and_folder_is_on_a_floor() -> None:
    for path in PACKAGE.iterdir():
        if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()):
            _floor_of((path.name,))


TESTS = Path(__file__).resolve().parent
ACROSS = {"browser": "the notebooks and pages in a real Chromium", "notebooks": "the bundled notebooks, top to bottom",
          "data": "the test data"}
"""The folders of tests/ that are not named after a part of the package, and what they hold."""
PROJECT_WIDE = ("test_imports.py", "test_quality.py", "test_docs.py", "test_public_examples.py",
                "test_conformance.py", "test_samples.py")
"""The only test files at the top of tests/: checks of the whole project; every other test sits in a folder."""


def test_each_test_folder_is_named_after_a_part_of_the_package() -> None:
    parts = {path.stem for path in PACKAGE.iterdir()
             if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists())}
    floors = {name for name, _ in FLOORS}
    for folder in TESTS.iterdir():
        if folder.is_dir() and not folder.name.startswith((".", "__")) and folder.name not in ACROSS:
            # tests/_format for pikit/_format, tests/charts for pikit/charts.py, tests/redaction for pikit/_redaction,
            # tests/ground for the ground floor's small modules
            assert {folder.name, f"_{folder.name}"} & parts or folder.name in floors, \
                f"tests/{folder.name} is named after no module, folder or floor of pikit/"


def test_only_the_project_wide_checks_sit_at_the_top_of_tests() -> None:
    assert sorted(path.name for path in TESTS.glob("test_*.py")) == sorted(PROJECT_WIDE)


def _core_modules() -> list[Path]:
    core = [n for n, (name, _) in enumerate(FLOORS) if name in CORE]
    return sorted(p for p in PACKAGE.rglob("*.py") if _floor_of(p.relative_to(PACKAGE).parts) in core)


def test_the_core_holds_the_floors() -> None:
    names = {str(p.relative_to(PACKAGE)) for p in _core_modules()}
    assert {"jsjson.py", "_format/loading.py", "_tree/sessiontree.py", "_session.py", "_context/projection.py",
            "compaction/_preparation.py"} <= names


def test_core_modules_import_heavy_packages_only_lazily() -> None:
    """A heavy package may appear in a core module only inside a function (an optional feature)."""
    offenders = []
    for path in _core_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level only
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in HEAVY]
    assert offenders == []


# ---------------------------------------------------------------- the public API
def test_all_names_resolve_and_are_unique() -> None:
    assert len(pikit.__all__) == len(set(pikit.__all__))
    for name in pikit.__all__:
        assert getattr(pikit, name) is not None, name


def test_all_lists_exactly_the_public_names() -> None:
    public = {
        name for name in dir(pikit)
        if not name.startswith("_") and not inspect.ismodule(getattr(pikit, name)) and name != "annotations"
    }
    assert public | {"__version__"} == set(pikit.__all__)


@pytest.mark.parametrize("package", ["pikit", "pikit.compaction", "pikit.corpus", "pikit.llm"])
def test_a_package_imports_its_submodules_when_their_names_are_used(package: str) -> None:
    """Importing a package runs its own module only; each exported name comes from its submodule when used."""
    script = f"""
import json, sys, {package} as p
before = sorted(m for m in sys.modules if m.startswith("pikit."))
values = [getattr(p, name) for name in p.__all__]
after = sorted(m for m in sys.modules if m.startswith("{package}."))
print(json.dumps([before, after, sorted(set(p.__all__) - set(dir(p)))]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    before, after, undisclosed = json.loads(done.stdout)
    assert set(before) <= {"pikit._lazy", "pikit.compaction", "pikit.corpus", "pikit.llm"}
    assert len(after) > 1 and undisclosed == []
    with pytest.raises(AttributeError, match="no attribute 'nothing_of_that_name'"):
        importlib.import_module(package).nothing_of_that_name  # noqa: B018 (the lookup is what is tested)


def test_submodules_are_attributes_of_their_package_after_a_plain_import() -> None:
    script = ("import pikit, pikit.llm, pikit.corpus; "
              "print(pikit.errors.PikitError.__name__, pikit.llm._transport.__name__, pikit.corpus._index.__name__)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          cwd=PACKAGE.parent)
    assert done.stdout.split() == ["PikitError", "pikit.llm._transport", "pikit.corpus._index"]


def test_type_checkers_see_exactly_the_exported_names(tmp_path: Path) -> None:
    """The lazy packages define ``__getattr__`` only at run time: to mypy, a misspelt name is an error."""
    snippet = tmp_path / "use.py"
    packages = [name for name in NAMESPACES if name != "pikit"]
    used = "".join(f"{name}.{importlib.import_module(name).__all__[0]}\n" for name in packages)
    misspelt = "".join(f"{name}.nothing_of_that_name\n" for name in packages)
    snippet.write_text("import pikit\n" + "".join(f"import {name}\n" for name in packages)
                       + "from pikit import Session\nsession: Session = pikit.load('x')\n" + used
                       + "pikit.lod(1)\n" + misspelt, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", str(snippet)],
                          cwd=PACKAGE.parent, capture_output=True, text=True)
    errors = [line for line in done.stdout.splitlines() if "use.py:" in line]
    first = 4 + 2 * len(packages)  # the imports, two lines, the names used; then the misspelt ones
    assert [int(line.split(":")[1]) for line in errors] == list(range(first, first + 1 + len(packages))), done.stdout


def test_public_names_come_from_the_package() -> None:
    for name in pikit.__all__:
        value = getattr(pikit, name)
        if name == "__version__":
            assert isinstance(value, str)
        elif inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith("pikit."), name


def test_essential_api_is_exported() -> None:
    for name in ("load", "loads", "Session", "Entry", "Projection", "ProjectedEntry", "LoadReport", "Problem",
                 "estimate_tokens", "ContextSize", "PikitError", "SessionFileError", "NotASessionError",
                 "DamagedLineError", "UnknownEntryError", "WriteError"):
        assert name in pikit.__all__, name
    assert issubclass(pikit.NotASessionError, pikit.SessionFileError)
    assert issubclass(pikit.DamagedLineError, pikit.SessionFileError)
    for error in (pikit.SessionFileError, pikit.UnknownEntryError, pikit.WriteError, pikit.SettingsError,
                  pikit.SummarizerError, pikit.EntryError):
        assert issubclass(error, pikit.PikitError)


def test_no_public_name_shadows_a_submodule() -> None:
    """``import pikit.X as m`` gives the module X whenever pikit has one (no function of that name hides it)."""
    import importlib

    import pikit.compaction._simulate as simulate_module

    assert inspect.ismodule(simulate_module) and callable(simulate_module.simulate)
    for path in [*PACKAGE.glob("*.py"), *(p.parent for p in PACKAGE.glob("*/__init__.py"))]:
        name = path.stem if path.suffix == ".py" else path.name
        if name.startswith("_"):
            continue
        importlib.import_module(f"pikit.{name}")
        value = getattr(pikit, name)
        assert inspect.ismodule(value), f"pikit.{name} is {value!r}, not the submodule"




# ---------------------------------------------------------------- one declared surface
NAMESPACES = ("pikit", "pikit.compaction", "pikit.llm", "pikit.frames", "pikit.corpus", "pikit.widgets", "pikit.export",
              "pikit.cli")
"""The public packages: each declares its names once, and ``__all__`` is derived from that."""
PUBLIC_MODULES = ("pikit.errors", "pikit.jsjson", "pikit.charts", "pikit.replay")
"""The public modules: each defines its names itself and lists them in ``__all__``."""


def _public_modules() -> set[str]:
    out = set()
    for path in PACKAGE.rglob("*.py"):
        name = _dotted(path, PACKAGE)
        if not any(part.startswith("_") for part in name.split(".")):
            out.add(name)
    return out


def test_no_other_public_module_exists() -> None:
    assert _public_modules() == {*NAMESPACES, *PUBLIC_MODULES}


def test_at_most_eight_public_modules_at_the_top() -> None:
    top = [p.name for p in PACKAGE.glob("*.py") if not p.name.startswith("_")]
    assert len(top) <= 8, top


@pytest.mark.parametrize("name", NAMESPACES)
def test_a_namespace_exports_exactly_its_declared_names(name: str) -> None:
    package = importlib.import_module(name)
    values = {n: getattr(package, n) for n in package.__all__}  # every declared name resolves
    public = {n for n in dir(package) if not n.startswith("_") and n not in ("annotations", "typing")
              and not inspect.ismodule(getattr(package, n))}
    assert public | ({"__version__"} & set(values)) == set(package.__all__)
    assert len(package.__all__) == len(set(package.__all__))


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_a_public_module_lists_what_it_defines(name: str) -> None:
    module = importlib.import_module(name)
    defined = {n for n, v in vars(module).items() if not n.startswith("_")
               and (inspect.isclass(v) or inspect.isfunction(v)) and v.__module__ == name}
    assert defined <= set(module.__all__)
    assert all(hasattr(module, n) for n in module.__all__)


def test_a_declaration_holds_explicit_re_exports_only() -> None:
    assert _lazy.declared("pikit.x", "import typing\nif typing.TYPE_CHECKING:\n    from .a import B as B, c as c\n") \
        == {"B": "pikit.x.a", "c": "pikit.x.a"}
    wrongs = ("from .a import B\n", "from .a import B as C\n", "import os\n",
              "from .a import B as B\nfrom .b import B as B\n")
    for wrong in wrongs:
        block = "    " + wrong.replace("\n", "\n    ").rstrip() + "\n"
        with pytest.raises(ValueError, match=r"^pikit\.x: "):
            _lazy.declared("pikit.x", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n" + block)
