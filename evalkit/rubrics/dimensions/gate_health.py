"""``gate-health``: was the LAST full-gate in the session's window green?

Source: ``full-gate`` quality_gate events attributed by time window, and ``total_waves`` /
``waves`` (a session where no waves ran is not expected to run a full gate).

Versions. rubric-v1 defined the formula and its clarification (coordinator-direct Housekeeping
waves count as no waves, :func:`no_waves_ran`), :func:`score_v1`; rubric-v2 adopts both word
for word, so both version tables list :data:`V1`. How v1 stays frozen: a rubric that changes
this dimension adds ``score_v3``/``V3`` and its own templates beside these and lists ``V3`` in
its own table; :func:`score_v1` and the templates below stay as they are, pinned byte for byte
by ``tests/test_rubric_frozen.py`` (and every v1/v2 record by the conformance vectors).

Judge facts: ``full_gate_runs`` and ``last_full_gate_exit``, both ``None`` without a parse miss
under the third state (their source, ``events.jsonl``, was absent or empty).
"""

from __future__ import annotations

import re
from typing import Any, Final

from evalkit.js.values import get, is_number, js_string
from evalkit.record.dimension import Dimension, DimensionId, Method, Status
from evalkit.record.scoring_context import ScoringContext
from evalkit.rubrics.dimensions.reading import (
    NO_TEMPLATE,
    Misses,
    Number,
    Reading,
    RecordView,
    first_number,
)
from evalkit.rubrics.dimensions.shared import (
    TIME_WINDOW,
    or_na,
    read_window_contaminated,
    window_contaminated,
)
from evalkit.rubrics.dimensions.spec import DimensionSpec, FactsReader

__all__ = [
    "FACTS",
    "ID",
    "TEMPLATES",
    "V1",
    "contaminated",
    "housekeeping",
    "is_coordinator_direct_housekeeping",
    "last",
    "no_waves_ran",
    "read_contaminated",
    "read_facts",
    "read_last_exit",
    "read_runs",
    "read_zero",
    "score_v1",
    "unknown",
]

ID: Final = DimensionId.GATE_HEALTH
_DET = Method.DETERMINISTIC
_A = re.ASCII

# -- evidence templates ------------------------------------------------------------------------


def contaminated(peer_count: int) -> str:
    """Evidence: peers overlap the window, so full-gate events are unattributable."""
    return f"{TIME_WINDOW} {window_contaminated(peer_count)} — full-gate events unattributable."


def housekeeping() -> str:
    """Evidence: no full-gate and no waves ran (not applicable)."""
    return (
        f"{TIME_WINDOW} 0 full-gate events and no waves ran — housekeeping session; "
        "a full-gate is not expected."
    )


def unknown(total_waves: Any) -> str:
    """Evidence: waves ran but no full-gate event lies in the window."""
    return (
        f"{TIME_WINDOW} {or_na(total_waves)} wave(s) ran but 0 full-gate events in window — "
        "gate health unknown."
    )


def last(full_gates: int, last_exit_code: Any) -> str:
    """Evidence: the full-gate events in the window and the last one's exit code."""
    return (
        f"{TIME_WINDOW} {full_gates} full-gate event(s) in window; "
        f"last exit_code={js_string(last_exit_code)}."
    )


TEMPLATES = (contaminated, housekeeping, unknown, last)

# -- readers -------------------------------------------------------------------------------------

# last: "N full-gate event(s) in window; last exit_code=X."
_RUNS = re.compile(r"(?<![0-9])(\d+) full-gate event\(s\) in window", _A)
_LAST_EXIT = re.compile(r"last exit_code=(-?\d+)", _A)
# housekeeping ("0 full-gate events and no waves ran") and unknown ("... but 0 full-gate
# events in window")
_ZERO = re.compile(r"0 full-gate events (?:in window|and no waves ran)", _A)


def read_contaminated(text: str) -> bool:
    """Reader of :func:`contaminated`."""
    return read_window_contaminated(text)


def read_runs(text: str) -> Number | None:
    """Reader of :func:`last`: the full-gate count."""
    return first_number(_RUNS, text)


def read_last_exit(text: str) -> Number | None:
    """Reader of :func:`last`: the last full gate's exit code."""
    return first_number(_LAST_EXIT, text)


def read_zero(text: str) -> bool:
    """Reader of the two 0-full-gate branches (:func:`housekeeping`, :func:`unknown`)."""
    return _ZERO.search(text) is not None


# -- scorer --------------------------------------------------------------------------------------


def is_coordinator_direct_housekeeping(record: object) -> bool:
    """All waves are coordinator-direct ``Housekeeping`` waves (the #1321 writer shape)."""
    waves = get(record, "waves")
    return (
        isinstance(waves, list)
        and len(waves) > 0
        and all(
            get(w, "role") == "Housekeeping" and get(w, "coordinator_direct") is True for w in waves
        )
    )


def no_waves_ran(record: object) -> bool:
    """Whether no waves ran (the rubric's clarification; never session_type).

    ``total_waves === 0``, ``waves`` missing/not an array/empty, or all waves
    coordinator-direct Housekeeping.
    """
    total = get(record, "total_waves")
    waves = get(record, "waves")
    if is_number(total) and total == 0:
        return True
    if not isinstance(waves, list) or len(waves) == 0:
        return True
    return is_coordinator_direct_housekeeping(record)


def score_v1(ctx: ScoringContext) -> Dimension:
    """rubric-v1 (and v2): the rubric's table top to bottom; the first row that applies decides."""
    if ctx.peer.count > 0:
        return Dimension(ID, _DET, Status.CANNOT_DETERMINE, contaminated(ctx.peer.count))
    full = ctx.full_gates
    if full.count == 0:
        if no_waves_ran(ctx.record):
            return Dimension(ID, _DET, Status.NOT_APPLICABLE, housekeeping())
        total = get(ctx.record, "total_waves")
        text = unknown(total if is_number(total) else None)
        return Dimension(ID, _DET, Status.CANNOT_DETERMINE, text)
    exit_code = full.last_exit_code
    status = Status.PASS if is_number(exit_code) and exit_code == 0 else Status.FAIL
    return Dimension(ID, _DET, status, last(full.count, exit_code))


# -- judge facts ---------------------------------------------------------------------------------


def read_facts(view: RecordView) -> Reading:
    """``full_gate_runs`` and ``last_full_gate_exit``."""
    text = view.evidence(ID)
    if text is None:
        return Reading()
    is_contaminated = read_contaminated(text)
    if view.events_unreadable or is_contaminated:
        # Contaminated: unattributable by construction. Third state: the source was never
        # readable. Either way no number exists, and no reader went blind.
        return Reading(
            {"full_gate_runs": None, "last_full_gate_exit": None}, contaminated=is_contaminated
        )
    misses = Misses(ID)
    runs = read_runs(text)
    exit_code: Number | None = None
    if runs is not None:
        exit_code = misses.required(
            read_last_exit(text),
            "last_full_gate_exit",
            "the ≥1-full-gate branch matched but carried no exit code",
        )
    elif read_zero(text):
        runs = 0
    else:
        misses.add("full_gate_runs", NO_TEMPLATE)
    return Reading(
        {"full_gate_runs": runs, "last_full_gate_exit": exit_code},
        tuple(misses.items),
        contaminated=False,
    )


FACTS = FactsReader(ID, ("full_gate_runs", "last_full_gate_exit"), read_facts)

#: gate-health as rubric-v1 scores it (rubric-v2 adopts it verbatim).
V1 = DimensionSpec(ID, score_v1, TEMPLATES, FACTS, event_derived=True)
