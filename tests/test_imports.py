"""The import direction: the core is light and never depends on the layers above it."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

import pikit

PACKAGE = Path(pikit.__file__).resolve().parent
HEAVY = ("pandas", "matplotlib", "ipywidgets", "anywidget", "httpx", "tiktoken", "pydantic", "tqdm", "numpy")
LAYERS = ("llm", "frames", "charts", "widgets", "export", "cli", "corpus")
# Top-level modules that are not core: the charts layer and the CLI entry point.
NOT_CORE = {"charts.py", "__main__.py"}


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


def _core_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.glob("*.py") if p.name not in NOT_CORE)


def _is_script_block(node: ast.stmt) -> bool:
    """Whether ``node`` is ``if __name__ == "__main__":``."""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and isinstance(test.ops[0], ast.Eq) and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == "__main__")


def _imported_on_import(path: Path) -> ast.Module:
    """``path`` parsed, without its script block: that block runs only when the module is run as a program
    (``python -m pikit.replay`` starts the command line's program there), never when it is imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    tree.body = [node for node in tree.body if not _is_script_block(node)]
    return tree


def _layer_imports(path: Path) -> list[str]:
    """Every import of pikit.llm/frames/charts/widgets/cli in a core module, lazy ones included."""
    found: list[str] = []
    for node in ast.walk(_imported_on_import(path)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:  # from .x import y / from . import y
                targets = [node.module] if node.module else [alias.name for alias in node.names]
            elif node.level == 0 and node.module and node.module.startswith("pikit"):
                rest = node.module.split(".", 1)
                targets = [rest[1]] if len(rest) > 1 else [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                if target.split(".")[0] in LAYERS:
                    found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "pikit" and len(parts) > 1 and parts[1] in LAYERS:
                    found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_there_are_core_modules() -> None:
    names = {p.name for p in _core_modules()}
    assert {"jsjson.py", "loading.py", "session.py", "tree.py", "projection.py", "tokens.py", "preparation.py",
            "branch_summary.py", "write.py"} <= names


@pytest.mark.parametrize("path", _core_modules(), ids=lambda p: p.name)
def test_core_module_does_not_import_the_layers(path: Path) -> None:
    assert _layer_imports(path) == []


def test_the_ast_check_catches_layer_imports(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from .llm import x\nfrom . import widgets\nimport pikit.frames\nfrom pikit.cli import main\n"
                      "from .jsjson import loads\ndef f():\n    from .charts import plot\n")
    assert len(_layer_imports(sample)) == 5
    sample.write_text("import sys\nif __name__ == '__main__':\n    from .cli._replay import main\n"
                      "if __name__ != '__main__':\n    from .cli import run\n")
    assert _layer_imports(sample) == ["line 5: from .cli import run"]


def test_only_the_replay_module_runs_as_a_program() -> None:
    """The one script block outside the cli layer: ``python -m pikit.replay``, which starts pikit.cli._replay."""
    blocks = {str(path.relative_to(PACKAGE)): [node for node in ast.parse(path.read_text(encoding="utf-8")).body
                                               if _is_script_block(node)]
              for path in PACKAGE.rglob("*.py")}
    assert [name for name, found in blocks.items() if found] == ["replay.py"]
    assert ast.unparse(blocks["replay.py"][0]).splitlines()[1:] == [
        "    import sys", "    from .cli._replay import main", "    sys.exit(main())"]


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


@pytest.mark.parametrize("package", ["pikit", "pikit.corpus", "pikit.llm"])
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
    assert set(before) <= {"pikit._lazy", "pikit.corpus", "pikit.llm"}
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
    snippet.write_text("import pikit\nimport pikit.corpus\nimport pikit.llm\nfrom pikit import Session\n\n"
                       "session: Session = pikit.load('x')\ncorpus = pikit.corpus.Corpus\n"
                       "pikit.lod(1)\npikit.corpus.Corpuz\npikit.llm.nothing\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", str(snippet)],
                          cwd=PACKAGE.parent, capture_output=True, text=True)
    errors = [line for line in done.stdout.splitlines() if line.startswith(str(snippet))]
    assert [line.split(":")[1] for line in errors] == ["8", "9", "10"], done.stdout


def test_public_names_come_from_the_package() -> None:
    for name in pikit.__all__:
        value = getattr(pikit, name)
        if name == "__version__":
            assert isinstance(value, str)
            continue
        assert getattr(value, "__module__", "").startswith("pikit"), name


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


# ---------------------------------------------------------------- layer against layer
LAYER_ORDER = ("core", "llm", "frames", "corpus", "charts", "live", "widgets", "export", "cli")
"""Each layer may import only itself and the layers before it (docs/architecture.md explains the order).

core: the top-level modules (pure Python); llm: summarizers and HTTP clients; frames: pandas
DataFrames with columns declared as data; corpus: many sessions at once (built on frames);
charts: matplotlib figures; live: following a session while Pi writes it; widgets: notebook
views; export: self-contained HTML pages built from the widgets' views; cli: the command line
(with ``__main__``)."""
TOP_LEVEL_LAYERS = {"charts.py": "charts", "__main__.py": "cli"}


def _layer_of(parts: tuple[str, ...]) -> str:
    """The layer of a module given its path inside the package (``("llm", "openai.py")``)."""
    if len(parts) == 1:
        name = parts[0] if parts[0].endswith(".py") else f"{parts[0]}.py"
        return TOP_LEVEL_LAYERS.get(name, "core")
    if parts[0] not in LAYER_ORDER:
        raise AssertionError(f"pikit/{parts[0]}/ is in no layer: add it to LAYER_ORDER")
    return parts[0]


def _imported_modules(path: Path) -> list[tuple[int, tuple[str, ...]]]:
    """(line, module path inside pikit) of every pikit import in ``path``, lazy ones included."""
    here = path.relative_to(PACKAGE).parts[:-1]
    found: list[tuple[int, tuple[str, ...]]] = []
    for node in ast.walk(_imported_on_import(path)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[:len(here) - (node.level - 1)]
            if node.module:
                found.append((node.lineno, (*base, *node.module.split("."))))
            else:
                found += [(node.lineno, (*base, alias.name)) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "pikit":
            rest = tuple(node.module.split(".")[1:])
            found += [(node.lineno, rest)] if rest else [(node.lineno, (a.name,)) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, tuple(a.name.split(".")[1:])) for a in node.names
                      if a.name.startswith("pikit.")]
    return [(line, target) for line, target in found if target]


def _layer_violations(path: Path) -> list[str]:
    own = _layer_of(path.relative_to(PACKAGE).parts)
    out = []
    for line, target in _imported_modules(path):
        first = target[0]
        layer = first if first in LAYER_ORDER else TOP_LEVEL_LAYERS.get(f"{first}.py", "core")
        if LAYER_ORDER.index(layer) > LAYER_ORDER.index(own):
            out.append(f"{path.relative_to(PACKAGE)}:{line} ({own}) imports pikit.{'.'.join(target)} ({layer})")
    return out


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_each_layer_imports_only_the_layers_below(path: Path) -> None:
    assert _layer_violations(path) == []


def test_the_layer_check_catches_an_upward_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "pikit"
    (package / "frames").mkdir(parents=True)
    (package / "widgets").mkdir()
    (package / "widgets" / "view.py").write_text("from ..frames import build\n")
    sample = package / "frames" / "sample.py"
    sample.write_text("from ..widgets import view\nfrom .. import charts\nimport pikit.llm\nfrom ..tokens import x\n"
                      "def f():\n    from pikit.cli import main\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    found = _layer_violations(sample)
    assert len(found) == 3 and all("(frames) imports" in v for v in found), found
    assert _layer_violations(package / "widgets" / "view.py") == []
