"""Reading evidence back: numbers as JavaScript reads them, the record view, a reading's result.

Every reader is anchored on a TOKEN of its template (``agent_summary.spiral=``,
``all exit_code=0``), not on whole-sentence wording: a cosmetic prose edit leaves the reader
working, while a real shape change (a dropped number, a renamed field) makes it miss, and the
facts then record a ``parse_miss`` instead of a silent ``None``.

Numbers are read as JavaScript's ``Number()`` reads them (the reference engine is JavaScript):
ASCII digits only (patterns are compiled with ``re.ASCII``), an integral value is an ``int``,
a value past double range is ``inf``. A pattern that opens with a number carries
``(?<![0-9])``: it lets a match start only at the first digit of a run, which finds the same
leftmost match but keeps a hostile megabyte of digits linear instead of quadratic.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, TypeVar

from evalkit.js.numbers import format_js_number

__all__ = [
    "NO_TEMPLATE",
    "Misses",
    "Number",
    "NumberToken",
    "Reading",
    "RecordView",
    "first_number",
    "js_number",
    "read_token",
]

Number = int | float

#: The reason of a parse miss where a present dimension's evidence matched no known template.
NO_TEMPLATE: Final = "no known evidence template matched"


def js_number(digits: str) -> Number:
    """Read a matched numeric token as JavaScript ``Number(token)`` does.

    The tokens the patterns capture are ``[0-9]+``, ``-?[0-9]+`` or ``[0-9]+(.[0-9]+)?``, so
    ``float`` parses every one of them. An integral value below 1e21 becomes the ``int`` that
    ``JSON.stringify`` prints for it (past 2**53 that is the double's shortest digits padded
    with zeros: ``123456789012345680000``, not ``123456789012345683968``); a larger one stays
    a float, and past double range it is ``inf`` (JavaScript's ``Infinity``).
    """
    value = float(digits)
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return int(format_js_number(value))
    return value


def first_number(pattern: re.Pattern[str], text: str) -> Number | None:
    """The first capture of ``pattern`` in ``text`` as a JavaScript number, or ``None``."""
    match = pattern.search(text)
    return js_number(match.group(1)) if match else None


@dataclass(frozen=True)
class NumberToken:
    """A token that holds a number or a placeholder (``n/a``, ``null``).

    ``value`` is ``None`` for the placeholder. A reader returns ``None`` (no token at all) or a
    ``NumberToken``.
    """

    value: Number | None


def read_token(pattern: re.Pattern[str], text: str, placeholder: str) -> NumberToken | None:
    """The first capture of ``pattern``: a number, or ``placeholder`` read as ``None``."""
    match = pattern.search(text)
    if match is None:
        return None
    token = match.group(1)
    return NumberToken(None if token == placeholder else js_number(token))


@dataclass(frozen=True)
class RecordView:
    """A record's ``dimensions`` as the facts readers see them.

    The lookup is the reference's: the FIRST entry with a matching id wins; a non-list reads as
    no dimensions and non-object entries are ignored. ``events_unreadable`` is the third state
    (some dimension reports ``events.jsonl`` absent or empty), set once before the readers run.
    """

    first_by_id: Mapping[str, Mapping[str, Any]]
    events_unreadable: bool = False

    @classmethod
    def of(cls, dimensions: Any) -> RecordView:
        """The view of a record's ``dimensions`` (the first dimension of each id)."""
        first: dict[str, Mapping[str, Any]] = {}
        for dim in dimensions if isinstance(dimensions, list) else []:
            if isinstance(dim, Mapping):
                dim_id = dim.get("id")
                if isinstance(dim_id, str) and dim_id not in first:
                    first[dim_id] = dim
        return cls(first)

    def with_events_unreadable(self, unreadable: bool) -> RecordView:
        """The same view, saying whether ``events.jsonl`` was absent or empty."""
        return replace(self, events_unreadable=unreadable)

    def has(self, dim_id: str) -> bool:
        """Whether the record holds a dimension ``dim_id``."""
        return dim_id in self.first_by_id

    def evidence(self, dim_id: str) -> str | None:
        """Evidence of a dimension: ``None`` when absent, ``""`` when not a string.

        A dimension present without string evidence is blind: its reader then records a parse
        miss.
        """
        dim = self.first_by_id.get(dim_id)
        if dim is None:
            return None
        evidence = dim.get("evidence")
        return evidence if isinstance(evidence, str) else ""

    def status(self, dim_id: str) -> Any:
        """The status of dimension ``dim_id`` (None when absent)."""
        dim = self.first_by_id.get(dim_id)
        return None if dim is None else dim.get("status")


@dataclass(frozen=True)
class Reading:
    """What one dimension's evidence says for the judge facts.

    ``facts`` maps fact keys to values (``None``: no such number on this branch); ``misses``
    are parse misses (``{"fact", "dimension", "reason"}``); ``contradictions`` are ways the
    record disagrees with itself that this reader sees; ``contaminated`` is whether this
    dimension reports a peer-contaminated window (``None``: it says nothing about peers).
    """

    facts: Mapping[str, Any] = field(default_factory=dict)
    misses: tuple[Mapping[str, str], ...] = ()
    contradictions: tuple[str, ...] = ()
    contaminated: bool | None = None


_T = TypeVar("_T")


class Misses:
    """Collects one dimension's parse misses while its reader runs."""

    def __init__(self, dimension: str) -> None:
        self.dimension = str(dimension)  # a DimensionId member: facts carry the plain id
        self.items: list[Mapping[str, str]] = []

    def add(self, fact: str, reason: str) -> None:
        """Record that ``fact`` could not be read, and why."""
        self.items.append({"fact": fact, "dimension": self.dimension, "reason": reason})

    def required(self, value: _T | None, fact: str, reason: str) -> _T | None:
        """``value``; when it is ``None`` (a branch matched but its reading failed), a miss."""
        if value is None:
            self.add(fact, reason)
        return value
