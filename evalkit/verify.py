"""Offline re-verify: re-score a stored record from the same ledger and compare.

The stored record's own timestamp, model and handle are passed back to the engine, so a
faithful re-score reproduces the record exactly. Three outcomes (SPEC section 3):

* **agreement** (exit 0): every deterministic dimension has the same status, the same score
  and evidence carrying the same facts. Evidence that differs only in wording (the same
  numbers, the same judge facts) is listed separately and is not a drift.
* **drift** (exit 1): one line per differing field, naming the dimension and the field.
* **version mismatch** (exit 3): the stored ``rubric_version`` is unknown to evalkit, or the
  current rubric text no longer hashes to the stored ``provenance.rubric_sha256``. Re-scoring
  under another rubric text would compare different rules, so this is never called drift.

Judge dimensions are advisory and are not verified (they are listed as unverified).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.facts import compute_facts
from evalkit.record import KPI_KEYS, Method, make_run_id, normalize_record, validate_record

if TYPE_CHECKING:
    from evalkit.calibration_status import CalibrationAcceptance

__all__ = [
    "FieldDrift",
    "VerifyOutcome",
    "VerifyResult",
    "WordingDifference",
    "evidence_tokens",
    "find_record",
    "verify_record",
]

DEFAULT_JOURNAL_NAME = "eval.jsonl"

# The value tokens evidence carries: numbers as JavaScript prints them, and the literal
# stand-ins for "no number" (null, n/a) and flags (true/false).
_VALUE_TOKEN = re.compile(
    r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|\b(?:null|n/a|true|false|NaN|Infinity)\b"
)


class VerifyOutcome(StrEnum):
    """The three outcomes of a re-verify, with their exit codes."""

    AGREEMENT = "agreement"
    DRIFT = "drift"
    VERSION_MISMATCH = "version-mismatch"

    @property
    def exit_code(self) -> int:
        return {"agreement": 0, "drift": 1, "version-mismatch": 3}[self.value]


@dataclass(frozen=True)
class FieldDrift:
    """One field of one dimension (or ``kpis``/``record``) that differs after re-scoring."""

    dimension: str
    field: str
    stored: Any
    rescored: Any
    detail: str = ""

    def line(self) -> str:
        text = (
            f"drift: dimension {self.dimension} field {self.field}: "
            f"stored {_show(self.stored)}, re-scored {_show(self.rescored)}"
        )
        return f"{text} ({self.detail})" if self.detail else text


@dataclass(frozen=True)
class WordingDifference:
    """Evidence of one dimension that changed wording but carries the same facts."""

    dimension: str
    stored: str
    rescored: str

    def line(self) -> str:
        return f"wording only (not drift): dimension {self.dimension} evidence text differs"


@dataclass(frozen=True)
class VerifyResult:
    """What ``verify_record`` found. ``exit_code`` follows SPEC section 3."""

    run_id: str
    outcome: VerifyOutcome
    rubric_version: str
    drifts: tuple[FieldDrift, ...] = ()
    wording: tuple[WordingDifference, ...] = ()
    mismatch: str | None = None
    stored_sha256: str | None = None
    current_sha256: str | None = None
    verified_dimensions: tuple[str, ...] = ()
    unverified_dimensions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code

    @property
    def ok(self) -> bool:
        return self.outcome is VerifyOutcome.AGREEMENT

    def lines(self) -> list[str]:
        """Human-readable report, one finding per line (drifts first)."""
        out: list[str] = []
        if self.outcome is VerifyOutcome.VERSION_MISMATCH:
            out.append(f"version mismatch: {self.mismatch}")
        else:
            out.extend(d.line() for d in self.drifts)
            out.extend(w.line() for w in self.wording)
            verified = len(self.verified_dimensions)
            if self.outcome is VerifyOutcome.AGREEMENT:
                out.append(
                    f"agreement: {self.run_id}: {verified} deterministic dimension(s) re-scored "
                    f"identically under {self.rubric_version}"
                )
            else:
                out.append(f"drift: {self.run_id}: {len(self.drifts)} differing field(s)")
        if self.unverified_dimensions:
            out.append("not verified (judge, advisory): " + ", ".join(self.unverified_dimensions))
        out.extend(f"note: {note}" for note in self.notes)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "outcome": self.outcome.value,
            "exit_code": self.exit_code,
            "rubric_version": self.rubric_version,
            "mismatch": self.mismatch,
            "stored_sha256": self.stored_sha256,
            "current_sha256": self.current_sha256,
            "drifts": [
                {
                    "dimension": d.dimension,
                    "field": d.field,
                    "stored": d.stored,
                    "rescored": d.rescored,
                    "detail": d.detail,
                }
                for d in self.drifts
            ],
            "wording": [
                {"dimension": w.dimension, "stored": w.stored, "rescored": w.rescored}
                for w in self.wording
            ],
            "verified_dimensions": list(self.verified_dimensions),
            "unverified_dimensions": list(self.unverified_dimensions),
            "notes": list(self.notes),
        }


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)


def evidence_tokens(evidence: str) -> list[str]:
    """The value tokens (numbers, null, n/a, true, false) of an evidence string, in order."""
    return _VALUE_TOKEN.findall(evidence)


def find_record(
    run_id: str,
    journal_path: str | os.PathLike[str],
    *,
    accepted: CalibrationAcceptance | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Return the stored record with ``run_id`` (its last copy) and notes about its copies.

    Raises ``EvalkitError`` when the journal does not exist or holds no such run id.
    ``accepted``: the verified calibration certificates a judge dimension may claim.
    """
    from evalkit import journal

    path = Path(journal_path)
    try:
        read = journal.read(path, accepted=accepted)
    except FileNotFoundError:
        raise EvalkitError(f"{path}: no journal (nothing has been recorded there)") from None
    copies = read.find(run_id)
    if not copies:
        hint = (
            f"; {len(read.diagnostics)} unreadable line(s) in the journal"
            if read.diagnostics
            else ""
        )
        raise EvalkitError(f"{path}: unknown run id {run_id!r}{hint}")
    notes: list[str] = []
    if len(copies) > 1:
        lines = ", ".join(str(line) for line, _ in copies)
        notes.append(f"run id appears {len(copies)} times (lines {lines}); verifying the last")
        canonical = {json.dumps(rec, sort_keys=True) for _, rec in copies}
        if len(canonical) > 1:
            notes.append("the copies of this run id differ from each other")
    return copies[-1][1], notes


