"""Agreement statistics against published values (source beside every number) and against a
second implementation (statsmodels, the krippendorff package) on random data."""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np
import pytest
from statsmodels.stats import inter_rater as smir

from evalkit.errors import DegenerateDataWarning
from evalkit.stats import (
    brennan_prediger,
    cohen_kappa,
    conger_kappa,
    fleiss_kappa,
    gwet_ac1,
    kappa_max,
    krippendorff_alpha,
    light_kappa,
    pabak,
    specific_agreement,
)

# Fleiss (1971) psychiatric diagnoses, 30 patients x 6 raters, categories 1..5: the raw table
# of R irr's `diagnoses` (also statsmodels/stats/tests/test_inter_rater.py)
DIAGNOSES = np.array(
    [
        [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
    ]
)  # fmt: skip

# Krippendorff (2011) "Computing Krippendorff's alpha-reliability", reliability data with
# missing values: 4 observers x 12 units, here one row per unit (also Gwet 2014, Handbook,
# p. 120, R irrCAC `cac.raw4raters`)
KRIPP = [
    [1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5], [None, None, 1, 1],
    [None, None, 3, None],
]  # fmt: skip

# Wikipedia "Fleiss' kappa" worked example: 10 items x 5 categories, 14 raters each
WIKI_COUNTS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]  # fmt: skip

# SAS PROC FREQ documentation example (AGREE option), 3 x 3 table; statsmodels reproduces it
SAS_TABLE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]

# Gwet (2014) Handbook / R irrCAC `cont3x3abstractors` and `cont4x4diagnosis` tables
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
DIAG4X4 = [[40, 4, 4, 17], [6, 25, 2, 13], [4, 1, 21, 12], [15, 5, 9, 45]]


