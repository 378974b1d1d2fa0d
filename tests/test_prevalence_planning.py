"""Planning a prevalence study (issue 12, item 4): the delta-method and PPI variance formulas
against their closed forms and against simulation, and the planned sizes against the
intervals the estimators then give."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from evalkit.errors import EvalkitError
from evalkit.stats import corrected_prevalence, plan_prevalence
from evalkit.stats.planning import (
    _simulated_corrected_sd,
    _simulated_ppi_sd,
    corrected_variance,
    ppi_variance,
)

BINARY = {"pass": 0.7, "fail": 0.3}
# true class -> judge label -> probability: Sp (pass kept) 0.9, Se (fail caught) 0.85
BINARY_CONF = {"pass": {"pass": 0.9, "fail": 0.1}, "fail": {"pass": 0.15, "fail": 0.85}}
THREE = {"pass": 0.6, "fail": 0.3, "cannot-determine": 0.1}
THREE_CONF = {
    "pass": {"pass": 0.85, "fail": 0.1, "cannot-determine": 0.05},
    "fail": {"pass": 0.15, "fail": 0.8, "cannot-determine": 0.05},
    "cannot-determine": {"pass": 0.1, "fail": 0.2, "cannot-determine": 0.7},
}


def test_binary_delta_method_is_rogan_gladen_variance() -> None:
    # Rogan & Gladen (1978); e.g. Reiczigel, Foldi & Ozsvari (2010), Epidemiol. Infect. 138:
    # Var = [q(1-q)/N + pi^2 Se(1-Se)/n1 + (1-pi)^2 Sp(1-Sp)/n0] / J^2
    se, sp, pi, big_n, n1, n0 = 0.85, 0.9, 0.3, 2000, 120, 250
    q = pi * se + (1 - pi) * (1 - sp)
    j = se + sp - 1
    expected = (q * (1 - q) / big_n + pi**2 * se * (1 - se) / n1
                + (1 - pi) ** 2 * sp * (1 - sp) / n0) / j**2  # fmt: skip
    m = np.array([[sp, 1 - sp], [1 - se, se]])  # rows pass, fail
    var = corrected_variance(np.array([1 - pi, pi]), m, np.array([n0, n1], float), big_n)
    assert var == pytest.approx([expected, expected], rel=1e-12)
    # known error rates (infinite gold): q(1-q) / (N J^2), the textbook form
    var = corrected_variance(np.array([1 - pi, pi]), m, np.array([np.inf, np.inf]), big_n)
    assert var[1] == pytest.approx(q * (1 - q) / (big_n * j**2), rel=1e-12)


def test_ppi_variance_closed_form() -> None:
    # Var* = (s_y / n) (1 - rho^2 / (1 + n / N)) at the optimal lambda when it is in [0, 1]
    pi = np.array([0.7, 0.3])
    m = np.array([[0.9, 0.1], [0.15, 0.85]])
    n, big_n = 200, 3000
    q = pi @ m
    c = pi * np.diag(m) - pi * q
    rho2 = c**2 / (pi * (1 - pi) * q * (1 - q))
    expected = pi * (1 - pi) / n * (1 - rho2 / (1 + n / big_n))
    assert ppi_variance(pi, m, n, big_n) == pytest.approx(expected, rel=1e-12)


def test_formula_plans_are_minimal() -> None:
    plan = plan_prevalence(THREE, THREE_CONF, 0.05, n_target=5000)
    assert plan.n_gold is not None and plan.n_human is not None
    assert plan.corrected_half_width is not None and plan.ppi_half_width is not None
    assert max(plan.corrected_half_width.values()) <= 0.05 + 1e-12
    assert max(plan.ppi_half_width.values()) <= 0.05 + 1e-12
    classes = list(THREE)
    pi = np.array(list(THREE.values()))
    m = np.array([[THREE_CONF[a][b] for b in classes] for a in classes])
    z = 1.959963984540054
    # one item fewer misses the target half-width
    fewer = z * np.sqrt(corrected_variance(pi, m, (plan.n_gold - 1) * pi, 5000))
    assert fewer.max() > 0.05
    assert (z * np.sqrt(ppi_variance(pi, m, plan.n_human - 1, 5001 - plan.n_human))).max() > 0.05
    assert plan.n_gold_per_class == {c: round(plan.n_gold * THREE[c]) for c in classes}
    json.dumps(plan.to_dict(), allow_nan=False)


@pytest.mark.parametrize(
    ("prev", "conf", "h", "n_target"),
    [(BINARY, BINARY_CONF, 0.05, 5000), (BINARY, BINARY_CONF, 0.04, 20000),
     (THREE, THREE_CONF, 0.05, 5000)],
)  # fmt: skip
def test_formula_and_simulation_plans_agree(prev: Any, conf: Any, h: float, n_target: int) -> None:
    f = plan_prevalence(prev, conf, h, n_target=n_target)
    s = plan_prevalence(prev, conf, h, n_target=n_target, method="simulation", rng=11)
    assert f.n_gold is not None and s.n_gold is not None
    assert f.n_human is not None and s.n_human is not None
    assert s.n_gold == pytest.approx(f.n_gold, rel=0.15)
    assert s.n_human == pytest.approx(f.n_human, rel=0.15)


@pytest.mark.parametrize(("prev", "conf"), [(BINARY, BINARY_CONF), (THREE, THREE_CONF)])
@pytest.mark.slow
def test_formula_half_widths_match_simulated_ones(prev: Any, conf: Any) -> None:
    # the quantity the formulas predict: z * SD of the estimator, here at fixed sizes with
    # 4000 simulated studies each (SD known to about 1%). Near a size where the target's own
    # error dominates, n is very sensitive to the SD (h = 0.03 with 3000 target items: a 3%
    # error in the SD moves n by a quarter), so the sizes are compared above only where the
    # plan is well conditioned, and the SDs here.
    classes = list(prev)
    pi = np.array(list(prev.values()))
    m = np.array([[conf[a][b] for b in classes] for a in classes])
    for n_gold, n_human, n_target in ((400, 100, 3000), (1500, 400, 3000), (800, 250, 20000)):
        n_c = np.maximum(1, np.round(n_gold * pi)).astype(np.int64)
        sim = _simulated_corrected_sd(pi, m, n_c, n_target, 4000, 5)
        formula = np.sqrt(corrected_variance(pi, m, n_c.astype(float), n_target))
        assert sim == pytest.approx(formula, rel=0.07)
        sim = _simulated_ppi_sd(pi, m, n_human, n_target, 4000, 6)
        formula = np.sqrt(ppi_variance(pi, m, n_human, n_target - n_human))
        assert sim == pytest.approx(formula, rel=0.07)


def test_delta_method_understates_with_few_gold_items_of_a_class() -> None:
    # why plan_prevalence offers simulation: with 20 gold items of the 10% class the ML's
    # nonlinearity makes its SD about 11% larger than the delta method says
    classes = list(THREE)
    pi = np.array(list(THREE.values()))
    m = np.array([[THREE_CONF[a][b] for b in classes] for a in classes])
    n_c = np.round(200 * pi).astype(np.int64)
    sim = _simulated_corrected_sd(pi, m, n_c, 20000, 4000, 5)
    formula = np.sqrt(corrected_variance(pi, m, n_c.astype(float), 20000))
    assert sim[2] > 1.05 * formula[2]


@pytest.mark.slow
def test_planned_gold_set_gives_the_planned_half_width() -> None:
    # run corrected_prevalence on 100 simulated studies of the planned size: the mean
    # half-width of its 95% interval for fail is the planned 0.05 (within 10%)
    plan = plan_prevalence(BINARY, BINARY_CONF, 0.05, n_target=4000)
    assert plan.n_gold_per_class is not None
    rng = np.random.default_rng(3)
    widths = []
    for _ in range(100):
        judge_gold, gold = [], []
        for c, n_c in plan.n_gold_per_class.items():
            said = rng.choice(
                ["pass", "fail"], size=n_c, p=[BINARY_CONF[c]["pass"], 1 - BINARY_CONF[c]["pass"]]
            )
            judge_gold += list(said)
            gold += [c] * n_c
        q_fail = 0.7 * 0.1 + 0.3 * 0.85
        target = rng.choice(["pass", "fail"], size=4000, p=[1 - q_fail, q_fail])
        res = corrected_prevalence(list(target), (judge_gold, gold), n_resamples=1000, rng=rng)
        ci = res.confidence_interval()["fail"]
        widths.append((ci.high - ci.low) / 2)
    assert float(np.mean(widths)) == pytest.approx(0.05, rel=0.1)


def test_unreachable_half_widths_say_why() -> None:
    plan = plan_prevalence(BINARY, BINARY_CONF, 0.01, n_target=500)
    assert plan.n_gold is None and plan.gold_reason is not None
    assert "target's own sampling error" in plan.gold_reason
    # PPI: even labelling all 500 by hand gives +-0.04 (z sqrt(.21 / 500))
    assert plan.n_human is None and plan.human_reason is not None
    assert "all 500 target items" in plan.human_reason
    needed = math.ceil(1.959963984540054**2 * 0.21 / 0.04**2)
    plan = plan_prevalence(BINARY, BINARY_CONF, 0.04, n_target=needed + 50)
    assert plan.n_human is not None and plan.n_human <= needed + 50


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: plan_prevalence({"pass": 1.0}, BINARY_CONF, 0.05, n_target=100), "prevalence"),
        (lambda: plan_prevalence({"pass": 0.5, "fail": 0.6}, BINARY_CONF, 0.05, n_target=100),
         "prevalence"),
        (lambda: plan_prevalence(BINARY, {"pass": {"pass": 1.0}}, 0.05, n_target=100), "confusion"),
        (lambda: plan_prevalence(BINARY, [[0.5, 0.5], [0.5, 0.5]], 0.05, n_target=100), "singular"),
        (lambda: plan_prevalence(BINARY, BINARY_CONF, 0, n_target=100), "half_width"),
        (lambda: plan_prevalence(BINARY, BINARY_CONF, 0.05, n_target=0), "n_target"),
        (lambda: plan_prevalence(BINARY, BINARY_CONF, 0.05, n_target=100, method="x"), "method"),
        (lambda: plan_prevalence(BINARY, BINARY_CONF, 0.05, n_target=100, level=2), "level"),
        (lambda: plan_prevalence(BINARY, BINARY_CONF, 0.05, n_target=100,
                                 gold_shares={"pass": 1.0, "fail": 0.0}), "gold_shares"),
        (lambda: plan_prevalence(BINARY, BINARY_CONF, 0.05, n_target=100, method="simulation",
                                 n_simulations=5), "n_simulations"),
    ],
)  # fmt: skip
def test_invalid_input_is_an_error_naming_the_argument(call: Any, match: str) -> None:
    with pytest.raises(EvalkitError, match=match):
        call()
