"""The documentation site: every public name has an entry, no reference names a private path, and it builds.

The API reference (``docs/api/<namespace>.md``) lists every name of every public namespace's
``__all__``: in its autosummary (the name's own page) or, for a name documented in another
namespace, in the table of names also exported there. The build runs Sphinx as CI does, with
warnings as errors, and checks the built inventory and pages.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
NAMESPACES = ["pikit", "pikit.compaction", "pikit.llm", "pikit.frames", "pikit.charts", "pikit.widgets",
              "pikit.corpus", "pikit.export", "pikit.errors", "pikit.jsjson", "pikit.replay", "pikit.cli"]
AUTOSUMMARY = re.compile(r"^\.\. autosummary::\n(?:   :[^\n]*\n)*\n((?:   \S[^\n]*\n)+)", re.MULTILINE)
ALSO = re.compile(r"^\| `([\w.]+)` \| \{py:obj\}`([\w.]+)` \|$", re.MULTILINE)
PRIVATE_ROLE = re.compile(r":[a-z]+:`~?pikit(?:\.\w+)*\._\w")
"""A docstring cross-reference (``:func:`pikit._x.y```, ``:class:`~pikit.corpus._a.B```) to a private path."""


def _page(namespace: str) -> tuple[set[str], dict[str, str]]:
    """The names ``docs/api/<namespace>.md`` documents, and those it sends elsewhere (name → where)."""
    text = (DOCS / "api" / f"{namespace}.md").read_text(encoding="utf-8")
    own = {line.strip() for block in AUTOSUMMARY.findall(text) for line in block.splitlines()}
    elsewhere = {name.rpartition(".")[2]: home for name, home in ALSO.findall(text)}
    return own, elsewhere


def _is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _resolve(dotted: str) -> object:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_public_name_has_an_entry(namespace: str) -> None:
    declared = set(importlib.import_module(namespace).__all__)
    own, elsewhere = _page(namespace)
    assert own.isdisjoint(elsewhere)
    assert own | set(elsewhere) == declared, f"docs/api/{namespace}.md lists other names than __all__"
    for name, home in elsewhere.items():
        where = home.rpartition(".")[0]
        assert home.rpartition(".")[2] in _page(where)[0], f"{home} has no entry of its own"
        assert _resolve(home) is _resolve(f"{namespace}.{name}"), f"{namespace}.{name} is not {home}"


def test_the_reference_lists_every_namespace() -> None:
    index = (DOCS / "api" / "index.md").read_text(encoding="utf-8")
    assert sorted(NAMESPACES) == sorted(p.stem for p in (DOCS / "api").glob("pikit*.md"))
    assert all(re.search(rf"^{re.escape(namespace)}$", index, re.MULTILINE) for namespace in NAMESPACES)


def test_no_docstring_cross_reference_names_a_private_path() -> None:
    found = [f"{path.relative_to(REPO)}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
             for path in sorted((REPO / "pikit").rglob("*.py"))
             for text in [path.read_text(encoding="utf-8")]
             for match in PRIVATE_ROLE.finditer(text)]
    assert found == []


def test_the_check_finds_private_cross_references() -> None:
    assert PRIVATE_ROLE.search(":class:`~pikit.corpus._scan.FileState`")
    assert PRIVATE_ROLE.search(":mod:`pikit._progress`")
    assert not PRIVATE_ROLE.search(":func:`pikit.compaction.trace_compaction`")
    assert not PRIVATE_ROLE.search("``pikit._progress``")


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    pytest.importorskip("furo")
    from sphinx.util.inventory import InventoryFile

    out = tmp_path / "html"
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=1100)
    assert done.returncode == 0, done.stderr
    with open(out / "objects.inv", "rb") as handle:
        inventory = InventoryFile.load(handle, "", lambda base, uri: uri)
    documented = {name for kind, entries in inventory.items() if kind.startswith("py:") for name in entries}
    for namespace in NAMESPACES:
        own, _ = _page(namespace)
        missing = sorted(name for name in own if f"{namespace}.{name}" not in documented)
        assert missing == [], f"{namespace}: no entry in the built reference for {missing}"
    private = sorted(name for name in documented if any(_is_private(part) for part in name.split(".")))
    assert private == [], "the reference names a private path"
    pages = [path for path in (out / "api").rglob("*.html")]
    assert len(pages) > 200
    named = sorted(path.name for path in pages if re.search(r"pikit(?:\.\w+)*\._[a-z]", path.read_text("utf-8")))
    assert named == [], "an API page names a private path"
