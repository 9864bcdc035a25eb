"""The ``pikit`` command line.

Every command reads session files without modifying them. ``--json`` output is a
contract (docs/json.md documents every shape); the plain output is for people. A user mistake ends with one
line on stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ._main import main as main, run as run

if not typing.TYPE_CHECKING:  # (type checkers read the declaration above)
    __getattr__, __dir__, __all__ = _lazy.exports(__name__)
