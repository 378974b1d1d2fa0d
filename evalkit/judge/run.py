"""Run a judge over one record, and merge its dimensions into the record.

The judge is OFF by default: ``judge_record(record)`` with no judge dispatches nothing and
returns no dimension, and nothing in evalkit calls a judge unless one is passed in.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.facts import compute_facts
from evalkit.judge.adapters import Judge
from evalkit.judge.parse import parse_response, validate_judge_dimensions
from evalkit.judge.prompt import (
    DEFAULT_INPUT_BUDGET,
    build_prompt,
    check_budget,
    record_rubric_version,
)


def judge_record(
    record: Mapping[str, Any],
    judge: Judge | None = None,
    *,
    budget: int = DEFAULT_INPUT_BUDGET,
    nonce: str | None = None,
) -> list[dict[str, Any]]:
    """Judge one record: build the prompt, gate the budget, dispatch, parse.

    Returns the validated judge dimensions (possibly empty). With ``judge=None`` nothing is
    dispatched and ``[]`` is returned. Raises :class:`TokenBudgetExceeded` BEFORE dispatch when
    the prompt is over ``budget`` tokens (estimated as ``len // 4``); the prompt is never
    truncated.
    """
    if judge is None:
        return []
    if not isinstance(record, Mapping):
        raise EvalkitError("judge_record needs a record object")
    facts = compute_facts(record.get("dimensions"))
    prompt = build_prompt(record, facts, nonce)
    check_budget(prompt, budget)
    reply = judge(prompt)
    return parse_response(reply, record_rubric_version(record))


def merge_judge(record: Mapping[str, Any], dims: Any) -> dict[str, Any]:
    """Return a copy of ``record`` with the valid judge dimensions of ``dims`` appended.

    Each dimension is re-validated for the record's rubric version (rubric-v1 records accept
    ``instruction-adherence`` and ``report-quality``; rubric-v2 only ``instruction-adherence``,
    ``report-quality`` being retired) and hard-stamped ``method: judge``, ``advisory: true``,
    ``calibration_status: uncalibrated``. Invalid entries are dropped, and so is a dimension
    whose id the record already carries (a record never holds an id twice). The existing
    dimensions — deterministic ones above all — are copied untouched; the input is not mutated.
    """
    if not isinstance(record, Mapping):
        raise EvalkitError("merge_judge needs a record object")
    merged = copy.deepcopy(dict(record))
    existing = merged.get("dimensions")
    existing = existing if isinstance(existing, list) else []
    present = {d.get("id") for d in existing if isinstance(d, Mapping)}
    incoming = validate_judge_dimensions(list(dims or []), record_rubric_version(record))
    merged["dimensions"] = existing + [d for d in incoming if d["id"] not in present]
    return merged


__all__ = ["judge_record", "merge_judge"]
