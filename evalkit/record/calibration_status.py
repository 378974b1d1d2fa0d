"""Which ``calibration_status`` a judge dimension may carry (low level: standard library only).

Until a calibration graduates, every judge dimension is ``"uncalibrated"`` (rubric-v1/v2 § Judge
Dimensions). A graduating calibration is minted only by ``evalkit calibrate --register``, which
writes a calibration *certificate* into the repository (``calibrations/<calibration_ref>.json``,
:mod:`evalkit.calibration.certificate`); ``calibration_ref`` is the sha256 of the certificate's
bytes and the status is ``calibrated:<set>-v<N>:<first 8 hex of calibration_ref>``.

A status is a claim anyone can re-check offline: the certificate names the hashes of the gold
set, the decision rule and the judge's labels, and re-scoring those labels must graduate again.
It is bound to a judge, not to a labels table: the dimension's judge block
(:mod:`evalkit.record.judging`) must have the identity the certificate was earned by.
Which certificates verified is content, never configuration, so record validation takes it as
an argument (:class:`CalibrationAcceptance`): :class:`AcceptedCalibrations` holds the
``(dimension_id, status, calibration_ref)`` of verified certificates and their judge
identities, and its default accepts ``"uncalibrated"`` only. A higher layer builds it
(``evalkit.calibration.repository_calibrations()``, which re-checks a certificate only when a
record claims it); nothing here reads a file, a global or an environment variable.

This module is imported by record validation, so it imports no pandas, scipy or higher evalkit
layer, and reads no file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from evalkit.errors import EvalkitError
from evalkit.record.judging import identity_sha256, judge_identity

__all__ = [
    "ALLOWED_UNCALIBRATED",
    "MINTED_STATUS_PATTERN",
    "AcceptedCalibrations",
    "CalibrationAcceptance",
    "is_accepted",
    "is_minted",
    "mint_status",
]

#: Statuses every judge dimension may carry without any certificate.
ALLOWED_UNCALIBRATED: frozenset[str] = frozenset({"uncalibrated"})

#: ``calibrated:<gold set>-v<N>:<first 8 hex of calibration_ref>``
MINTED_STATUS_PATTERN = re.compile(
    r"^calibrated:(?P<set>[a-z0-9][a-z0-9._-]*)-v(?P<version>[1-9][0-9]*):(?P<hash8>[0-9a-f]{8})$"
)
_REF_PATTERN = re.compile(r"^[0-9a-f]{64}$")


def mint_status(gold_tag: str, calibration_ref: str) -> str:
    """The status a graduated calibration carries: ``calibrated:<gold_tag>:<ref[:8]>``."""
    if not isinstance(calibration_ref, str) or not _REF_PATTERN.match(calibration_ref):
        raise EvalkitError(
            f"calibration_ref must be 64 lower-case hex digits, got {calibration_ref!r}"
        )
    status = f"calibrated:{gold_tag}:{calibration_ref[:8]}"
    if not MINTED_STATUS_PATTERN.match(status):
        raise EvalkitError(f"gold tag {gold_tag!r} does not form a valid status ({status!r})")
    return status


def is_minted(status: object) -> bool:
    """True when ``status`` has the shape of a minted calibration status."""
    return isinstance(status, str) and MINTED_STATUS_PATTERN.match(status) is not None


def _well_formed(status: object, reference: object) -> bool:
    """A minted status and a full 64-hex reference whose first 8 hex are the status's hash8."""
    if not is_minted(status) or not isinstance(reference, str) or not _REF_PATTERN.match(reference):
        return False
    assert isinstance(status, str)
    return status.endswith(":" + reference[:8])


class CalibrationAcceptance(Protocol):
    """What record validation asks about calibrations.

    May a dimension carry this status with this reference, and if its certificate was refused,
    why. :class:`AcceptedCalibrations` answers from a fixed set of verified certificates;
    ``evalkit.calibration.RepositoryCalibrations`` re-checks a repository's certificate the
    first time a record claims it.
    """

    def accepts(
        self, dimension_id: str, status: object, reference: object, judge: object = None
    ) -> bool:
        """Whether ``dimension_id`` may carry ``status`` with this ``calibration_ref``.

        ``judge`` is the dimension's judge block: a minted status also needs the judge identity
        the certificate was earned by (:func:`evalkit.record.judging.judge_identity`).
        """
        ...

    def why_refused(self, reference: object) -> str | None:
        """Why the certificate ``reference`` names was refused; None when it was not."""
        ...


@dataclass(frozen=True)
class AcceptedCalibrations:
    """The calibrations a record may claim: verified certificates, as content.

    ``entries`` holds ``(dimension_id, calibration_status, calibration_ref)`` of every verified
    certificate and ``identities`` the sha256 of the judge identity each reference was earned
    by; ``refused`` holds ``(certificate file name, reason)`` of every certificate that did not
    verify, so a refusal can say why. The default (no entries) accepts ``"uncalibrated"`` only.
    Build it with ``evalkit.calibration.accepted_calibrations()``.
    """

    entries: frozenset[tuple[str, str, str]] = frozenset()
    refused: tuple[tuple[str, str], ...] = ()
    identities: Mapping[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Refuse an entry that is not ``(dimension_id, minted status, calibration_ref)``."""
        for entry in self.entries:
            if not (isinstance(entry, tuple) and len(entry) == 3 and _well_formed(*entry[1:])):
                raise EvalkitError(
                    f"accepted calibration {entry!r}: not (dimension_id, minted status, its "
                    "64-hex calibration_ref)"
                )

    def accepts(
        self, dimension_id: str, status: object, reference: object, judge: object = None
    ) -> bool:
        """May judge dimension ``dimension_id`` carry ``status`` with ``calibration_ref``?

        ``"uncalibrated"`` always; a minted status only with exactly the reference of a verified
        certificate of this dimension (a prefix, another reference or none is refused), and
        only for a ``judge`` block whose identity is the one the certificate was earned by.
        """
        if status in ALLOWED_UNCALIBRATED:
            return True
        if not _well_formed(status, reference):
            return False
        if (dimension_id, status, reference) not in self.entries:
            return False
        earned_by = self.identities.get(str(reference))
        return earned_by is not None and identity_sha256(judge_identity(judge)) == earned_by

    def why_refused(self, reference: object) -> str | None:
        """The reason the certificate named by ``reference`` was refused, if it was."""
        if not isinstance(reference, str) or not reference:
            return None
        for name, reason in self.refused:
            if name == f"{reference}.json":
                return reason
        return None


def is_accepted(
    dimension_id: str,
    status: object,
    reference: object,
    *,
    accepted: CalibrationAcceptance,
    judge: object = None,
) -> bool:
    """May judge dimension ``dimension_id`` carry ``status`` with ``calibration_ref=reference``?

    Exactly ``accepted.accepts``: which certificates verified is content a higher layer
    re-checked (``evalkit.calibration.repository_calibrations()``), always passed in; ``judge``
    is the dimension's judge block.
    """
    return accepted.accepts(dimension_id, status, reference, judge)