class TestFleissKappa:
    def test_diagnoses_r_irr(self) -> None:
        res = fleiss_kappa(DIAGNOSES)
        # R irr: kappam.fleiss(diagnoses) -> Kappa = 0.4302445, z = 17.65183 (statsmodels tests)
        assert res.statistic == pytest.approx(0.4302445, abs=5e-8)
        assert res.z == pytest.approx(17.65183, abs=5e-5)
        assert res.n == 30 and res.n_raters == 6

    def test_diagnoses_per_category_r_irr(self) -> None:
        res = fleiss_kappa(DIAGNOSES)
        # R irr kappam.fleiss(diagnoses, detail=TRUE), per category Kappa and z:
        # 1 Depression 0.245 5.192; 2 Personality Disorder 0.245 5.192; 3 Schizophrenia
        # 0.520 11.031; 4 Neurosis 0.471 9.994; 5 Other 0.566 12.009
        expected = {1: (0.245, 5.192), 2: (0.245, 5.192), 3: (0.520, 11.031),
                    4: (0.471, 9.994), 5: (0.566, 12.009)}  # fmt: skip
        for cat, (kap, z) in expected.items():
            assert res.per_category[cat].statistic == pytest.approx(kap, abs=5e-4)
            assert res.per_category[cat].z == pytest.approx(z, abs=5e-3)
        # SE under H0 per category, Fleiss (1971): sqrt(2 / (N m (m - 1))) = sqrt(2 / 900)
        assert res.per_category[3].standard_error == pytest.approx((2 / 900) ** 0.5)

    def test_diagnoses_counts_form_matches_ratings(self) -> None:
        counts, _ = smir.aggregate_raters(DIAGNOSES)
        assert fleiss_kappa(counts=counts).statistic == pytest.approx(
            fleiss_kappa(DIAGNOSES).statistic, abs=1e-14
        )

    def test_wikipedia_example(self) -> None:
        # Wikipedia, "Fleiss' kappa", worked example: kappa = 0.210
        assert fleiss_kappa(counts=WIKI_COUNTS).statistic == pytest.approx(0.210, abs=5e-4)

    def test_irrcac_raw4raters(self) -> None:
        res = fleiss_kappa(KRIPP)
        # R irrCAC fleiss.kappa.raw(cac.raw4raters) (Python port doctest): coeff 0.76117,
        # se 0.15302, CI (0.42438, 1), pa 0.81818, pe 0.23872
        assert res.statistic == pytest.approx(0.76117, abs=5e-6)
        assert res.standard_error == pytest.approx(0.15302, abs=5e-6)
        assert res.observed_agreement == pytest.approx(0.81818, abs=5e-6)
        assert res.chance_agreement == pytest.approx(0.23872, abs=5e-6)
        low, high = res.confidence_interval()
        assert low == pytest.approx(0.42438, abs=5e-6) and high == 1.0

    def test_counts_with_unequal_raters_per_item_as_irrcac(self) -> None:
        # cac.raw4raters as counts: items rated by 4, 3, 2 and 1 raters. R irrCAC
        # fleiss.kappa.dist (the counts form: ri.vec per row, pa over rows with >= 2 ratings,
        # pi averaged over all rows) and fleiss.kappa.raw give the same: coeff 0.76117,
        # se 0.15302, pa 0.81818, pe 0.23872 (values as in test_irrcac_raw4raters)
        labels = [1, 2, 3, 4, 5]
        counts = [[row.count(c) for c in labels] for row in KRIPP]
        assert len({sum(row) for row in counts}) == 4  # really unequal rater counts
        res = fleiss_kappa(counts=counts, categories=labels)
        assert res.statistic == pytest.approx(0.76117, abs=5e-6)
        assert res.standard_error == pytest.approx(0.15302, abs=5e-6)
        assert res.observed_agreement == pytest.approx(0.81818, abs=5e-6)
        assert res.chance_agreement == pytest.approx(0.23872, abs=5e-6)

    def test_counts_with_unequal_raters_worked_by_hand(self) -> None:
        # counts [[3, 0], [1, 1]]: pa = (6/6 + 0/2) / 2 = 1/2; pi = ((1 + 1/2) / 2,
        # (0 + 1/2) / 2) = (3/4, 1/4), pe = 10/16; kappa = (1/2 - 5/8) / (3/8) = -1/3
        res = fleiss_kappa(counts=[[3, 0], [1, 1]])
        assert res.statistic == pytest.approx(-1 / 3, abs=1e-12)
        assert res.n_raters == 3

    @pytest.mark.parametrize(
        ("weights", "coef", "se"),
        # irrCAC fleiss.kappa.raw(cac.raw4raters, weights=...), irrCAC port tests (3 digits)
        [("linear", 0.818, 0.149), ("quadratic", 0.865, 0.146)],
    )
    def test_irrcac_weighted(self, weights: str, coef: float, se: float) -> None:
        res = fleiss_kappa(KRIPP, weights=weights)
        assert round(res.statistic, 3) == coef
        assert round(res.standard_error, 3) == se

    def test_statsmodels_random(self) -> None:
        rng = np.random.default_rng(11)
        for _ in range(20):
            k = int(rng.integers(2, 6))
            ratings = rng.integers(0, k, size=(int(rng.integers(5, 60)), int(rng.integers(2, 8))))
            counts, _ = smir.aggregate_raters(ratings)
            ours = fleiss_kappa(ratings).statistic
            assert ours == pytest.approx(smir.fleiss_kappa(counts), abs=1e-12)


