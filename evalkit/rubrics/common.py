"""Pointer kept for the pre-registered texts: the scorers v1 and v2 share, by their old names.

``rubrics/rubric-v1.md`` and ``rubrics/rubric-v2.md`` name this file as the executable form of
the shared scorers. Those texts are hashed into every record and locked, so their bytes cannot
change; this module keeps their pointer true. The scorers live in their dimension modules
(:mod:`evalkit.rubrics.dimensions`), where each version's table (:mod:`evalkit.rubrics.v1`,
:mod:`evalkit.rubrics.v2`) names them. Nothing in evalkit imports this module.
"""

from __future__ import annotations

from evalkit.rubrics.dimensions import efficiency_kpis as _ek
from evalkit.rubrics.dimensions import gate_health as _gh
from evalkit.rubrics.dimensions import plan_fidelity as _pf
from evalkit.rubrics.dimensions import verification_evidence as _ve
from evalkit.rubrics.dimensions.shared import peer_note

score_verification_evidence = _ve.score_v1
score_plan_fidelity = _pf.score_v1
score_gate_health = _gh.score_v1
score_efficiency_kpis = _ek.score_v1
is_coordinator_direct_housekeeping = _gh.is_coordinator_direct_housekeeping
no_waves_ran = _gh.no_waves_ran

__all__ = [
    "is_coordinator_direct_housekeeping",
    "no_waves_ran",
    "peer_note",
    "score_efficiency_kpis",
    "score_gate_health",
    "score_plan_fidelity",
    "score_verification_evidence",
]
