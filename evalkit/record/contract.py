"""The session-eval record (SPEC section 2): validate, normalize, build run ids, project.

Two paths, deliberately different:

* ``validate_record`` is the write path. It refuses anything that breaks the contract with a
  ``ValidationError`` whose message starts with the offending field (``kpis.token_input: ...``)
  and names the rule, and returns the validated copy. It fills nothing SPEC section 2 does not
  mark as defaulted (``schema_version`` stamped, ``handle`` null, ``anonymized`` derived): a
  missing ``kpis`` block, KPI key, required field, or a judge dimension's ``advisory`` /
  ``calibration_status`` is refused.
* ``normalize_record`` is the read path. It never raises; it fills only the defaults the
  contract defines (``schema_version`` 1, ``handle`` null, ``anonymized`` = no handle, missing
  KPIs null, judge dimensions advisory/uncalibrated) so that records written by the reference
  engine, or by older versions, read the same as ours.

Neither function mutates its argument. A record evalkit wrote carries a seal
(``provenance.record_sha256``, :mod:`evalkit.record.seal`): validation refuses a record whose
content no longer matches it, and ``provenance.inputs_sha256`` (the hash of the ledger inputs
its score depended on, :func:`evalkit.scoring.measure.inputs_sha256`) when present must be a sha256.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from evalkit.errors import ValidationError
from evalkit.js.timestamps import parse_timestamp
from evalkit.record.calibration_status import AcceptedCalibrations, CalibrationAcceptance
from evalkit.record.dimension import Method, Status
from evalkit.record.scoring_context import KPI_KEYS  # the record carries the scorer's KPI block
from evalkit.record.seal import check_seal, without_seal

__all__ = [
    "FORBIDDEN_TOP_LEVEL_KEYS",
    "HOSTNAME_HASH_PATTERN",
    "KPI_KEYS",
    "RECORD_KIND",
    "REQUIRED_TOP_LEVEL_KEYS",
    "SCHEMA_VERSION",
    "STANDARD_VERSION",
    "UNCALIBRATED",
    "Method",
    "ModelSource",
    "Status",
    "make_run_id",
    "normalize_record",
    "project_submission",
    "validate_record",
    "validate_stored",
    "validate_timestamp",
]

SCHEMA_VERSION = 1
RECORD_KIND = "session-eval"
STANDARD_VERSION = "aiat-llm-eval/1.0"
UNCALIBRATED = "uncalibrated"

# "No global score, by construction": these keys never appear at the top level.
FORBIDDEN_TOP_LEVEL_KEYS: tuple[str, ...] = ("overall", "total", "mean", "global_score")


HOSTNAME_HASH_PATTERN = re.compile(r"[0-9a-f]{8,}")
_SHA256 = re.compile(r"[0-9a-f]{64}")

# Keys a dimension may only carry when it is a judge dimension.
_JUDGE_ONLY_KEYS: tuple[str, ...] = ("advisory", "calibration_status", "calibration_ref")


class ModelSource(StrEnum):
    """Where the record's model id came from."""

    SELF_REPORT = "self-report"
    ENV = "env"
    CONFIG = "config"


_STATUSES = frozenset(s.value for s in Status)
_METHODS = frozenset(m.value for m in Method)
_MODEL_SOURCES = frozenset(m.value for m in ModelSource)


def make_run_id(session_id: str, timestamp: str) -> str:
    """Return ``<session_id>-eval-<timestamp without '-', ':' and '.'>``.

    Built from the timestamp *parameter* of a run, never from the clock, so that re-scoring
    with the stored timestamp reproduces the same id.
    """
    if not isinstance(session_id, str) or not session_id:
        raise ValidationError("session_id: must be a non-empty string to build a run_id")
    if not isinstance(timestamp, str) or not timestamp:
        raise ValidationError("timestamp: must be a non-empty ISO-8601 string to build a run_id")
    return f"{session_id}-eval-{re.sub(r'[-:.]', '', timestamp)}"


# --------------------------------------------------------------------------------------------
# read path


