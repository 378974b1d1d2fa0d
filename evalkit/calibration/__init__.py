"""Judge-vs-gold calibration, graduation by a pre-registered rule, and certificates.

Agreement with CIs, graduation by a pre-registered rule, and calibration certificates that
bind a ``calibrated:`` status to content.

``calibrate(judge_labels, gold)`` compares a judge's labels (``pass`` / ``fail`` /
``cannot-determine`` per gold item) with a frozen gold set (:mod:`evalkit.gold.sets`) and returns a
:class:`CalibrationResult`: Cohen's kappa with its BCa bootstrap interval, Gwet's AC1 and PABAK
(each with its BCa interval), per-class prevalence and bias indices, the confusion matrix,
per-class sensitivity and specificity, agreement per deciding gold rule (Wilson intervals), the
items a target CI width would need, and the graduation verdict of the decision rule frozen in
``gold/<set>/DECISION_RULE.json`` before the first calibration run. Graduation is always judged
on the rule's own interval (level, resamples, seed), whatever interval a run displays.

Three classes, decided and documented here:

- **PABAK** is the multi-category form ``(q * po - 1) / (q - 1)`` with ``q = 3``
  (Byrt, Bishop & Carlin 1993; equal to Brennan-Prediger with two raters).
- **Prevalence and bias indices** are defined by Byrt et al. for a 2 x 2 table. They are
  reported **per class, one-vs-rest**: for class ``c`` the table ``[[a, b], [c', d]]`` of
  gold = c / judge = c; ``prevalence_index = |a - d| / n``, ``bias_index = |b - c'| / n`` and
  the binary ``pabak = 2 po - 1`` of that table, each with a percentile bootstrap interval on the
  same resamples.

Items the judge did not label are ``missing``: counted and listed, never guessed, and excluded
from every statistic.

**Minting.** A run needs the pre-registration lock (or ``no_lock=True``, stated in the result,
never registrable). A graduating result is *mintable* only when its gold set and decision rule
lie in the repository and match that repository's lock (:mod:`evalkit.calibration._lock`);
otherwise it is computed and shown, and ``mint_reason`` says why it cannot be minted. Only
:func:`register` (``evalkit calibrate --register``) mints: it writes the calibration
certificate ``calibrations/<calibration_ref>.json`` (:mod:`evalkit.calibration.certificate`),
whose sha256 is the ``calibration_ref`` of the status ``calibrated:<set>-v<N>:<ref[:8]>``.
Record validation accepts that status only with a certificate that re-checks offline
(:func:`accepted_calibrations`, :func:`verify_certificate`; the command line passes
:class:`RepositoryCalibrations`, which re-checks a certificate the first time a record claims
it); nothing is remembered in process but verified outcomes keyed by the sha256 of their
inputs, and no environment variable is consulted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily: pandas and scipy only when first used
    from evalkit.calibration._calibrate import calibrate
    from evalkit.calibration._inputs import (
        DECISION_RULE_NAME,
        MODEL_JUDGE_RULE_NAME,
        RULE_JUDGE_NAME,
        load_decision_rule,
        read_judge_labels,
        rule_judge_labels,
    )
    from evalkit.calibration._lock import NO_LOCK, gold_tag
    from evalkit.calibration._repeats import RepeatFigures
    from evalkit.calibration._result import DEFAULT_WIDTHS, CalibrationResult, Estimate
    from evalkit.calibration.calibrations import (
        RepositoryCalibrations,
        accepted_calibrations,
        is_registered,
        register,
        repository_calibrations,
    )
    from evalkit.calibration.certificate import (
        CertificateError,
        VerifiedCertificate,
        certificate_bytes,
    )
    from evalkit.calibration.certificate_check import verify_certificate
    from evalkit.calibration.labels import (
        JudgeLabels,
        labels_from_frame,
        labels_from_runlog,
        read_labels,
    )
    from evalkit.stats.ppi import ppi_prevalence
    from evalkit.stats.prevalence import corrected_prevalence

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "calibrate": "evalkit.calibration._calibrate",
    "DECISION_RULE_NAME": "evalkit.calibration._inputs",
    "MODEL_JUDGE_RULE_NAME": "evalkit.calibration._inputs",
    "JudgeLabels": "evalkit.calibration.labels",
    "labels_from_frame": "evalkit.calibration.labels",
    "labels_from_runlog": "evalkit.calibration.labels",
    "read_labels": "evalkit.calibration.labels",
    "RepeatFigures": "evalkit.calibration._repeats",
    "load_decision_rule": "evalkit.calibration._inputs",
    "read_judge_labels": "evalkit.calibration._inputs",
    "rule_judge_labels": "evalkit.calibration._inputs",
    "RULE_JUDGE_NAME": "evalkit.calibration._inputs",
    "NO_LOCK": "evalkit.calibration._lock",
    "gold_tag": "evalkit.calibration._lock",
    "DEFAULT_WIDTHS": "evalkit.calibration._result",
    "CalibrationResult": "evalkit.calibration._result",
    "Estimate": "evalkit.calibration._result",
    "CertificateError": "evalkit.calibration.certificate",
    "RepositoryCalibrations": "evalkit.calibration.calibrations",
    "VerifiedCertificate": "evalkit.calibration.certificate",
    "accepted_calibrations": "evalkit.calibration.calibrations",
    "certificate_bytes": "evalkit.calibration.certificate",
    "is_registered": "evalkit.calibration.calibrations",
    "register": "evalkit.calibration.calibrations",
    "repository_calibrations": "evalkit.calibration.calibrations",
    "verify_certificate": "evalkit.calibration.certificate_check",
    # class shares on a target, corrected by a calibration (or with human labels): re-exported
    "corrected_prevalence": "evalkit.stats.prevalence",
    "ppi_prevalence": "evalkit.stats.ppi",
}

__all__ = [
    "DECISION_RULE_NAME",
    "DEFAULT_WIDTHS",
    "MODEL_JUDGE_RULE_NAME",
    "NO_LOCK",
    "RULE_JUDGE_NAME",
    "CalibrationResult",
    "CertificateError",
    "Estimate",
    "JudgeLabels",
    "RepeatFigures",
    "RepositoryCalibrations",
    "VerifiedCertificate",
    "accepted_calibrations",
    "calibrate",
    "certificate_bytes",
    "corrected_prevalence",
    "gold_tag",
    "is_registered",
    "labels_from_frame",
    "labels_from_runlog",
    "load_decision_rule",
    "ppi_prevalence",
    "read_judge_labels",
    "read_labels",
    "register",
    "repository_calibrations",
    "rule_judge_labels",
    "verify_certificate",
]


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
