"""JavaScript value semantics the rubric formulas depend on.

Below the rubrics: resolution and the engine read ledger values with them too.

The rubric texts were written against a JavaScript engine, and the same bytes must give the
same verdict (SPEC section 6). Where a formula compares a ledger value that may not be a
number (``spiral > 0`` on a string), tests truthiness (``!r.completed_at``) or interpolates a
value into evidence (``last exit_code=${x}``), the JavaScript meaning is the pre-registered
one. These helpers reproduce exactly those operations over values decoded from JSON
(``None`` is ``null``; :data:`UNDEFINED` stands for a missing key).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Final

from evalkit.js.numbers import format_js_number

__all__ = [
    "JS_WHITESPACE",
    "UNDEFINED",
    "get",
    "is_non_empty_string",
    "is_non_empty_trimmed",
    "is_number",
    "is_plain_object",
    "js_gt0",
    "js_nullish",
    "js_sort_key",
    "js_string",
    "js_to_number",
    "js_trim",
    "js_truthy",
    "strict_equals_zero",
]


class _Undefined:
    """JavaScript ``undefined``: the value of a key that is not there."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:
        return False


UNDEFINED: Final = _Undefined()

# ECMAScript WhiteSpace + LineTerminator (what String.prototype.trim removes). Python's
# str.strip() differs: it keeps U+FEFF and strips U+001C..U+001F.
JS_WHITESPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)", re.ASCII)
_RADIX = re.compile(r"0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)", re.ASCII)


def get(obj: Any, key: str) -> Any:
    """``obj[key]`` for a plain object, :data:`UNDEFINED` when absent or not an object."""
    if obj.__class__ is dict or isinstance(obj, Mapping):  # a dict skips the ABC check
        return obj.get(key, UNDEFINED)
    return UNDEFINED


def is_plain_object(value: Any) -> bool:
    """``v !== null && typeof v === 'object' && !Array.isArray(v)``."""
    return value.__class__ is dict or isinstance(value, Mapping)  # a dict skips the ABC check


def is_number(value: Any) -> bool:
    """``typeof v === 'number'`` (a JSON number; ``bool`` is not one)."""
    c = value.__class__
    if c is int or c is float:  # the common case, decided by the exact class alone
        return True
    return isinstance(value, int | float) and c is not bool


def js_nullish(value: Any) -> bool:
    """``v === null || v === undefined`` (the ``??`` test)."""
    return value is None or value is UNDEFINED


def js_trim(text: str) -> str:
    """``String.prototype.trim``."""
    return text.strip(JS_WHITESPACE)


def is_non_empty_string(value: Any) -> bool:
    """``typeof v === 'string' && v.length > 0``."""
    return isinstance(value, str) and len(value) > 0


def is_non_empty_trimmed(value: Any) -> bool:
    """``typeof v === 'string' && v.trim().length > 0``."""
    return isinstance(value, str) and len(js_trim(value)) > 0


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness (``[]`` and ``{}`` are truthy, ``NaN`` is not)."""
    if value is None or value is UNDEFINED:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    if isinstance(value, str):
        return len(value) > 0
    return True


def _string_to_number(text: str) -> float:
    text = js_trim(text)
    if text == "":
        return 0.0
    if _DECIMAL.fullmatch(text):
        return float(text.replace("Infinity", "inf"))
    if _RADIX.fullmatch(text):
        return float(int(text, 0))
    return math.nan


def js_to_number(value: Any) -> float:
    """``Number(v)`` (ToNumber after ToPrimitive): what a relational comparison applies."""
    if value is UNDEFINED:
        return math.nan
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return _string_to_number(value)
    if isinstance(value, list | tuple):
        return _string_to_number(js_string(value))
    return math.nan  # a plain object: "[object Object]"


def js_gt0(value: Any) -> bool:
    """``v > 0`` with JavaScript coercion (``"2" > 0`` is true, ``undefined > 0`` false)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value > 0
    return js_to_number(value) > 0


def strict_equals_zero(value: Any) -> bool:
    """``v === 0`` (no coercion: ``false`` and ``"0"`` are not 0; ``-0`` is)."""
    c = value.__class__
    if c is int or c is float:  # the common case (a batch asks once per quality gate)
        return value == 0
    return is_number(value) and value == 0


def js_string(value: Any) -> str:
    """``String(v)`` / template-literal interpolation of a JSON value."""
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return format_js_number(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return ",".join("" if js_nullish(item) else js_string(item) for item in value)
    return "[object Object]"


def js_sort_key(text: str) -> bytes:
    """Key that orders strings as JavaScript's ``<`` does (by UTF-16 code units)."""
    return text.encode("utf-16-be", errors="surrogatepass")
