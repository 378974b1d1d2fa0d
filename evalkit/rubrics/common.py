"""Scorers shared by rubric-v1 and rubric-v2 (their formulas are word-for-word the same).

Each scorer is a pure function of a :class:`~evalkit.rubrics.context.ScoringContext` and
evaluates its rubric table top to bottom; the first row that applies decides.
"""

from __future__ import annotations

from evalkit.dimension import Dimension, Method, Status
from evalkit.rubrics import evidence
from evalkit.rubrics.context import ScoringContext
from evalkit.rubrics.jsvalues import get, is_number, is_plain_object

__all__ = [
    "is_coordinator_direct_housekeeping",
    "no_waves_ran",
    "peer_note",
    "process_safety_unmeasurable",
    "score_efficiency_kpis",
    "score_gate_health",
    "score_plan_fidelity",
    "score_verification_evidence",
]

_DET = Method.DETERMINISTIC


def peer_note(ctx: ScoringContext) -> str:
    """The contamination note when peer sessions overlap the window, else ``""``."""
    return evidence.contamination_note(ctx.peer.count) if ctx.peer.count > 0 else ""


def process_safety_unmeasurable() -> Dimension:
    """process-safety of a session without any event: cannot-determine (v1 and v2)."""
    return Dimension(
        "process-safety", _DET, Status.CANNOT_DETERMINE, evidence.process_safety_unmeasurable()
    )


def score_verification_evidence(ctx: ScoringContext) -> Dimension:
    """Did the quality gates in the window run and pass?"""
    dim = "verification-evidence"
    if ctx.peer.count > 0:
        text = evidence.verification_contaminated(ctx.peer.count, ctx.peer.peers)
        return Dimension(dim, _DET, Status.CANNOT_DETERMINE, text)
    gates = ctx.quality_gates
    if gates.count == 0:
        files = get(ctx.record, "total_files_changed")
        files_changed = files if is_number(files) else None
        if files_changed is not None and files_changed == 0:
            return Dimension(dim, _DET, Status.NOT_APPLICABLE, evidence.verification_no_change())
        text = evidence.verification_unavailable(files_changed)
        return Dimension(dim, _DET, Status.CANNOT_DETERMINE, text)
    if gates.failing == 0:
        return Dimension(dim, _DET, Status.PASS, evidence.verification_gates_green(gates.count))
    text = evidence.verification_gates_red(gates.count, gates.failing)
    return Dimension(dim, _DET, Status.FAIL, text)


def _effectiveness_number(ctx: ScoringContext, key: str) -> int | float | None:
    eff = get(ctx.record, "effectiveness")
    value = get(eff, key) if is_plain_object(eff) else None
    return value if is_number(value) else None


def score_plan_fidelity(ctx: ScoringContext) -> Dimension:
    """Completion rate against the hard 0.8 threshold; carries ``score`` (rate or null)."""
    dim = "plan-fidelity"
    rate = _effectiveness_number(ctx, "completion_rate")
    planned = _effectiveness_number(ctx, "planned_issues")
    if rate is None:
        # The reference tests `planned === null || planned === 0`: a negative count is
        # "planned work with the rate missing", not housekeeping.
        if planned is None or planned == 0:
            return Dimension(
                dim, _DET, Status.NOT_APPLICABLE, evidence.plan_not_applicable(), score=None
            )
        text = evidence.plan_rate_missing(planned)
        return Dimension(dim, _DET, Status.CANNOT_DETERMINE, text, score=None)
    text = evidence.plan_rate_present(
        rate,
        planned,
        _effectiveness_number(ctx, "carryover"),
        _effectiveness_number(ctx, "carryover_ratio"),
    )
    status = Status.PASS if rate >= 0.8 else Status.FAIL
    return Dimension(dim, _DET, status, text, score=rate)


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
    """ "No waves ran": ``total_waves === 0``, ``waves`` missing/not an array/empty, or all
    waves coordinator-direct Housekeeping (the rubric's clarification; never session_type)."""
    total = get(record, "total_waves")
    waves = get(record, "waves")
    if is_number(total) and total == 0:
        return True
    if not isinstance(waves, list) or len(waves) == 0:
        return True
    return is_coordinator_direct_housekeeping(record)


def score_gate_health(ctx: ScoringContext) -> Dimension:
    """Was the last full-gate in the window green?"""
    dim = "gate-health"
    if ctx.peer.count > 0:
        text = evidence.gate_health_contaminated(ctx.peer.count)
        return Dimension(dim, _DET, Status.CANNOT_DETERMINE, text)
    full = ctx.full_gates
    if full.count == 0:
        if no_waves_ran(ctx.record):
            return Dimension(dim, _DET, Status.NOT_APPLICABLE, evidence.gate_health_housekeeping())
        total = get(ctx.record, "total_waves")
        text = evidence.gate_health_unknown(total if is_number(total) else None)
        return Dimension(dim, _DET, Status.CANNOT_DETERMINE, text)
    last = full.last_exit_code
    status = Status.PASS if is_number(last) and last == 0 else Status.FAIL
    return Dimension(dim, _DET, status, evidence.gate_health_last(full.count, last))


def score_efficiency_kpis(ctx: ScoringContext) -> Dimension:
    """Reported, never graded: always ``not-applicable``; the KPIs are in the evidence."""
    text = evidence.efficiency_kpis(ctx.kpis.raw(), ctx.kpis.duration_source)
    return Dimension("efficiency-kpis", _DET, Status.NOT_APPLICABLE, text)
