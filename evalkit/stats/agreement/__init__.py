"""Inter-rater agreement coefficients with standard errors and self-bootstrapping results.

Every coefficient is written as a function of *sums over items* of per-item sufficient
statistics. The result keeps those per-item statistics, so a bootstrap resample (a vector of
item counts ``w``) is evaluated as ``fn(w @ S)`` for all resamples at once (``bootstrap.py``).

Where each lives: ``cohen`` (Cohen's kappa, weighted; kappa_max), ``many_raters`` (Fleiss',
Conger's and Light's kappa), ``gwet`` (Gwet's AC1/AC2, Brennan-Prediger, PABAK),
``krippendorff`` (Krippendorff's alpha), ``specific`` (positive and negative agreement); what
they share in ``_common`` (the degenerate rule, weights, tests), ``_pairs`` (two raters'
sufficient statistics) and ``_family`` (the multi-rater counts and irrCAC's variance).

Degenerate data rule (the same for every coefficient): a chance-corrected coefficient
``(pa - pe) / (1 - pe)`` is undefined when ``pe == 1`` (every rating is the same single
category, so ``0/0``), and Krippendorff's alpha when the expected disagreement is 0. Then
``statistic`` is ``None``, ``degenerate`` is ``True`` and a ``DegenerateDataWarning`` is
issued: never an exception, never a NaN. With too few items (one item, or two whose
analytic standard error is 0 or undefined) the estimate is kept, but ``degenerate`` is
``True``, the standard errors are ``None`` and every interval is ``(None, None)``, each with a
``DegenerateDataWarning`` saying why (``_result`` module docstring).
Declaring the possible labels with ``categories=`` can make a coefficient defined (AC1 and
Brennan-Prediger use the number of categories).

References: Cohen (1960, 1968); Fleiss, Cohen & Everitt (1969) "Large sample standard errors
of kappa and weighted kappa"; Fleiss (1971); Fleiss, Nee & Landis (1979); Conger (1980);
Light (1971); Brennan & Prediger (1981); Byrt, Bishop & Carlin (1993); Cicchetti &
Feinstein (1990); Krippendorff (2011) "Computing Krippendorff's alpha-reliability";
Gwet (2008) and Gwet (2014) *Handbook of Inter-Rater Reliability*, 4th ed., whose variance
formulas (finite-population correction f = 0) are those of the R package irrCAC.
"""

from __future__ import annotations

from evalkit.stats.agreement.cohen import cohen_kappa, kappa_max
from evalkit.stats.agreement.gwet import brennan_prediger, gwet_ac1, pabak
from evalkit.stats.agreement.krippendorff import krippendorff_alpha
from evalkit.stats.agreement.many_raters import conger_kappa, fleiss_kappa, light_kappa
from evalkit.stats.agreement.specific import specific_agreement

__all__ = [
    "brennan_prediger",
    "cohen_kappa",
    "conger_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "kappa_max",
    "krippendorff_alpha",
    "light_kappa",
    "pabak",
    "specific_agreement",
]
