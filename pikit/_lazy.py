"""A package's exported names, imported from their submodules when first used (PEP 562).

Importing a package then costs only its own module: a worker process that needs one
submodule, or a command that needs a few, does not import the rest.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["exports"]


def exports(package: str, modules: dict[str, tuple[str, ...]]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, which exports the names of ``modules``.

    ``modules`` maps a submodule (relative: ``".session"``) to the names it gives; a name is
    imported when first used and kept in the package's namespace from then on. Any other name
    is looked for as a submodule. (Type checkers see the names through ``typing.TYPE_CHECKING``
    imports: the package defines these two functions only when not type-checked.)
    """
    namespace = sys.modules[package].__dict__
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module, package), name)
        else:  # a submodule, as after an eager import of the package: ``pikit.errors``
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

    return __getattr__, __dir__
