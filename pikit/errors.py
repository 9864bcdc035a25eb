"""pikit's exceptions: one tree rooted at :class:`PikitError`.

Every message is a single line that says what went wrong and, where it helps, how
to fix it. Errors about a file name the file (and the line, when there is one);
errors about an entry name the entry id.
"""

from __future__ import annotations

__all__ = [
    "DamagedLineError",
    "EntryError",
    "NotASessionError",
    "PikitError",
    "SessionFileError",
    "SettingsError",
    "SummarizerError",
    "UnknownEntryError",
    "WriteError",
]


class PikitError(Exception):
    """Base class of every error pikit raises on purpose."""


class SessionFileError(PikitError):
    """A session file cannot be read (missing, unreadable, not a session)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}")


class NotASessionError(SessionFileError):
    """The file's first parsed object is not a session header."""


class DamagedLineError(SessionFileError):
    """A line that does not parse, raised in strict mode (otherwise only reported)."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}", reason)
        self.path = path


class EntryError(PikitError):
    """An operation on an entry that the entry does not allow."""

    def __init__(self, entry_id: str | None, message: str) -> None:
        self.entry_id = entry_id
        super().__init__(message)


class UnknownEntryError(EntryError, KeyError):
    """An entry id that the session does not hold."""

    def __init__(self, entry_id: str, where: str = "the session") -> None:
        super().__init__(entry_id, f"no entry with id {entry_id!r} in {where}")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class SettingsError(PikitError):
    """An invalid setting: names the file and the key."""


class SummarizerError(PikitError):
    """A summarizer could not produce a usable summary; nothing was written."""


class WriteError(PikitError):
    """A write was refused (target exists, same as the source, not appendable)."""
