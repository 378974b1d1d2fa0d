"""rubric-v1: five deterministic dimensions (``rubrics/rubric-v1.md``), frozen.

Frozen for every record carrying ``rubric_version: "rubric-v1"``. Its process-safety fails on a
blocked destructive command or a spiral, counting guard events by time window; it reads only
the active ``events.jsonl`` (every parseable line kept, unreadable lines skipped silently).

How it stays frozen: this table names, per dimension, the spec of rubric-v1's own scorer
(``V1``: ``score_v1`` and its templates in the dimension's module). A later rubric that changes
a dimension adds its own ``score_vN``/``VN`` beside them and lists that in its own table, never
here. ``tests/test_rubric_frozen.py`` pins this table (which scorer each row names) and every
template it can write byte for byte; the conformance vectors pin every v1 record.
"""

from __future__ import annotations

from typing import Final, Literal

from evalkit.rubrics.dimensions import (
    efficiency_kpis,
    gate_health,
    plan_fidelity,
    process_safety,
    verification_evidence,
)
from evalkit.rubrics.dimensions.spec import DimensionSpec

__all__ = ["DIMENSIONS", "EVENT_READING", "VERSION"]

VERSION: Final = "rubric-v1"
EVENT_READING: Final[Literal["active-file"]] = "active-file"

#: The rubric's table, in canonical order.
DIMENSIONS: tuple[DimensionSpec, ...] = (
    verification_evidence.V1,
    plan_fidelity.V1,
    gate_health.V1,
    process_safety.V1,
    efficiency_kpis.V1,
)
