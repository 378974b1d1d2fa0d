"""JavaScript number semantics: ``String(x)``, ``Math.round`` and ``JSON.parse`` of one line.

The reference engine is JavaScript. Evidence strings print numbers as ``String(x)`` does, a
derived duration is rounded with ``Math.round``, and every ledger line went through
``JSON.parse``. Reproducing the three here is what makes the same bytes give the same verdict.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = [
    "MAX_SAFE_INTEGER",
    "JSONLineError",
    "decode_json_value",
    "format_js_number",
    "is_js_number",
    "js_round",
    "json_number",
    "loads_json_line",
]

#: 2**53: every integer up to this magnitude is exactly a double.
MAX_SAFE_INTEGER = 2**53


class JSONLineError(ValueError):
    """A line that ``JSON.parse`` would reject; the message says why."""


def is_js_number(value: object) -> bool:
    """True for a value JavaScript would see as a number (``int``/``float``, never ``bool``)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _to_double(x: int | float) -> float:
    if isinstance(x, float):
        return x
    try:
        return float(x)
    except OverflowError:  # an int beyond double range is +-Infinity, as in JS
        return math.inf if x > 0 else -math.inf


def format_js_number(x: int | float | bool) -> str:
    """Return ``String(x)`` as JavaScript prints a number.

    ``1`` not ``1.0``; ``0.1``; ``1e+21``; ``1.5e-7``; ``-0`` prints ``0``; integers beyond 2**53
    print as the nearest double does (``12345678901234567890`` -> ``12345678901234567000``);
    ``NaN``, ``Infinity``, ``-Infinity``. Booleans print ``true``/``false`` like ``String``.
    """
    if x.__class__ is int and -MAX_SAFE_INTEGER <= x <= MAX_SAFE_INTEGER:
        return str(x)  # an exact double below 1e21: its digits (the common case, a count)
    if isinstance(x, bool):
        return "true" if x else "false"
    if not isinstance(x, (int, float)):
        raise TypeError(f"format_js_number expects a number, got {type(x).__name__}")
    d = _to_double(x)
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        return "0"  # also -0: String(-0) === "0"
    sign = "-" if d < 0 else ""
    # Python's repr and ECMAScript Number::toString both emit the shortest digit string that
    # round-trips (ties to the closer value), so only the layout differs.
    mantissa, _, exp_text = repr(abs(d)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    all_digits = int_part + frac_part
    stripped = all_digits.lstrip("0")
    # n: where the decimal point sits relative to the significant digits (ECMA-262 6.1.6.1.20)
    n = len(int_part) + int(exp_text or 0) - (len(all_digits) - len(stripped))
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        exp = ("+" if e >= 0 else "-") + str(abs(e))
        body = (digits if k == 1 else digits[0] + "." + digits[1:]) + "e" + exp
    return sign + body


def json_number(x: Any) -> Any:
    """A number as ``JSON.stringify`` writes it and ``JSON.parse`` reads it back; others as is.

    NaN and +-Infinity have no JSON form: ``None`` (``null``). An integral double below 1e21
    is the ``int`` its JavaScript digits spell: ``1.2345678901234568e20`` is written
    ``123456789012345680000`` (the same double, shortest digits padded with zeros), not
    ``123456789012345683968``, so a record reads back equal to the reference's.
    """
    if not isinstance(x, float):
        return x
    if not math.isfinite(x):
        return None
    if x.is_integer() and abs(x) < 1e21:
        return int(format_js_number(x))
    return x


def js_round(x: int | float) -> int | float:
    """``Math.round``: the nearest integer, halves toward +infinity (``-2.5`` -> ``-2``).

    Finite input gives an ``int`` (``-0`` becomes ``0``); NaN and +-Infinity come back unchanged.
    Not Python's ``round``, which rounds halves to even.
    """
    if isinstance(x, int) and not isinstance(x, bool):
        return x
    d = float(x)
    if not math.isfinite(d):
        return d
    # ceil, then step down when that overshot by more than a half: exact for every double
    # (floor(x + 0.5) is not: 0.49999999999999994 + 0.5 rounds up to 1.0 in binary).
    r = math.ceil(d)
    if r - 0.5 > d:
        r -= 1
    return int(r)


def _parse_constant(name: str) -> Any:
    raise JSONLineError(f"{name} is not valid JSON")


def _parse_number_int(text: str) -> int | float:
    # JSON.parse gives a double. Keep an int when the double is the same integer (|n| <= 2**53,
    # exact); beyond that return the double, so 12345678901234567890 behaves as JS's value.
    d = float(text)  # correctly rounded; never raises, an overflowing literal becomes inf
    if abs(d) <= MAX_SAFE_INTEGER:
        return int(d)  # also maps -0 to 0 (JSON.stringify(-0) === "0")
    return d


def _parse_number_float(text: str) -> int | float:
    d = float(text)  # 1e400 -> inf, as JS gives Infinity
    if math.isfinite(d) and d.is_integer() and abs(d) <= MAX_SAFE_INTEGER:
        return int(d)  # 1.0 and 1e2 are the integers 1 and 100 in JS
    return d


_DECODER = json.JSONDecoder(
    parse_int=_parse_number_int,
    parse_float=_parse_number_float,
    parse_constant=_parse_constant,
)
_RAW_DECODE = _DECODER.raw_decode


def loads_json_line(text: str) -> Any:
    """Parse one JSON text with ``JSON.parse`` semantics, or raise :class:`JSONLineError`.

    Differences from ``json.loads`` that matter for ledgers: ``NaN``/``Infinity``/``-Infinity``
    literals are rejected; numbers are JS doubles (out-of-range literals become +-inf, integers
    beyond 2**53 become the nearest float, integral numbers such as ``1.0`` are ``int``);
    duplicate keys keep the last value (as both do). Leading/trailing JSON whitespace
    (space, tab, CR, LF) is allowed, nothing else (a BOM is an error, as in ``JSON.parse``).
    """
    if not isinstance(text, str):
        raise JSONLineError(f"expected str, got {type(text).__name__}")
    start = _skip_ws(text, 0)
    end = len(text)
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1
    return decode_json_value(text[start:end] if start or end != len(text) else text)


def decode_json_value(text: str) -> Any:
    """:func:`loads_json_line` for a ``str`` already stripped of surrounding whitespace.

    The hot path of ledger reading: one C-level ``raw_decode``, no whitespace scan. Raises
    :class:`JSONLineError` exactly where ``JSON.parse`` throws.
    """
    try:
        value, end = _RAW_DECODE(text)
    except JSONLineError:
        raise
    except json.JSONDecodeError as exc:
        raise JSONLineError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        # JSON.parse (V8) handles deep nesting; Python's decoder recurses. Said, not hidden.
        raise JSONLineError("JSON nested too deeply for this reader") from None
    if end != len(text):
        raise JSONLineError(f"invalid JSON: extra data at column {end + 1}")
    return value


def _skip_ws(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos] in " \t\r\n":
        pos += 1
    return pos