class TestCohenKappa:
    def test_sas_unweighted(self) -> None:
        res = cohen_kappa(table=SAS_TABLE)
        # SAS PROC FREQ "Simple Kappa Coefficient" printout (statsmodels TestUnweightedCohens):
        # Kappa 0.4842, ASE 0.1380, 95% CL 0.2137 0.7547, ASE under H0 0.1484, Z 3.2626,
        # two-sided Pr > |Z| 0.0011
        assert res.statistic == pytest.approx(0.4842, abs=5e-5)
        assert res.standard_error == pytest.approx(0.1380, abs=5e-5)
        low, high = res.confidence_interval()
        assert low == pytest.approx(0.2137, abs=5e-5)
        assert high == pytest.approx(0.7547, abs=5e-5)
        assert res.standard_error_h0 == pytest.approx(0.1484, abs=5e-5)
        assert res.z == pytest.approx(3.2626, abs=5e-5)
        assert res.p_value == pytest.approx(0.0011, abs=5e-5)

    def test_sas_weighted(self) -> None:
        # SAS "Weighted Kappa Coefficient" (Cicchetti-Allison, i.e. linear) printout
        # (statsmodels TestWeightedCohens): 0.4701, ASE 0.1457, CL 0.1845 0.7558,
        # ASE under H0 0.1426, Z 3.2971
        for weights in ("linear", [[0, 1, 2], [1, 0, 1], [2, 1, 0]]):
            res = cohen_kappa(table=SAS_TABLE, weights=weights)
            assert res.statistic == pytest.approx(0.4701, abs=5e-5)
            assert res.standard_error == pytest.approx(0.1457, abs=5e-5)
            assert res.confidence_interval() == pytest.approx((0.1845, 0.7558), abs=5e-5)
            assert res.standard_error_h0 == pytest.approx(0.1426, abs=5e-5)
            assert res.z == pytest.approx(3.2971, abs=5e-5)

    @pytest.mark.parametrize(
        ("weights", "kappa", "z", "p"),
        [
            # R irr kappa2(anxiety[, 2:3], ...) as recorded in statsmodels test_cohens_kappa_irr
            (None, -0.006289308, -0.0604067, 0.9518317),
            ("linear", 0.1459075, 1.282472, 0.1996772),  # "equal"
            ("quadratic", 0.2520325, 1.437451, 0.1505898),  # "squared"
        ],
    )
    def test_r_irr_anxiety(self, weights: str | None, kappa: float, z: float, p: float) -> None:
        from statsmodels.stats.tests.test_inter_rater import anxiety

        res = cohen_kappa(anxiety[:, 1:3], weights=weights)
        assert res.statistic == pytest.approx(kappa, abs=5e-7)
        assert res.z == pytest.approx(z, abs=5e-6)
        assert res.p_value == pytest.approx(p, abs=5e-7)

    def test_feinstein_cicchetti_paradox(self) -> None:
        # Feinstein & Cicchetti (1990), "High agreement but low kappa: I": both tables have
        # po = 0.85, yet kappa = 0.70 and 0.32
        first = cohen_kappa(table=[[40, 9], [6, 45]])
        second = cohen_kappa(table=[[80, 10], [5, 5]])
        assert first.observed_agreement == pytest.approx(0.85)
        assert second.observed_agreement == pytest.approx(0.85)
        assert round(first.statistic, 2) == 0.70
        assert round(second.statistic, 2) == 0.32

    def test_gwet_table_4x4(self) -> None:
        # Gwet (2014) / R irrCAC kappa2.table(cont4x4diagnosis): 0.432, se 0.046
        res = cohen_kappa(table=DIAG4X4)
        assert round(res.statistic, 3) == 0.432
        assert round(res.standard_error, 3) == 0.046

    def test_statsmodels_random(self) -> None:
        rng = np.random.default_rng(5)
        for _ in range(25):
            k = int(rng.integers(2, 6))
            table = rng.integers(0, 12, size=(k, k)) + 4 * np.eye(k, dtype=int)
            for ours_w, sm_kw in ((None, {}), ("linear", {"wt": "linear"}),
                                  ("quadratic", {"wt": "quadratic"})):  # fmt: skip
                ours = cohen_kappa(table=table, weights=ours_w)
                ref = smir.cohens_kappa(table, **sm_kw)
                assert ours.statistic == pytest.approx(ref.kappa, abs=1e-12)
                assert ours.standard_error == pytest.approx(ref.std_kappa, abs=1e-12)
                assert ours.standard_error_h0 == pytest.approx(ref.std_kappa0, abs=1e-12)

    def test_ratings_equal_table(self) -> None:
        rng = np.random.default_rng(2)
        x = rng.integers(0, 3, size=(40, 2))
        table = np.zeros((3, 3))
        np.add.at(table, (x[:, 0], x[:, 1]), 1)
        a, b = cohen_kappa(x), cohen_kappa(table=table)
        assert a.statistic == pytest.approx(b.statistic, abs=1e-14)
        assert a.standard_error == pytest.approx(b.standard_error, abs=1e-14)


