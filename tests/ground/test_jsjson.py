"""pikit.jsjson: JSON exactly as JavaScript reads and writes it.

The expected strings in ``NODE_CASES`` were computed once with Node 20
(``JSON.stringify(JSON.parse(src))`` and ``.length``) while writing this file; the
suite itself never needs node.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pikit import jsjson
from pikit.jsjson import (
    JSONParseError,
    _encode_slow,
    is_array_index,
    js_items,
    js_number,
    js_string,
    stringify,
    stringify_bytes,
    stringify_len,
    utf16_len,
)

# (JSON source, JSON.stringify(JSON.parse(source)) in Node, .length when the value is a string)
NODE_CASES: list[tuple[str, str, int | None]] = [
    ("1.0", "1", None),
    ("1e21", "1e+21", None),
    ("1e20", "100000000000000000000", None),
    ("-1e21", "-1e+21", None),
    ("1e-7", "1e-7", None),
    ("1e-6", "0.000001", None),
    ("0.000001", "0.000001", None),
    ("1.5e-7", "1.5e-7", None),
    ("123e-20", "1.23e-18", None),
    ("0.1", "0.1", None),
    ("0.30000000000000004", "0.30000000000000004", None),
    ("9007199254740993", "9007199254740992", None),
    ("9007199254740992", "9007199254740992", None),
    ("-9007199254740993", "-9007199254740992", None),
    ("12345678901234567890", "12345678901234567000", None),
    ("1e400", "null", None),
    ("-0.0", "0", None),
    ("-0", "0", None),
    ("0.0", "0", None),
    ("5e-324", "5e-324", None),
    ("1.7976931348623157e308", "1.7976931348623157e+308", None),
    ("100.0", "100", None),
    ("1.10", "1.1", None),
    ("123456789012345680000", "123456789012345680000", None),
    ("1234567890123456789012", "1.2345678901234568e+21", None),
    ("2.5e+25", "2.5e+25", None),
    ("1E2", "100", None),
    ("0.1e1", "1", None),
    ("[1.0,2.50,-3.0e0]", "[1,2.5,-3]", None),
    (
        '{"b":1,"2":2,"1":3,"a":4,"01":5,"4294967294":6,"4294967295":7,"-1":8,"1.5":9," 3":10}',
        '{"1":3,"2":2,"4294967294":6,"b":1,"a":4,"01":5,"4294967295":7,"-1":8,"1.5":9," 3":10}',
        None,
    ),
    ('"\\u0000\\u0001\\u001f\\u007f\\u0080"', '"\\u0000\\u0001\\u001f\x7f\x80"', 5),
    ('"\\u2028\\u2029"', '"\u2028\u2029"', 2),
    ('"\\ud800"', '"\\ud800"', 1),
    ('"\\udc00x"', '"\\udc00x"', 2),
    ('"a\\ud83d\\ude00b"', '"a😀b"', 4),
    ('"\\ude00\\ud83d"', '"\\ude00\\ud83d"', 2),
    ('"\\"\\\\/\\b\\f\\n\\r\\t"', '"\\"\\\\/\\b\\f\\n\\r\\t"', 8),
    ('"é中😀"', '"é中😀"', 4),
    ('{"k\\u0001":"\\u000b"}', '{"k\\u0001":"\\u000b"}', None),
    ('{"x":{"10":1,"9":2}}', '{"x":{"9":2,"10":1}}', None),
    ("[]", "[]", None),
    ("{}", "{}", None),
    ("[null,true,false]", "[null,true,false]", None),
]


@pytest.mark.parametrize(("source", "expected", "length"), NODE_CASES, ids=[c[0][:30] for c in NODE_CASES])
def test_matches_node_round_trip(source: str, expected: str, length: int | None) -> None:
    value = jsjson.loads(source)
    assert stringify(value) == expected
    assert _encode_slow(value) == expected
    assert stringify_bytes(value) == expected.encode("utf-8")
    assert stringify_len(value) == utf16_len(expected)
    if length is not None:
        assert isinstance(value, str)
        assert utf16_len(value) == length


# ---------------------------------------------------------------- numbers
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (-1.0, "-1"),
        (0.5, "0.5"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123456789.0, "123456789"),
        (1e-7, "1e-7"),
        (1.25e-7, "1.25e-7"),
        (1e-6, "0.000001"),
        (0.000123, "0.000123"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740992"),
        (-(2**53) - 1, "-9007199254740992"),
        (2**64, "18446744073709552000"),
        (10**21, "1e+21"),
        (-0.0, "0"),
        (0, "0"),
        (math.inf, "null"),
        (-math.inf, "null"),
        (math.nan, "null"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (5e-324, "5e-324"),
        (True, "true"),
        (False, "false"),
    ],
)
def test_js_number(value: float, expected: str) -> None:
    assert js_number(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1.0}, '{"a":1}'),
        ([1.0, 2.0, 1e16], "[1,2,10000000000000000]"),
        ({"n": 2**53 + 1}, '{"n":9007199254740992}'),
        ({"n": -0.0}, '{"n":0}'),
        ({"n": 1e-7, "m": 1e21}, '{"n":1e-7,"m":1e+21}'),
        ({"n": float("nan"), "i": float("inf")}, '{"n":null,"i":null}'),
        ((1, (2, 3)), "[1,[2,3]]"),
        # a digit run inside a string is a false alarm for the fast path, not a change
        ({"s": "1.0e5 12345678901234567"}, '{"s":"1.0e5 12345678901234567"}'),
        ({"text": "v1.0"}, '{"text":"v1.0"}'),
    ],
)
def test_stringify_numbers_in_structures(value: object, expected: str) -> None:
    assert stringify(value) == expected
    assert stringify_bytes(value) == expected.encode()


def test_integer_past_the_largest_double_prints_null() -> None:
    # JSON.parse("1" + "0".repeat(400)) is Infinity in JavaScript; JSON.stringify gives "null".
    assert js_number(10**400) == "null"
    value = jsjson.loads("1" + "0" * 400)
    assert stringify({"n": value}) == '{"n":null}'


def test_non_string_keys_are_stringified_like_javascript() -> None:
    # JavaScript object keys are strings: {1: "a", b: 2} prints as {"1":"a","b":2}.
    assert stringify({"b": 2, 1: "a"}) == '{"1":"a","b":2}'
    assert _encode_slow({"b": 2, 1: "a"}) == '{"1":"a","b":2}'


def test_non_string_keys_convert_like_javascript_string() -> None:
    assert stringify({None: 1}) == '{"null":1}'
    assert stringify({True: 1}) == '{"true":1}'
    assert stringify({2.0: 1}) == '{"2":1}'


# (a JSON value, what `${value}` gives in Node.js)
@pytest.mark.parametrize(("value", "expected"), [
    ("text", "text"), (None, "null"), (1.5, "1.5"), (True, "true"), (2 ** 70, "1.1805916207174113e+21"),
    (1e21, "1e+21"), ([], ""), ([[], []], ","), ([1, [2, [3]]], "1,2,3"), ([1, None, 2], "1,,2"),
    ({"a": 1}, "[object Object]"), ([{"a": 1}, "x"], "[object Object],x"),
])
def test_js_string_is_what_javascript_writes(value: object, expected: str) -> None:
    assert js_string(value) == expected


def test_js_string_of_a_deep_array_is_iterative() -> None:
    value: list[object] = [1]
    for _ in range(10_000):
        value = [value, 2]
    assert js_string(value) == "1" + ",2" * 10_000


def test_stringify_rejects_unknown_types() -> None:
    with pytest.raises(TypeError):
        stringify({"a": object()})
    with pytest.raises(TypeError):
        _encode_slow({1, 2})


# ---------------------------------------------------------------- key order
def test_integer_like_keys_come_first_ascending() -> None:
    value = {"z": 0, "10": 1, "a": 2, "2": 3, "0": 4, "007": 5, "-3": 6, "4294967294": 7, "4294967295": 8}
    assert [k for k, _ in js_items(value)] == ["0", "2", "10", "4294967294", "z", "a", "007", "-3", "4294967295"]
    assert stringify(value) == (
        '{"0":4,"2":3,"10":1,"4294967294":7,"z":0,"a":2,"007":5,"-3":6,"4294967295":8}'
    )


def test_plain_keys_keep_insertion_order() -> None:
    value = {"b": 1, "a": 2, "c": {"y": 1, "x": 2}}
    assert list(dict(js_items(value))) == ["b", "a", "c"]
    assert stringify(value) == '{"b":1,"a":2,"c":{"y":1,"x":2}}'


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("0", True), ("1", True), ("4294967294", True), ("4294967295", False), ("01", False), ("", False),
        ("-1", False), ("1.5", False), (" 1", False), ("١", False), ("１", False), ("1e3", False),
    ],
)
def test_is_array_index(key: str, expected: bool) -> None:
    assert is_array_index(key) is expected


# ---------------------------------------------------------------- strings
def test_control_characters_are_escaped_like_javascript() -> None:
    text = "".join(chr(c) for c in range(0x20)) + "\x7f"
    out = stringify(text)
    assert out == (
        '"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f'
        '\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c'
        '\\u001d\\u001e\\u001f\x7f"'
    )
    assert _encode_slow(text) == out


def test_line_separators_stay_raw() -> None:
    assert stringify("a\u2028b\u2029c") == '"a\u2028b\u2029c"'
    assert stringify_bytes("\u2028") == b'"\xe2\x80\xa8"'


def test_lone_surrogates_are_escaped_and_pairs_joined() -> None:
    assert stringify("\ud800") == '"\\ud800"'
    assert stringify("x\udfffy") == '"x\\udfffy"'
    assert stringify("\ud83d\ude00") == '"😀"'  # two halves stored separately = one character
    assert stringify("\ude00\ud83d") == '"\\ude00\\ud83d"'  # wrong order: two lone halves
    assert stringify({"\ud800": 1}) == '{"\\ud800":1}'
    # bytes output is valid UTF-8 even with lone surrogates
    stringify_bytes(["\udc00"]).decode("utf-8")


def test_non_ascii_is_not_escaped() -> None:
    assert stringify({"é": "中文😀"}) == '{"é":"中文😀"}'
    assert stringify_bytes("é") == '"é"'.encode()


def test_quote_and_backslash() -> None:
    assert stringify('a"b\\c/d') == '"a\\"b\\\\c/d"'


# ---------------------------------------------------------------- utf16_len
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0), ("abc", 3), ("é", 1), ("中文", 2), ("😀", 2), ("a😀b", 4), ("\U0001F468\u200d\U0001F469", 5),
        ("\ud800", 1), ("\ud83d\ude00", 2), ("\u2028", 1), ("\U00010000", 2),
    ],
)
def test_utf16_len(text: str, expected: int) -> None:
    assert utf16_len(text) == expected


def test_stringify_len_counts_utf16() -> None:
    assert stringify_len({"e": "😀"}) == len('{"e":""}') + 2
    assert stringify_len([1.0]) == 3


# ---------------------------------------------------------------- parsing
@pytest.mark.parametrize(
    "source",
    ["NaN", "Infinity", "-Infinity", "[NaN]", '{"a":Infinity}', '{"a":-Infinity}', "", "'a'", "01", "1.", ".5",
     "+1", '"\t"', '{"a":1,}', "[1,]", '"\\u00"', '{"a":1} x', "\ufeff{}", "{", '{"a":'],
)
def test_parse_rejects_what_javascript_rejects(source: str) -> None:
    with pytest.raises(JSONParseError):
        jsjson.loads(source)
    with pytest.raises(JSONParseError):
        jsjson.loads(source.encode("utf-8"))


def test_parse_error_is_a_value_error() -> None:
    assert issubclass(JSONParseError, ValueError)


def test_parse_accepts_lone_surrogate_escapes() -> None:
    assert jsjson.loads('"\\ud800"') == "\ud800"
    assert jsjson.loads(b'{"a":"x\\udc00"}') == {"a": "x\udc00"}
    assert jsjson.loads('"\\ud83d\\ude00"') == "😀"


def test_parse_accepts_huge_integers() -> None:
    value = jsjson.loads("123456789012345678901234567890")
    assert value == pytest.approx(1.2345678901234568e29)
    assert stringify(value) == "1.2345678901234568e+29"
    assert jsjson.loads("[18446744073709551616]") == [pytest.approx(2.0**64)]
    assert stringify(jsjson.loads("18446744073709551616")) == "18446744073709552000"


def test_parse_whitespace_duplicates_and_invalid_utf8() -> None:
    assert jsjson.loads(' {"a":1} ') == {"a": 1}
    assert jsjson.loads('{"a":1,"a":2}') == {"a": 2}  # the last duplicate key wins, as in JavaScript
    assert jsjson.loads(b'{"a":"\xff"}') == {"a": "\ufffd"}  # Node decodes invalid UTF-8 to U+FFFD


def test_parse_deep_nesting_does_not_raise_recursion_error() -> None:
    depth = 5000
    value = jsjson.loads("[" * depth + "]" * depth)
    for _ in range(depth - 1):
        value = value[0]
    assert value == []


def test_stringify_deep_nesting_is_iterative() -> None:
    value: list = []
    for _ in range(50_000):
        value = [value]
    assert stringify(value) == "[" * 50_001 + "]" * 50_001


# ---------------------------------------------------------------- properties
_SPECIAL_CHARS = st.sampled_from(
    ["\x00", "\x1f", "\x7f", '"', "\\", "/", "\u2028", "\u2029", "😀", "\ud800", "\udc00", "\ud83d", "\ude00",
     "é", "\t", "\n", "1.0", "1e5", "-0.0", "12345678901234567", '\\"', ",", ":", "[", "]", "{", "}", "e", "0"]
)
_ANY_CHAR = st.characters(exclude_categories=[])  # surrogates included
_TEXT = st.lists(st.one_of(_ANY_CHAR, _SPECIAL_CHARS), max_size=12).map("".join)
_KEYS = st.one_of(
    _TEXT,
    st.integers(min_value=0, max_value=2**33).map(str),
    st.sampled_from(["0", "01", "-1", "4294967294", "4294967295", "1.5", "10", "9"]),
)
_FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, -0.0, 1e21, 1e-7, 1e16, 1e15, 1.5e300, 5e-324, 123456789012345680000.0, 0.1 + 0.2]),
    st.integers(min_value=-(10**20), max_value=10**20).map(float),
)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-(2**60), 2**60), _FLOATS, _TEXT)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(_KEYS, children, max_size=5)),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_VALUES)
@pytest.mark.slow
def test_fast_path_agrees_with_exact_encoder(value: object) -> None:
    exact = _encode_slow(value)
    assert stringify(value) == exact
    assert stringify_bytes(value) == exact.encode("utf-8")
    assert stringify_len(value) == utf16_len(exact)


_SAFE_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**53), 2**53), st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
_SAFE_VALUES = st.recursive(
    _SAFE_SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(st.text(max_size=6), children,
                                                                              max_size=5)),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(_SAFE_VALUES)
@pytest.mark.slow
def test_output_is_json_that_parses_back(value: object) -> None:
    text = stringify(value)
    # JavaScript has one number type: compare numbers as doubles.
    assert _as_doubles(json.loads(text)) == _as_doubles(value)
    assert _as_doubles(jsjson.loads(text)) == _as_doubles(value)
    assert stringify(jsjson.loads(text.encode("utf-8"))) == text  # printing is a fixed point


def _as_doubles(value: object) -> object:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [_as_doubles(v) for v in value]
    assert isinstance(value, dict)
    return {k: _as_doubles(v) for k, v in value.items()}


@given(st.lists(st.sampled_from(["a", "\u00e9", "\U0001F600", "\ud800", "\udbff", "\udc00", "\udfff", "\ufffd"]),
                max_size=12).map("".join))
def test_without_lone_surrogates_keeps_the_utf16_length(text: str) -> None:
    clean = jsjson.without_lone_surrogates(text)
    clean.encode("utf-8")  # storable
    assert jsjson.utf16_len(clean) == jsjson.utf16_len(text)
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert clean == text


def test_without_lone_surrogates_replaces_each_lone_one_and_joins_a_split_pair() -> None:
    assert jsjson.without_lone_surrogates("a\ud800b\udc00c\U0001F600") == "a\ufffdb\ufffdc\U0001F600"
    assert jsjson.without_lone_surrogates("\ud83d\ude00") == "\U0001F600"  # a pair, as two code points
