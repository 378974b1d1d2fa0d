r"""One JSONL file's bytes as the reference engine's ``JSON.parse`` reads them, line by line.

The lowest part of the ledger reading (:mod:`evalkit.ledger.reader` builds files, sources and the
metrics directory on top of it): decoding (invalid UTF-8 bytes become U+FFFD, as Node's
``readFileSync(p, 'utf8')`` does, and the line is named), splitting on ``\n`` only, the
JavaScript ``trim()`` before parsing, the line cap, and parsing each line with JavaScript's
number semantics. Bad data never raises: every skipped or doubtful line becomes a
:class:`Diagnostic`.

**Two parsers, one reading.** The exact reader (:func:`evalkit.js.numbers.decode_json_value`, the
standard library's decoder with JavaScript's number semantics) defines what a line means. When
``orjson`` is installed (``pip install evalkit[fast]``), :func:`decode_line` parses with it
first and keeps its value only where it cannot differ from the exact reader's; every other
line is parsed again by the exact reader, line by line. orjson's documented and observed
deviations from ``JSON.parse``, and how each is routed:

* numbers: JavaScript has doubles only. The exact reader turns an integral number into an
  ``int`` (``1.0`` and ``1e2`` are the integers 1 and 100) and an integer beyond 2**53 into
  the nearest double; orjson keeps ``1.0`` a float, reads integers up to 2**64 exactly and
  larger ones as floats, and refuses numbers beyond double range (``1e400``, which
  ``JSON.parse`` reads as Infinity). So any float, and any integer beyond +-2**53, in orjson's
  value sends the line to the exact reader; ``-0`` is the integer 0 in both;
* lone surrogates (``"\ud800"``, legal in ``JSON.parse``): orjson refuses them -> exact reader;
* nesting: orjson stops at 1024 levels, Python's decoder at its recursion limit; a value
  nested deeper than :data:`FAST_MAX_DEPTH` is parsed again by the exact reader, so both
  paths give the same value or the same refusal;
* NaN/Infinity literals, a BOM, control characters or NUL in strings, whitespace other than
  space/tab/CR/LF between tokens, trailing commas, leading zeros, trailing content: refused by
  both; a refusal always comes from the exact reader, so its message is the same too;
* duplicate keys: the last value wins at the first key's position, in both (and in JS);
* whitespace around the value: the exact reader takes a trimmed line (its caller strips
  JavaScript's whitespace, a superset of JSON's), orjson skips it: such text goes to the exact
  reader;
* invalid UTF-8 never reaches a parser: the bytes are decoded first (U+FFFD), as Node does.

A differential test (``tests/test_ledger_fast_path.py``) checks fast == exact, value and type,
on generated lines and a corpus of these edge cases, and on every conformance ledger.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

from evalkit.files.input import fast_json
from evalkit.files.input import input_too_large as too_large
from evalkit.js.numbers import MAX_SAFE_INTEGER, JSONLineError, decode_json_value
from evalkit.js.values import JS_WHITESPACE

#: the fast path (the optional ``[fast]`` extra); the exact reader needs nothing
fast_loads: Callable[[bytes | str], Any] | None = None if fast_json is None else fast_json.loads

__all__ = [
    "BLOCK_BYTES",
    "FAST_MAX_DEPTH",
    "TOMBSTONE_EVENT",
    "Diagnostic",
    "Line",
    "Parsed",
    "decode_line",
    "gc_paused",
    "parse_data",
    "parse_file",
]

# The whitespace JSON.parse itself tolerates around a value.
_JSON_WS = " \t\n\r"
#: Deepest nesting whose fast-parsed value is kept (deeper: the exact reader parses it again).
FAST_MAX_DEPTH = 64
_SAFE = MAX_SAFE_INTEGER


def _exact_as_parsed(values: Any, depth: int) -> bool:
    """True when every value under a fast-parsed container is what the exact reader gives.

    Such values are strings, booleans, null, integers within +-2**53, floats that are not
    integral (both parsers round the literal to the nearest double; an integral one is an int
    to the exact reader) and containers within the depth limit.
    """
    for v in values:
        c = v.__class__
        if c is str or c is bool or v is None:
            continue
        if c is int:
            if -_SAFE <= v <= _SAFE:
                continue
            return False
        if c is float:
            if not v.is_integer():  # orjson refuses an overflowing literal: never inf here
                continue
            return False
        if c is dict:
            if depth >= FAST_MAX_DEPTH or not _exact_as_parsed(v.values(), depth + 1):
                return False
            continue
        if c is list:
            if depth >= FAST_MAX_DEPTH or not _exact_as_parsed(v, depth + 1):
                return False
            continue
        return False  # an integral float (or anything else): the exact reader decides
    return True


def decode_line(text: str) -> Any:
    """``JSON.parse(text)`` of a JavaScript-trimmed line.

    Exactly :func:`evalkit.js.numbers.decode_json_value` (same value, same types, same refusal),
    through orjson where that cannot differ (module docstring). Raises
    :class:`~evalkit.js.numbers.JSONLineError`.
    """
    # the exact reader takes no whitespace around the value (its caller trims): orjson would
    if fast_loads is not None and text and text[0] not in _JSON_WS and text[-1] not in _JSON_WS:
        try:
            value = fast_loads(text)
        except ValueError:  # orjson.JSONDecodeError is one
            pass  # the exact reader refuses it too, with its own message (or reads it)
        else:
            c = value.__class__
            if c is dict:
                if _exact_as_parsed(value.values(), 1):
                    return value
            elif c is list:
                if _exact_as_parsed(value, 1):
                    return value
            elif c is str or c is bool or value is None or (c is int and -_SAFE <= value <= _SAFE):
                return value
    return decode_json_value(text)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One thing the reader skipped or doubted.

    ``file``, 1-based ``line`` (``None`` for the whole file) and a ``reason`` a person can act
    on.
    """

    file: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        """``file:line: reason`` (``file: reason`` for the whole file)."""
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.reason}"


