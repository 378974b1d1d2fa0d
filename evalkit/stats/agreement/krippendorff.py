"""Krippendorff's alpha (Krippendorff 2011): any raters, missing ratings, four metrics.

Nominal, ordinal, interval and ratio differences on the coincidence matrix of pairable units,
with Gwet's variance as irrCAC ``krippen.alpha.raw`` computes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import EvalkitError
from evalkit.stats._inputs import as_counts_indexed, as_ratings, exclusive
from evalkit.stats._result import AgreementResult, _Estimator
from evalkit.stats.agreement._common import (
    _EPS,
    Array,
    _few_items,
    _none,
    _t_test,
    _warn_degenerate,
)
from evalkit.stats.agreement._family import _count_categories

__all__ = ["krippendorff_alpha"]


_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _delta(level: str, values: Array, marg: Array) -> Array:
    """Krippendorff's squared difference functions; ``marg`` (..., q) for ordinal."""
    if level == "nominal":
        return 1.0 - np.eye(values.size)
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    if level == "ratio":
        s = values[:, None] + values[None, :]
        d = values[:, None] - values[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(s != 0, (d / np.where(s != 0, s, 1.0)) ** 2, 0.0)
    # ordinal: (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2, categories in rank order
    cum = np.cumsum(marg, axis=-1)
    lo = np.minimum.outer(np.arange(values.size), np.arange(values.size))
    hi = np.maximum.outer(np.arange(values.size), np.arange(values.size))
    before = np.where(lo > 0, np.take(cum, np.maximum(lo - 1, 0), axis=-1), 0.0)
    between = np.take(cum, hi, axis=-1) - before
    half = (marg[..., :, None] + marg[..., None, :]) / 2
    return (between - half) ** 2


def krippendorff_alpha(
    ratings: Any = None,
    level: str = "nominal",
    *,
    counts: Any = None,
    categories: Sequence[Any] | None = None,
) -> AgreementResult:
    """Krippendorff's alpha for any number of raters with missing ratings (Krippendorff 2011).

    ``level``: "nominal", "ordinal" (rank order of the sorted labels), "interval" or
    "ratio" (numeric labels). Units with fewer than two ratings are not pairable and are left
    out (``n`` counts pairable units). ``alpha = 1 - (n.. - 1) * sum o_ck delta_ck /
    sum n_c n_k delta_ck`` from the coincidence matrix. ``standard_error``: Gwet's variance
    (irrCAC ``krippen.alpha.raw``, f = 0) with agreement weights ``1 - delta / max delta``;
    t(n-1) interval. Degenerate rule (no expected disagreement, e.g. one value only): None.
    """
    if level not in _LEVELS:
        raise EvalkitError(f"level must be one of {_LEVELS}, got {level!r}")
    counts_arr, cats, values, n_raters, base_rows, n_input = _alpha_input(
        level, ratings, counts, categories
    )
    m = counts_arr.sum(axis=1)
    pairable = m >= 2
    c = counts_arr[pairable]
    m = m[pairable]
    if c.shape[0] == 0:
        raise EvalkitError("krippendorff_alpha: no unit has two or more ratings (none pairable)")
    suff, alpha_fn = _alpha_sufficient(level, c, m, values)
    est = _Estimator(suff, alpha_fn, base_rows[pairable], n_input)
    tot = suff.sum(axis=0)
    alpha = _none(alpha_fn(tot[None, :])[0])
    marg = c.sum(axis=0)
    d_full = _delta(level, values, marg)
    if alpha is None:
        _warn_degenerate("Krippendorff's alpha", "no expected disagreement: one value only")
    se = pa = pe = None
    if d_full.max() > 0:
        se, pa, pe = _krippendorff_se(c, m, 1.0 - d_full / d_full.max(), alpha)
    few = _few_items("Krippendorff's alpha", int(c.shape[0]), alpha, se)
    if few:
        se = None
    z, pval = _t_test(alpha, se, c.shape[0] - 1)
    return AgreementResult(
        statistic=alpha,
        standard_error=se,
        n=int(c.shape[0]),
        n_raters=n_raters,
        categories=tuple(cats),
        name=f"Krippendorff's alpha ({level})",
        observed_agreement=pa,
        chance_agreement=pe,
        z=z,
        p_value=pval,
        df=int(c.shape[0]) - 1,
        se_method="Gwet (2014), irrCAC krippen.alpha.raw linearization, f = 0",
        degenerate=alpha is None or few,
        weights=level,
        _estimator=est,
    )


def _alpha_input(
    level: str, ratings: Any, counts: Any, categories: Sequence[Any] | None
) -> tuple[Array, tuple[Any, ...], Array, int, NDArray[np.intp], int]:
    """Ratings or counts as (counts, categories, values, n_raters, input rows, n input).

    ``values`` are the labels' numbers for interval and ratio (refused when not numeric), else
    their ranks.
    """
    which, value = exclusive("krippendorff_alpha", ("ratings", ratings), ("counts", counts))
    if which == "counts":
        counts_arr, base_rows, n_input = as_counts_indexed(value)
        cats = _count_categories(value, counts_arr, categories)
        numeric = all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in cats)
        if level in ("interval", "ratio") and not numeric:
            raise EvalkitError(f"krippendorff_alpha: level={level!r} needs numeric categories")
        values = np.asarray(cats, dtype=float) if numeric else np.arange(len(cats), dtype=float)
        return counts_arr, cats, values, int(counts_arr.sum(axis=1).max()), base_rows, n_input
    r = as_ratings(value, categories=categories)
    if level in ("interval", "ratio") and not r.numeric:
        raise EvalkitError(
            f"krippendorff_alpha: level={level!r} needs numeric labels, got "
            f"{list(r.categories)[:5]!r}"
        )
    return r.counts(), r.categories, r.values, r.n_raters, r.rows, r.n_rows_input


