"""Judge-error-corrected prevalence (issue 12, item 1): published values, Rogan-Gladen on random
inputs, a second multiclass ML implementation, and the documented undefined results."""

from __future__ import annotations

import json
import types
import warnings
from typing import Any

import numpy as np
import pytest
from scipy.optimize import minimize

from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.record.dimension import Status
from evalkit.stats import CorrectedPrevalence, corrected_prevalence
from evalkit.stats.planning import corrected_variance


def labels(counts: dict[str, int]) -> list[str]:
    """A label list with the given counts (order does not matter to the estimator)."""
    return [lab for lab, k in counts.items() for _ in range(k)]


def gold_pair(table: dict[str, dict[str, int]]) -> tuple[list[str], list[str]]:
    """(judge labels on gold, gold labels) from gold class -> judge label -> count."""
    judge: list[str] = []
    gold: list[str] = []
    for g, row in table.items():
        for j, k in row.items():
            judge += [j] * k
            gold += [g] * k
    return judge, gold


def se_sp_gold(se: float, sp: float, n: int = 1000) -> tuple[list[str], list[str]]:
    """Gold set whose judge has exactly sensitivity ``se`` for fail and specificity ``sp``."""
    tp, tn = round(se * n), round(sp * n)
    return gold_pair({"fail": {"fail": tp, "pass": n - tp}, "pass": {"pass": tn, "fail": n - tn}})


def rogan_gladen(q: float, se: float, sp: float) -> float:
    """Rogan & Gladen (1978): (q + Sp - 1) / (Se + Sp - 1), clipped to [0, 1]."""
    return min(max((q + sp - 1) / (se + sp - 1), 0.0), 1.0)


# --------------------------------------------------------------------------- published values

# epiR (Stevenson et al.), documentation of epi.prev, "Examples" (CRAN package epiR, all
# versions since 0.9-x): Rogan-Gladen true prevalence, cases per 100. The judge's sensitivity
# and specificity are given exactly by a gold set of 1000 items per class.
EPIR_EXAMPLES = [
    # 150 cows, 23 test-positive, Se 0.96, Sp 0.89: "5.1 cases per 100 cows"
    (23, 150, 0.96, 0.89, 5.1),
    # Moujaber et al. (2008) H. pylori, 1-4 year olds: 6 of 151, Se 0.964, Sp 0.927: "0 cases"
    (6, 151, 0.964, 0.927, 0.0),
    # three herds tested for tuberculosis: "0.00", "2.25", "6.73" cases per 100 cows
    (8, 210, 0.60, 0.90, 0.00),
    (12, 189, 0.65, 0.95, 2.25),
    (7, 124, 0.70, 0.99, 6.73),
]


@pytest.mark.parametrize(("pos", "tested", "se", "sp", "per_100"), EPIR_EXAMPLES)
def test_epir_worked_examples(pos: int, tested: int, se: float, sp: float, per_100: float) -> None:
    target = labels({"fail": pos, "pass": tested - pos})
    res = corrected_prevalence(target, se_sp_gold(se, sp), n_resamples=200, rng=1)
    assert res.statistic is not None
    share = res.statistic["fail"]
    decimals = len(str(per_100).split(".")[1])
    assert round(100 * share, decimals) == pytest.approx(per_100, abs=1e-12)
    assert share == pytest.approx(rogan_gladen(pos / tested, se, sp), abs=1e-12)
    assert res.statistic["pass"] == pytest.approx(1 - share, abs=1e-12)
    assert res.naive is not None and res.naive["fail"] == pytest.approx(pos / tested)
    assert res.n == tested and res.n_gold == 2000


# --------------------------------------------------------------------------- Rogan-Gladen


