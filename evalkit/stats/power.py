"""Sample sizes for Cohen's kappa: how many items a precise interval or a powered test needs.

Estimation (items for a CI of kappa no wider than +/- w; Fleiss, Cohen & Everitt 1969, as
Stata's ``kapssi``) and testing (items to show kappa > kappa0 with a given power; Cantor 1996
and Flack et al. 1988, as R irr's ``N.cohen.kappa`` / ``N2.cohen.kappa``), at the population
table the expected kappa and prevalence imply. A kappa the marginals cannot reach is refused,
naming the attainable range. Sources and population tables: docs/STATISTICS.md.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from evalkit.display import Readable, fmt_number
from evalkit.errors import EvalkitError
from evalkit.stats.distributions import normal_ppf

__all__ = [
    "KappaCIPlan",
    "items_for_ci_width",
    "kappa_asymptotic_variance",
    "kappa_ci_half_width",
    "kappa_ci_plan",
    "kappa_ci_sample_size",
    "kappa_joint_table",
    "kappa_test_sample_size",
    "kappa_test_sample_size_multi",
]

_TOL = 1e-12


# --------------------------------------------------------------------------- inputs


def _number(name: str, value: float) -> float:
    # a bool or a numeric string is a mistake here, not a number
    if isinstance(value, (bool, np.bool_, str, bytes)) or not isinstance(
        value, (numbers.Real, np.ndarray)
    ):
        raise EvalkitError(f"{name} must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise EvalkitError(f"{name} must be a number, got {value!r}") from None


def _positive_number(name: str, value: float) -> float:
    """A finite number > 0."""
    x = _number(name, value)
    if not (math.isfinite(x) and x > 0.0):
        raise EvalkitError(f"{name} must be a positive number, got {value!r}")
    return x


def _probability(name: str, value: float, *, open_interval: bool = True) -> float:
    x = _number(name, value)
    ok = (0.0 < x < 1.0) if open_interval else (0.0 <= x <= 1.0)
    if not (math.isfinite(x) and ok):
        bounds = "strictly between 0 and 1" if open_interval else "in [0, 1]"
        raise EvalkitError(f"{name} must be {bounds}, got {value!r}")
    return x


def _kappa_value(name: str, value: float) -> float:
    x = _number(name, value)
    if not (math.isfinite(x) and -1.0 <= x <= 1.0):
        raise EvalkitError(f"{name} must be in [-1, 1], got {value!r}")
    return x


def _marginals(name: str, value: float | Sequence[float] | ArrayLike) -> NDArray[np.float64]:
    """A prevalence ``p`` means the binary marginals ``(p, 1 - p)`` (positive class first)."""
    if isinstance(value, (str, bytes, Mapping)) or value is None:
        raise EvalkitError(f"{name} must be a prevalence or a sequence of numbers, got {value!r}")
    try:
        ndim = np.ndim(value)
    except (TypeError, ValueError):  # e.g. ragged nested lists
        raise EvalkitError(f"{name} must be a prevalence or a sequence of numbers") from None
    if ndim == 0:
        p = _probability(name, value)  # type: ignore[arg-type]
        return np.array([p, 1.0 - p])
    try:
        m = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise EvalkitError(f"{name} must be a prevalence or a sequence of numbers") from None
    if m.ndim != 1 or m.size < 2:
        raise EvalkitError(f"{name} must list at least 2 category probabilities, got {value!r}")
    if not np.all(np.isfinite(m)) or np.any(m <= 0.0):
        raise EvalkitError(
            f"{name} must be positive probabilities (drop categories that never occur), "
            f"got {value!r}"
        )
    if abs(m.sum() - 1.0) > 1e-9:
        raise EvalkitError(f"{name} must sum to 1, got sum {m.sum():.12g}")
    probabilities: NDArray[np.float64] = m / m.sum()
    return probabilities


# --------------------------------------------------------------------------- tables


def kappa_joint_table(
    kappa: float,
    marginals: float | Sequence[float],
    marginals_b: float | Sequence[float] | None = None,
) -> NDArray[np.float64]:
    """The population joint table of two raters with Cohen's kappa ``kappa``.

    ``marginals`` is rater A's prevalence of the positive class (binary) or the probabilities
    of all categories; ``marginals_b`` rater B's, when it differs (binary only: with more
    categories and unequal marginals the table is not determined by kappa). Rows are rater
    A, columns rater B; the result sums to 1. The models: docs/STATISTICS.md (power.py).

    Raises ``EvalkitError`` when the marginals cannot reach ``kappa``.
    """
    k = _kappa_value("kappa", kappa)
    ma = _marginals("marginals", marginals)
    mb = ma if marginals_b is None else _marginals("marginals_b", marginals_b)
    if ma.size != mb.size:
        raise EvalkitError(
            f"marginals and marginals_b list different numbers of categories "
            f"({ma.size} vs {mb.size})"
        )
    pe = float(ma @ mb)
    p0 = k * (1.0 - pe) + pe
    if marginals_b is None:
        table = (1.0 - k) * np.outer(ma, ma) + k * np.diag(ma)
    elif ma.size == 2:
        # Cantor (1996): the diagonal is fixed by p0, the margins fix the rest.
        p11 = (p0 - 1.0 + ma[0] + mb[0]) / 2.0
        table = np.array([[p11, ma[0] - p11], [mb[0] - p11, p0 - p11]])
    else:
        raise EvalkitError(
            "unequal marginals are supported for binary ratings only; with more categories "
            "the joint table is not determined by kappa (pass one set of marginals)"
        )
    if np.any(table < -_TOL):
        lo, hi = _attainable_kappa(ma, mb, common=marginals_b is None)
        raise EvalkitError(
            f"kappa {k:g} is not attainable with these marginals "
            f"(attainable range [{lo:.4f}, {hi:.4f}])"
        )
    return np.clip(table, 0.0, None)


def _attainable_kappa(
    ma: NDArray[np.float64], mb: NDArray[np.float64], *, common: bool
) -> tuple[float, float]:
    pe = float(ma @ mb)
    if common:  # mixture model: a diagonal cell (1-k) m_i^2 + k m_i >= 0
        return float(np.max(-ma / (1.0 - ma))), 1.0
    # binary, Cantor table: 0 <= p11 <= min(pa, pb), p22 = p0 - p11 >= 0, off-diagonals >= 0
    pa, pb = float(ma[0]), float(mb[0])
    p0_max = min(pa, pb) + min(1 - pa, 1 - pb)
    p0_min = max(0.0, pa + pb - 1.0) + max(0.0, 1.0 - pa - pb)
    return (p0_min - pe) / (1.0 - pe), (p0_max - pe) / (1.0 - pe)


def kappa_asymptotic_variance(table: ArrayLike) -> float:
    """Per-item large-sample variance of Cohen's (unweighted) kappa: ``n * Var(kappa_hat)``.

    Fleiss, Cohen & Everitt (1969), eq. for the non-null variance, evaluated at a joint table
    (counts or proportions; normalized here). ``sqrt(result / n)`` is the standard error for
    ``n`` items. Raises ``EvalkitError`` when chance agreement is 1 (one category).
    """
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] != t.shape[1] or t.shape[0] < 2:
        raise EvalkitError(f"table must be a square k x k array with k >= 2, got {t.shape}")
    if not np.all(np.isfinite(t)) or np.any(t < 0) or t.sum() <= 0:
        raise EvalkitError("table must hold non-negative finite counts with a positive total")
    p = t / t.sum()
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    po, pe = float(np.trace(p)), float(rows @ cols)
    if pe >= 1.0 - _TOL:
        raise EvalkitError("chance agreement is 1 (a single category): kappa is undefined")
    diag = np.diag(p)
    a = float(np.sum(diag * ((1.0 - pe) - (rows + cols) * (1.0 - po)) ** 2))
    # off-diagonal cell (i, j) is weighted by (p_.i + p_j.)^2: column i's and row j's margins
    w = (cols[:, None] + rows[None, :]) ** 2
    off = p * w
    b = (1.0 - po) ** 2 * float(off.sum() - np.trace(off))
    c = (po * pe - 2.0 * pe + po) ** 2
    return max(a + b - c, 0.0) / (1.0 - pe) ** 4


# --------------------------------------------------------------------------- estimation


@dataclass(frozen=True, repr=False)
class KappaCIPlan(Readable):
    """The number of items for a kappa CI of a target half-width, and how it was obtained."""

    n: int
    kappa: float
    half_width: float
    level: float
    marginals_a: tuple[float, ...]
    marginals_b: tuple[float, ...]
    variance_per_item: float  # n * Var(kappa_hat), Fleiss-Cohen-Everitt (1969)
    expected_half_width: float  # z * sqrt(variance_per_item / n) at the returned n
    method: str = "Wald interval, Fleiss-Cohen-Everitt (1969) large-sample variance"

    def _headline(self) -> str:
        return (
            f"{self.n:,} items for a {100 * self.level:g}% kappa interval of +-"
            f"{fmt_number(self.half_width)} at kappa {fmt_number(self.kappa)}"
        )

    def _rows(self) -> list[tuple[str, Any]]:
        return [
            ("items", self.n),
            ("kappa", self.kappa),
            ("target half-width", self.half_width),
            ("expected half-width at n", self.expected_half_width),
            ("level", self.level),
            ("method", self.method),
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON-simple dict of every field."""
        d = asdict(self)
        d["marginals_a"] = list(self.marginals_a)
        d["marginals_b"] = list(self.marginals_b)
        return d


