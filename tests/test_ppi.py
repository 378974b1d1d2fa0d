"""PPI++ class shares (issue 12, item 2) against the ppi-python package (``ppi_py``), on
simulated data and on ppi_py's own example data, plus the documented undefined results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.stats import ppi_prevalence

DATA = Path(__file__).parent / "data"
CLS = np.array(["pass", "fail", "cannot-determine"])
M = np.array([[0.85, 0.1, 0.05], [0.15, 0.8, 0.05], [0.1, 0.2, 0.7]])


def simulate(seed: int, n: int, big_n: int, pi: Any = (0.6, 0.3, 0.1)) -> tuple[Any, Any, Any]:
    """(human labels, judge labels) of n labelled items and judge labels of big_n others."""
    rng = np.random.default_rng(seed)
    t = rng.choice(3, size=n + big_n, p=pi)
    j = (rng.random(n + big_n)[:, None] > np.cumsum(M[t], axis=1)).sum(axis=1)
    return CLS[t[:n]], CLS[j[:n]], CLS[j[n:]]


def ppi_py() -> Any:
    """The ppi_py package, imported where a test calls it: 0.3 s, and every pytest-xdist worker
    collects this module."""
    import ppi_py

    return ppi_py


def one_hot(labels: Any) -> np.ndarray:
    return (np.asarray(labels)[:, None] == CLS).astype(float)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_per_class_tuning_equals_ppi_py_per_class(seed: int) -> None:
    human, judge_l, judge_u = simulate(seed, 200, 3000)
    res = ppi_prevalence(list(judge_u), list(judge_l), list(human), overlap="disjoint")
    ci, classical = res.unclipped_interval(), res.classical_interval()
    assert res.unclipped_statistic is not None and res.lam is not None
    for k, c in enumerate(CLS):
        y, yh, yu = one_hot(human)[:, k], one_hot(judge_l)[:, k], one_hot(judge_u)[:, k]
        lo, hi = ppi_py().ppi_mean_ci(y, yh, yu, alpha=0.05)
        assert res.unclipped_statistic[c] == pytest.approx(
            float(ppi_py().ppi_mean_pointestimate(y, yh, yu)[0]), abs=1e-6
        )
        assert (ci[c].low, ci[c].high) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-6)
        clo, chi = ppi_py().classical_mean_ci(y, alpha=0.05)
        assert (classical[c].low, classical[c].high) == pytest.approx(
            (max(float(clo), 0.0), min(float(chi), 1.0)), abs=1e-6
        )
        assert 0 < res.lam[c] < 1  # power tuning did something on these data


def test_shared_and_untuned_equal_ppi_py() -> None:
    human, judge_l, judge_u = simulate(8, 150, 2000)
    y, yh, yu = one_hot(human), one_hot(judge_l), one_hot(judge_u)
    cases = {"shared": {"lam_optim_mode": "overall"}, "none": {"lam": 1.0}}
    for tuning, kw in cases.items():
        res = ppi_prevalence(list(judge_u), list(judge_l), list(human), tuning=tuning,  # type: ignore[arg-type]
                             overlap="disjoint")  # fmt: skip
        lo, hi = ppi_py().ppi_mean_ci(y, yh, yu, alpha=0.05, **kw)
        est = ppi_py().ppi_mean_pointestimate(y, yh, yu, **kw)
        ci = res.unclipped_interval()
        assert res.unclipped_statistic is not None
        got = [res.unclipped_statistic[c] for c in CLS]
        assert got == pytest.approx(list(est), abs=1e-6)
        assert [ci[c].low for c in CLS] == pytest.approx(list(lo), abs=1e-6)
        assert [ci[c].high for c in CLS] == pytest.approx(list(hi), abs=1e-6)
        assert sum(got) == pytest.approx(1.0, abs=1e-12)  # one lambda: the shares sum to 1


def test_included_overlap_equals_disjoint() -> None:
    human, judge_l, judge_u = simulate(4, 120, 1500)
    every = [*judge_l, *judge_u]  # the labelled items are part of the whole target
    a = ppi_prevalence(every, list(judge_l), list(human))
    b = ppi_prevalence(list(judge_u), list(judge_l), list(human), overlap="disjoint")
    assert a.statistic == b.statistic and a.confidence_interval() == b.confidence_interval()
    assert (a.n, a.n_unlabelled) == (120, 1500)
    assert a.naive is not None
    assert a.naive["fail"] == pytest.approx(float(np.mean(np.asarray(every) == "fail")))


def test_ppi_py_forest_example_data() -> None:
    """ppi_py's own example (examples/baselines/forest_badmodel.ipynb, its data file copied to
    tests/data with provenance and licence): labelled subsamples of the 1596 parcels at the
    notebook's sizes ns = 50, 100, ..., 500, alpha = 0.05, the rest unlabelled."""
    data = np.load(DATA / "ppi_py_forest_badmodel.npz")
    y_total, yhat_total = data["Y"], data["Yhat"].astype(float)
    assert y_total.shape == yhat_total.shape == (1596,)
    names = np.array(["intact", "deforested"])
    order = np.random.default_rng(0).permutation(y_total.size)
    for n in np.linspace(50, 500, 10).astype(int):
        lab, unl = order[:n], order[n:]
        y, yh, yu = y_total[lab], yhat_total[lab], yhat_total[unl]
        res = ppi_prevalence(
            list(names[yhat_total[unl].astype(int)]),
            list(names[yh.astype(int)]),
            list(names[y.astype(int)]),
            overlap="disjoint",
        )
        assert res.unclipped_statistic is not None
        lo, hi = ppi_py().ppi_mean_ci(y, yh, yu, alpha=0.05)
        ci = res.unclipped_interval()["deforested"]
        assert res.unclipped_statistic["deforested"] == pytest.approx(
            float(ppi_py().ppi_mean_pointestimate(y, yh, yu)[0]), abs=1e-6
        )
        assert (ci.low, ci.high) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-6)
        clo, chi = ppi_py().classical_mean_ci(y, alpha=0.05)
        cl = res.classical_interval()["deforested"]
        assert (cl.low, cl.high) == pytest.approx((max(float(clo), 0), float(chi)), abs=1e-6)


