"""JavaScript number semantics. Every expected value is what Node v20.20 prints or returns for
the same input (``String(x)``, ``Math.round(x)``, ``JSON.parse(text)``), noted beside it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from evalkit.js.numbers import (
    MAX_SAFE_INTEGER,
    JSONLineError,
    format_js_number,
    is_js_number,
    js_round,
    json_number,
    loads_json_line,
)


@pytest.mark.parametrize(
    ("value", "js"),
    [
        (1, "1"),
        (1.0, "1"),  # String(1.0) === "1"
        (0.1, "0.1"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1 / 3, "0.3333333333333333"),
        (-5.5, "-5.5"),
        (100.0, "100"),
        (1e20, "100000000000000000000"),  # 21 digits still print in full
        (1e21, "1e+21"),  # from 10^21 on, exponent form
        (123456789012345678901234, "1.2345678901234569e+23"),
        (1e-6, "0.000001"),
        (0.000001234, "0.000001234"),
        (1e-7, "1e-7"),  # below 10^-6, exponent form without a zero-padded exponent
        (1.5e-7, "1.5e-7"),
        (-0.0, "0"),  # String(-0) === "0"
        (0, "0"),
        (12345678901234567890, "12345678901234567000"),  # the nearest double, printed
        (2**53 + 1, "9007199254740992"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (10**400, "Infinity"),  # an int beyond double range is Infinity as a JS number
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (math.nan, "NaN"),
        (True, "true"),
    ],
)
def test_format_js_number(value: float, js: str) -> None:
    assert format_js_number(value) == js


def test_format_js_number_rejects_non_numbers() -> None:
    with pytest.raises(TypeError):
        format_js_number("1")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "js"),
    [
        (0.5, 1),
        (-0.5, 0),  # Math.round(-0.5) === -0: halves go toward +infinity
        (1.5, 2),
        (-1.5, -1),
        (2.5, 3),  # Python's round(2.5) is 2 (half to even); JS gives 3
        (-2.5, -2),
        (0.49999999999999994, 0),  # floor(x + 0.5) would wrongly give 1
        (-0.49999999999999994, 0),
        (4503599627370495.5, 4503599627370496),
        (7200.4999, 7200),
        (-7200.5, -7200),
        (7200, 7200),
    ],
)
def test_js_round(value: float, js: int) -> None:
    got = js_round(value)
    assert got == js
    assert isinstance(got, int)


def test_js_round_non_finite_passes_through() -> None:
    assert js_round(math.inf) == math.inf
    assert math.isnan(js_round(math.nan))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":1}', {"a": 1}),
        (' {"a":1}\r', {"a": 1}),  # JSON whitespace around the value, CR of a CRLF line
        ('{"a":1,"a":2}', {"a": 2}),  # duplicate keys: the last wins
        ("[1,2]", [1, 2]),
        ("null", None),
        ('"x"', "x"),
        ("1.0", 1),  # JSON.parse("1.0") is the number 1
        ("1e2", 100),
        ("1.5", 1.5),
        ("-0", 0),
        ("1e400", math.inf),  # beyond double range: Infinity
        ("-1e400", -math.inf),
        ("12345678901234567890", 12345678901234567890.0),  # prints 12345678901234567000
        ("9007199254740993", 9007199254740992),  # 2**53 + 1 is not a double; JS reads 2**53
        ('"\\ud800"', "\ud800"),  # a lone surrogate escape is accepted by both
    ],
)
def test_loads_json_line(text: str, expected: object) -> None:
    got = loads_json_line(text)
    assert got == expected
    assert type(got) is type(expected)


def test_huge_integer_literal_is_infinite_not_an_error() -> None:
    # Python's int() refuses 5000-digit strings; JSON.parse gives Infinity.
    assert loads_json_line("9" * 5000) == math.inf
    assert loads_json_line("-" + "9" * 400) == -math.inf


def test_integers_stay_int_while_exact() -> None:
    assert loads_json_line(str(MAX_SAFE_INTEGER)) == MAX_SAFE_INTEGER
    assert isinstance(loads_json_line(str(MAX_SAFE_INTEGER)), int)
    assert isinstance(loads_json_line(str(MAX_SAFE_INTEGER * 4)), float)


@pytest.mark.parametrize(
    "text",
    [
        "NaN",  # Python's json accepts these three; JSON.parse throws
        "Infinity",
        "-Infinity",
        '{"a": NaN}',
        "[Infinity]",
        '\ufeff{"a":1}',  # JSON.parse does not skip a BOM
        "\u00a0{}",  # nor a no-break space
        "01",
        "{} x",
        '{"a":1',
        "",
        "not json",
        "{'a': 1}",
    ],
)
def test_loads_json_line_rejects(text: str) -> None:
    with pytest.raises(JSONLineError):
        loads_json_line(text)


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    with pytest.raises(JSONLineError):
        loads_json_line("[" * 100_000 + "]" * 100_000)


def test_is_js_number() -> None:
    assert is_js_number(1) and is_js_number(1.5) and is_js_number(math.nan)
    assert not is_js_number(True) and not is_js_number("1") and not is_js_number(None)


def _js_view(value: object) -> object:
    """A parsed value with every number replaced by "NUM:" + its JS text (as the corpus)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return "NUM:" + format_js_number(value)
    if isinstance(value, list):
        return [_js_view(v) for v in value]
    assert isinstance(value, dict)
    return {k: _js_view(v) for k, v in value.items()}


