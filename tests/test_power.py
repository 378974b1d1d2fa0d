"""Tests of evalkit.stats.power: kappa sample sizes against published values and simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from evalkit.errors import EvalkitError
from evalkit.stats.power import (
    KappaCIPlan,
    items_for_ci_width,
    kappa_asymptotic_variance,
    kappa_ci_half_width,
    kappa_ci_plan,
    kappa_ci_sample_size,
    kappa_joint_table,
    kappa_test_sample_size,
    kappa_test_sample_size_multi,
)

# ----------------------------------------------------------------- published values


def test_n_cohen_kappa_documented_example() -> None:
    # R irr, help page of N.cohen.kappa, example `N.cohen.kappa(0.5, 0.5, 0.7, 0.85)`;
    # the example output printed with the package documentation is `[1] 96`.
    assert kappa_test_sample_size(0.5, 0.5, 0.7, 0.85) == 96


def test_n_cohen_kappa_two_sided_published_run() -> None:
    # `N.cohen.kappa(1/2, 1/2, 0.7, 0.3, alpha = 0.05, power = 0.8, twosided = TRUE)` printed
    # "Sample size for Cohen's Kappa: 39" (public R notebook, github.com/Mick-R/Master_Thesis).
    assert kappa_test_sample_size(0.5, 0.5, 0.7, 0.3, two_sided=True) == 39


def test_n2_cohen_kappa_documented_examples() -> None:
    # R irr, help page of N2.cohen.kappa (Flack et al. 1988), example output `101`, `136`, `18`.
    assert kappa_test_sample_size_multi([0.2, 0.25, 0.55], 0.6, 0.4) == 101
    assert kappa_test_sample_size_multi([0.2, 0.25, 0.55], 0.6, 0.4, power=0.9) == 136
    assert kappa_test_sample_size_multi([0.2, 0.05, 0.2, 0.05, 0.2, 0.3], 0.5, 0.1) == 18


def test_fce_standard_error_matches_sas_example() -> None:
    # SAS/STAT PROC FREQ agreement example, table [[0,4,1],[0,8,0],[0,1,5]] (n = 19):
    # kappa 0.4842, ASE 0.1380 (Fleiss-Cohen-Everitt large-sample variance).
    table = np.array([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    se = math.sqrt(kappa_asymptotic_variance(table) / table.sum())
    assert round(se, 4) == 0.1380


# ----------------------------------------------------------------- second implementations


def _n_cohen_kappa_r(rate1, rate2, kappa, hypokappa, power=0.8, alpha=0.05, twosided=False):
    """Line-by-line transcription of irr 0.84.1 R/N.cohen.kappa.R (cran/irr on GitHub)."""
    d = 2 if twosided else 1
    pi2_ = 1 - rate1
    pi_2 = 1 - rate2
    pie = rate1 * rate2 + pi2_ * pi_2
    pi0 = kappa * (1 - pie) + pie
    pi22 = (pi0 - rate1 + pi_2) / 2
    pi11 = pi0 - pi22
    pi12 = rate1 - pi11
    pi21 = rate2 - pi11
    pi0_h = hypokappa * (1 - pie) + pie
    pi22_h = (pi0_h - rate1 + pi_2) / 2
    pi11_h = pi0_h - pi22_h
    pi12_h = rate1 - pi11_h
    pi21_h = rate2 - pi11_h
    q = (1 - pie) ** (-4) * (
        pi11 * (1 - pie - (rate2 + rate1) * (1 - pi0)) ** 2
        + pi22 * (1 - pie - (pi_2 + pi2_) * (1 - pi0)) ** 2
        + (1 - pi0) ** 2 * (pi12 * (rate2 + pi2_) ** 2 + pi21 * (pi_2 + rate1) ** 2)
        - (pi0 * pie - 2 * pie + pi0) ** 2
    )
    q_h = (1 - pie) ** (-4) * (
        pi11_h * (1 - pie - (rate2 + rate1) * (1 - pi0_h)) ** 2
        + pi22_h * (1 - pie - (pi_2 + pi2_) * (1 - pi0_h)) ** 2
        + (1 - pi0_h) ** 2 * (pi12_h * (rate2 + pi2_) ** 2 + pi21_h * (pi_2 + rate1) ** 2)
        - (pi0_h * pie - 2 * pie + pi0_h) ** 2
    )
    n = (
        (norm.ppf(1 - alpha / d) * math.sqrt(q_h) + norm.ppf(power) * math.sqrt(q))
        / (kappa - hypokappa)
    ) ** 2
    return math.ceil(n)


@pytest.mark.parametrize(
    ("rate1", "rate2", "k1", "k0", "alpha", "power", "two_sided"),
    [
        (0.5, 0.5, 0.5, 0.3, 0.05, 0.8, False),
        (0.3, 0.4, 0.6, 0.2, 0.05, 0.8, False),  # unequal rates: old irr used pi12 twice
        (0.2, 0.3, 0.5, 0.0, 0.01, 0.9, True),
        (0.6, 0.5, 0.4, 0.6, 0.05, 0.8, False),  # kappa_true below kappa_null
        (0.1, 0.15, 0.7, 0.4, 0.10, 0.95, True),
    ],
)
def test_kappa_test_sample_size_matches_r_transcription(
    rate1: float, rate2: float, k1: float, k0: float, alpha: float, power: float, two_sided: bool
) -> None:
    expected = _n_cohen_kappa_r(rate1, rate2, k1, k0, power, alpha, two_sided)
    assert kappa_test_sample_size(rate1, rate2, k1, k0, alpha, power, two_sided) == expected


def _kapssi_n(kappa: float, p1: float, p2: float, half_width: float, level: float) -> int:
    """Closed form of Stata's kapssi (D. Harrison 2004, SSC; FCE 1969 variance, two raters)."""
    se = half_width / norm.ppf((1 + level) / 2)
    q1, q2 = 1 - p1, 1 - p2
    num = (1 - kappa) * (
        4 * p1 * p2 * q1 * q2 * (1 + kappa)
        + (1 - 2 * p1) * (1 - 2 * p2) * (p1 * q2 + p2 * q1) * kappa * (2 - kappa)
    )
    return math.ceil(num / (se * (p1 * q2 + p2 * q1)) ** 2)


