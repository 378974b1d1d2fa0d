"""The journal as a chain: each record's seal covers the seal of the line written before it.

The writer (:class:`evalkit.journal.file.JournalAppender`) puts into every record it appends
``provenance.previous_line_sha256``, the *reference* of the previous non-blank line: its seal
(``provenance.record_sha256`` as written) when it is a sealed record, else the sha256 of its
bytes exactly as in the file (without the newline); null for the first line of the journal.
The record's own seal covers the link. So a line deleted, inserted or moved, or a record
resealed after an edit, breaks the link of the record after it, and :func:`check_chain` names
that line (an edit left unsealed breaks the edited record's own seal instead). Records written before evalkit chained its
journals carry no link: they are *unchained*, which is a note while no record of the journal
has a link yet and a break after one has. What a chain cannot show: lines cut from the end of
the journal (nothing comes after them). The recipe, to re-check offline: ``docs/RECORDS.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CHAIN_FIELD",
    "CHAIN_KEY",
    "ChainBreak",
    "ChainReport",
    "check_chain",
    "last_line_reference",
    "line_sha256",
    "link_of",
    "reference",
    "seal_of",
]

#: Where a record keeps its link: ``provenance.previous_line_sha256``.
CHAIN_KEY = "previous_line_sha256"
CHAIN_FIELD = f"provenance.{CHAIN_KEY}"
_SHA256 = re.compile(r"[0-9a-f]{64}")
#: How far back from the end a writer reads at a time looking for the last line.
_BACK = 64 << 10


def line_sha256(line: bytes) -> str:
    """sha256 (hex) of a line's bytes as written, without the newline."""
    return hashlib.sha256(line).hexdigest()


def seal_of(value: Any) -> str | None:
    """The seal a parsed line carries (64 lowercase hex), else None."""
    provenance = value.get("provenance") if isinstance(value, Mapping) else None
    seal = provenance.get("record_sha256") if isinstance(provenance, Mapping) else None
    return seal if isinstance(seal, str) and _SHA256.fullmatch(seal) else None


def reference(line: bytes, value: Any = ...) -> str:
    """What the next record's link names for ``line``: its seal, else its bytes' sha256.

    ``value``: the line parsed (``...``: parse it here).
    """
    if value is ...:
        try:
            value = json.loads(line)
        except ValueError:
            value = None
    return seal_of(value) or line_sha256(line)


def link_of(value: Any) -> tuple[bool, Any]:
    """(whether ``value`` is a record carrying a link, the link) of a parsed journal line."""
    provenance = value.get("provenance") if isinstance(value, Mapping) else None
    if isinstance(provenance, Mapping) and CHAIN_KEY in provenance:
        return True, provenance[CHAIN_KEY]
    return False, None


@dataclass(frozen=True)
class ChainBreak:
    """A record whose link does not name the line before it: where, and what it means."""

    line: int
    reason: str

    def __str__(self) -> str:
        """``line N: reason``."""
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True)
class ChainReport:
    """The chain of one journal: where it starts, the records before it, every break.

    ``started`` is the line of the first record with a link (None: the journal is not
    chained yet); ``unchained`` the lines of the records before it, which carry no link (they
    were written before evalkit chained its journals: their order cannot be checked).
    """

    started: int | None = None
    unchained: tuple[int, ...] = ()
    breaks: tuple[ChainBreak, ...] = ()

    @property
    def intact(self) -> bool:
        """No break (unchained records before the chain started are not one)."""
        return not self.breaks

    def break_at(self, line: int) -> ChainBreak | None:
        """The break of the record on ``line``, if its link is broken."""
        return next((b for b in self.breaks if b.line == line), None)

    def summary(self) -> str:
        """One line: how far the chain holds and where it breaks."""
        if self.started is None:
            if not self.unchained:
                return "empty (no record)"
            return f"not chained: {len(self.unchained)} record(s) written before chaining"
        head = f"from line {self.started}"
        if self.unchained:
            head += f" ({len(self.unchained)} unchained record(s) before it)"
        if not self.breaks:
            return f"intact {head}"
        return f"BROKEN at {len(self.breaks)} line(s) {head}: " + "; ".join(map(str, self.breaks))


def check_chain(lines: Iterable[tuple[int, str | None, bool, Any]]) -> ChainReport:
    """The chain of a journal's non-blank lines: ``(number, reference, is_record, link)`` each.

    ``reference`` is what a link to the line names (:func:`reference`; None: the line is over
    the line cap, not read); ``is_record`` whether it parsed to a record object, ``link`` its
    link (:func:`link_of`), or ``...`` for a record that carries none.
    """
    started: int | None = None
    unchained: list[int] = []
    breaks: list[ChainBreak] = []
    previous: tuple[int, str | None] | None = None  # (line, its reference)
    for number, ref, is_record, link in lines:
        if is_record and link is ...:
            if started is None:
                unchained.append(number)
            else:
                breaks.append(
                    ChainBreak(
                        number,
                        f"a record without {CHAIN_FIELD} after the chain started at line "
                        f"{started}: written by something that does not chain, or its link "
                        "was removed",
                    )
                )
        elif is_record:
            started = number if started is None else started
            problem = _link_problem(link, previous)
            if problem:
                breaks.append(ChainBreak(number, problem))
        previous = (number, ref)
    return ChainReport(started, tuple(unchained), tuple(breaks))


def _link_problem(link: Any, previous: tuple[int, str | None] | None) -> str | None:
    if link is None:
        if previous is None:
            return None
        return (
            f"it claims to be the first line of the journal, but line {previous[0]} comes "
            "before it (a line inserted, or lines moved)"
        )
    if not isinstance(link, str):
        return f"{CHAIN_FIELD} is not a sha256 (got {type(link).__name__})"
    if previous is None:
        return (
            f"it links to a line before it ({link[:12]}...), but there is none: lines were "
            "deleted from the head of the journal"
        )
    if previous[1] is None:
        return f"line {previous[0]} before it is over the line cap: its link cannot be checked"
    if link != previous[1]:
        return (
            f"it does not follow line {previous[0]}: it links to {link[:12]}..., line "
            f"{previous[0]} is {previous[1][:12]}... (a line deleted, inserted or moved "
            f"between them, or line {previous[0]} resealed after an edit)"
        )
    return None


def last_line_reference(fd: int) -> str | None:
    """The link a record appended to the open file ``fd`` gets: its last non-blank line's.

    None when the file holds no non-blank line (the record is the first). A last line
    without its newline (a torn write) counts as written: the appender starts the record on a
    fresh line after it.
    """
    end = os.fstat(fd).st_size
    # skip trailing blank lines (whitespace only), as the reader does
    while end > 0:
        start = max(0, end - _BACK)
        chunk = os.pread(fd, end - start, start)
        stripped = chunk.rstrip()
        if stripped:
            end = start + len(stripped)
            break
        end = start
    if end == 0:
        return None
    # the line ends at the first newline at or after ``end``
    tail = os.pread(fd, _BACK, end)
    while tail and b"\n" not in tail:
        more = os.pread(fd, _BACK, end + len(tail))
        if not more:
            break
        tail += more
    stop = end + (tail.index(b"\n") if b"\n" in tail else len(tail))
    begin = end
    while begin > 0:
        start = max(0, begin - _BACK)
        chunk = os.pread(fd, begin - start, start)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            begin = start + cut + 1
            break
        begin = start
    return reference(os.pread(fd, stop - begin, begin))
