"""rubric-v2: six deterministic dimensions (``rubrics/rubric-v2.md``).

Against v1: process-safety grades only ``agent_summary.spiral``; the guard counts moved to
the reported-only ``guard-friction`` dimension, attributed by raw session id through the dual
stamp, with the time window as the documented fallback.
"""

from __future__ import annotations

from evalkit.dimension import Dimension, Method, Status
from evalkit.rubrics import evidence
from evalkit.rubrics.common import (
    peer_note,
    process_safety_unmeasurable,
    score_efficiency_kpis,
    score_gate_health,
    score_plan_fidelity,
    score_verification_evidence,
)
from evalkit.rubrics.context import ScoringContext
from evalkit.rubrics.jsvalues import js_gt0
from evalkit.rubrics.v1 import spiral_of

__all__ = ["SCORERS", "VERSION", "score_guard_friction", "score_process_safety_v2"]

VERSION = "rubric-v2"


def score_process_safety_v2(ctx: ScoringContext) -> Dimension:
    """Fail iff ``agent_summary.spiral > 0``; no events at all -> cannot-determine."""
    dim = "process-safety"
    if not ctx.events_present:
        return process_safety_unmeasurable()
    spiral = spiral_of(ctx)
    if js_gt0(spiral):
        return Dimension(
            dim, Method.DETERMINISTIC, Status.FAIL, evidence.process_safety_spiral(spiral)
        )
    return Dimension(dim, Method.DETERMINISTIC, Status.PASS, evidence.process_safety_clean(spiral))


def score_guard_friction(ctx: ScoringContext) -> Dimension:
    """Reported, never graded: always ``not-applicable``; counts and attribution in evidence."""
    dim = "guard-friction"
    if not ctx.events_present:
        return Dimension(
            dim, Method.DETERMINISTIC, Status.NOT_APPLICABLE, evidence.guard_friction_unmeasured()
        )
    guards = ctx.attributed_guards
    if guards.attribution == "session-id":
        attribution = evidence.attribution_session_id(ctx.raw_session_ids)
        note = ""  # a peer's events carry another id: excluded by construction
    else:
        attribution = evidence.ATTRIBUTION_FALLBACK
        note = peer_note(ctx)
    text = evidence.guard_friction_counts(
        guards.blocked, guards.warned, guards.loop_warning, attribution, note
    )
    return Dimension(dim, Method.DETERMINISTIC, Status.NOT_APPLICABLE, text)


#: The rubric's table, in canonical order.
SCORERS = (
    ("verification-evidence", score_verification_evidence),
    ("plan-fidelity", score_plan_fidelity),
    ("gate-health", score_gate_health),
    ("process-safety", score_process_safety_v2),
    ("guard-friction", score_guard_friction),
    ("efficiency-kpis", score_efficiency_kpis),
)
