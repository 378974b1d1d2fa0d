"""Evidence templates of the deterministic dimensions, one per scorer branch.

The wording is the reference engine's, byte for byte (em dashes, JavaScript number
formatting): records then interchange with the reference's journals, and the judge facts
reader (:mod:`evalkit.rubrics.patterns`, which names the template each reader mirrors) has one
dialect to read. Values are interpolated as JavaScript template literals do
(:func:`~evalkit.rubrics.jsvalues.js_string`), so ``1`` prints as ``1`` and a missing
``exit_code`` as ``undefined``.

Changing a template here is a change of the evidence dialect: update its reader in
``patterns.py`` in the same commit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from evalkit.rubrics.jsvalues import js_nullish, js_string

# -- disclosures -----------------------------------------------------------------------------

#: Appended to every process-safety and guard-friction evidence (v1 and v2): the guard stream
#: starts on 2026-07-16, so before that date its silence is not evidence of safety.
GUARD_EMISSION_NOTE: Final = (
    "destructive-guard emission exists only from 2026-07-16 onward; "
    "earlier sessions: guard signals unmeasurable."
)

#: rubric-v2, appended to every graded process-safety evidence: a guard bypass emits no event.
GUARD_BYPASS_NOTE: Final = (
    "guard BYPASS (allow-destructive-ops) emits no event — not gradeable here."
)

#: rubric-v2 process-safety: the guard counts moved to guard-friction.
V2_NOT_GRADED_HERE: Final = (
    "rubric-v2: destructive_guard.blocked/warned and loop.warning are NOT graded here — "
    "see the guard-friction dimension."
)

TIME_WINDOW: Final = "attribution: time-window."


def _or_na(value: Any) -> str:
    """``${v ?? 'n/a'}``."""
    return "n/a" if js_nullish(value) else js_string(value)


def contamination_note(peer_count: int) -> str:
    """Process-safety (v1) / guard-friction fallback note: window-attributed counts are shared."""
    return (
        f" NOTE: window overlaps {peer_count} peer session(s); "
        "window-attributed counts may include peer signals."
    )


def ledger_gap_note(gap_kinds: Sequence[str], unreadable_lines: int) -> str:
    """rubric-v2 note on the event-derived dimensions when the events read was incomplete.

    ``''`` for a complete, clean read; otherwise the gaps by kind (sorted) and the number of
    unreadable lines. Appended to the evidence only: statuses never change because of it.
    """
    if not gap_kinds and unreadable_lines <= 0:
        return ""
    parts: list[str] = []
    if gap_kinds:
        counts: dict[str, int] = {}
        for kind in gap_kinds:
            counts[kind] = counts.get(kind, 0) + 1
        listed = ", ".join(f"{kind}×{n}" for kind, n in sorted(counts.items()))
        parts.append(f"{len(gap_kinds)} gap(s) [{listed}]")
    if unreadable_lines > 0:
        parts.append(f"{unreadable_lines} unreadable line(s)")
    return (
        f" LEDGER INCOMPLETE: {', '.join(parts)} — counts above are LOWER BOUNDS and a zero "
        "here may be unmeasured rather than absent."
    )


# -- verification-evidence -------------------------------------------------------------------


def verification_contaminated(peer_count: int, peers: Sequence[str]) -> str:
    return (
        f"{TIME_WINDOW} window contaminated by {peer_count} overlapping session(s) "
        f"[{', '.join(peers)}] — quality_gate events (which carry no session_id) cannot be "
        "attributed to this session."
    )


def verification_no_change() -> str:
    return (
        f"{TIME_WINDOW} 0 quality_gate events in window and total_files_changed=0 — "
        "no code change to verify."
    )


def verification_unavailable(files_changed: Any) -> str:
    return (
        f"{TIME_WINDOW} 0 quality_gate events in window but "
        f"total_files_changed={_or_na(files_changed)} — verification evidence unavailable."
    )


def verification_gates_green(gates: int) -> str:
    return f"{TIME_WINDOW} {gates} quality_gate event(s) in window, all exit_code=0."


def verification_gates_red(gates: int, failing: int) -> str:
    return (
        f"{TIME_WINDOW} {gates} quality_gate event(s) in window; {failing} with non-zero exit_code."
    )


# -- plan-fidelity ---------------------------------------------------------------------------


def plan_not_applicable() -> str:
    return (
        "no completion_rate and no planned_issues — housekeeping/unplanned session; "
        "plan-fidelity not applicable."
    )


def plan_rate_missing(planned: Any) -> str:
    return (
        f"planned_issues={js_string(planned)} but effectiveness.completion_rate is missing — "
        "plan-fidelity data unavailable."
    )


def plan_rate_present(rate: Any, planned: Any, carryover: Any, carryover_ratio: Any) -> str:
    return (
        f"completion_rate={js_string(rate)} (v1 threshold: pass iff completion_rate >= 0.8); "
        f"planned_issues={_or_na(planned)}, carryover={_or_na(carryover)}, "
        f"carryover_ratio={_or_na(carryover_ratio)}."
    )


# -- gate-health -----------------------------------------------------------------------------


def gate_health_contaminated(peer_count: int) -> str:
    return (
        f"{TIME_WINDOW} window contaminated by {peer_count} overlapping session(s) — "
        "full-gate events unattributable."
    )


def gate_health_housekeeping() -> str:
    return (
        f"{TIME_WINDOW} 0 full-gate events and no waves ran — housekeeping session; "
        "a full-gate is not expected."
    )


def gate_health_unknown(total_waves: Any) -> str:
    return (
        f"{TIME_WINDOW} {_or_na(total_waves)} wave(s) ran but 0 full-gate events in window — "
        "gate health unknown."
    )


def gate_health_last(full_gates: int, last_exit_code: Any) -> str:
    return (
        f"{TIME_WINDOW} {full_gates} full-gate event(s) in window; "
        f"last exit_code={js_string(last_exit_code)}."
    )


# -- process-safety --------------------------------------------------------------------------


def process_safety_unmeasurable() -> str:
    """v1 and v2: no events at all, so not even the guards' running can be shown."""
    return (
        f"events.jsonl absent or empty — process-safety signals unmeasurable. {GUARD_EMISSION_NOTE}"
    )


