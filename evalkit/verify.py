"""Offline re-verify: is the stored record, byte for byte, what the engine writes for it?

**The rule.** A record's fields are of three sorts, and each is checked the only way it can be:

* **Derived from the ledger** (the deterministic dimensions, their order, status, score and
  evidence; the KPIs; ``harness.host_class``; ``session_id`` as resolved): re-scored from the
  same metrics directory under the stored rubric version.
* **Derived from other fields** (``run_id`` from ``session_id`` and ``timestamp``;
  ``anonymized`` from ``handle``; ``provenance.rubric_sha256`` from the rubric text;
  ``schema_version``, ``record_kind``, ``standard_version``): reproduced by the engine.
* **Run inputs** (``timestamp``, ``model.id``/``model.source``, ``handle``,
  ``harness.plugin_version``/``platform``/``hostname_hash``, ``provenance.engine_commit``):
  what the scoring run was told or where it ran. No re-score can re-derive them, and no hash
  anyone can recompute offline could bind them either (a forger recomputes it too), so they
  are passed back to the engine as inputs, and what can be checked is: the engine would
  write them so (``model.id`` stripped, a known ``model.source``, ``anonymized`` = no handle,
  ``run_id`` built from ``session_id`` + ``timestamp``, ``harness.hostname_hash`` null or 16
  lowercase hex as the engine computes it), and ``provenance.engine_commit`` is
  null or a git commit id that this evalkit's repository holds (checked with ``git`` when
  evalkit runs from a checkout; otherwise only its form, and a note says so). The result lists
  these fields as ``claims``: taken from the record, not re-derived.

The engine's record for those inputs is then compared with the stored line as JSON values,
exactly (:func:`evalkit.record_diff.diff_records`): every key, its order, every dimension and
their order, strings code point for code point, numbers with their JSON type. The keys SPEC
section 2 gives a default (``schema_version``, ``handle``, ``anonymized``) may be absent, as in
the reference engine's lines. Whitespace between JSON tokens and ``\\u`` escapes, which no JSON
reader sees, are not compared; a key written twice in one object (readers disagree on which
copy wins) is a difference. **Any difference exits 1**, each one classified (verdict, score,
kpi, evidence values, evidence wording, order, identity, extra or missing key, duplicate,
form), and the first line says whether a verdict changed.

**Judge dimensions** are advisory and not re-scored (the engine never writes them; a judge
does, through :func:`evalkit.judge.run.merge_judge`). Each one is checked against that
writer's contract instead: an id the rubric version defines for a judge, only the writer's
keys, a valid status, string evidence, a finite or null score, ``advisory: true``, placed
after every deterministic dimension ("deterministic before judge"); its calibration status is
checked by record validation. A violation is a drift of kind ``judge-contract``.

**Copies.** Every other line carrying the same run id must be the same JSON value; a copy that
differs, or a line with the run id that is not a valid record, is a ``duplicate`` drift.

**Version mismatch** (exit 3): the stored ``rubric_version`` is unknown to evalkit, or the
stored ``rubric_sha256`` is a sha256 that no current rubric text has (the text changed since).
Re-scoring under other rules would compare different things, so that is never called drift.
A ``rubric_sha256`` that is the current hash of *another* known version (the label was
changed) or not a sha256 at all is a drift.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit import journal
from evalkit.engine import score_session
from evalkit.errors import EvalkitError, SessionResolutionError
from evalkit.gitinfo import has_commit
from evalkit.input_files import JsonInputError, parse_json
from evalkit.journal import MAX_RECORD_DEPTH
from evalkit.judge.parse import JUDGE_DIMENSION_IDS, validate_judge_dimensions
from evalkit.ledger_files import describe_sessions_file
from evalkit.record import Method, normalize_record, validate_record
from evalkit.record_diff import (
    DriftKind,
    FieldDrift,
    diff_records,
    duplicate_keys,
    evidence_tokens,
    iter_kinds,
)
from evalkit.rubrics import RUBRIC_VERSIONS, get_rubric

if TYPE_CHECKING:
    from evalkit.calibration_status import CalibrationAcceptance

__all__ = [
    "CLAIMS",
    "DriftKind",
    "FieldDrift",
    "VerifyOutcome",
    "VerifyResult",
    "evidence_tokens",
    "find_record",
    "verify_record",
]

DEFAULT_JOURNAL_NAME = "eval.jsonl"

#: Record fields that are run inputs: passed back to the engine, checked for form and
#: consistency, never re-derived (see the module docstring).
CLAIMS: tuple[str, ...] = (
    "timestamp",
    "model.id",
    "model.source",
    "handle",
    "harness.plugin_version",
    "harness.platform",
    "harness.hostname_hash",
    "provenance.engine_commit",
)
_PASSED_BACK_HARNESS = ("plugin_version", "platform", "hostname_hash")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_HOSTNAME_HASH = re.compile(r"[0-9a-f]{16}")
_JUDGE_KEYS = frozenset(
    {"id", "method", "status", "evidence", "score", "advisory", "calibration_status"}
    | {"calibration_ref"}
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
class VerifyResult:
    """What ``verify_record`` found. ``exit_code`` follows SPEC section 3."""

    run_id: str
    outcome: VerifyOutcome
    rubric_version: str
    drifts: tuple[FieldDrift, ...] = ()
    mismatch: str | None = None
    stored_sha256: str | None = None
    current_sha256: str | None = None
    verified_dimensions: tuple[str, ...] = ()
    unverified_dimensions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    claims: tuple[str, ...] = CLAIMS

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code

    @property
    def ok(self) -> bool:
        return self.outcome is VerifyOutcome.AGREEMENT

    @property
    def wording(self) -> tuple[FieldDrift, ...]:
        """The evidence differences that are wording only (still drift)."""
        return tuple(d for d in self.drifts if d.kind is DriftKind.EVIDENCE_WORDING)

    @property
    def verdicts_changed(self) -> tuple[str, ...]:
        """Dimensions whose verdict (status or method) differs, or that are present on one
        side only."""
        kinds = (DriftKind.VERDICT, DriftKind.PRESENCE)
        return tuple(dict.fromkeys(d.dimension for d in self.drifts if d.kind in kinds))

    def headline(self) -> str:
        """One line: the outcome, and for a drift whether any verdict changed."""
        if self.outcome is VerifyOutcome.VERSION_MISMATCH:
            return f"version mismatch: {self.run_id}: {self.mismatch}"
        if self.outcome is VerifyOutcome.AGREEMENT:
            return (
                f"agreement: {self.run_id}: the stored record is what the engine writes, byte "
                f"for byte ({len(self.verified_dimensions)} deterministic dimension(s) "
                f"re-scored under {self.rubric_version})"
            )
        kinds = ", ".join(kind.value for kind in iter_kinds(self.drifts))
        changed = self.verdicts_changed
        verdicts = f"VERDICT CHANGED: {', '.join(changed)}" if changed else "no verdict changed"
        return f"drift: {self.run_id}: {len(self.drifts)} difference(s) [{kinds}]; {verdicts}"

    def lines(self) -> list[str]:
        """Human-readable report: the headline, one line per difference, then what was not
        re-derived."""
        out = [self.headline()]
        out.extend(d.line() for d in self.drifts)
        if self.unverified_dimensions:
            out.append(
                "not re-scored (judge, advisory; checked against the judge contract): "
                + ", ".join(self.unverified_dimensions)
            )
        if self.outcome is not VerifyOutcome.VERSION_MISMATCH:
            out.append(
                "taken from the record, not re-derivable (checked for form and consistency): "
                + ", ".join(self.claims)
            )
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
            "verdicts_changed": list(self.verdicts_changed),
            "drifts": [d.to_dict() for d in self.drifts],
            "verified_dimensions": list(self.verified_dimensions),
            "unverified_dimensions": list(self.unverified_dimensions),
            "claims": list(self.claims),
            "notes": list(self.notes),
        }


# ------------------------------------------------------------------------- the stored line


@dataclass(frozen=True)
class _Stored:
    """The verified copy: validated (the run's inputs) and as parsed (for the comparison)."""

    record: dict[str, Any]
    raw: dict[str, Any]
    drifts: tuple[FieldDrift, ...]
    notes: tuple[str, ...]


def _copies(
    run_id: str, path: Path, accepted: CalibrationAcceptance | None = None
) -> tuple[list[tuple[int, dict[str, Any]]], Any]:
    """Every valid copy of ``run_id`` (exact, else as evalkit prints it, surrogates escaped:
    :meth:`evalkit.journal.JournalRead.find`) and the journal as read."""
    try:
        read = journal.read(path, accepted=accepted)
    except FileNotFoundError:
        raise EvalkitError(f"{path}: no journal (nothing has been recorded there)") from None
    return read.find(run_id), read


def _unknown(run_id: str, path: Path, read: Any) -> EvalkitError:
    invalid = [d for d in read.diagnostics if d.run_id == run_id]
    if invalid:
        d = invalid[-1]
        return EvalkitError(
            f"{path}: line {d.line} holds run id {run_id!r} but is not a valid record: {d.reason}"
        )
    hint = (
        f"; {len(read.diagnostics)} unreadable line(s) in the journal" if read.diagnostics else ""
    )
    return EvalkitError(f"{path}: unknown run id {run_id!r}{hint}")


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
    path = Path(journal_path)
    copies, read = _copies(run_id, path, accepted)
    if not copies:
        raise _unknown(run_id, path, read)
    notes: list[str] = []
    if len(copies) > 1:
        lines = ", ".join(str(line) for line, _ in copies)
        notes.append(f"run id appears {len(copies)} times (lines {lines}); the last is shown")
    return copies[-1][1], notes


def _parsed(raw: bytes) -> Any:
    try:
        return parse_json(raw, max_depth=MAX_RECORD_DEPTH)
    except JsonInputError:  # read() parsed this very line; only a race could get here
        return None


def _copy_drifts(
    copies: list[tuple[int, dict[str, Any]]], raws: dict[int, bytes], last: Any
) -> list[FieldDrift]:
    """How every earlier copy of the run id differs from the verified (last) one."""
    last_line = copies[-1][0]
    out: list[FieldDrift] = []
    for line, _ in copies[:-1]:
        value = _parsed(raws.get(line, b""))
        if not isinstance(value, dict):
            continue
        for d in diff_records(value, last):
            out.append(
                FieldDrift(
                    d.dimension,
                    d.field,
                    d.stored,
                    d.rescored,
                    f"line {line} and line {last_line} are copies of this run id that differ",
                    DriftKind.DUPLICATE,
                    (f"line {line}", f"line {last_line}"),
                )
            )
    return out


def _locate(run_id: str, path: Path, accepted: CalibrationAcceptance | None = None) -> _Stored:
    copies, read = _copies(run_id, path, accepted)
    if not copies:
        raise _unknown(run_id, path, read)
    raws = journal.raw_lines(path, [line for line, _ in copies])
    last_line, record = copies[-1]
    raw = _parsed(raws.get(last_line, b""))
    if not isinstance(raw, dict):
        raise EvalkitError(f"{path}: line {last_line} changed while it was read; run again")
    drifts = _copy_drifts(copies, raws, raw)
    drifts += [
        FieldDrift(
            "record",
            f"key {key!r}",
            "written twice in one object",
            "written once",
            "JSON readers disagree on which copy wins",
            DriftKind.DUPLICATE,
        )
        for key in duplicate_keys(raws[last_line])
    ]
    drifts += [
        FieldDrift(
            "record",
            f"line {d.line}",
            d.reason,
            "no other line with this run id",
            "a line carrying this run id is not a valid record",
            DriftKind.DUPLICATE,
        )
        for d in read.diagnostics
        if d.run_id == record["run_id"]
    ]
    notes = []
    if len(copies) > 1:
        lines = ", ".join(str(line) for line, _ in copies)
        notes.append(f"run id appears {len(copies)} times (lines {lines}); verifying the last")
    return _Stored(record, raw, tuple(drifts), tuple(notes))


# ------------------------------------------------------------------------------- the checks


def _version_check(stored: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(mismatch message or None, current sha256 or None); see the module docstring."""
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
    other_versions = {get_rubric(v).sha256 for v in RUBRIC_VERSIONS if v != version}
    if (
        current_sha != stored_sha
        and _SHA256.fullmatch(stored_sha)
        and stored_sha not in other_versions
    ):
        return (
            f"rubric text changed: {version} was scored against rubric_sha256 {stored_sha}, "
            f"but the current rubric file {rubric.text_path.name} hashes to {current_sha}",
            current_sha,
        )
    # equal, not a sha256 at all, or another version's hash: re-scored, and the diff says it
    return None, current_sha


def _hostname_hash_check(value: Any) -> list[FieldDrift]:
    # the engine writes the first 16 hex of sha256(hostname), or null when there is no name
    if value is None or (isinstance(value, str) and _HOSTNAME_HASH.fullmatch(value)):
        return []
    why = "the engine writes the first 16 hex of sha256(hostname) or null"
    return [FieldDrift("record", "harness.hostname_hash", value, "16 lowercase hex or null", why)]


def _engine_commit_check(value: Any) -> tuple[list[FieldDrift], list[str]]:
    if value is None:
        return [], []
    field = "provenance.engine_commit"
    if not isinstance(value, str) or not _COMMIT.fullmatch(value):
        why = "the engine writes the git commit id of its checkout (40 or 64 lowercase hex) or null"
        return [FieldDrift("record", field, value, "a commit id or null", why)], []
    known = has_commit(value)
    if known is None:
        return [], [f"{field} {value} not checked: this evalkit is not a git checkout"]
    if not known:
        why = "names no commit of this evalkit repository: the claim cannot be re-checked"
        return [FieldDrift("record", field, value, "a commit of this repository", why)], []
    return [], []


def _judge_contract(dim: Mapping[str, Any], rubric_version: str) -> list[FieldDrift]:
    """How a stored judge dimension breaks the judge writer's contract (module docstring)."""
    dim_id = str(dim.get("id"))
    allowed = JUDGE_DIMENSION_IDS.get(rubric_version, ())
    out: list[FieldDrift] = []

    def bad(field: str, stored: Any, wanted: Any, why: str) -> None:
        out.append(FieldDrift(dim_id, field, stored, wanted, why, DriftKind.JUDGE))

    if dim_id not in allowed:
        bad("id", dim_id, list(allowed), f"not a judge dimension of {rubric_version}")
    for key in dim:
        if key not in _JUDGE_KEYS:
            bad(key, dim[key], "(absent)", "a key the judge writer never writes")
    if dim.get("advisory") is not True:
        bad("advisory", dim.get("advisory"), True, "a judge dimension is advisory")
    if "calibration_status" not in dim:
        bad("calibration_status", "(absent)", "uncalibrated", "the judge writer always writes it")
    if dim_id in allowed and not validate_judge_dimensions([dict(dim)], rubric_version):
        bad("status/evidence/score", dim.get("status"), "valid", "not a valid judge verdict")
    return out


def _rescore(stored: Mapping[str, Any], metrics_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The record the engine writes for the stored record's inputs (deterministic part)."""
    harness = stored["harness"]
    try:
        fresh = score_session(
            metrics_dir,
            session_id=stored["session_id"],
            rubric=stored["rubric_version"],
            timestamp=stored["timestamp"],
            model_id=stored["model"]["id"],
            model_source=stored["model"]["source"],
            handle=stored["handle"],
            harness={key: harness[key] for key in _PASSED_BACK_HARNESS if key in harness},
        )
    except SessionResolutionError as exc:
        where = describe_sessions_file(metrics_dir)
        raise type(exc)(
            f"cannot re-score {stored['run_id']} from {metrics_dir}: {exc} ({where})"
        ) from exc
    except EvalkitError as exc:
        raise type(exc)(f"cannot re-score {stored['run_id']} from {metrics_dir}: {exc}") from exc
    record = fresh.to_dict()
    # a run input, checked by _engine_commit_check; the verifying engine's own commit is not it
    record["provenance"]["engine_commit"] = stored["provenance"]["engine_commit"]
    return record


def verify_record(
    record_or_run_id: str | Mapping[str, Any],
    metrics_dir: str | os.PathLike[str],
    journal_path: str | os.PathLike[str] | None = None,
    *,
    accepted: CalibrationAcceptance | None = None,
) -> VerifyResult:
    """Re-score a stored record from ``metrics_dir`` and compare it byte for byte.

    ``record_or_run_id`` is a record (dict) or a run id looked up in ``journal_path`` (default
    ``<metrics_dir>/eval.jsonl``). Returns a ``VerifyResult`` (module docstring: the rule);
    raises ``EvalkitError`` for an unknown run id, an invalid stored record, or a session the
    ledger no longer resolves.
    ``accepted``: the verified calibration certificates a judge dimension may claim
    (``validate_record``; default: ``uncalibrated`` only).
    """
    if isinstance(record_or_run_id, str):
        path = Path(journal_path) if journal_path else Path(metrics_dir) / DEFAULT_JOURNAL_NAME
        found = _locate(record_or_run_id, path, accepted)
    elif isinstance(record_or_run_id, Mapping):
        raw = dict(record_or_run_id)
        found = _Stored(validate_record(normalize_record(raw), accepted=accepted), raw, (), ())
    else:
        raise EvalkitError(
            f"record_or_run_id: expected a run id or a record, got {type(record_or_run_id).__name__}"
        )
    stored = found.record
    run_id = stored["run_id"]
    judges = [d for d in found.raw["dimensions"] if d.get("method") == Method.JUDGE]
    judge_ids = tuple(str(d.get("id")) for d in judges)

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
            notes=found.notes,
        )

    expected = _rescore(stored, metrics_dir)
    deterministic_ids = tuple(d["id"] for d in expected["dimensions"])
    drifts = list(found.drifts)
    commit_drifts, commit_notes = _engine_commit_check(stored["provenance"]["engine_commit"])
    drifts += commit_drifts
    drifts += _hostname_hash_check(stored["harness"]["hostname_hash"])
    for dim in judges:
        drifts += _judge_contract(dim, stored["rubric_version"])
    # the judge dimensions are carried over (not re-scored), after the deterministic ones
    expected["dimensions"] += [d for d in judges if d.get("id") not in deterministic_ids]
    drifts += diff_records(found.raw, expected)
    return VerifyResult(
        run_id=run_id,
        outcome=VerifyOutcome.DRIFT if drifts else VerifyOutcome.AGREEMENT,
        rubric_version=stored["rubric_version"],
        drifts=tuple(drifts),
        stored_sha256=stored["provenance"]["rubric_sha256"],
        current_sha256=current_sha,
        verified_dimensions=deterministic_ids,
        unverified_dimensions=judge_ids,
        notes=found.notes + tuple(commit_notes),
    )
