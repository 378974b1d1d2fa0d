"""Anytime-valid confidence sequences for a stream of binary outcomes (a check's fire rate).

A fixed-n interval read after every session is no 95% interval any more (peeking); a
confidence sequence is a band, one interval per observed outcome, that holds at every n at
once: ``P(the true rate ever leaves the band) <= alpha``. ``confidence_sequence`` builds it
from the two-sided beta-binomial mixture of Howard, Ramdas, McAuliffe & Sekhon (2021,
Proposition 7) with the prior tuned for ``optimize_at`` outcomes; the choice, its price
against Wilson and the comparison with the betting sequences of Waudby-Smith & Ramdas (2024)
are in ``docs/MONITOR.md``. ``None`` outcomes are unmeasured: skipped and counted, never a
zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import EvalkitError
from evalkit.stats._inputs import is_missing
from evalkit.stats._result import ConfidenceInterval

__all__ = ["DEFAULT_OPTIMIZE_AT", "ConfidenceSequence", "confidence_sequence", "mixture_kappa"]

#: The number of outcomes the band is tightest around (Howard et al.'s ``t_opt``): the
#: geometric middle of the tens to thousands of sessions rubric work sees. docs/MONITOR.md
#: tabulates the width against Wilson from 20 to 3,000 outcomes for this and other choices.
DEFAULT_OPTIMIZE_AT = 100.0

METHOD = "two-sided beta-binomial mixture (Howard et al. 2021, Prop. 7)"

# Bounds are solved in logit space; shares below this are reported as 0 (above 1 - it, as 1).
_P_FLOOR = 1e-250
_MAX_ITERATIONS = 200


@dataclass(frozen=True, eq=False)
class ConfidenceSequence:
    """A time-uniform band over a stream: ``lower[i]``, ``upper[i]`` after ``i + 1`` outcomes.

    ``fires[i]`` counts the True outcomes among the first ``i + 1`` observed ones and
    ``estimate[i]`` is their share; ``positions[i]`` is the index in the input of the
    ``i + 1``-th observed outcome (unmeasured ``None`` entries are skipped, and counted in
    ``unmeasured``). With probability at least ``1 - alpha`` the true rate lies inside every
    interval of the band at once, so the band may be read after every outcome and a decision
    taken at any crossing (``first_above``, ``first_below``).
    """

    lower: NDArray[np.float64] = field(repr=False)
    upper: NDArray[np.float64] = field(repr=False)
    fires: NDArray[np.int64] = field(repr=False)
    positions: NDArray[np.intp] = field(repr=False)
    alpha: float
    optimize_at: float
    unmeasured: int
    method: str = METHOD

    @property
    def n(self) -> int:
        """Observed (measured) outcomes."""
        return int(self.lower.size)

    @property
    def estimate(self) -> NDArray[np.float64]:
        """The running rate ``fires / n`` after each observed outcome."""
        return self.fires / np.arange(1, self.n + 1, dtype=np.float64)

    def interval(self, n: int | None = None) -> ConfidenceInterval:
        """The band after ``n`` observed outcomes (default: all); ``(None, None)`` at n = 0."""
        n = self.n if n is None else n
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= self.n:
            raise EvalkitError(f"confidence sequence: n must be an int in [0, {self.n}], got {n!r}")
        if n == 0:
            return ConfidenceInterval(None, None)
        return ConfidenceInterval(float(self.lower[n - 1]), float(self.upper[n - 1]))

    def first_above(self, c: float) -> int | None:
        """The first n (1-based count of observed outcomes) whose lower bound is above ``c``."""
        return _first(self.lower > _check_rate(c))

    def first_below(self, c: float) -> int | None:
        """The first n (1-based count of observed outcomes) whose upper bound is below ``c``."""
        return _first(self.upper < _check_rate(c))


def _first(mask: NDArray[np.bool_]) -> int | None:
    hit = np.flatnonzero(mask)
    return int(hit[0]) + 1 if hit.size else None


def _check_rate(c: Any) -> float:
    if isinstance(c, bool) or not isinstance(c, (int, float, np.floating)) or not 0 <= c <= 1:
        raise EvalkitError(f"confidence sequence: a rate must be a number in [0, 1], got {c!r}")
    return float(c)


def mixture_kappa(alpha: float, optimize_at: float) -> float:
    """Concentration of the mixing prior ``Beta(kappa p, kappa (1 - p))`` around each ``p``.

    Howard et al.'s choice for the two-sided normal mixture, ``rho = v_opt / (2 log(1/alpha)
    + log(1 + 2 log(1/alpha)))`` at ``v_opt = p (1 - p) t_opt`` (their eq. for the optimal
    ``rho``; confseq's ``TwoSidedNormalMixture::best_rho``), carried to the beta-binomial
    mixture as ``r = rho - p (1 - p)`` (at least ``1e-3 p (1 - p)``): ``kappa = r / (p (1 -
    p))``, the same for every ``p``.
    """
    log_inv = math.log(1.0 / alpha)
    return max(optimize_at / (2.0 * log_inv + math.log1p(2.0 * log_inv)) - 1.0, 1e-3)


def _as_outcomes(outcomes: Any) -> tuple[NDArray[np.bool_], NDArray[np.intp], int]:
    """Observed outcomes as a bool array, their input positions, and the unmeasured count."""
    if isinstance(outcomes, np.ndarray) and outcomes.dtype == np.bool_:
        if outcomes.ndim != 1:
            raise EvalkitError("confidence_sequence: outcomes must be one-dimensional")
        return outcomes, np.arange(outcomes.size, dtype=np.intp), 0
    if isinstance(outcomes, (str, bytes)) or not isinstance(outcomes, Iterable):
        raise EvalkitError(
            "confidence_sequence: outcomes must be a sequence of True, False or None, "
            f"got {type(outcomes).__name__}"
        )
    values: list[bool] = []
    positions: list[int] = []
    unmeasured = 0
    for i, x in enumerate(outcomes):
        if isinstance(x, (bool, np.bool_)):
            values.append(bool(x))
            positions.append(i)
        elif is_missing(x):
            unmeasured += 1
        else:
            raise EvalkitError(
                f"confidence_sequence: outcomes[{i}] is {x!r}; expected True, False or None "
                "(None = unmeasured)"
            )
    return np.asarray(values, dtype=np.bool_), np.asarray(positions, dtype=np.intp), unmeasured


def confidence_sequence(
    outcomes: Iterable[bool | None] | NDArray[np.bool_],
    *,
    alpha: float = 0.05,
    optimize_at: float = DEFAULT_OPTIMIZE_AT,
) -> ConfidenceSequence:
    """Time-uniform ``1 - alpha`` confidence sequence for the rate of True in ``outcomes``.

    The band after ``n`` outcomes with ``S`` of them True is the set of rates ``p`` at which
    the mixture martingale ``M_n(p) = B(S + kappa p, n - S + kappa (1 - p)) / (B(kappa p,
    kappa (1 - p)) p^S (1 - p)^(n - S))`` is below ``1 / alpha``: the likelihood ratio of the
    data against ``p``, mixed over a ``Beta(kappa p, kappa (1 - p))`` prior on the
    alternative. Under ``p`` it is a nonnegative martingale with mean 1, so by Ville's
    inequality it ever reaches ``1 / alpha`` with probability at most ``alpha``: the band
    covers the true rate at every n at once (Howard et al. 2021, Prop. 7; Robbins 1970 for the
    mixture). It is exact for Bernoulli outcomes (no sub-Gaussian slack) and depends only on
    ``(S, n)``. ``kappa`` is :func:`mixture_kappa` of ``alpha`` and ``optimize_at`` (the n the
    band is tightest around). Why this construction, and its width against Wilson, Robbins'
    uniform mixture and the betting sequence: ``docs/MONITOR.md``.

    ``None`` (and NaN, pandas NA) entries are unmeasured: skipped, counted in ``unmeasured``,
    never a zero. Both bounds are solved by a bracketed Newton iteration in logit space to
    ~1e-12 relative.

    Raises
    ------
    EvalkitError
        When an outcome is neither True, False nor None, ``alpha`` is not strictly between 0
        and 1, or ``optimize_at`` is not a positive number.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise EvalkitError(
            f"confidence_sequence: alpha must be a number strictly between 0 and 1, got {alpha!r}"
        )
    if (
        isinstance(optimize_at, bool)
        or not isinstance(optimize_at, (int, float))
        or not math.isfinite(optimize_at)
        or optimize_at <= 0
    ):
        raise EvalkitError(
            f"confidence_sequence: optimize_at must be a positive number, got {optimize_at!r}"
        )
    observed, positions, unmeasured = _as_outcomes(outcomes)
    fires = np.cumsum(observed, dtype=np.int64)
    n = np.arange(1, observed.size + 1, dtype=np.float64)
    kappa = mixture_kappa(float(alpha), float(optimize_at))
    lower, upper = _bounds(fires.astype(np.float64), n, kappa, math.log(1.0 / alpha))
    return ConfidenceSequence(
        lower=lower,
        upper=upper,
        fires=fires,
        positions=positions,
        alpha=float(alpha),
        optimize_at=float(optimize_at),
        unmeasured=unmeasured,
    )


def _bounds(
    s: NDArray[np.float64], n: NDArray[np.float64], kappa: float, threshold: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Both ends of the band for every ``(S, n)``; the upper end by symmetry (``p -> 1 - p``)."""
    lower = _lower_bound(s, n, kappa, threshold)
    upper = 1.0 - _lower_bound(n - s, n, kappa, threshold)
    return lower, upper


def _objective(
    x: NDArray[np.float64],
    s: NDArray[np.float64],
    n: NDArray[np.float64],
    kappa: float,
    offset: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``log M_n(p) - log(1/alpha)`` and its derivative in ``x = logit(p)``.

    ``offset`` is the part that does not depend on ``p``: ``log Gamma(kappa) - log Gamma(n +
    kappa) - log(1/alpha)``.
    """
    from scipy.special import digamma, gammaln

    e = np.exp(-x)
    p = 1.0 / (1.0 + e)
    q = e * p  # 1 - p without cancellation
    a, b = kappa * p, kappa * q
    f = (
        gammaln(s + a)
        + gammaln(n - s + b)
        - gammaln(a)
        - gammaln(b)
        + offset
        - s * np.log(p)
        - (n - s) * np.log(q)
    )
    dpsi = digamma(s + a) - digamma(n - s + b) - digamma(a) + digamma(b)
    df = (kappa * p * q) * dpsi - s * q + (n - s) * p
    return f, df


def _lower_bound(
    s: NDArray[np.float64], n: NDArray[np.float64], kappa: float, threshold: float
) -> NDArray[np.float64]:
    """The lower end: the root of ``log M_n(p) = log(1/alpha)`` below ``p_hat = S / n``.

    ``M_n(p_hat) <= 1`` (``p_hat`` maximizes the likelihood), so ``p_hat`` is always inside.
    ``S = 0`` gives 0. As ``p -> 0``, ``log M_n(p) ~ -(S - 1) log p``: with ``S >= 2`` it
    passes ``log(1/alpha)`` above ``_P_FLOOR`` (for any n below ``e^280``), and with ``S = 1``
    it tends to ``log(kappa / (n - 1 + kappa)) < 0``, so there the end is 0 unless the curve
    crosses above the floor, which is checked.
    """
    from scipy.special import gammaln

    out = np.zeros_like(s)
    x_floor = math.log(_P_FLOOR)
    idx = np.flatnonzero(s > 0)
    single = np.flatnonzero(s[idx] == 1)
    if single.size:
        rows = idx[single]
        offset = gammaln(kappa) - gammaln(n[rows] + kappa) - threshold
        f_floor, _ = _objective(np.full(rows.size, x_floor), s[rows], n[rows], kappa, offset)
        idx = np.setdiff1d(idx, rows[f_floor <= 0], assume_unique=True)
    if idx.size == 0:
        return out
    s_i, n_i = s[idx], n[idx]
    offset_i = gammaln(kappa) - gammaln(n_i + kappa) - threshold
    p_hat = s_i / n_i
    inside = _logit(p_hat)
    outside = np.full(idx.size, x_floor)
    x = np.clip(_logit(_start(p_hat, n_i, kappa, threshold)), outside, inside)
    active = np.arange(idx.size)
    for _ in range(_MAX_ITERATIONS):
        xa = x[active]
        f, df = _objective(xa, s_i[active], n_i[active], kappa, offset_i[active])
        pos = f > 0
        outside[active[pos]] = xa[pos]
        inside[active[~pos]] = xa[~pos]
        lo, hi = outside[active], inside[active]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            newton = xa - f / df
        ok = np.isfinite(newton) & (newton > lo) & (newton < hi)
        x_new = np.where(ok, newton, 0.5 * (lo + hi))
        x[active] = x_new
        # a Newton step this small leaves an error of about its square: stop after taking it
        done = (ok & (np.abs(x_new - xa) <= 1e-9 * (1.0 + np.abs(xa)))) | (
            hi - lo <= 1e-13 * (1.0 + np.abs(hi))
        )
        active = active[~done]
        if active.size == 0:
            break
    else:  # pragma: no cover - bisection halves the bracket each step: 200 steps always suffice
        raise EvalkitError("confidence_sequence: the bound iteration did not converge")
    out[idx] = 1.0 / (1.0 + np.exp(-x))
    return out


def _logit(p: NDArray[np.float64]) -> NDArray[np.float64]:
    p = np.clip(p, _P_FLOOR, 1.0 - 1e-16)
    return np.log(p) - np.log1p(-p)


def _start(
    p_hat: NDArray[np.float64], n: NDArray[np.float64], kappa: float, threshold: float
) -> NDArray[np.float64]:
    """A starting point: the Wilson lower end at the normal-mixture radius (Howard et al.)."""
    z2 = (1.0 + (kappa + 1.0) / n) * (np.log1p(n / (kappa + 1.0)) + 2.0 * threshold)
    centre = (p_hat + z2 / (2 * n)) / (1 + z2 / n)
    half = np.sqrt(z2 * (p_hat * (1 - p_hat) / n + z2 / (4 * n * n))) / (1 + z2 / n)
    return np.maximum(centre - half, _P_FLOOR)
