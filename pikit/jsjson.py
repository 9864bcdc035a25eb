"""JSON exactly as JavaScript reads and writes it.

Pi is written in JavaScript, so the numbers it derives from JSON (token estimates of
tool-call arguments, string lengths) and the JSON it prints follow JavaScript's rules:

* string length counts UTF-16 code units (an emoji is 2);
* ``JSON.stringify`` is compact, leaves non-ASCII text as is, escapes lone surrogates,
  prints numbers the JavaScript way (``1.0`` → ``1``, ``1e21`` → ``1e+21``, integers past
  2**53 rounded to a double) and orders an object's integer-like keys first, ascending;
* ``JSON.parse`` rejects ``NaN``/``Infinity`` and accepts lone surrogate escapes and
  integers of any size.

Parsing uses orjson for speed and falls back to the standard library for the few inputs
orjson refuses (lone surrogates, huge integers, very deep nesting). Serializing uses orjson
when its output is provably identical to JavaScript's and an exact iterative encoder
otherwise.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

__all__ = [
    "JS_WHITESPACE",
    "JSONParseError",
    "is_array_index",
    "iter_stringify_bytes",
    "js_items",
    "js_number",
    "js_string",
    "js_truthy",
    "loads",
    "stringify",
    "stringify_bytes",
    "stringify_len",
    "utf16_len",
    "without_lone_surrogates",
]

_MAX_ARRAY_INDEX = 2**32 - 2
# What JavaScript's String.prototype.trim() removes.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_SAFE_INT = 2**53


class JSONParseError(ValueError):
    """A line that JavaScript's ``JSON.parse`` would reject."""


def _reject_constant(name: str) -> Any:
    raise JSONParseError(f"{name} is not valid JSON")


_std_decoder = json.JSONDecoder(parse_constant=_reject_constant)
_c_quote: Any = json.encoder.encode_basestring


