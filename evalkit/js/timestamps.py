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
from itertools import compress
from typing import Any

from evalkit.js._v8_dateparser import Fields, numeral_value, parse_fields, read_milliseconds
from evalkit.js.values import js_string

__all__ = [
    "MAX_TIME_MS",
    "format_iso",
    "parse_iso_z",
    "parse_timestamp",
    "parse_timestamps",
    "timestamp_ms",
    "timestamps_array",
]

#: ECMAScript time values are clipped to +-8.64e15 ms (100,000,000 days around the epoch).
MAX_TIME_MS = 8_640_000_000_000_000
_MAX_TIME_BEFORE_UTC_MS = MAX_TIME_MS + 864_000_000  # V8 DateCache::kMaxTimeBeforeUTCInMs
_MS_PER_DAY = 86_400_000

# The form the ledger writer emits (toISOString) and its near relatives of the ES5 grammar (a
# numeric offset, +HH:MM or +HHMM, or no zone: local time, UTC here): parsed without the state
# machine, because a batch run parses every event timestamp. Anything unusual falls through.
_FAST_ISO = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?"
    r"(?:Z|([+-])([0-9]{2}):?([0-9]{2}))?\Z"
)
# Two forms of V8's legacy grammar whose reading is plain arithmetic for these exact shapes (a
# date-time with a space for the T, and toUTCString's form), parsed without the state machine
# too; a year below 100 gets a century there, so such a year falls through.
_FAST_SPACED = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?Z?\Z"
)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_FAST_UTC_STRING = re.compile(
    rf"(?:Sun|Mon|Tue|Wed|Thu|Fri|Sat), ([0-9]{{2}}) ({'|'.join(_MONTHS)}) ([0-9]{{4}}) "
    r"([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT\Z"
)
_FRACTION_SCALE = (0, 100, 10, 1)
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
    t = _fast_forms_ms(value)
    if t is not None:
        return t
    fields = parse_fields(value)
    if fields is None:
        return None
    return _to_time_value(fields)


def _fast_forms_ms(text: str) -> float | None:
    """:func:`parse_timestamp` of ``text`` for the shapes read without V8's state machine.

    ``None`` (the state machine decides) unless ``text`` has one of those shapes and its
    fields are in range.

    In range, both grammars read these shapes alike: month 1..12, day 1..31 (rolling over a
    short month), hour <= 23, minute and second <= 59, an offset's hour <= 23 and minute <= 59,
    and for the legacy shapes a year of at least 100. No zone is local time, UTC here.
    """
    m = _FAST_ISO.match(text)
    if m is not None:
        date, hh, mm, ss, frac, sign, oh, om = m.groups()
        t = _clock_ms(_fast_days(date), hh, mm, ss, frac)
        if t is None or sign is None:
            return t
        offset_h, offset_m = int(oh), int(om)
        if offset_h > 23 or offset_m > 59:
            return None
        offset_ms = offset_h * 3_600_000 + offset_m * 60_000
        return t - offset_ms if sign == "+" else t + offset_ms
    m = _FAST_SPACED.match(text)
    if m is not None:
        date, hh, mm, ss, frac = m.groups()
        return _clock_ms(_fast_days(date), hh, mm, ss, frac) if int(date[:4]) >= 100 else None
    m = _FAST_UTC_STRING.match(text)
    if m is not None:
        day, month, year, hh, mm, ss = m.groups()
        if not 1 <= int(day) <= 31 or int(year) < 100:
            return None
        days = _days_from_civil(int(year), _MONTHS.index(month) + 1, 1) + int(day) - 1
        return _clock_ms(days, hh, mm, ss, None)
    return None


def _clock_ms(days: int | None, hh: str, mm: str, ss: str, frac: str | None) -> float | None:
    """Epoch ms of ``days`` (None: out of range) at ``hh:mm:ss[.frac]``, else None.

    None unless the clock is in range (hour <= 23, minute and second <= 59); a fraction is
    read as V8 reads it.
    """
    hour, minute, second = int(hh), int(mm), int(ss)
    if days is None or hour > 23 or minute > 59 or second > 59:
        return None
    t = days * _MS_PER_DAY + hour * 3_600_000 + minute * 60_000 + second * 1000
    if frac:
        n = len(frac)
        t += int(frac) * _FRACTION_SCALE[n] if n <= 3 else read_milliseconds(numeral_value(frac), n)
    return float(t)


def timestamp_ms(value: Any) -> float | None:
    """``Date.parse(value)`` of a ledger value in epoch ms, ``None`` for NaN.

    An array is stringified first, as ``Date.parse`` does (``["2026-09-19"]`` is a date);
    numbers and other non-strings are not timestamps.
    """
    if isinstance(value, list):
        value = js_string(value)
    return parse_timestamp(value)


