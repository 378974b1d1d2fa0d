"""Consistency statistics of a judge over repeats, and its kappa against gold.

Checked against published reference values (Wilson intervals: Newcombe 1998), against a second
implementation (statsmodels' Fleiss and Cohen kappa), and by a seeded coverage simulation of
the item-clustered BCa interval, with the naive row bootstrap as the negative control.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from evalkit.errors import EvalkitError
from evalkit.judge.consistency import (
    flip_rate,
    kappa_vs_gold,
    majority_labels,
    outcome_rates,
    repeat_kappa,
)
from evalkit.judge.parse import DIMENSION_STATUSES


def frame(rows: list[tuple[str, int, str | None, str]], judge: str = "openai:m") -> pd.DataFrame:
    """Long-format labels from (item, repeat, label, outcome) tuples."""
    return pd.DataFrame(
        [
            {"item_id": i, "judge": judge, "repeat": r, "label": lab, "outcome": o, "reason": None}
            for i, r, lab, o in rows
        ]
    )


def labelled(table: dict[str, list[str | None]], judge: str = "openai:m") -> pd.DataFrame:
    """Labels per item over repeats; None is a cannot-parse repeat."""
    rows = [
        (item, r, lab, "ok" if lab is not None else "cannot-parse")
        for item, labs in table.items()
        for r, lab in enumerate(labs)
    ]
    return frame(rows, judge)


EXAMPLE = labelled(
    {
        "a": ["pass", "pass", "pass"],
        "b": ["pass", "fail", "pass"],
        "c": ["fail", "pass", None],  # a tie between the two labelled repeats
        "d": [None, None, None],  # never labelled
        "e": ["cannot-determine", "fail", "not-applicable"],  # a three-way tie
        "f": ["fail", None, "fail"],
    }
)


def test_majority_labels_count_ties_and_never_break_them() -> None:
    maj = majority_labels(EXAMPLE)
    assert dict(maj.labels) == {
        "a": "pass",
        "b": "pass",
        "c": None,
        "d": None,
        "e": None,
        "f": "fail",
    }
    assert maj.ties == ("c", "e") and maj.unlabelled == ("d",) and maj.n == 3


def test_flip_rate_is_over_items_with_two_labelled_repeats_with_a_wilson_interval() -> None:
    rate = flip_rate(EXAMPLE)
    # a, b, c, e, f have >= 2 labels; b, c and e disagree
    assert (rate.k, rate.n, rate.statistic) == (3, 5, 0.6)
    # Wilson (1927) score interval, written out: centre and half-width at z = 1.959964
    z, p, n = 1.959963984540054, 0.6, 5
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert rate.confidence_interval() == pytest.approx((centre - half, centre + half))


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    # Newcombe (1998), Stat Med 17:857-872, Table I, method 3 (Wilson score, no correction)
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_flip_rate_intervals_match_newcombe_1998(k: int, n: int, low: float, high: float) -> None:
    table = {f"i{j}": (["pass", "fail"] if j < k else ["pass", "pass"]) for j in range(n)}
    rate = flip_rate(labelled(table))
    assert (rate.k, rate.n) == (k, n)
    assert rate.low == pytest.approx(low, abs=5e-5) and rate.high == pytest.approx(high, abs=5e-5)


def test_repeat_kappa_is_fleiss_kappa_with_the_repeats_as_raters() -> None:
    rng = np.random.default_rng(20261201)
    truth = rng.choice(DIMENSION_STATUSES[:3], size=60)
    table = {
        f"i{j}": [
            t if rng.random() < 0.7 else str(rng.choice(DIMENSION_STATUSES)) for _ in range(4)
        ]
        for j, t in enumerate(truth)
    }
    result = repeat_kappa(labelled(table))
    counts = np.array([[labs.count(s) for s in DIMENSION_STATUSES] for labs in table.values()])
    assert result.n == 60
    assert result.statistic == pytest.approx(sm_fleiss_kappa(counts, method="fleiss"), abs=1e-12)
    low, high = result.confidence_interval()
    assert low < result.statistic < high


def test_repeat_kappa_leaves_out_items_with_fewer_than_two_labels() -> None:
    result = repeat_kappa(EXAMPLE)
    assert result.n == 5  # d has no label
    with pytest.raises(EvalkitError, match="at least two labelled repeats"):
        repeat_kappa(labelled({"x": ["pass", None]}))


def test_outcome_rates_count_every_call_with_its_n() -> None:
    rows = [
        ("a", 0, "pass", "ok"),
        ("a", 1, None, "cannot-parse"),
        ("b", 0, None, "error"),
        ("b", 1, "fail", "ok"),
    ]
    rates = outcome_rates(frame(rows))
    assert {k: (v.k, v.n) for k, v in rates.items()} == {
        "ok": (2, 4),
        "cannot-parse": (1, 4),
        "error": (1, 4),
    }


def test_several_judges_must_be_named_one_at_a_time() -> None:
    both = pd.concat([EXAMPLE, labelled({"a": ["pass"]}, judge="anthropic:x")])
    with pytest.raises(EvalkitError, match="hold 2 judges"):
        flip_rate(both)
    assert flip_rate(both, judge="openai:m").n == 5
    with pytest.raises(EvalkitError, match="no judge 'x'"):
        flip_rate(both, judge="x")


GOLD = {"a": "pass", "b": "fail", "c": "fail", "d": "pass", "e": "cannot-determine", "f": "fail"}


def test_kappa_vs_gold_on_all_repeats_pairs_every_labelled_repeat_with_gold() -> None:
    result = kappa_vs_gold(EXAMPLE, GOLD)
    pairs = [
        (GOLD[i], lab)
        for i, labs in {
            "a": ["pass"] * 3,
            "b": ["pass", "fail", "pass"],
            "c": ["fail", "pass"],
            "e": ["cannot-determine", "fail", "not-applicable"],
            "f": ["fail", "fail"],
        }.items()
        for lab in labs
    ]
    table = np.zeros((4, 4))
    for g, j in pairs:
        table[DIMENSION_STATUSES.index(g), DIMENSION_STATUSES.index(j)] += 1
    assert result.n == len(pairs) == 13 and result.n_items == 5
    assert result.statistic == pytest.approx(sm_cohens_kappa(table).kappa, abs=1e-12)
    assert result.basis == "all-repeats" and result.dropped_ties == 0


def test_kappa_vs_gold_on_the_majority_label_leaves_ties_out_and_counts_them() -> None:
    result = kappa_vs_gold(EXAMPLE, GOLD, majority=True)
    assert (result.n, result.dropped_ties, result.basis) == (3, 2, "majority")
    with pytest.raises(EvalkitError, match="not in the gold set"):
        kappa_vs_gold(EXAMPLE, {"a": "pass"})


def test_identical_repeats_add_no_information_to_the_clustered_interval() -> None:
    rng = np.random.default_rng(7)
    gold = {f"i{j}": str(rng.choice(["pass", "fail", "cannot-determine"])) for j in range(80)}
    once = {i: g if rng.random() < 0.75 else "fail" for i, g in gold.items()}
    single = kappa_vs_gold(labelled({i: [lab] for i, lab in once.items()}), gold)
    fivefold = kappa_vs_gold(labelled({i: [lab] * 5 for i, lab in once.items()}), gold)
    assert fivefold.statistic == pytest.approx(single.statistic)
    clustered = fivefold.confidence_interval(n_resamples=2000, rng=11)
    alone = single.confidence_interval(n_resamples=2000, rng=11)
    assert tuple(clustered) == pytest.approx(tuple(alone), abs=1e-3)  # the same resamples
    naive = fivefold.result.confidence_interval(method="bca", n_resamples=2000, rng=11)
    width = clustered.high - clustered.low
    assert naive.high - naive.low < 0.6 * width  # rows as if independent: falsely narrow


# --------------------------------------------------------------------------- coverage

CLASSES = ("pass", "fail", "cannot-determine")
PRIOR = (0.5, 0.3, 0.2)
EASY_SHARE, EASY_P, HARD_P = 0.6, 1.0, 0.34  # hard items: close to chance, repeat after repeat
N_ITEMS, REPEATS, REPLICATIONS, RESAMPLES = 120, 4, 600, 999


def population_kappa() -> float:
    """Cohen's kappa of the population joint distribution of (gold, judge) over repeats."""
    table = np.zeros((3, 3))
    for c, prior in enumerate(PRIOR):
        for share, p in ((EASY_SHARE, EASY_P), (1 - EASY_SHARE, HARD_P)):
            row = np.full(3, (1 - p) / 2)
            row[c] = p
            table[c] += prior * share * row
    po = float(np.trace(table))
    pe = float(table.sum(axis=1) @ table.sum(axis=0))
    return (po - pe) / (1 - pe)