def _same_number(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def _version_check(stored: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """Return (mismatch message or None, current sha256 or None) for a record."""
    from evalkit.rubrics import RUBRIC_VERSIONS, get_rubric

    version = stored["rubric_version"]
    stored_sha = stored["provenance"]["rubric_sha256"]
    if version not in RUBRIC_VERSIONS:
        known = ", ".join(RUBRIC_VERSIONS)
        return (
            f"stored rubric_version {version!r} is unknown to this evalkit (known: {known}); "
            f"stored rubric_sha256 {stored_sha}",
            None,
        )
    rubric = get_rubric(version)
    current_sha = rubric.sha256
    if current_sha != stored_sha:
        return (
            f"rubric text changed: {version} was scored against rubric_sha256 {stored_sha}, "
            f"but the current rubric file {rubric.text_path.name} hashes to {current_sha}",
            current_sha,
        )
    return None, current_sha


def _compare_evidence(
    dim_id: str,
    stored_dims: list[dict[str, Any]],
    stored_ev: str,
    fresh_ev: str,
) -> tuple[list[FieldDrift], bool]:
    """Drifts carried by an evidence difference, and whether it is wording only."""
    drifts: list[FieldDrift] = []
    stored_tokens, fresh_tokens = evidence_tokens(stored_ev), evidence_tokens(fresh_ev)
    if stored_tokens != fresh_tokens:
        drifts.append(
            FieldDrift(
                dim_id,
                "evidence",
                stored_tokens,
                fresh_tokens,
                "the values the evidence carries differ",
            )
        )
    # The judge facts read from this dimension: swap in the re-scored evidence alone and see
    # which facts move, so each moved fact is attributed to the dimension that moved it.
    before = compute_facts(stored_dims)
    swapped = [{**d, "evidence": fresh_ev} if d.get("id") == dim_id else d for d in stored_dims]
    after = compute_facts(swapped)
    for key, value in before.items():
        if after[key] != value:
            drifts.append(FieldDrift(dim_id, f"evidence (fact {key})", value, after[key]))
    return drifts, not drifts


def verify_record(
    record_or_run_id: str | Mapping[str, Any],
    metrics_dir: str | os.PathLike[str],
    journal_path: str | os.PathLike[str] | None = None,
    *,
    accepted: CalibrationAcceptance | None = None,
) -> VerifyResult:
    """Re-score a stored record from ``metrics_dir`` and compare it dimension by dimension.

    ``record_or_run_id`` is a record (dict) or a run id looked up in ``journal_path`` (default
    ``<metrics_dir>/eval.jsonl``). Returns a ``VerifyResult``; raises ``EvalkitError`` for an
    unknown run id, an invalid stored record, or a session the ledger no longer resolves.
    ``accepted``: the verified calibration certificates a judge dimension may claim
    (``validate_record``; default: ``uncalibrated`` only).
    """
    notes: list[str] = []
    if isinstance(record_or_run_id, str):
        journal = Path(journal_path) if journal_path else Path(metrics_dir) / DEFAULT_JOURNAL_NAME
        raw, notes = find_record(record_or_run_id, journal, accepted=accepted)
    elif isinstance(record_or_run_id, Mapping):
        raw = dict(record_or_run_id)
    else:
        raise EvalkitError(
            f"record_or_run_id: expected a run id or a record, got {type(record_or_run_id).__name__}"
        )
    stored = validate_record(normalize_record(raw), accepted=accepted)
    run_id = stored["run_id"]
    expected_run_id = make_run_id(stored["session_id"], stored["timestamp"])
    if run_id != expected_run_id:
        notes.append(
            f"run_id does not follow <session_id>-eval-<timestamp> (expected {expected_run_id})"
        )
    judge_ids = tuple(d["id"] for d in stored["dimensions"] if d["method"] == Method.JUDGE)

    mismatch, current_sha = _version_check(stored)
    if mismatch is not None:
        return VerifyResult(
            run_id=run_id,
            outcome=VerifyOutcome.VERSION_MISMATCH,
            rubric_version=stored["rubric_version"],
            mismatch=mismatch,
            stored_sha256=stored["provenance"]["rubric_sha256"],
            current_sha256=current_sha,
            unverified_dimensions=judge_ids,
            notes=tuple(notes),
        )

    import evalkit

    try:
        fresh_record = evalkit.score_session(
            metrics_dir,
            session_id=stored["session_id"],
            rubric=stored["rubric_version"],
            timestamp=stored["timestamp"],
            model_id=stored["model"]["id"],
            model_source=stored["model"]["source"],
            handle=stored["handle"],
            harness=stored["harness"],
        )
    except EvalkitError as exc:
        raise type(exc)(f"cannot re-score {run_id} from {metrics_dir}: {exc}") from exc
    fresh = normalize_record(fresh_record.to_dict())

    drifts: list[FieldDrift] = []
    wording: list[WordingDifference] = []
    if fresh.get("run_id") != expected_run_id:
        drifts.append(FieldDrift("record", "run_id", expected_run_id, fresh.get("run_id")))
    for key in KPI_KEYS:
        a, b = stored["kpis"].get(key), fresh["kpis"].get(key)
        if not _same_number(a, b):
            drifts.append(FieldDrift("kpis", key, a, b))

    stored_det = [d for d in stored["dimensions"] if d["method"] == Method.DETERMINISTIC]
    fresh_det = {
        d["id"]: d for d in fresh.get("dimensions", []) if d.get("method") == Method.DETERMINISTIC
    }
    stored_ids = [d["id"] for d in stored_det]
    for dim in stored_det:
        dim_id = dim["id"]
        new = fresh_det.get(dim_id)
        if new is None:
            drifts.append(FieldDrift(dim_id, "presence", "present", "absent"))
            continue
        if dim["status"] != new.get("status"):
            drifts.append(FieldDrift(dim_id, "status", dim["status"], new.get("status")))
        # A score that is absent and a null score both mean "no score".
        if not _same_number(dim.get("score"), new.get("score")):
            drifts.append(FieldDrift(dim_id, "score", dim.get("score"), new.get("score")))
        if dim["evidence"] != new.get("evidence"):
            found, wording_only = _compare_evidence(
                dim_id, stored_det, dim["evidence"], str(new.get("evidence"))
            )
            drifts.extend(found)
            if wording_only:
                wording.append(WordingDifference(dim_id, dim["evidence"], str(new.get("evidence"))))
    for dim_id in fresh_det:
        if dim_id not in stored_ids:
            drifts.append(FieldDrift(dim_id, "presence", "absent", "present"))

    return VerifyResult(
        run_id=run_id,
        outcome=VerifyOutcome.DRIFT if drifts else VerifyOutcome.AGREEMENT,
        rubric_version=stored["rubric_version"],
        drifts=tuple(drifts),
        wording=tuple(wording),
        stored_sha256=stored["provenance"]["rubric_sha256"],
        current_sha256=current_sha,
        verified_dimensions=tuple(stored_ids),
        unverified_dimensions=judge_ids,
        notes=tuple(notes),
    )