class Line(NamedTuple):
    """A non-blank line: its parsed JSON ``value`` (objects as ``dict``), or ``error`` set.

    ``value`` is what JavaScript's ``JSON.parse(line.trim())`` gives (``None`` for JSON
    ``null`` or when ``error`` is set). ``padded`` marks a line that parses only after that
    trim because it carries whitespace ``JSON.parse`` itself rejects (a BOM, NBSP, ...): the
    event readers, which parse the raw line, skip it (rubric-v1) or count it unreadable (v2).
    Immutable; a named tuple rather than a frozen dataclass because a ledger holds one per
    event and construction cost dominates a 500,000-line read.
    """

    line_no: int
    value: Any
    error: str | None = None
    padded: bool = False

    @property
    def ok(self) -> bool:
        """Parsed after the JavaScript trim (the sessions / rubric-v1 reading)."""
        return self.error is None

    @property
    def is_object(self) -> bool:
        """Parsed after the JavaScript trim, to a JSON object."""
        return self.error is None and isinstance(self.value, dict)

    @property
    def is_event_record(self) -> bool:
        """Readable under rubric-v2: the raw line is a JSON object."""
        return self.error is None and not self.padded and isinstance(self.value, dict)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (restoring its state after; nests).

    Building hundreds of thousands of small dicts triggers the collector again and again, and
    each full collection walks every object a ledger holds, although none of them can form a
    cycle (refcounting frees them): pausing it makes reading and indexing a large ledger about
    twice as fast. Used around the ledger read, the event index and the scoring loops.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class Parsed:
    """One file's lines as read (:func:`parse_file`), and what rubric-v2 reads of them.

    ``records`` are the values of the raw lines that parse to a plain object (rubric-v2's
    events, in file order), ``unreadable`` the numbers of every other non-blank line (malformed,
    padded or not an object). ``diagnostics`` are in line order. ``lines`` holds every
    non-blank line (:class:`Line`) unless the file was read for a sink, which takes the records
    block by block and keeps none: then ``lines`` holds only the lines that are not records
    (``others``), and ``n_records`` / ``n_raw_values`` count what was handed on (the objects,
    and every value ``JSON.parse`` accepts untrimmed). ``tombstones`` are the objects that are
    rotation tombstones (:data:`TOMBSTONE_EVENT`), ``end`` the byte offset after the last
    complete (newline-terminated) line and ``next_line`` the number the next line would get;
    ``partial``: a last line without its newline was read too (past ``end``).
    """

    __slots__ = (
        "diagnostics",
        "end",
        "lines",
        "n_raw_values",
        "n_records",
        "next_line",
        "partial",
        "records",
        "tombstones",
        "unreadable",
    )

    def __init__(self) -> None:
        self.lines: list[Line] = []
        self.diagnostics: list[Diagnostic] = []
        self.records: list[dict[str, Any]] = []
        self.unreadable: list[int] = []
        self.tombstones: list[dict[str, Any]] = []
        self.n_records = 0
        self.n_raw_values = 0
        self.end = 0
        self.next_line = 1
        self.partial = False