def test_effective_sample_size() -> None:
    human, judge_l, judge_u = simulate(5, 200, 5000)
    res = ppi_prevalence(list(judge_u), list(judge_l), list(human), overlap="disjoint")
    assert res.effective_n is not None and res.standard_error is not None
    assert res.classical_standard_error is not None and res.n_gained is not None
    for c in CLS:
        expected = 200 * res.classical_standard_error[c] ** 2 / res.standard_error[c] ** 2
        assert res.effective_n[c] == pytest.approx(expected)
        assert res.n_gained[c] == pytest.approx(expected - 200)
        assert res.effective_n[c] > 200  # a useful judge and 25x more judge labels: a gain
    summary = res.to_dict()
    json.dumps(summary, allow_nan=False)
    assert "random sample of the target" in summary["assumption"]


def test_perfect_judge_by_hand() -> None:
    # judge == human on 4 labelled items (2 fail); unlabelled: 4 items, 2 fail.
    # per class: cov = 1/4 (divisor n), var over all 8 = (1/4) * 8/7 = 2/7,
    # lambda = (1/4) / ((1 + 4/4) * 2/7) = 7/16; theta = 1/2;
    # se^2 = lambda^2 (1/4) / 4 + (1 - lambda)^2 (1/4) / 4 = (49 + 81) / 4096
    res = ppi_prevalence(["pass", "fail"] * 2, ["pass", "fail"] * 2, ["pass", "fail"] * 2,
                         overlap="disjoint")  # fmt: skip
    assert res.lam == {"pass": pytest.approx(7 / 16), "fail": pytest.approx(7 / 16)}
    assert res.statistic == {"pass": pytest.approx(0.5), "fail": pytest.approx(0.5)}
    assert res.standard_error is not None
    assert res.standard_error["fail"] == pytest.approx(np.sqrt(130 / 4096))