def _z(level: float) -> float:
    lv = _probability("level", level)
    return float(normal_ppf(0.5 + lv / 2.0))


def kappa_ci_plan(
    kappa: float,
    prevalence: float | Sequence[float],
    half_width: float,
    level: float = 0.95,
    *,
    prevalence_b: float | Sequence[float] | None = None,
) -> KappaCIPlan:
    """Items needed so that the ``level`` Wald CI of Cohen's kappa has half-width ``half_width``.

    ``n = ceil(z^2 * V / w^2)`` with ``V`` the Fleiss-Cohen-Everitt per-item variance at the
    population table of :func:`kappa_joint_table` (``prevalence``: rater A's positive rate, or
    all category probabilities; ``prevalence_b``: rater B's positive rate when it differs,
    binary only). This is the *expected* precision: about half of studies of that size get a
    slightly wider interval.
    """
    w = _positive_number("half_width", half_width)
    # checked under the caller's names before kappa_joint_table (which says "marginals")
    _marginals("prevalence", prevalence)
    if prevalence_b is not None:
        _marginals("prevalence_b", prevalence_b)
    table = kappa_joint_table(kappa, prevalence, prevalence_b)
    v = kappa_asymptotic_variance(table)
    z = _z(level)
    if v <= 0.0:
        raise EvalkitError(
            f"kappa {float(kappa):g} has zero large-sample variance with these marginals "
            "(perfect agreement): no finite sample size is needed or defined"
        )
    raw = (z * z * v) / (w * w)
    n = max(2, math.ceil(raw))
    return KappaCIPlan(
        n=n,
        kappa=float(kappa),
        half_width=w,
        level=float(level),
        marginals_a=tuple(float(x) for x in table.sum(axis=1)),
        marginals_b=tuple(float(x) for x in table.sum(axis=0)),
        variance_per_item=v,
        expected_half_width=z * math.sqrt(v / n),
    )


