"""The :class:`Redactor`: every rule compiled once, applied to one string at a time.

A :class:`Redactor` holds configuration only and can be shared by any number of sessions
(and threads); the numbering of one run lives in a :class:`Placeholders`, so the same secret
gets the same placeholder everywhere in that run.
"""

from __future__ import annotations

import base64
import bisect
import os
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import PikitError, Wording
from .rules import (
    EMAIL,
    ENTROPY_LIMIT,
    KEYWORD,
    KEYWORDED,
    KEYWORDS,
    NEEDLES,
    RULES,
    WINDOW,
    Finder,
    library_rules,
    plausible,
)

__all__ = ["ENV_NAMES", "Placeholders", "Redactor"]

#: The environment variables whose values are secrets (by name, any case).
ENV_NAMES = re.compile(r"(?i)KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|PRIVATE|COOKIE|SESSION|SIGNATURE|DSN|CERT")
_ENV_MIN = 8  # shorter values (``true``, ``1``, ``dev``) would take ordinary words with them
_MIN_BASE64_RUN = 12
_SHORTEST = 6  # no rule finds a secret in a shorter text
_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9-]+:\d+\]")
#: A JSON escape inside a string that holds JSON text: ``\/`` and ``\u002f`` (any depth of backslashes),
#: which would split a token at its slashes (and hide ``+``, ``=``, letters) from the rules; the
#: percent-escapes of base64's ``+``, ``/`` and ``=`` in a URL (``sig=…%2B…%3D``); and HTML's numeric
#: character references (``&#x2F;``, ``&#47;``) in a page a tool fetched.
_ESCAPE = re.compile(r"\\+(?:/|u(?P<json>[0-9a-fA-F]{4}))|%(?P<percent>2[BbFf]|3[Dd])"
                     r"|&#(?:[xX](?P<hex>[0-9a-fA-F]{1,4})|(?P<decimal>[0-9]{1,5}));")
_MAY_ESCAPE = ("\\", "%", "&#")


def _escaped_char(match: re.Match[str]) -> str:
    """The character an escape :data:`_ESCAPE` found stands for."""
    code = match.group("json") or match.group("percent") or match.group("hex")
    if code is not None:
        return chr(int(code, 16))
    decimal = match.group("decimal")
    return chr(min(int(decimal), 0x10FFFF)) if decimal is not None else "/"


class _Unescaped:
    """``text`` with its escapes (:data:`_ESCAPE`) of printable ASCII undone, and the way back to its offsets."""

    def __init__(self, text: str) -> None:
        pieces: list[str] = []
        self.after: list[int] = []  # offsets in the unescaped text just past an undone escape...
        self.shift: list[int] = []  # ...and how far ahead the source text is from there on
        last = shift = 0
        for match in _ESCAPE.finditer(text):
            char = _escaped_char(match)
            if not 0x20 < ord(char) < 0x7F:
                continue
            pieces += [text[last:match.start()], char]
            last = match.end()
            self.after.append(match.start() - shift + 1)
            shift += match.end() - match.start() - 1
            self.shift.append(shift)
        pieces.append(text[last:])
        self.text = "".join(pieces)

    def source(self, offset: int) -> int:
        """The offset in the source text of the unescaped text's ``offset`` (a start, or an end)."""
        n = bisect.bisect_right(self.after, offset)
        return offset + (self.shift[n - 1] if n else 0)


def _unescaped(text: str) -> str:
    """``text`` with the escapes :data:`_ESCAPE` finds undone (the key of a secret seen escaped)."""
    return _Unescaped(text).text if any(mark in text for mark in _MAY_ESCAPE) else text


class Placeholders:
    """The numbering of one run: each distinct secret of a kind gets the next number, once."""

    def __init__(self) -> None:
        self._given: dict[tuple[str, str], str] = {}
        self._next: dict[str, int] = {}

    def __call__(self, kind: str, secret: str) -> str:
        """The placeholder of ``secret`` (``[REDACTED:github-token:3]``), the same every time."""
        key = (kind, secret)
        found = self._given.get(key)
        if found is None:
            number = self._next.get(kind, 0) + 1
            self._next[kind] = number
            found = self._given[key] = f"[REDACTED:{kind}:{number}]"
        return found

    def distinct(self) -> dict[str, int]:
        """How many distinct secrets of each kind were seen."""
        return dict(sorted(self._next.items()))


