"""Calibration certificates: a minted ``calibrated:`` status as a claim anyone can re-check.

``evalkit calibrate --register`` (:func:`register`) writes ``calibrations/<calibration_ref>.json``
into the repository the calibration was computed against. The certificate holds

* the gold set (name, version, repository path, sha256: equal to the pre-registration lock's
  entry for that version and to the set on disk),
* the decision rule (repository path and sha256, equal to the lock's),
* the judge's labels, embedded in canonical form, and their sha256: one ``{item_id, label}``
  per item, or for a model judge (``labels.form`` ``"repeats"``) every call
  ``{item_id, repeat, label, outcome}`` (K per item, cannot-parse and error calls included),
  re-scored as repeats under the rule the certificate names,
* the calibration result (every figure, the graduation verdict, the judge and dimension),
* the evalkit version that made it (informative; not part of what is re-checked),

in one canonical byte form (sorted keys, two-space indent, ASCII, final newline);
``calibration_ref`` is the sha256 of those bytes and the file is named after it.

:func:`verify_certificate` re-checks one offline: the bytes hash to its name, the gold set and
decision rule in the repository hash to what it names and to what the lock holds, the labels
hash to their sha256, and re-scoring the labels against the gold set under the rule (same level,
resamples and seed) graduates and reproduces every figure. Anything else is refused with the
reason. :func:`accepted_calibrations` verifies every certificate of a repository and returns the
:class:`~evalkit.record.calibration_status.AcceptedCalibrations` record validation takes. A verified
outcome is cached per process under the sha256 of everything it was computed from, so repeated
reads are cheap and an edited input is re-checked.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from evalkit._version import __version__
from evalkit.errors import EvalkitError
from evalkit.files.errors import input_file_error
from evalkit.files.hashing import sha256_hex
from evalkit.files.input import JsonInputError, own_cap, parse_json, read_bytes
from evalkit.gold.sets import load as load_gold
from evalkit.gold.sets import sha256_file
from evalkit.prereg import lock as prereg
from evalkit.provenance.repository import repo_root
from evalkit.record.calibration_status import (
    ALLOWED_UNCALIBRATED,
    AcceptedCalibrations,
    mint_status,
)

if TYPE_CHECKING:
    from evalkit.calibration._result import CalibrationResult

__all__ = [
    "CALIBRATIONS_DIR",
    "CERTIFICATE_KIND",
    "CertificateError",
    "RepositoryCalibrations",
    "VerifiedCertificate",
    "accepted_calibrations",
    "certificate_bytes",
    "certificate_dict",
    "is_registered",
    "register",
    "verify_certificate",
]

CALIBRATIONS_DIR = "calibrations"
CERTIFICATE_KIND = "evalkit calibration certificate"
#: ``labels.form`` of a model judge's certificate: every call, K per item
REPEATS_FORM = "repeats"
_CALL_KEYS = frozenset({"item_id", "repeat", "label", "outcome"})
_OUTCOMES = ("ok", "cannot-parse", "error")
SCHEMA = 1
_MAX_CERTIFICATE_BYTES = 64 << 20
#: A certificate names the bootstrap it displays; re-checking it re-runs that bootstrap, so the
#: resamples a hostile certificate may ask for are bounded.
MAX_RESAMPLES = 100_000
#: The largest repeat index a certificate may name (re-checking counts items x repeats calls).
MAX_REPEAT = 999
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_NOT_RECHECKED = frozenset({"evalkit_version"})
#: fingerprint of everything a verification read -> its outcome (verified, or the refusal)
_CACHE: dict[str, VerifiedCertificate | str] = {}


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
        "evalkit_version": __version__,
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
    )


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


# --------------------------------------------------------------------------- re-checking


def _fingerprint(ref: str, base: Path, claim: _Claim) -> str:
    """sha256 over everything a verification reads.

    The certificate, the gold version folder, the set's decision rules and the repository's
    lock.
    """
    h = hashlib.sha256(f"{ref}\0{base}\0".encode())
    vdir = base / claim.gold_path
    set_dir = vdir.parent
    files = sorted(vdir.iterdir()) if vdir.is_dir() else []
    files += [*sorted(set_dir.glob("DECISION_RULE*.json")), base / prereg.LOCK_NAME]
    for p in files:
        exists = p.exists() or p.is_symlink()
        digest = sha256_file(p, "certificate input") if exists else "absent"
        h.update(f"{p}\0{p.is_symlink()}\0{digest}\n".encode())
    return h.hexdigest()


def _rescore(obj: dict[str, Any], claim: _Claim, ref: str, base: Path) -> VerifiedCertificate:
    # deferred: re-scoring the labels needs the statistics stack (pandas, scipy), which a
    # journal of uncalibrated judges never loads; _calibrate also imports this module
    import pandas as pd

    from evalkit.calibration._calibrate import calibrate

    gs = load_gold(base / claim.gold_path)
    if gs.sha256 != claim.gold_sha256:
        raise EvalkitError(
            f"the gold set {claim.gold_path} in the repository (sha256 {gs.sha256[:12]}...) is "
            f"not the one it names ({claim.gold_sha256[:12]}...)"
        )
    if claim.repeats:
        from evalkit.calibration._labels import CALL_COLUMNS, labels_from_frame

        frame = pd.DataFrame(claim.labels, columns=list(CALL_COLUMNS))
        labels: Any = labels_from_frame(frame, source="certificate labels", model_judge=True)
    else:
        labels = pd.DataFrame(claim.labels, columns=["item_id", "label"])
    result = calibrate(
        labels,
        gs,
        dimension_id=claim.dimension_id,
        judge=claim.judge,
        level=claim.level,
        n_resamples=claim.n_resamples,
        rng=claim.rng,
        decision_rule=base / claim.rule_path,
        lock=base / prereg.LOCK_NAME,
        root=base,
    )
    if not result.mintable:
        raise EvalkitError(result.mint_reason)
    if not result.graduates:
        raise EvalkitError(
            f"its labels re-scored against {gs.tag} do not graduate ({result.graduation_reason})"
        )
    diff = _first_difference(obj, certificate_dict(result), "")
    if diff is not None:
        raise EvalkitError(f"re-scoring its labels does not reproduce it ({diff})")
    return VerifiedCertificate(
        ref, mint_status(gs.tag, ref), claim.dimension_id, claim.judge, gs.tag, gs.sha256, None
    )


def _same_number(a: Any, b: Any) -> bool:
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def _first_difference(a: Any, b: Any, where: str) -> str | None:
    """Where the stored and the re-scored certificate differ (floats to 1e-9), else None."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = (set(a) | set(b)) - (_NOT_RECHECKED if not where else set())
        for key in sorted(keys, key=str):
            if key not in a or key not in b:
                return f"{where}{key}: present in only one of them"
            diff = _first_difference(a[key], b[key], f"{where}{key}.")
            if diff is not None:
                return diff
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where.rstrip('.')}: {len(a)} entries, re-scored {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            diff = _first_difference(x, y, f"{where}{i}.")
            if diff is not None:
                return diff
        return None
    numbers = (int, float)
    if (
        isinstance(a, numbers)
        and isinstance(b, numbers)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        same = _same_number(a, b)
    else:
        same = type(a) is type(b) and a == b
    return None if same else f"{where.rstrip('.')}: stored {a!r}, re-scored {b!r}"


def read_certificate_bytes(path: str | os.PathLike[str]) -> bytes:
    """A certificate file's bytes: a regular file only, at most its cap (module constant)."""
    return read_bytes(path, "calibration certificate", max_bytes=own_cap(_MAX_CERTIFICATE_BYTES))


def _read(source: str | os.PathLike[str] | bytes) -> tuple[bytes, str | None]:
    if isinstance(source, bytes):
        return source, None
    return read_certificate_bytes(source), Path(source).name


def verify_certificate(
    source: str | os.PathLike[str] | bytes, *, root: str | os.PathLike[str] | None = None
) -> VerifiedCertificate:
    """Re-check a certificate (a file, or its bytes) against the repository ``root``.

    ``root`` defaults to evalkit's own checkout, never to an environment variable. Returns the
    :class:`VerifiedCertificate`; raises :class:`CertificateError` naming the certificate and
    the reason when any check fails (see the module docstring).
    """
    base = repo_root(root)
    raw, name = _read(source)
    ref = sha256_hex(raw)
    shown = name or f"{ref}.json"
    try:
        if name is not None and name != f"{ref}.json":
            raise EvalkitError(f"its name is not the sha256 of its bytes ({ref}.json)")
        obj, claim = _parse(raw)
        key = _fingerprint(ref, base, claim)
        outcome = _CACHE.get(key)
        if outcome is None:
            try:
                outcome = _rescore(obj, claim, ref, base)
            except EvalkitError as exc:
                outcome = str(exc)
            if _fingerprint(ref, base, claim) == key:  # nothing moved while it was checked
                _CACHE[key] = outcome
    except EvalkitError as exc:
        outcome = str(exc)
    except (ArithmeticError, LookupError, RecursionError, TypeError, ValueError) as exc:
        # a hostile certificate is refused, never a traceback: whatever it makes the re-check
        # trip over is the reason (fail closed)
        outcome = f"cannot be re-checked ({type(exc).__name__}: {exc})"
    if isinstance(outcome, str):
        raise CertificateError(f"calibration certificate {shown}: refused: {outcome}")
    path = None if isinstance(source, bytes) else Path(source)
    return dataclasses.replace(outcome, path=path)


def accepted_calibrations(root: str | os.PathLike[str] | None = None) -> AcceptedCalibrations:
    """The calibrations records may claim: every verified certificate in ``<root>/calibrations``.

    Every ``*.json`` there is re-checked (:func:`verify_certificate`); one that does not verify
    is listed in ``refused`` with its reason, and never accepted. Nothing else in the folder
    (a registry line, a note) has any effect.
    """
    base = repo_root(root)
    folder = base / CALIBRATIONS_DIR
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return AcceptedCalibrations()
    except OSError as exc:
        return AcceptedCalibrations(refused=((CALIBRATIONS_DIR, str(exc)),))
    entries: set[tuple[str, str, str]] = set()
    refused: list[tuple[str, str]] = []
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            entries.add(verify_certificate(folder / name, root=base).entry)
        except (EvalkitError, OSError) as exc:
            refused.append((name, str(exc)))
    return AcceptedCalibrations(frozenset(entries), tuple(refused))


@dataclass(frozen=True)
class RepositoryCalibrations:
    """The calibrations a repository's certificates support, re-checked when first claimed.

    Gives the same answer as :func:`accepted_calibrations` for every claim (both re-check
    ``<root>/calibrations/<calibration_ref>.json`` with :func:`verify_certificate`), but reads
    and re-scores a certificate only when a record claims its reference, once per instance: a
    journal whose judges are all ``uncalibrated`` costs nothing to validate. What the command
    line passes to record validation. ``on_refused`` is told each refusal reason once.
    """

    root: Path
    on_refused: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
    _outcomes: dict[str, VerifiedCertificate | str | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    def certificate(self, reference: object) -> VerifiedCertificate | str | None:
        """The verified certificate named by ``reference``, or the reason it was refused.

        None when there is no such certificate.
        """
        if not isinstance(reference, str) or not _HEX64.match(reference):
            return None
        if reference not in self._outcomes:
            path = self.root / CALIBRATIONS_DIR / f"{reference}.json"
            outcome: VerifiedCertificate | str | None = None
            if path.exists() or path.is_symlink():
                try:
                    outcome = verify_certificate(path, root=self.root)
                except (EvalkitError, OSError) as exc:
                    outcome = str(exc)
                    if self.on_refused is not None:
                        self.on_refused(outcome)
            self._outcomes[reference] = outcome
        return self._outcomes[reference]

    def accepts(self, dimension_id: str, status: object, reference: object) -> bool:
        """Whether a record may carry ``status`` with ``reference`` for ``dimension_id``."""
        if status in ALLOWED_UNCALIBRATED:
            return True
        cert = self.certificate(reference)
        return isinstance(cert, VerifiedCertificate) and cert.entry == (
            dimension_id,
            status,
            reference,
        )

    def why_refused(self, reference: object) -> str | None:
        """Why the certificate named by ``reference`` was refused (None: not refused)."""
        cert = self.certificate(reference)
        return cert if isinstance(cert, str) else None


def is_registered(result: CalibrationResult) -> bool:
    """Does the repository of ``result`` hold a verified certificate for exactly this result?"""
    if not result.graduates or result.calibration_ref is None:
        return False
    accepted = accepted_calibrations(result.root or None)
    return accepted.accepts(result.dimension_id, result.calibration_status, result.calibration_ref)


# --------------------------------------------------------------------------- writing


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise input_file_error(exc, "calibration certificate", path) from exc


def register(result: CalibrationResult) -> VerifiedCertificate:
    """Write the certificate of a graduating, mintable ``result`` and return it verified.

    It goes to ``calibrations/<calibration_ref>.json`` in the repository ``result`` was
    computed against, never anywhere else. Refuses (``EvalkitError``, nothing written) a result
    that did not graduate, or that cannot be minted (no lock, ``--no-lock``, a gold set or
    rule outside the repository or not as locked), saying why. The written certificate is
    re-checked with :func:`verify_certificate`; one that does not verify is removed again.
    """
    if not result.graduates:
        raise EvalkitError(
            f"calibration of {result.dimension_id!r} did not graduate ({result.graduation_reason});"
            " nothing registered — the judge stays 'uncalibrated'"
        )
    if not result.mintable:
        raise EvalkitError(
            f"calibration of {result.dimension_id!r} cannot be registered: {result.mint_reason}"
        )
    base = repo_root(result.root or None)
    data = certificate_bytes(result)
    folder = base / CALIBRATIONS_DIR
    if (folder.exists() or folder.is_symlink()) and not folder.is_dir():
        raise EvalkitError(f"{folder}: not a folder; certificates are written into calibrations/")
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise input_file_error(exc, "calibrations folder", folder) from exc
    path = folder / f"{sha256_hex(data)}.json"
    _write_atomically(path, data)
    try:
        return verify_certificate(path, root=base)
    except EvalkitError:
        path.unlink(missing_ok=True)
        raise
