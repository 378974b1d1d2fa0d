"""parse_timestamp = JavaScript Date.parse (V8, TZ=UTC); format_iso = Date.prototype.toISOString.

Expected epochs are computed independently with ``datetime`` (the proleptic Gregorian calendar
ECMAScript uses); each comment says why that instant is the right one. Forms beyond SPEC
section 6 were checked against Node v20.20 ``Date.parse`` with ``TZ=UTC`` (values in comments).
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.js import timestamps as timestamps
from evalkit.js._v8_dateparser import parse_fields
from evalkit.js.timestamps import MAX_TIME_MS, format_iso, parse_timestamp


def ms(*args: int, offset_minutes: int = 0) -> float:
    """Epoch ms of a UTC wall-clock time, minus an offset (a +02:00 time is 2 h earlier in UTC)."""
    dt = datetime(*args, tzinfo=UTC) - timedelta(minutes=offset_minutes)
    return float(round((dt - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() * 1000))


T0800 = ms(2026, 9, 19, 8, 0, 0)

ACCEPTED = [
    # the writer's own toISOString form
    ("2026-09-19T08:00:00.000Z", T0800),
    # fractional seconds of any length: truncated (never rounded) to milliseconds
    ("2026-09-19T08:00:00.5Z", T0800 + 500),
    ("2026-09-19T08:00:00.12Z", T0800 + 120),
    ("2026-09-19T08:00:00.1239Z", T0800 + 123),
    ("2026-09-19T08:00:00.123999999Z", T0800 + 123),
    ("2026-09-19T08:00:00.000999Z", T0800),
    # offsets: +02:00 and the +0200 extension both mean two hours ahead of UTC
    ("2026-09-19T10:00:00+02:00", T0800),
    ("2026-09-19T10:00:00+0200", T0800),
    ("2026-09-19T03:00:00.000-05:00", T0800),
    ("2026-09-19T10:00:00.000+02:00", T0800),
    # lower-case t and z
    ("2026-09-19t08:00:00z", T0800),
    # no zone on a date-time: local time, and the reference ran with TZ=UTC
    ("2026-09-19T08:00:00", T0800),
    ("2026-09-19T08:00:00.250", T0800 + 250),
    # a space instead of T falls to the legacy parser, still local (= UTC) time
    ("2026-09-19 08:00:00", T0800),
    # minutes without seconds
    ("2026-09-19T08:00Z", T0800),
    ("2026-09-19T08:00", T0800),
    # date only: UTC midnight (ES spec: date-only forms are UTC)
    ("2026-09-19", ms(2026, 9, 19)),
    # year only, year-month: the first day of it
    ("2026", ms(2026, 1, 1)),
    ("2026-09", ms(2026, 9, 1)),
    # expanded six-digit year
    ("+002026-09-19T08:00:00Z", T0800),
    ("-000001-01-01T00:00:00Z", -62198755200000.0),  # year -1 = 2 BC; Node gives -62198755200000
    # hour 24:00 is midnight at the end of the day
    ("2026-09-19T24:00:00Z", ms(2026, 9, 20)),
    ("2026-09-19T24:00Z", ms(2026, 9, 20)),
    # day overflow rolls into the next month: 2026 is not a leap year, 30 Feb = 2 Mar
    ("2026-02-30", ms(2026, 3, 2)),
    ("2026-04-31T08:00:00Z", ms(2026, 5, 1, 8)),
    # RFC 2822 / toUTCString form
    ("Sat, 19 Sep 2026 08:00:00 GMT", T0800),
    ("Sat, 19 Sep 2026 10:00:00 +0200", T0800),
    ("Sat Sep 19 2026 10:00:00 GMT+0200 (Central European Summer Time)", T0800),
    # unpadded date only: legacy parser, local (= UTC) midnight
    ("2026-9-19", ms(2026, 9, 19)),
    # legacy forms V8 accepts (Node v20.20 values in parentheses)
    ("2026/09/19 08:00:00", T0800),  # (1789804800000)
    ("Sep 19, 2026", ms(2026, 9, 19)),  # (1789776000000)
    ("9/19/2026", ms(2026, 9, 19)),  # (1789776000000)
    ("2026-09-19 08:00 PM", ms(2026, 9, 19, 20)),  # (1789848000000)
    # a leading space before a *date only* string goes to the legacy parser, which V8 accepts
    # (Node v20.20: Date.parse(" 2026-09-19") === 1789776000000)
    (" 2026-09-19", ms(2026, 9, 19)),
    # a lone number is month 9 of year "1" -> 2001 (V8 pads missing components before ordering)
    ("9", ms(2001, 9, 1)),  # (999302400000)
    ("99", ms(1999, 1, 1)),  # two-digit years 50..99 are 19xx (915148800000)
    # the last representable instant
    ("+275760-09-13T00:00:00.000Z", float(MAX_TIME_MS)),
]

REJECTED = [
    # a leading space before a date-time: the legacy parser meets "T" after a number (Node NaN)
    " 2026-09-19T08:00:00.000Z",
    " 2026-09-19T08:00:00Z",
    # unpadded month together with a time
    "2026-9-19T08:00:00Z",
    # hour without minutes
    "2026-09-19T08Z",
    # a space before Z
    "2026-09-19T08:00:00 Z",
    # a two-digit offset
    "2026-09-19T08:00:00+00",
    "2026-09-19T08:00:00+02",
    # trailing garbage after a complete ISO string
    "2026-09-19T08:00:00Z ",
    "2026-09-19T08:00:00Z (UTC)",  # the ISO grammar ends at Z; anything after it is invalid
    # out-of-range fields
    "2026-13-01T00:00:00Z",
    "2026-09-19T25:00:00Z",
    "2026-09-19T24:01:00Z",
    "2026-09-19T08:60:00Z",
    "-000000-01-01T00:00:00Z",  # year minus zero is invalid
    "+275760-09-13T00:00:00.001Z",  # one ms past the time-value range
    # not dates at all
    "",
    "not-a-time",
    "yesterday evening",
    "T08:00:00Z",
]


@pytest.mark.parametrize(("text", "expected"), ACCEPTED)
def test_accepted_forms(text: str, expected: float) -> None:
    got = parse_timestamp(text)
    assert got == expected, f"{text!r}: {got} != {expected}"
    assert isinstance(got, float)


@pytest.mark.parametrize("text", REJECTED)
def test_rejected_forms(text: str) -> None:
    assert parse_timestamp(text) is None


@pytest.mark.parametrize(
    "value",
    [
        1789804800000,  # an epoch number is not a timestamp (SPEC section 6)
        2026,  # even one whose String() would parse
        1789804800000.0,
        True,
        False,
        None,
        ["2026-09-19"],
        {"timestamp": "2026-09-19"},
        b"2026-09-19",
    ],
)
def test_non_strings_are_unknown(value: object) -> None:
    assert parse_timestamp(value) is None


def test_fast_path_and_state_machine_agree() -> None:
    # The toISOString form has a fast path; an out-of-range field must still fall through to
    # the full parser (which rejects it) rather than be computed by the fast path.
    assert parse_timestamp("2026-09-19T08:00:00.999Z") == T0800 + 999
    assert parse_timestamp("2026-09-19T23:59:59.999Z") == ms(2026, 9, 20) - 1
    assert parse_timestamp("2026-09-31T08:00:00Z") == ms(2026, 10, 1, 8)  # day 31 of Sept rolls
    assert parse_timestamp("2026-00-19T08:00:00Z") is None


def _state_machine(text: str) -> float | None:
    """The V8 port alone, without the fast shapes."""
    fields = parse_fields(text)
    return None if fields is None else timestamps._to_time_value(fields)


def _2(lo: int, hi: int) -> st.SearchStrategy[str]:
    """A 2-digit field, in range (lo..hi) about half the time, else anything from 00 to 99."""
    return st.one_of(st.integers(lo, hi), st.integers(0, 99)).map("{:02d}".format)


_FRACTION = st.none() | st.text("0123456789", min_size=1, max_size=11)
_WEEKDAY = st.sampled_from(["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sab", "sat"])
_MONTH = st.sampled_from([*timestamps._MONTHS, "Sept", "jan", "Foo"])


# built once, not on every draw (a strategy built anew is validated anew each time)
_YEAR = st.one_of(st.integers(1900, 2100), st.integers(0, 9999))
_DAY, _MONTH_NUMBER, _HOUR, _SIXTY = _2(1, 31), _2(1, 12), _2(0, 23), _2(0, 59)
_SHAPE = st.sampled_from(["iso", "spaced", "utc"])
_ZONE = st.sampled_from(["Z", "", "+", "-", "z"])
_COLON = st.sampled_from([":", ""])
_SPACED_ZONE = st.sampled_from(["Z", "", " Z", "GMT"])


@st.composite
def _fast_shaped(draw: st.DrawFn) -> str:
    """Strings in (or next to) the shapes read without the state machine, every field drawn
    in and out of range: 2-digit fields 00..99, years 0000..9999, fractions of 1..11 digits."""
    year = f"{draw(_YEAR):04d}"
    day = draw(_DAY)
    date = f"{year}-{draw(_MONTH_NUMBER)}-{day}"
    clock = f"{draw(_HOUR)}:{draw(_SIXTY)}:{draw(_SIXTY)}"
    fraction = draw(_FRACTION)
    clock += "" if fraction is None else "." + fraction
    shape = draw(_SHAPE)
    if shape == "iso":
        zone = draw(_ZONE)
        if zone in "+-" and zone:
            zone += draw(_HOUR) + draw(_COLON) + draw(_SIXTY)
        return f"{date}T{clock}{zone}"
    if shape == "spaced":
        return f"{date} {clock}{draw(_SPACED_ZONE)}"
    return f"{draw(_WEEKDAY)}, {day} {draw(_MONTH)} {year} {clock} GMT"


@settings(max_examples=4000, deadline=None)
@given(_fast_shaped())
@pytest.mark.slow
def test_fast_shapes_read_as_the_state_machine_reads_them(text: str) -> None:
    """The ES5 ISO shapes (Z, a numeric offset, no zone), the date-time with a space and
    toUTCString's form are computed without V8's state machine: the same instant, or the same
    NaN, as the state machine gives for every field in and out of range."""
    assert parse_timestamp(text) == _state_machine(text), text


@pytest.mark.parametrize(
    "text",
    [
        "2026-09-19T08:00:00+02:00",
        "2026-09-19T08:00:00.5-0230",
        "2026-09-19T08:00:00",
        "2026-09-19 08:00:00.123456Z",
        "2026-02-31 23:59:59",
        "Sat, 19 Sep 2026 08:00:00 GMT",
        "Tue, 31 Feb 2026 08:00:00 GMT",
    ],
)
def test_fast_shapes_are_taken(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """These shapes never reach the state machine (and read as it does: test above)."""
    expected = _state_machine(text)

    def state_machine_called(value: str) -> None:
        raise AssertionError(f"the state machine was asked for {value!r}")

    monkeypatch.setattr(timestamps, "parse_fields", state_machine_called)
    assert parse_timestamp(text) == expected is not None


def test_fraction_quirk_matches_v8() -> None:
    # V8 keeps nine significant digits but caps the length at nine, so a leading zero followed
    # by ten digits reads as .123 (Node v20.20: Date.parse("2026-09-19T08:00:00.0123456789Z")
    # === 1789804800123). Reproduced on purpose: same bytes, same verdict.
    assert parse_timestamp("2026-09-19T08:00:00.0123456789Z") == T0800 + 123


def test_nul_ends_the_string_as_in_v8() -> None:
    # V8's reader treats U+0000 as end of input (Node: Date.parse("2026-09-19\0x") is valid)
    assert parse_timestamp("2026-09-19\x00garbage") == ms(2026, 9, 19)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (T0800 + 123, "2026-09-19T08:00:00.123Z"),
        (-62198755200000, "-000001-01-01T00:00:00.000Z"),
        (253402300800000, "+010000-01-01T00:00:00.000Z"),
        (MAX_TIME_MS, "+275760-09-13T00:00:00.000Z"),
        (-MAX_TIME_MS, "-271821-04-20T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
    ],
)
def test_format_iso(value: float, text: str) -> None:
    # values are Node v20.20's new Date(value).toISOString()
    assert format_iso(value) == text


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, MAX_TIME_MS + 1])
def test_format_iso_rejects_invalid_time(bad: float) -> None:
    with pytest.raises(ValueError):
        format_iso(bad)


def test_round_trip_over_a_range_of_instants() -> None:
    # format_iso and parse_timestamp are inverse on every representable millisecond we try,
    # including negative years and leap days.
    for value in (
        0,
        951782400000,  # 2000-02-29
        -2208988800000,  # 1900-01-01
        -62135596800000,  # 0001-01-01
        T0800 + 1,
        4102444799999,  # 2099-12-31T23:59:59.999Z
    ):
        assert parse_timestamp(format_iso(value)) == value


def test_agrees_with_v8_on_a_recorded_corpus() -> None:
    # tests/data/v8_date_parse.json: 2,382 strings from a seeded grammar of date tokens (ISO
    # pieces, legacy words, zones, parentheses, odd whitespace, NUL) with the value Node v20.20
    # Date.parse gave each under TZ=UTC (null = NaN): 1,383 valid, 999 invalid. A second
    # implementation, recorded, so the check runs without Node.
    corpus = json.loads((Path(__file__).parent / "data" / "v8_date_parse.json").read_text("utf-8"))
    cases = corpus["cases"]
    assert len(cases) > 2000
    wrong = [(s, v, parse_timestamp(s)) for s, v in cases if parse_timestamp(s) != v]
    assert wrong == []