def _forms(value: str) -> set[str]:
    """``value`` as it is, percent-encoded, and in base64 at every alignment (standard and url-safe)."""
    forms = {value, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)}
    raw = value.encode("utf-8", "surrogatepass")
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw)
        start = 4 if offset else 0
        end = len(encoded) - (4 if len(raw) % 3 or offset else 0)
        for text in (encoded, encoded.translate(bytes.maketrans(b"+/", b"-_"))):
            core = text[start:end].decode("ascii")
            if offset == 0:
                forms.add(text.decode("ascii").rstrip("="))
            if len(core) >= _MIN_BASE64_RUN:
                forms.add(core)
    return forms


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The values of the variables of ``environ`` whose names say they are secrets (long enough)."""
    return sorted({v.strip() for k, v in environ.items() if ENV_NAMES.search(k) and len(v.strip()) >= _ENV_MIN})


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    checked: bool = False  # pikit's own rule: its matches go through ``plausible``
    needles: tuple[str, ...] = ()  # tried only on a text holding one of these (none: always)
    folded: bool = False  # the needles are lower case, looked for in the lower-cased text
    keyworded: bool = False  # tried only around the keywords of ``KEYWORD`` (see :data:`.rules.KEYWORDED`)

    def matches(self, text: str, windows: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
        """The rule's matches in ``text``, or in its keyword ``windows`` only."""
        if not self.keyworded:
            yield from self.pattern.finditer(text)
            return
        for start, end in windows:  # a match may begin in one window and end past it
            yield from self.pattern.finditer(text, start, end)

    def tried(self, text: str, lower: str) -> bool:
        """Whether ``text`` (``lower``: lower-cased) may hold a match."""
        if not self.needles:
            return True
        within = lower if self.folded else text
        return any(needle in within for needle in self.needles)


def _rule(kind: str, pattern: re.Pattern[str], checked: bool = False) -> _Rule:
    needles, folded = NEEDLES.get(kind, ((), False))
    if kind in KEYWORDED and "http" in pattern.pattern:  # a service's URL (cloudant, softlayer): by its name
        return _Rule(kind, pattern, checked, (kind,), True)
    return _Rule(kind, pattern, checked, needles, folded, kind in KEYWORDED)


def _windows(text: str, lower: str) -> list[tuple[int, int]]:
    """Where the keywords of :data:`.rules.KEYWORD` are, widened by :data:`.rules.WINDOW` and merged."""
    before, after = WINDOW
    if len(lower) == len(text):  # found with str.find, far quicker than an expression ignoring case
        places = sorted((at, at + len(word)) for word in KEYWORDS for at in _find_all(lower, word))
    else:  # lower-casing moved characters (U+0130): the expression on the text itself
        places = [m.span() for m in KEYWORD.finditer(text)]
    windows: list[tuple[int, int]] = []
    for found, ends in places:
        start, end = max(0, found - before), min(len(text), ends + after)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((start, end))
    return windows


def _find_all(text: str, word: str) -> Iterator[int]:
    at = text.find(word)
    while at >= 0:
        yield at
        at = text.find(word, at + 1)