class TestKrippendorff:
    @pytest.mark.parametrize(
        ("level", "expected", "se"),
        [
            # Krippendorff (2011), worked example with missing values: nominal 0.743,
            # ordinal 0.815, interval 0.849, ratio 0.797. SEs: R irrCAC krippen.alpha.raw
            # (cac.raw4raters) with identity / quadratic / ratio weights: 0.146, 0.129, 0.140
            ("nominal", 0.743, 0.146),
            ("ordinal", 0.815, None),
            ("interval", 0.849, 0.129),
            ("ratio", 0.797, 0.140),
        ],
    )
    def test_published(self, level: str, expected: float, se: float | None) -> None:
        res = krippendorff_alpha(KRIPP, level)
        assert round(res.statistic, 3) == expected
        assert res.n == 11  # unit 12 has a single rating: not pairable
        if se is not None:
            assert round(res.standard_error, 3) == se

    def test_irrcac_interval(self) -> None:
        # irrCAC krippen.alpha.raw(cac.raw4raters): CI (0.419, 1) nominal
        low, high = krippendorff_alpha(KRIPP).confidence_interval()
        assert round(low, 3) == 0.419 and high == 1.0

    @pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
    def test_against_krippendorff_package(self, level: str) -> None:
        rng = np.random.default_rng(21)
        for _ in range(15):
            n, r = int(rng.integers(4, 40)), int(rng.integers(2, 6))
            x = rng.integers(1, 6, size=(n, r)).astype(float)
            x[rng.random((n, r)) < 0.2] = np.nan
            if (np.sum(~np.isnan(x), axis=1) >= 2).sum() == 0 or np.unique(
                x[~np.isnan(x)]
            ).size < 2:
                continue
            ref = krippendorff.alpha(reliability_data=x.T, level_of_measurement=level)
            ours = krippendorff_alpha(x, level)
            assert ours.statistic == pytest.approx(ref, abs=1e-10)


def test_krippendorff_continuous_interval_values() -> None:
    # every value distinct (q ~ n * raters): the coincidence route must not need q x q per unit
    rng = np.random.default_rng(8)
    truth = rng.normal(size=60)
    x = truth[:, None] + 0.5 * rng.normal(size=(60, 3))
    x[::5, 2] = np.nan
    ref = krippendorff.alpha(reliability_data=x.T, level_of_measurement="interval")
    ours = krippendorff_alpha(x, "interval")
    assert ours.statistic == pytest.approx(ref, abs=1e-10)
    low, high = ours.confidence_interval(method="bca", n_resamples=2000, rng=1)
    assert low < ours.statistic < high


class TestGwet:
    def test_irrcac_raw4raters(self) -> None:
        res = gwet_ac1(KRIPP)
        # R irrCAC gwet.ac1.raw(cac.raw4raters) (Python port doctest): AC1 0.77544,
        # se 0.14295, CI (0.46081, 1), pa 0.81818, pe 0.19032, p 0.00021
        assert res.statistic == pytest.approx(0.77544, abs=5e-6)
        assert res.standard_error == pytest.approx(0.14295, abs=5e-6)
        assert res.observed_agreement == pytest.approx(0.81818, abs=5e-6)
        assert res.chance_agreement == pytest.approx(0.19032, abs=5e-6)
        low, high = res.confidence_interval()
        assert low == pytest.approx(0.46081, abs=5e-6) and high == 1.0
        assert round(res.p_value, 5) == 0.00021

    @pytest.mark.parametrize(
        ("weights", "coef", "se", "low"),
        # irrCAC gwet.ac1.raw(cac.raw4raters, weights=...) (port tests, 3 digits)
        [("linear", 0.859, 0.117, 0.600), ("quadratic", 0.914, 0.104, 0.685)],
    )
    def test_irrcac_ac2(self, weights: str, coef: float, se: float, low: float) -> None:
        res = gwet_ac1(KRIPP, weights=weights)
        assert round(res.statistic, 3) == coef
        assert round(res.standard_error, 3) == se
        assert round(res.confidence_interval()[0], 3) == low

    @pytest.mark.parametrize(
        ("table", "weights", "coef", "ci"),
        [
            # irrCAC gwet.ac1.table (port tests): cont3x3abstractors 0.849 (0.764, 0.935);
            # linear 0.900 (0.842, 0.958); quadratic 0.940 (0.905, 0.976);
            # cont4x4diagnosis 0.456 (0.371, 0.542)
            (ABSTRACTORS, None, 0.849, (0.764, 0.935)),
            (ABSTRACTORS, "linear", 0.900, (0.842, 0.958)),
            (ABSTRACTORS, "quadratic", 0.940, (0.905, 0.976)),
            (DIAG4X4, None, 0.456, (0.371, 0.542)),
        ],
    )
    def test_irrcac_table(self, table, weights, coef, ci) -> None:  # type: ignore[no-untyped-def]
        res = gwet_ac1(table=table, weights=weights)
        assert round(res.statistic, 3) == coef
        low, high = res.confidence_interval()
        assert (round(low, 3), round(high, 3)) == ci

    def test_irrcac_table_se(self) -> None:
        # irrCAC gwet.ac1.table(cont4x4diagnosis): se 0.043
        assert round(gwet_ac1(table=DIAG4X4).standard_error, 3) == 0.043