def _finite_or_none(value: Any) -> Any:
    """Map a non-finite float (JSON ``1e400`` reads as inf) to None; leave everything else."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


_SCALARS = (str, int, float, bool, type(None))


def _json_copy(value: Any) -> Any:
    """A deep copy of a JSON value.

    Dicts and lists are rebuilt, scalars shared (they are immutable); anything else is left to
    ``copy.deepcopy``. Much faster than deepcopy alone, which matters when a journal of
    thousands of records is read.
    """
    cls = value.__class__
    if cls is dict:
        return {k: _json_copy(v) for k, v in value.items()}
    if cls is list:
        return [_json_copy(v) for v in value]
    if cls in _SCALARS:
        return value
    return copy.deepcopy(value)


def _stamp(d: Mapping[str, Any]) -> dict[str, Any]:
    """Deep copy with the three defaults SPEC section 2 defines.

    The defaults are schema_version, handle and anonymized. The write path applies only these;
    the read path fills more on top.
    """
    try:
        rec: dict[str, Any] = _json_copy(dict(d))
    except Exception:  # an exotic object that cannot be copied: keep a shallow copy
        rec = dict(d)
    return _fill_defaults(rec)


def _fill_defaults(rec: dict[str, Any]) -> dict[str, Any]:
    rec.setdefault("schema_version", SCHEMA_VERSION)
    rec.setdefault("handle", None)
    if "anonymized" not in rec:
        rec["anonymized"] = rec.get("handle") is None
    return rec


def normalize_record(d: Any) -> dict[str, Any]:
    """Return a normalized deep copy of a stored record; never raises.

    Fills: ``schema_version`` 1 when absent, ``handle`` null when absent, ``anonymized`` (true
    iff no handle) when absent, a ``kpis`` object with every missing KPI null, non-finite KPI
    and score values null, ``engine_commit``/``host_class``/``hostname_hash`` null when absent,
    and ``advisory: true`` / ``calibration_status: "uncalibrated"`` on judge dimensions that
    lack them. Values of the wrong type are left as they are for ``validate_record`` to name.
    """
    rec = _stamp(d if isinstance(d, Mapping) else {})
    provenance = rec.get("provenance")
    if isinstance(provenance, dict):
        provenance.setdefault("engine_commit", None)
    harness = rec.get("harness")
    if isinstance(harness, dict):
        harness.setdefault("host_class", None)
        harness.setdefault("hostname_hash", None)

    if "kpis" not in rec or rec["kpis"] is None:
        rec["kpis"] = {}
    kpis = rec["kpis"]
    if isinstance(kpis, dict):
        for key in KPI_KEYS:
            kpis[key] = _finite_or_none(kpis.get(key))

    dimensions = rec.get("dimensions")
    if isinstance(dimensions, list):
        for dim in dimensions:
            if not isinstance(dim, dict):
                continue
            if "score" in dim:
                dim["score"] = _finite_or_none(dim["score"])
            if dim.get("method") == Method.JUDGE:
                dim.setdefault("advisory", True)
                dim.setdefault("calibration_status", UNCALIBRATED)
    return rec


# --------------------------------------------------------------------------------------------
# write path


def _fail(field: str, rule: str) -> ValidationError:
    return ValidationError(f"{field}: {rule}")


def _is_number(value: Any) -> bool:
    # bool is an int subclass in Python, but true is not a count of anything.
    return isinstance(value, int | float) and not isinstance(value, bool)


def _require_str(rec: Mapping[str, Any], key: str, field: str, *, nullable: bool = False) -> None:
    if key not in rec:
        raise _fail(field, "required field is missing")
    value = rec[key]
    if value is None and nullable:
        return
    if not isinstance(value, str) or not value.strip():
        kind = "a non-empty string or null" if nullable else "a non-empty string"
        raise _fail(field, f"must be {kind}, got {value!r}")


def _require_object(rec: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    if key not in rec:
        raise _fail(key, "required field is missing")
    value = rec[key]
    if not isinstance(value, Mapping):
        raise _fail(key, f"must be an object, got {type(value).__name__}")
    return value


def _validate_kpis(kpis: Mapping[str, Any]) -> None:
    for key in kpis:
        if key not in KPI_KEYS:
            raise _fail(f"kpis.{key}", f"unknown KPI (the record carries exactly {list(KPI_KEYS)})")
    for key in KPI_KEYS:
        field = f"kpis.{key}"
        if key not in kpis:
            raise _fail(field, "required KPI is missing (write null when it was not recorded)")
        value = kpis[key]
        if value is None:
            continue
        if not _is_number(value):
            raise _fail(field, f"must be a finite non-negative number or null, got {value!r}")
        if not math.isfinite(value):
            raise _fail(
                field, f"must be finite (NaN and infinity are not measurements), got {value!r}"
            )
        if value < 0:
            raise _fail(field, f"must be non-negative, got {value!r}")


def _validate_dimension(
    index: int, dim: Any, seen: set[str], accepted: CalibrationAcceptance
) -> None:
    if not isinstance(dim, Mapping):
        raise _fail(f"dimensions[{index}]", f"must be an object, got {type(dim).__name__}")
    dim_id = dim.get("id")
    if not isinstance(dim_id, str) or not dim_id.strip():
        _require_str(dim, "id", f"dimensions[{index}].id")  # raises, naming what is wrong
        return
    method, status = dim.get("method"), dim.get("status")
    score = dim.get("score")
    # the common dimension passes every check below: its field names are only formatted for
    # an error (120,000 dimensions in a 20,000-record journal)
    if (
        dim_id in seen
        or method not in _METHODS
        or status not in _STATUSES
        or not isinstance(dim.get("evidence"), str)
        or (score is not None and (not _is_number(score) or not math.isfinite(score)))
    ):
        _refuse_dimension(f"dimensions[{index}] ({dim_id})", dim, seen)
    seen.add(dim_id)

    if method == Method.DETERMINISTIC:
        for key in _JUDGE_ONLY_KEYS:
            if key in dim:
                raise _fail(
                    f"dimensions[{index}] ({dim_id}).{key}",
                    "a deterministic dimension must not carry judge fields "
                    "(advisory/calibration_status belong to judge dimensions only)",
                )
        return

    # Judge dimensions: the firewall that keeps an uncalibrated model's opinion advisory.
    where = f"dimensions[{index}] ({dim_id})"
    if "advisory" not in dim:
        raise _fail(
            f"{where}.advisory",
            "required field is missing: a judge dimension must carry advisory: true",
        )
    if dim.get("advisory") is not True:
        raise _fail(
            f"{where}.advisory",
            f"a judge dimension must carry advisory: true, got {dim.get('advisory')!r}",
        )
    if "calibration_status" not in dim:
        raise _fail(
            f"{where}.calibration_status",
            "required field is missing: a judge dimension must carry calibration_status "
            f"({UNCALIBRATED!r} until a calibration is recorded)",
        )
    cal = dim["calibration_status"]
    reference = dim.get("calibration_ref")
    # A minted status needs a verified certificate holding exactly this dimension, status and
    # reference, earned by this dimension's judge; which certificates verified is passed in,
    # never looked up here.
    if not isinstance(cal, str) or not accepted.accepts(dim_id, cal, reference, dim.get("judge")):
        refused = accepted.why_refused(reference)
        why = f"; its certificate was refused: {refused}" if refused else ""
        raise _fail(
            f"{where}.calibration_status",
            f"{cal!r} is not an accepted calibration status for this dimension (only "
            f"{UNCALIBRATED!r} unless a verified calibration certificate "
            f"calibrations/<calibration_ref>.json holds it for this judge identity; "
            f"calibration_ref={reference!r}){why}",
        )


def _refuse_dimension(where: str, dim: Mapping[str, Any], seen: set[str]) -> None:
    """Raise the first of :func:`_validate_dimension`'s common checks that ``dim`` fails.

    The checks and their order are the contract's (SPEC section 2); only their messages'
    field names cost a format, so they are made here, once a check has failed.
    """
    if dim["id"] in seen:
        raise _fail(f"{where}.id", "duplicate dimension id (one verdict per dimension)")
    method = dim.get("method")
    if method not in _METHODS:
        raise _fail(f"{where}.method", f"must be one of {sorted(_METHODS)}, got {method!r}")
    status = dim.get("status")
    if status not in _STATUSES:
        raise _fail(f"{where}.status", f"must be one of {sorted(_STATUSES)}, got {status!r}")
    if "evidence" not in dim:
        raise _fail(f"{where}.evidence", "required field is missing")
    if not isinstance(dim["evidence"], str):
        raise _fail(f"{where}.evidence", f"must be a string, got {type(dim['evidence']).__name__}")
    score = dim.get("score")
    if score is not None and not _is_number(score):
        raise _fail(f"{where}.score", f"must be a number or null, got {score!r}")
    if score is not None and not math.isfinite(score):
        raise _fail(f"{where}.score", f"must be finite or null, got {score!r}")


def validate_timestamp(value: Any, field: str = "timestamp") -> str:
    """Return ``value`` when it is a timestamp the engine accepts; else raise ValidationError.

    The engine reads timestamps as JavaScript ``Date.parse`` does (SPEC section 6), so the
    record accepts exactly what the engine accepts for its ``timestamp`` parameter.
    """
    if not isinstance(value, str) or not value.strip():
        raise _fail(field, f"must be a non-empty ISO-8601 string, got {value!r}")
    if parse_timestamp(value) is None:
        raise _fail(field, f"must be ISO-8601 (a date-time Date.parse accepts), got {value!r}")
    return value


def _validate_provenance_and_model(rec: Mapping[str, Any]) -> None:
    provenance = _require_object(rec, "provenance")
    _require_str(provenance, "rubric_sha256", "provenance.rubric_sha256")
    _require_str(provenance, "engine_commit", "provenance.engine_commit", nullable=True)
    inputs = provenance.get("inputs_sha256")
    if "inputs_sha256" in provenance and (
        not isinstance(inputs, str) or not _SHA256.fullmatch(inputs)
    ):
        raise _fail(
            "provenance.inputs_sha256",
            f"must be the 64 lowercase hex sha256 of the scored inputs, got {inputs!r}",
        )
    link = provenance.get("previous_line_sha256")
    if link is not None and (not isinstance(link, str) or not _SHA256.fullmatch(link)):
        raise _fail(
            "provenance.previous_line_sha256",
            "must be null or the 64 lowercase hex sha256 of the journal's previous line, "
            f"got {link!r}",
        )

    model = _require_object(rec, "model")
    _require_str(model, "id", "model.id")
    if model.get("source") not in _MODEL_SOURCES:
        raise _fail(
            "model.source", f"must be one of {sorted(_MODEL_SOURCES)}, got {model.get('source')!r}"
        )


def _validate_harness(rec: Mapping[str, Any]) -> None:
    harness = _require_object(rec, "harness")
    if "hostname" in harness:
        raise _fail("harness.hostname", "a clear hostname is never recorded (use hostname_hash)")
    # Tolerated as null: a writer that could not read its own version or platform says so.
    _require_str(harness, "plugin_version", "harness.plugin_version", nullable=True)
    _require_str(harness, "platform", "harness.platform", nullable=True)
    _require_str(harness, "host_class", "harness.host_class", nullable=True)
    if "hostname_hash" not in harness:
        raise _fail("harness.hostname_hash", "required field is missing (null when unknown)")
    hostname_hash = harness["hostname_hash"]
    if hostname_hash is not None and (
        not isinstance(hostname_hash, str) or not HOSTNAME_HASH_PATTERN.fullmatch(hostname_hash)
    ):
        raise _fail(
            "harness.hostname_hash",
            "must be null or lowercase hex of at least 8 characters; "
            f"a clear hostname is never recorded, got {hostname_hash!r}",
        )


def _validate_kpi_block(rec: Mapping[str, Any]) -> None:
    kpis = rec["kpis"]
    if kpis is None:
        raise _fail(
            "kpis",
            "must be an object with the six KPI keys, got null (write each KPI as null "
            "when it was not recorded, never the whole block)",
        )
    if not isinstance(kpis, Mapping):
        raise _fail("kpis", f"must be an object, got {type(kpis).__name__}")
    _validate_kpis(kpis)


#: Top-level fields a record must carry on the write path, in SPEC order. ``schema_version``
#: (stamped when absent), ``handle`` (default null) and ``anonymized`` (derived) are not here.
REQUIRED_TOP_LEVEL_KEYS: tuple[str, ...] = (
    "record_kind",
    "run_id",
    "session_id",
    "standard_version",
    "rubric_version",
    "provenance",
    "model",
    "harness",
    "kpis",
    "dimensions",
    "timestamp",
)


def validate_record(
    d: Any, *, accepted: CalibrationAcceptance | None = None, owned: bool = False
) -> dict[str, Any]:
    """Validate a record against SPEC section 2; return its validated copy.

    Raises ``ValidationError`` naming the field and the broken rule, e.g.
    ``"overall: forbidden top-level key ..."``, ``"kpis: required field is missing"`` or
    ``"kpis.carryover: must be non-negative"``. Only the defaults SPEC section 2 marks are
    applied: ``schema_version`` is stamped when absent, ``handle`` defaults to null and
    ``anonymized`` to "no handle". Every other field is required, including the six KPI keys
    (null when not recorded), the null-able ``provenance.engine_commit``, ``harness.host_class``
    and ``harness.hostname_hash``, and ``advisory``/``calibration_status`` on a judge
    dimension; a record that omits one is refused, never completed. Records read from a
    journal go through ``normalize_record`` first (the read path fills those defaults and turns
    non-finite numbers into null); here non-finite numbers are refused.

    ``accepted``: the verified calibration certificates a judge dimension may claim
    (``evalkit.calibration.accepted_calibrations()``); the default accepts ``"uncalibrated"``
    only. Validation is pure: it reads no file, no global and no environment variable, so the
    same record and the same ``accepted`` always give the same answer.

    A seal (``provenance.record_sha256``), when present, must match the record as given:
    :class:`~evalkit.record.seal.SealMismatchError` says the record was changed after it was
    written. Records without a seal (the reference engine's) are valid.

    ``owned``: ``d`` is a dict the caller built for this call (the journal's writer): it is
    validated and stamped in place instead of being copied first.
    """
    if not isinstance(d, Mapping):
        raise ValidationError(f"record: must be a JSON object, got {type(d).__name__}")
    check_seal(d)
    return _validate(d, accepted, copy=not owned)


def _validate(
    d: Mapping[str, Any], accepted: CalibrationAcceptance | None, *, copy: bool
) -> dict[str, Any]:
    """:func:`validate_record` after the seal check.

    ``copy=False`` validates (and stamps) a record the caller already owns (a fresh normalized
    copy) instead of copying it again.
    """
    accepted = AcceptedCalibrations() if accepted is None else accepted
    for key in FORBIDDEN_TOP_LEVEL_KEYS:
        if key in d:
            raise _fail(
                key,
                "forbidden top-level key: a record has no global score, by construction "
                "(per-dimension verdicts only)",
            )
    for key in REQUIRED_TOP_LEVEL_KEYS:
        if key not in d:
            raise _fail(key, "required field is missing")
    rec = _stamp(d) if copy or not isinstance(d, dict) else _fill_defaults(d)

    sv = rec["schema_version"]
    if not _is_number(sv) or sv != SCHEMA_VERSION:
        raise _fail("schema_version", f"must be {SCHEMA_VERSION}, got {sv!r}")
    if rec.get("record_kind") != RECORD_KIND:
        raise _fail("record_kind", f"must be {RECORD_KIND!r}, got {rec.get('record_kind')!r}")
    _require_str(rec, "session_id", "session_id")
    validate_timestamp(rec.get("timestamp"))
    # run_id is only required to be a non-empty string: the journal and verify key on it,
    # and verify notes a run_id that does not follow make_run_id (records of other writers).
    _require_str(rec, "run_id", "run_id")
    if rec.get("standard_version") != STANDARD_VERSION:
        raise _fail(
            "standard_version",
            f"must be {STANDARD_VERSION!r}, got {rec.get('standard_version')!r}",
        )
    _require_str(rec, "rubric_version", "rubric_version")

    _validate_provenance_and_model(rec)
    _validate_harness(rec)
    _validate_kpi_block(rec)

    dimensions = rec.get("dimensions")
    if not isinstance(dimensions, list):
        raise _fail("dimensions", f"must be a list, got {type(dimensions).__name__}")
    if not dimensions:
        raise _fail("dimensions", "must hold at least one dimension")
    seen: set[str] = set()
    for index, dim in enumerate(dimensions):
        _validate_dimension(index, dim, seen, accepted)

    handle = rec["handle"]
    if handle is not None and (not isinstance(handle, str) or not handle):
        raise _fail("handle", f"must be a non-empty string or null, got {handle!r}")
    if not isinstance(rec["anonymized"], bool):
        raise _fail("anonymized", f"must be true or false, got {rec['anonymized']!r}")
    return rec


def validate_stored(
    value: Mapping[str, Any],
    *,
    accepted: CalibrationAcceptance | None = None,
    finite: bool = False,
) -> dict[str, Any]:
    """A stored record (a journal line as parsed) the way the read path takes it.

    The seal is checked against the value *as written* (before normalization fills any
    default), then the value is normalized and validated. The returned record keeps the seal
    when normalization filled nothing (it then matches the returned content); a line that
    omits a defaulted key is returned without it (its seal covers the line, not this view).
    Raises :class:`~evalkit.record.seal.SealMismatchError` for a record changed after it was
    written, ``ValidationError`` for anything else :func:`validate_record` refuses.
    ``finite``: the value is one orjson parsed (:func:`evalkit.record.seal.record_sha256`).
    """
    check_seal(value, finite=finite)
    provenance = value.get("provenance")
    seal = provenance.get("record_sha256") if isinstance(provenance, Mapping) else None
    bare = without_seal(value)
    normalized = normalize_record(bare)  # a fresh copy: validated without copying it again
    complete = normalized == bare
    record = _validate(normalized, accepted, copy=False)
    if seal is not None and complete:
        record["provenance"] = {**record["provenance"], "record_sha256": seal}
    return record


# --------------------------------------------------------------------------------------------
# submission projection


def _projected_provenance(provenance: Mapping[str, Any]) -> dict[str, Any]:
    out = {
        "rubric_sha256": provenance["rubric_sha256"],
        "engine_commit": provenance["engine_commit"],
    }
    if "inputs_sha256" in provenance:
        out["inputs_sha256"] = provenance["inputs_sha256"]
    return out


def project_submission(
    record: Mapping[str, Any], *, accepted: CalibrationAcceptance | None = None
) -> dict[str, Any]:
    """Return the fixed-whitelist projection of a record for submission (SPEC section 2).

    Keeps identity and version fields, provenance, model, harness (hostname only as its hash),
    numeric KPIs, and per dimension ``id, method, status, score`` plus ``advisory`` and
    ``calibration_status`` on judge dimensions. Never evidence, paths, prompts, a clear
    hostname or any key not on the whitelist. The record is validated first (``accepted`` as
    for :func:`validate_record`).

    Provenance keeps ``inputs_sha256`` when the record has one (a hash of the scored inputs: a
    receiver sees two submissions scored from the same inputs, and learns nothing it could
    invert in practice) and drops the seal ``record_sha256``: it seals the whole record,
    evidence included, which the projection leaves out, so no receiver could re-check it.
    """
    rec = validate_record(record, accepted=accepted)
    dims = []
    for dim in rec["dimensions"]:
        out = {
            "id": dim["id"],
            "method": dim["method"],
            "status": dim["status"],
            "score": dim.get("score"),
        }
        if dim["method"] == Method.JUDGE:
            out["advisory"] = dim["advisory"]
            out["calibration_status"] = dim["calibration_status"]
        dims.append(out)
    return {
        "schema_version": rec["schema_version"],
        "record_kind": rec["record_kind"],
        "run_id": rec["run_id"],
        "session_id": rec["session_id"],
        "standard_version": rec["standard_version"],
        "rubric_version": rec["rubric_version"],
        "provenance": _projected_provenance(rec["provenance"]),
        "model": {"id": rec["model"]["id"], "source": rec["model"]["source"]},
        "harness": {
            "plugin_version": rec["harness"]["plugin_version"],
            "platform": rec["harness"]["platform"],
            "host_class": rec["harness"]["host_class"],
            "hostname_hash": rec["harness"]["hostname_hash"],
        },
        "kpis": {key: rec["kpis"][key] for key in KPI_KEYS},
        "dimensions": dims,
        "handle": rec["handle"],
        "anonymized": rec["anonymized"],
        "timestamp": rec["timestamp"],
    }
