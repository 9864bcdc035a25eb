"""A package's public surface: declared once, imported when first used (PEP 562).

Every package of pikit declares its exported names in one place, a block of explicit
re-exports that type checkers read::

    if typing.TYPE_CHECKING:
        from ._session import Session as Session, load as load

    if not typing.TYPE_CHECKING:
        __getattr__, __dir__, __all__ = _lazy.exports(__name__)

:func:`exports` reads that block from the package's source and derives the rest from it:
``__all__``, and a ``__getattr__`` that imports each name from its module the first time it
is used. Importing a package then costs only its own module: a worker process that needs
one submodule, or a command that needs a few, does not import the rest. Type checkers see
the imports, not ``__getattr__``, so a misspelt name is still an error to them.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["declared", "exports"]


def declared(package: str, source: str) -> dict[str, str]:
    """The names ``source`` (the ``__init__`` of ``package``) exports, each mapped to its module.

    They are the ``from MODULE import NAME as NAME`` statements of its module-level
    ``if TYPE_CHECKING:`` block. Anything else there (an import without ``as NAME``, a
    renamed import) is a mistake in the declaration and raises :class:`ValueError`.
    """
    where: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")):
            continue
        for statement in node.body:
            if not isinstance(statement, ast.ImportFrom):
                raise ValueError(f"{package}: only 'from MODULE import NAME as NAME' belongs in the declaration")
            module = importlib.util.resolve_name("." * statement.level + (statement.module or ""), package)
            for alias in statement.names:
                if alias.asname != alias.name:
                    raise ValueError(f"{package}: write {alias.name!r} as 'import {alias.name} as {alias.name}' "
                                     "(an explicit re-export)")
                if alias.name in where:
                    raise ValueError(f"{package}: {alias.name!r} is declared twice")
                where[alias.name] = module
    return where


def exports(package: str) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The ``__getattr__``, ``__dir__`` and ``__all__`` of ``package``, from its declaration.

    A declared name is imported when first used and kept in the package's namespace from
    then on. Any other name is looked for as a submodule (``pikit.errors`` after a plain
    ``import pikit``). ``__all__`` lists the declared names.
    """
    namespace = sys.modules[package].__dict__
    where = declared(package, Path(namespace["__file__"]).read_text(encoding="utf-8"))

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
        else:
            try:
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__, sorted(where)
