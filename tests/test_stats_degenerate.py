"""Degenerate data (issue 5): a documented result with a ``DegenerateDataWarning``, never an
exception, never a silent NaN, never a false certainty (see ``evalkit/stats/_result.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from evalkit.errors import DegenerateDataWarning
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

METHODS = ("analytic", "percentile", "bca")

# one item: each coefficient's point estimate on that item, worked by hand
ONE_ITEM: dict[str, tuple[Callable[[], AgreementResult], float]] = {
    # pa = 2/6, pi = (2/3, 1/3), pe = 5/9: (1/3 - 5/9) / (4/9) = -0.5
    "fleiss": (lambda: fleiss_kappa([[1, 1, 2]]), -0.5),
    # po = 0, margins (1, 0) and (0, 1): pe = 0, kappa = 0
    "cohen": (lambda: cohen_kappa([[1, 2]]), 0.0),
    # pe = mean pairwise chance agreement of one-hot raters = (1 + 0 + 0) / 3 = pa: 0
    "conger": (lambda: conger_kappa([[1, 1, 2]]), 0.0),
    "gwet": (lambda: gwet_ac1([[1, 2]]), -1.0),  # pa 0, pe = 2 * 1/4 = 1/2
    "bp": (lambda: brennan_prediger([[1, 2]]), -1.0),  # pa 0, pe 1/2
    "pabak": (lambda: pabak([[1, 2]]), -1.0),  # 2 po - 1
    "alpha": (lambda: krippendorff_alpha([[1, 2]]), 0.0),  # 1 - (2 - 1) * 2 / 2
    "light": (lambda: light_kappa([[1, 2, 2]]), 0.0),
    "kappa_max": (lambda: kappa_max([[1, 2]]), 0.0),
}


@pytest.mark.parametrize("name", list(ONE_ITEM))
def test_one_item_is_degenerate_with_no_interval(name: str) -> None:
    make, expected = ONE_ITEM[name]
    with pytest.warns(DegenerateDataWarning, match="only 1 item"):
        res = make()
    assert res.statistic == pytest.approx(expected, abs=1e-12)
    # an SE (of 0 or anything else) from one item would be a false certainty
    assert_no_sampling_variation(res, 1)


def assert_no_sampling_variation(res: AgreementResult, n: int) -> None:
    """Too few items: degenerate, no SE or test, every interval (None, None) with a warning."""
    assert res.n == n and res.degenerate and res.few_items
    assert res.standard_error is None
    assert res.standard_error_h0 is None and res.z is None and res.p_value is None
    for method in METHODS:
        with pytest.warns(DegenerateDataWarning, match=f"only {n} item"):
            ci = res.confidence_interval(method=method, n_resamples=200, rng=1)
        assert ci == (None, None), method


def test_one_item_bootstrap_result_is_empty_not_a_point() -> None:
    with pytest.warns(DegenerateDataWarning):
        res = fleiss_kappa([[1, 1, 2]])
    with pytest.warns(DegenerateDataWarning, match="1 resampling unit"):
        boot = res.bootstrap(n_resamples=100, rng=1)
    assert boot.confidence_interval == (None, None)
    assert boot.distribution.size == 0 and boot.standard_error is None


def test_one_cluster_gives_no_bootstrap_interval() -> None:
    ratings = np.array([[1, 1], [1, 2], [2, 2], [2, 1], [1, 1]])
    res = cohen_kappa(ratings)  # 5 items: an ordinary result
    assert not res.degenerate and res.standard_error is not None
    for method in ("percentile", "bca"):
        with pytest.warns(DegenerateDataWarning, match="1 resampling unit"):
            ci = res.confidence_interval(method=method, rng=1, clusters=["s"] * 5)
        assert ci == (None, None)


def test_two_items_are_not_degenerate() -> None:
    res: Any = fleiss_kappa([[1, 1, 2], [2, 2, 2]])
    assert res.n == 2 and not res.degenerate and res.standard_error is not None
    low, high = res.confidence_interval()
    assert low is not None and high is not None and low < res.statistic <= high


# two items whose analytic SE is 0 or undefined (each value worked by hand): the SE stands on
# one difference between two items' contributions, which these symmetric cases make 0, or on
# one-item jackknife estimates; an SE of 0 and a zero-width interval would be a false certainty
TWO_ITEMS: dict[str, tuple[Callable[[], AgreementResult], float]] = {
    # po = 0, margins (1/2, 1/2) both: pe = 1/2, kappa = -1 (old: SE 0, interval (-1, -1))
    "cohen": (lambda: cohen_kappa([["a", "b"], ["b", "a"]]), -1.0),
    "cohen_perfect": (lambda: cohen_kappa([["a", "a"], ["b", "b"]]), 1.0),
    # pa = 0, pi = (1/2, 1/2): pe = 1/2, -1
    "fleiss": (lambda: fleiss_kappa([["a", "b"], ["b", "a"]]), -1.0),
    "gwet": (lambda: gwet_ac1([["a", "b"], ["b", "a"]]), -1.0),  # pe = 2 * 1/4
    "bp": (lambda: brennan_prediger([["a", "a"], ["b", "b"]]), 1.0),
    "conger": (lambda: conger_kappa([["a", "b"], ["b", "a"]]), -1.0),
    "pabak": (lambda: pabak([["a", "b"], ["b", "a"]]), -1.0),  # 2 po - 1
    # D_o = 1 (all 4 pairable values disagree within units), D_e = 2 * 2 * 2 / (4 * 3) = 2/3
    "alpha": (lambda: krippendorff_alpha([["a", "b"], ["b", "a"]]), -0.5),
    # jackknife over one-item estimates: each single item (x, x) has pe = 1, undefined
    "light": (lambda: light_kappa([["a", "a", "a"], ["b", "b", "b"]]), 1.0),
    "kappa_max": (lambda: kappa_max([["a", "b"], ["b", "a"]]), 1.0),  # margins equal
}


@pytest.mark.parametrize("name", list(TWO_ITEMS))
def test_two_items_with_a_zero_or_undefined_se_are_degenerate(name: str) -> None:
    make, expected = TWO_ITEMS[name]
    with pytest.warns(DegenerateDataWarning, match=r"only 2 items, whose standard error is"):
        res = make()
    assert res.statistic == pytest.approx(expected, abs=1e-12)
    assert_no_sampling_variation(res, 2)


def test_two_items_with_a_positive_se_keep_it() -> None:
    # (a, b), (c, c): po = 1/2, margins (1/2, 0, 1/2) and (0, 1/2, 1/2), pe = 1/4, kappa = 1/3
    res = cohen_kappa([["a", "b"], ["c", "c"]])
    assert res.statistic == pytest.approx(1 / 3)
    assert not res.degenerate and not res.few_items
    assert res.standard_error is not None and res.standard_error > 0.1
    low, high = res.confidence_interval()
    assert low is not None and high is not None and low < res.statistic < high
