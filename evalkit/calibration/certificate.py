"""Calibration certificates: the format of a minted ``calibrated:`` status's claim.

``evalkit calibrate --register`` writes ``calibrations/<calibration_ref>.json`` into the
repository the calibration was computed against: the gold set (name, version, path, sha256),
the decision rule (path, sha256), the judge (its identity and that identity's sha256, where
the labels came from: ``model-api``, ``replay``, ``rules`` or a labels ``file``, the base URL's
host, the run log's sha256, a labels file's name but never a path), the judge's labels
embedded in canonical form with their sha256 (one label per item, or for a model judge every
call, ``labels.form`` ``"repeats"``) and the calibration result, in one canonical byte form
whose sha256 is ``calibration_ref`` and the file's name. Every field is re-checked; nothing is
informative only (schema 2 dropped the malleable ``evalkit_version``). Its ``statement`` says
what it proves and what it cannot, in the same words in every certificate.

Re-checking a certificate is bounded before any compute: its calls times its resamples (the
displayed and the decision rule's) may not exceed :data:`MAX_RECHECK_WORK`, and one that would
is refused (and never minted).

This module is the format: building the bytes, reading one back into the claim it makes. The
re-check is :mod:`evalkit.calibration.certificate_check`; a repository's certificates are
:mod:`evalkit.calibration.calibrations`. What a certificate proves and what it cannot:
docs/JUDGES.md.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.files.hashing import sha256_hex
from evalkit.files.input import JsonInputError, own_cap, parse_json, read_bytes

if TYPE_CHECKING:
    from evalkit.calibration._result import CalibrationResult

__all__ = [
    "CALIBRATIONS_DIR",
    "CERTIFICATE_KIND",
    "MAX_RECHECK_WORK",
    "ORIGINS",
    "STATEMENT",
    "CertificateError",
    "VerifiedCertificate",
    "certificate_bytes",
    "certificate_dict",
    "read_certificate_bytes",
    "recheck_work",
]

CALIBRATIONS_DIR = "calibrations"
CERTIFICATE_KIND = "evalkit calibration certificate"
#: ``labels.form`` of a model judge's certificate: every call, K per item
REPEATS_FORM = "repeats"
_CALL_KEYS = frozenset({"item_id", "repeat", "label", "outcome"})
_OUTCOMES = ("ok", "cannot-parse", "error")
#: 2: the judge section; ``evalkit_version`` dropped (it was malleable and not re-checked)
SCHEMA = 2
_MAX_CERTIFICATE_BYTES = 64 << 20
#: A certificate names the bootstrap it displays; re-checking it re-runs that bootstrap, so the
#: resamples a hostile certificate may ask for are bounded.
MAX_RESAMPLES = 100_000
#: The largest repeat index a certificate may name (re-checking counts items x repeats calls).
MAX_REPEAT = 999
#: The most calls x resamples a re-check may compute (199 gold items x 5 repeats x 2000
#: resamples is 2.0M; a re-check of this size takes seconds and tens of MB).
MAX_RECHECK_WORK = 6_000_000
#: Where a certificate's labels came from.
ORIGINS = ("model-api", "replay", "rules", "file")
#: What every certificate says it proves and what it cannot (docs/JUDGES.md). Re-checked like
#: every other field, so a certificate cannot claim more.
STATEMENT = (
    "Proves: these labels, from the judge identity in the judge section, agree with the "
    "frozen gold labels under the locked rule (re-scored offline from hashed content). Labels "
    "from a file name no judge identity, so no record's judge can claim this certificate. "
    "Cannot prove: that a provider really ran the model (no provider signs its replies)."
)
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_JUDGE_KEYS = frozenset(
    {"identity", "identity_sha256", "origin", "base_url_host", "run_log_sha256", "source"}
)


class CertificateError(EvalkitError):
    """A calibration certificate that does not verify; the message names it and says why."""


@dataclass(frozen=True)
class VerifiedCertificate:
    """A certificate that re-checked: the status it lets a record of its dimension carry."""

    calibration_ref: str
    calibration_status: str
    dimension_id: str
    judge: str
    gold_tag: str
    gold_sha256: str
    path: Path | None
    #: the judge identity it was earned by (None: a labels file, which no judge can claim)
    identity: Mapping[str, Any] | None = None
    identity_sha256: str | None = None
    origin: str = "file"
    #: the newest locked version of its gold set when newer than its own (else None)
    superseded_by: str | None = None

    @property
    def entry(self) -> tuple[str, str, str]:
        """The ``(dimension, status, reference)`` a record must carry to claim it."""
        return (self.dimension_id, self.calibration_status, self.calibration_ref)


def _encode(obj: Any) -> bytes:
    text = json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=True, allow_nan=False)
    return (text + "\n").encode("ascii")


def certificate_dict(result: CalibrationResult) -> dict[str, Any]:
    """The certificate of a mintable ``result`` as a dict (see the module docstring)."""
    # deferred: _result loads pandas; checking a record's certificate claim must not
    from evalkit.calibration._result import canonical_json

    if not result.mintable:
        raise EvalkitError(f"no certificate for this calibration: {result.mint_reason}")
    labels: dict[str, Any]
    items: list[dict[str, Any]]
    if result.repeats is None:
        items = [{"item_id": iid, "label": label} for iid, label in result.labels]
        labels = {"sha256": sha256_hex(canonical_json(items)), "items": items}
    else:
        items = [
            {"item_id": iid, "repeat": repeat, "label": label, "outcome": outcome}
            for iid, repeat, label, outcome in result.calls
        ]
        labels = {"form": REPEATS_FORM, "sha256": sha256_hex(canonical_json(items)), "items": items}
    return {
        "kind": CERTIFICATE_KIND,
        "schema": SCHEMA,
        "statement": STATEMENT,
        "judge": dict(result.judge_info),
        "gold": {
            "name": result.gold_name,
            "version": result.gold_version,
            "path": result.gold_path,
            "sha256": result.gold_sha256,
        },
        "decision_rule": {
            "path": result.decision_rule_path,
            "sha256": str(result.decision_rule["sha256"]),
        },
        "labels": labels,
        "result": result._core(),
    }


def certificate_bytes(result: CalibrationResult) -> bytes:
    """The canonical bytes of ``result``'s certificate; their sha256 is its calibration_ref."""
    return _encode(certificate_dict(result))


