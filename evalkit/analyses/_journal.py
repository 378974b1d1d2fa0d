"""The journals the studies read, validated as the command line validates them.

A judge dimension may carry a minted calibration status (``calibrated:...``) only when a
verified certificate backs it (:func:`evalkit.record.contract.validate_record`). The studies accept the
claims the repository's certificates back, as ``evalkit journal``, ``verify`` and ``report``
do: :class:`evalkit.calibration.RepositoryCalibrations` re-checks a certificate from its content
the first time a record claims it, so a journal of ``uncalibrated`` judges costs nothing more.
A caller may pass its own ``accepted`` instead (another repository, a fixed set).
"""

from __future__ import annotations

import os

from evalkit import journal
from evalkit.calibration.calibrations import repository_calibrations
from evalkit.record.calibration_status import CalibrationAcceptance

__all__ = ["read_journal"]


def read_journal(
    path: str | os.PathLike[str], accepted: CalibrationAcceptance | None = None
) -> journal.JournalRead:
    """:func:`evalkit.journal.reader.read` with the calibrations a record may claim.

    ``accepted`` defaults to the verified certificates of the repository evalkit runs from;
    a claim no certificate backs makes its record a skipped line (a diagnostic), never a
    counted record.
    """
    if accepted is None:
        accepted = repository_calibrations()
    return journal.read(path, accepted=accepted)