@pytest.mark.slow
def test_two_classes_equal_rogan_gladen_on_many_random_inputs() -> None:
    rng = np.random.default_rng(20240512)
    defined = 0
    for _ in range(300):
        n1, n0 = (int(x) for x in rng.integers(5, 300, size=2))
        se, sp = rng.uniform(0.2, 1.0, size=2)
        tp, tn = int(rng.binomial(n1, se)), int(rng.binomial(n0, sp))
        big_n = int(rng.integers(1, 3000))
        pos = int(rng.binomial(big_n, rng.uniform(0, 1)))
        cal = gold_pair(
            {"fail": {"fail": tp, "pass": n1 - tp}, "pass": {"pass": tn, "fail": n0 - tn}}
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            res = corrected_prevalence(
                labels({"fail": pos, "pass": big_n - pos}), cal, n_resamples=100, rng=1
            )
        se_hat, sp_hat = tp / n1, tn / n0
        m = np.array([[1 - sp_hat, sp_hat], [se_hat, 1 - se_hat]])  # any row/column order
        sigma = float(np.linalg.svd(m, compute_uv=False).min())
        if res.statistic is None:
            # undefined only for the documented reasons
            assert se_hat + sp_hat - 1 <= 0 or sigma < 0.05 or "never gave" in str(res.reason)
            continue
        defined += 1
        assert sigma >= 0.05 and se_hat + sp_hat - 1 > 0
        assert res.statistic["fail"] == pytest.approx(
            rogan_gladen(pos / big_n, se_hat, sp_hat), abs=1e-9
        )
    assert defined >= 200  # the equality was checked on most inputs, not skipped


# --------------------------------------------------------------------------- multiclass ML


def _ml_by_slsqp(conf: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """A second implementation: minimize -sum n_l log (M^T pi)_l on the simplex (SLSQP)."""
    k = conf.shape[0]

    def nll(pi: np.ndarray) -> float:
        return -float(counts @ np.log(np.maximum(pi @ conf, 1e-300)))

    best = None
    for start in [np.full(k, 1 / k), *np.eye(k) * 0.9 + 0.1 / k]:
        res = minimize(
            nll,
            start,
            method="SLSQP",
            bounds=[(0, 1)] * k,
            constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1}],
            options={"ftol": 1e-15, "maxiter": 1000},
        )
        if best is None or res.fun < best.fun:
            best = res
    assert best is not None
    x = np.clip(best.x, 0, None)  # SLSQP may step a hair outside its bounds
    return _polish_on_simplex(x / x.sum(), conf, counts)


