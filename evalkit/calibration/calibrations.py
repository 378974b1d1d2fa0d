"""A repository's calibration certificates: the calibrations its records may claim.

:func:`repository_calibrations` is the one way to ask: a
:class:`RepositoryCalibrations` re-checks a certificate (:func:`~evalkit.calibration.
certificate_check.verify_certificate`) only when a record or result claims it, once per
instance; :func:`accepted_calibrations` lists every certificate of the folder, re-checked the
same way. :func:`register` writes a graduating, mintable result's certificate.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.errors import EvalkitError
from evalkit.files.errors import input_file_error
from evalkit.files.hashing import sha256_hex
from evalkit.files.output import write_output
from evalkit.provenance.repository import repo_root
from evalkit.record.calibration_status import (
    ALLOWED_UNCALIBRATED,
    AcceptedCalibrations,
)

if TYPE_CHECKING:
    from evalkit.calibration._result import CalibrationResult
from evalkit.calibration.certificate import (
    _HEX64,
    CALIBRATIONS_DIR,
    VerifiedCertificate,
    certificate_bytes,
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
