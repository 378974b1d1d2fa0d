"""Run a judge over one record, and merge its dimensions into the record.

The judge is OFF by default: ``judge_record(record)`` with no judge dispatches nothing and
returns no dimension, and nothing in evalkit calls a judge unless one is passed in.

A judge that raises (a model client's network error, a bug in a user's callable) never escapes
raw: ``judge_record`` raises :class:`JudgeDispatchError`, an ``EvalkitError`` naming the judge
and the record, with the judge's exception chained as ``__cause__``. No judge dimension is
added then: ``judge_record`` returns nothing, so there is nothing to ``merge_judge``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.judge.adapters import CallableJudge, Judge, ReplayJudge
from evalkit.judge.facts import compute_facts
from evalkit.judge.parse import parse_response, validate_judge_dimensions
from evalkit.judge.prompt import (
    DEFAULT_INPUT_BUDGET,
    build_prompt,
    check_budget,
    record_rubric_version,
)


class JudgeDispatchError(EvalkitError):
    """The judge raised while answering a prompt; no judge dimension was produced.

    The judge's own exception is the ``__cause__``; ``judge`` names the judge and ``run_id``
    the record.
    """

    def __init__(self, message: str, *, judge: str, run_id: object) -> None:
        super().__init__(message)
        self.judge = judge
        self.run_id = run_id


def judge_name(judge: object) -> str:
    """A readable name for a judge: its ``name`` attribute, else its adapter and callable."""
    name = getattr(judge, "name", None)
    if isinstance(name, str) and name:
        return name
    if isinstance(judge, CallableJudge):
        fn = judge._fn
        return f"CallableJudge({getattr(fn, '__qualname__', type(fn).__qualname__)})"
    if isinstance(judge, ReplayJudge):
        return f"ReplayJudge({judge.source})"
    return getattr(judge, "__qualname__", type(judge).__qualname__)


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
    truncated. When the judge raises, :class:`JudgeDispatchError` (an ``EvalkitError``)
    names the judge and the record and chains the judge's exception; no judge dimension is
    returned (or added) then.
    """
    if judge is None:
        return []
    if not isinstance(record, Mapping):
        raise EvalkitError("judge_record needs a record object")
    facts = compute_facts(record.get("dimensions"))
    prompt = build_prompt(record, facts, nonce)
    check_budget(prompt, budget)
    try:
        reply = judge(prompt)
    except Exception as exc:  # the judge is user code: wrap whatever it raises
        name, run_id = judge_name(judge), record.get("run_id")
        raise JudgeDispatchError(
            f"judge {name} failed on record {run_id!r}: {type(exc).__name__}: {exc}; "
            "no judge dimension was added",
            judge=name,
            run_id=run_id,
        ) from exc
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


__all__ = ["JudgeDispatchError", "judge_name", "judge_record", "merge_judge"]
