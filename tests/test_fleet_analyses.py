"""Fleet analyses: per-repository and pooled fire rates, heterogeneity, leave-one-out, flags.

Reference values: R's ``prop.test`` documentation example (``smokers <- c(83, 90, 129, 70);
patients <- c(86, 93, 136, 82); prop.test(smokers, patients)`` prints "X-squared = 12.6,
df = 3, p-value = 0.005585"; data from Fleiss (1981), Statistical Methods for Rates and
Proportions, p. 139). I² = (Q - df) / Q (Higgins & Thompson 2002, Stat Med 21:1539).
Second implementations: scipy's ``chi2_contingency``, statsmodels' Wilson interval, the
replay study's ``status_rates`` and the threshold study's ``counterfactual``.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fleet_support import make_fleet
from scipy.stats import chi2_contingency
from statsmodels.stats.proportion import proportion_confint

from evalkit.analyses import fleet as af
from evalkit.analyses.replay import status_rates
from evalkit.analyses.threshold import counterfactual
from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.fleet.score import score_fleet
from evalkit.simulate import simulate_metrics_dir
from evalkit.stats.bootstrap import bootstrap_sums


def _units(spec: dict[str, tuple[int, int]], undetermined: int = 0) -> pd.DataFrame:
    """Units from repository -> (fires, determined sessions), plus undetermined ones each."""
    rows = []
    for repo, (k, n) in spec.items():
        rows += [(repo, f"s{i}", i < k, True) for i in range(n)]
        rows += [(repo, f"u{i}", False, False) for i in range(undetermined)]
    return pd.DataFrame(rows, columns=list(af.UNIT_COLUMNS))


SMOKERS = {f"/r/clinic-{i}/metrics": (k, n) for i, (k, n) in enumerate(
    [(83, 86), (90, 93), (129, 136), (70, 82)])}  # fmt: skip


def test_heterogeneity_matches_r_prop_test() -> None:
    rates = af.fire_rates(_units(SMOKERS), n_resamples=200, n_permutations=4000, seed=3)
    het = rates.heterogeneity
    assert het.q == pytest.approx(12.6, abs=0.0005) and het.df == 3
    assert het.p_value == pytest.approx(0.005585, abs=5e-7)
    assert het.i_squared == pytest.approx((het.q - 3) / het.q)
    # exact conditional test, Monte Carlo: near the chi-square p-value on counts this size
    assert het.p_value_permutation == pytest.approx(0.0056, abs=0.004)
    # pooled 372/397: the smallest expected cell is 82 * 25/397 = 5.16, none below 5 (R's
    # prop.test prints no "approximation may be incorrect" warning on this example)
    assert het.sparse_share == 0.0
    sparse = af.fire_rates(_units({"a": (1, 10), "b": (0, 10)}), n_resamples=200).heterogeneity
    assert sparse.sparse_share == 0.5  # expected fires 0.5 and 0.5, non-fires 9.5 and 9.5
    # 1 of 2 fires: the permutation test's exact answer is p = 1 (every split is as extreme)
    assert sparse.p_value_permutation == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_heterogeneity_q_equals_scipy_chi_square(seed: int) -> None:
    rng = np.random.default_rng(seed)
    spec = {}
    for i in range(int(rng.integers(2, 9))):
        n = int(rng.integers(5, 120))
        spec[f"repo-{i}"] = (int(rng.binomial(n, rng.uniform(0.05, 0.5))), n)
    het = af.fire_rates(_units(spec), n_resamples=100, n_permutations=100).heterogeneity
    k = np.array([v[0] for v in spec.values()])
    n = np.array([v[1] for v in spec.values()])
    ref = chi2_contingency(np.vstack([k, n - k]), correction=False)
    assert het.q == pytest.approx(ref.statistic, rel=1e-10)
    assert het.p_value == pytest.approx(ref.pvalue, rel=1e-8)
    assert het.df == ref.dof


def test_per_repository_rates_carry_wilson_intervals_and_n() -> None:
    rates = af.fire_rates(_units(SMOKERS, undetermined=4), n_resamples=200)
    per = rates.per_repository
    assert per["repository"].tolist() == ["clinic-0", "clinic-1", "clinic-2", "clinic-3"]
    for row, (k, n) in zip(per.itertuples(), SMOKERS.values(), strict=True):
        lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert (row.k, row.n, row.sessions) == (k, n, n + 4)
        assert row.rate == pytest.approx(k / n)
        assert (row.ci_low, row.ci_high) == (pytest.approx(lo), pytest.approx(hi))
    assert rates.n_undetermined == 16
    assert rates.n == sum(n for _, n in SMOKERS.values())  # undetermined never in n


def test_pooled_interval_resamples_repositories() -> None:
    rng = np.random.default_rng(11)
    spec = {f"r{i}": (int(rng.binomial(60, p)), 60) for i, p in enumerate(rng.beta(2, 10, 25))}
    rates = af.fire_rates(_units(spec), n_resamples=1000, seed=5)
    k = sum(v[0] for v in spec.values())
    n = sum(v[1] for v in spec.values())
    assert rates.statistic == pytest.approx(k / n) and rates.pooled.n_repositories == 25
    # the same draws as a bootstrap over the repositories' (fires, n) rows: the cluster is the repo
    sums = np.array(list(spec.values()), dtype=float)
    ref = bootstrap_sums(sums, af._ratio, n_resamples=1000, rng=np.random.default_rng(5),
                         method="percentile", level=0.95)  # fmt: skip
    assert tuple(rates.confidence_interval()) == pytest.approx(tuple(ref.confidence_interval))
    # resampling sessions as if independent would claim more certainty than the fleet has
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    c_lo, c_hi = rates.confidence_interval()
    assert c_hi - c_lo > 1.3 * (hi - lo)
    wider = rates.confidence_interval(0.99)
    assert wider.low <= c_lo and wider.high >= c_hi


@pytest.mark.slow
def test_pooled_cluster_bootstrap_covers_the_fleet_rate() -> None:
    # seeded coverage: 30 repositories with their own rates (Beta(2, 18), mean 0.10) and sizes
    # independent of them, so the fleet's rate (the ratio estimator's target) is 0.10. The
    # percentile bootstrap with 30 clusters covers a little under 95%: 0.930 in 1,000
    # independent runs of this design (B = 1000); 400 runs here allow +-3 SE (0.013) of that.
    rng = np.random.default_rng(20261201)
    hits = naive_hits = 0
    sims = 400
    for _ in range(sims):
        sizes = rng.integers(20, 81, size=30)
        fires = rng.binomial(sizes, rng.beta(2, 18, size=30))
        units = _units(
            {f"r{i}": (int(k), int(n)) for i, (k, n) in enumerate(zip(fires, sizes, strict=True))}
        )
        pooled = af._pooled(units, 0.95, 1000, rng)
        lo, hi = pooled.confidence_interval()
        hits += lo <= 0.10 <= hi
        w_lo, w_hi = proportion_confint(int(fires.sum()), int(sizes.sum()), method="wilson")
        naive_hits += w_lo <= 0.10 <= w_hi
    assert 0.89 <= hits / sims <= 0.97, hits / sims
    assert naive_hits / sims < 0.80  # sessions taken as independent: measured 0.69 here


def test_the_repository_that_hides_a_flag_is_named() -> None:
    # 30 repositories fire on 30%; one large one never fires and pulls the pooled rate to 15%
    spec = {f"team-{i}": (15, 50) for i in range(30)}
    spec["monorepo"] = (0, 1500)
    rates = af.fire_rates(_units(spec), n_resamples=1000, seed=1)
    assert rates.statistic == pytest.approx(450 / 3000)
    loo = rates.leave_one_out.set_index("repository")
    assert "far above ceiling" in loo.loc["monorepo", "flag_without"]
    assert loo.loc["monorepo", "rate_without"] == pytest.approx(0.30)
    driving = set(loo.index[loo["changes_flag"] | loo["crosses_ceiling"]])
    assert driving == {"monorepo"} and "far above ceiling" not in rates.flags
    assert (
        rates.per_repository.set_index("repository").loc["monorepo", "flag"] == "never fires (0%)"
    )


def test_the_only_repository_that_fires_drives_the_never_fires_flag() -> None:
    spec = {"a": (0, 40), "b": (1, 30), "c": (0, 25)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # zero-variance resamples
        rates = af.fire_rates(_units(spec), n_resamples=200)
    assert rates.flags == ()
    loo = rates.leave_one_out.set_index("repository")
    assert loo.loc["b", "flag_without"] == "never fires (0%)"
    assert loo["changes_flag"].tolist() == [False, True, False]


def test_a_fleet_that_never_fires() -> None:
    with pytest.warns(DegenerateDataWarning):
        rates = af.fire_rates(_units({"a": (0, 40), "b": (0, 30)}), n_resamples=200)
    assert rates.flags == ("never fires (0%)",)
    assert rates.heterogeneity.q is None and "no variation" in rates.heterogeneity.note
    assert not rates.leave_one_out["changes_flag"].any()


def test_one_repository_has_no_pooled_interval() -> None:
    with pytest.warns(DegenerateDataWarning, match="resampling unit"):
        rates = af.fire_rates(_units({"only": (5, 40)}), n_resamples=200)
    assert rates.statistic == pytest.approx(5 / 40)
    assert tuple(rates.confidence_interval()) == (None, None)
    assert rates.heterogeneity.q is None and "fewer than two" in rates.heterogeneity.note


# -- from scored fleets and journals ---------------------------------------------------------


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    return score_fleet(make_fleet(tmp_path_factory.mktemp("fleet")))


@pytest.mark.parametrize("dimension", ["verification-evidence", "gate-health", "plan-fidelity"])
def test_dimension_units_count_as_the_replay_study(scored: pd.DataFrame, dimension: str) -> None:
    for denominator in ("determined", "scored"):
        units = af.dimension_units(scored, dimension, denominator=denominator)
        per = af.fire_rates(units, n_resamples=200).per_repository.set_index("metrics_dir")
        for d, part in scored.groupby("metrics_dir"):
            ref = status_rates(part.assign(rubric="rubric-v2")).set_index("status")
            ref = ref[ref["dimension"] == dimension]
            k = {s: int(ref.loc[s, "k"]) for s in ref.index}
            n = k["pass"] + k["fail"] if denominator == "determined" else int(ref["n"].iloc[0])
            assert (per.loc[d, "k"], per.loc[d, "n"]) == (k["fail"], n), (d, denominator)


def test_dimension_units_refuse_what_has_no_fire_rate(scored: pd.DataFrame) -> None:
    with pytest.raises(EvalkitError, match="reported, never graded"):
        af.dimension_units(scored, "guard-friction")
    with pytest.raises(EvalkitError, match=r"no row of dimension 'quality-gates'.*gate-health"):
        af.dimension_units(scored, "quality-gates")
    with pytest.raises(EvalkitError, match="lacks \\['metrics_dir'\\]"):
        af.dimension_units(scored.drop(columns="metrics_dir"), "gate-health")
    with pytest.raises(EvalkitError, match="denominator"):
        af.dimension_units(scored, "gate-health", denominator="all")  # type: ignore[arg-type]


@pytest.mark.slow
def test_fact_units_count_as_the_threshold_study(tmp_path: Path) -> None:
    dirs = []
    for i in range(3):
        d = tmp_path / f"repo-{i}" / "metrics"
        simulate_metrics_dir(d, n_sessions=25, seed=40 + i, score=True, mean_blocked=2 + 2 * i)
        dirs.append(str(d))
    facts = af.fleet_fact_table(dirs)
    facts.loc[facts.index[::7], "value"] = None  # unknown values: never read as 0
    for t in (1, 3, 6):
        units = af.fact_units(facts, t)
        for d, part in units.groupby("metrics_dir"):
            ref = counterfactual(facts[facts["metrics_dir"] == d], [t])[0]
            assert int(part["fires"].sum()) == ref["sessions_failing"]
            assert int(part["determined"].sum()) == ref["sessions"] - ref["sessions_undetermined"]
    with pytest.raises(EvalkitError, match="no journal"):
        af.fleet_fact_table([*dirs, str(tmp_path)])


@pytest.mark.parametrize(
    ("units", "message"),
    [
        (pd.DataFrame({"metrics_dir": ["a"], "fires": [True]}), "units lack"),
        (_units({}), "units are empty"),
        (_units({"a": (1, 2)}).assign(determined=False), "fires without determined"),
        (_units({"a": (1, 2)}).assign(fires=None), "must be True or False"),
    ],
)
def test_bad_units_are_refused(units: pd.DataFrame, message: str) -> None:
    with pytest.raises(EvalkitError, match=message):
        af.fire_rates(units)


@pytest.mark.parametrize(
    "kwargs",
    [{"ceiling": 1.5}, {"ceiling": True}, {"level": 1.0}, {"n_resamples": 5}, {"seed": -1}],
)
def test_bad_parameters_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(EvalkitError):
        af.fire_rates(_units(SMOKERS), **kwargs)  # type: ignore[arg-type]


# -- labels, JSON, the plot ------------------------------------------------------------------


def test_repository_labels_are_short_and_unique() -> None:
    assert af.repository_labels(["/x/a/.orchestrator/metrics", "/x/b/.orchestrator/metrics"]) == {
        "/x/a/.orchestrator/metrics": "a", "/x/b/.orchestrator/metrics": "b"}  # fmt: skip
    assert af.repository_labels(["/x/a/m", "/y/a/m", "/y/b/m"]) == {
        "/x/a/m": "x/a", "/y/a/m": "y/a", "/y/b/m": "y/b"}  # fmt: skip
    assert af.repository_labels(["/only/one/metrics"]) == {"/only/one/metrics": "metrics"}


def test_json_has_no_machine_paths_and_no_nan() -> None:
    rates = af.fire_rates(_units(SMOKERS), n_resamples=200)
    text = json.dumps(rates.to_json_dict(), allow_nan=False)
    assert "/r/" not in text and "clinic-3" in text
    assert json.loads(text)["pooled"]["n"] == rates.n


@pytest.mark.slow
def test_forest_plot_marks_the_driver_and_escapes_labels(tmp_path: Path) -> None:
    spec = {f"team-{i}": (15, 50) for i in range(8)}
    spec["$mono$"] = (0, 1500)
    rates = af.fire_rates(_units(spec), label="rubric-v2 gate-health fail", n_resamples=300)
    fig = af.plot_forest(rates)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0].startswith("pooled (120/1900, 9 repositories)")
    assert r"\$mono\$ (0/1500)" in labels  # literal text, never mathtext
    colors = {
        lab: tuple(c) for lab, c in zip(labels[1:], ax.collections[1].get_facecolors(), strict=True)
    }
    red = tuple(np.round(colors[r"\$mono\$ (0/1500)"][:3], 3))
    assert red == (round(0xC4 / 255, 3), round(0x4E / 255, 3), round(0x52 / 255, 3))
    assert "I² = " in ax.get_title()
    fig.savefig(tmp_path / "forest.png")
    few = af.plot_forest(rates, max_rows=3)
    assert (
        len(few.axes[0].get_yticklabels()) == 4 and "3 of 9 repositories" in few.axes[0].get_title()
    )
    assert not math.isnan(rates.statistic or math.nan)
