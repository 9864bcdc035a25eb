"""The widget modules import one another without a cycle, whatever the kind of import.

Module-level imports, those under ``TYPE_CHECKING`` and those inside functions all count: the
parts a composed widget is made of never import it back (the live bar knows nothing of the
explorer, the compaction panel's parts nothing of the panel).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pikit.widgets._base as _anchor

WIDGETS = Path(_anchor.__file__).resolve().parent
PACKAGE = "pikit.widgets"


def _module_names() -> dict[str, Path]:
    names = {}
    for path in WIDGETS.rglob("*.py"):
        parts = list(path.relative_to(WIDGETS).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join([PACKAGE, *parts])] = path
    return names


def _imported(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that ``module`` imports anywhere in its text."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != module:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    known = _module_names()
    return {module: _imported(module, path, known) for module, path in known.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (the modules along it, the first one again at the end), or ``None``."""
    state: dict[str, str] = {}  # "open" while on the path, then "done"

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = "open"
        for step in sorted(graph.get(node, ())):
            if state.get(step) == "open":
                return [*path[path.index(step):], step]
            if step not in state and (found := visit(step, [*path, step])) is not None:
                return found
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])) is not None:
            return found
    return None


def test_the_scan_sees_every_kind_of_import() -> None:
    graph = _graph()
    assert "pikit.widgets._live" in graph["pikit.widgets._explorer"]  # at module level
    assert "pikit.widgets._explorer" in graph["pikit.widgets._browser"]  # in a function, and for type checking
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_widget_module_imports_itself_back() -> None:
    assert _cycle(_graph()) is None


def test_the_parts_do_not_import_what_they_are_part_of() -> None:
    graph = _graph()
    assert "pikit.widgets._explorer" not in graph["pikit.widgets._live"]
    for part in ("_compaction_settings", "_compaction_preview", "_compaction_run", "_compaction_history", "_runs"):
        assert "pikit.widgets._compaction" not in graph[f"pikit.widgets.{part}"], part
