"""scikit-learn's call, ``cohen_kappa(rater_a, rater_b)``: the same kappa as sklearn's own.

``cohen_kappa_score`` (scikit-learn, installed with crowd-kit, a test dependency) is the
second implementation, on random labels, unweighted and weighted; bad input is named.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evalkit.errors import EvalkitError
from evalkit.stats import cohen_kappa


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_two_raters_apart_equal_sklearn(weights: str | None) -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(5)
    for _ in range(20):
        n, k = int(rng.integers(5, 80)), int(rng.integers(2, 6))
        a = rng.integers(0, k, n)
        b = np.where(rng.random(n) < 0.6, a, rng.integers(0, k, n))
        if len(set(a) | set(b)) < 2:
            continue
        ours = cohen_kappa(a, b, weights=weights)
        assert ours.statistic == pytest.approx(cohen_kappa_score(a, b, weights=weights), abs=1e-12)
        # the same as the items x 2 call, figure for figure
        both = cohen_kappa(np.stack([a, b], axis=1), weights=weights)
        assert (ours.statistic, ours.standard_error, ours.n) == (
            both.statistic,
            both.standard_error,
            both.n,
        )


def test_two_raters_apart_take_any_labels_and_missing() -> None:
    from sklearn.metrics import cohen_kappa_score

    a = ["pass", "fail", "pass", None, "pass", "fail", "cannot-determine", "pass"]
    b = ["pass", "fail", "fail", "pass", "pass", "pass", "cannot-determine", None]
    res = cohen_kappa(a, b)
    kept = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    assert res.n == len(kept)
    assert res.statistic == pytest.approx(cohen_kappa_score(*zip(*kept, strict=True)), abs=1e-12)
    assert cohen_kappa(pd.Series(a), pd.Series(b)).statistic == res.statistic


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cohen_kappa([1, 2, 1], [1, 2]), "rater_a has 3 labels and rater_b 2"),
        (lambda: cohen_kappa([[1, 2], [2, 1]], [1, 2]), "rater_a must be one label per item"),
        (lambda: cohen_kappa([1, 2], [[1], [2]]), "rater_b must be one label per item"),
        (lambda: cohen_kappa(None, [1, 2]), "rater_a must be one label per item"),
        (lambda: cohen_kappa([1, 2], [1, 2], table=[[1, 0], [0, 1]]), "ratings= or table="),
    ],
)
def test_two_raters_apart_bad_input_is_named(call: Any, message: str) -> None:
    with pytest.raises(EvalkitError, match=re.escape(message)):
        call()
