"""Every public function of ``evalkit.stats`` meets bad input with an ``EvalkitError`` naming
the argument (or a documented degenerate result with a ``DegenerateDataWarning``), never a
raw TypeError / ValueError / IndexError / ZeroDivisionError (issue 5: degenerate data rule).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from evalkit import stats
from evalkit.errors import DegenerateDataWarning, EvalkitError

BAD_VALUES: dict[str, Any] = {
    "none": None,
    "scalar": 3,
    "empty": [],
    "one_d": [1, 2, 1],
    "ragged": [[1, 2], [1]],
    "dict": {"a": [1, 2]},
    "strings": "abc",
    "string_cells": [["x", "y"], ["y", "x"]],
    "nan": float("nan"),
    "bool": True,
}


_GOLD_PAIR = (["pass", "fail", "pass", "fail"], ["pass", "fail", "pass", "fail"])
_PANEL = {"a": ["pass", "fail", "pass"], "b": ["pass", "fail", "fail"]}
_PREV = {"pass": 0.7, "fail": 0.3}


def _good_sum(sums: Any) -> Any:
    return sums[..., 0]


# function -> (argument name probed, call with the bad value in that argument)
CALLS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "cohen_kappa(ratings)": ("ratings", lambda v: stats.cohen_kappa(v)),
    "cohen_kappa(table)": ("table", lambda v: stats.cohen_kappa(table=v)),
    "cohen_kappa(weights)": (
        "weights",
        lambda v: stats.cohen_kappa(table=[[3, 1], [1, 3]], weights=v),
    ),
    "fleiss_kappa(ratings)": ("ratings", lambda v: stats.fleiss_kappa(v)),
    "fleiss_kappa(counts)": ("counts", lambda v: stats.fleiss_kappa(counts=v)),
    "conger_kappa": ("ratings", lambda v: stats.conger_kappa(v)),
    "light_kappa": ("ratings", lambda v: stats.light_kappa(v)),
    "krippendorff_alpha(ratings)": ("ratings", lambda v: stats.krippendorff_alpha(v)),
    "krippendorff_alpha(level)": (
        "level",
        lambda v: stats.krippendorff_alpha([[1, 2], [2, 2]], level=v),
    ),
    "gwet_ac1(ratings)": ("ratings", lambda v: stats.gwet_ac1(v)),
    "gwet_ac1(counts)": ("counts", lambda v: stats.gwet_ac1(counts=v)),
    "gwet_ac1(table)": ("table", lambda v: stats.gwet_ac1(table=v)),
    "brennan_prediger": ("ratings", lambda v: stats.brennan_prediger(v)),
    "pabak(ratings)": ("ratings", lambda v: stats.pabak(v)),
    "pabak(table)": ("table", lambda v: stats.pabak(table=v)),
    "specific_agreement": ("ratings", lambda v: stats.specific_agreement(v, positive="x")),
    "kappa_max": ("ratings", lambda v: stats.kappa_max(v)),
    "resample_weights(n_items)": ("n_items", lambda v: stats.resample_weights(v, 10, 1)),
    "resample_weights(n_resamples)": (
        "n_resamples",
        lambda v: stats.resample_weights(5, v, 1),
    ),
    "resample_weights(clusters)": (
        "clusters",
        lambda v: stats.resample_weights(3, 10, 1, clusters=v),
    ),
    "bootstrap_sums(suff)": ("suff", lambda v: stats.bootstrap_sums(v, _good_sum, rng=1)),
    "bootstrap_sums(fn)": ("fn", lambda v: stats.bootstrap_sums([[1.0], [2.0]], v, rng=1)),
    "kappa_ci_sample_size(kappa)": (
        "kappa",
        lambda v: stats.kappa_ci_sample_size(v, 0.3, 0.1),
    ),
    "kappa_ci_sample_size(prevalence)": (
        "prevalence",
        lambda v: stats.kappa_ci_sample_size(0.6, v, 0.1),
    ),
    "kappa_ci_sample_size(half_width)": (
        "half_width",
        lambda v: stats.kappa_ci_sample_size(0.6, 0.3, v),
    ),
    "kappa_test_sample_size(rate1)": (
        "rate1",
        lambda v: stats.kappa_test_sample_size(v, 0.3, 0.6, 0.4),
    ),
    "kappa_test_sample_size(kappa_true)": (
        "kappa_true",
        lambda v: stats.kappa_test_sample_size(0.3, 0.3, v, 0.4),
    ),
    "kappa_test_sample_size(alpha)": (
        "alpha",
        lambda v: stats.kappa_test_sample_size(0.3, 0.3, 0.6, 0.4, alpha=v),
    ),
    "threshold_study(counts)": ("counts", lambda v: stats.threshold_study(v, rng=1)),
    "threshold_study(clusters)": (
        "clusters",
        lambda v: stats.threshold_study([0, 1, 2, 0], v, n_resamples=50, rng=1),
    ),
    "threshold_study(ceiling)": (
        "ceiling",
        lambda v: stats.threshold_study([0, 1, 2, 0], ceiling=v, n_resamples=50, rng=1),
    ),
    "plot_threshold_study": ("study", lambda v: stats.plot_threshold_study(v)),
    "corrected_prevalence(target_labels)": (
        "target_labels",
        lambda v: stats.corrected_prevalence(v, _GOLD_PAIR, n_resamples=100, rng=1),
    ),
    "corrected_prevalence(calibration)": (
        "calibration",
        lambda v: stats.corrected_prevalence(["pass", "fail"], v, n_resamples=100, rng=1),
    ),
    "ppi_prevalence(judge_all)": (
        "judge_all",
        lambda v: stats.ppi_prevalence(v, ["pass", "fail"], ["pass", "pass"]),
    ),
    "ppi_prevalence(human_labelled)": (
        "human_labelled",
        lambda v: stats.ppi_prevalence(["pass", "fail", "fail"], ["pass", "fail"], v),
    ),
    "judge_panel(labels)": ("labels", lambda v: stats.judge_panel(v, n_resamples=100, rng=1)),
    "judge_panel(gold)": (
        "gold",
        lambda v: stats.judge_panel(_PANEL, v, n_resamples=100, rng=1),
    ),
    "dawid_skene": ("labels", lambda v: stats.dawid_skene(v)),
    "plan_prevalence(prevalence)": (
        "prevalence",
        lambda v: stats.plan_prevalence(v, [[0.9, 0.1], [0.2, 0.8]], 0.05, n_target=1000),
    ),
    "confidence_sequence(outcomes)": ("outcomes", lambda v: stats.confidence_sequence(v)),
    "confidence_sequence(alpha)": (
        "alpha",
        lambda v: stats.confidence_sequence([True, False], alpha=v),
    ),
    "wilson_interval(k)": ("k", lambda v: stats.wilson_interval(v, 10)),
    "wilson_interval(n)": ("n", lambda v: stats.wilson_interval(1, v)),
    "plan_prevalence(half_width)": (
        "half_width",
        lambda v: stats.plan_prevalence(_PREV, [[0.9, 0.1], [0.2, 0.8]], v, n_target=1000),
    ),
}


def test_every_public_function_is_swept() -> None:
    functions = {
        name
        for name in stats.__all__
        if callable(getattr(stats, name)) and not isinstance(getattr(stats, name), type)
    }
    swept = {key.split("(")[0] for key in CALLS}
    assert functions == swept


@pytest.mark.parametrize("bad", list(BAD_VALUES))
@pytest.mark.parametrize("call", list(CALLS))
def test_bad_input_raises_evalkit_error_naming_the_argument(call: str, bad: str) -> None:
    argname, fn = CALLS[call]
    value = BAD_VALUES[bad]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(value)
        except EvalkitError as exc:
            assert argname in str(exc), f"{call} with {bad}: {exc}"
            return
    # accepted: only as a documented degenerate result that says so
    assert any(issubclass(w.category, DegenerateDataWarning) for w in caught) or _is_valid(
        call, bad, result
    ), f"{call} accepted {bad}={value!r} silently: {result!r}"


def _is_valid(call: str, bad: str, result: Any) -> bool:
    """Inputs that are legitimately fine for that argument (e.g. a 1-D list of counts)."""
    del result
    labels_may_be_strings = {
        "cohen_kappa(ratings)",
        "fleiss_kappa(ratings)",
        "conger_kappa",
        "light_kappa",
        "krippendorff_alpha(ratings)",
        "gwet_ac1(ratings)",
        "brennan_prediger",
        "pabak(ratings)",
        "specific_agreement",
        "kappa_max",
        "judge_panel(labels)",  # items x judges rows of labels
        "dawid_skene",
    }
    legitimate = {
        ("resample_weights(n_items)", "scalar"),  # 3 items
        ("resample_weights(n_resamples)", "scalar"),
        ("resample_weights(clusters)", "none"),  # no clusters
        ("resample_weights(clusters)", "one_d"),  # one cluster label per item
        ("bootstrap_sums(suff)", "one_d"),  # one statistic per item
        ("kappa_ci_sample_size(half_width)", "scalar"),  # a (wide) half-width of 3
        ("threshold_study(counts)", "one_d"),  # one count per item
        ("threshold_study(clusters)", "none"),  # no clusters
        ("cohen_kappa(weights)", "none"),  # unweighted
        ("judge_panel(gold)", "none"),  # no gold: agreement and Dawid-Skene only
        ("wilson_interval(k)", "scalar"),  # 3 of 10
        ("wilson_interval(n)", "scalar"),  # 1 of 3
        ("confidence_sequence(outcomes)", "empty"),  # no outcome yet: an empty band
    } | {(c, "string_cells") for c in labels_may_be_strings}
    return (call, bad) in legitimate


def test_threshold_study_none_names_counts() -> None:
    # QA report: a raw TypeError ('NoneType' object is not iterable)
    with pytest.raises(EvalkitError, match="counts must be a 1-D sequence"):
        stats.threshold_study(None)  # type: ignore[arg-type]


def test_empty_counts_is_a_documented_degenerate_study() -> None:
    with pytest.warns(DegenerateDataWarning, match="no known count"):
        study = stats.threshold_study([], rng=1)
    assert study.n_items == 0


def test_bools_are_not_numbers() -> None:
    with pytest.raises(EvalkitError, match="n_items"):
        stats.resample_weights(True, 10, 1)
    with pytest.raises(EvalkitError, match="kappa_true"):
        stats.kappa_test_sample_size(0.3, 0.3, True, 0.4)
    with pytest.raises(EvalkitError, match="ceiling"):
        stats.threshold_study([0, 1], ceiling=True, rng=1)
    assert np.isfinite(stats.kappa_ci_sample_size(0.6, 0.3, 0.1))