@pytest.mark.parametrize(
    ("kappa", "p1", "p2", "half_width", "level"),
    [
        (0.6, 0.3, 0.3, 0.1, 0.95),
        (0.8, 0.1, 0.1, 0.05, 0.95),
        (0.5, 0.2, 0.3, 0.1, 0.90),
        (0.7, 0.5, 0.4, 0.15, 0.99),
        (0.3, 0.15, 0.1, 0.2, 0.95),
    ],
)
def test_ci_sample_size_matches_kapssi_closed_form(
    kappa: float, p1: float, p2: float, half_width: float, level: float
) -> None:
    n = kappa_ci_sample_size(kappa, p1, half_width, level, prevalence_b=p2)
    assert n == _kapssi_n(kappa, p1, p2, half_width, level)


@pytest.mark.parametrize(("kappa", "p"), [(0.6, 0.3), (0.8, 0.1), (0.4, 0.5), (-0.2, 0.4)])
def test_variance_matches_bloch_kraemer_for_equal_prevalence(kappa: float, p: float) -> None:
    # Bloch & Kraemer (1989): n Var = (1-k)[(1-k)(1-2k) + k(2-k) / (2p(1-p))].
    expected = (1 - kappa) * (
        (1 - kappa) * (1 - 2 * kappa) + kappa * (2 - kappa) / (2 * p * (1 - p))
    )
    assert kappa_asymptotic_variance(kappa_joint_table(kappa, p)) == pytest.approx(expected)


@pytest.mark.parametrize(
    "table",
    [
        [[0, 4, 1], [0, 8, 0], [0, 1, 5]],
        [[20, 5], [10, 15]],
        [[11, 3, 2], [4, 20, 1], [0, 6, 9]],
        [[40, 1], [3, 2]],
    ],
)
def test_variance_matches_cohen_kappa_standard_error(table: list[list[int]]) -> None:
    # Second implementation: evalkit.stats.cohen_kappa's SE uses the weighted-kappa form of
    # the same Fleiss-Cohen-Everitt (1969) variance (identity weights).
    from evalkit.stats import cohen_kappa

    t = np.array(table)
    se = cohen_kappa(table=t).standard_error
    assert se is not None
    assert math.sqrt(kappa_asymptotic_variance(t) / t.sum()) == pytest.approx(se, rel=1e-10)


# ----------------------------------------------------------------- simulation


