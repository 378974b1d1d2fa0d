"""Timestamps parsed exactly as the reference engine's JavaScript ``Date.parse`` (V8) parses them.

The reference engine ran on Node with ``TZ=UTC``, so a date-time without an offset is UTC here.
``parse_timestamp`` follows V8's ``DateParser`` (``src/date/dateparser-inl.h``: first the ES5
ISO-8601 grammar, then the legacy "Safari-compatible" fallback for whatever the ISO grammar did
not consume) and ``ParseDateTimeString`` (``MakeDay``/``MakeTime``, the +-8.64e15 ms clip).
The algorithm is re-implemented from V8's documented state machine; the tests pin every form
SPEC section 6 lists with independently computed epochs.

A non-string is never a timestamp here (SPEC section 6: "any JSON number ... unknown"), although
JavaScript would first convert it with ``String(value)``; :func:`timestamp_ms` reads a ledger
value (an array is stringified first, as ``Date.parse`` does) and :func:`parse_timestamps`
reads many at once, in bulk, with the same answers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from evalkit._v8_dateparser import Fields, numeral_value, parse_fields, read_milliseconds
from evalkit.jsvalues import js_string

__all__ = [
    "MAX_TIME_MS",
    "format_iso",
    "parse_iso_z",
    "parse_timestamp",
    "parse_timestamps",
    "timestamp_ms",
]

#: ECMAScript time values are clipped to +-8.64e15 ms (100,000,000 days around the epoch).
MAX_TIME_MS = 8_640_000_000_000_000
_MAX_TIME_BEFORE_UTC_MS = MAX_TIME_MS + 864_000_000  # V8 DateCache::kMaxTimeBeforeUTCInMs
_MS_PER_DAY = 86_400_000

# The form the ledger writer emits (toISOString) and its near relatives: parsed without the
# state machine, because a batch run parses every event timestamp. Anything unusual falls through.
_FAST_ISO = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?Z\Z"
)
_FRACTION_SCALE = (0, 100, 10, 1)
# toISOString's exact shape with a valid month, day and time: what pandas parses in bulk.
_ISO_MS = (
    r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z"
)
# The reference's isIso8601 shape (events-schema.mjs): what may date an event source.
_STRICT_ISO_Z = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,3}))?Z\Z"
)


@lru_cache(maxsize=8192)
def _fast_days(date: str) -> int | None:
    """Days since the epoch of a ``YYYY-MM-DD`` with month 1..12 and day 1..31, else None."""
    month = int(date[5:7])
    day = int(date[8:10])
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return _days_from_civil(int(date[:4]), month, 1) + day - 1  # day overflow rolls on


def parse_timestamp(value: object) -> float | None:
    """Return epoch milliseconds as ``Date.parse(value)`` gives them (TZ=UTC), or ``None``.

    ``None`` stands for JavaScript's NaN: unparseable strings, and every non-string (numbers,
    booleans, ``None``, containers). Examples: ``"2026-09-19T08:00:00.000Z"``, ``"2026-09-19"``,
    ``"2026"``, ``"+002026-09-19T08:00:00Z"``, ``"2026-02-30"`` (2 March), ``"2026-9-19"``,
    ``"Sat, 19 Sep 2026 08:00:00 GMT"`` parse; ``" 2026-09-19"``, ``"2026-9-19T08:00:00Z"``,
    ``"2026-09-19T08Z"``, ``"2026-09-19T08:00:00 Z"``, ``"...+00"`` do not.
    """
    if not isinstance(value, str):
        return None
    m = _FAST_ISO.match(value)
    if m is not None:
        date, hh, mm, ss, frac = m.groups()
        days = _fast_days(date)
        hour, minute, second = int(hh), int(mm), int(ss)
        if days is not None and hour <= 23 and minute <= 59 and second <= 59:
            t = days * _MS_PER_DAY + hour * 3_600_000 + minute * 60_000 + second * 1000
            if frac:
                n = len(frac)
                t += (
                    int(frac) * _FRACTION_SCALE[n]
                    if n <= 3
                    else read_milliseconds(numeral_value(frac), n)
                )
            return float(t)
    fields = parse_fields(value)
    if fields is None:
        return None
    return _to_time_value(fields)


def timestamp_ms(value: Any) -> float | None:
    """``Date.parse(value)`` of a ledger value in epoch ms, ``None`` for NaN.

    An array is stringified first, as ``Date.parse`` does (``["2026-09-19"]`` is a date);
    numbers and other non-strings are not timestamps.
    """
    if isinstance(value, list):
        value = js_string(value)
    return parse_timestamp(value)


def parse_timestamps(values: Sequence[Any]) -> list[float | None]:
    """:func:`timestamp_ms` of many values at once, identical to calling it on each.

    The writer's own form (``toISOString``: ``YYYY-MM-DDTHH:MM:SS.mmmZ``) is parsed in bulk by
    pandas; anything else, and anything pandas refuses (day 31 of a 30-day month, hour 24,
    years out of its range), goes through the JavaScript ``Date.parse`` port one by one.
    """
    # deferred: numpy and pandas are heavy, and only the batch paths parse in bulk
    import numpy as np
    import pandas as pd

    out: list[float | None] = [None] * len(values)
    if not values:
        return out
    texts = pd.Series([v if isinstance(v, str) else "" for v in values], dtype=object)
    strict = texts.str.fullmatch(_ISO_MS).to_numpy(dtype=bool)
    if strict.any():
        # pandas' ISO-8601 parser (C); the regex above already pinned the exact shape, so
        # only calendar validity (day 31 of a 30-day month, ...) is left for it to refuse.
        parsed = pd.to_datetime(texts[strict], format="ISO8601", errors="coerce", utc=True)
        ok = parsed.notna().to_numpy()
        ms = parsed.dt.tz_localize(None).to_numpy(dtype="datetime64[ms]").astype(np.int64)
        for pos, good, value in zip(
            np.flatnonzero(strict).tolist(), ok.tolist(), ms.tolist(), strict=True
        ):
            if good:
                out[pos] = float(value)
    for pos, value in enumerate(values):
        if out[pos] is None:
            out[pos] = timestamp_ms(value)
    return out


def parse_iso_z(value: object) -> float | None:
    """Epoch ms of a strict ``YYYY-MM-DDTHH:MM:SS[.sss]Z`` string that ``Date.parse`` accepts.

    The reference's ``isIso8601(v) && Date.parse(v)``, used to date rotated event sources:
    other forms (offsets, no zone, lower-case ``z``) do not date a source even when
    :func:`parse_timestamp` reads them.
    """
    if not isinstance(value, str) or _STRICT_ISO_Z.match(value) is None:
        return None
    return parse_timestamp(value)  # the strict shape is a subset of its fast path


def format_iso(ms: float | int) -> str:
    """Format epoch milliseconds as JavaScript's ``Date.prototype.toISOString`` does.

    Years 0..9999 print with four digits, others as a signed six-digit expanded year. Raises
    ``ValueError`` for NaN, infinities and values outside the +-8.64e15 ms range (JS throws a
    RangeError there).
    """
    if isinstance(ms, bool) or not isinstance(ms, (int, float)):
        raise TypeError(f"format_iso expects a number of milliseconds, got {type(ms).__name__}")
    if not math.isfinite(ms) or abs(ms) > MAX_TIME_MS:
        raise ValueError(f"invalid time value: {ms!r}")
    t = int(ms)  # TimeClip truncates toward zero
    days, rem = divmod(t, _MS_PER_DAY)
    year, month, day = _civil_from_days(days)
    hour, rem = divmod(rem, 3_600_000)
    minute, rem = divmod(rem, 60_000)
    second, milli = divmod(rem, 1000)
    ytext = f"{year:04d}" if 0 <= year <= 9999 else ("-" if year < 0 else "+") + f"{abs(year):06d}"
    return f"{ytext}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{milli:03d}Z"


# --------------------------------------------------------------------------------------------
# Calendar arithmetic (proleptic Gregorian, as ECMAScript's MakeDay)
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)  # ledgers revisit the same few dates; keeps batch parsing cheap
def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 for a proleptic Gregorian date (month 1..12, any day >= 1)."""
    y = year - (1 if month <= 2 else 0)
    era = y // 400
    yoe = y - era * 400
    mp = month + (-3 if month > 2 else 9)
    doy = (153 * mp + 2) // 5 + day - 1
    return era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return (y + (1 if m <= 2 else 0), m, d)


def _make_time_value(
    year: int, month0: int, day: int, hour: int, minute: int, second: int, ms: int, offset_s: int
) -> int:
    # Day overflow (2026-02-30) rolls forward exactly as MakeDay's "day - 1 + first of month".
    days = _days_from_civil(year, month0 + 1, 1) + day - 1
    return (
        days * _MS_PER_DAY
        + hour * 3_600_000
        + minute * 60_000
        + second * 1000
        + ms
        - offset_s * 1000
    )


def _to_time_value(f: Fields) -> float | None:
    # ParseDateTimeString: MakeDay rejects years beyond +-1,000,000 before anything else.
    if not -1_000_000 <= f.year <= 1_000_000:
        return None
    t = _make_time_value(f.year, f.month0, f.day, f.hour, f.minute, f.second, f.ms, 0)
    if f.offset_s is None:
        if abs(t) > _MAX_TIME_BEFORE_UTC_MS:
            return None
        # local -> UTC is the identity under TZ=UTC
    else:
        t -= f.offset_s * 1000
        if abs(t) > MAX_TIME_MS:
            return None
    if abs(t) > MAX_TIME_MS:  # TimeClip
        return None
    return float(t)
