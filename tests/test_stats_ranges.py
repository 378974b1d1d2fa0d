"""Intervals are clipped to each coefficient's range, in analytic, percentile and BCa alike
(issue 5; ranges and their reasons in ``evalkit/stats/_result.py``)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from evalkit.stats import (
    AgreementResult,
    brennan_prediger,
    cohen_kappa,
    conger_kappa,
    fleiss_kappa,
    gwet_ac1,
    kappa_max,
    krippendorff_alpha,
    light_kappa,
    pabak,
)


def test_pabak_analytic_interval_is_clipped_at_minus_one() -> None:
    res = pabak(np.array([[1, 1], [1, 2], [2, 2]]))
    # unclipped: 1/3 +- t(0.975, 2) * SE reached -2.54 (QA report)
    q = float(sps.t.ppf(0.975, res.df))
    assert res.statistic - q * res.standard_error < -2.5
    assert res.range == (-1.0, 1.0)
    assert res.confidence_interval() == (-1.0, 1.0)


def test_fleiss_unequal_raters_interval_is_clipped_at_minus_one() -> None:
    res = fleiss_kappa(counts=[[3, 0], [1, 1]])
    q = float(sps.t.ppf(0.975, res.df))
    assert res.statistic - q * res.standard_error < -5.9  # was reported as -5.98
    assert res.confidence_interval() == (-1.0, 1.0)


def test_fleiss_with_single_rating_items_has_no_lower_bound() -> None:
    # pa over the item with two ratings (0), pe over all items: pi = (7/8, 1/8), pe = 50/64,
    # kappa = -(50/64) / (14/64) = -25/7; the interval is therefore not clipped at -1
    res = fleiss_kappa(counts=[[1, 1], [1, 0], [1, 0], [1, 0]])
    assert res.statistic == pytest.approx(-25 / 7, abs=1e-12)
    assert res.range == (None, 1.0)


def test_published_sas_interval_is_unchanged_by_clipping() -> None:
    # SAS PROC FREQ AGREE example (as tests/test_agreement_published.py): (0.2137, 0.7547)
    low, high = cohen_kappa(table=[[0, 4, 1], [0, 8, 0], [0, 1, 5]]).confidence_interval()
    assert (round(low, 4), round(high, 4)) == (0.2137, 0.7547)


def test_gwet_range_is_minus_p_over_one_minus_p() -> None:
    # quadratic weights, q = 3: sum(w) = 3 + 4 * 0.75 = 6, p = 6/9, lower end -2; BP reaches
    # it when every pair of ratings is (1, 3): pa = 0, pe = 6/9, (0 - 2/3) / (1/3) = -2
    res = brennan_prediger(np.array([[1, 3], [3, 1]]), weights="quadratic", categories=[1, 2, 3])
    assert res.range == pytest.approx((-2.0, 1.0))
    assert res.statistic == pytest.approx(-2.0)
    # unweighted, two categories: -1 / (q - 1) = -1
    assert gwet_ac1(np.array([[1, 2], [2, 1], [1, 1]])).range == (-1.0, 1.0)


COEFFICIENTS: dict[str, Callable[[Any], AgreementResult]] = {
    "cohen": lambda r: cohen_kappa(r[:, :2]),
    "cohen_quadratic": lambda r: cohen_kappa(r[:, :2], weights="quadratic"),
    "fleiss": lambda r: fleiss_kappa(r),
    "conger": lambda r: conger_kappa(r),
    "light": lambda r: light_kappa(r),
    "gwet": lambda r: gwet_ac1(r),
    "gwet_linear": lambda r: gwet_ac1(r, weights="linear"),
    "bp": lambda r: brennan_prediger(r),
    "bp_quadratic": lambda r: brennan_prediger(r, weights="quadratic"),
    "pabak": lambda r: pabak(r[:, :2]),
    "alpha": lambda r: krippendorff_alpha(r),
    "kappa_max": lambda r: kappa_max(r[:, :2]),
}


@pytest.mark.parametrize("name", list(COEFFICIENTS))
def test_statistics_and_every_interval_lie_in_the_range(name: str) -> None:
    """Small random data (where intervals spill most), with and without missing ratings:
    the statistic lies in its declared range (so clipping never cuts off a possible value),
    and every interval lies in it."""
    rng = np.random.default_rng(sum(map(ord, name)))
    make = COEFFICIENTS[name]
    n_checked = 0
    for trial in range(60):
        n, m, q = int(rng.integers(2, 7)), int(rng.integers(2, 5)), int(rng.integers(2, 4))
        ratings = rng.integers(0, q, (n, m)).astype(float)
        if trial % 2:
            ratings[rng.random((n, m)) < 0.25] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                res = make(ratings)
            except ValueError:  # e.g. no complete pair: an EvalkitError, not this test's topic
                continue
            if res.statistic is None:
                continue
            lo_b, hi_b = res.range
            assert lo_b is None or res.statistic >= lo_b - 1e-12
            assert hi_b is None or res.statistic <= hi_b + 1e-12
            for method in ("analytic", "percentile", "bca"):
                if method == "analytic" and res.standard_error is None:
                    continue
                low, high = res.confidence_interval(method=method, n_resamples=300, rng=trial)
                for end in (low, high):
                    if end is not None:
                        assert lo_b is None or end >= lo_b
                        assert hi_b is None or end <= hi_b
            n_checked += 1
    assert n_checked >= 20