def test_class_the_judge_never_gives_falls_back_to_classical() -> None:
    # the judge's indicator has no variance: lambda is 0 and the share is the classical one
    human = ["cannot-determine", "pass", "fail", "pass", "cannot-determine", "fail"]
    judge = ["pass", "pass", "fail", "pass", "fail", "fail"]
    res = ppi_prevalence(["pass", "fail"] * 50, judge, human, overlap="disjoint")
    assert res.lam is not None and res.lam["cannot-determine"] == 0.0
    assert res.statistic is not None and res.classical is not None
    assert res.statistic["cannot-determine"] == pytest.approx(2 / 6)
    y = (np.asarray(human) == "cannot-determine").astype(float)
    lo, hi = ppi_py().ppi_mean_ci(y, np.zeros(6), np.zeros(100), alpha=0.05)
    ci = res.unclipped_interval()["cannot-determine"]
    assert (ci.low, ci.high) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-9)


def test_clipping_keeps_the_unclipped_values() -> None:
    # a rare class: the PPI estimate goes below 0; the reported share is clipped to 0
    human = ["pass"] * 30
    judge = ["pass"] * 29 + ["fail"]
    res = ppi_prevalence(["pass"] * 50 + ["fail"] * 50, judge, human, overlap="disjoint",
                         tuning="none")  # fmt: skip
    assert res.unclipped_statistic is not None and res.statistic is not None
    assert res.unclipped_statistic["fail"] == pytest.approx(0.5 - 1 / 30)
    res = ppi_prevalence(["pass"] * 100, judge, human, overlap="disjoint", tuning="none")
    assert res.unclipped_statistic is not None and res.statistic is not None
    assert res.unclipped_statistic["fail"] == pytest.approx(-1 / 30)
    assert res.statistic["fail"] == 0.0
    assert res.confidence_interval()["fail"].low == 0.0
    assert res.unclipped_interval()["fail"].low < 0


def test_undefined_results() -> None:
    for args, match in (
        (([], [], []), "no target item"),
        ((["pass"] * 10, ["pass"], ["fail"]), "1 human-labelled"),
        ((["pass"] * 10, [None, "pass"], ["fail", None]), "0 human-labelled"),
    ):
        with pytest.warns(DegenerateDataWarning, match=match):
            res = ppi_prevalence(*args, overlap="disjoint")
        assert res.statistic is None and res.reason is not None and match in res.reason
        with pytest.warns(DegenerateDataWarning):
            assert all(v == (None, None) for v in res.confidence_interval().values())
        json.dumps(res.to_dict(), allow_nan=False)


def test_zero_standard_error_gives_no_interval() -> None:
    res = ppi_prevalence(["pass"] * 20, ["pass"] * 5, ["pass"] * 5)
    assert res.statistic == {"pass": 1.0}
    with pytest.warns(DegenerateDataWarning, match="standard error 0"):
        assert res.confidence_interval() == {"pass": (None, None)}


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ppi_prevalence(["pass"], ["pass", "fail"], ["pass"]), "human_labelled"),
        (lambda: ppi_prevalence(["pass"], ["pass", "fail"], ["pass", "fail"]), "judge_all"),
        (lambda: ppi_prevalence("pass", ["pass"], ["pass"]), "judge_all"),
        (lambda: ppi_prevalence(["pass"], ["pass"], ["pass"], tuning="x"), "tuning"),
        (lambda: ppi_prevalence(["pass"], ["pass"], ["pass"], overlap="x"), "overlap"),
        (lambda: ppi_prevalence(["pass"], ["pass"], ["pass"], level=0), "level"),
        (
            lambda: ppi_prevalence(["pass"], ["pass"], ["maybe"], classes=["pass", "fail"]),
            "human_labelled",
        ),
    ],
)
def test_invalid_input_is_an_error_naming_the_argument(call: Any, match: str) -> None:
    with pytest.raises(EvalkitError, match=match):
        call()
