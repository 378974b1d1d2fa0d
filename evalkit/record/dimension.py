"""One scored dimension of an evaluation record.

A dimension is the unit of verdict: there is no global score (SPEC section 2). Deterministic
dimensions carry ``id, method, status, evidence`` and, for ``plan-fidelity`` only, ``score``
(a number or ``null``). Whether a dimension carries a ``score`` key at all is part of the
record's shape, so "no score" (key absent) and "score null" (key present, value ``None``) are
kept apart with the :data:`NO_SCORE` sentinel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from evalkit.display import Readable, clip_text, fmt_number
from evalkit.js.numbers import json_number

__all__ = ["NO_SCORE", "Dimension", "DimensionId", "Method", "Status"]


class DimensionId(StrEnum):
    """The dimension ids of the shipped rubrics (``dimensions[].id`` of a record).

    Six deterministic dimensions (``guard-friction`` from rubric-v2 on) and the judge
    dimensions (``report-quality`` in rubric-v1 only). A ``str`` subclass, so a member equals,
    hashes and serializes as its id; records and facts still carry the plain string. A made-up
    dimension of a new rubric version may use any other id.
    """

    VERIFICATION_EVIDENCE = "verification-evidence"
    PLAN_FIDELITY = "plan-fidelity"
    GATE_HEALTH = "gate-health"
    PROCESS_SAFETY = "process-safety"
    GUARD_FRICTION = "guard-friction"
    EFFICIENCY_KPIS = "efficiency-kpis"
    INSTRUCTION_ADHERENCE = "instruction-adherence"
    REPORT_QUALITY = "report-quality"


class Status(StrEnum):
    """The four verdicts a dimension can take."""

    PASS = "pass"
    FAIL = "fail"
    NOT_APPLICABLE = "not-applicable"
    CANNOT_DETERMINE = "cannot-determine"


class Method(StrEnum):
    """How a dimension was scored."""

    DETERMINISTIC = "deterministic"
    JUDGE = "judge"


class _NoScore:
    """Sentinel type: the dimension carries no ``score`` key (distinct from a null score)."""

    _instance: _NoScore | None = None

    def __new__(cls) -> _NoScore:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_SCORE"

    def __bool__(self) -> bool:
        return False


NO_SCORE: Final = _NoScore()


@dataclass(frozen=True, repr=False)
class Dimension(Readable):
    """A scored dimension. ``score`` is :data:`NO_SCORE` unless the rubric defines one."""

    id: str
    method: Method
    status: Status
    evidence: str
    score: Any = field(default=NO_SCORE)

    def __post_init__(self) -> None:
        """Keep the id a plain ``str`` whatever was passed."""
        # a DimensionId member becomes its plain id: a record holds strings, never enum members
        if type(self.id) is not str:
            object.__setattr__(self, "id", str(self.id))

    @property
    def has_score(self) -> bool:
        """True when the dimension carries a ``score`` key (its value may be ``None``)."""
        return self.score is not NO_SCORE

    def _headline(self) -> str:
        score = f" (score {fmt_number(self.score)})" if self.has_score else ""
        return f"{self.id} {self.status}{score}: {clip_text(self.evidence)}"

    def _rows(self) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = [("status", str(self.status)), ("method", str(self.method))]
        if self.has_score:
            rows.append(("score", self.score))
        return [*rows, ("evidence", self.evidence)]

    def to_dict(self) -> dict[str, Any]:
        """The dimension as it appears in a record (key order as the reference writes it)."""
        out: dict[str, Any] = {
            "id": self.id,
            "method": str(self.method),
            "status": str(self.status),
        }
        if self.has_score:
            out["score"] = json_number(self.score)
        out["evidence"] = self.evidence
        return out
