"""The frozen scoring context every scorer reads.

It sits below the rubrics: the engine builds it and the record carries its KPI block, so
neither needs the rubric registry to name a KPI.

The engine measures the ledger once per session (window membership, peer overlap, event
counts, guard attribution, KPIs) and hands the scorers this context; the scorers are then pure
functions of it. Both paths of the engine (one session at a time, and the batch over a whole
ledger) build the same context, so the verdicts cannot differ between them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from evalkit.js.numbers import json_number

__all__ = [
    "FullGates",
    "GuardCounts",
    "Kpis",
    "PeerOverlap",
    "QualityGates",
    "ScoringContext",
    "Window",
]


@dataclass(frozen=True)
class Window:
    """A session's wall-clock window in epoch milliseconds, both ends inclusive."""

    start: float
    end: float

    def contains(self, t: float) -> bool:
        """Whether ``t`` lies in the window (both ends included)."""
        return self.start <= t <= self.end

    def overlaps(self, other: Window) -> bool:
        """Strict overlap: windows that only touch at a boundary do not overlap."""
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class PeerOverlap:
    """Other sessions whose windows overlap this one (ids in ledger order)."""

    peers: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        """How many peer sessions overlap the window."""
        return len(self.peers)


@dataclass(frozen=True)
class QualityGates:
    """``quality_gate`` events in the window: how many, how many with ``exit_code !== 0``."""

    count: int = 0
    failing: int = 0


@dataclass(frozen=True)
class FullGates:
    """``full-gate`` quality_gate events in the window and the last one's ``exit_code``.

    "Last" is by timestamp; on equal timestamps the earlier event of the ledger wins.
    ``last_exit_code`` is the raw JSON value (``UNDEFINED`` when the key is missing).
    """

    count: int = 0
    last_exit_code: Any = None


@dataclass(frozen=True)
class GuardCounts:
    """Guard and loop events attributed to the session, and how they were attributed."""

    blocked: int = 0
    warned: int = 0
    loop_warning: int = 0
    attribution: Literal["session-id", "time-window"] = "time-window"


KPI_KEYS: tuple[str, ...] = (
    "duration_seconds",
    "total_waves",
    "total_agents",
    "token_input",
    "token_output",
    "carryover",
)


@dataclass(frozen=True)
class Kpis:
    """The record's KPI block; ``None`` is unknown, never a guessed 0.

    Values are kept as read (a JSON number past double range is ``inf``, a hand-edited ledger
    may hold ``-3``) because the evidence quotes them as the reference engine does. The
    record's ``kpis`` block (:meth:`to_dict`) holds measurements only: a non-finite or negative
    number is not one and is written as ``None`` (SPEC section 2: finite non-negative or null).
    """

    duration_seconds: float | int | None
    duration_source: Literal["recorded", "derived-from-window", "unavailable"]
    total_waves: float | int | None
    total_agents: float | int | None
    token_input: float | int | None
    token_output: float | int | None
    carryover: float | int | None

    def raw(self) -> dict[str, Any]:
        """The six KPIs as read (non-finite and negative values kept)."""
        return {key: getattr(self, key) for key in KPI_KEYS}

    def to_dict(self) -> dict[str, Any]:
        """The record's ``kpis`` block: finite non-negative numbers, else ``None``.

        Numbers are written as JSON.stringify writes them (:func:`~evalkit.js.numbers.json_number`).
        """
        out: dict[str, Any] = {}
        for key, value in self.raw().items():
            if value is not None and (not math.isfinite(value) or value < 0):
                value = None
            out[key] = json_number(value)
        return out


@dataclass(frozen=True)
class ScoringContext:
    """Everything a deterministic scorer may read about one resolved session.

    ``events_present`` is the honesty gate of process-safety and guard-friction: false when
    the events ledger is absent or holds no readable event. ``window_guards`` are the guard
    counts inside the time window (rubric-v1); ``attributed_guards`` are rubric-v2's counts,
    by raw session id when the dual stamp resolves one, else by time window.
    ``ledger_note`` is the rubric-v2 LEDGER INCOMPLETE note ('' for a complete read).
    """

    record: Mapping[str, Any]
    window: Window | None
    peer: PeerOverlap
    events_present: bool
    quality_gates: QualityGates
    full_gates: FullGates
    window_guards: GuardCounts
    attributed_guards: GuardCounts
    raw_session_ids: tuple[str, ...]
    kpis: Kpis
    ledger_note: str = ""
