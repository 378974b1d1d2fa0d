"""The vectorized bootstrap: resample weights, exactness against a naive loop, BCa against
scipy.stats.bootstrap, cluster resampling, chunking and degenerate cases."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats import inter_rater as smir

from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.stats import bootstrap as bs
from evalkit.stats import cohen_kappa, fleiss_kappa, gwet_ac1, krippendorff_alpha, resample_weights


def _two_raters(n: int = 80, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n)
    noisy = np.where(rng.random(n) < 0.35, rng.integers(0, 3, n), truth)
    return np.column_stack([truth, noisy])


class TestResampleWeights:
    def test_shape_and_row_sums(self) -> None:
        w = resample_weights(17, 50, np.random.default_rng(0))
        assert w.shape == (50, 17) and np.issubdtype(w.dtype, np.integer)
        assert np.all(w.sum(axis=1) == 17) and np.all(w >= 0)

    def test_seed_reproducible(self) -> None:
        assert np.array_equal(resample_weights(9, 20, 5), resample_weights(9, 20, 5))
        assert not np.array_equal(resample_weights(9, 20, 5), resample_weights(9, 20, 6))

    def test_clusters_drawn_whole(self) -> None:
        clusters = ["s1", "s1", "s2", "s3", "s3", "s3"]
        w = resample_weights(6, 200, 1, clusters=clusters)
        assert np.all(w[:, 0] == w[:, 1]) and np.all(w[:, 3] == w[:, 4])
        assert np.all(w[:, 4] == w[:, 5])
        # three clusters drawn three times: per resample the cluster counts sum to 3
        assert np.all(w[:, 0] + w[:, 2] + w[:, 3] == 3)

    def test_uniform_marginals(self) -> None:
        # each item is drawn Binomial(n, 1/n) times: mean 1
        w = resample_weights(10, 20000, 7)
        assert np.allclose(w.mean(axis=0), 1.0, atol=0.03)

    @pytest.mark.parametrize(
        ("args", "match"),
        [((0, 5, 1), "n_items"), ((5, 0, 1), "n_resamples"), ((3, 5, "x"), "rng")],
    )
    def test_errors(self, args: tuple, match: str) -> None:
        with pytest.raises(EvalkitError, match=match):
            resample_weights(*args)

    def test_cluster_length_error(self) -> None:
        with pytest.raises(EvalkitError, match="clusters"):
            resample_weights(4, 5, 1, clusters=[1, 2])


class TestExactness:
    def test_vectorized_equals_naive_loop_fleiss(self) -> None:
        rng = np.random.default_rng(8)
        x = rng.integers(0, 3, size=(40, 5))
        w = resample_weights(40, 200, 9)
        fast = fleiss_kappa(x).bootstrap(weights=w).distribution
        naive = [smir.fleiss_kappa(smir.aggregate_raters(x[np.repeat(np.arange(40), row)])[0])
                 for row in w]  # fmt: skip
        assert np.allclose(fast, naive, atol=1e-13, rtol=0)

    def test_vectorized_equals_naive_loop_with_missing(self) -> None:
        rng = np.random.default_rng(1)
        x = rng.integers(1, 5, size=(30, 4)).astype(float)
        x[rng.random(x.shape) < 0.2] = np.nan
        w = resample_weights(krippendorff_alpha(x).n, 100, 2)
        for fn in (lambda d: krippendorff_alpha(d, "ordinal"), gwet_ac1):
            res = fn(x)
            keep = np.sum(~np.isnan(x), axis=1) >= (2 if res.name.startswith("Kripp") else 1)
            used = x[keep]
            fast = res.bootstrap(weights=w[:, : res.n]).distribution
            naive = [fn(used[np.repeat(np.arange(res.n), row)]).statistic for row in w[:, : res.n]]
            assert np.allclose(fast, naive, atol=1e-12, rtol=0)

    def test_chunking_does_not_change_the_draws(self, monkeypatch: pytest.MonkeyPatch) -> None:
        res = fleiss_kappa(np.random.default_rng(2).integers(0, 3, size=(200, 4)))
        whole = res.bootstrap(500, rng=4).distribution
        monkeypatch.setattr(bs, "_MAX_CHUNK_BYTES", 8 * 200 * 7)  # force chunks of a few rows
        chunked = res.bootstrap(500, rng=4).distribution
        assert np.array_equal(whole, chunked)

    def test_cluster_bootstrap_equals_naive(self) -> None:
        x = _two_raters(30)
        clusters = np.arange(30) // 3
        w = resample_weights(30, 100, 3, clusters=clusters)
        fast = cohen_kappa(x).bootstrap(weights=w).distribution
        naive = [smir.cohens_kappa(smir.to_table(x[np.repeat(np.arange(30), row)], bins=3)[0]).kappa
                 for row in w]  # fmt: skip
        assert np.allclose(fast, naive, atol=1e-13)

    def test_bca_acceleration_matches_jackknife_loop(self) -> None:
        x = _two_raters(50)
        boot = cohen_kappa(x).bootstrap(2000, rng=1)
        jack = np.array([cohen_kappa(np.delete(x, i, axis=0)).statistic for i in range(50)])
        dev = jack.mean() - jack
        a = np.sum(dev**3) / (6 * np.sum(dev**2) ** 1.5)  # Efron & Tibshirani (1993) 14.15
        assert boot.acceleration == pytest.approx(a, abs=1e-12)


class TestAgainstScipy:
    @pytest.mark.slow
    def test_bca_matches_scipy_bootstrap(self) -> None:
        x = _two_raters(60, seed=12)

        def kappa_of(idx: np.ndarray) -> float:
            table = smir.to_table(x[idx.astype(int)], bins=3)[0]
            return float(smir.cohens_kappa(table, return_results=False))

        ref = stats.bootstrap(
            (np.arange(60),), kappa_of, vectorized=False, n_resamples=4000, method="BCa",
            rng=np.random.default_rng(0),
        )  # fmt: skip
        ours = cohen_kappa(x).confidence_interval(method="bca", n_resamples=40000, rng=1)
        # Monte Carlo tolerance: scipy's endpoints from 4000 resamples have an MC SE of about
        # 0.004 (bootstrap SE ~0.08); 0.25 * SE ~ 0.02 is about five MC SEs
        se = ref.standard_error
        assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.25 * se)
        assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.25 * se)

    @pytest.mark.slow
    def test_percentile_matches_scipy(self) -> None:
        x = _two_raters(60, seed=13)

        def kappa_of(idx: np.ndarray) -> float:
            table = smir.to_table(x[idx.astype(int)], bins=3)[0]
            return float(smir.cohens_kappa(table, return_results=False))

        ref = stats.bootstrap(
            (np.arange(60),), kappa_of, vectorized=False, n_resamples=4000,
            method="percentile", rng=np.random.default_rng(0),
        )  # fmt: skip
        ours = cohen_kappa(x).bootstrap(40000, rng=2, method="percentile")
        se = ref.standard_error
        assert ours.standard_error == pytest.approx(se, rel=0.08)
        assert ours.confidence_interval.low == pytest.approx(
            ref.confidence_interval.low, abs=0.25 * se
        )
        assert ours.confidence_interval.high == pytest.approx(
            ref.confidence_interval.high, abs=0.25 * se
        )


class TestDegenerate:
    def test_undefined_resamples_are_counted_and_warned(self) -> None:
        x = [[0, 0]] * 9 + [[1, 1]]
        res = cohen_kappa(x)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            boot = res.bootstrap(999, rng=1)
        assert any("undefined in" in str(w.message) for w in caught)
        assert all(issubclass(w.category, DegenerateDataWarning) for w in caught)
        assert boot.n_undefined > 0
        assert boot.distribution.size == 999 - boot.n_undefined
        assert not np.any(np.isnan(boot.distribution))

    def test_point_distribution_gives_point_interval(self) -> None:
        x = [[0, 0]] * 10 + [[1, 1]] * 10
        with pytest.warns(DegenerateDataWarning, match="every bootstrap resample"):
            ci = cohen_kappa(x).confidence_interval(method="bca", n_resamples=500, rng=1)
        assert ci == (1.0, 1.0)

    def test_undefined_statistic_gives_none_interval(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            res = fleiss_kappa([["a", "a", "a"]] * 4)
        with pytest.warns(DegenerateDataWarning):
            ci = res.confidence_interval(method="percentile", n_resamples=100, rng=1)
        assert ci == (None, None)
        low, high = ci  # unpacks like a tuple
        assert low is None and high is None

    def test_bad_arguments(self) -> None:
        res = cohen_kappa(_two_raters(20))
        with pytest.raises(EvalkitError, match="level"):
            res.confidence_interval(level=1.5)
        with pytest.raises(EvalkitError, match="method"):
            res.confidence_interval(method="basic")  # type: ignore[arg-type]
        with pytest.raises(EvalkitError, match="weights"):
            res.bootstrap(weights=np.ones((3, 7), dtype=int))


def test_generic_bootstrap_sums_mean() -> None:
    # the bootstrap of a mean (sum / count) against scipy's percentile interval
    rng = np.random.default_rng(0)
    y = rng.exponential(size=80)
    suff = np.column_stack([y, np.ones_like(y)])
    boot = bs.bootstrap_sums(suff, lambda s: s[..., 0] / s[..., 1], n_resamples=40000, rng=3)
    ref = stats.bootstrap(
        (y,), np.mean, n_resamples=40000, method="BCa", rng=np.random.default_rng(1)
    )
    se = ref.standard_error
    assert boot.confidence_interval.low == pytest.approx(ref.confidence_interval.low, abs=0.1 * se)
    assert boot.confidence_interval.high == pytest.approx(
        ref.confidence_interval.high, abs=0.1 * se
    )


def test_clusters_per_input_row_follow_dropped_items() -> None:
    # items 2 and 5 lack a second rating, so Cohen's kappa uses 6 of the 8 input rows;
    # clusters given per input row must equal clusters given per item used
    x = [[0, 0], [1, 1], [0, None], [1, 0], [0, 0], [None, 1], [1, 1], [0, 1]]
    sessions = ["a", "a", "b", "b", "c", "c", "d", "d"]
    used = [s for s, row in zip(sessions, x, strict=True) if None not in row]
    res = cohen_kappa(x)
    assert res.n == 6
    with warnings.catch_warnings():
        # with 4 clusters a few resamples hold one category only (expected, and warned)
        warnings.simplefilter("ignore", DegenerateDataWarning)
        by_input = res.bootstrap(300, rng=5, clusters=sessions).distribution
        by_item = res.bootstrap(300, rng=5, clusters=used).distribution
    assert np.array_equal(by_input, by_item)
    with pytest.raises(EvalkitError, match="clusters"):
        res.bootstrap(10, rng=1, clusters=["a"] * 7)


def test_collapsed_draws_have_the_item_level_distribution() -> None:
    # merging identical items must not change the bootstrap law: compare the default path with
    # explicit item-level resample weights on the same data (two independent Monte Carlo runs)
    x = _two_raters(120, seed=21)
    res = cohen_kappa(x)
    collapsed = res.bootstrap(20000, rng=1).distribution
    item_level = res.bootstrap(weights=resample_weights(120, 20000, 2)).distribution
    assert collapsed.mean() == pytest.approx(item_level.mean(), abs=3e-3)
    assert collapsed.std() == pytest.approx(item_level.std(), rel=0.03)
    ks = stats.ks_2samp(collapsed, item_level)
    assert ks.pvalue > 0.001


def test_rng_forms() -> None:
    res = cohen_kappa(_two_raters(30))
    a = res.bootstrap(200, rng=np.random.default_rng(3)).distribution
    b = res.bootstrap(200, rng=3).distribution
    assert np.array_equal(a, b)
    with pytest.raises(EvalkitError, match="rng"):
        res.bootstrap(200, rng=-1)
