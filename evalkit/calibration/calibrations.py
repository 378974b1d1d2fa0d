"""A repository's calibration certificates: the calibrations its records may claim.

:func:`repository_calibrations` is the one way to ask: a
:class:`RepositoryCalibrations` re-checks a certificate (:func:`~evalkit.calibration.
certificate_check.verify_certificate`) only when a record or result claims it, once per
instance; :func:`accepted_calibrations` lists every certificate of the folder, re-checked the
same way. :func:`register` writes a graduating, mintable result's certificate.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.files.errors import input_file_error
from evalkit.files.hashing import sha256_hex
from evalkit.files.output import write_output
from evalkit.provenance.repository import repo_root
from evalkit.record.calibration_status import (
    ALLOWED_UNCALIBRATED,
    AcceptedCalibrations,
)
from evalkit.record.judging import IDENTITY_KEYS, identity_sha256, judge_identity

if TYPE_CHECKING:
    from evalkit.calibration._result import CalibrationResult
    from evalkit.judge.record_judge import JudgeCalibration
from evalkit.calibration.certificate import (
    _HEX64,
    CALIBRATIONS_DIR,
    MAX_RECHECK_WORK,
    VerifiedCertificate,
    certificate_bytes,
    read_certificate_bytes,
    recheck_work,
)
from evalkit.calibration.certificate_check import verify_certificate

__all__ = [
    "RepositoryCalibrations",
    "accepted_calibrations",
    "is_registered",
    "register",
    "repository_calibrations",
]


def repository_calibrations(
    root: str | os.PathLike[str] | None = None,
    *,
    on_refused: Callable[[str], None] | None = None,
) -> RepositoryCalibrations:
    """The calibrations records may claim in the repository ``root`` (default: evalkit's own).

    The one way every command, study and fleet task asks; ``on_refused`` is told each refusal
    reason once.
    """
    return RepositoryCalibrations(repo_root(root), on_refused=on_refused)


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
    identities: dict[str, str | None] = {}
    refused: list[tuple[str, str]] = []
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            cert = verify_certificate(folder / name, root=base)
        except (EvalkitError, OSError) as exc:
            refused.append((name, str(exc)))
        else:
            entries.add(cert.entry)
            identities[cert.calibration_ref] = cert.identity_sha256
    return AcceptedCalibrations(frozenset(entries), tuple(refused), identities)


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
    _head_cache: list[tuple[str, Mapping[str, Any]]] | None = field(
        default=None, compare=False, repr=False
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

    def accepts(
        self, dimension_id: str, status: object, reference: object, judge: object = None
    ) -> bool:
        """Whether a record may carry ``status`` with ``reference`` for ``dimension_id``.

        A minted status needs the certificate's entry exactly and ``judge`` (the dimension's
        judge block) of the identity the certificate was earned by.
        """
        if status in ALLOWED_UNCALIBRATED:
            return True
        cert = self.certificate(reference)
        return (
            isinstance(cert, VerifiedCertificate)
            and cert.entry == (dimension_id, status, reference)
            and cert.identity_sha256 is not None
            and identity_sha256(judge_identity(judge)) == cert.identity_sha256
        )

    def for_judge(self, dimension_id: str, identity: Mapping[str, Any]) -> JudgeCalibration:
        """The calibration a judge of ``identity`` earns for ``dimension_id``, or why none.

        Each certificate's judge section is read (a file that cannot be read is passed over);
        only those earned by exactly this identity for this dimension are re-checked, and of
        those the one on the newest gold version is used. One on an older version than the
        repository's lock holds (superseded) is not used for new records.
        """
        from evalkit.judge.record_judge import JudgeCalibration

        wanted = identity_sha256(identity)
        matching, near = [], []
        for ref, head in self._heads():
            if head.get("dimension_id") != dimension_id:
                continue
            if head.get("identity_sha256") == wanted:
                matching.append(ref)
            elif isinstance(head.get("identity"), Mapping):
                near.append((ref, head["identity"]))
        verified = []
        for ref in matching:
            cert = self.certificate(ref)
            if isinstance(cert, VerifiedCertificate):
                verified.append(cert)
        current = [c for c in verified if c.superseded_by is None]
        if current:
            best = sorted(current, key=lambda c: c.calibration_ref)[0]
            return JudgeCalibration(best.calibration_status, best.calibration_ref, "")
        if verified:
            old = verified[0]
            return JudgeCalibration(
                reason=f"its calibration {old.calibration_ref[:12]}... is on {old.gold_tag}, "
                f"superseded by {old.superseded_by}: calibrate it again on the new version"
            )
        if matching:
            return JudgeCalibration(
                reason=f"its certificate was refused: {self.why_refused(matching[0])}"
            )
        return JudgeCalibration(reason=_no_certificate(dimension_id, identity, near))

    def explain(self, dimension_id: str, dim: Mapping[str, Any]) -> str:
        """Why a stored judge dimension is calibrated, or why it is not (one line)."""
        status, ref = dim.get("calibration_status"), dim.get("calibration_ref")
        identity = judge_identity(dim.get("judge"))
        if status not in ALLOWED_UNCALIBRATED:
            cert = self.certificate(ref)
            if isinstance(cert, VerifiedCertificate):
                old = f"; superseded by {cert.superseded_by}" if cert.superseded_by else ""
                return (
                    f"certificate calibrations/{cert.calibration_ref}.json re-checked: earned by "
                    f"this judge identity ({cert.origin}) on {cert.gold_tag}{old}"
                )
            return "not accepted: " + (cert if isinstance(cert, str) else "no such certificate")
        if identity is None:
            return "no judge identity (a judge dimension written without its judge)"
        return self.for_judge(dimension_id, identity).reason or "a certificate now covers it"

    def _heads(self) -> list[tuple[str, Mapping[str, Any]]]:
        """(reference, judge section with its dimension) of every readable certificate."""
        if self._head_cache is not None:
            return self._head_cache
        folder = self.root / CALIBRATIONS_DIR
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            names = []
        heads: list[tuple[str, Mapping[str, Any]]] = []
        for name in names:
            ref = name.removesuffix(".json")
            if not name.endswith(".json") or not _HEX64.match(ref):
                continue
            head = _head(folder / name)
            if head is not None:
                heads.append((ref, head))
        object.__setattr__(self, "_head_cache", heads)
        return heads

    def why_refused(self, reference: object) -> str | None:
        """Why the certificate named by ``reference`` was refused (None: not refused)."""
        cert = self.certificate(reference)
        return cert if isinstance(cert, str) else None


def _head(path: Path) -> dict[str, Any] | None:
    """A certificate's judge section and dimension, parsed only (None: not readable as one)."""
    from evalkit.files.input import JsonInputError, parse_json

    try:
        obj = parse_json(read_certificate_bytes(path))
    except (EvalkitError, OSError, JsonInputError, MemoryError, RecursionError, ValueError):
        return None  # an unreadable file names no judge: passed over, never re-scored
    judge = obj.get("judge") if isinstance(obj, dict) else None
    result = obj.get("result") if isinstance(obj, dict) else None
    if not isinstance(judge, dict) or not isinstance(result, dict):
        return None
    return {**judge, "dimension_id": result.get("dimension_id")}


