"""rubric-v2: six deterministic dimensions (``rubrics/rubric-v2.md``), frozen.

Against v1: process-safety grades only ``agent_summary.spiral``; the guard counts moved to the
reported-only ``guard-friction`` dimension, attributed by raw session id through the dual
stamp, with the time window as the documented fallback. It reads the whole rotated events
history and notes an incomplete read (LEDGER INCOMPLETE) on its event-derived dimensions.
verification-evidence, plan-fidelity, gate-health and efficiency-kpis are v1's formulas word for
word, so this table lists their ``V1`` specs.

How it stays frozen: like :mod:`evalkit.rubrics.v1`, this table names each dimension's spec;
``tests/test_rubric_frozen.py`` pins which scorer each row names and every template byte for
byte, and the conformance vectors pin every v2 record. A rubric-v3 is a new table (a new module
and one line of the registry); adding a dimension to it is one new module plus one line there.
"""

from __future__ import annotations

from typing import Final, Literal

from evalkit.rubrics.dimensions import (
    efficiency_kpis,
    gate_health,
    guard_friction,
    plan_fidelity,
    process_safety,
    verification_evidence,
)
from evalkit.rubrics.dimensions.spec import DimensionSpec

__all__ = ["DIMENSIONS", "EVENT_READING", "VERSION"]

VERSION: Final = "rubric-v2"
EVENT_READING: Final[Literal["rotation"]] = "rotation"

#: The rubric's table, in canonical order.
DIMENSIONS: tuple[DimensionSpec, ...] = (
    verification_evidence.V1,
    plan_fidelity.V1,
    gate_health.V1,
    process_safety.V2,
    guard_friction.V2,
    efficiency_kpis.V1,
)
