"""The checks ``verify`` makes that no re-score makes.

The rubric version, the run inputs' form and consistency, and judge dimensions against the
judge writer's contract (the rule: docs/RECORDS.md, "How `verify` decides").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from evalkit.judge.parse import JUDGE_DIMENSION_IDS, validate_judge_dimensions
from evalkit.provenance.git import has_commit
from evalkit.rubrics import RUBRIC_VERSIONS, get_rubric
from evalkit.verify.diff import DriftKind, FieldDrift

__all__ = ["judge_contract", "rubric_hashes", "run_input_checks", "text_version", "version_check"]

_SHA256 = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_HOSTNAME_HASH = re.compile(r"[0-9a-f]{16}")
_JUDGE_KEYS = frozenset(
    {"id", "method", "status", "evidence", "score", "advisory", "calibration_status"}
    | {"calibration_ref"}
)


def text_version(stored: Mapping[str, Any], hashes: Mapping[str, str] | None = None) -> str | None:
    """The known rubric version whose current text the stored ``rubric_sha256`` names, if any.

    A record is re-scored under the rules its hash names: a known text under an unknown (or
    another) version label is a relabelled record, a drift, never a version mismatch.
    ``hashes`` as for :func:`version_check`.
    """
    stored_sha = stored["provenance"]["rubric_sha256"]
    hashes = rubric_hashes() if hashes is None else hashes
    return next((v for v in RUBRIC_VERSIONS if hashes[v] == stored_sha), None)


def version_check(
    stored: Mapping[str, Any], hashes: Mapping[str, str] | None = None
) -> tuple[str | None, str | None]:
    """(mismatch message or None, current sha256 or None): the rule in docs/RECORDS.md.

    ``hashes``: every known version's current text sha256, hashed once for a whole journal
    (:func:`rubric_hashes`); by default each call hashes the texts again.
    """
    hashes = rubric_hashes() if hashes is None else hashes
    version = stored["rubric_version"]
    stored_sha = stored["provenance"]["rubric_sha256"]
    if version not in RUBRIC_VERSIONS and text_version(stored, hashes) is not None:
        return None, stored_sha  # a known text under an unknown label: re-scored, a drift
    if version not in RUBRIC_VERSIONS:
        known = ", ".join(RUBRIC_VERSIONS)
        return (
            f"stored rubric_version {version!r} is unknown to this evalkit (known: {known}); "
            f"stored rubric_sha256 {stored_sha}",
            None,
        )
    rubric = get_rubric(version)
    current_sha = hashes[version]
    other_versions = {hashes[v] for v in RUBRIC_VERSIONS if v != version}
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


def rubric_hashes() -> dict[str, str]:
    """Each known rubric version's current text sha256 (each text read and hashed once)."""
    return {v: get_rubric(v).sha256 for v in RUBRIC_VERSIONS}


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


def judge_contract(dim: Mapping[str, Any], rubric_version: str) -> list[FieldDrift]:
    """How a stored judge dimension breaks the judge writer's contract (docs/RECORDS.md)."""
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


def run_input_checks(stored: Mapping[str, Any]) -> tuple[list[FieldDrift], list[str]]:
    """The run inputs a re-score cannot re-derive, checked for the form the engine writes.

    ``provenance.engine_commit`` a commit of this repository, ``harness.hostname_hash``;
    returns (drifts, notes).
    """
    drifts, notes = _engine_commit_check(stored["provenance"]["engine_commit"])
    drifts += _hostname_hash_check(stored["harness"]["hostname_hash"])
    return drifts, notes
