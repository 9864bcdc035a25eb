"""Sphinx configuration of pikit's documentation site.

The guide pages are Markdown (MyST); the API reference is generated from the docstrings of the
public namespaces (autodoc and autosummary). Every public name is documented at its public path:
before autodoc reads them, the objects a namespace exports are given that namespace as their
module, so that signatures, base classes and cross-references never show a private module.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pygments.lexers import JavascriptLexer  # noqa: E402
from sphinx.application import Sphinx  # noqa: E402
from sphinx.pycode import ModuleAnalyzer  # noqa: E402

import pikit  # noqa: E402
from pikit import _lazy  # noqa: E402

project = "pikit"
author = "pikit contributors"
copyright = "pikit contributors"
release = pikit.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]
templates_path = ["_templates"]

html_theme = "furo"
html_title = f"pikit {release}"
html_static_path = ["_static"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 4

autosummary_generate = True
autosummary_imported_members = True
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
python_use_unqualified_type_names = True
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True

# The public namespaces, in the order that decides where a name two of them export is documented
# (its home): the exceptions in ``pikit.errors`` rather than ``pikit``, ``CURRENT`` in ``pikit``
# rather than ``pikit.frames``. The API pages list such a name in both, with one entry.
NAMESPACES = [
    "pikit.errors",
    "pikit.jsjson",
    "pikit",
    "pikit.compaction",
    "pikit.llm",
    "pikit.frames",
    "pikit.charts",
    "pikit.widgets",
    "pikit.corpus",
    "pikit.export",
    "pikit.replay",
    "pikit.cli",
]


def _public_home() -> None:
    """Give every exported class and function the public namespace that exports it as its module."""
    homed: set[int] = set()
    for name in NAMESPACES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            obj = getattr(module, attr)
            if id(obj) in homed or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            homed.add(id(obj))
            if obj.__module__.split(".")[-1].startswith("_") or "._" in obj.__module__:
                try:
                    obj.__module__ = name
                except (AttributeError, TypeError):
                    continue


_public_home()


def _data_doc(app: object, what: str, name: str, obj: object, options: object, lines: list[str]) -> None:
    """A public constant's documentation: the ``#:`` comment or docstring where it is assigned.

    autodoc would otherwise show the docstring of the value's type (``dict``, ``int``), since a
    namespace only re-exports the name from the private module that assigns it.
    """
    if what != "data":
        return
    namespace, _, attr = name.rpartition(".")
    module = _lazy.declared(namespace, Path(importlib.import_module(namespace).__file__ or "").read_text(
        encoding="utf-8")).get(attr, namespace)
    found = ModuleAnalyzer.for_module(module).find_attr_docs().get(("", attr))
    lines[:] = list(found or [])


def setup(app: Sphinx) -> dict[str, bool]:
    app.add_lexer("jsonc", JavascriptLexer)
    app.connect("autodoc-process-docstring", _data_doc)
    return {"parallel_read_safe": True}
