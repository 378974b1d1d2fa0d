"""Input forms and validation errors of the statistics functions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.errors import EvalkitError
from evalkit.stats import (
    AgreementResult,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    pabak,
    specific_agreement,
)


def test_long_dataframe_equals_wide() -> None:
    wide = [["a", "b", "a"], ["b", "b", None], ["a", "a", "a"], ["c", "b", "c"]]
    rows = [
        {"item": f"i{i}", "rater": f"r{g}", "label": v}
        for i, row in enumerate(wide)
        for g, v in enumerate(row)
        if v is not None
    ]
    long = pd.DataFrame(rows).sample(frac=1.0, random_state=0)  # order must not matter
    assert fleiss_kappa(long).statistic == pytest.approx(fleiss_kappa(wide).statistic)
    assert gwet_ac1(long).standard_error == pytest.approx(gwet_ac1(wide).standard_error)


def test_wide_dataframe_and_nan_missing() -> None:
    df = pd.DataFrame({"r1": [1, 2, 3, np.nan], "r2": [1, 2, 2, 1], "r3": [1, np.nan, 3, 1]})
    a = krippendorff_alpha(df, "interval")
    b = krippendorff_alpha([[1, 1, 1], [2, 2, None], [3, 2, 3], [None, 1, 1]], "interval")
    assert a.statistic == pytest.approx(b.statistic)


def test_result_api_shape() -> None:
    res = cohen_kappa([[0, 0], [1, 1], [0, 1], [1, 1], [0, 0]])
    assert isinstance(res, AgreementResult)
    low, high = res.confidence_interval(level=0.9)
    assert low < res.statistic < high
    assert res.n == 5 and res.n_raters == 2 and res.categories == (0, 1)
    with pytest.raises(Exception):  # noqa: B017 - frozen dataclass
        res.statistic = 0.5  # type: ignore[misc]


def test_items_missing_a_rating_are_dropped_for_cohen() -> None:
    full = cohen_kappa([[0, 0], [1, 1], [0, 1], [1, 1]])
    holes = cohen_kappa([[0, 0], [1, 1], [0, 1], [1, 1], [None, 1], [0, None]])
    assert holes.n == 4 and holes.statistic == pytest.approx(full.statistic)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: cohen_kappa(), "give ratings= or table="),
        (lambda: cohen_kappa([[0, 1]], table=[[1, 0], [0, 1]]), "only one of"),
        (lambda: cohen_kappa([[0, 1, 1]]), "exactly 2 raters"),
        (lambda: cohen_kappa([[0, 1], [1]]), "row 1 has 1 ratings"),
        (lambda: cohen_kappa([0, 1, 1]), "row 0 is not a sequence"),
        (lambda: cohen_kappa(table=[[1, 2, 3], [1, 2, 3]]), "square"),
        (lambda: cohen_kappa(table=[[1, -2], [1, 2]]), "negative"),
        (lambda: cohen_kappa(table=[[1, 0.5], [1, 2]]), "whole counts"),
        (lambda: cohen_kappa(table=[[0, 0], [0, 0]]), "no items"),
        (lambda: cohen_kappa([[0, 1], [1, 1]], weights="cubic"), "weights must be"),
        (lambda: cohen_kappa(table=[[1, 2], [3, 4]], weights=[[1, 1], [1, 0]]), "diagonal"),
        (lambda: cohen_kappa(table=[[1, 2], [3, 4]], weights=np.zeros((3, 3))), "2 x 2"),
        (lambda: cohen_kappa([[None, 1], [1, None]]), "no item has ratings from both"),
        (lambda: cohen_kappa([[None, None]]), "no ratings"),
        (lambda: cohen_kappa([[[1], 2]]), "not hashable"),
        (lambda: fleiss_kappa(counts=[[1, np.nan]]), "NaN"),
        (lambda: fleiss_kappa([[1], [2]]), "at least 2 raters"),
        (lambda: krippendorff_alpha([["a", "b"]], "interval"), "numeric labels"),
        (lambda: krippendorff_alpha([[1, 2]], "cardinal"), "level must be one of"),
        (lambda: krippendorff_alpha([[1, None], [None, 2]]), "none pairable"),
        (lambda: specific_agreement([["y", "n"], ["y", "y"]]), "positive="),
        (lambda: pabak(table=[[1, 2], [3, 4]], categories=["a"]), "categories has 1"),
        (lambda: fleiss_kappa(pd.DataFrame({"item": [1], "rater": [1]})), "needs columns"),
        (
            lambda: fleiss_kappa(
                pd.DataFrame({"item": [1, 1], "rater": ["a", "a"], "label": [0, 1]})
            ),
            "more than one label",
        ),
        (lambda: cohen_kappa([[0, 1]], categories=[0]), "not in categories"),
    ],
)
def test_errors_name_the_argument(call, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(EvalkitError, match=match):
        call()


def test_declared_categories_make_ac1_defined() -> None:
    # one observed label, two declared: AC1 = (1 - 0) / (1 - 0) = 1 (pe = sum pi (1 - pi) = 0)
    assert gwet_ac1([["ok", "ok"]] * 4, categories=["ok", "bad"]).statistic == 1.0


def test_numeric_array_fast_path_equals_general_path() -> None:
    from evalkit.stats._inputs import as_ratings

    rng = np.random.default_rng(3)
    x = rng.integers(1, 6, size=(40, 4)).astype(float)
    x[rng.random(x.shape) < 0.25] = np.nan
    x[5] = np.nan  # an item nobody rated is dropped by both paths
    fast = as_ratings(x)
    general = as_ratings([[None if np.isnan(v) else v for v in row] for row in x.tolist()])
    assert fast.categories == general.categories
    assert np.array_equal(fast.codes, general.codes)
    ints = rng.integers(0, 3, size=(10, 3))
    assert as_ratings(ints).categories == as_ratings(ints.tolist()).categories
    assert np.array_equal(as_ratings(ints).codes, as_ratings(ints.tolist()).codes)


def test_counts_form_equals_ratings_form() -> None:
    from statsmodels.stats.inter_rater import aggregate_raters

    from evalkit.stats import brennan_prediger

    rng = np.random.default_rng(9)
    x = rng.integers(0, 3, size=(25, 4))
    counts, _ = aggregate_raters(x)
    for fn in (fleiss_kappa, gwet_ac1, brennan_prediger):
        a, b = fn(x), fn(counts=counts)
        assert a.statistic == pytest.approx(b.statistic, abs=1e-14), fn.__name__
        assert a.standard_error == pytest.approx(b.standard_error, abs=1e-14), fn.__name__
    a, b = krippendorff_alpha(x), krippendorff_alpha(counts=counts)
    assert a.statistic == pytest.approx(b.statistic, abs=1e-14)


def test_public_names_are_pinned() -> None:
    import evalkit.stats as st

    expected = {
        "AgreementResult", "BootstrapResult", "ConfidenceInterval", "ThresholdStudy",
        "bootstrap_sums", "brennan_prediger", "cohen_kappa", "conger_kappa", "fleiss_kappa",
        "gwet_ac1", "kappa_ci_sample_size", "kappa_max", "kappa_test_sample_size",
        "krippendorff_alpha", "light_kappa", "pabak", "plot_threshold_study",
        "resample_weights", "specific_agreement", "threshold_study",
        # issue 12: class shares on a target, judge panels, planning
        "CorrectedPrevalence", "DawidSkeneResult", "JudgePanel", "PPIPrevalence",
        "PrevalencePlan", "corrected_prevalence", "dawid_skene", "judge_panel",
        "plan_prevalence", "ppi_prevalence",
        # issue 14: the one Wilson interval, the named ~10% ceiling
        "wilson_interval", "FIRE_RATE_CEILING",
        # issue 22: the anytime-valid band of a rate read after every session
        "ConfidenceSequence", "confidence_sequence",
    }  # fmt: skip
    assert set(st.__all__) == expected
    for name in expected:
        assert getattr(st, name) is not None