def recheck_work(calls: int, n_resamples: int, rule_resamples: int) -> int:
    """Calls x resamples a re-check computes (the displayed interval and, if other, the rule's)."""
    return calls * (n_resamples + (rule_resamples if rule_resamples != n_resamples else 0))


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class _Claim:
    """What a certificate names, checked for shape (nothing re-scored yet)."""

    gold_path: str
    gold_sha256: str
    rule_path: str
    labels: list[dict[str, Any]]
    repeats: bool
    dimension_id: str
    judge: str
    level: float
    n_resamples: int
    rng: int | None
    judge_section: Mapping[str, Any]


def _field(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = obj.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise EvalkitError(f"field {where}{key} is missing or of the wrong type")
    return value


def _repo_path(rel: str, where: str) -> str:
    """A repository-relative posix path under ``gold/``, with no way out of it."""
    parts = PurePosixPath(rel).parts
    if rel != PurePosixPath(rel).as_posix() or not parts or parts[0] != "gold" or ".." in parts:
        raise EvalkitError(f"field {where} {rel!r} is not a path inside the repository's gold/")
    return rel


def _call_ok(item: Any) -> bool:
    repeat = item.get("repeat") if isinstance(item, dict) else None
    return (
        isinstance(item, dict)
        and set(item) == _CALL_KEYS
        and isinstance(item["item_id"], str)
        and isinstance(repeat, int)
        and not isinstance(repeat, bool)
        and 0 <= repeat <= MAX_REPEAT
        and item["outcome"] in _OUTCOMES
        and (item["label"] is None or isinstance(item["label"], str))
    )


def _labels_form(labels: Mapping[str, Any], items: list[Any]) -> bool:
    """True for a model judge's calls (``form`` ``"repeats"``), False for one label per item.

    Every item is checked for shape.
    """
    form = labels.get("form")
    if "form" in labels and form != REPEATS_FORM:
        raise EvalkitError(f"field labels.form must be {REPEATS_FORM!r} when present")
    for i, item in enumerate(items):
        if form == REPEATS_FORM and not _call_ok(item):
            raise EvalkitError(
                f"labels.items[{i}] is not {{item_id, repeat (0..{MAX_REPEAT}), label, "
                f"outcome {'|'.join(_OUTCOMES)}}}"
            )
        if form is None and not (
            isinstance(item, dict)
            and set(item) == {"item_id", "label"}
            and isinstance(item["item_id"], str)
            and (item["label"] is None or isinstance(item["label"], str))
        ):
            raise EvalkitError(f"labels.items[{i}] is not {{item_id, label}}")
    return form == REPEATS_FORM


def _claim(obj: Any) -> _Claim:
    if not isinstance(obj, dict):
        raise EvalkitError("not a JSON object")
    if obj.get("kind") != CERTIFICATE_KIND or obj.get("schema") != SCHEMA:
        raise EvalkitError(f"not an evalkit calibration certificate (schema {SCHEMA})")
    gold = _field(obj, "gold", dict, "")
    rule = _field(obj, "decision_rule", dict, "")
    labels = _field(obj, "labels", dict, "")
    result = _field(obj, "result", dict, "")
    boot = _field(result, "bootstrap", dict, "result.")
    items = _field(labels, "items", list, "labels.")
    repeats = _labels_form(labels, items)
    rng = boot.get("rng")
    if rng is not None and (not isinstance(rng, int) or isinstance(rng, bool) or rng < 0):
        raise EvalkitError("field result.bootstrap.rng must be a non-negative integer or null")
    level = float(_field(boot, "level", (int, float), "result.bootstrap."))
    n_resamples = _field(boot, "n_resamples", int, "result.bootstrap.")
    if not 0 < level < 1 or not 1 <= n_resamples <= MAX_RESAMPLES:
        raise EvalkitError(
            f"field result.bootstrap: level must lie in (0, 1) and n_resamples in "
            f"1..{MAX_RESAMPLES}, got {level!r} and {n_resamples!r}"
        )
    if not _HEX64.match(_field(gold, "sha256", str, "gold.")):
        raise EvalkitError("field gold.sha256 is not a sha256")
    graduation = result.get("graduation")
    rule_resamples = graduation.get("n_resamples") if isinstance(graduation, dict) else None
    if not isinstance(rule_resamples, int) or not 1 <= rule_resamples <= MAX_RESAMPLES:
        raise EvalkitError(f"field result.graduation.n_resamples must lie in 1..{MAX_RESAMPLES}")
    work = recheck_work(len(items), n_resamples, rule_resamples)
    if work > MAX_RECHECK_WORK:  # before any compute: a re-check is bounded
        raise EvalkitError(
            f"re-checking it would compute {len(items):,} calls x resamples = {work:,}, over "
            f"the bound of {MAX_RECHECK_WORK:,}; refused before any compute"
        )
    if obj.get("statement") != STATEMENT:
        raise EvalkitError("field statement is not what a certificate proves (docs/JUDGES.md)")
    return _Claim(
        gold_path=_repo_path(_field(gold, "path", str, "gold."), "gold.path"),
        gold_sha256=_field(gold, "sha256", str, "gold."),
        rule_path=_repo_path(_field(rule, "path", str, "decision_rule."), "decision_rule.path"),
        labels=items,
        repeats=repeats,
        dimension_id=_field(result, "dimension_id", str, "result."),
        judge=_field(result, "judge", str, "result."),
        level=level,
        n_resamples=n_resamples,
        rng=rng,
        judge_section=_judge(_field(obj, "judge", dict, "")),
    )


def _judge(judge: dict[str, Any]) -> dict[str, Any]:
    """The certificate's judge section, checked for shape and for its identity's hash."""
    from evalkit.record.judging import identity_sha256, judge_identity

    if set(judge) != _JUDGE_KEYS:
        raise EvalkitError(f"field judge must hold exactly {sorted(_JUDGE_KEYS)}")
    origin, identity = judge["origin"], judge["identity"]
    if origin not in ORIGINS:
        raise EvalkitError(f"field judge.origin must be one of {', '.join(ORIGINS)}")
    if identity is not None and judge_identity(identity) != identity:
        raise EvalkitError("field judge.identity is not a complete judge identity")
    if (identity is None) != (origin == "file"):
        raise EvalkitError("field judge.identity is null exactly for labels from a file")
    if judge["identity_sha256"] != identity_sha256(identity):
        raise EvalkitError("field judge.identity_sha256 is not the sha256 of judge.identity")
    source = judge["source"]
    if source is not None and (not isinstance(source, str) or "/" in source or "\\" in source):
        raise EvalkitError("field judge.source must be a file name (never a path) or null")
    for key in ("base_url_host", "run_log_sha256"):
        if judge[key] is not None and not isinstance(judge[key], str):
            raise EvalkitError(f"field judge.{key} must be a string or null")
    return judge


def _parse(raw: bytes) -> tuple[dict[str, Any], _Claim]:
    try:
        obj = parse_json(raw)
    except JsonInputError as exc:
        raise EvalkitError(f"not JSON ({exc})") from None
    claim = _claim(obj)
    if _encode(obj) != raw:
        raise EvalkitError("not in the canonical form certificates are written in")
    from evalkit.calibration._result import canonical_json  # deferred: loads pandas

    if sha256_hex(canonical_json(claim.labels)) != obj["labels"].get("sha256"):
        raise EvalkitError("its labels do not hash to its labels.sha256")
    return obj, claim


def read_certificate_bytes(path: str | os.PathLike[str]) -> bytes:
    """A certificate file's bytes: a regular file only, at most its cap (module constant)."""
    return read_bytes(path, "calibration certificate", max_bytes=own_cap(_MAX_CERTIFICATE_BYTES))
