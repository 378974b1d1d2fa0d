"""The one Wilson interval (evalkit.stats.wilson_interval) and the one level and resample-count
checks every statistic shares."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom
from statsmodels.stats.proportion import proportion_confint

from evalkit.errors import EvalkitError
from evalkit.stats import (
    cohen_kappa,
    corrected_prevalence,
    judge_panel,
    resample_weights,
    threshold_study,
    wilson_interval,
)
from evalkit.stats._inputs import check_level, check_resamples

# Newcombe RG (1998), "Two-sided confidence intervals for the single proportion: comparison of
# seven methods", Statistics in Medicine 17:857-872, Table I, method 3 (Wilson score, no
# continuity correction), 95%: the published bounds to 4 decimals.
NEWCOMBE_TABLE_I = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), NEWCOMBE_TABLE_I)
def test_newcombe_published_values(k: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=5e-5) and hi == pytest.approx(high, abs=5e-5)


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
@pytest.mark.slow
def test_the_same_doubles_as_statsmodels(level: float) -> None:
    # a second implementation, bit for bit: the study figures that came from statsmodels stay
    for n in range(1, 90):
        for k in range(n + 1):
            ours = wilson_interval(k, n, level)
            theirs = proportion_confint(k, n, alpha=1 - level, method="wilson")
            assert ours == theirs, (k, n, level)


def test_exact_coverage_is_nominal_on_average() -> None:
    # Coverage computed exactly (sum of binomial probabilities of the k whose interval holds p),
    # n = 100 over p in [0.05, 0.95]: Wilson's average coverage sits at the nominal 95%
    # (Brown, Cai & DasGupta 2001), with the known oscillation around it.
    n = 100
    intervals = [wilson_interval(k, n) for k in range(n + 1)]
    coverage = []
    for p in np.linspace(0.05, 0.95, 91):
        inside = [k for k, (lo, hi) in enumerate(intervals) if lo <= p <= hi]  # type: ignore[operator]
        coverage.append(float(binom.pmf(inside, n, p).sum()))
    assert 0.945 <= float(np.mean(coverage)) <= 0.955
    assert min(coverage) > 0.92 and max(coverage) < 0.98


def test_bounds_lie_in_the_unit_interval_and_mirror() -> None:
    for n in (1, 2, 3, 7, 10, 50):
        for k in range(n + 1):
            lo, hi = wilson_interval(k, n, 0.9)
            assert lo is not None and hi is not None and 0.0 <= lo <= k / n <= hi <= 1.0
            mlo, mhi = wilson_interval(n - k, n, 0.9)
            assert mlo is not None and mhi is not None
            assert lo == pytest.approx(1 - mhi, abs=1e-12)


def test_no_trials_no_interval() -> None:
    assert wilson_interval(0, 0) == (None, None)
    assert wilson_interval(np.int64(3), np.int64(4)) == wilson_interval(3, 4)


@pytest.mark.parametrize(
    ("k", "n", "level", "match"),
    [
        (-1, 5, 0.95, "0 <= k <= n"),
        (6, 5, 0.95, "0 <= k <= n"),
        (1.0, 5, 0.95, "k must be a whole number"),
        (True, 5, 0.95, "k must be a whole number"),
        (1, "5", 0.95, "n must be a whole number"),
        (1, 5, 1.0, "level must be a number strictly between 0 and 1"),
        (1, 5, float("nan"), "level must be a number strictly between 0 and 1"),
    ],
)
def test_bad_inputs_are_named(k: object, n: object, level: float, match: str) -> None:
    with pytest.raises(EvalkitError, match=match):
        wilson_interval(k, n, level)  # type: ignore[arg-type]


# ------------------------------------------------------------------ the shared checks


@pytest.mark.parametrize("level", [0, 1, -0.1, 1.5, float("nan"), "0.95", None, True])
def test_check_level_refuses(level: object) -> None:
    with pytest.raises(EvalkitError, match="level must be a number strictly between 0 and 1"):
        check_level(level)  # type: ignore[arg-type]


def test_check_resamples() -> None:
    assert check_resamples(np.int64(5)) == 5 and type(check_resamples(np.int64(5))) is int
    for bad in (0, True, np.bool_(True), 2.0, "10", None):
        with pytest.raises(EvalkitError, match=r"n_resamples must be an int >= 1"):
            check_resamples(bad)
    with pytest.raises(EvalkitError, match=r"n_resamples must be an int >= 100, got 99"):
        check_resamples(99, minimum=100)


def test_every_statistic_refuses_a_bool_resample_count_alike() -> None:
    # threshold_study once took True for one resample; every entry point now asks one helper
    message = "n_resamples must be an int >= "
    calls = [
        lambda: threshold_study([0, 1, 2, 3], n_resamples=True),
        lambda: resample_weights(5, True),
        lambda: cohen_kappa([[0, 0], [1, 1], [0, 1]]).confidence_interval(
            method="percentile", n_resamples=True
        ),
        lambda: corrected_prevalence(
            ["p", "f", "p"], (["p", "f", "p"], ["p", "f", "f"]), n_resamples=True
        ),
        lambda: judge_panel({"j1": ["p", "f", "p"], "j2": ["p", "p", "f"]}, n_resamples=True),
    ]
    for call in calls:
        with pytest.raises(EvalkitError, match=message):
            call()
