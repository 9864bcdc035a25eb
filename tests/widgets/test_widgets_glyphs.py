"""Every glyph the widgets and the exported pages draw is in a font installed here.

Debian's chromium comes with fonts-liberation and fonts-dejavu; a character none of them holds
is drawn as an empty box (U+23F8 ⏸ was one). This test reads every non-ASCII character in the
renderers' source, written out or as a ``\\uXXXX`` escape, and asks fontconfig whether an
installed font covers it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

import pikit

PACKAGE = Path(pikit.__file__).resolve().parent
# The widgets and the export, and the core modules whose words they draw (previews, numbers, labels).
RENDERERS = [*sorted((PACKAGE / "widgets").rglob("*.py")), *sorted((PACKAGE / "widgets").glob("*.js")),
             *sorted((PACKAGE / "export").rglob("*.py")),
             *(PACKAGE / name for name in ("_formatting.py", "_context/describe.py", "_card.py", "_palette.py",
                                          "_context/projected.py", "_session.py", "compaction/_preparation.py",
                                          "compaction/_simulate.py"))]
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def _glyphs() -> dict[str, list[str]]:
    """Each non-ASCII character of the renderers, with where it is (``file:line``)."""
    found: dict[str, list[str]] = {}
    for path in RENDERERS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            escaped = [chr(int(code, 16)) for code in _ESCAPE.findall(line)]
            for char in [*line, *escaped]:
                if ord(char) > 127 and not 0xD800 <= ord(char) <= 0xDFFF and unicodedata.category(char) != "Cc":
                    found.setdefault(char, []).append(f"{path.relative_to(PACKAGE.parent)}:{number}")
    return found


def _fc_list() -> str:
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        pytest.skip("fontconfig (fc-list) is not installed: cannot ask which glyphs the installed fonts hold")
    return fc_list


def _fonts_with(fc_list: str, char: str) -> list[str]:
    """The installed font families holding ``char`` (``fc-list ':charset=23f8' family``)."""
    out = subprocess.run([fc_list, f":charset={ord(char):x}", "family"], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return sorted(set(out.split("\n")) - {""})


def test_the_renderers_use_glyphs() -> None:
    glyphs = _glyphs()
    assert {"–", "…", "→", "▶", "‖", "\u2212"} <= set(glyphs)  # the scan sees literals and escapes
    assert "⏸" not in glyphs


def test_every_glyph_is_in_an_installed_font() -> None:
    fc_list = _fc_list()
    assert _fonts_with(fc_list, "A"), "fontconfig lists no font: install Debian's fonts-liberation and fonts-dejavu"
    missing = [f"U+{ord(char):04X} {char} {unicodedata.name(char, '?')} at {', '.join(where[:3])}"
               for char, where in sorted(_glyphs().items()) if not _fonts_with(fc_list, char)]
    assert not missing, "no installed font has these glyphs (they show as boxes):\n" + "\n".join(missing)
