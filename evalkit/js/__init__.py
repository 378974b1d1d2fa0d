"""JavaScript semantics the reference engine's verdicts depend on: ``Date.parse``, numbers, values."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily (_LAZY); these imports give them their types
    from evalkit.js.numbers import (
        MAX_SAFE_INTEGER,
        JSONLineError,
        decode_json_value,
        format_js_number,
        is_js_number,
        js_round,
        json_number,
        loads_json_line,
    )
    from evalkit.js.timestamps import (
        MAX_TIME_MS,
        format_iso,
        parse_iso_z,
        parse_timestamp,
        parse_timestamps,
        timestamp_ms,
        timestamps_array,
    )
    from evalkit.js.values import (
        JS_WHITESPACE,
        UNDEFINED,
        get,
        is_non_empty_string,
        is_non_empty_trimmed,
        is_number,
        is_plain_object,
        js_gt0,
        js_nullish,
        js_sort_key,
        js_string,
        js_to_number,
        js_trim,
        js_truthy,
        strict_equals_zero,
    )

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "JSONLineError": "evalkit.js.numbers",
    "MAX_SAFE_INTEGER": "evalkit.js.numbers",
    "decode_json_value": "evalkit.js.numbers",
    "format_js_number": "evalkit.js.numbers",
    "is_js_number": "evalkit.js.numbers",
    "js_round": "evalkit.js.numbers",
    "json_number": "evalkit.js.numbers",
    "loads_json_line": "evalkit.js.numbers",
    "MAX_TIME_MS": "evalkit.js.timestamps",
    "format_iso": "evalkit.js.timestamps",
    "parse_iso_z": "evalkit.js.timestamps",
    "parse_timestamp": "evalkit.js.timestamps",
    "parse_timestamps": "evalkit.js.timestamps",
    "timestamp_ms": "evalkit.js.timestamps",
    "timestamps_array": "evalkit.js.timestamps",
    "JS_WHITESPACE": "evalkit.js.values",
    "UNDEFINED": "evalkit.js.values",
    "get": "evalkit.js.values",
    "is_non_empty_string": "evalkit.js.values",
    "is_non_empty_trimmed": "evalkit.js.values",
    "is_number": "evalkit.js.values",
    "is_plain_object": "evalkit.js.values",
    "js_gt0": "evalkit.js.values",
    "js_nullish": "evalkit.js.values",
    "js_sort_key": "evalkit.js.values",
    "js_string": "evalkit.js.values",
    "js_to_number": "evalkit.js.values",
    "js_trim": "evalkit.js.values",
    "js_truthy": "evalkit.js.values",
    "strict_equals_zero": "evalkit.js.values",
}

__all__ = [
    "JS_WHITESPACE",
    "MAX_SAFE_INTEGER",
    "MAX_TIME_MS",
    "UNDEFINED",
    "JSONLineError",
    "decode_json_value",
    "format_iso",
    "format_js_number",
    "get",
    "is_js_number",
    "is_non_empty_string",
    "is_non_empty_trimmed",
    "is_number",
    "is_plain_object",
    "js_gt0",
    "js_nullish",
    "js_round",
    "js_sort_key",
    "js_string",
    "js_to_number",
    "js_trim",
    "js_truthy",
    "json_number",
    "loads_json_line",
    "parse_iso_z",
    "parse_timestamp",
    "parse_timestamps",
    "strict_equals_zero",
    "timestamp_ms",
    "timestamps_array",
]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
