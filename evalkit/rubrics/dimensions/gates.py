"""Questions analyses ask of either gate dimension's evidence, answered by their own readers.

An analysis comparing two evidence strings of the same gate-attributed dimension
(``verification-evidence`` or ``gate-health``) asks whether it reports zero gate events, or a
peer-contaminated window; these helpers answer with the readers that sit beside the templates.
"""

from __future__ import annotations

from evalkit.rubrics.dimensions import gate_health, verification_evidence
from evalkit.rubrics.dimensions.shared import read_window_contaminated

__all__ = ["reports_contaminated_window", "reports_zero_gate_events"]


def reports_zero_gate_events(text: str) -> bool:
    """A 0-gate branch of either gate dimension (no quality_gate / no full-gate event)."""
    return verification_evidence.read_zero_gates(text) or gate_health.read_zero(text)


def reports_contaminated_window(text: str) -> bool:
    """The contaminated branch of either gate dimension."""
    return read_window_contaminated(text)