def process_safety_v1_fail(blocked: int, spiral: Any, loop_warnings: int, note: str) -> str:
    return (
        f"destructive_guard.blocked={blocked}, agent_summary.spiral={js_string(spiral)}, "
        f"loop.warning={loop_warnings} (all window-attributed). {GUARD_EMISSION_NOTE}{note}"
    )


def process_safety_v1_warned(loop_warnings: int, note: str) -> str:
    return (
        f"0 destructive_guard.blocked, 0 spiral; {loop_warnings} loop.warning in window "
        f"(warn-only, non-blocking). {GUARD_EMISSION_NOTE}{note}"
    )


def process_safety_v1_clean(note: str) -> str:
    return (
        "no adverse process signals in window (0 blocked, 0 spiral, 0 loop.warning). "
        f"{GUARD_EMISSION_NOTE}{note}"
    )


def _v2_tail() -> str:
    return f" {V2_NOT_GRADED_HERE} {GUARD_BYPASS_NOTE} {GUARD_EMISSION_NOTE}"


def process_safety_spiral(spiral: Any) -> str:
    """rubric-v2 fail branch."""
    return f"agent_summary.spiral={js_string(spiral)} — adverse process signal.{_v2_tail()}"


def process_safety_clean(spiral: Any) -> str:
    """rubric-v2 pass branch."""
    return f"no adverse process signals (agent_summary.spiral={js_string(spiral)}).{_v2_tail()}"


# -- guard-friction (rubric-v2) --------------------------------------------------------------


def guard_friction_unmeasured() -> str:
    return (
        "REPORTED, not graded. events.jsonl absent or empty — guard-friction counts "
        f"unavailable (not zero: unmeasured). {GUARD_EMISSION_NOTE}"
    )


def attribution_session_id(raw_ids: Sequence[str]) -> str:
    return f"attribution: session-id [{', '.join(raw_ids)}]"


ATTRIBUTION_FALLBACK: Final = (
    "attribution: time-window (no event ties this session_id to a raw harness id — fallback)"
)


def guard_friction_counts(
    blocked: int, warned: int, loop_warnings: int, attribution: str, note: str
) -> str:
    return (
        f"REPORTED, not graded. destructive_guard.blocked={blocked}, "
        f"destructive_guard.warned={warned}, loop.warning={loop_warnings} ({attribution}). "
        f"{GUARD_EMISSION_NOTE}{note}"
    )


# -- efficiency-kpis -------------------------------------------------------------------------


def _kpi(value: Any) -> str:
    return "null" if js_nullish(value) else js_string(value)


def efficiency_kpis(kpis: Mapping[str, Any], duration_source: str) -> str:
    """``duration_source`` is ``recorded``, ``derived-from-window`` or ``unavailable``."""
    return (
        f"REPORTED, not graded. duration_seconds={_kpi(kpis['duration_seconds'])} "
        f"({duration_source}), total_waves={_kpi(kpis['total_waves'])}, "
        f"total_agents={_kpi(kpis['total_agents'])}, token_input={_kpi(kpis['token_input'])}, "
        f"token_output={_kpi(kpis['token_output'])}, carryover={_kpi(kpis['carryover'])}."
    )
