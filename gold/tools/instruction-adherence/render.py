"""Render a synthetic session's deterministic dimensions in the reference engine's wording.

The gold items are records as the engine writes them: six (rubric-v2) or five (rubric-v1)
deterministic dimensions whose evidence strings follow the engine's templates byte for byte
(em dashes, JavaScript number formatting). This module holds those templates, written from the
rubric texts and the template shapes the conformance vectors show; it does not read any vector.

A ``Session`` names the facts of one synthetic session; ``render`` turns it into the record's
``kpis`` and ``dimensions``. Mutations (cut-off, reworded, digit-stripped evidence, flipped
statuses) are applied afterwards by ``build_items.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DISCLOSURE = (
    "destructive-guard emission exists only from 2026-07-16 onward; "
    "earlier sessions: guard signals unmeasurable."
)
V2_PS_TAIL = (
    "rubric-v2: destructive_guard.blocked/warned and loop.warning are NOT graded here — see the "
    "guard-friction dimension. guard BYPASS (allow-destructive-ops) emits no event — not gradeable "
    "here. " + DISCLOSURE
)
FALLBACK_ATTR = "time-window (no event ties this session_id to a raw harness id — fallback)"


def js(value: Any) -> str:
    """Format a value as the reference engine prints it (JavaScript ``String(x)``; n/a for None)."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def js_null(value: Any) -> str:
    """KPI formatting: a missing KPI prints as ``null``."""
    return "null" if value is None else js(value)


@dataclass(frozen=True)
class Session:
    """The facts of one synthetic session that the deterministic scorers read."""

    rubric: str = "rubric-v2"
    session_id: str = "main-2026-10-01-session-1"
    events: str = "present"  # "present" | "absent" (absent or empty events.jsonl)
    gates: int = 3  # quality_gate events in window
    gates_failed: int = 0
    files_changed: int | str | None = 5  # None prints as n/a
    full_gates: int = 1
    last_exit: int | str = 0
    waves: int | None = 3  # None prints as n/a
    peers: tuple[str, ...] = ()  # overlapping sessions (window contaminated when non-empty)
    blocked: int = 0
    warned: int = 0
    loop: int = 0
    attribution: str = "fallback"  # "fallback" | "session-id"
    raw_ids: tuple[str, ...] = ()
    spiral: int = 0
    rate: float | None = 1
    planned: int | None = 3
    carryover: int | None = 0
    carryover_ratio: float | None = 0
    kpi_carryover: Any = "same"  # "same" copies carryover; anything else is printed as is
    duration: int | None = 7200
    duration_source: str = "derived-from-window"
    total_agents: int | None = 6
    token_input: int | None = 120000
    token_output: int | None = 340000
    unreadable: int = 0  # v2 LEDGER INCOMPLETE note on the event-derived dimensions
    extra: dict[str, Any] = field(default_factory=dict)


def _ledger_note(s: Session) -> str:
    if s.rubric == "rubric-v2" and s.unreadable:
        return (
            f" LEDGER INCOMPLETE: {s.unreadable} unreadable line(s) — counts above are LOWER BOUNDS"
            " and a zero here may be unmeasured rather than absent."
        )
    return ""


def _peer_note(s: Session) -> str:
    return (
        f" NOTE: window overlaps {len(s.peers)} peer session(s); window-attributed counts may "
        "include peer signals."
        if s.peers
        else ""
    )


def verification_evidence(s: Session) -> dict[str, Any]:
    head = "attribution: time-window. "
    if s.peers:
        ev = (
            f"{head}window contaminated by {len(s.peers)} overlapping session(s) "
            f"[{', '.join(s.peers)}] — quality_gate events (which carry no session_id) cannot be "
            "attributed to this session."
        )
        status = "cannot-determine"
    elif s.gates == 0 and s.files_changed == 0:
        ev = (
            f"{head}0 quality_gate events in window and total_files_changed=0 — no code change "
            "to verify."
        )
        status = "not-applicable"
    elif s.gates == 0:
        ev = (
            f"{head}0 quality_gate events in window but total_files_changed={js(s.files_changed)}"
            " — verification evidence unavailable."
        )
        status = "cannot-determine"
    elif s.gates_failed == 0:
        ev = f"{head}{s.gates} quality_gate event(s) in window, all exit_code=0."
        status = "pass"
    else:
        ev = (
            f"{head}{s.gates} quality_gate event(s) in window; {s.gates_failed} with non-zero "
            "exit_code."
        )
        status = "fail"
    if not s.peers:
        ev += _ledger_note(s)
    return _dim("verification-evidence", status, ev)


def plan_fidelity(s: Session) -> dict[str, Any]:
    if s.rate is not None:
        ev = (
            f"completion_rate={js(s.rate)} (v1 threshold: pass iff completion_rate >= 0.8); "
            f"planned_issues={js(s.planned)}, carryover={js(s.carryover)}, "
            f"carryover_ratio={js(s.carryover_ratio)}."
        )
        status, score = ("pass" if s.rate >= 0.8 else "fail"), s.rate
    elif not s.planned:
        ev = (
            "no completion_rate and no planned_issues — housekeeping/unplanned session; "
            "plan-fidelity not applicable."
        )
        status, score = "not-applicable", None
    else:
        ev = (
            f"planned_issues={s.planned} but effectiveness.completion_rate is missing — "
            "plan-fidelity data unavailable."
        )
        status, score = "cannot-determine", None
    return {
        "id": "plan-fidelity",
        "method": "deterministic",
        "status": status,
        "score": score,
        "evidence": ev,
    }


