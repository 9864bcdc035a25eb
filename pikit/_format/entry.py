"""One session entry: its raw JSON line is the source of truth, the parsed form is a view.

The loader indexes what the tree and the projection need (id, parent, type, timestamp,
the message role and model). For the large lines of a large file it reads only those
fields (validating the rest without building it), which keeps memory low;
:attr:`Entry.data` parses the line when it is first needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import jsjson
from .timestamps import parse_ms

__all__ = ["Entry", "is_key"]


def is_key(value: object) -> bool:
    """Whether ``value`` can be an entry id (a JSON scalar); arrays and objects never are."""
    return isinstance(value, str | int | float | bool) or value is None


class Entry:
    """A session entry.

    ``raw`` holds the line exactly as it is in the file (without the newline), so an
    unchanged entry round-trips byte for byte. Entries built in memory, or changed by an
    in-memory migration, serialize the way Pi's ``JSON.stringify`` would.
    """

    __slots__ = ("_data", "_estimates", "_raw", "id", "line", "model", "parent_id", "role", "timestamp", "type")

    id: Any
    parent_id: Any
    type: Any
    timestamp: Any
    role: Any
    model: dict[str, Any] | None
    line: int | None

    def __init__(self, data: Mapping[str, Any], raw: bytes | None = None, line: int | None = None) -> None:
        self._raw = raw
        self.line = line
        self._estimates: list[int] | None = None
        self._data: dict[str, Any] | None = dict(data) if not isinstance(data, dict) else data
        self._index()

    @classmethod
    def indexed(cls, raw: bytes, line: int | None, entry_id: Any, parent_id: Any, kind: Any, timestamp: Any,
                role: Any, model: dict[str, Any] | None) -> Entry:
        """An entry known by its index fields only; its JSON is parsed when first needed."""
        entry = cls.__new__(cls)
        entry._raw = raw
        entry._data = None
        entry._estimates = None
        entry.line = line
        entry.id = entry_id
        entry.parent_id = parent_id
        entry.type = kind
        entry.timestamp = timestamp
        entry.role = role
        entry.model = model
        return entry

    def _index(self) -> None:
        data = self._data
        assert data is not None
        self.id = data.get("id")
        self.parent_id = data.get("parentId")
        self.type = data.get("type")
        self.timestamp = data.get("timestamp")
        self.role = None
        self.model = None
        if self.type == "message":
            message = data.get("message")
            if isinstance(message, dict):
                self.role = message.get("role")
                if self.role == "assistant":
                    self.model = {"provider": message["provider"]} if "provider" in message else {}
                    if "model" in message:
                        self.model["modelId"] = message["model"]

    @property
    def data(self) -> dict[str, Any]:
        """The parsed entry (a plain dict; treat it as read-only)."""
        if self._data is None:
            assert self._raw is not None
            self._data = jsjson.loads(self._raw)
        return self._data

    @property
    def is_parsed(self) -> bool:
        """Whether the parsed form is held in memory."""
        return self._data is not None

    def release(self) -> None:
        """Drop the parsed form (it is parsed again on the next access)."""
        if self._raw is not None:
            self._data = None

    @property
    def raw(self) -> bytes:
        """The entry's JSON line (without newline): the file's bytes when unchanged."""
        if self._raw is None:
            self._raw = jsjson.stringify_bytes(self.data)
        return self._raw

    def replace_data(self, data: dict[str, Any]) -> None:
        """Give the entry new content (in-memory migration); it will serialize from it."""
        self._data = data
        self._raw = None
        self._estimates = None
        self._index()

    @property
    def message(self) -> dict[str, Any] | None:
        """The nested message of a ``message`` entry."""
        if self.type != "message":
            return None
        message = self.data.get("message")
        return message if isinstance(message, dict) else None

    @property
    def time_ms(self) -> int | None:
        """The entry timestamp in Unix milliseconds (``None`` when it does not parse)."""
        return parse_ms(self.timestamp)

    def get(self, key: str, default: Any = None) -> Any:
        """A field of the entry."""
        return self.data.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __repr__(self) -> str:
        what = self.type if self.role is None else f"{self.type}/{self.role}"
        where = f" line {self.line}" if self.line is not None else ""
        return f"<Entry {self.id!r} {what}{where}>"