class TestOtherCoefficients:
    def test_conger_irrcac(self) -> None:
        res = conger_kappa(KRIPP)
        # irrCAC conger.kappa.raw(cac.raw4raters) (port tests): pa 0.818, pe 0.233,
        # coeff 0.763, CI (0.435, 1), p 0.00034
        assert round(res.observed_agreement, 3) == 0.818
        assert round(res.chance_agreement, 3) == 0.233
        assert round(res.statistic, 3) == 0.763
        low, high = res.confidence_interval()
        assert round(low, 3) == 0.435 and high == 1.0
        assert round(res.p_value, 5) == 0.00034

    @pytest.mark.parametrize(
        ("weights", "coef", "se"),
        # irrCAC conger.kappa.raw(cac.raw4raters, weights=...) (port tests)
        [("linear", 0.814, 0.145), ("quadratic", 0.858, 0.144)],
    )
    def test_conger_weighted(self, weights: str, coef: float, se: float) -> None:
        res = conger_kappa(KRIPP, weights=weights)
        assert round(res.statistic, 3) == coef
        assert round(res.standard_error, 3) == se

    def test_conger_two_raters_is_cohen(self) -> None:
        # Conger (1980): with two raters and no missing rating, Conger's kappa is Cohen's
        rng = np.random.default_rng(4)
        x = rng.integers(0, 3, size=(50, 2))
        assert conger_kappa(x).statistic == pytest.approx(cohen_kappa(x).statistic, abs=1e-12)

    def test_brennan_prediger_irrcac(self) -> None:
        res = brennan_prediger(KRIPP)
        # irrCAC bp.coeff.raw(cac.raw4raters) (port tests): pe 0.200, coeff 0.773, se 0.145,
        # CI (0.454, 1)
        assert res.chance_agreement == pytest.approx(0.2)
        assert round(res.statistic, 3) == 0.773
        assert round(res.standard_error, 3) == 0.145
        assert round(res.confidence_interval()[0], 3) == 0.454

    def test_light_diagnoses_r_irr(self) -> None:
        # R irr: kappam.light(diagnoses) -> Light's Kappa for m Raters, Kappa = 0.459
        assert round(light_kappa(DIAGNOSES).statistic, 3) == 0.459

    def test_conger_equals_r_irr_exact_fleiss(self) -> None:
        # R irr kappam.fleiss(..., exact = TRUE) is Conger's (1980) kappa; transcribed here:
        # chanceP = sum(colSums(ttab)^2) / (ns nr)^2 - sum(apply(rtab, 2, var) (nr-1)/nr)/(nr-1)
        def irr_exact(x: np.ndarray) -> float:
            ns, nr = x.shape
            lev = np.unique(x)
            ttab = np.array([[np.sum(row == v) for v in lev] for row in x], dtype=float)
            agree = np.sum((np.sum(ttab**2, axis=1) - nr) / (nr * (nr - 1)) / ns)
            rtab = np.array([[np.mean(x[:, g] == v) for v in lev] for g in range(nr)])
            chance = np.sum(ttab.sum(axis=0) ** 2) / (ns * nr) ** 2 - np.sum(
                rtab.var(axis=0, ddof=1) * (nr - 1) / nr
            ) / (nr - 1)
            return float((agree - chance) / (1 - chance))

        assert conger_kappa(DIAGNOSES).statistic == pytest.approx(irr_exact(DIAGNOSES), abs=1e-12)
        rng = np.random.default_rng(17)
        for _ in range(10):
            x = rng.integers(0, 4, size=(int(rng.integers(6, 40)), int(rng.integers(2, 7))))
            assert conger_kappa(x).statistic == pytest.approx(irr_exact(x), abs=1e-12)

    def test_light_is_mean_of_pairwise_cohen(self) -> None:
        # Light (1971): the mean of the pairwise Cohen kappas
        pairs = [
            cohen_kappa(DIAGNOSES[:, [g, h]]).statistic for g in range(6) for h in range(g + 1, 6)
        ]
        assert light_kappa(DIAGNOSES).statistic == pytest.approx(np.mean(pairs), abs=1e-14)

    def test_pabak_feinstein_tables(self) -> None:
        # Byrt, Bishop & Carlin (1993): PABAK = 2 po - 1 = 0.70 for both Feinstein-Cicchetti
        # tables (po = 0.85); PI = |a - d| / n, BI = |b - c| / n
        first = pabak(table=[[40, 9], [6, 45]])
        second = pabak(table=[[80, 10], [5, 5]])
        assert first.statistic == pytest.approx(0.70) and second.statistic == pytest.approx(0.70)
        assert first.prevalence_index == pytest.approx(5 / 100)  # |40 - 45| / 100
        assert first.bias_index == pytest.approx(3 / 100)  # |9 - 6| / 100
        assert second.prevalence_index == pytest.approx(75 / 100)  # |80 - 5| / 100
        assert second.bias_index == pytest.approx(5 / 100)  # |10 - 5| / 100
        assert second.prevalence_index_signed == pytest.approx(0.75)
        assert first.prevalence_index_signed == pytest.approx(-0.05)
        # Byrt, Bishop & Carlin (1993): kappa = (PABAK - PI^2 + BI^2) / (1 - PI^2 + BI^2)
        for table, res in (([[40, 9], [6, 45]], first), ([[80, 10], [5, 5]], second)):
            pi2, bi2 = res.prevalence_index**2, res.bias_index**2
            kappa = (res.statistic - pi2 + bi2) / (1 - pi2 + bi2)
            assert kappa == pytest.approx(cohen_kappa(table=table).statistic, abs=1e-12)
        # binomial SE of 2 po - 1: 2 sqrt(po (1 - po) / n)
        assert second.standard_error == pytest.approx(2 * (0.85 * 0.15 / 100) ** 0.5)

    def test_specific_agreement_feinstein_tables(self) -> None:
        # Cicchetti & Feinstein (1990): ppos = 2a / (2a + b + c), pneg = 2d / (2d + b + c)
        first = specific_agreement(table=[[40, 9], [6, 45]])
        assert first.positive.statistic == pytest.approx(80 / 95)
        assert first.negative.statistic == pytest.approx(90 / 105)
        second = specific_agreement(table=[[80, 10], [5, 5]])
        assert second.statistic == pytest.approx(160 / 175)  # 0.914
        assert second.negative_agreement == pytest.approx(10 / 25)  # 0.40

    def test_specific_agreement_ratings_binary(self) -> None:
        # 0/1 labels: 1 is positive; table [[a, b], [c, d]] with a = both 1
        x = [[1, 1]] * 80 + [[1, 0]] * 10 + [[0, 1]] * 5 + [[0, 0]] * 5
        res = specific_agreement(x)
        assert res.statistic == pytest.approx(160 / 175)
        assert res.negative.statistic == pytest.approx(10 / 25)

    def test_kappa_max(self) -> None:
        # Cohen (1960): po_max = sum min(p_k., p_.k). [[80,10],[5,5]]: rows (.90,.10), cols
        # (.85,.15): po_max = .85 + .10 = .95, pe = .765 + .015 = .78, kmax = .17/.22
        res = kappa_max(table=[[80, 10], [5, 5]])
        assert res.statistic == pytest.approx(0.17 / 0.22)
        assert res.extra["kappa"] == pytest.approx(0.07 / 0.22)


def test_degenerate_rule_is_consistent() -> None:
    """Every rating the same category: statistic None, degenerate flag, a warning, no error."""
    same = [["pass"] * 3] * 6
    fns = [fleiss_kappa, gwet_ac1, brennan_prediger, conger_kappa, light_kappa, krippendorff_alpha]
    for fn in fns:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = fn(same)
        assert res.statistic is None and res.degenerate, fn.__name__
        assert any(
            issubclass(w.category, DegenerateDataWarning) and "undefined" in str(w.message)
            for w in caught
        ), fn.__name__
    with pytest.warns(DegenerateDataWarning, match="undefined"):
        res = cohen_kappa([["pass", "pass"]] * 5)
    assert res.statistic is None and res.standard_error is None
