"""Session text shown, never obeyed: on a terminal, in a page, in a widget.

Session text, labels, names, ids and paths are untrusted. An escape sequence in them could
write to the clipboard (OSC 52), clear the screen or set the window title if printed as it
is; a bidirectional override reorders what follows it on screen (``\\u202eexe.txt`` reads as
``txt.exe``); a lone surrogate (a valid JSON escape, ``\\ud800``) is not valid UTF-8, so it
cannot be written to a terminal, a page or a widget's message at all.

:func:`inert` shows every control character as ``cat -v`` and ``less`` do (``^[`` for ESC,
``^M`` for a carriage return, ``^@`` for NUL, ``^?`` for DEL, ``M-^[`` for the C1 controls),
bidirectional controls as ``<U+202E>``, and a lone surrogate as U+FFFD; newlines and tabs
stay. :func:`visible` is the same for pages and widgets, where a carriage return is a line
break and stays too; :func:`html_text` escapes that for HTML. JSON output keeps every
character exact instead (:mod:`pikit.jsjson` writes lone surrogates as escapes).
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["ECHOED_WHOLE", "ECHO_LIMIT", "cut_echoes", "echo", "html_text", "inert", "shell_quote", "visible"]

_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_FOR_TERMINALS = f"[{_CONTROLS}\r]"
_FOR_PAGES = f"[{_CONTROLS}]"
# Each of them is unprintable to Python (Cc, Cf, Cs), so printable text needs no look.


def _show(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    if code <= 0x9F:
        return "M-^" + chr(code - 0x80 + 0x40)
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return f"<U+{code:04X}>"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """A pattern compiled when first used (their ranges of code points take milliseconds to compile, which a
    command that shows no control character need not spend)."""
    return re.compile(pattern)


def inert(text: str) -> str:
    """``text`` for a terminal: control characters made visible (newlines and tabs kept)."""
    return text if text.isprintable() else _compiled(_FOR_TERMINALS).sub(_show, text)


def visible(text: str) -> str:
    """``text`` for a page or a widget: as :func:`inert`, carriage returns kept too.

    The result is valid UTF-8 (lone surrogates become U+FFFD) and holds no character that
    changes how the text around it is shown.
    """
    return text if text.isprintable() else _compiled(_FOR_PAGES).sub(_show, text)


def html_text(value: Any) -> str:
    """``value`` as text for HTML: :func:`visible`, then escaped (quotes included), so it is
    safe in element content and in attribute values."""
    return html.escape(visible(value if isinstance(value, str) else str(value)), quote=True)


#: How many characters of a value an error message quotes (:func:`echo`).
ECHO_LIMIT = 60


def echo(value: object, limit: int = ECHO_LIMIT) -> str:
    """``value`` as an error message quotes it: ``repr`` of its first ``limit`` characters.

    A longer value ends in ``…`` and its length follows, so a mistaken value of any size
    costs a short line. ``repr`` escapes every control character, bidirectional override and
    lone surrogate, so the quoted value is inert on a terminal too.
    """
    text = str(value)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit] + '…'!r} ({len(text):,} characters)"


#: A value the user gave that is longer than this is cut when an error line echoes it
#: (a real path, up to this long, is shown whole).
ECHOED_WHOLE = 256


#: The lone surrogates that no file name decodes to (Python gives U+DC80–U+DCFF to bytes that are not UTF-8).
_NOT_A_NAME = "[\ud800-\udc7f\udd00-\udfff]"


def shell_quote(path: str) -> str:
    """A path as a shell word that names exactly it, and is inert itself.

    A plain path is quoted as :func:`shlex.quote` does; one holding a control character, a
    bidirectional control or bytes that are not UTF-8 (lone surrogates, as Python reads such a
    name) is written ``$'…'`` with every byte outside printable ASCII as ``\\xHH`` (bash, zsh,
    POSIX sh since 2024): pasted into a shell it names the same bytes. A lone surrogate that
    no file name decodes to (outside U+DC80–U+DCFF) is written as U+FFFD, as Node (and so Pi)
    writes it in a file name.
    """
    if path.isprintable() or not _compiled(_FOR_TERMINALS).search(path):
        import shlex

        return shlex.quote(path)
    import os

    out = []
    try:
        raw = os.fsencode(path)
    except UnicodeEncodeError:  # a surrogate os.fsencode has no byte for (a path made up, not read)
        raw = os.fsencode(_compiled(_NOT_A_NAME).sub("\ufffd", path))
    for byte in raw:
        char = chr(byte)
        out.append("\\" + char if char in "'\\" else char if 0x20 <= byte < 0x7F else f"\\x{byte:02x}")
    return "$'" + "".join(out) + "'"


def cut_echoes(message: str, values: Iterable[str]) -> str:
    """``message`` made inert, each value longer than :data:`ECHOED_WHOLE` in it (as it is, or
    quoted) replaced by its :func:`echo`: the start of it and its length.

    ``values`` are the command line's arguments; the value of an ``--option=value`` counts too.
    """
    given = [value for value in values if isinstance(value, str)]  # (an option not given is None)
    found = {part for value in given for part in (value, value.partition("=")[2] if value.startswith("-") else "")
             if len(part) > ECHOED_WHOLE}
    for value in sorted(found, key=len, reverse=True):
        message = message.replace(repr(value), echo(value)).replace(value, echo(value))
    return inert(message)