def _no_certificate(
    dimension_id: str, identity: Mapping[str, Any], near: list[tuple[str, Mapping[str, Any]]]
) -> str:
    """Why no certificate covers a judge: none at all, or how the nearest one differs."""
    if not near:
        return (
            f"no calibration certificate for {dimension_id} earned by a judge is registered "
            f"(this judge: {identity.get('spec')})"
        )

    def differs(other: Mapping[str, Any]) -> list[str]:
        return [key for key in IDENTITY_KEYS if other.get(key) != identity.get(key)]

    ref, other = min(near, key=lambda pair: (len(differs(pair[1])), pair[0]))
    diffs = [
        f"{key} {other.get(key)!r} (this judge: {identity.get(key)!r})" for key in differs(other)
    ]
    return (
        f"no certificate was earned by this judge identity; the nearest, {ref[:12]}..., was "
        "earned by " + "; ".join(diffs)
    )


def is_registered(result: CalibrationResult) -> bool:
    """Does the repository of ``result`` hold a verified certificate for exactly this result?

    Only the certificate the result names (``calibrations/<calibration_ref>.json``) is read
    and re-checked: an unrelated file never decides, or breaks, the answer.
    """
    if not result.graduates or result.calibration_ref is None:
        return False
    cert = repository_calibrations(result.root or None).certificate(result.calibration_ref)
    return isinstance(cert, VerifiedCertificate) and cert.entry == (
        result.dimension_id,
        result.calibration_status,
        result.calibration_ref,
    )


# --------------------------------------------------------------------------- writing


def _write_atomically(path: Path, data: bytes) -> None:
    # the one output writer: a new file renamed into place, never through a link, and a failure
    # (a full disk) names the certificate's path
    write_output(path, data, "calibration certificate")


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
    rule_resamples = int(result.decision_rule.get("ci", {}).get("n_resamples", 2000))
    calls = len(result.calls) if result.repeats is not None else len(result.labels)
    work = recheck_work(calls, result.n_resamples, rule_resamples)
    if work > MAX_RECHECK_WORK:
        raise EvalkitError(
            f"calibration of {result.dimension_id!r} cannot be registered: re-checking its "
            f"certificate would compute {work:,} calls x resamples, over the bound of "
            f"{MAX_RECHECK_WORK:,} (use fewer --n-resamples)"
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
