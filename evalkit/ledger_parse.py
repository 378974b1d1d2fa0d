"""One JSONL file's bytes as the reference engine's ``JSON.parse`` reads them, line by line.

The lowest part of the ledger reading (:mod:`evalkit.ledger` builds files, sources and the
metrics directory on top of it): decoding (invalid UTF-8 bytes become U+FFFD, as Node's
``readFileSync(p, 'utf8')`` does, and the line is named), splitting on ``\\n`` only, the
JavaScript ``trim()`` before parsing, the line cap, and parsing each line with JavaScript's
number semantics (:func:`evalkit.jsnum.decode_json_value`). Bad data never raises: every
skipped or doubtful line becomes a :class:`Diagnostic`.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

from evalkit.input_files import split_lines
from evalkit.jsnum import JSONLineError, decode_json_value
from evalkit.jsvalues import JS_WHITESPACE

__all__ = [
    "Diagnostic",
    "Line",
    "decode_lines",
    "gc_paused",
    "overlong_lines",
    "parse_lines",
]

# The whitespace JSON.parse itself tolerates around a value.
_JSON_WS = " \t\n\r"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One thing the reader skipped or doubted: ``file``, 1-based ``line`` (``None`` for the
    whole file) and a ``reason`` a person can act on."""

    file: str
    line: int | None
    reason: str

    def __str__(self) -> str:
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
        return self.error is None and isinstance(self.value, dict)

    @property
    def is_event_record(self) -> bool:
        """Readable under rubric-v2: the raw line is a JSON object."""
        return self.error is None and not self.padded and isinstance(self.value, dict)


@contextmanager
def gc_paused() -> Iterator[None]:
    # Building hundreds of thousands of small dicts triggers the cyclic collector again and
    # again although none of them can form a cycle; pausing it makes a large read ~2x faster.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def decode_lines(path: str, data: bytes) -> tuple[list[str], list[Diagnostic]]:
    try:
        return data.decode("utf-8").split("\n"), []
    except UnicodeDecodeError:
        pass
    # Decode per line so each bad line is named; UTF-8 never hides 0x0A inside a sequence, so
    # this splits exactly as decoding the whole file first would.
    lines: list[str] = []
    diags: list[Diagnostic] = []
    for i, raw in enumerate(data.split(b"\n"), start=1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(raw.decode("utf-8", errors="replace"))
            diags.append(Diagnostic(path, i, "invalid UTF-8 bytes (read as U+FFFD, as Node does)"))
    return lines, diags


def parse_lines(
    p: str, texts: list[str], diags: list[Diagnostic], overlong: dict[int, str]
) -> list[Line]:
    lines: list[Line] = []
    append = lines.append
    for i, text in enumerate(texts, start=1):
        if overlong and i in overlong:
            reason = overlong[i]
            append(Line(i, None, reason))
            diags.append(Diagnostic(p, i, f"malformed line skipped: {reason}"))
            continue
        trimmed = text.strip(JS_WHITESPACE)
        if not trimmed:
            continue  # blank after the JavaScript trim: skipped silently by every reader
        try:
            value = decode_json_value(trimmed)  # JS-trimmed, so no JSON whitespace left
        except JSONLineError as exc:
            append(Line(i, None, str(exc)))
            diags.append(Diagnostic(p, i, f"malformed line skipped: {exc}"))
            continue
        # str.strip returns the very object when nothing was stripped: the common case
        padded = trimmed is not text and trimmed != text.strip(_JSON_WS)
        append(Line(i, value, None, padded))
        if value.__class__ is not dict:
            kind = "array" if isinstance(value, list) else type(value).__name__
            diags.append(Diagnostic(p, i, f"not a JSON object ({kind})"))
        elif padded:
            diags.append(
                Diagnostic(p, i, "whitespace JSON.parse rejects (BOM/NBSP) around the object")
            )
    return lines


def overlong_lines(data: bytes, cap: int) -> dict[int, str]:
    """Line number -> reason for every line of ``data`` longer than ``cap`` bytes (such a line
    is not parsed: parsing can take many times its size in memory)."""
    if len(data) <= cap:  # the common case: no line can be longer than the whole file
        return {}
    return {
        ln.number: f"line of {ln.length} bytes exceeds the {cap}-byte line cap"
        for ln in split_lines(data, max_line_bytes_=cap)
        if ln.data is None
    }