#: The rotation tombstone's event name (what :mod:`evalkit.ledger.reader` looks for).
TOMBSTONE_EVENT = "orchestrator.events.rotated"
_TOMBSTONE_BYTES = TOMBSTONE_EVENT.encode("ascii")
#: Bytes read from a file at once: lines are parsed a block at a time, never the whole file.
BLOCK_BYTES = 8 << 20
#: Read past the size the file had when opened (it may grow while it is read).
_GROWTH = 64 << 10


def parse_data(path: str, data: bytes, overlong: Mapping[int, str]) -> Parsed:
    r"""Every line of ``data`` (the bytes of the file at ``path``) as read (module docstring).

    Lines are split on ``\n``; the line numbers in ``overlong`` are not parsed (the reason is
    their error). For bytes already in memory (tests, small inputs); files are read in blocks
    by :func:`parse_file`.
    """
    out = Parsed()
    _parse_lines(path, data, 1, out, None, None, overlong)
    return out


def parse_file(
    path: str,
    fd: int,
    *,
    line_cap: int,
    byte_cap: int,
    sink: Callable[[list[dict[str, Any]]], object] | None = None,
    offset: int = 0,
    first_line: int = 1,
    what: str = "ledger file",
) -> Parsed:
    r"""The lines of the open file ``fd`` from byte ``offset`` on, read a block at a time.

    Never holds the whole file: each block of :data:`BLOCK_BYTES` is cut after its last
    newline, its complete lines parsed (numbered from ``first_line``) and the rest carried
    into the next block. A line longer than ``line_cap`` bytes is not held either: it is
    refused as a malformed line naming its length, its bytes skipped up to its newline. With
    ``sink`` the objects of each block are handed to it and not kept (module docstring of
    :class:`Parsed`). A file that is, or grows, larger than ``byte_cap`` raises
    :class:`~evalkit.files.input.InputTooLargeError` naming it, its size and the setting that
    raises the cap: a ledger file is never read as less than it holds.
    """
    out = Parsed()
    out.next_line, out.end = first_line, offset
    size = os.fstat(fd).st_size
    if size > byte_cap:
        raise too_large(path, what, byte_cap, size)
    total, carry = offset, b""
    skipping: list[int] | None = None  # [line number, bytes so far] of an overlong line
    while True:
        # never ask for (and so allocate) more than the file holds, a cap's worth at most
        want = min(BLOCK_BYTES, byte_cap + 1 - total, max(size - total, 0) + _GROWTH)
        chunk = os.pread(fd, want, total)
        if not chunk:
            break
        total += len(chunk)
        if total > byte_cap:
            raise too_large(path, what, byte_cap, None)
        if skipping is not None:
            nl = chunk.find(b"\n")
            if nl < 0:
                skipping[1] += len(chunk)
                continue
            _overlong(path, skipping[0], skipping[1] + nl, line_cap, out)
            out.next_line, out.end = skipping[0] + 1, total - len(chunk) + nl + 1
            skipping, chunk = None, chunk[nl + 1 :]
        buf = carry + chunk if carry else chunk
        cut = buf.rfind(b"\n")
        if cut >= 0:
            _parse_lines(path, buf[:cut], out.next_line, out, sink, line_cap, None)
            out.end = total - (len(buf) - cut - 1)
            carry = buf[cut + 1 :]
        else:
            carry = buf
        if len(carry) > line_cap:
            skipping, carry = [out.next_line, len(carry)], b""
    if skipping is not None:
        _overlong(path, skipping[0], skipping[1], line_cap, out)
        out.next_line, out.partial = skipping[0] + 1, True
    elif carry:  # the last line, without its newline: read, but not past ``end``
        _parse_lines(path, carry, out.next_line, out, sink, line_cap, None)
        out.partial = True
    return out


def _overlong(path: str, number: int, length: int, cap: int, out: Parsed) -> None:
    _refuse(path, number, f"line of {length} bytes exceeds the {cap}-byte line cap", out)


