"""API keys: read cleanly, kept out of sight, and removed from any text pikit shows or writes.

A key pasted from a CRLF ``.env`` file ends in ``\\r``; one copied from a web page may carry
a non-breaking space. :func:`normalize_key` strips surrounding whitespace and refuses (without
showing it) a key that cannot travel in an HTTP header. :func:`key_forms` lists the ways a key
can show up in text — as it is, escaped the way ``repr`` or JSON would, percent-encoded, or in
base64 at any alignment (a server echoing ``Authorization`` headers, an HTTP library quoting a
header) — and :func:`redact` removes every one of them.

What pikit does not control: httpcore's own DEBUG log lists the *response* headers as they
arrive, so a server that echoes the key into a response header shows it there when that
logger is set to DEBUG (pikit never changes logging configuration). An answer whose body
holds the key is refused, and no error, log record or file of pikit's own carries it.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Iterable

from pikit.errors import SummarizerConfigError

__all__ = ["REDACTED", "Secret", "clean_message", "contains_key", "key_forms", "normalize_key", "redact"]

REDACTED = "***"
_MESSAGE_LIMIT = 300
_MIN_BASE64_RUN = 8  # shorter runs of a key's base64 are not the key any more


class Secret:
    """A string (an API key) that never shows in ``repr``/``str``; :meth:`reveal` returns it."""

    __slots__ = ("_value",)

    def __init__(self, value: str | None) -> None:
        self._value = value or None

    def reveal(self) -> str | None:
        """The secret itself (``None`` when unset)."""
        return self._value

    def __bool__(self) -> bool:
        return self._value is not None

    def __repr__(self) -> str:
        return "Secret('<hidden>')" if self._value else "Secret(None)"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Secret, self._value))


def normalize_key(value: str | None, where: str) -> str | None:
    """The key with surrounding whitespace removed (``None`` if nothing is left).

    Raises :class:`SummarizerConfigError` when what is left cannot be sent in an HTTP
    header (non-ASCII or control characters); ``where`` names its origin (``$OPENAI_API_KEY``),
    and the message never contains the key.
    """
    if value is None:
        return None
    key = value.strip()
    if not key:
        return None
    bad = sorted({f"U+{ord(c):04X}" for c in key if not (0x20 < ord(c) < 0x7F)})
    if bad:
        shown = ", ".join(bad[:3]) + (" …" if len(bad) > 3 else "")
        raise SummarizerConfigError(
            f"the API key from {where} holds characters an HTTP header cannot carry ({shown}: non-ASCII, "
            "spaces or control characters); copy the key again")
    return key


def _base64_runs(raw: bytes) -> Iterable[str]:
    """Pieces of the key's base64 that appear whatever bytes come before it (any alignment)."""
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw)
        start = 4 if offset else 0  # the first quantum mixes in the bytes before the key
        end = len(encoded) - (4 if len(raw) % 3 or offset else 0)
        for alphabet in (encoded, encoded.translate(bytes.maketrans(b"+/", b"-_"))):
            core = alphabet[start:end].decode("ascii")
            if offset == 0:
                yield alphabet.decode("ascii").rstrip("=")
            if len(core) >= _MIN_BASE64_RUN:
                yield core


def key_forms(key: str | None) -> list[str]:
    """Every representation of ``key`` that :func:`redact` removes, longest first."""
    if not key:
        return []
    forms = {key, key.strip()}
    for form in list(forms):
        forms.add(repr(form)[1:-1])
        forms.add(json.dumps(form)[1:-1])
        forms.add(json.dumps(form, ensure_ascii=False)[1:-1])
        forms.add(urllib.parse.quote(form, safe=""))
        forms.add(urllib.parse.quote_plus(form))
        forms.update(_base64_runs(form.encode("utf-8", "surrogatepass")))
    return sorted((f for f in forms if f), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every form of every secret replaced by ``***``."""
    for secret in secrets:
        for form in key_forms(secret):
            if form in text:
                text = text.replace(form, REDACTED)
    return text


def contains_key(text: str, secrets: Iterable[str | None]) -> bool:
    """Whether ``text`` holds any form of any secret."""
    return any(form in text for secret in secrets for form in key_forms(secret))


def clean_message(text: str, secrets: Iterable[str | None] = (), limit: int = _MESSAGE_LIMIT) -> str:
    """``text`` on one line: secrets replaced by ``***``, whitespace collapsed, cut to ``limit``.

    Secrets are removed *before* cutting, so a cut can never leave part of a secret behind.
    """
    text = " ".join(redact(text, secrets).split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text
