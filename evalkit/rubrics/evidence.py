"""The evidence templates under their former names, re-exported from the dimension modules.

Each template now lives in its dimension's module (:mod:`evalkit.rubrics.dimensions`), beside
its reader. This module stays because the pre-registered texts (``rubrics/rubric-v1.md``,
``rubrics/rubric-v2.md``, hashed into every record and locked) name it as the home of the
evidence wording, and because callers outside :mod:`evalkit.rubrics` (some tests) still import
the old names; evalkit itself imports the dimension modules. Writers only: no reader of evidence
lives here.
"""

from __future__ import annotations

from evalkit.rubrics.dimensions import efficiency_kpis as _ek
from evalkit.rubrics.dimensions import gate_health as _gh
from evalkit.rubrics.dimensions import guard_friction as _gf
from evalkit.rubrics.dimensions import plan_fidelity as _pf
from evalkit.rubrics.dimensions import process_safety as _ps
from evalkit.rubrics.dimensions import verification_evidence as _ve
from evalkit.rubrics.dimensions.shared import (
    GUARD_EMISSION_NOTE,
    TIME_WINDOW,
    contamination_note,
    ledger_gap_note,
)

verification_contaminated = _ve.contaminated
verification_no_change = _ve.no_change
verification_unavailable = _ve.unavailable
verification_gates_green = _ve.gates_green
verification_gates_red = _ve.gates_red
plan_not_applicable = _pf.not_applicable
plan_rate_missing = _pf.rate_missing
plan_rate_present = _pf.rate_present
gate_health_contaminated = _gh.contaminated
gate_health_housekeeping = _gh.housekeeping
gate_health_unknown = _gh.unknown
gate_health_last = _gh.last
process_safety_unmeasurable = _ps.unmeasurable
process_safety_v1_fail = _ps.v1_fail
process_safety_v1_warned = _ps.v1_warned
process_safety_v1_clean = _ps.v1_clean
process_safety_spiral = _ps.v2_spiral
process_safety_clean = _ps.v2_clean
GUARD_BYPASS_NOTE = _ps.GUARD_BYPASS_NOTE
V2_NOT_GRADED_HERE = _ps.V2_NOT_GRADED_HERE
guard_friction_unmeasured = _gf.unmeasured
guard_friction_counts = _gf.counts
attribution_session_id = _gf.attribution_session_id
ATTRIBUTION_FALLBACK = _gf.ATTRIBUTION_FALLBACK
efficiency_kpis = _ek.kpis_reported

__all__ = [
    "ATTRIBUTION_FALLBACK",
    "GUARD_BYPASS_NOTE",
    "GUARD_EMISSION_NOTE",
    "TIME_WINDOW",
    "V2_NOT_GRADED_HERE",
    "attribution_session_id",
    "contamination_note",
    "efficiency_kpis",
    "gate_health_contaminated",
    "gate_health_housekeeping",
    "gate_health_last",
    "gate_health_unknown",
    "guard_friction_counts",
    "guard_friction_unmeasured",
    "ledger_gap_note",
    "plan_not_applicable",
    "plan_rate_missing",
    "plan_rate_present",
    "process_safety_clean",
    "process_safety_spiral",
    "process_safety_unmeasurable",
    "process_safety_v1_clean",
    "process_safety_v1_fail",
    "process_safety_v1_warned",
    "verification_contaminated",
    "verification_gates_green",
    "verification_gates_red",
    "verification_no_change",
    "verification_unavailable",
]