def _parse_lines(
    path: str,
    data: bytes,
    first: int,
    out: Parsed,
    sink: Callable[[list[dict[str, Any]]], object] | None,
    line_cap: int | None,
    overlong: Mapping[int, str] | None,
) -> None:
    """Parse the lines of ``data`` (complete lines, the last without its newline)."""
    fast = fast_loads
    keep = sink is None
    append = out.lines.append
    records: list[dict[str, Any]] = out.records if keep else []
    record = records.append
    # orjson refuses invalid UTF-8, but the exact reading must not rest on that: its value is
    # kept only for bytes known to be valid UTF-8 (the whole block, or an ASCII line)
    valid_utf8 = data.isascii() or _is_utf8(data)
    new_line = tuple.__new__  # Line(...) without the named tuple's Python-level __new__
    capped = line_cap is not None and len(data) > line_cap  # else no line can be too long
    kept_before = len(records)
    i = first - 1
    for i, raw in enumerate(data.split(b"\n"), start=first):
        if overlong and i in overlong:
            _refuse(path, i, overlong[i], out)
            continue
        if capped and len(raw) > line_cap:  # type: ignore[operator]
            _overlong(path, i, len(raw), line_cap, out)  # type: ignore[arg-type]
            continue
        if fast is not None and raw[:1] == b"{" and raw[-1:] == b"}":
            # the common line, an event object: decode_line's fast path, inlined (a function
            # call per line is a sizeable share of reading 500,000 lines). '{' and '}' are not
            # whitespace, so the JavaScript trim leaves such a line as it is.
            try:
                value = fast(raw) if valid_utf8 or raw.isascii() else None
            except ValueError:
                value = None
            if value.__class__ is dict:
                for v in value.values():  # _exact_as_parsed's first level, inlined
                    c = v.__class__
                    if c is str or c is bool or v is None or (c is int and -_SAFE <= v <= _SAFE):
                        continue
                    if c is float and not v.is_integer():
                        continue
                    if c is dict and _exact_as_parsed(v.values(), 2):
                        continue
                    if c is list and _exact_as_parsed(v, 2):
                        continue
                    break
                else:
                    if keep:
                        append(new_line(Line, (i, value, None, False)))
                    record(value)
                    continue
        _parse_text(path, i, _decode(path, i, raw, out.diagnostics), out, records)
    out.next_line = i + 1
    added = len(records) - kept_before
    out.n_records += added
    out.n_raw_values += added
    if _TOMBSTONE_BYTES in data or b"\\" in data:  # a tombstone, or an escape that may spell one
        out.tombstones += [r for r in records[kept_before:] if r.get("event") == TOMBSTONE_EVENT]
    if not keep and records:
        sink(records)  # type: ignore[misc]


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _decode(path: str, number: int, raw: bytes, diags: list[Diagnostic]) -> str:
    """One line's text; invalid UTF-8 bytes read as U+FFFD, as Node does, and are named."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        # UTF-8 never hides 0x0A inside a sequence: decoding line by line reads as decoding the
        # whole file first would
        diags.append(Diagnostic(path, number, "invalid UTF-8 bytes (read as U+FFFD, as Node does)"))
        return raw.decode("utf-8", errors="replace")


def _refuse(path: str, number: int, reason: str, out: Parsed) -> None:
    out.lines.append(Line(number, None, reason))
    out.diagnostics.append(Diagnostic(path, number, f"malformed line skipped: {reason}"))
    out.unreadable.append(number)


def _parse_text(
    path: str, number: int, text: str, out: Parsed, records: list[dict[str, Any]]
) -> None:
    """One decoded line that the inlined fast path of :func:`_parse_lines` did not take."""
    trimmed = text.strip(JS_WHITESPACE)
    if not trimmed:
        return  # blank after the JavaScript trim: skipped silently by every reader
    try:
        value = decode_line(trimmed)  # JS-trimmed, so no JSON whitespace left
    except JSONLineError as exc:
        _refuse(path, number, str(exc), out)
        return
    # str.strip returns the very object when nothing was stripped: the common case
    padded = trimmed is not text and trimmed != text.strip(_JSON_WS)
    if value.__class__ is dict and not padded:
        if records is out.records:  # lines kept: this one too
            out.lines.append(Line(number, value, None, padded))
        records.append(value)
        return
    out.lines.append(Line(number, value, None, padded))
    out.unreadable.append(number)
    if not padded:  # any other JSON value JSON.parse accepts untrimmed: rubric-v1 reads it
        out.n_raw_values += 1
    if value.__class__ is not dict:
        kind = "array" if isinstance(value, list) else type(value).__name__
        out.diagnostics.append(Diagnostic(path, number, f"not a JSON object ({kind})"))
    else:
        reason = "whitespace JSON.parse rejects (BOM/NBSP) around the object"
        out.diagnostics.append(Diagnostic(path, number, reason))
