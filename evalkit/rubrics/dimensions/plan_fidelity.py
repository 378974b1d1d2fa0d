"""``plan-fidelity``: did the session complete the work it planned?

Source: ``effectiveness.completion_rate`` (``planned_issues``, ``carryover`` and
``carryover_ratio`` for context). The only deterministic dimension that carries a ``score``.

Versions. rubric-v1 defined the formula and its hard threshold (:data:`PASS_THRESHOLD`,
:func:`score_v1`); rubric-v2 adopts both word for word, so both version tables list :data:`V1`.
How v1 stays frozen: a rubric that moves the threshold adds its own constant, ``score_v3`` and
templates beside these and lists ``V3`` in its own table; :data:`PASS_THRESHOLD`,
:func:`score_v1` and the templates below stay as they are, pinned byte for byte by
``tests/test_rubric_frozen.py`` (and every v1/v2 record by the conformance vectors).

Judge facts: ``completion_rate`` and ``carryover`` (``efficiency-kpis`` carries a second
``carryover``; the facts take this one first and record a disagreement as a contradiction).
"""

from __future__ import annotations

import re
from typing import Any, Final

from evalkit.js.values import get, is_number, is_plain_object, js_string
from evalkit.record.dimension import Dimension, DimensionId, Method, Status
from evalkit.record.scoring_context import ScoringContext
from evalkit.rubrics.dimensions.reading import (
    Misses,
    Number,
    NumberToken,
    Reading,
    RecordView,
    first_number,
    read_token,
)
from evalkit.rubrics.dimensions.shared import or_na
from evalkit.rubrics.dimensions.spec import DimensionSpec, FactsReader

__all__ = [
    "FACTS",
    "ID",
    "PASS_THRESHOLD",
    "TEMPLATES",
    "V1",
    "not_applicable",
    "rate_missing",
    "rate_present",
    "read_carryover",
    "read_completion_rate",
    "read_facts",
    "read_rate_absent",
    "score_v1",
]

ID: Final = DimensionId.PLAN_FIDELITY
_DET = Method.DETERMINISTIC
_A = re.ASCII

#: rubric-v1's hard threshold (kept by v2): pass iff ``completion_rate >= 0.8``.
PASS_THRESHOLD: Final = 0.8

# -- evidence templates ------------------------------------------------------------------------


def not_applicable() -> str:
    """Evidence: no completion rate and nothing planned (not applicable)."""
    return (
        "no completion_rate and no planned_issues — housekeeping/unplanned session; "
        "plan-fidelity not applicable."
    )


def rate_missing(planned: Any) -> str:
    """Evidence: issues were planned but the completion rate is missing."""
    return (
        f"planned_issues={js_string(planned)} but effectiveness.completion_rate is missing — "
        "plan-fidelity data unavailable."
    )


def rate_present(rate: Any, planned: Any, carryover: Any, carryover_ratio: Any) -> str:
    """Evidence: the completion rate against the threshold, with its context."""
    return (
        f"completion_rate={js_string(rate)} (v1 threshold: pass iff completion_rate >= "
        f"{js_string(PASS_THRESHOLD)}); planned_issues={or_na(planned)}, "
        f"carryover={or_na(carryover)}, carryover_ratio={or_na(carryover_ratio)}."
    )


TEMPLATES = (not_applicable, rate_missing, rate_present)

# -- readers -------------------------------------------------------------------------------------

# rate_present: "completion_rate=<n> (v1 threshold: ...)"
_COMPLETION_RATE = re.compile(r"completion_rate=([0-9]+(?:\.[0-9]+)?)", _A)
# not_applicable ("no completion_rate and no planned_issues ...") and rate_missing
# ("... effectiveness.completion_rate is missing ...")
_RATE_ABSENT = re.compile(
    r"no completion_rate and no planned_issues|completion_rate is missing", _A
)
# rate_present's context: "carryover=N|n/a" (not carryover_ratio=)
_CARRYOVER = re.compile(r"carryover=(\d+|n/a)", _A)


def read_rate_absent(text: str) -> bool:
    """Reader of :func:`not_applicable` and :func:`rate_missing`."""
    return _RATE_ABSENT.search(text) is not None


def read_completion_rate(text: str) -> Number | None:
    """Reader of :func:`rate_present`: ``completion_rate``."""
    return first_number(_COMPLETION_RATE, text)


def read_carryover(text: str) -> NumberToken | None:
    """Reader of :func:`rate_present`'s ``carryover=`` token (``n/a`` reads as ``None``)."""
    return read_token(_CARRYOVER, text, "n/a")


# -- scorer --------------------------------------------------------------------------------------


def _effectiveness_number(ctx: ScoringContext, key: str) -> int | float | None:
    eff = get(ctx.record, "effectiveness")
    value = get(eff, key) if is_plain_object(eff) else None
    return value if is_number(value) else None


def score_v1(ctx: ScoringContext) -> Dimension:
    """rubric-v1 (and v2): the completion rate against :data:`PASS_THRESHOLD`.

    Carries ``score`` (the rate, or ``None``).
    """
    rate = _effectiveness_number(ctx, "completion_rate")
    planned = _effectiveness_number(ctx, "planned_issues")
    if rate is None:
        # The reference tests `planned === null || planned === 0`: a negative count is
        # "planned work with the rate missing", not housekeeping.
        if planned is None or planned == 0:
            return Dimension(ID, _DET, Status.NOT_APPLICABLE, not_applicable(), score=None)
        return Dimension(ID, _DET, Status.CANNOT_DETERMINE, rate_missing(planned), score=None)
    text = rate_present(
        rate,
        planned,
        _effectiveness_number(ctx, "carryover"),
        _effectiveness_number(ctx, "carryover_ratio"),
    )
    status = Status.PASS if rate >= PASS_THRESHOLD else Status.FAIL
    return Dimension(ID, _DET, status, text, score=rate)


# -- judge facts ---------------------------------------------------------------------------------


def read_facts(view: RecordView) -> Reading:
    """``completion_rate`` and ``carryover``; a rate-absent branch may still carry a carryover."""
    text = view.evidence(ID)
    if text is None:
        return Reading()
    misses = Misses(ID)
    rate: Number | None = None
    if not read_rate_absent(text):
        rate = misses.required(
            read_completion_rate(text),
            "completion_rate",
            "the rate-present branch matched but carried no completion_rate",
        )
        token = misses.required(
            read_carryover(text),
            "carryover",
            "the rate-present branch matched but carried no carryover token",
        )
    else:
        token = read_carryover(text)
    carryover = None if token is None else token.value
    return Reading({"completion_rate": rate, "carryover": carryover}, tuple(misses.items))


FACTS = FactsReader(ID, ("completion_rate", "carryover"), read_facts)

#: plan-fidelity as rubric-v1 scores it (rubric-v2 adopts it verbatim).
V1 = DimensionSpec(ID, score_v1, TEMPLATES, FACTS, event_derived=False)
