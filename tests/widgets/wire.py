"""What widgets send to the browser and what the browser sends back, checked without a browser.

A kernel sends a widget's state as a Jupyter message: its strings through the kernel's own
message packer (jupyter_client's, which refuses a lone surrogate), its bytes traits as binary
buffers. :func:`check_sent` packs the state of widgets exactly that way and checks what a page
would show: no string of the state, and no shown string of a buffer's JSON, holds a character
that is not inert (:data:`NOT_INERT`). :func:`from_browser` plays a custom message through the
same packers the way the page writes it (``JSON.stringify``) and the kernel reads it.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import ipywidgets as widgets
from ipywidgets.widgets.widget import _instances, _remove_buffers
from jupyter_client.session import Session

from pikit import jsjson

__all__ = ["NOT_INERT", "check_sent", "from_browser", "new_widgets", "strings"]

#: What may not reach a page as it is: C0 controls but tab, newline and carriage return, DEL,
#: C1 controls, bidi controls, lone surrogates.
NOT_INERT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                       "\ud800-\udfff]")
_SESSION = Session(key=b"pikit-tests")  # (signed, as a kernel signs its messages)


def strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a JSON-like value, keys included, with where it is (iteratively)."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, dict):
            for key, child in item.items():
                stack.append((f"{where}.{key}", key))
                stack.append((f"{where}.{key}", child))
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{i}]", child) for i, child in enumerate(item))


def new_widgets(before: Iterable[str]) -> list[widgets.Widget]:
    """The widgets made since ``before`` (a snapshot of the model ids then) that are still open."""
    known = set(before)
    return [w for model_id, w in list(_instances.items()) if model_id not in known]


def check_sent(sent: Iterable[widgets.Widget], *, exact: Callable[[widgets.Widget, str], bool] | None = None) -> int:
    """Pack each widget's state as the kernel sends it, and check that the page gets only inert text.

    ``exact(widget, where)`` names the strings of a buffer's JSON that are meant to stay exact
    (ids sent back on a click). Fails listing every string that is not inert; returns the
    number of strings checked.
    """
    checked, problems = 0, []
    for widget in sent:
        state, buffer_paths, buffers = _remove_buffers(widget.get_state())
        found = [(where, text) for where, text in strings(state)]
        for path, buffer in zip(buffer_paths, buffers, strict=True):
            data = bytes(buffer)
            data.decode("utf-8")  # the page's TextDecoder would replace anything else
            found += [(where, text) for where, text in strings(jsjson.loads(data), ".".join(map(str, path)))
                      if exact is None or not exact(widget, where)]
        checked += len(found)
        problems += [f"{type(widget).__name__} {where}: {text[:200]!r}" for where, text in found
                     if NOT_INERT.search(text)]
        if not problems:
            message = _SESSION.msg("comm_msg", {"comm_id": widget.model_id,
                                                "data": {"method": "update", "state": state,
                                                         "buffer_paths": buffer_paths}})
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # the packer's fallback for values it cannot pack warns
                _SESSION.serialize(message)
    assert not problems, f"{len(problems)} strings are not inert:\n" + "\n".join(problems[:25])
    return checked


def from_browser(content: dict[str, Any]) -> Any:
    """``content`` as the kernel reads a custom message the page sent (``JSON.stringify`` there,
    the kernel's unpacker here)."""
    return _SESSION.unpack(jsjson.stringify_bytes(content))
