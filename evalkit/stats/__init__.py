"""Agreement statistics, bootstrap intervals, sample sizes and threshold studies.

Results follow the scipy style: ``.statistic``, ``.standard_error``, ``.n`` and
``.confidence_interval(level=0.95, method="analytic" | "percentile" | "bca", ...)``.
"""

from __future__ import annotations

from evalkit._lazy import lazy_attributes

# public name -> module that defines it (loaded on first use)
_LAZY: dict[str, str] = {
    "resample_weights": "evalkit.stats.bootstrap",
    "bootstrap_sums": "evalkit.stats.bootstrap",
    "AgreementResult": "evalkit.stats._result",
    "BootstrapResult": "evalkit.stats._result",
    "ConfidenceInterval": "evalkit.stats._result",
    "cohen_kappa": "evalkit.stats.agreement",
    "fleiss_kappa": "evalkit.stats.agreement",
    "conger_kappa": "evalkit.stats.agreement",
    "light_kappa": "evalkit.stats.agreement",
    "krippendorff_alpha": "evalkit.stats.agreement",
    "gwet_ac1": "evalkit.stats.agreement",
    "brennan_prediger": "evalkit.stats.agreement",
    "pabak": "evalkit.stats.agreement",
    "specific_agreement": "evalkit.stats.agreement",
    "kappa_max": "evalkit.stats.agreement",
    "kappa_ci_sample_size": "evalkit.stats.power",
    "kappa_test_sample_size": "evalkit.stats.power",
    "threshold_study": "evalkit.stats.thresholds",
    "plot_threshold_study": "evalkit.stats.thresholds",
    "ThresholdStudy": "evalkit.stats.thresholds",
}

__all__ = [
    "AgreementResult",
    "BootstrapResult",
    "ConfidenceInterval",
    "ThresholdStudy",
    "bootstrap_sums",
    "brennan_prediger",
    "cohen_kappa",
    "conger_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "kappa_ci_sample_size",
    "kappa_max",
    "kappa_test_sample_size",
    "krippendorff_alpha",
    "light_kappa",
    "pabak",
    "plot_threshold_study",
    "resample_weights",
    "specific_agreement",
    "threshold_study",
]


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
