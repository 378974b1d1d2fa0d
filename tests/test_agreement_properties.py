"""Property tests (hypothesis) of the agreement coefficients: bounded by 1, invariant under
relabelling categories and reordering items and raters, 1 for identical raters, and the
documented degenerate rule."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.errors import DegenerateDataWarning
from evalkit.stats import (
    brennan_prediger,
    cohen_kappa,
    conger_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    light_kappa,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# nominal coefficients that take any number of raters
MULTI = [fleiss_kappa, gwet_ac1, brennan_prediger, conger_kappa, light_kappa, krippendorff_alpha]


@st.composite
def rating_matrices(draw: st.DrawFn, min_raters: int = 2, max_raters: int = 5) -> np.ndarray:
    """Items x raters integer labels 0..k-1 with -1 for missing (kept few)."""
    n = draw(st.integers(3, 25))
    r = draw(st.integers(min_raters, max_raters))
    k = draw(st.integers(2, 4))
    flat = draw(st.lists(st.integers(0, k - 1), min_size=n * r, max_size=n * r))
    x = np.array(flat).reshape(n, r)
    holes = draw(st.lists(st.integers(0, n * r - 1), max_size=n * r // 5))
    x.ravel()[holes] = -1
    return x


def _with_missing(x: np.ndarray) -> list[list[object]]:
    return [[None if v < 0 else int(v) for v in row] for row in x]


def _quiet(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return fn(*args, **kwargs)


def _safe(fn, data):  # type: ignore[no-untyped-def]
    """Call fn; inputs the validator rejects (e.g. no pairable item) count as 'no result'."""
    from evalkit.errors import EvalkitError

    try:
        return _quiet(fn, data)
    except EvalkitError:
        return None


@SETTINGS
@given(rating_matrices())
def test_at_most_one(x: np.ndarray) -> None:
    data = _with_missing(x)
    for fn in MULTI:
        res = _safe(fn, data)
        if res is None or res.statistic is None:
            continue
        assert res.statistic <= 1, fn.__name__  # exactly: a kappa of 1 + 1 ulp is a bug
        assert not np.isnan(res.statistic)
    two = _with_missing(x[:, :2])
    res = _safe(cohen_kappa, two)
    if res is not None and res.statistic is not None:
        assert -1 - 1e-12 <= res.statistic <= 1


@SETTINGS
@given(rating_matrices(), st.randoms(use_true_random=False))
def test_invariant_under_relabelling(x: np.ndarray, rnd) -> None:  # type: ignore[no-untyped-def]
    labels = ["pass", "fail", "skip", "n/a"]
    rnd.shuffle(labels)
    data = _with_missing(x)
    relabelled = [[None if v is None else labels[v] for v in row] for row in data]
    for fn in MULTI:
        a, b = _safe(fn, data), _safe(fn, relabelled)
        if a is None:
            assert b is None
            continue
        if a.statistic is None:
            assert b.statistic is None
        else:
            assert b.statistic == pytest.approx(a.statistic, abs=1e-10), fn.__name__
            if a.standard_error is not None:
                assert b.standard_error == pytest.approx(a.standard_error, abs=1e-10)


@SETTINGS
@given(rating_matrices(), st.randoms(use_true_random=False))
def test_invariant_under_reordering(x: np.ndarray, rnd) -> None:  # type: ignore[no-untyped-def]
    rows = list(range(x.shape[0]))
    cols = list(range(x.shape[1]))
    rnd.shuffle(rows)
    rnd.shuffle(cols)
    data = _with_missing(x)
    shuffled = _with_missing(x[rows][:, cols])
    for fn in MULTI:
        a, b = _safe(fn, data), _safe(fn, shuffled)
        if a is None or a.statistic is None:
            assert b is None or b.statistic is None
            continue
        assert b.statistic == pytest.approx(a.statistic, abs=1e-10), fn.__name__
    two, two_swapped = _with_missing(x[rows][:, :2]), _with_missing(x[rows][:, 1::-1])
    a, b = _safe(cohen_kappa, two), _safe(cohen_kappa, two_swapped)
    if a is not None and a.statistic is not None:
        assert b.statistic == pytest.approx(a.statistic, abs=1e-10)
        assert b.standard_error == pytest.approx(a.standard_error, abs=1e-10)


@SETTINGS
@given(st.lists(st.integers(0, 3), min_size=3, max_size=30), st.integers(2, 5))
def test_identical_raters(column: list[int], n_raters: int) -> None:
    data = [[v] * n_raters for v in column]
    coefficients = [*MULTI, cohen_kappa] if n_raters == 2 else MULTI
    for fn in coefficients:
        if len(set(column)) >= 2:
            res = fn(data)
            assert res.statistic <= 1, fn.__name__
            assert res.statistic == pytest.approx(1.0), fn.__name__
            assert not res.degenerate
        else:
            # documented rule: one category only -> None, degenerate, warning; never raises
            with pytest.warns(DegenerateDataWarning):
                res = fn(data)
            assert res.statistic is None and res.degenerate, fn.__name__


@SETTINGS
@given(rating_matrices(min_raters=2, max_raters=2))
def test_cohen_kappa_bounded_by_kappa_max(x: np.ndarray) -> None:
    from evalkit.stats import kappa_max

    data = _with_missing(x)
    k = _safe(cohen_kappa, data)
    m = _safe(kappa_max, data)
    if k is not None and k.statistic is not None and m is not None and m.statistic is not None:
        assert k.statistic <= m.statistic + 1e-12


def test_perfect_agreement_is_exactly_one_not_one_plus_an_ulp() -> None:
    # Regression: po accumulated as 199 additions of 1/199 gave kappa 1.0000000000000007.
    labels = np.random.default_rng(0).choice(["pass", "fail", "cannot-determine"], 199)
    for weights in (None, "linear", "quadratic"):
        res = cohen_kappa(np.c_[labels, labels], weights=weights)
        assert res.statistic == 1.0, weights
        low, high = res.confidence_interval(method="bca", n_resamples=200, rng=0)
        assert low <= high <= 1.0