def _polish_on_simplex(x: np.ndarray, conf: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Active-set Newton from SLSQP's answer to the exact optimum (KKT to rounding).

    SLSQP stops up to ~3e-5 short of the optimum here (its ``ftol`` bounds the step in the
    objective, not in ``pi``). The log-likelihood is concave, so the optimum is the unique
    point where, on the support, the gradient is constant (the multiplier ``nu``), and off the
    support no class would gain mass (``g_j + nu >= 0``); Newton on the face converges to it
    quadratically, and a class that should be on the support is added and the face solved
    again.
    """
    k = conf.shape[0]
    support = x > 1e-6
    for _ in range(k + 1):
        for _ in range(100):
            q = x @ conf
            g = -(conf * (counts / q)).sum(axis=1)
            s = np.flatnonzero(support)
            h = (conf[s] * (counts / q**2)) @ conf[s].T
            kkt = np.block([[h, np.ones((s.size, 1))], [np.ones((1, s.size)), np.zeros((1, 1))]])
            step = np.linalg.solve(kkt, np.concatenate([-g[s], [0.0]]))[:-1]
            t = 1.0
            while np.any(x[s] + t * step < 0):  # stay on the simplex (a share reaches 0)
                t /= 2
            x_new = np.zeros(k)
            x_new[s] = x[s] + t * step
            x_new[s] = np.clip(x_new[s], 0, None)
            x_new /= x_new.sum()
            done = np.max(np.abs(x_new - x)) < 1e-15
            x = x_new
            if done:
                break
        q = x @ conf
        g = -(conf * (counts / q)).sum(axis=1)
        nu = -float(np.mean(g[support]))
        gain = ~support & (g + nu < -1e-9)  # moving mass into j would lower the nll
        if not gain.any():
            return x
        support |= gain
    return x


def _nll(pi: np.ndarray, conf: np.ndarray, counts: np.ndarray) -> float:
    return -float(counts @ np.log(np.maximum(pi @ conf, 1e-300)))


@pytest.mark.slow
def test_three_classes_match_a_second_ml_implementation() -> None:
    rng = np.random.default_rng(7)
    cls = ("pass", "fail", "cannot-determine")
    checked = boundary = 0
    for _ in range(40):
        table = {c: {} for c in cls}
        conf = np.zeros((3, 3))
        for i, c in enumerate(cls):
            row = rng.dirichlet(np.ones(3) + 6 * np.eye(3)[i])
            counts = rng.multinomial(int(rng.integers(30, 200)), row)
            table[c] = {lab: int(k) for lab, k in zip(cls, counts, strict=True)}
            conf[i] = counts / counts.sum()
        target = rng.multinomial(int(rng.integers(50, 2000)), rng.dirichlet(np.ones(3)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            res = corrected_prevalence(
                labels(dict(zip(cls, target.tolist(), strict=True))),
                gold_pair(table),
                n_resamples=100,
                rng=1,
            )
        if res.statistic is None:
            continue
        expected = _ml_by_slsqp(conf, target.astype(float))
        got = np.array([res.statistic[c] for c in cls])
        # compare likelihoods too: ours must be at least as good as SLSQP's optimum
        assert _nll(got, conf, target) <= _nll(expected, conf, target) + 1e-7
        assert got == pytest.approx(expected, abs=1e-9)  # both exact optima: ~3e-16 apart
        assert got.sum() == pytest.approx(1.0, abs=1e-12) and np.all(got >= 0)
        checked += 1
        boundary += int(np.any(got < 1e-9))
    assert checked >= 30 and boundary >= 3  # interior and boundary solutions both exercised


# --------------------------------------------------------------------------- interval


def _three_class_data(seed: int) -> tuple[list[str], tuple[list[str], list[str]]]:
    rng = np.random.default_rng(seed)
    cls = np.array(["pass", "fail", "cannot-determine"])
    m = np.array([[0.85, 0.1, 0.05], [0.15, 0.8, 0.05], [0.1, 0.2, 0.7]])
    pi = np.array([0.6, 0.3, 0.1])

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        t = rng.choice(3, size=n, p=pi)
        j = (rng.random(n)[:, None] > np.cumsum(m[t], axis=1)).sum(axis=1)
        return t, j

    g, jg = draw(400)
    _, jt = draw(3000)
    return list(cls[jt]), (list(cls[jg]), list(cls[g]))


def test_bootstrap_standard_error_matches_the_delta_method() -> None:
    target, cal = _three_class_data(11)
    res = corrected_prevalence(target, cal, n_resamples=4000, rng=3)
    assert res.statistic is not None and res.standard_error is not None and res.confusion
    cls = res.classes
    conf = np.array([[res.confusion[c][lab] for lab in cls] for c in cls])
    pi = np.array([res.statistic[c] for c in cls])
    n_c = np.array([res.gold_counts[c] for c in cls], dtype=float)
    delta = np.sqrt(corrected_variance(pi, conf, n_c, res.n))
    boot = np.array([res.standard_error[c] for c in cls])
    assert boot == pytest.approx(delta, rel=0.12)


def test_intervals_nest_reproduce_and_contain_the_estimate() -> None:
    target, cal = _three_class_data(5)
    a = corrected_prevalence(target, cal, rng=9)
    b = corrected_prevalence(target, cal, rng=9)
    assert a.confidence_interval() == b.confidence_interval()
    wide, narrow = a.confidence_interval(), a.confidence_interval(0.8)
    assert a.statistic is not None
    for c in a.classes:
        assert wide[c].low <= narrow[c].low <= a.statistic[c] <= narrow[c].high <= wide[c].high
        assert wide[c].low >= 0 and wide[c].high <= 1
    assert a.n_resamples == 2000 and a.bootstrap_distribution.shape == (2000, 3)
    json.dumps(a.to_dict(), allow_nan=False)
    assert "gold set hold on the target" in a.assumption or "hold on the target" in a.assumption


# --------------------------------------------------------------------------- calibration input


def test_calibration_result_protocol_and_status_members() -> None:
    judge, gold = se_sp_gold(0.9, 0.8, n=100)
    target = labels({"fail": 30, "pass": 70})
    ref = corrected_prevalence(target, (judge, gold), n_resamples=100, rng=2)

    class WithMethod:
        def paired_labels(self) -> tuple[list[str], list[str]]:
            return judge, gold

    with_attrs = types.SimpleNamespace(judge_labels=judge, gold_labels=gold)
    as_status = [Status(x) for x in target]
    for cal, tgt in ((WithMethod(), target), (with_attrs, target), ((judge, gold), as_status)):
        res = corrected_prevalence(tgt, cal, n_resamples=100, rng=2)
        assert res.statistic == ref.statistic
        assert res.confidence_interval() == ref.confidence_interval()
        assert all(type(c) is str for c in res.classes)


def test_missing_labels_are_counted_never_guessed() -> None:
    judge, gold = se_sp_gold(0.9, 0.8, n=100)
    target = labels({"fail": 30, "pass": 70})
    ref = corrected_prevalence(target, (judge, gold), n_resamples=100, rng=2)
    res = corrected_prevalence(
        [*target, None, float("nan")],
        ([*judge, None, "pass"], [*gold, "fail", None]),
        n_resamples=100,
        rng=2,
    )
    assert res.statistic == ref.statistic
    assert (res.n, res.n_missing, res.n_gold, res.n_gold_missing) == (100, 2, 200, 2)


# --------------------------------------------------------------------------- undefined results


def _undefined(target: Any, cal: Any, match: str, **kw: Any) -> CorrectedPrevalence:
    with pytest.warns(DegenerateDataWarning, match=match):
        res = corrected_prevalence(target, cal, n_resamples=100, rng=1, **kw)
    assert res.statistic is None and not res.defined
    assert res.reason is not None and match.split(".")[0] in res.reason
    with pytest.warns(DegenerateDataWarning):
        ci = res.confidence_interval()
    assert all(v == (None, None) for v in ci.values())
    json.dumps(res.to_dict(), allow_nan=False)  # never NaN anywhere
    return res


def test_uninformative_judge_is_undefined() -> None:
    # the judge says pass for everything: Se(fail) = 0, Sp(fail) = 1, J = 0
    cal = gold_pair({"fail": {"pass": 50}, "pass": {"pass": 50}})
    res = _undefined(labels({"pass": 100}), cal, "uninformative")
    assert res.youden["fail"] == 0.0
    # an inverted judge: J < 0
    cal = gold_pair({"fail": {"pass": 40, "fail": 10}, "pass": {"fail": 40, "pass": 10}})
    res = _undefined(labels({"pass": 60, "fail": 40}), cal, "uninformative")
    assert res.youden["fail"] == pytest.approx(-0.6)


def test_near_singular_bound_both_sides() -> None:
    # symmetric binary judge: M = [[a, 1-a], [1-a, a]], singular values 1 and 2a - 1
    def cal(a: float) -> tuple[list[str], list[str]]:
        k = round(1000 * a)
        return gold_pair(
            {"fail": {"fail": k, "pass": 1000 - k}, "pass": {"pass": k, "fail": 1000 - k}}
        )

    target = labels({"fail": 520, "pass": 480})
    below = _undefined(target, cal(0.52), "near-singular")
    assert below.smallest_singular_value == pytest.approx(0.04)
    above = corrected_prevalence(target, cal(0.53), n_resamples=100, rng=1)
    assert above.smallest_singular_value == pytest.approx(0.06)
    assert above.statistic is not None
    assert above.statistic["fail"] == pytest.approx(rogan_gladen(0.52, 0.53, 0.53))
    _undefined(target, cal(0.53), "near-singular", min_singular_value=0.07)


def test_one_gold_class_empty_target_and_unknown_label_are_undefined() -> None:
    _undefined(labels({"pass": 5}), gold_pair({"pass": {"pass": 9, "fail": 1}}), "the gold set")
    cal = se_sp_gold(0.9, 0.9, n=50)
    res = _undefined([], cal, "no target labels")
    assert res.n == 0 and res.naive is None
    res = _undefined([None, None], cal, "no target labels")
    assert res.n_missing == 2
    res = _undefined(labels({"pass": 5, "maybe": 1}), cal, "the judge gave the target label")
    assert "'maybe'" in str(res.reason)
    _undefined(labels({"pass": 5}), cal, "class 'cannot-determine' has no gold item",
               classes=["pass", "fail", "cannot-determine"])  # fmt: skip
    _undefined(labels({"pass": 5}), ([None], ["pass"]), "no gold item")


def test_one_target_item_keeps_the_estimate_without_an_interval() -> None:
    with pytest.warns(DegenerateDataWarning, match="fewer than two"):
        res = corrected_prevalence(["fail"], se_sp_gold(0.9, 0.8, 100), n_resamples=100, rng=1)
    assert res.statistic is not None and res.statistic["fail"] == pytest.approx(1.0)
    with pytest.warns(DegenerateDataWarning):
        assert all(v == (None, None) for v in res.confidence_interval().values())


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: corrected_prevalence(["pass"], (["pass", "fail"], ["pass"])), "calibration"),
        (lambda: corrected_prevalence(["pass"], "pass,fail"), "calibration"),
        (lambda: corrected_prevalence(["pass"], None), "calibration"),
        (lambda: corrected_prevalence("pass", se_sp_gold(0.9, 0.9, 10)), "target_labels"),
        (lambda: corrected_prevalence([["pass"]], se_sp_gold(0.9, 0.9, 10)), "target_labels"),
        (lambda: corrected_prevalence(["pass"], se_sp_gold(0.9, 0.9, 10), level=1.5), "level"),
        (
            lambda: corrected_prevalence(["pass"], se_sp_gold(0.9, 0.9, 10), n_resamples=5),
            "n_resamples",
        ),
        (
            lambda: corrected_prevalence(["pass"], se_sp_gold(0.9, 0.9, 10), min_singular_value=-1),
            "min_singular_value",
        ),
        (
            lambda: corrected_prevalence(["pass"], se_sp_gold(0.9, 0.9, 10), classes=["pass"]),
            "calibration",
        ),
        (
            lambda: corrected_prevalence(
                ["pass"], types.SimpleNamespace(paired_labels=lambda: ["x"])
            ),
            "paired_labels",
        ),
    ],
)
def test_invalid_input_is_an_error_naming_the_argument(call: Any, match: str) -> None:
    with pytest.raises(EvalkitError, match=match):
        call()
