"""pikit's exceptions: one tree rooted at :class:`PikitError`.

Every message is a single line that says what went wrong and, where it helps, how
to fix it. Errors about a file name the file (and the line, when there is one);
errors about an entry name the entry id. The tree::

    PikitError
    ├── SessionFileError            a session file cannot be read
    │   ├── NotASessionError        it does not start with a session header
    │   └── DamagedLineError        a damaged line, in strict mode
    ├── EntryError                  an entry does not allow the operation
    │   └── UnknownEntryError       no such entry id (also a KeyError)
    ├── SettingsError               an invalid setting or settings file
    ├── WriteError                  a write was refused or failed; nothing was written
    └── SummarizerError             no usable summary; nothing was written (.status, .retryable)
        ├── SummarizerConfigError       the summarizer cannot start: a key, an option, a package
        ├── SummarizerTransportError    no answer came back                       (retryable)
        │   ├── SummarizerTimeout           the attempt ran out of time (slow or trickling server)
        │   └── SummarizerConnectionError   the connection failed or was dropped
        ├── SummarizerHTTPError         the server answered with an error status (.status)
        │   ├── SummarizerAuthError         401/403: the key or its permissions
        │   ├── SummarizerRateLimitError    429 (retryable, unless the quota is exhausted)
        │   └── SummarizerServerError       5xx                                        (retryable)
        ├── SummarizerResponseError     the answer is not something pikit will read
        │   ├── SummarizerRedirectError     a 3xx redirect (never followed: the key would go along)
        │   ├── SummarizerNotAPIError       not the API's JSON (an HTML page with 200, broken JSON)
        │   └── SummarizerTooLargeError     a body over the size limit (never read to the end)
        └── SummarizerOutputError       the answer is not a usable summary: cut off, a tool call,
                                        empty, refused, holding the API key, larger than what it replaces

``retryable`` says whether the HTTP clients try again (they do for the transport errors,
429 and 5xx); ``status`` is the HTTP status when there was one.

A message that tells the caller which argument to change names the parameter as a Python
caller writes it (``speed must be more than 0``, ``pass overwrite=True to replace it``). Such
an error is raised with a :class:`Wording`, which keeps the parameters apart from the rest of
the message: :meth:`PikitError.worded` says the same with other names for them (the command
line shows its flags: ``--speed``, ``--force``).
"""

from __future__ import annotations

from collections.abc import Mapping

from ._inert import echo

__all__ = [
    "DamagedLineError",
    "EntryError",
    "NotASessionError",
    "PikitError",
    "SessionFileError",
    "SettingsError",
    "SummarizerAuthError",
    "SummarizerConfigError",
    "SummarizerConnectionError",
    "SummarizerError",
    "SummarizerHTTPError",
    "SummarizerNotAPIError",
    "SummarizerOutputError",
    "SummarizerRateLimitError",
    "SummarizerRedirectError",
    "SummarizerResponseError",
    "SummarizerServerError",
    "SummarizerTimeout",
    "SummarizerTooLargeError",
    "SummarizerTransportError",
    "UnknownEntryError",
    "Wording",
    "WriteError",
]


class Wording:
    """A message that names parameters of the call, kept so that it can be said with other names for them.

    ``template`` is a :meth:`str.format` string; ``parameters`` gives each parameter it names with
    the words the library uses for it (``{"overwrite": "overwrite=True"}``); ``values`` fill its
    other fields (a path, a number), the same in every wording.

    >>> message = Wording("{speed} must be more than 0, not {value}", {"speed": "speed"}, value=-1)
    >>> str(message), message.worded({"speed": "--speed"})
    ('speed must be more than 0, not -1', '--speed must be more than 0, not -1')
    """

    __slots__ = ("parameters", "template", "values")

    def __init__(self, template: str, parameters: Mapping[str, str], /, **values: object) -> None:
        self.template = template
        self.parameters = dict(parameters)
        self.values = values

    def worded(self, names: Mapping[str, str]) -> str:
        """The message with each parameter as ``names`` calls it (one ``names`` lacks in the library's words)."""
        return self.template.format(**self.values, **{p: names.get(p, own) for p, own in self.parameters.items()})

    def __str__(self) -> str:
        return self.worded({})


class PikitError(Exception):
    """Base class of every error pikit raises on purpose.

    Raised with a :class:`Wording` as its message, it keeps it as ``wording`` (its message is the
    library's wording); :meth:`worded` says it with other names for the parameters.
    """

    wording: Wording | None = None

    def __init__(self, *args: object) -> None:
        if args and isinstance(args[0], Wording):
            self.wording = args[0]
            args = (str(args[0]), *args[1:])
        super().__init__(*args)

    def worded(self, names: Mapping[str, str]) -> str:
        """The message, with each parameter it names as ``names`` calls it (``{"overwrite": "--force"}``)."""
        return self.wording.worded(names) if self.wording is not None else str(self)


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

    def __init__(self, entry_id: str | None, message: str | Wording) -> None:
        self.entry_id = entry_id
        super().__init__(message)


class UnknownEntryError(EntryError, KeyError):
    """An entry id that the session does not hold (nor an id starting with it)."""

    def __init__(self, entry_id: str, where: str = "the session") -> None:
        super().__init__(entry_id, f"no entry id is or starts with {echo(entry_id)} in {where}")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class SettingsError(PikitError):
    """An invalid setting: names the file and the key."""


class SummarizerError(PikitError):
    """A summarizer could not produce a usable summary; nothing was written.

    ``status`` is the HTTP status of the answer that failed (``None`` without one);
    ``retryable`` whether trying again may help (the HTTP clients retry exactly these).
    """

    retryable: bool = False

    def __init__(self, message: str | Wording, *, status: int | None = None, retryable: bool | None = None) -> None:
        super().__init__(message)
        self.status = status
        if retryable is not None:
            self.retryable = retryable


class SummarizerConfigError(SummarizerError):
    """The summarizer cannot start: no or a malformed key, a bad option, a missing package."""


class SummarizerTransportError(SummarizerError):
    """No answer came back."""

    retryable = True


class SummarizerTimeout(SummarizerTransportError):
    """The attempt ran out of time (connecting, waiting for headers, or reading a trickle)."""


class SummarizerConnectionError(SummarizerTransportError):
    """The connection could not be made, or was dropped before a complete answer."""


class SummarizerHTTPError(SummarizerError):
    """The server answered with an error status."""


class SummarizerAuthError(SummarizerHTTPError):
    """401 or 403: the key is wrong, or lacks the permission."""


class SummarizerRateLimitError(SummarizerHTTPError):
    """429: too many requests (not retryable when the quota is exhausted)."""

    retryable = True


class SummarizerServerError(SummarizerHTTPError):
    """A 5xx status."""

    retryable = True


class SummarizerResponseError(SummarizerError):
    """An answer pikit will not read as the API's."""


class SummarizerRedirectError(SummarizerResponseError):
    """A 3xx redirect; never followed, since the key would travel with the request."""


class SummarizerNotAPIError(SummarizerResponseError):
    """Not the API's JSON: an HTML page (even with status 200), broken or non-object JSON."""


class SummarizerTooLargeError(SummarizerResponseError):
    """A body larger than the limit, refused without being read to its end."""


class SummarizerOutputError(SummarizerError):
    """The answer is not a usable summary (cut off, a tool call, empty, refused, holding the key,
    larger than what it replaces)."""


class WriteError(PikitError):
    """A write was refused (target exists, same as the source, not appendable)."""
