"""Agreement, bootstrap intervals, sample sizes, threshold studies, class shares, monitoring.

Anytime-valid confidence sequences of a rate read after every session (``confidence_sequence``).
Class shares on a target: judge-error-corrected prevalence, prediction-powered inference
(PPI++), judge panels (Dawid-Skene) and their planning.

Results follow the scipy style: ``.statistic``, ``.standard_error``, ``.n`` and
``.confidence_interval(level=0.95, method="analytic" | "percentile" | "bca", ...)``; the
class-share results map each class to its share and to its ``(low, high)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below load lazily (_LAZY): scipy and friends only when first used
    from evalkit.stats._result import AgreementResult, BootstrapResult, ConfidenceInterval
    from evalkit.stats.agreement.cohen import cohen_kappa, kappa_max
    from evalkit.stats.agreement.gwet import brennan_prediger, gwet_ac1, pabak
    from evalkit.stats.agreement.krippendorff import krippendorff_alpha
    from evalkit.stats.agreement.many_raters import conger_kappa, fleiss_kappa, light_kappa
    from evalkit.stats.agreement.specific import specific_agreement
    from evalkit.stats.bootstrap import bootstrap_sums, resample_weights
    from evalkit.stats.latent_class import DawidSkeneResult, dawid_skene
    from evalkit.stats.panels import JudgePanel, judge_panel
    from evalkit.stats.planning import PrevalencePlan, plan_prevalence
    from evalkit.stats.power import kappa_ci_sample_size, kappa_test_sample_size
    from evalkit.stats.ppi import PPIPrevalence, ppi_prevalence
    from evalkit.stats.prevalence import CorrectedPrevalence, corrected_prevalence
    from evalkit.stats.proportion import wilson_interval
    from evalkit.stats.sequential import ConfidenceSequence, confidence_sequence
    from evalkit.stats.thresholds import (
        FIRE_RATE_CEILING,
        ThresholdStudy,
        plot_threshold_study,
        threshold_study,
    )

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "resample_weights": "evalkit.stats.bootstrap",
    "bootstrap_sums": "evalkit.stats.bootstrap",
    "AgreementResult": "evalkit.stats._result",
    "BootstrapResult": "evalkit.stats._result",
    "ConfidenceInterval": "evalkit.stats._result",
    "cohen_kappa": "evalkit.stats.agreement.cohen",
    "kappa_max": "evalkit.stats.agreement.cohen",
    "fleiss_kappa": "evalkit.stats.agreement.many_raters",
    "conger_kappa": "evalkit.stats.agreement.many_raters",
    "light_kappa": "evalkit.stats.agreement.many_raters",
    "krippendorff_alpha": "evalkit.stats.agreement.krippendorff",
    "gwet_ac1": "evalkit.stats.agreement.gwet",
    "brennan_prediger": "evalkit.stats.agreement.gwet",
    "pabak": "evalkit.stats.agreement.gwet",
    "specific_agreement": "evalkit.stats.agreement.specific",
    "kappa_ci_sample_size": "evalkit.stats.power",
    "kappa_test_sample_size": "evalkit.stats.power",
    "threshold_study": "evalkit.stats.thresholds",
    "plot_threshold_study": "evalkit.stats.thresholds",
    "ThresholdStudy": "evalkit.stats.thresholds",
    "FIRE_RATE_CEILING": "evalkit.stats.thresholds",
    "corrected_prevalence": "evalkit.stats.prevalence",
    "CorrectedPrevalence": "evalkit.stats.prevalence",
    "ppi_prevalence": "evalkit.stats.ppi",
    "PPIPrevalence": "evalkit.stats.ppi",
    "judge_panel": "evalkit.stats.panels",
    "JudgePanel": "evalkit.stats.panels",
    "dawid_skene": "evalkit.stats.latent_class",
    "DawidSkeneResult": "evalkit.stats.latent_class",
    "plan_prevalence": "evalkit.stats.planning",
    "PrevalencePlan": "evalkit.stats.planning",
    "wilson_interval": "evalkit.stats.proportion",
    "confidence_sequence": "evalkit.stats.sequential",
    "ConfidenceSequence": "evalkit.stats.sequential",
}

__all__ = [
    "FIRE_RATE_CEILING",
    "AgreementResult",
    "BootstrapResult",
    "ConfidenceInterval",
    "ConfidenceSequence",
    "CorrectedPrevalence",
    "DawidSkeneResult",
    "JudgePanel",
    "PPIPrevalence",
    "PrevalencePlan",
    "ThresholdStudy",
    "bootstrap_sums",
    "brennan_prediger",
    "cohen_kappa",
    "confidence_sequence",
    "conger_kappa",
    "corrected_prevalence",
    "dawid_skene",
    "fleiss_kappa",
    "gwet_ac1",
    "judge_panel",
    "kappa_ci_sample_size",
    "kappa_max",
    "kappa_test_sample_size",
    "krippendorff_alpha",
    "light_kappa",
    "pabak",
    "plan_prevalence",
    "plot_threshold_study",
    "ppi_prevalence",
    "resample_weights",
    "specific_agreement",
    "threshold_study",
    "wilson_interval",
]


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
