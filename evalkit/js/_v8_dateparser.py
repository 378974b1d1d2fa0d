"""V8's ``DateParser`` re-implemented: a date-time string's fields as ``Date.parse`` reads them.

Private to :mod:`evalkit.js.timestamps`, which turns the fields into a time value. Re-implemented
from V8's documented state machine (``src/date/dateparser-inl.h``): first the ES5 ISO-8601
grammar, then the legacy "Safari-compatible" fallback for whatever the ISO grammar did not
consume. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Fields", "numeral_value", "parse_fields", "read_milliseconds"]

_NONE = 2**31 - 1  # V8's kNone marker (INT_MAX)
_MAX_SIGNIFICANT_DIGITS = 9


@dataclass(slots=True)
class Fields:
    year: int
    month0: int
    day: int
    hour: int
    minute: int
    second: int
    ms: int
    offset_s: int | None  # None: no zone given -> local time, which is UTC for the reference


# --------------------------------------------------------------------------------------------
# V8 DateParser, re-implemented
# --------------------------------------------------------------------------------------------

# Token tags (V8 DateToken); keyword tags are the KeywordType values >= 0.
_INVALID_TOKEN = -6
_UNKNOWN = -5
_WHITESPACE = -4
_NUMBER = -3
_SYMBOL = -2
_END = -1
_KW_INVALID = 0
_KW_MONTH = 1
_KW_ZONE = 2
_KW_TIME_SEP = 3
_KW_AMPM = 4

# KeywordTable: 3-character lower-case prefix -> (type, value), in V8's lookup order.
_KEYWORDS: tuple[tuple[str, int, int], ...] = (
    ("jan", _KW_MONTH, 1),
    ("feb", _KW_MONTH, 2),
    ("mar", _KW_MONTH, 3),
    ("apr", _KW_MONTH, 4),
    ("may", _KW_MONTH, 5),
    ("jun", _KW_MONTH, 6),
    ("jul", _KW_MONTH, 7),
    ("aug", _KW_MONTH, 8),
    ("sep", _KW_MONTH, 9),
    ("oct", _KW_MONTH, 10),
    ("nov", _KW_MONTH, 11),
    ("dec", _KW_MONTH, 12),
    ("am\0", _KW_AMPM, 0),
    ("pm\0", _KW_AMPM, 12),
    ("ut\0", _KW_ZONE, 0),
    ("utc", _KW_ZONE, 0),
    ("z\0\0", _KW_ZONE, 0),
    ("gmt", _KW_ZONE, 0),
    ("cdt", _KW_ZONE, -5),
    ("cst", _KW_ZONE, -6),
    ("edt", _KW_ZONE, -4),
    ("est", _KW_ZONE, -5),
    ("mdt", _KW_ZONE, -6),
    ("mst", _KW_ZONE, -7),
    ("pdt", _KW_ZONE, -7),
    ("pst", _KW_ZONE, -8),
    ("t\0\0", _KW_TIME_SEP, 0),
)

# ECMAScript WhiteSpace (without line terminators), as V8's IsWhiteSpace.
_WS = frozenset(
    [0x09, 0x0B, 0x0C, 0x20, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000, 0xFEFF]
)
_WS_OR_LT = _WS | {0x0A, 0x0D, 0x2028, 0x2029}


def _between(x: int, lo: int, hi: int) -> bool:
    return lo <= x <= hi


def numeral_value(digits: str) -> int:
    """V8 ReadUnsignedNumeral: skip leading zeros, keep the first 9 significant digits."""
    sig = digits.lstrip("0")[:_MAX_SIGNIFICANT_DIGITS]
    return int(sig) if sig else 0


def read_milliseconds(number: int, length: int) -> int:
    """V8 ReadMilliseconds: the first three digits of the fraction (truncated, never rounded).

    Mirrors V8 exactly, including its quirk for fractions longer than nine digits with leading
    zeros (the length is capped at 9 while the value holds 9 *significant* digits).
    """
    if length == 1:
        return number * 100
    if length == 2:
        return number * 10
    if length > 3:
        length = min(length, _MAX_SIGNIFICANT_DIGITS)
        return number // 10 ** (length - 3)
    return number


@dataclass(slots=True)
class _Token:
    tag: int
    length: int
    value: int

    def is_number(self) -> bool:
        return self.tag == _NUMBER

    def is_fixed_number(self, length: int) -> bool:
        return self.tag == _NUMBER and self.length == length

    def is_symbol(self, ch: str) -> bool:
        return self.tag == _SYMBOL and self.value == ord(ch)

    def is_sign(self) -> bool:
        return self.tag == _SYMBOL and self.value in (0x2B, 0x2D)

    def sign(self) -> int:
        return 44 - self.value  # '+' (43) -> 1, '-' (45) -> -1

    def is_keyword(self) -> bool:
        return self.tag >= 0

    def is_keyword_z(self) -> bool:
        return self.tag == _KW_ZONE and self.length == 1 and self.value == 0


_END_TOKEN = _Token(_END, 0, -1)
_INVALID = _Token(_INVALID_TOKEN, 0, -1)


class _Scanner:
    """V8 InputReader + DateStringTokenizer over UTF-16 code units (NUL reads as end, as in V8)."""

    __slots__ = ("_ch", "_index", "_n", "_next", "_units")

    def __init__(self, text: str) -> None:
        data = text.encode("utf-16-le", "surrogatepass")
        self._units = [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]
        self._n = len(self._units)
        self._index = 0
        self._ch = 0
        self._advance()
        self._next = self._scan()

    # InputReader -----------------------------------------------------------------------
    def _advance(self) -> None:
        self._ch = self._units[self._index] if self._index < self._n else 0
        self._index += 1

    def _is_digit(self) -> bool:
        return 0x30 <= self._ch <= 0x39

    def _scan(self) -> _Token:
        pre = self._index
        ch = self._ch
        if ch == 0:
            return _END_TOKEN
        if 0x30 <= ch <= 0x39:
            value = 0
            sig = 0
            while self._ch == 0x30:
                self._advance()
            while self._is_digit():
                if sig < _MAX_SIGNIFICANT_DIGITS:
                    value = value * 10 + self._ch - 0x30
                sig += 1
                self._advance()
            return _Token(_NUMBER, self._index - pre, value)
        if ch in (0x3A, 0x2D, 0x2B, 0x2E, 0x29):  # ':' '-' '+' '.' ')'
            self._advance()
            return _Token(_SYMBOL, 1, ch)
        if ch >= 0x41 and ch not in _WS:
            prefix: list[int] = []
            length = 0
            while self._ch >= 0x41 and self._ch not in _WS:
                if length < 3:
                    c = self._ch
                    prefix.append(c + 32 if 0x41 <= c <= 0x5A else c)
                length += 1
                self._advance()
            prefix += [0] * (3 - len(prefix))
            kw_type, kw_value = _lookup_keyword(prefix, length)
            return _Token(kw_type, length, kw_value)
        if ch in _WS_OR_LT:
            self._advance()
            return _Token(_WHITESPACE, self._index - pre, -1)
        if ch == 0x28:  # '(' : skip a balanced parenthesised comment
            balance = 0
            while True:
                if self._ch == 0x29:
                    balance -= 1
                elif self._ch == 0x28:
                    balance += 1
                self._advance()
                if not (balance > 0 and self._ch):
                    break
            return _Token(_UNKNOWN, 1, -1)
        self._advance()
        return _Token(_UNKNOWN, 1, -1)

    # DateStringTokenizer ---------------------------------------------------------------
    def next(self) -> _Token:
        result = self._next
        self._next = self._scan()
        return result

    def peek(self) -> _Token:
        return self._next

    def skip_symbol(self, ch: str) -> bool:
        if self._next.is_symbol(ch):
            self._next = self._scan()
            return True
        return False


def _lookup_keyword(prefix: list[int], length: int) -> tuple[int, int]:
    for word, kw_type, kw_value in _KEYWORDS:
        if all(prefix[i] == ord(word[i]) for i in range(3)) and (
            length <= 3 or kw_type == _KW_MONTH
        ):
            return kw_type, kw_value
    return _KW_INVALID, 0


class _TimeZone:
    __slots__ = ("hour", "minute", "sign")

    def __init__(self) -> None:
        self.sign = _NONE
        self.hour = _NONE
        self.minute = _NONE

    def set(self, offset_hours: int) -> None:
        self.sign = -1 if offset_hours < 0 else 1
        self.hour = offset_hours * self.sign
        self.minute = 0

    def is_expecting(self, n: int) -> bool:
        return self.hour != _NONE and self.minute == _NONE and _between(n, 0, 59)

    def is_utc(self) -> bool:
        return self.hour == 0 and self.minute == 0

    def is_empty(self) -> bool:
        return self.hour == _NONE

    def write(self) -> tuple[bool, int | None]:
        if self.sign == _NONE:
            return True, None
        hour = 0 if self.hour == _NONE else self.hour
        minute = 0 if self.minute == _NONE else self.minute
        total = (hour * 3600 + minute * 60) & 0xFFFFFFFF  # V8 computes in unsigned 32-bit
        if total > 2_147_483_647:
            return False, None
        return True, -total if self.sign < 0 else total


class _Time:
    __slots__ = ("comp", "hour_offset")

    def __init__(self) -> None:
        self.comp: list[int] = []
        self.hour_offset = _NONE

    def is_empty(self) -> bool:
        return not self.comp

    def is_expecting(self, n: int) -> bool:
        i = len(self.comp)
        return (
            (i == 1 and _between(n, 0, 59))
            or (i == 2 and _between(n, 0, 59))
            or (i == 3 and _between(n, 0, 999))
        )

    def add(self, n: int) -> bool:
        if len(self.comp) < 4:
            self.comp.append(n)
            return True
        return False

    def add_final(self, n: int) -> bool:
        if not self.add(n):
            return False
        self.comp += [0] * (4 - len(self.comp))
        return True

    def write(self) -> tuple[int, int, int, int] | None:
        hour, minute, second, ms = [*self.comp, 0, 0, 0, 0][:4]
        if self.hour_offset != _NONE:
            if not _between(hour, 0, 12):
                return None
            hour = hour % 12 + self.hour_offset
        if not (
            _between(hour, 0, 23)
            and _between(minute, 0, 59)
            and _between(second, 0, 59)
            and _between(ms, 0, 999)
        ) and (hour != 24 or minute != 0 or second != 0 or ms != 0):
            return None  # only 24:00:00.000 may exceed the ranges
        return hour, minute, second, ms


class _Day:
    __slots__ = ("comp", "is_iso", "named_month")

    def __init__(self) -> None:
        self.comp: list[int] = []
        self.named_month = _NONE
        self.is_iso = False

    def is_empty(self) -> bool:
        return not self.comp

    def add(self, n: int) -> bool:
        if len(self.comp) < 3:
            self.comp.append(n)
            return True
        return False

    def write(self) -> tuple[int, int, int] | None:
        if not self.comp:
            return None
        # V8 pads the missing components with 1 *before* choosing the order, so the order tests
        # below always see three components (and a lone "9" reads as month 9, day 1, year 1).
        comp = [*self.comp, 1, 1, 1][:3]
        if self.named_month == _NONE:
            if self.is_iso or not _between(comp[0], 1, 31):
                year, month, day = comp
            else:
                month, day, year = comp
        else:
            month = self.named_month
            if not _between(comp[0], 1, 31):
                year, day = comp[0], comp[1]
            else:
                day, year = comp[0], comp[1]
        if not self.is_iso:
            if _between(year, 0, 49):
                year += 2000
            elif _between(year, 50, 99):
                year += 1900
        if not (-1_073_741_824 <= year <= 1_073_741_823) or not _between(month, 1, 12):
            return None
        if not _between(day, 1, 31):
            return None
        return year, month - 1, day


def _es5_zone(scanner: _Scanner, tz: _TimeZone) -> bool:
    """The zone after an ES5 ISO time (``Z``, ``+HHMM`` or ``+HH:MM``; none is fine).

    False when it is malformed (the caller's invalid token).
    """
    if scanner.peek().is_keyword_z():
        scanner.next()
        tz.set(0)
    elif scanner.peek().is_symbol("+") or scanner.peek().is_symbol("-"):
        tz.sign = 1 if scanner.next().value == 0x2B else -1
        if scanner.peek().is_fixed_number(4):
            hourmin = scanner.next().value
            hour, minute = divmod(hourmin, 100)
            if not _between(hour, 0, 23) or not _between(minute, 0, 59):
                return False
            tz.hour, tz.minute = hour, minute
        else:
            p = scanner.peek()
            if not p.is_fixed_number(2) or not _between(p.value, 0, 23):
                return False
            tz.hour = scanner.next().value
            if not scanner.skip_symbol(":"):
                return False
            p = scanner.peek()
            if not p.is_fixed_number(2) or not _between(p.value, 0, 59):
                return False
            tz.minute = scanner.next().value
    return True


def _parse_es5(scanner: _Scanner, day: _Day, time: _Time, tz: _TimeZone) -> _Token:
    """V8 ParseES5DateTime: the ISO grammar; returns the first token it did not consume."""
    if scanner.peek().is_sign():
        sign_token = scanner.next()
        if not scanner.peek().is_fixed_number(6):
            return sign_token
        sign = sign_token.sign()
        year = scanner.next().value
        if sign < 0 and year == 0:
            return sign_token
        day.add(sign * year)
    elif scanner.peek().is_fixed_number(4):
        day.add(scanner.next().value)
    else:
        return scanner.next()
    if scanner.skip_symbol("-"):
        p = scanner.peek()
        if not p.is_fixed_number(2) or not _between(p.value, 1, 12):
            return scanner.next()
        day.add(scanner.next().value)
        if scanner.skip_symbol("-"):
            p = scanner.peek()
            if not p.is_fixed_number(2) or not _between(p.value, 1, 31):
                return scanner.next()
            day.add(scanner.next().value)
    if scanner.peek().tag != _KW_TIME_SEP:
        if scanner.peek().tag != _END:
            return scanner.next()
    else:
        scanner.next()
        p = scanner.peek()
        if not p.is_fixed_number(2) or not _between(p.value, 0, 24):
            return _INVALID
        hour_is_24 = p.value == 24
        time.add(scanner.next().value)
        if not scanner.skip_symbol(":"):
            return _INVALID
        p = scanner.peek()
        if not p.is_fixed_number(2) or not _between(p.value, 0, 59) or (hour_is_24 and p.value > 0):
            return _INVALID
        time.add(scanner.next().value)
        if scanner.skip_symbol(":"):
            p = scanner.peek()
            if (
                not p.is_fixed_number(2)
                or not _between(p.value, 0, 59)
                or (hour_is_24 and p.value > 0)
            ):
                return _INVALID
            time.add(scanner.next().value)
            if scanner.skip_symbol("."):
                p = scanner.peek()
                if not p.is_number() or (hour_is_24 and p.value > 0):
                    return _INVALID
                tok = scanner.next()
                time.add(read_milliseconds(tok.value, tok.length))
        if not _es5_zone(scanner, tz):
            return _INVALID
        if scanner.peek().tag != _END:
            return _INVALID
    # Date-only forms without a zone are UTC; date-time forms are local (UTC for the reference).
    if tz.is_empty() and time.is_empty():
        tz.set(0)
    day.is_iso = True
    return _END_TOKEN


def _legacy_offset(scanner: _Scanner, tz: _TimeZone, sign: _Token) -> bool:
    """A ``+``/``-`` offset after a time in the legacy grammar.

    ``+2``, ``+02``, ``+0200``, ``+02:``...; False when its digits cannot be one (the caller's
    parse fails).
    """
    tz.sign = -1 if sign.sign() < 0 else 1
    n = 0
    length = 0
    if scanner.peek().is_number():
        nt = scanner.next()
        length, n = nt.length, nt.value
    if scanner.peek().is_symbol(":"):
        tz.hour = n
        tz.minute = _NONE
    elif length in (1, 2):
        tz.hour = n
        tz.minute = 0
    elif length in (3, 4):
        tz.hour, tz.minute = divmod(n, 100)
    else:
        return False
    return True


def parse_fields(text: str) -> Fields | None:
    """V8 DateParser::Parse: ES5 ISO first, then the legacy parser on the remaining tokens."""
    scanner = _Scanner(text)
    tz = _TimeZone()
    time = _Time()
    day = _Day()
    token = _parse_es5(scanner, day, time, tz)
    if token.tag == _INVALID_TOKEN:
        return None
    has_read_number = not day.is_empty()
    while token.tag != _END:
        if token.is_number():
            has_read_number = True
            n = token.value
            if scanner.skip_symbol(":"):
                if scanner.skip_symbol(":"):
                    if not time.is_empty():
                        return None
                    time.add(n)
                    time.add(0)
                else:
                    if not time.add(n):
                        return None
                    if scanner.peek().is_symbol("."):
                        scanner.next()
            elif scanner.skip_symbol(".") and time.is_expecting(n):
                time.add(n)
                if not scanner.peek().is_number():
                    return None
                tok = scanner.next()
                ms = read_milliseconds(tok.value, tok.length)
                if ms < 0:
                    return None
                time.add_final(ms)
            elif tz.is_expecting(n):
                tz.minute = n
            elif time.is_expecting(n):
                time.add_final(n)
                p = scanner.peek()
                if p.tag not in (_END, _WHITESPACE) and not p.is_keyword_z() and not p.is_sign():
                    return None
            else:
                if not day.add(n):
                    return None
                scanner.skip_symbol("-")
        elif token.is_keyword():
            kw_type, value = token.tag, token.value
            if kw_type == _KW_AMPM and not time.is_empty():
                time.hour_offset = value
            elif kw_type == _KW_MONTH:
                day.named_month = value
                scanner.skip_symbol("-")
            elif kw_type == _KW_ZONE and has_read_number:
                tz.set(value)
            else:
                if has_read_number:  # garbage words are illegal after a number
                    return None
                if scanner.peek().is_number():  # a word must be separated from the first number
                    return None
        elif token.is_sign() and (tz.is_utc() or not time.is_empty()):
            has_read_number = True
            if not _legacy_offset(scanner, tz, token):
                return None
        elif (token.is_sign() or token.is_symbol(")")) and has_read_number:
            return None
        token = scanner.next()

    ymd = day.write()
    if ymd is None:
        return None
    hms = time.write()
    if hms is None:
        return None
    ok, offset = tz.write()
    if not ok:
        return None
    return Fields(ymd[0], ymd[1], ymd[2], hms[0], hms[1], hms[2], hms[3], offset)