@dataclass(frozen=True)
class Redactor:
    """What to redact, compiled once; reuse one for many sessions (and threads: it is immutable).

    * ``patterns``: extra regular expressions (strings or compiled); a match is a secret of kind
      ``pattern`` (its first group when the expression has groups, else the whole match).
    * ``allow``: values that are never redacted: a string is an exact value, a compiled
      expression must match a found secret whole.
    * ``emails``: also redact e-mail addresses.
    * ``keep_images``: keep inline images (by default their data is replaced by a 1×1 image).
    * ``environment``: ``True`` (default) takes the values of this process's secret-looking
      environment variables (names matching :data:`ENV_NAMES`, values of 8 characters or more),
      a mapping takes them from there, ``False`` from nowhere.
    * ``entropy``: the Shannon entropy (bits per character) from which a long base64-like word
      is a secret; ``None`` turns that detector off.
    * ``library``: also run detect-secrets' detectors for the kinds pikit has no rule of its own for.

    Raises :class:`~pikit.PikitError` (naming ``patterns`` or ``allow``) for an expression that
    does not compile, and when detect-secrets is not installed (``library=False`` with
    ``entropy=None`` needs only pikit's own rules, and no detect-secrets).
    """

    patterns: Iterable[str | re.Pattern[str]] = ()
    allow: Iterable[str | re.Pattern[str]] = ()
    emails: bool = False
    keep_images: bool = False
    environment: bool | Mapping[str, str] = True
    entropy: float | None = ENTROPY_LIMIT
    library: bool = True
    _rules: list[_Rule] = field(init=False, repr=False)
    _allowed: frozenset[str] = field(init=False, repr=False)
    _allowed_patterns: list[re.Pattern[str]] = field(init=False, repr=False)
    _finder: Finder | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        fix = object.__setattr__  # (frozen: the compiled rules are set once, here)
        fix(self, "patterns", tuple(self.patterns))
        fix(self, "allow", tuple(self.allow))
        rules = [_rule(kind, re.compile(expression), checked=True) for kind, expression in RULES]
        environ = os.environ if self.environment is True else (self.environment or {})
        values = environment_secrets(environ)
        if values:
            forms = sorted({f for v in values for f in _forms(v)}, key=len, reverse=True)
            rules.insert(0, _Rule("env", re.compile("|".join(map(re.escape, forms)))))
        rules += [_Rule("pattern", _compiled(p, "patterns")) for p in self.patterns]
        if self.emails:
            rules.append(_rule(EMAIL[0], re.compile(EMAIL[1])))
        if self.library:
            rules += [_rule(kind, pattern) for kind, pattern in library_rules()]
        fix(self, "_rules", rules)
        fix(self, "_allowed", frozenset(a for a in self.allow if isinstance(a, str)))
        fix(self, "_allowed_patterns", [_compiled(a, "allow") for a in self.allow if not isinstance(a, str)])
        fix(self, "_finder", Finder(self.entropy) if self.entropy is not None else None)

    def allowed(self, secret: str) -> bool:
        """Whether ``secret`` is on the allow-list."""
        return secret in self._allowed or any(p.fullmatch(secret) for p in self._allowed_patterns)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """The secrets in ``text``: (start, end, kind), in order, never overlapping, allowed ones left out.

        A text holding JSON escapes (``\\/``, ``\\u002f``), percent-escapes of ``+/=`` or HTML character
        references (``&#x2F;``) is also looked at with them undone, so a token they split is found whole.
        """
        if len(text) < _SHORTEST:
            return []
        found = self._found(text)
        if any(mark in text for mark in _MAY_ESCAPE):
            unescaped = _Unescaped(text)
            if unescaped.after:
                more = self._found(unescaped.text)
                found += [(unescaped.source(start), unescaped.source(end), kind) for start, end, kind in more]
        if not found:
            return found
        found.sort(key=lambda s: (s[0], -s[1]))
        merged: list[tuple[int, int, str]] = []
        for start, end, kind in found:
            if merged and start < merged[-1][1]:  # overlapping: one secret, the first rule's kind
                last = merged[-1]
                merged[-1] = (last[0], max(last[1], end), last[2])
            else:
                merged.append((start, end, kind))
        return [s for s in merged if not self.allowed(_unescaped(text[s[0]:s[1]]))]

    def _found(self, text: str) -> list[tuple[int, int, str]]:
        """Every rule's spans in ``text``, as found: unsorted, maybe overlapping."""
        found: list[tuple[int, int, str]] = []
        lower = text.lower()
        windows: list[tuple[int, int]] | None = None
        for rule in self._rules:
            if not rule.tried(text, lower):
                continue
            if rule.keyworded and windows is None:
                windows = _windows(text, lower)
            for match in rule.matches(text, windows or []):
                if rule.checked and not plausible(rule.kind, match):
                    continue
                start, end = _secret_span(match)
                if end > start:
                    found.append((start, end, rule.kind))
        if self._finder is not None:
            found += [(start, end, "high-entropy") for start, end in self._finder.spans(text)]
        return found

    def redact_text(self, text: str, placeholders: Placeholders, counts: dict[str, int] | None = None) -> str:
        """``text`` with each secret replaced by its placeholder; ``counts`` (kind → n) is added to."""
        spans = self.spans(text)
        if not spans:
            return text
        pieces: list[str] = []
        at = 0
        for start, end, kind in spans:
            secret = _unescaped(text[start:end])  # escaped or not, one secret: one placeholder
            if _PLACEHOLDER.fullmatch(secret):
                continue
            pieces += [text[at:start], placeholders(kind, secret)]
            at = end
            if counts is not None:
                counts[kind] = counts.get(kind, 0) + 1
        pieces.append(text[at:])
        return "".join(pieces)


def _secret_span(match: re.Match[str]) -> tuple[int, int]:
    """The secret in a match: group ``s`` of pikit's rules; else the longest group of 8 characters or more
    (a user's or detect-secrets' expression, the secret beside its name); else the whole match."""
    for name in ("s", "u"):
        if match.re.groupindex.get(name) and match.group(name) is not None:
            return match.span(name)
    spans = [match.span(i) for i in range(1, match.re.groups + 1) if match.group(i)]
    best = max(spans, key=lambda s: s[1] - s[0], default=(0, 0))
    return best if best[1] - best[0] >= 8 else match.span()


def _compiled(expression: Any, name: str) -> re.Pattern[str]:
    if isinstance(expression, re.Pattern):
        return expression
    try:
        return re.compile(expression)
    except (re.error, TypeError) as exc:
        values = {"why": exc, "value": str(expression)[:80]}
        if name == "patterns":
            wording = Wording("{patterns}: not a regular expression ({why}): {value}", {"patterns": "patterns"},
                              **values)
        else:
            wording = Wording("{allow}: not a regular expression ({why}): {value}", {"allow": "allow"}, **values)
        raise PikitError(wording) from None
