"""Parse a judge's reply into validated, advisory judge dimensions.

What is accepted: a reply holding EXACTLY ONE fenced code block tagged ``json``. Its content
is a JSON array of judgment objects (a single object is read as an array of one). Anything
else — no block, two or more blocks, invalid JSON, a top level that is neither array nor
object — yields NO judge dimension (an empty list): the judge overlay is advisory and must never
break a run, and a reply that does not say one thing clearly says nothing. ``strict=True``
raises :class:`JudgeResponseError` naming the problem instead, for diagnosis.

Per entry, dropped: non-objects, an ``id`` that is not a judge dimension of the rubric version
(rubric-v2: ``instruction-adherence``; rubric-v1: also ``report-quality``), a duplicate of an id
already accepted (the first valid one wins), a ``status`` outside
``pass|fail|not-applicable|cannot-determine``, a non-string ``evidence``, and a ``score`` that
is not ``null`` or a finite number (``NaN``, ``Infinity``, ``1e400``, booleans, strings).
Whatever the model said, every accepted entry gets ``method: "judge"``, ``advisory: true`` and
``calibration_status: "uncalibrated"``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.record.dimension import DimensionId, Status

# plain strings (a record carries the plain id), spelled once, in the enum
JUDGE_DIMENSION_IDS: dict[str, tuple[str, ...]] = {
    "rubric-v1": (DimensionId.INSTRUCTION_ADHERENCE.value, DimensionId.REPORT_QUALITY.value),
    "rubric-v2": (DimensionId.INSTRUCTION_ADHERENCE.value,),
}
DIMENSION_STATUSES: tuple[str, ...] = tuple(status.value for status in Status)

# A fence line opening a json block (info string "json", case-insensitive), up to the next
# closing fence line.
_JSON_BLOCK = re.compile(r"^[ \t]*```[ \t]*json[ \t]*\r?\n(.*?)^[ \t]*```", re.I | re.M | re.S)


class JudgeResponseError(EvalkitError):
    """A judge reply that does not hold exactly one valid fenced json block (strict mode)."""


def json_blocks(text: str) -> list[str]:
    """The contents of the fenced code blocks tagged ``json`` in ``text``, in order."""
    return _JSON_BLOCK.findall(text)


def judge_dimension_ids(rubric_version: str) -> tuple[str, ...]:
    """The judge dimension ids a record of ``rubric_version`` may carry."""
    try:
        return JUDGE_DIMENSION_IDS[rubric_version]
    except KeyError:
        raise EvalkitError(
            f"unknown rubric_version {rubric_version!r}; known: {', '.join(JUDGE_DIMENSION_IDS)}"
        ) from None


def _finite_score(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value)


def validate_judge_dimensions(entries: Any, rubric_version: str = "rubric-v2") -> list[dict]:
    """Keep the valid judge entries of ``entries`` (see the module docstring), hard-stamped."""
    allowed = judge_dimension_ids(rubric_version)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for raw in entries if isinstance(entries, list | tuple) else []:
        if not isinstance(raw, Mapping):
            continue
        dim_id = raw.get("id")
        if not isinstance(dim_id, str) or dim_id not in allowed or dim_id in seen:
            continue
        status = raw.get("status")
        if not isinstance(status, str) or status not in DIMENSION_STATUSES:
            continue
        evidence = raw.get("evidence")
        if not isinstance(evidence, str):
            continue
        score = raw.get("score")
        if not _finite_score(score):
            continue
        seen.add(dim_id)
        out.append(
            {
                "id": dim_id,
                "method": "judge",
                "status": status,
                "evidence": evidence,
                "score": score,
                "advisory": True,  # hard-set: never taken from the model
                "calibration_status": "uncalibrated",  # hard-set: never taken from the model
            }
        )
    return out


def _fail(strict: bool, message: str) -> list[dict[str, Any]]:
    if strict:
        raise JudgeResponseError(message)
    return []


def parse_response(
    text: Any, rubric_version: str = "rubric-v2", *, strict: bool = False
) -> list[dict[str, Any]]:
    """Parse a judge reply into validated judge dimensions (see the module docstring)."""
    judge_dimension_ids(rubric_version)  # an unknown version is a caller error, always raised
    if not isinstance(text, str) or not text:
        return _fail(strict, "the judge reply is empty or not text")
    blocks = json_blocks(text)
    if len(blocks) != 1:
        return _fail(strict, f"expected exactly one fenced json block, found {len(blocks)}")

    def _non_finite(token: str) -> float:
        return float(token)  # NaN/Infinity parse, then the score check drops the entry

    try:
        parsed = json.loads(blocks[0], parse_constant=_non_finite)
    except ValueError as exc:
        return _fail(strict, f"the json block is not valid JSON: {exc}")
    if isinstance(parsed, Mapping):
        parsed = [parsed]
    if not isinstance(parsed, list):
        return _fail(strict, f"the json block holds a {type(parsed).__name__}, not an array")
    return validate_judge_dimensions(parsed, rubric_version)


__all__ = [
    "DIMENSION_STATUSES",
    "JUDGE_DIMENSION_IDS",
    "JudgeResponseError",
    "json_blocks",
    "judge_dimension_ids",
    "parse_response",
    "validate_judge_dimensions",
]
