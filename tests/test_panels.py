"""Judge panels (issue 12, item 3): Dawid-Skene against crowd-kit, agreement, error
correlation, the effective number of independent judges and the majority vote with ties."""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.stats import cohen_kappa, dawid_skene, judge_panel

CLS = np.array(["pass", "fail", "cannot-determine"])
JUDGES = [
    [[0.85, 0.1, 0.05], [0.15, 0.8, 0.05], [0.1, 0.2, 0.7]],
    [[0.9, 0.05, 0.05], [0.2, 0.7, 0.1], [0.2, 0.2, 0.6]],
    [[0.7, 0.2, 0.1], [0.1, 0.85, 0.05], [0.1, 0.1, 0.8]],
    [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]],
]


def panel(seed: int, n: int, pi: Any = (0.6, 0.3, 0.1), missing: float = 0.1) -> tuple[Any, Any]:
    """Labels of the four judges above (some missing) and the true classes."""
    rng = np.random.default_rng(seed)
    t = rng.choice(3, size=n, p=pi)
    labels = {}
    for g, m in enumerate(JUDGES):
        j = (rng.random(n)[:, None] > np.cumsum(np.asarray(m)[t], axis=1)).sum(axis=1)
        col = CLS[j].astype(object)
        col[rng.random(n) < missing] = None
        labels[f"judge{g}"] = list(col)
    return labels, list(CLS[t])