CORPUS = json.loads((Path(__file__).parent / "data" / "v8_json_numbers.json").read_text("utf-8"))


def test_json_parse_agrees_with_v8_on_a_recorded_corpus() -> None:
    # 522 seeded token soups (122 that JSON.parse accepts, 400 it rejects), Node v20.20.
    wrong = []
    for text, expected in CORPUS["json"]:
        try:
            got: object = _js_view(loads_json_line(text))
        except JSONLineError:
            got = None
        want = None if expected is None else json.loads(expected)
        if got != want:
            wrong.append((text, want, got))
    assert len(CORPUS["json"]) > 500 and wrong == []


def test_string_and_round_agree_with_v8_on_a_recorded_corpus() -> None:
    # 1,500 doubles (random bit patterns, rounded decimals, powers of ten), Node v20.20's
    # String(x) and String(Math.round(x)).
    wrong = [
        (text, s, r)
        for text, s, r in CORPUS["numbers"]
        if format_js_number(float(text)) != s or format_js_number(js_round(float(text))) != r
    ]
    assert len(CORPUS["numbers"]) == 1500 and wrong == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # JSON.stringify([JSON.parse("123456789012345678901"), 2**60, 1e20, 1e21, 3.0, -0,
        #   2**53+2, -(2**60)]) in Node v20.20:
        # [123456789012345680000,1152921504606847000,100000000000000000000,1e+21,3,0,
        #  9007199254740994,-1152921504606847000]
        (123456789012345678901.0, 123456789012345680000),
        (2.0**60, 1152921504606847000),
        (1e20, 100000000000000000000),
        (3.0, 3),
        (-0.0, 0),
        (2.0**53 + 2, 9007199254740994),
        (-(2.0**60), -1152921504606847000),
    ],
)
def test_json_number_writes_integral_doubles_with_js_digits(value: float, expected: int) -> None:
    out = json_number(value)
    assert type(out) is int and out == expected
    assert float(out) == value  # the same double, only spelled as JavaScript spells it
    assert json.dumps(out) == json.dumps(json.loads(json.dumps(out)))


@pytest.mark.parametrize("value", [0.5, 1e21, 1.5e300, 7, "7", None, True, [1.0]])
def test_json_number_leaves_other_values_alone(value: object) -> None:
    assert json_number(value) is value


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_json_number_non_finite_is_null(value: float) -> None:
    assert json_number(value) is None
