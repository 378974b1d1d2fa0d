"""The anytime-valid confidence sequence (evalkit.stats.confidence_sequence).

Checked three ways: against values of the reference implementation of the same construction
(confseq, Howard, Waudby-Smith & Ramdas), against a second implementation written here from
the paper's formula (root-finding on a grid, a different parametrization), and by seeded
simulation of the acceptance figures of issue 22 (marked slow: CI runs them).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import betaln
from scipy.stats import norm

from evalkit.errors import EvalkitError
from evalkit.stats import ConfidenceSequence, confidence_sequence, wilson_interval
from evalkit.stats.sequential import mixture_kappa

# confseq 0.0.11 (github.com/gostevehoward/confseq, Howard, Waudby-Smith & Ramdas),
# confseq.boundaries.bernoulli_confidence_interval(S, n, alpha, t_opt, alpha_opt=alpha): the
# two-sided beta-binomial mixture of Howard et al. (2021), Prop. 7. confseq's sdist does not
# build on Python 3.11 with its pinned pybind11, so it is no test dependency; these values were
# printed by it once (built by hand with a current pybind11 and Boost 1.74).
# (S, n, t_opt, alpha, lower, upper)
CONFSEQ_VALUES = [
    (2, 10, 100.0, 0.05, 0.0014645523046134202, 0.7661029337632498),
    (2, 10, 400.0, 0.1, 0.0013496272991282865, 0.8840408495445446),
    (32, 40, 100.0, 0.05, 0.5674479373465148, 0.946954660081974),
    (32, 40, 400.0, 0.05, 0.5002130534088791, 0.9570971971443214),
    (1, 100, 100.0, 0.05, 0.0, 0.0694482852249854),
    (10, 100, 100.0, 0.1, 0.034369266890939804, 0.20002785595848993),
    (40, 400, 100.0, 0.05, 0.058347088204618563, 0.1527792018983405),
    (80, 400, 400.0, 0.1, 0.14816213110343596, 0.2584548711902243),
    (100, 1000, 100.0, 0.05, 0.07139314472437945, 0.133425771731288),
    (300, 1000, 400.0, 0.05, 0.25649341508465107, 0.3456913762134036),
    (200, 100000, 100.0, 0.05, 0.0014620874632773847, 0.0026334525891044897),
    (5, 1000000, 100.0, 0.05, 6.203619065633604e-08, 2.38761090630093e-05),
]


def _band_at(s: int, n: int, alpha: float = 0.05, optimize_at: float = 100.0) -> tuple:
    cs = confidence_sequence([True] * s + [False] * (n - s), alpha=alpha, optimize_at=optimize_at)
    return cs.interval()


@pytest.mark.parametrize(("s", "n", "t_opt", "alpha", "low", "high"), CONFSEQ_VALUES)
@pytest.mark.slow
def test_the_reference_implementations_values(
    s: int, n: int, t_opt: float, alpha: float, low: float, high: float
) -> None:
    got = _band_at(s, n, alpha, t_opt)
    # confseq bisects to 40 bits; relative to the bound, plus a floor for bounds at 0
    assert got.low == pytest.approx(low, rel=1e-9, abs=1e-15)
    assert got.high == pytest.approx(high, rel=1e-9)


# --------------------------------------------------------------------- a second implementation


def _log_mixture(p: float, s: int, n: int, alpha: float, t_opt: float) -> float:
    """log M_n(p) in the paper's sub-Bernoulli form (Howard et al. 2021, Prop. 7).

    With range parameters g = p, h = 1 - p, the centred sum S_n - n p and the intrinsic time
    v = n p (1 - p); the mixing prior's ``r`` from the optimal ``rho`` of the two-sided normal
    mixture at ``v_opt = p (1 - p) t_opt`` (the paper's tuning, as confseq does it).
    """
    g, h = p, 1 - p
    centred, v = s - n * p, n * p * (1 - p)
    log_inv = math.log(1 / alpha)
    rho = g * h * t_opt / (2 * log_inv + math.log(1 + 2 * log_inv))
    r = max(rho - g * h, 1e-3 * g * h)
    return (
        v / (g * h) * math.log(g + h)
        - (v + h * centred) / (h * (g + h)) * math.log(g)
        - (v - g * centred) / (g * (g + h)) * math.log(h)
        + betaln((r + v - g * centred) / (g * (g + h)), (r + v + h * centred) / (h * (g + h)))
        - betaln(r / (g * (g + h)), r / (h * (g + h)))
    )


def _reference_band(s: int, n: int, alpha: float, t_opt: float) -> tuple[float, float]:
    """The set {p : M_n(p) < 1/alpha} by a grid scan, its two ends refined by Brent's method."""
    grid = np.concatenate([np.geomspace(1e-12, 0.5, 1500), 1 - np.geomspace(0.5, 1e-12, 1500)])
    inside = np.array([_log_mixture(p, s, n, alpha, t_opt) < math.log(1 / alpha) for p in grid])
    hits = np.flatnonzero(inside)
    assert hits.size and np.all(np.diff(hits) == 1), "the set is one interval on the grid"

    def f(p: float) -> float:
        return _log_mixture(p, s, n, alpha, t_opt) - math.log(1 / alpha)

    lo_i, hi_i = int(hits[0]), int(hits[-1])
    low = 0.0 if lo_i == 0 else brentq(f, grid[lo_i - 1], grid[lo_i], xtol=1e-15, rtol=1e-13)
    high = (
        1.0
        if hi_i == grid.size - 1
        else brentq(f, grid[hi_i], grid[hi_i + 1], xtol=1e-15, rtol=1e-13)
    )
    return low, high


@pytest.mark.slow
def test_a_second_implementation_from_the_papers_formula() -> None:
    rng = np.random.default_rng(22)
    checked = 0
    for _ in range(60):
        n = int(rng.choice([3, 10, 40, 150, 400, 2000, 20000]))
        s = int(rng.integers(0, n + 1)) if rng.random() < 0.7 else int(rng.choice([0, 1, 2, n]))
        alpha = float(rng.choice([0.01, 0.05, 0.1, 0.2]))
        t_opt = float(rng.choice([20.0, 100.0, 500.0]))
        want = _reference_band(s, n, alpha, t_opt)
        got = _band_at(s, n, alpha, t_opt)
        # a grid end at 1e-12 is "0" to the scan: compare the tiny ends absolutely
        assert got.low == pytest.approx(want[0], rel=1e-8, abs=2e-12)
        assert got.high == pytest.approx(want[1], rel=1e-8, abs=2e-12)
        checked += 1
    assert checked == 60


def test_mixture_kappa_is_the_papers_rho_over_the_variance() -> None:
    # rho / (p (1 - p)) - 1 for rho = v_opt / (2 log(1/a) + log(1 + 2 log(1/a))), at a = 0.05
    assert mixture_kappa(0.05, 100.0) == pytest.approx(
        100 / (2 * math.log(20) + math.log(1 + 2 * math.log(20))) - 1, rel=1e-15
    )
    assert mixture_kappa(0.05, 1.0) == 1e-3  # the paper's floor r >= 1e-3 g h


# --------------------------------------------------------------------------- the result


def test_unmeasured_outcomes_are_skipped_and_counted_never_a_zero() -> None:
    with_gaps = [True, None, False, float("nan"), True, None, False]
    cs = confidence_sequence(with_gaps)
    plain = confidence_sequence([True, False, True, False])
    assert cs.n == 4 and cs.unmeasured == 3
    assert cs.positions.tolist() == [0, 2, 4, 6]
    assert cs.fires.tolist() == [1, 1, 2, 2]
    assert cs.estimate.tolist() == [1.0, 0.5, 2 / 3, 0.5]
    np.testing.assert_array_equal(cs.lower, plain.lower)
    np.testing.assert_array_equal(cs.upper, plain.upper)
    # had the None been zeros, the rate would be lower
    zeros = confidence_sequence([True, False, False, False, True, False, False])
    assert zeros.estimate[-1] < cs.estimate[-1]


def test_the_band_depends_only_on_the_counts_and_holds_the_estimate() -> None:
    rng = np.random.default_rng(5)
    x = rng.random(300) < 0.2
    a, b = confidence_sequence(x), confidence_sequence(rng.permutation(x))
    assert a.interval() == b.interval()
    assert np.all(a.lower <= a.estimate) and np.all(a.estimate <= a.upper)
    assert np.all((a.lower >= 0) & (a.upper <= 1))


def test_no_outcome_gives_no_band() -> None:
    cs = confidence_sequence([None, None])
    assert cs.n == 0 and cs.unmeasured == 2
    assert cs.interval() == (None, None)
    assert cs.first_above(0.1) is None and cs.first_below(0.1) is None


def test_first_crossings_are_the_first_n_past_the_rate() -> None:
    x = [True] * 30 + [False] * 400
    cs = confidence_sequence(x)
    k = cs.first_above(0.1)
    assert k is not None and cs.lower[k - 1] > 0.1 and np.all(cs.lower[: k - 1] <= 0.1)
    j = confidence_sequence([False] * 2000).first_below(0.01)
    assert j is not None and confidence_sequence([False] * j).upper[-1] < 0.01
    assert confidence_sequence([False] * (j - 1)).upper[-1] >= 0.01


def test_it_is_wider_than_the_fixed_n_wilson_interval() -> None:
    # the price of looking after every outcome (docs/MONITOR.md tabulates it)
    for s, n in [(0, 10), (1, 10), (4, 40), (40, 400), (100, 1000), (3000, 30000)]:
        cs, w = _band_at(s, n), wilson_interval(s, n)
        assert cs.low <= w.low and cs.high >= w.high
        assert cs.high - cs.low > w.high - w.low


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ([True, 1], r"outcomes\[1\] is 1"),
        ([True, "yes"], r"outcomes\[1\] is 'yes'"),
        ("TFT", "sequence of True, False or None"),
        (5, "sequence of True, False or None"),
        (np.zeros((2, 2), dtype=bool), "one-dimensional"),
    ],
)
def test_bad_outcomes_are_named(bad: object, match: str) -> None:
    with pytest.raises(EvalkitError, match=match):
        confidence_sequence(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"alpha": 0}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"alpha": True}, "alpha"),
        ({"optimize_at": 0}, "optimize_at"),
        ({"optimize_at": float("inf")}, "optimize_at"),
    ],
)
def test_bad_arguments_are_named(kw: dict, match: str) -> None:
    with pytest.raises(EvalkitError, match=match):
        confidence_sequence([True], **kw)


