"""``efficiency-kpis``: cost and latency, REPORTED, never graded (always ``not-applicable``).

The six KPIs (``duration_seconds``, ``total_waves``, ``total_agents``, ``token_input``,
``token_output``, ``carryover``) are surfaced in the evidence; a missing value prints ``null``,
never a guessed 0.

Versions. rubric-v1 defined it (:func:`score_v1`); rubric-v2 adopts it word for word, so both
version tables list :data:`V1`. How v1 stays frozen: a rubric that changes it adds
``score_v3``/``V3`` beside these and lists ``V3`` in its own table; :func:`score_v1` and the
template below are pinned byte for byte by ``tests/test_rubric_frozen.py`` (and every v1/v2
record by the conformance vectors).

Judge facts: ``carryover`` (the facts prefer plan-fidelity's and record a disagreement).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from evalkit.js.values import js_nullish, js_string
from evalkit.record.dimension import Dimension, DimensionId, Method, Status
from evalkit.record.scoring_context import ScoringContext
from evalkit.rubrics.dimensions.reading import Misses, NumberToken, Reading, RecordView, read_token
from evalkit.rubrics.dimensions.spec import DimensionSpec, FactsReader

__all__ = [
    "FACTS",
    "ID",
    "TEMPLATES",
    "V1",
    "kpis_reported",
    "read_carryover",
    "read_facts",
    "score_v1",
]

ID: Final = DimensionId.EFFICIENCY_KPIS

# -- evidence template -------------------------------------------------------------------------


def _kpi(value: Any) -> str:
    return "null" if js_nullish(value) else js_string(value)


def kpis_reported(kpis: Mapping[str, Any], duration_source: str) -> str:
    """``duration_source`` is ``recorded``, ``derived-from-window`` or ``unavailable``."""
    return (
        f"REPORTED, not graded. duration_seconds={_kpi(kpis['duration_seconds'])} "
        f"({duration_source}), total_waves={_kpi(kpis['total_waves'])}, "
        f"total_agents={_kpi(kpis['total_agents'])}, token_input={_kpi(kpis['token_input'])}, "
        f"token_output={_kpi(kpis['token_output'])}, carryover={_kpi(kpis['carryover'])}."
    )


TEMPLATES = (kpis_reported,)

# -- reader --------------------------------------------------------------------------------------

# kpis_reported: "..., carryover=N|null."
_CARRYOVER = re.compile(r"carryover=(\d+|null)", re.ASCII)


def read_carryover(text: str) -> NumberToken | None:
    """Reader of :func:`kpis_reported`'s ``carryover=`` token (``null`` reads as ``None``)."""
    return read_token(_CARRYOVER, text, "null")


# -- scorer --------------------------------------------------------------------------------------


def score_v1(ctx: ScoringContext) -> Dimension:
    """rubric-v1 (and v2): always ``not-applicable``; the KPIs are in the evidence."""
    text = kpis_reported(ctx.kpis.raw(), ctx.kpis.duration_source)
    return Dimension(ID, Method.DETERMINISTIC, Status.NOT_APPLICABLE, text)


# -- judge facts ---------------------------------------------------------------------------------


def read_facts(view: RecordView) -> Reading:
    """``carryover`` from the KPI string."""
    text = view.evidence(ID)
    if text is None:
        return Reading()
    misses = Misses(ID)
    token = misses.required(
        read_carryover(text), "carryover", "the KPI evidence string carried no carryover token"
    )
    return Reading({"carryover": None if token is None else token.value}, tuple(misses.items))


FACTS = FactsReader(ID, ("carryover",), read_facts)

#: efficiency-kpis as rubric-v1 scores it (rubric-v2 adopts it verbatim).
V1 = DimensionSpec(ID, score_v1, TEMPLATES, FACTS, event_derived=False)