def kappa_ci_sample_size(
    kappa: float,
    prevalence: float | Sequence[float],
    half_width: float,
    level: float = 0.95,
    *,
    prevalence_b: float | Sequence[float] | None = None,
) -> int:
    """Items needed for a Cohen's kappa CI of half-width ``half_width`` (two raters).

    ``kappa``: the expected kappa; ``prevalence``: the positive rate (binary) or the category
    probabilities (any number of categories, common to both raters); ``prevalence_b``: the
    second rater's positive rate when it differs (binary). See :func:`kappa_ci_plan` for the
    details object and the method.
    """
    return kappa_ci_plan(kappa, prevalence, half_width, level, prevalence_b=prevalence_b).n


def items_for_ci_width(
    kappa: float,
    marginals: float | Sequence[float],
    width: float,
    level: float = 0.95,
    *,
    marginals_b: float | Sequence[float] | None = None,
) -> int:
    """Items needed for a Cohen's kappa CI of total width ``width`` (upper minus lower).

    For calibration against gold: ``marginals`` are the gold label probabilities,
    ``marginals_b`` the judge's when they are expected to differ (binary only).
    """
    w = _positive_number("width", width)
    return kappa_ci_sample_size(kappa, marginals, w / 2.0, level, prevalence_b=marginals_b)