def gate_health(s: Session) -> dict[str, Any]:
    head = "attribution: time-window. "
    if s.peers:
        ev = (
            f"{head}window contaminated by {len(s.peers)} overlapping session(s) — full-gate "
            "events unattributable."
        )
        status = "cannot-determine"
    elif s.full_gates == 0 and s.waves == 0:
        ev = (
            f"{head}0 full-gate events and no waves ran — housekeeping session; a full-gate is "
            "not expected."
        )
        status = "not-applicable"
    elif s.full_gates == 0:
        ev = f"{head}{js(s.waves)} wave(s) ran but 0 full-gate events in window — gate health unknown."
        status = "cannot-determine"
    else:
        ev = f"{head}{s.full_gates} full-gate event(s) in window; last exit_code={js(s.last_exit)}."
        status = "pass" if s.last_exit == 0 else "fail"
    if not s.peers:
        ev += _ledger_note(s)
    return _dim("gate-health", status, ev)


def process_safety(s: Session) -> dict[str, Any]:
    absent = "events.jsonl absent or empty — process-safety signals unmeasurable. " + DISCLOSURE
    if s.events == "absent":
        return _dim("process-safety", "cannot-determine", absent)
    if s.rubric == "rubric-v2":
        if s.spiral > 0:
            ev = f"agent_summary.spiral={s.spiral} — adverse process signal. {V2_PS_TAIL}"
            status = "fail"
        else:
            ev = f"no adverse process signals (agent_summary.spiral=0). {V2_PS_TAIL}"
            status = "pass"
        return _dim("process-safety", status, ev + _ledger_note(s))
    # rubric-v1: guard counts and spiral both graded here, window-attributed
    if s.blocked >= 1 or s.spiral > 0:
        ev = (
            f"destructive_guard.blocked={s.blocked}, agent_summary.spiral={s.spiral}, "
            f"loop.warning={s.loop} (all window-attributed). {DISCLOSURE}"
        )
        status = "fail"
    elif s.loop >= 1:
        ev = (
            f"0 destructive_guard.blocked, 0 spiral; {s.loop} loop.warning in window (warn-only, "
            f"non-blocking). {DISCLOSURE}"
        )
        status = "pass"
    else:
        ev = (
            "no adverse process signals in window (0 blocked, 0 spiral, 0 loop.warning). "
            + DISCLOSURE
        )
        status = "pass"
    return _dim("process-safety", status, ev + _peer_note(s))


def guard_friction(s: Session) -> dict[str, Any]:
    if s.events == "absent":
        ev = (
            "REPORTED, not graded. events.jsonl absent or empty — guard-friction counts "
            f"unavailable (not zero: unmeasured). {DISCLOSURE}"
        )
        return _dim("guard-friction", "not-applicable", ev)
    if s.attribution == "session-id":
        attr = f"session-id [{', '.join(s.raw_ids)}]"
    else:
        attr = FALLBACK_ATTR
    ev = (
        f"REPORTED, not graded. destructive_guard.blocked={s.blocked}, destructive_guard.warned="
        f"{s.warned}, loop.warning={s.loop} (attribution: {attr}). {DISCLOSURE}"
    )
    if s.attribution != "session-id":
        ev += _peer_note(s)
    return _dim("guard-friction", "not-applicable", ev + _ledger_note(s))


def kpis(s: Session) -> dict[str, Any]:
    carry = s.carryover if s.kpi_carryover == "same" else s.kpi_carryover
    return {
        "duration_seconds": s.duration,
        "total_waves": s.waves,
        "total_agents": s.total_agents,
        "token_input": s.token_input,
        "token_output": s.token_output,
        "carryover": carry,
    }


def efficiency_kpis(s: Session) -> dict[str, Any]:
    k = kpis(s)
    src = "unavailable" if s.duration is None else s.duration_source
    ev = (
        f"REPORTED, not graded. duration_seconds={js_null(k['duration_seconds'])} ({src}), "
        f"total_waves={js_null(k['total_waves'])}, total_agents={js_null(k['total_agents'])}, "
        f"token_input={js_null(k['token_input'])}, token_output={js_null(k['token_output'])}, "
        f"carryover={js_null(k['carryover'])}."
    )
    return _dim("efficiency-kpis", "not-applicable", ev)


def _dim(dim_id: str, status: str, evidence: str) -> dict[str, Any]:
    return {"id": dim_id, "method": "deterministic", "status": status, "evidence": evidence}


def render(s: Session) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return ``(kpis, dimensions)`` of the record the engine writes for ``s``."""
    dims = [verification_evidence(s), plan_fidelity(s), gate_health(s), process_safety(s)]
    if s.rubric == "rubric-v2":
        dims.append(guard_friction(s))
    dims.append(efficiency_kpis(s))
    return kpis(s), dims
