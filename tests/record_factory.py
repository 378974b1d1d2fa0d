"""Hand-built session-eval records for the record, journal and report tests (SPEC section 2).

``reference_record`` wraps the ``record`` part of a conformance expected file in the fields the
reference engine adds when it writes a journal line (provenance, model, harness, run id), so
the tests see realistic dimensions without copying any shared data into the repository.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

# after every session of the shared ledgers ended (the latest: 2026-10-22): a record is
# scored once its session has ended (verify reports an earlier timestamp)
TIMESTAMP = "2026-12-01T00:00:00.000Z"
SESSION_ID = "main-2026-09-19-session-1"


def run_id_for(session_id: str, timestamp: str) -> str:
    # Written out independently of evalkit.record.contract.make_run_id on purpose.
    stamp = timestamp.replace("-", "").replace(":", "").replace(".", "")
    return f"{session_id}-eval-{stamp}"


DETERMINISTIC_DIMS: list[dict[str, Any]] = [
    {
        "id": "verification-evidence",
        "method": "deterministic",
        "status": "pass",
        "evidence": "attribution: time-window. 3 quality_gate events in window, 0 failed.",
    },
    {
        "id": "plan-fidelity",
        "method": "deterministic",
        "status": "fail",
        "score": 0.5,
        "evidence": "completion_rate=0.5 (v1 threshold: pass iff completion_rate >= 0.8); planned_issues=4, carryover=2, carryover_ratio=0.5.",
    },
    {
        "id": "efficiency-kpis",
        "method": "deterministic",
        "status": "not-applicable",
        "evidence": "REPORTED, not graded. duration_seconds=null (unavailable), total_waves=3.",
    },
]

JUDGE_DIM: dict[str, Any] = {
    "id": "instruction-adherence",
    "method": "judge",
    "status": "pass",
    "evidence": "rule 6: no deviation visible in the record",
    "advisory": True,
    "calibration_status": "uncalibrated",
}


def make_record(
    *,
    session_id: str = SESSION_ID,
    timestamp: str = TIMESTAMP,
    rubric_version: str = "rubric-v2",
    dimensions: list[dict[str, Any]] | None = None,
    kpis: dict[str, Any] | None = None,
    judge: bool = True,
    handle: str | None = None,
) -> dict[str, Any]:
    """A complete, valid record (as evalkit writes it)."""
    dims = copy.deepcopy(DETERMINISTIC_DIMS if dimensions is None else dimensions)
    if judge:
        dims.append(copy.deepcopy(JUDGE_DIM))
    return {
        "schema_version": 1,
        "record_kind": "session-eval",
        "run_id": run_id_for(session_id, timestamp),
        "session_id": session_id,
        "standard_version": "aiat-llm-eval/1.0",
        "rubric_version": rubric_version,
        "provenance": {"rubric_sha256": "ab" * 32, "engine_commit": None},
        "model": {"id": "claude-test-model", "source": "config"},
        "harness": {
            "plugin_version": "3.1.0",
            "platform": "linux",
            "host_class": "linux-x64",
            "hostname_hash": "0123456789abcdef",
        },
        "kpis": copy.deepcopy(kpis)
        if kpis is not None
        else {
            "duration_seconds": 5400,
            "total_waves": 3,
            "total_agents": 7,
            "token_input": None,
            "token_output": None,
            "carryover": 2,
        },
        "dimensions": dims,
        "handle": handle,
        "anonymized": handle is None,
        "timestamp": timestamp,
    }


def reference_record(expected_file: Path, *, timestamp: str = TIMESTAMP) -> dict[str, Any] | None:
    """The journal line the reference engine would write for a conformance expected file.

    Returns None when the case has no record (a resolution error). Like the reference's own
    lines it carries no ``schema_version``, ``handle`` or ``anonymized``: the read path fills them.
    """
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    body = expected.get("record")
    if body is None:
        return None
    session_id = expected["resolved"]["session_id"]
    return {
        "record_kind": "session-eval",
        "run_id": run_id_for(session_id, timestamp),
        "session_id": session_id,
        "standard_version": "aiat-llm-eval/1.0",
        "rubric_version": body["rubric_version"],
        "provenance": {"rubric_sha256": "cd" * 32, "engine_commit": None},
        "model": {"id": "pinned-model", "source": "env"},
        "harness": {
            "plugin_version": "3.1.0",
            "platform": "claude",
            "host_class": None,
            "hostname_hash": "9f86d081884c7d65",
        },
        "kpis": body["kpis"],
        "dimensions": body["dimensions"],
        "timestamp": timestamp,
    }


def judge_block(identity: dict[str, Any] | None = None) -> dict[str, Any]:
    """A judge dimension's ``judge`` block with ``identity`` (default: the rule judge's, as
    ``score --judge rules`` writes it), as validation reads it; its run log is not written."""
    from evalkit.calibration._inputs import rule_judge_info  # the rule judge's identity

    ident = identity if identity is not None else rule_judge_info()["identity"]
    return {**ident, "run_log": "eval.judge.jsonl", "calls": []}


def chained(record: dict[str, Any], previous: str | None) -> dict[str, Any]:
    """``record`` as the journal writes it after a line whose reference is ``previous``.

    Its provenance linked (``previous_line_sha256``, :mod:`evalkit.journal.chain`), then sealed.
    """
    from evalkit.record.seal import seal_record, without_seal

    body = without_seal(record)
    body["provenance"] = {**body["provenance"], "previous_line_sha256": previous}
    return seal_record(body)