def parse_timestamps(values: Sequence[Any]) -> list[float | None]:
    """:func:`timestamp_ms` of many values at once, identical to calling it on each."""
    return [None if t != t else t for t in timestamps_array(values).tolist()]  # NaN: None


def timestamps_array(values: Sequence[Any]) -> Any:
    """:func:`timestamp_ms` of many values as a float64 numpy array, NaN where it is ``None``.

    The writer's own form (``toISOString``: ``YYYY-MM-DDTHH:MM:SS.mmmZ``, 24 ASCII characters)
    is parsed in bulk with numpy by the very arithmetic of :func:`parse_timestamp`'s fast path
    (month 1..12, day 1..31 rolling over a short month, hour <= 23, minute and second <= 59);
    anything else, and anything that fast path would hand on, goes through the JavaScript
    ``Date.parse`` port one by one.
    """
    import numpy as np  # deferred: numpy is only needed by the batch paths

    out = np.full(len(values), np.nan)
    try:
        _bulk_writer_form(out, values)
    except TypeError:  # a value that is not a string (its length or its text)
        _bulk_writer_form(out, [v if v.__class__ is str else "" for v in values])
    known: dict[str, float | None] = {}  # a ledger may repeat an odd timestamp many times
    for i in np.flatnonzero(np.isnan(out)).tolist():
        value = values[i]
        if value.__class__ is str:
            t = known[value] if value in known else known.setdefault(value, timestamp_ms(value))
        else:
            t = timestamp_ms(value)
        if t is not None:
            out[i] = t
    return out


def _bulk_writer_form(out: Any, texts: Sequence[Any]) -> None:
    """Set ``out[i]`` for every ``texts[i]`` in the writer's form (:func:`timestamps_array`).

    Raises ``TypeError``, before setting anything, when a text is not a string.
    """
    import numpy as np  # deferred: numpy is only needed by the batch paths

    writer_length = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) == 24
    at = np.flatnonzero(writer_length)
    picked = texts if len(at) == len(texts) else list(compress(texts, writer_length.tolist()))
    if not picked:
        return
    try:
        data = "".join(picked).encode("ascii")
    except UnicodeEncodeError:  # a non-ASCII 24-character string: not the writer's form
        keep = [i for i, text in enumerate(picked) if text.isascii()]
        at, picked = at[keep], [picked[i] for i in keep]
        data = "".join(picked).encode("ascii")
    ms, ok = _bulk_iso_ms(np.frombuffer(data, dtype=np.uint8).reshape(-1, 24))
    out[at[ok]] = ms[ok]


_DIGITS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22)
_SEPARATORS = (4, 7, 10, 13, 16, 19, 23)
_SEPARATOR_BYTES = b"--T::.Z"


def _bulk_iso_ms(b: Any) -> tuple[Any, Any]:
    """(epoch ms, ok) of the rows of ``b`` (n x 24 bytes) in ``YYYY-MM-DDTHH:MM:SS.mmmZ`` form.

    Computed as :func:`parse_timestamp`'s fast path computes them; ``ok`` is false for the
    rows its arithmetic does not cover (they go through the one-by-one parser).
    """
    import numpy as np  # deferred: numpy is only needed by the batch paths

    ok = (b[:, _SEPARATORS] == np.frombuffer(_SEPARATOR_BYTES, dtype=np.uint8)).all(axis=1)
    digits = b[:, _DIGITS] - np.uint8(48)  # a byte below "0" wraps around to above 9
    ok &= (digits <= 9).all(axis=1)
    d = digits.astype(np.int64)

    def field(first: int, count: int) -> Any:
        value = d[:, first]
        for k in range(first + 1, first + count):
            value = value * 10 + d[:, k]
        return value

    year, month, day = field(0, 4), field(4, 2), field(6, 2)
    hour, minute, second, milli = field(8, 2), field(10, 2), field(12, 2), field(14, 3)
    ok &= (month >= 1) & (month <= 12) & (day >= 1) & (day <= 31)
    ok &= (hour <= 23) & (minute <= 59) & (second <= 59)
    # _days_from_civil(year, month, 1) + day - 1, vectorized (day overflow rolls on)
    y = year - (month <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    mp = month + np.where(month > 2, -3, 9)
    doy = (153 * mp + 2) // 5
    days = era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468 + day - 1
    ms = days * _MS_PER_DAY + hour * 3_600_000 + minute * 60_000 + second * 1000 + milli
    return ms.astype(np.float64), ok


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