def loads(data: bytes | str) -> Any:
    """Parse one JSON text the way ``JSON.parse`` does.

    Raises :class:`JSONParseError` on anything ``JSON.parse`` would reject.
    Invalid UTF-8 in ``bytes`` input is decoded with U+FFFD replacement characters,
    as Node's UTF-8 decoder does before parsing.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    text = bytes(data).decode("utf-8", errors="replace") if isinstance(data, bytes | bytearray | memoryview) else data
    try:
        return _std_decoder.decode(text)
    except RecursionError:
        return _parse_deep(text)  # nesting deeper than the recursive parsers allow
    except ValueError as exc:
        raise JSONParseError(str(exc).split("\n", 1)[0]) from None


_JSON_TOKEN = re.compile(
    r'[ \t\n\r]*(?:("(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*")'
    r"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)|(true|false|null)|([\[\]{},:]))"
)
_LITERALS = {"true": True, "false": False, "null": None}


def _parse_deep(text: str) -> Any:
    """An iterative JSON parser for deeply nested values (JavaScript has no depth limit)."""
    parser = _DeepParser()
    pos = 0
    while True:
        match = _JSON_TOKEN.match(text, pos)
        if match is None:
            if parser.done and not text[pos:].strip(" \t\n\r"):
                return parser.result
            raise JSONParseError(f"malformed JSON at character {pos}")
        pos = match.end()
        if parser.done:
            raise JSONParseError(f"unexpected data after the JSON value at character {match.start()}")
        parser.token(match)


class _DeepParser:
    """The state of :func:`_parse_deep`: open containers and what may come next.

    ``stack`` holds the open containers; a dict is followed on it by its pending key.
    ``expect`` is one of value, value-or-close, key, key-or-close, colon, comma-or-close.
    """

    def __init__(self) -> None:
        self.stack: list[Any] = []
        self.expect = "value"
        self.result: Any = None
        self.done = False

    def token(self, match: re.Match[str]) -> None:
        """Consume one token."""
        string, number, literal, punct = match.groups()
        at = match.start()
        if punct in ("]", "}"):
            self._store(self._close(punct, at))
        elif punct == ",":
            self._comma(at)
        elif punct == ":":
            if self.expect != "colon":
                raise JSONParseError(f"unexpected ':' at character {at}")
            self.expect = "value"
        elif self.expect in ("key", "key-or-close"):
            if string is None:
                raise JSONParseError(f"expected a string key at character {at}")
            self.stack[-1] = json.loads(string)
            self.expect = "colon"
        elif self.expect not in ("value", "value-or-close"):
            raise JSONParseError(f"unexpected value at character {at}")
        elif punct == "[":
            self.stack.append([])
            self.expect = "value-or-close"
        elif punct == "{":
            self.stack.extend(({}, _NOTHING))
            self.expect = "key-or-close"
        else:
            self._store(json.loads(string if string is not None else number) if literal is None
                        else _LITERALS[literal])

    def _close(self, punct: str, at: int) -> Any:
        stack = self.stack
        top = stack[-1] if stack else None
        closing_list = punct == "]" and isinstance(top, list)
        closing_dict = punct == "}" and len(stack) >= 2 and isinstance(stack[-2], dict) and stack[-1] is _NOTHING
        may_close = self.expect in ("value-or-close", "key-or-close", "comma-or-close")
        if not may_close or not (closing_list or closing_dict):
            raise JSONParseError(f"unexpected {punct!r} at character {at}")
        if closing_dict:
            stack.pop()
        return stack.pop()

    def _comma(self, at: int) -> None:
        if self.expect != "comma-or-close" or not self.stack:
            raise JSONParseError(f"unexpected ',' at character {at}")
        self.expect = "value" if isinstance(self.stack[-1], list) else "key"

    def _store(self, value: Any) -> None:
        """A complete value: into its container, or it is the result."""
        stack = self.stack
        if not stack:
            self.result, self.done = value, True
        elif isinstance(stack[-1], list):
            stack[-1].append(value)
            self.expect = "comma-or-close"
        else:
            stack[-2][stack[-1]] = value
            stack[-1] = _NOTHING
            self.expect = "comma-or-close"


class _Nothing:
    """No pending key / no value yet."""


_NOTHING: Any = _Nothing()


def without_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (a valid JSON escape, not valid UTF-8) as one U+FFFD.

    Its UTF-16 length stays the same; text that holds none comes back as it is.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (JavaScript's ``String.prototype.length``)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) >> 1


def is_array_index(key: str) -> bool:
    """Whether JavaScript treats ``key`` as an integer index (listed first, ascending)."""
    if not key or not key.isdigit() or not key.isascii():
        return False
    if key[0] == "0" and len(key) > 1:
        return False
    return int(key) <= _MAX_ARRAY_INDEX


def js_items(obj: Mapping[Any, Any]) -> Iterable[tuple[str, Any]]:
    """An object's entries in JavaScript's property order (keys are strings in JavaScript)."""
    if not all(isinstance(k, str) for k in obj):
        obj = {js_string(k): v for k, v in obj.items()}
    keys = list(obj)
    index_keys = [k for k in keys if is_array_index(k)]
    if not index_keys:
        return obj.items()
    index_keys.sort(key=int)
    rest = [k for k in keys if not is_array_index(k)]
    return [(k, obj[k]) for k in index_keys + rest]


def js_string(value: Any) -> str:
    """JavaScript's ``String(value)`` of a JSON value: a string as it is, a number as JavaScript writes it,
    ``null``, ``true``, an array's items joined by commas at any depth (``null`` in it as nothing; iterative),
    ``[object Object]`` for an object."""
    if not isinstance(value, list):
        return _scalar_string(value)
    out: list[str] = []
    items, first = [iter(value)], [True]
    while items:
        item = next(items[-1], _END)
        if item is _END:
            items.pop()
            first.pop()
            continue
        if not first[-1]:
            out.append(",")
        first[-1] = False
        if isinstance(item, list):
            items.append(iter(item))
            first.append(True)
        elif item is not None:
            out.append(_scalar_string(item))
    return "".join(out)


_END = object()


def _scalar_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool | int | float):
        return js_number(value)
    if isinstance(value, Mapping):
        return "[object Object]"
    return str(value)


def js_number(value: int | float) -> str:
    """Format a number as JavaScript's ``Number.prototype.toString`` does."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if -_SAFE_INT <= value <= _SAFE_INT:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "null"  # JavaScript reads it as Infinity
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits, exponent = _shortest_digits(abs(value))
    k = len(digits)
    n = exponent  # value = 0.digits × 10**n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
        body = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def _shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of a positive float and its exponent n
    such that value = 0.DIGITS × 10**n (Python's repr and JavaScript agree on the digits)."""
    text = repr(value)
    mantissa, _, exp_part = text.partition("e")
    exp = int(exp_part) if exp_part else 0
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    lead_zeros = len(whole + frac) - len((whole + frac).lstrip("0"))
    n = len(whole) + exp - lead_zeros
    digits = digits.rstrip("0") or "0"
    return digits, n


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_NEEDS_ESCAPE = re.compile("[\x00-\x1f\"\\\\\ud800-\udfff]")


def _escape_char(match: re.Match[str]) -> str:
    ch = match.group()
    esc = _ESCAPES.get(ch)
    if esc is not None:
        return esc
    return f"\\u{ord(ch):04x}"


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _join_pair(match: re.Match[str]) -> str:
    return match.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le")


def _quote(text: str) -> str:
    if text.isascii() or _SURROGATE.search(text) is None:
        # The standard library's C escaper escapes exactly what JavaScript does here.
        return _c_quote(text)
    # Two halves of a pair stored as separate code points are one character to JavaScript.
    text = _SURROGATE_PAIR.sub(_join_pair, text)
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, text) + '"'