def simulate(rng: np.random.Generator) -> tuple[pd.DataFrame, dict[str, str]]:
    gold_codes = rng.choice(3, size=N_ITEMS, p=PRIOR)
    p_right = np.where(rng.random(N_ITEMS) < EASY_SHARE, EASY_P, HARD_P)
    right = rng.random((N_ITEMS, REPEATS)) < p_right[:, None]
    shift = rng.integers(1, 3, size=(N_ITEMS, REPEATS))  # one of the two other classes
    codes = np.where(right, gold_codes[:, None], (gold_codes[:, None] + shift) % 3)
    table = {f"i{j}": [CLASSES[c] for c in codes[j]] for j in range(N_ITEMS)}
    return labelled(table), {f"i{j}": CLASSES[c] for j, c in enumerate(gold_codes)}


def coverage(clustered: bool) -> float:
    kappa = population_kappa()
    rng = np.random.default_rng(20261201)
    hits = 0
    for _ in range(REPLICATIONS):
        labels, gold = simulate(rng)
        result = kappa_vs_gold(labels, gold)
        if clustered:
            low, high = result.confidence_interval(n_resamples=RESAMPLES, rng=rng)
        else:
            low, high = result.result.confidence_interval(
                method="bca", n_resamples=RESAMPLES, rng=rng
            )
        hits += low <= kappa <= high
    return hits / REPLICATIONS


def test_population_kappa_of_the_simulated_judge() -> None:
    # By hand: a row of gold class c is prior_c * (0.736 at c, 0.132 elsewhere), so po = 0.736;
    # judge margins (0.434, 0.3132, 0.2528), pe = 0.5*0.434 + 0.3*0.3132 + 0.2*0.2528 = 0.36152.
    assert population_kappa() == pytest.approx((0.736 - 0.36152) / (1 - 0.36152))


# 1,000 replications of this design gave 0.953 clustered and 0.765 row-resampled coverage; at
# 600 replications the binomial SD is 0.009, so a correct interval lands in [0.93, 0.97].
@pytest.mark.slow
def test_the_item_clustered_bca_interval_covers_the_population_kappa() -> None:
    rate = coverage(clustered=True)
    assert 0.93 <= rate <= 0.97, f"clustered 95% BCa coverage {rate:.3f} outside [0.93, 0.97]"


@pytest.mark.slow
def test_negative_control_resampling_rows_ignores_the_clusters_and_undercovers() -> None:
    rate = coverage(clustered=False)
    assert rate < 0.90, f"row-resampled 95% BCa coverage {rate:.3f}: the check cannot tell"
