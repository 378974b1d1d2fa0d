"""The simulated model judge: its labels follow the confusion it was given, repeats share an
item's difficulty, parse failures are outcomes (never labels), and seeds reproduce."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalkit.errors import EvalkitError
from evalkit.simulate import (
    DEFAULT_JUDGE_CONFUSION,
    SIMULATED_JUDGE_NAME,
    SimulatedModelJudge,
    simulate_target,
)
from evalkit.simulate.model_judge import STATUSES


def _within(observed: float, p: float, n: int, z: float = 4.5) -> bool:
    # a seeded draw: observed share within z binomial standard errors of its expectation
    return abs(observed - p) <= z * math.sqrt(p * (1 - p) / n) + 1e-12


def test_labels_follow_the_confusion_at_zero_difficulty() -> None:
    judge = SimulatedModelJudge(difficulty_sd=0.0, parse_failure_rate=0.0)
    n = 6000
    for truth in STATUSES:
        out = judge.label([truth] * n, repeats=1, rng=11)
        shares = out["label"].value_counts(normalize=True)
        for given in STATUSES:
            p = DEFAULT_JUDGE_CONFUSION[truth][given]
            assert _within(float(shares.get(given, 0.0)), p, n), (truth, given)


def test_repeats_of_one_item_share_its_difficulty() -> None:
    from evalkit.stats import fleiss_kappa

    def kappa_across_repeats(sd: float) -> tuple[float, tuple[float, float]]:
        # every item has the same true class, so without difficulty the repeats are
        # independent draws from one distribution: Fleiss' kappa across repeats ~ 0; a shared
        # per-item difficulty makes an item's repeats resemble each other: kappa > 0.
        out = SimulatedModelJudge(difficulty_sd=sd, parse_failure_rate=0.0).label(
            ["pass"] * 1500, repeats=5, rng=3
        )
        table = out.pivot(index="item_id", columns="repeat", values="label").to_numpy()
        res = fleiss_kappa(table)
        return float(res.statistic), res.confidence_interval(method="analytic")

    k0, (lo0, hi0) = kappa_across_repeats(0.0)
    k1, (lo1, _) = kappa_across_repeats(2.5)
    assert lo0 <= 0.0 <= hi0
    assert lo1 > 0.1 and k1 > k0


def test_parse_failures_are_outcomes_never_labels() -> None:
    out = SimulatedModelJudge(parse_failure_rate=0.2).label(["pass"] * 3000, repeats=2, rng=5)
    failed = out[out["outcome"] == "cannot-parse"]
    assert failed["label"].isna().all()
    assert set(out.loc[out["outcome"] == "ok", "label"]) <= set(STATUSES)
    assert _within(len(failed) / len(out), 0.2, len(out))


def test_same_seed_same_labels_and_long_format() -> None:
    judge = SimulatedModelJudge()
    a = judge.label(["pass", "fail", "cannot-determine"], ["a", "b", "c"], repeats=5, rng=9)
    b = judge.label(["pass", "fail", "cannot-determine"], ["a", "b", "c"], repeats=5, rng=9)
    assert a.equals(b)
    assert list(a.columns) == ["item_id", "judge", "repeat", "label", "outcome"]
    assert sorted(a["repeat"].unique()) == [0, 1, 2, 3, 4]
    assert set(a["judge"]) == {SIMULATED_JUDGE_NAME} and "synthetic" in SIMULATED_JUDGE_NAME


@pytest.mark.parametrize(
    "kwargs",
    [
        {"confusion": {"pass": {"pass": 1.0}}},
        {
            "confusion": {
                **DEFAULT_JUDGE_CONFUSION,
                "pass": {"pass": 0.5, "fail": 0.2, "cannot-determine": 0.2},
            }
        },
        {
            "confusion": {
                **DEFAULT_JUDGE_CONFUSION,
                "fail": {"pass": 0.0, "fail": 1.0, "cannot-determine": 0.0},
            }
        },
        {"difficulty_sd": -1.0},
        {"difficulty_sd": float("nan")},
        {"parse_failure_rate": 1.0},
    ],
)
def test_bad_judges_are_refused(kwargs: dict) -> None:
    with pytest.raises(EvalkitError):
        SimulatedModelJudge(**kwargs)


def test_bad_label_calls_are_refused() -> None:
    judge = SimulatedModelJudge()
    with pytest.raises(EvalkitError, match="not one of"):
        judge.label(["maybe"])
    with pytest.raises(EvalkitError, match="differ in length"):
        judge.label(["pass"], ["a", "b"])
    with pytest.raises(EvalkitError, match="repeats"):
        judge.label(["pass"], repeats=0)
    with pytest.raises(EvalkitError, match="unique"):
        judge.label(["pass", "fail"], ["a", "a"])


def test_simulated_target_has_the_known_shares() -> None:
    shares = {"pass": 0.6, "fail": 0.3, "cannot-determine": 0.1}
    target = simulate_target(5000, shares, rng=2)
    observed = target["truth"].value_counts(normalize=True)
    for status, p in shares.items():
        assert _within(float(observed[status]), p, 5000)
    assert target["item_id"].is_unique
    assert simulate_target(10, shares, rng=2).equals(simulate_target(10, shares, rng=2))
    with pytest.raises(EvalkitError):
        simulate_target(10, {"pass": 0.5})
    with pytest.raises(EvalkitError):
        simulate_target(10, {"pass": 0.5, "maybe": 0.5})
    assert np.isclose(sum(shares.values()), 1.0)