def kappa_ci_half_width(
    kappa: float,
    prevalence: float | Sequence[float],
    n: int,
    level: float = 0.95,
    *,
    prevalence_b: float | Sequence[float] | None = None,
) -> float:
    """The expected half-width of the ``level`` Wald CI of kappa with ``n`` items (the inverse)."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise EvalkitError(f"n must be a positive int, got {n!r}")
    v = kappa_asymptotic_variance(kappa_joint_table(kappa, prevalence, prevalence_b))
    return _z(level) * math.sqrt(v / int(n))


# --------------------------------------------------------------------------- testing


def _test_inputs(
    kappa_true: float, kappa_null: float, alpha: float, power: float
) -> tuple[float, float, float, float]:
    k1 = _kappa_value("kappa_true", kappa_true)
    k0 = _kappa_value("kappa_null", kappa_null)
    if abs(k1 - k0) <= 0.0:
        raise EvalkitError("kappa_true and kappa_null must differ")
    a = _probability("alpha", alpha)
    b = _probability("power", power)
    return k1, k0, a, b


def _test_n(
    sd0: float, sd1: float, k1: float, k0: float, alpha: float, power: float, two_sided: bool
) -> int:
    """``ceil(((z_{1-alpha/d} sd0 + z_power sd1) / (k1 - k0))^2)``, ``d`` = 2 when two-sided."""
    d = 2.0 if two_sided else 1.0
    z_alpha, z_beta = float(normal_ppf(1 - alpha / d)), float(normal_ppf(power))
    return math.ceil(((z_alpha * sd0 + z_beta * sd1) / (k1 - k0)) ** 2)


def kappa_test_sample_size(
    rate1: float,
    rate2: float,
    kappa_true: float,
    kappa_null: float,
    alpha: float = 0.05,
    power: float = 0.8,
    two_sided: bool = False,
) -> int:
    """Items needed to test ``H0: kappa = kappa_null`` against ``kappa_true`` (binary, 2 raters).

    Reproduces R irr's ``N.cohen.kappa(rate1, rate2, k1, k0, alpha, power, twosided)``
    (Cantor 1996): ``n = ceil(((z_{1-alpha/d} sqrt(Q0) + z_power sqrt(Q1)) / (k1 - k0))^2)``,
    ``d`` = 2 when two-sided, where ``Q0``/``Q1`` are the Fleiss-Cohen-Everitt per-item
    variances at the tables with kappa ``kappa_null``/``kappa_true`` and positive rates
    ``rate1``/``rate2``. Unlike R, a kappa the rates cannot reach raises ``EvalkitError``
    instead of returning a meaningless number.
    """
    r1 = _probability("rate1", rate1)
    r2 = _probability("rate2", rate2)
    k1, k0, a, b = _test_inputs(kappa_true, kappa_null, alpha, power)
    q1 = kappa_asymptotic_variance(kappa_joint_table(k1, r1, r2))
    q0 = kappa_asymptotic_variance(kappa_joint_table(k0, r1, r2))
    return _test_n(q0**0.5, q1**0.5, k1, k0, a, b, two_sided)


def _flack_max_sd(marginals: NDArray[np.float64], kappa: float) -> float:
    """Largest FCE standard deviation over tables with these common marginals and this kappa.

    Flack et al. (1988): with more than two categories the table is not determined by kappa
    and the marginals, so the sample size is computed for the worst case — a linear program
    over the cells (the variance is linear in the cells once p0 and pe are fixed).
    """
    m = marginals
    k = m.size
    pe = float(m @ m)
    p0 = kappa + pe * (1.0 - kappa)
    if not p0 > 0:
        raise EvalkitError(f"kappa {kappa:g} is not attainable with these marginals")
    part1 = p0 * (1.0 - pe) ** 2
    part3 = (p0 * pe - 2.0 * pe + p0) ** 2
    obj = (1.0 - p0) ** 2 * (m[:, None] + m[None, :]) ** 2
    np.fill_diagonal(obj, -(1.0 - p0) * 2.0 * m * (2.0 * (1.0 - pe) - (1.0 - p0) * 2.0 * m))
    # equality constraints: row sums, column sums, trace; cells x_ij >= 0 (row-major)
    eye = np.eye(k)
    a_rows = np.kron(eye, np.ones(k))
    a_cols = np.kron(np.ones(k), eye)
    a_trace = eye.reshape(1, -1)
    a_eq = np.vstack([a_rows, a_cols, a_trace])
    b_eq = np.concatenate([m, m, [p0]])
    from scipy.optimize import linprog  # deferred: only the multi-category plan needs it

    res = linprog(-obj.ravel(), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if not res.success:
        raise EvalkitError(f"kappa {kappa:g} is not attainable with these marginals")
    tau_sq = part1 + float(-res.fun) - part3
    if not tau_sq > 0:
        raise EvalkitError("invalid set of inputs: the maximal variance is not positive")
    return math.sqrt(tau_sq) / (1.0 - pe) ** 2


def kappa_test_sample_size_multi(
    marginals: Sequence[float],
    kappa_true: float,
    kappa_null: float,
    alpha: float = 0.05,
    power: float = 0.8,
    two_sided: bool = False,
) -> int:
    """Items to test ``H0: kappa = kappa_null`` with k >= 2 categories and common marginals.

    Reproduces R irr's ``N2.cohen.kappa(mrg, k1, k0, alpha, power, twosided)`` (Flack, Afifi,
    Lachenbruch & Schouten 1988): the standard deviations under H0 and H1 are the largest
    Fleiss-Cohen-Everitt values over all tables with the given marginals and kappa.
    """
    m = _marginals("marginals", marginals)
    if m.size > 10:
        raise EvalkitError("valid only up to 10 categories (as N2.cohen.kappa)")
    k1, k0, a, b = _test_inputs(kappa_true, kappa_null, alpha, power)
    sd0 = _flack_max_sd(m, k0)
    sd1 = _flack_max_sd(m, k1)
    return _test_n(sd0, sd1, k1, k0, a, b, two_sided)