def crowd_kit_fit(labels: dict[str, list[Any]], n_iter: int) -> Any:
    from crowdkit.aggregation import DawidSkene  # 0.5 s to import: only where it runs

    rows = [
        (i, w, lab) for w, col in labels.items() for i, lab in enumerate(col) if lab is not None
    ]
    df = pd.DataFrame(rows, columns=["task", "worker", "label"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # crowd-kit's pandas deprecation warnings
        # tol -inf: never stop early, run the n_iter rounds (its bound need not be monotone)
        return DawidSkene(n_iter=n_iter, tol=-np.inf).fit(df)


@pytest.mark.parametrize(("seed", "n"), [(1, 300), (2, 120)])
@pytest.mark.slow
def test_dawid_skene_equals_crowd_kit_round_for_round(seed: int, n: int) -> None:
    labels, _ = panel(seed, n)
    # the same init and 100 E/M rounds each (ours stops sooner only once the bound stops rising)
    ck = crowd_kit_fit(labels, 100)
    ours = dawid_skene(labels, max_iter=100, tol=1e-300)
    for c in CLS:
        assert ours.class_shares[c] == pytest.approx(float(ck.priors_[c]), abs=1e-6)
    for w in labels:
        for true in CLS:
            for said in CLS:
                expected = ck.errors_.loc[(w, said), true] if (w, said) in ck.errors_.index else 0
                assert ours.confusion[w][true][said] == pytest.approx(expected, abs=1e-6)
    assert list(ours.most_likely) == [ck.labels_[i] for i in ours.items]


def test_dawid_skene_recovers_known_error_rates() -> None:
    # 20,000 items: the rarest class (2,000 items) still pins each judge's row to about +-0.03
    labels, _ = panel(3, 20000, missing=0.0)
    res = dawid_skene(labels)
    assert res.converged and res.n == 20000
    assert [res.class_shares[c] for c in CLS] == pytest.approx([0.6, 0.3, 0.1], abs=0.01)
    for g, m in enumerate(JUDGES):
        got = [[res.confusion[f"judge{g}"][a][b] for b in CLS] for a in CLS]
        assert np.asarray(got) == pytest.approx(np.asarray(m), abs=0.05)
    json.dumps(res.to_dict(), allow_nan=False)


def test_pairwise_agreement_and_kappa() -> None:
    labels, _ = panel(4, 200)
    res = judge_panel(labels, n_resamples=200, rng=1)
    assert len(res.pairwise) == 6
    for pair in res.pairwise:
        a, b = np.asarray(labels[pair.judge_a]), np.asarray(labels[pair.judge_b])
        both = (a != None) & (b != None)  # noqa: E711 - object arrays
        assert pair.n == int(both.sum())
        assert pair.agreement == pytest.approx(float(np.mean(a[both] == b[both])))
        assert pair.agreement_interval.low < pair.agreement < pair.agreement_interval.high
        ref = cohen_kappa(np.stack([a[both], b[both]], axis=1).tolist(), categories=list(CLS))
        assert pair.kappa is not None and pair.kappa.statistic == pytest.approx(ref.statistic)
        assert pair.kappa_interval == ref.confidence_interval()
    assert res.majority is None and res.error_correlations is None  # no gold given


def test_error_correlation_and_effective_judges() -> None:
    labels, gold = panel(5, 400)
    res = judge_panel(labels, gold, n_resamples=500, rng=2)
    g = np.asarray(gold)
    assert res.error_correlations is not None and res.error_rates is not None
    rs = []
    for e in res.error_correlations:
        a, b = np.asarray(labels[e.judge_a]), np.asarray(labels[e.judge_b])
        both = (a != None) & (b != None)  # noqa: E711
        ea, eb = (a[both] != g[both]).astype(float), (b[both] != g[both]).astype(float)
        r = float(np.corrcoef(ea, eb)[0, 1])
        assert e.n == int(both.sum()) and e.statistic == pytest.approx(r, abs=1e-12)
        assert e.confidence_interval.low < r < e.confidence_interval.high
        rs.append(r)
    m = len(labels)
    assert res.mean_error_correlation == pytest.approx(np.mean(rs))
    assert res.effective_judges == pytest.approx(m / (1 + (m - 1) * np.mean(rs)))
    lo, hi = res.effective_judges_interval
    assert lo is not None and hi is not None and lo < res.effective_judges < hi
    for w in labels:
        col = np.asarray(labels[w])
        seen = col != None  # noqa: E711
        assert res.error_rates[w] == pytest.approx(float(np.mean(col[seen] != g[seen])))
    json.dumps(res.to_dict(), allow_nan=False)


def _difficulty_panel(seed: int, hard_error: float, easy_error: float) -> tuple[Any, Any]:
    """Four judges, binary labels; 30% of items are hard (each judge errs w.p. hard_error),
    the rest easy (easy_error); judges err independently given the item's difficulty."""
    rng = np.random.default_rng(seed)
    n = 3000
    gold = np.where(rng.random(n) < 0.3, "fail", "pass")
    p_err = np.where(rng.random(n) < 0.3, hard_error, easy_error)
    flip = {"pass": "fail", "fail": "pass"}
    labels = {}
    for g in range(4):
        err = rng.random(n) < p_err
        labels[f"j{g}"] = [flip[x] if e else x for x, e in zip(gold, err, strict=True)]
    return labels, list(gold)


@pytest.mark.slow
def test_shared_difficulty_lowers_the_effective_number() -> None:
    # P(err) = .3(.4) + .7(.05) = .155; P(both err) = .3(.16) + .7(.0025) = .04975;
    # r = (.04975 - .155^2) / (.155 * .845) = .19641; m_eff = 4 / (1 + 3 r) = 2.5173
    labels, gold = _difficulty_panel(8, 0.4, 0.05)
    res = judge_panel(labels, gold, n_resamples=1000, rng=6)
    lo, hi = res.effective_judges_interval
    assert lo is not None and hi is not None and lo < 2.5173 < hi
    assert res.effective_judges == pytest.approx(2.5173, abs=0.3)
    lo, hi = res.mean_error_correlation_interval
    assert lo is not None and hi is not None and lo < 0.19641 < hi
    # independent errors (same rate on every item): about 4 independent judges
    labels, gold = _difficulty_panel(9, 0.15, 0.15)
    res = judge_panel(labels, gold, n_resamples=1000, rng=7)
    lo, hi = res.effective_judges_interval
    assert lo is not None and hi is not None and lo < 4 < hi


def test_copies_of_one_judge_are_one_effective_judge() -> None:
    labels, gold = panel(6, 300, missing=0.0)
    same = {"a": labels["judge0"], "b": list(labels["judge0"]), "c": list(labels["judge0"])}
    res = judge_panel(same, gold, n_resamples=200, rng=3)
    assert res.mean_error_correlation == pytest.approx(1.0)
    assert res.effective_judges == pytest.approx(1.0)


def test_majority_vote_counts_and_shows_ties() -> None:
    labels = {
        "a": ["pass", "pass", "fail", "fail", "pass", "cannot-determine"],
        "b": ["pass", "fail", "fail", None, "fail", "pass"],
        "c": ["fail", None, "fail", "pass", "pass", "fail"],
    }
    gold = ["pass", "fail", "fail", "fail", None, "pass"]
    # majorities: pass, tie (pass/fail), fail, tie (fail/pass), pass (no gold), tie (3-way)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # 6 items: tiny bootstraps
        res = judge_panel(labels, gold, n_resamples=100, rng=4)
    mv = res.majority
    assert mv is not None
    assert (mv.n_ties, mv.tie_items, mv.n, mv.n_without_gold) == (3, (1, 3, 5), 2, 1)
    ref = cohen_kappa([["pass", "pass"], ["fail", "fail"]], categories=list(res.classes))
    assert mv.kappa is not None and mv.kappa.statistic == ref.statistic == 1.0


def test_a_judge_that_never_errs_makes_the_effective_number_undefined() -> None:
    labels, gold = panel(7, 100, missing=0.0)
    labels["oracle"] = list(gold)
    with pytest.warns(DegenerateDataWarning, match="effective number of judges is undefined"):
        res = judge_panel(labels, gold, n_resamples=200, rng=5)
    assert res.effective_judges is None and res.effective_judges_reason is not None
    assert res.error_rates is not None and res.error_rates["oracle"] == 0.0
    json.dumps(res.to_dict(), allow_nan=False)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: judge_panel({"a": ["pass"]}), "at least two judges"),
        (lambda: judge_panel({"a": ["pass"], "b": ["pass", "fail"]}), "same items"),
        (lambda: judge_panel({"a": ["pass"], "b": ["fail"]}, ["pass", "fail"]), "gold"),
        (lambda: judge_panel({"a": ["pass"], "b": ["fail"]}, "pass"), "gold"),
        (lambda: judge_panel({"a": [None], "b": [None]}), "no label"),
        (lambda: judge_panel({"a": ["x"], "b": ["y"]}, classes=["x"]), "labels"),
        (lambda: dawid_skene({"a": ["x"], "b": ["y"]}, max_iter=0), "max_iter"),
        (lambda: dawid_skene({"a": ["x"], "b": ["y"]}, tol=0), "tol"),
        (lambda: judge_panel("ab"), "labels"),
    ],
)
def test_invalid_input_is_an_error_naming_the_argument(call: Any, match: str) -> None:
    with pytest.raises(EvalkitError, match=match):
        call()