def _alpha_sufficient(
    level: str, c: Array, m: Array, values: Array
) -> tuple[Array, Callable[[Array], Array]]:
    """Per pairable unit's sufficient statistics and alpha as a function of their sums.

    Built on the per-unit coincidences ``o^u_ck = n_uc (n_uk - [c == k]) / (m_u - 1)``.
    """
    q = values.size
    if level == "ordinal":
        # the ordinal metric depends on the marginals, so each resample needs the whole
        # coincidence matrix: q * q sufficient statistics per unit
        if c.shape[0] * q * q > 50_000_000:
            raise EvalkitError(
                f"krippendorff_alpha: level='ordinal' with {q} distinct values on "
                f"{c.shape[0]} units needs {c.shape[0] * q * q:,} coincidence cells; "
                "bin the values into fewer ranks"
            )
        o_u = (c[:, :, None] * c[:, None, :] - np.einsum("uc,ck->uck", c, np.eye(q))) / (m - 1)[
            :, None, None
        ]

        def ordinal_fn(sums: Array) -> Array:
            o = sums.reshape((*sums.shape[:-1], q, q))
            marg = o.sum(axis=-1)
            d = _delta("ordinal", values, marg)
            return _alpha_from(np.sum(o * d, axis=(-1, -2)), marg, d)

        return o_u.reshape(c.shape[0], q * q), ordinal_fn
    d_fixed = _delta(level, values, np.zeros(q))
    # sum_ck o^u_ck d_ck without the q x q array per unit (d_cc = 0)
    disagreement = np.sum((c @ d_fixed) * c, axis=1) / (m - 1)

    def fixed_fn(sums: Array) -> Array:
        return _alpha_from(sums[..., 0], sums[..., 1:], d_fixed)

    return np.column_stack([disagreement, c]), fixed_fn


def _alpha_from(do_sum: Array, marg: Array, d: Array) -> Array:
    n_tot = marg.sum(axis=-1)
    if d.ndim == 2:  # fixed metric: no (resamples, q, q) intermediate
        de = np.einsum("...c,...c->...", marg @ d, marg)
    else:
        de = np.einsum("...c,...ck,...k->...", marg, d, marg)
    ok = de > _EPS
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, 1.0 - (n_tot - 1) * do_sum / np.where(ok, de, 1.0), np.nan)


def _krippendorff_se(
    c: Array, m: Array, w: Array, alpha: float | None
) -> tuple[float | None, float | None, float | None]:
    """IrrCAC ``krippen.alpha.raw`` variance (pairable units only)."""
    n = c.shape[0]
    rbar = m.mean()
    eps = 1.0 / m.sum()
    sum_q = (c * (c @ w.T - 1.0)).sum(axis=1)
    pa_prime = float(np.sum(sum_q / (rbar * (m - 1))) / n)
    pa = (1 - eps) * pa_prime + eps
    pi = c.sum(axis=0) / (n * rbar)
    pe = float(pi @ w @ pi)
    if alpha is None or n < 2 or abs(1 - pe) <= _EPS:
        return None, float(pa), float(pe)
    alpha_prime = (pa_prime - pe) / (1 - pe)
    pa_i = sum_q / (rbar * (m - 1)) - pa * (m - rbar) / rbar
    k_i = (pa_i - pe) / (1 - pe)
    pi_w = (w @ pi + w.T @ pi) / 2
    pe_i = (c @ pi_w) / rbar - pe * (m - rbar) / rbar
    x_i = k_i - 2 * (1 - alpha_prime) * (pe_i - pe) / (1 - pe)
    var = np.sum((x_i - alpha_prime) ** 2) / (n * (n - 1))
    return float(math.sqrt(var)), float(pa), float(pe)