def test_bad_rates_and_ns_are_named() -> None:
    cs = confidence_sequence([True, False])
    with pytest.raises(EvalkitError, match="rate"):
        cs.first_above(1.5)
    with pytest.raises(EvalkitError, match="n must be"):
        cs.interval(3)
    assert isinstance(cs, ConfidenceSequence) and cs.interval(0) == (None, None)


# ------------------------------------------------- seeded simulations (issue 22's acceptance)

_LOOKS = 1000
_STREAMS = 10_000


@cache
def _band_table() -> tuple[np.ndarray, np.ndarray]:
    """lower[S, n], upper[S, n] for every n <= 1000, built through confidence_sequence.

    The band depends only on (S, n) (tested above); the stream "S Trues, then Falses" visits
    (S, n) for every n >= S, so 1001 streams give the whole table.
    """
    lo = np.full((_LOOKS + 1, _LOOKS + 1), np.nan)
    hi = np.full((_LOOKS + 1, _LOOKS + 1), np.nan)
    n = np.arange(1, _LOOKS + 1)
    for s in range(_LOOKS + 1):
        x = np.zeros(_LOOKS, dtype=bool)
        x[:s] = True
        cs = confidence_sequence(x)
        lo[cs.fires, n], hi[cs.fires, n] = cs.lower, cs.upper
    return lo, hi


