"""The scoring engine: a ledger's sessions -> evaluation records, through one measurement."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily (_LAZY); these imports give them their types
    from evalkit.scoring.engine import (
        LEDGER_COLUMNS,
        SAMPLE_METRICS_DIR,
        Refused,
        ScoredRecords,
        Scorer,
        build_run_id,
        score_ledger,
        score_records,
        score_session,
    )
    from evalkit.scoring.eval_record import (
        DEFAULT_MODEL_ID,
        DEFAULT_MODEL_SOURCE,
        MODEL_SOURCES,
        EvalRecord,
        Harness,
        Model,
        Provenance,
        check_model,
    )
    from evalkit.scoring.measure import (
        BLOCKED,
        INPUTS_FORM,
        LOOP_WARNING,
        QUALITY_GATE_EVENTS,
        SESSION_STARTED,
        WARNED,
        EventIndex,
        LedgerMeasure,
        Measured,
        extract_kpis,
        inputs_document,
        inputs_sha256,
        raw_session_ids,
    )

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "LEDGER_COLUMNS": "evalkit.scoring.engine",
    "Refused": "evalkit.scoring.engine",
    "SAMPLE_METRICS_DIR": "evalkit.scoring.engine",
    "ScoredRecords": "evalkit.scoring.engine",
    "Scorer": "evalkit.scoring.engine",
    "build_run_id": "evalkit.scoring.engine",
    "score_ledger": "evalkit.scoring.engine",
    "score_records": "evalkit.scoring.engine",
    "score_session": "evalkit.scoring.engine",
    "DEFAULT_MODEL_ID": "evalkit.scoring.eval_record",
    "DEFAULT_MODEL_SOURCE": "evalkit.scoring.eval_record",
    "EvalRecord": "evalkit.scoring.eval_record",
    "Harness": "evalkit.scoring.eval_record",
    "MODEL_SOURCES": "evalkit.scoring.eval_record",
    "Model": "evalkit.scoring.eval_record",
    "Provenance": "evalkit.scoring.eval_record",
    "check_model": "evalkit.scoring.eval_record",
    "BLOCKED": "evalkit.scoring.measure",
    "EventIndex": "evalkit.scoring.measure",
    "INPUTS_FORM": "evalkit.scoring.measure",
    "LOOP_WARNING": "evalkit.scoring.measure",
    "LedgerMeasure": "evalkit.scoring.measure",
    "Measured": "evalkit.scoring.measure",
    "QUALITY_GATE_EVENTS": "evalkit.scoring.measure",
    "SESSION_STARTED": "evalkit.scoring.measure",
    "WARNED": "evalkit.scoring.measure",
    "extract_kpis": "evalkit.scoring.measure",
    "inputs_document": "evalkit.scoring.measure",
    "inputs_sha256": "evalkit.scoring.measure",
    "raw_session_ids": "evalkit.scoring.measure",
}

__all__ = [
    "BLOCKED",
    "DEFAULT_MODEL_ID",
    "DEFAULT_MODEL_SOURCE",
    "INPUTS_FORM",
    "LEDGER_COLUMNS",
    "LOOP_WARNING",
    "MODEL_SOURCES",
    "QUALITY_GATE_EVENTS",
    "SAMPLE_METRICS_DIR",
    "SESSION_STARTED",
    "WARNED",
    "EvalRecord",
    "EventIndex",
    "Harness",
    "LedgerMeasure",
    "Measured",
    "Model",
    "Provenance",
    "Refused",
    "ScoredRecords",
    "Scorer",
    "build_run_id",
    "check_model",
    "extract_kpis",
    "inputs_document",
    "inputs_sha256",
    "raw_session_ids",
    "score_ledger",
    "score_records",
    "score_session",
]

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