def _encode_slow(value: Any) -> str:
    """Exact ``JSON.stringify(value)`` without recursion (deep values are fine)."""
    out: list[str] = []
    # Stack of pending work: either a value to encode or a literal string to emit.
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        is_literal, item = stack.pop()
        if is_literal:
            out.append(item)
            continue
        if item is None:
            out.append("null")
        elif item is True:
            out.append("true")
        elif item is False:
            out.append("false")
        elif isinstance(item, str):
            out.append(_quote(item))
        elif isinstance(item, int | float):
            out.append(js_number(item))
        elif isinstance(item, Mapping):
            out.append("{")
            pending: list[tuple[bool, Any]] = []
            first = True
            for key, val in js_items(item):
                pending.append((True, ("" if first else ",") + _quote(str(key)) + ":"))
                pending.append((False, val))
                first = False
            pending.append((True, "}"))
            stack.extend(reversed(pending))
        elif isinstance(item, list | tuple):
            out.append("[")
            pending = []
            for i, val in enumerate(item):
                if i:
                    pending.append((True, ","))
                pending.append((False, val))
            pending.append((True, "]"))
            stack.extend(reversed(pending))
        else:
            raise TypeError(f"cannot serialize {type(item).__name__} as JSON")
    return "".join(out)


# orjson's output equals JavaScript's except for integer-like keys (JavaScript lists them
# first) and some numbers: integral floats ("1.0"), exponents orjson uses where JavaScript
# does not ("5e-6": JavaScript switches to exponents only below 1e-6; "1e16"/"1e21" are
# integral) and integers past 2**53. A walk over the value (strings skipped, so the cost
# follows the number of JSON nodes, not the amount of text) hands orjson such numbers
# already formatted (orjson.Fragment), copying only the containers on the way to them;
# integer-like keys and unusual types go to the exact encoder.
_SAFE_INT_LIMIT = 2**53


class _NeedsExactEncoder(Exception):
    """The value holds something orjson would not write the JavaScript way."""


def _js_ready(value: Any) -> Any:
    """``value``, or a copy with its oddly formatted numbers replaced by preformatted fragments."""
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return value
    if kind is float:
        if value.is_integer() or (value != 0 and -1e-5 < value < 1e-5):
            return orjson.Fragment(js_number(value).encode())
        return value
    if kind is int:
        if -_SAFE_INT_LIMIT <= value <= _SAFE_INT_LIMIT:
            return value
        return orjson.Fragment(js_number(value).encode())
    if kind is dict:
        copy: dict[str, Any] | None = None
        for key, item in value.items():
            if type(key) is not str or (key[:1].isdigit() and is_array_index(key)):
                raise _NeedsExactEncoder
            ready = _js_ready(item)
            if ready is not item:
                if copy is None:
                    copy = dict(value)
                copy[key] = ready
        return value if copy is None else copy
    if kind is list:
        items: list[Any] | None = None
        for index, item in enumerate(value):
            ready = _js_ready(item)
            if ready is not item:
                if items is None:
                    items = list(value)
                items[index] = ready
        return value if items is None else items
    raise _NeedsExactEncoder  # subclasses, tuples, other mappings: the exact encoder decides


def stringify_bytes(value: Any) -> bytes:
    """``JSON.stringify(value)`` as UTF-8 bytes (lone surrogates are escaped, so it is valid UTF-8)."""
    try:
        return orjson.dumps(_js_ready(value))
    except (_NeedsExactEncoder, RecursionError, TypeError, orjson.JSONEncodeError):
        return _encode_slow(value).encode("utf-8")


def iter_stringify_bytes(value: Any, depth: int = 4, chunk: int = 256) -> Iterator[bytes]:
    """``JSON.stringify(value)`` in pieces (their concatenation is :func:`stringify_bytes`).

    Objects and arrays down to ``depth`` levels are opened here and long arrays are encoded
    ``chunk`` items at a time, so a huge value is written without holding its whole
    encoding (and the encoder's growing buffer) in memory at once.
    """
    kind = type(value)
    if depth <= 0 or (kind is not dict and kind is not list):
        yield stringify_bytes(value)
        return
    if kind is dict:
        yield b"{"
        for n, (key, item) in enumerate(js_items(value)):
            yield (b"," if n else b"") + stringify_bytes(str(key)) + b":"
            yield from iter_stringify_bytes(item, depth - 1, chunk)
        yield b"}"
        return
    yield b"["
    for start in range(0, len(value), chunk):
        piece = stringify_bytes(value[start:start + chunk])
        yield (b"," if start else b"") + piece[1:-1]
    yield b"]"


def stringify(value: Any) -> str:
    """``JSON.stringify(value)`` as a string."""
    return stringify_bytes(value).decode("utf-8")


def stringify_len(value: Any) -> int:
    """``JSON.stringify(value).length`` in UTF-16 code units."""
    data = stringify_bytes(value)
    if data.isascii():
        return len(data)
    return utf16_len(data.decode("utf-8"))


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness (``0``, ``""``, ``null``, ``NaN`` and ``false`` are falsy)."""
    if value is None or value is False:
        return False
    if isinstance(value, int | float):
        return value == value and value != 0
    if isinstance(value, str):
        return value != ""
    return True