def _running_counts(p: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.random((_STREAMS, _LOOKS)) < p, axis=1)


def _wilson_lower(s: np.ndarray, n: np.ndarray) -> np.ndarray:
    z = norm.isf(0.025)
    p = s / n
    d = 1 + z * z / n
    return (p + z * z / (2 * n)) / d - z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d


@pytest.mark.slow
def test_false_broken_alarms_at_exactly_the_ceiling_with_a_look_after_every_session() -> None:
    lo, _ = _band_table()
    s = _running_counts(0.10, seed=2201)
    n = np.arange(1, _LOOKS + 1)
    cs_alarm = float(np.mean((lo[s, n] > 0.10).any(axis=1)))
    wilson_alarm = float(np.mean((_wilson_lower(s, n) > 0.10).any(axis=1)))
    print(f"false broken: confidence sequence {cs_alarm:.4f}, Wilson peeking {wilson_alarm:.4f}")
    assert cs_alarm <= 0.05
    assert wilson_alarm > 0.25  # the contrast: peeking at a fixed-n interval
    # 10,000 streams: Monte Carlo SE of a 5% rate is 0.0022, so a true 5.9% would fail here


@pytest.mark.slow
@pytest.mark.parametrize(("p", "seed"), [(0.02, 2202), (0.30, 2203)])
def test_time_uniform_coverage(p: float, seed: int) -> None:
    lo, hi = _band_table()
    s = _running_counts(p, seed)
    n = np.arange(1, _LOOKS + 1)
    covered = float(np.mean(((lo[s, n] <= p) & (hi[s, n] >= p)).all(axis=1)))
    print(f"time-uniform coverage at {p}: {covered:.4f}")
    assert covered >= 0.95


@pytest.mark.slow
def test_a_doubled_rate_is_detected_within_400_sessions() -> None:
    lo, _ = _band_table()
    s = _running_counts(0.20, seed=2204)[:, :400]
    n = np.arange(1, 401)
    detected = float(np.mean((lo[s, n] > 0.10).any(axis=1)))
    print(f"10% -> 20%: broken within 400 sessions in {detected:.4f} of streams")
    assert detected >= 0.90


def test_the_price_at_400_sessions() -> None:
    cs, w = _band_at(40, 400), wilson_interval(40, 400)
    ratio = (cs.high - cs.low) / (w.high - w.low)
    assert ratio <= 1.9  # measured 1.600
