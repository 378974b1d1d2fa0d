"""Tests of evalkit.stats.thresholds (threshold studies with cluster-bootstrap CIs)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.stats.thresholds import (
    COLUMNS,
    CeilingStatus,
    Gap,
    ThresholdStudy,
    plot_threshold_study,
    threshold_study,
)

# A concrete ledger consistent with the measurement published in the rubric-v2 seed
# (rubric-v2, "Änderungen gegenüber v1", measured 2026-09-19 over eval.jsonl, 40 records /
# 38 sessions): blocked distribution 0->8, 1->3, 2->5, 3-5->14, 6+->10, maximum 58, a gap between
# 13 and 33; threshold 1 fails 32 records / 30 sessions (v1: 30 of 38 = 79%), threshold 3 fails
# 23 sessions, threshold 6 fails 9 (24%). Two sessions hold two records: s09 (1, 2) and
# s30 (9, 58). (session, guard_blocked) pairs:
SEED_V1_LEDGER: tuple[tuple[str, int], ...] = (
    *((f"s{i:02d}", 0) for i in range(1, 9)),  # 8 sessions, one record each, blocked 0
    ("s09", 1),
    ("s09", 2),
    ("s10", 1),
    ("s11", 1),
    *((f"s{i:02d}", 2) for i in range(12, 16)),
    *((f"s{i:02d}", 3) for i in range(16, 21)),
    *((f"s{i:02d}", 4) for i in range(21, 26)),
    *((f"s{i:02d}", 5) for i in range(26, 30)),
    ("s30", 9),
    ("s30", 58),
    ("s31", 6),
    ("s32", 7),
    ("s33", 8),
    ("s34", 10),
    ("s35", 11),
    ("s36", 12),
    ("s37", 13),
    ("s38", 33),
)
SEED_SESSIONS = [s for s, _ in SEED_V1_LEDGER]
SEED_BLOCKED = [c for _, c in SEED_V1_LEDGER]


@pytest.fixture(scope="module")
def seed_study() -> ThresholdStudy:
    return threshold_study(SEED_BLOCKED, SEED_SESSIONS, rng=20260919)


def test_seed_ledger_matches_the_published_distribution() -> None:
    # The fixture itself must satisfy the published shape, or the figures below prove nothing.
    blocked = np.array(SEED_BLOCKED)
    assert blocked.size == 40 and len(set(SEED_SESSIONS)) == 38
    assert (blocked == 0).sum() == 8
    assert (blocked == 1).sum() == 3
    assert (blocked == 2).sum() == 5
    assert ((blocked >= 3) & (blocked <= 5)).sum() == 14
    assert (blocked >= 6).sum() == 10
    assert blocked.max() == 58


def test_seed_published_figures(seed_study: ThresholdStudy) -> None:
    s = seed_study
    assert (s.n_items, s.n_clusters, s.n_unknown) == (40, 38, 0)
    # rubric-v2 seed: "32 von 40 Records fail" under v1 (blocked >= 1), 30 of 38 sessions (79 %)
    assert s.row(1)["items_firing"] == 32
    assert s.row(1)["clusters_failing"] == 30
    assert round(s.row(1)["cluster_fail_rate"], 2) == 0.79
    # "N=3 lässt noch 23 von 38 Sessions fail, N=6 noch 9 (24 %)"
    assert s.row(3)["clusters_failing"] == 23
    assert s.row(6)["clusters_failing"] == 9
    assert round(s.row(6)["cluster_fail_rate"], 2) == 0.24
    # threshold 20 fires on 2 records (5.0 %)
    assert s.row(20)["items_firing"] == 2
    assert s.row(20)["fire_rate"] == pytest.approx(0.05)
    # gap between 13 and 33: both observed, nothing in between
    assert Gap(13, 33) in s.gaps
    assert s.distribution[13] == 1 and s.distribution[33] == 1
    assert not any(14 <= v <= 32 for v in s.distribution.index)
    assert s.distribution[0] == 8 and int(s.distribution.sum()) == 40


def test_default_thresholds_cover_one_to_max_plus_one(seed_study: ThresholdStudy) -> None:
    t = seed_study.table["threshold"].tolist()
    assert t == list(range(1, 60))
    last = seed_study.row(59)
    assert last["items_firing"] == 0 and bool(last["dead"])
    assert not seed_study.table.loc[seed_study.table["threshold"] <= 58, "dead"].any()
    assert list(seed_study.table.columns) == list(COLUMNS)


def test_rates_are_consistent_with_a_direct_count(seed_study: ThresholdStudy) -> None:
    blocked = np.array(SEED_BLOCKED)
    sessions = np.array(SEED_SESSIONS)
    for _, row in seed_study.table.iterrows():
        t = row["threshold"]
        assert row["items_firing"] == (blocked >= t).sum()
        assert row["clusters_failing"] == len(set(sessions[blocked >= t]))
        assert row["fire_rate"] == pytest.approx((blocked >= t).mean())
        assert row["ci_low"] <= row["fire_rate"] <= row["ci_high"] or row["items_firing"] == 0


def test_ceiling_checks(seed_study: ThresholdStudy) -> None:
    tab = seed_study.table
    assert (tab["above_ceiling"] == (tab["fire_rate"] > 0.10)).all()
    # threshold 1 (80 %) is far above the 10 % ceiling, its whole CI too
    assert seed_study.row(1)["ceiling_status"] == CeilingStatus.ABOVE
    # with 40 records a 5 % point estimate cannot be shown to be below 10 %
    assert seed_study.row(20)["ceiling_status"] == CeilingStatus.UNDECIDED
    for _, row in tab.iterrows():
        if row["ci_low"] > 0.10:
            assert row["ceiling_status"] == "above"
        elif row["ci_high"] <= 0.10:
            assert row["ceiling_status"] == "within"
        else:
            assert row["ceiling_status"] == "undecided"


def test_iid_bootstrap_ci_agrees_with_the_wald_interval() -> None:
    # Second implementation: without clusters the fire rate is a binomial proportion; for
    # n = 400, p = 0.3 the percentile bootstrap and the Wald interval agree to about 0.01.
    rng = np.random.default_rng(7)
    counts = np.where(rng.random(400) < 0.3, 5, 0)
    p = float((counts >= 1).mean())
    study = threshold_study(counts, thresholds=[1], n_resamples=8000, rng=1)
    half = norm.ppf(0.975) * math.sqrt(p * (1 - p) / 400)
    assert study.row(1)["ci_low"] == pytest.approx(p - half, abs=0.01)
    assert study.row(1)["ci_high"] == pytest.approx(p + half, abs=0.01)


def test_cluster_bootstrap_resamples_whole_clusters() -> None:
    # 30 clusters of 10 identical items: the information is 30 clusters, not 300 items.
    rng = np.random.default_rng(11)
    cluster_fires = rng.random(30) < 0.4
    counts = np.repeat(np.where(cluster_fires, 3, 0), 10)
    clusters = np.repeat(np.arange(30), 10)
    p = float(cluster_fires.mean())
    clustered = threshold_study(counts, clusters, thresholds=[1], n_resamples=8000, rng=2)
    naive = threshold_study(counts, thresholds=[1], n_resamples=8000, rng=2)
    half_clusters = norm.ppf(0.975) * math.sqrt(p * (1 - p) / 30)
    width = clustered.row(1)["ci_high"] - clustered.row(1)["ci_low"]
    assert width == pytest.approx(2 * half_clusters, abs=0.04)
    naive_width = naive.row(1)["ci_high"] - naive.row(1)["ci_low"]
    assert width > 2.5 * naive_width  # sqrt(10) ~ 3.2 times wider


def test_seeded_rng_reproduces() -> None:
    a = threshold_study(SEED_BLOCKED, SEED_SESSIONS, rng=5, n_resamples=500)
    b = threshold_study(SEED_BLOCKED, SEED_SESSIONS, rng=5, n_resamples=500)
    assert a.table.equals(b.table)


def test_unknown_counts_are_excluded_not_zero() -> None:
    counts = [0, None, 3, float("nan"), 1, 0]
    clusters = ["a", "a", "b", "c", "d", "e"]
    s = threshold_study(counts, clusters, thresholds=[1, 2], rng=0, n_resamples=200)
    assert (s.n_items, s.n_unknown, s.n_clusters) == (4, 2, 5)
    r1 = s.row(1)
    assert r1["items_firing"] == 2 and r1["fire_rate"] == pytest.approx(2 / 4)
    # a: known 0 + unknown -> undetermined; c: only unknown -> undetermined
    assert r1["clusters_failing"] == 2 and r1["clusters_undetermined"] == 2
    assert r1["cluster_fail_rate"] == pytest.approx(2 / 3)  # b, d fail; e passes
    r2 = s.row(2)
    assert r2["clusters_failing"] == 1 and r2["clusters_undetermined"] == 2
    assert r2["cluster_fail_rate"] == pytest.approx(1 / 3)


def test_all_zero_is_documented_degenerate_result() -> None:
    with pytest.warns(DegenerateDataWarning, match="never fires"):
        s = threshold_study([0, 0, 0, 0], ["a", "a", "b", "c"], rng=0, n_resamples=100)
    assert s.table["threshold"].tolist() == [1]
    assert bool(s.row(1)["dead"]) and s.row(1)["fire_rate"] == 0.0
    assert s.row(1)["ceiling_status"] == "within"


def test_single_cluster_gives_nan_ci_with_warning() -> None:
    with pytest.warns(DegenerateDataWarning, match="single cluster"):
        s = threshold_study([0, 2, 5], ["only", "only", "only"], rng=0)
    assert math.isnan(s.row(1)["ci_low"]) and math.isnan(s.row(1)["ci_high"])
    assert s.row(1)["ceiling_status"] == "undecided"
    assert s.row(1)["fire_rate"] == pytest.approx(2 / 3)
    assert s.row(1)["clusters_failing"] == 1


def test_no_known_count_warns_and_returns_empty_table() -> None:
    with pytest.warns(DegenerateDataWarning, match="no known count"):
        s = threshold_study([None, float("nan")])
    assert len(s) == 0 and s.n_unknown == 2 and s.n_items == 0


def test_no_warning_on_ordinary_data(seed_study: ThresholdStudy) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        threshold_study(SEED_BLOCKED, SEED_SESSIONS, rng=1, n_resamples=100)
    assert seed_study.warnings == ()


@pytest.mark.parametrize(
    ("counts", "clusters", "message"),
    [
        ([1, -2], None, r"counts\[1\].*>= 0"),
        ([1, "x"], None, r"counts\[1\]"),
        ([1, True], None, r"counts\[1\]"),
        ([1, float("inf")], None, r"counts\[1\]"),
        ([1, 2], ["a"], "one label per item"),
        ([1, 2], ["a", None], r"clusters\[1\]"),
    ],
)
def test_bad_input_is_named(counts: list, clusters: list | None, message: str) -> None:
    with pytest.raises(EvalkitError, match=message):
        threshold_study(counts, clusters)


def test_real_valued_counts_use_observed_values_and_have_no_gaps() -> None:
    s = threshold_study([0.5, 1.25, 1.25, 3.0], rng=0, n_resamples=100)
    assert s.table["threshold"].tolist() == [0.5, 1.25, 3.0]
    assert s.gaps == ()
    assert s.row(1.25)["items_firing"] == 3


def test_to_dict_is_json_simple(seed_study: ThresholdStudy) -> None:
    d = seed_study.to_json_dict()
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert back["n_items"] == 40 and back["n_clusters"] == 38
    assert back["thresholds"][0]["threshold"] == 1 and back["thresholds"][0]["items_firing"] == 32
    assert {"after": 13, "before": 33, "first_missing": 14, "last_missing": 32, "length": 19} in (
        back["gaps"]
    )
    assert back["distribution"][0] == {"value": 0, "items": 8}
    with pytest.warns(DegenerateDataWarning):
        single = threshold_study([1, 2], ["x", "x"])
    assert (
        json.loads(json.dumps(single.to_json_dict(), allow_nan=False))["thresholds"][0]["ci_low"]
        is None
    )


def test_study_behaves_like_its_table(seed_study: ThresholdStudy) -> None:
    # the issue asks for a DataFrame: the study is one, and keeps its context on slices
    assert isinstance(seed_study, pd.DataFrame)
    firing = seed_study[seed_study["fire_rate"] > 0.5]
    assert isinstance(firing, ThresholdStudy) and firing.n_items == 40 and firing.gaps
    assert len(seed_study) == len(seed_study.table)
    assert seed_study["items_firing"].iloc[0] == 32
    assert seed_study.loc[2, "threshold"] == 3
    assert list(seed_study.columns) == list(COLUMNS)
    with pytest.raises(AttributeError):
        seed_study.no_such_column_or_attribute  # noqa: B018


def test_plot(seed_study: ThresholdStudy) -> None:
    from matplotlib.figure import Figure

    fig = plot_threshold_study(seed_study)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert "n = 40 items, 38 clusters" in ax.get_title()
    labels = [h.get_label() for h in ax.get_legend().legend_handles]
    assert "ceiling 10%" in labels and "unobserved values" in labels
    assert any(line.get_ydata()[0] == pytest.approx(0.10) for line in ax.get_lines())
    # one shaded span per gap plus the CI band
    assert len(ax.patches) + len(ax.collections) >= len(seed_study.gaps) + 1
    fig2 = Figure()
    ax2 = fig2.add_subplot()
    assert plot_threshold_study(seed_study, ax=ax2) is fig2


def test_plot_accepts_the_bare_table(seed_study: ThresholdStudy) -> None:
    fig = plot_threshold_study(seed_study.table)
    ax = fig.axes[0]
    assert "n = 40 items, 38 clusters" in ax.get_title()
    assert seed_study.table.attrs["ceiling"] == 0.10
    with pytest.raises(EvalkitError, match="lacks column"):
        plot_threshold_study(seed_study.table[["threshold"]])


def test_public_names_resolve_through_evalkit_stats() -> None:
    import evalkit.stats as stats

    assert stats.threshold_study is threshold_study
    assert stats.plot_threshold_study is plot_threshold_study
    assert stats.ThresholdStudy is ThresholdStudy