def _kappa_and_se(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    kappas = np.empty(len(tables))
    ses = np.empty(len(tables))
    for i, t in enumerate(tables):
        p = t / t.sum()
        po, pe = np.trace(p), p.sum(1) @ p.sum(0)
        kappas[i] = (po - pe) / (1 - pe)
        ses[i] = math.sqrt(kappa_asymptotic_variance(t) / t.sum())
    return kappas, ses


@pytest.mark.parametrize(
    ("kappa", "prevalence", "prevalence_b", "half_width"),
    [
        (0.6, 0.3, None, 0.1),
        (0.8, 0.2, 0.25, 0.1),  # judge vs gold with different positive rates
        (0.5, [0.2, 0.3, 0.5], None, 0.1),  # three categories
    ],
)
def test_ci_sample_size_delivers_the_target_half_width_in_simulation(
    kappa: float, prevalence, prevalence_b, half_width: float
) -> None:
    plan = kappa_ci_plan(kappa, prevalence, half_width, prevalence_b=prevalence_b)
    table = kappa_joint_table(kappa, prevalence, prevalence_b)
    rng = np.random.default_rng(2024)
    reps = 2000
    k = table.shape[0]
    draws = rng.multinomial(plan.n, table.ravel(), size=reps).reshape(reps, k, k)
    # degenerate draws (a single category used) have no kappa; at these n they do not occur
    kappas, ses = _kappa_and_se(draws)
    z = norm.ppf(0.975)
    # the average interval half-width is the target (within 3 %) ...
    assert np.mean(z * ses) == pytest.approx(half_width, rel=0.03)
    # ... and the sampling SD of kappa-hat really is that wide (Monte-Carlo truth, within 6 %)
    assert np.std(kappas, ddof=1) * z == pytest.approx(half_width, rel=0.06)
    # and the Wald interval at that n covers the true kappa about 95 % of the time
    coverage = np.mean(np.abs(kappas - kappa) <= z * ses)
    assert 0.925 <= coverage <= 0.97


# ----------------------------------------------------------------- behaviour


def test_plan_details_and_inverse() -> None:
    plan = kappa_ci_plan(0.6, 0.3, 0.1)
    assert isinstance(plan, KappaCIPlan)
    assert plan.n == kappa_ci_sample_size(0.6, 0.3, 0.1)
    assert plan.marginals_a == pytest.approx((0.3, 0.7))
    assert plan.expected_half_width <= 0.1
    assert kappa_ci_half_width(0.6, 0.3, plan.n) <= 0.1 < kappa_ci_half_width(0.6, 0.3, plan.n - 1)
    assert set(plan.to_dict()) >= {"n", "kappa", "half_width", "level", "variance_per_item"}


def test_items_for_ci_width_is_full_width() -> None:
    assert items_for_ci_width(0.7, [0.3, 0.7], 0.2) == kappa_ci_sample_size(0.7, 0.3, 0.1)
    assert items_for_ci_width(0.7, 0.2, 0.2, marginals_b=0.25) == kappa_ci_sample_size(
        0.7, 0.2, 0.1, prevalence_b=0.25
    )


@given(
    kappa=st.floats(0.05, 0.95),
    p=st.floats(0.05, 0.95),
    w=st.floats(0.02, 0.3),
)
@settings(max_examples=60, deadline=None)
def test_ci_sample_size_is_monotone_in_width(kappa: float, p: float, w: float) -> None:
    n_wide = kappa_ci_sample_size(kappa, p, w)
    n_narrow = kappa_ci_sample_size(kappa, p, w / 2)
    assert n_narrow >= n_wide
    # halving the width quadruples n (up to ceiling)
    assert abs(n_narrow - 4 * n_wide) <= 4


@given(kappa=st.floats(-0.3, 1.0), p=st.floats(0.05, 0.95), q=st.floats(0.05, 0.95))
@settings(max_examples=80, deadline=None)
def test_joint_table_has_the_requested_kappa_and_margins(kappa: float, p: float, q: float) -> None:
    try:
        t = kappa_joint_table(kappa, p, q)
    except EvalkitError:
        return  # unattainable combination: refused (checked separately)
    assert t.sum() == pytest.approx(1.0)
    assert t.sum(axis=1)[0] == pytest.approx(p) and t.sum(axis=0)[0] == pytest.approx(q)
    po, pe = np.trace(t), t.sum(1) @ t.sum(0)
    assert (po - pe) / (1 - pe) == pytest.approx(kappa, abs=1e-9)


def test_unattainable_kappa_is_refused_with_the_range() -> None:
    with pytest.raises(EvalkitError, match=r"not attainable.*attainable range"):
        kappa_joint_table(0.9, 0.1, 0.5)
    with pytest.raises(EvalkitError, match="not attainable"):
        kappa_test_sample_size(0.3, 0.7, 0.8, 0.2)
    with pytest.raises(EvalkitError, match="not attainable"):
        kappa_ci_sample_size(-0.9, 0.1, 0.1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: kappa_test_sample_size(0.5, 0.5, 0.4, 0.4), "must differ"),
        (lambda: kappa_test_sample_size(0.0, 0.5, 0.6, 0.4), "rate1"),
        (lambda: kappa_test_sample_size(0.5, 0.5, 0.6, 0.4, alpha=1.5), "alpha"),
        (lambda: kappa_test_sample_size(0.5, 0.5, 1.6, 0.4), "kappa_true"),
        (lambda: kappa_ci_sample_size(0.6, 0.3, 0.0), "half_width"),
        (lambda: kappa_ci_sample_size(0.6, [0.3, 0.3], 0.1), "sum to 1"),
        (lambda: kappa_ci_sample_size(1.0, 0.3, 0.1), "zero large-sample variance"),
        (
            lambda: kappa_ci_sample_size(0.6, [0.2, 0.8], 0.1, prevalence_b=[0.1, 0.2, 0.7]),
            "categories",
        ),
        (lambda: kappa_test_sample_size_multi([0.5, 0.5], 0.5, 0.5), "must differ"),
    ],
)
def test_bad_input_is_named(call, message: str) -> None:
    with pytest.raises(EvalkitError, match=message):
        call()


def test_public_names_resolve_through_evalkit_stats() -> None:
    import evalkit.stats as stats
    from evalkit.stats import power

    assert stats.kappa_ci_sample_size is power.kappa_ci_sample_size
    assert stats.kappa_test_sample_size is power.kappa_test_sample_size
