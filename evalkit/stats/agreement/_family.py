"""The multi-rater family (Fleiss, Gwet, Brennan-Prediger, Conger): counts and irrCAC's SE.

Ratings, counts or a two-rater table become items x categories counts; per item the weighted
pairwise agreement ``pa_i``; the result carries Gwet's linearization variance as the R package
irrCAC computes it (finite-population correction f = 0) with a t(n - 1) interval.
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
    _UPPER_ONLY,
    Array,
    _few_items,
    _none,
    _t_test,
    _warn_degenerate,
)
from evalkit.stats.agreement._pairs import _ratings_or_table


def _pair_counts(counts: Array, w: Array) -> tuple[Array, Array, Array, Array]:
    """Per item: r_i (ratings), ok_i (r_i >= 2), pa_i (weighted pairwise agreement), p_ik."""
    r = counts.sum(axis=1)
    ok = (r >= 2).astype(float)
    sum_q = (counts * (counts @ w.T - 1.0)).sum(axis=1)
    den = np.where(ok > 0, r * (r - 1), 1.0)
    pa_i = np.where(ok > 0, sum_q / den, 0.0)
    p_ik = counts / np.where(r > 0, r, 1.0)[:, None]
    return r, ok, pa_i, p_ik


def _irrcac_se(
    coef: float | None,
    pa_i: Array,
    ok: Array,
    pe: float,
    pe_ivec: Array,
) -> float | None:
    """Gwet's linearization variance (irrCAC *.raw functions, f = 0)."""
    n = pa_i.size
    n2 = ok.sum()
    if coef is None or n < 2 or n2 == 0 or abs(1 - pe) <= _EPS:
        return None
    k_i = (n / n2) * (pa_i - pe * ok) / (1 - pe)
    x_i = k_i - 2 * (1 - coef) * (pe_ivec - pe) / (1 - pe)
    return float(math.sqrt(np.sum((x_i - coef) ** 2) / (n * (n - 1))))


def _count_categories(value: Any, arr: Array, categories: Sequence[Any] | None) -> tuple[Any, ...]:
    """Labels of a counts matrix: ``categories``, else its columns, else 0..k-1."""
    if categories is not None:
        return tuple(categories)
    cols = getattr(value, "columns", None)
    return tuple(cols) if cols is not None else tuple(range(arr.shape[1]))


def _multi_input(
    name: str, ratings: Any, counts: Any, categories: Sequence[Any] | None
) -> tuple[Array, tuple[Any, ...], int, tuple[NDArray[np.intp], int]]:
    """Ratings or counts -> (counts, categories, n_raters, (input rows, n input))."""
    which, value = exclusive(name, ("ratings", ratings), ("counts", counts))
    if which == "counts":
        arr, index, n_input = as_counts_indexed(value)
        cats = _count_categories(value, arr, categories)
        if len(cats) != arr.shape[1]:
            raise EvalkitError(
                f"{name}: categories has {len(cats)} labels, counts has {arr.shape[1]} columns"
            )
        return arr, cats, int(arr.sum(axis=1).max()), (index, n_input)
    r = as_ratings(value, categories=categories)
    return r.counts(), r.categories, r.n_raters, (r.rows, r.n_rows_input)


def _multi_or_table_input(
    name: str, ratings: Any, table: Any, counts: Any, categories: Sequence[Any] | None
) -> tuple[Array, tuple[Any, ...], int, tuple[NDArray[np.intp], int]]:
    """Ratings, counts or a two-rater ``table`` as counts.

    Returns (counts, categories, n_raters, (input rows, n input)).
    """
    if table is not None or (ratings is None and counts is None):
        exclusive(name, ("ratings", ratings), ("table", table), ("counts", counts))
        r, _ = _ratings_or_table(name, None, table, categories)
        return r.counts(), r.categories, 2, (r.rows, r.n_rows_input)
    return _multi_input(name, ratings, counts, categories)


def _family_suff(counts: Array, w: Array) -> tuple[Array, Array, Array, Array, Array]:
    r, ok, pa_i, p_ik = _pair_counts(counts, w)
    suff = np.column_stack([np.ones(counts.shape[0]), ok, pa_i, p_ik])
    return suff, r, ok, pa_i, p_ik


def _family_parts(sums: Array) -> tuple[Array, Array, Array]:
    n, n2, pa_sum = sums[..., 0], sums[..., 1], sums[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        pa = np.where(n2 > 0, pa_sum / np.where(n2 > 0, n2, 1.0), np.nan)
        pi = sums[..., 3:] / n[..., None]
    return n, pa, pi


def _family_result(
    *,
    name: str,
    coef_fn: Callable[[Array], Array],
    suff: Array,
    pa_i: Array,
    ok: Array,
    pe: float,
    pe_ivec: Array | None,
    n_raters: int,
    categories: tuple[Any, ...],
    wname: str,
    why: str,
    from_table: bool = False,
    origin: tuple[NDArray[np.intp], int] | None = None,
    bounds: tuple[float | None, float | None] = _UPPER_ONLY,
    **extra: Any,
) -> AgreementResult:
    est = _Estimator(suff, coef_fn, *(origin if origin is not None else (None, None)))
    sums = suff.sum(axis=0)
    coef = _none(coef_fn(sums[None, :])[0])
    _, pa, _ = _family_parts(sums)
    n = suff.shape[0]
    if coef is None:
        _warn_degenerate(name, why)
    se = _irrcac_se(coef, pa_i, ok, pe, pe_ivec if pe_ivec is not None else np.full(n, pe))
    se_method = "Gwet (2014), irrCAC linearization, f = 0"
    if from_table and se is not None:
        # irrCAC's *.table functions (Gwet 2008) divide the variance by n, the raw-data
        # functions by n - 1; follow the one matching the input form
        se *= math.sqrt((n - 1) / n)
        se_method = "Gwet (2008), irrCAC contingency-table variance, f = 0"
    # observed agreement rests on the items with >= 2 ratings: those are the ones counted
    n_pa = int(np.count_nonzero(ok))
    of = "with 2+ ratings" if n_pa != n else ""
    few = _few_items(name, n_pa, coef, se, stacklevel=4, of=of)
    if few:
        se = None
        if n_pa != n:  # say which items were too few (the result's n counts every item)
            reason = f"only {n_pa} of its {n} items have 2+ ratings: too few"
            extra["extra"] = {**extra.get("extra", {}), "degenerate_reason": reason}
    z, pval = _t_test(coef, se, n - 1)
    return AgreementResult(
        statistic=coef,
        standard_error=se,
        n=n,
        n_raters=n_raters,
        categories=categories,
        name=name,
        observed_agreement=_none(pa),
        chance_agreement=_none(pe),
        z=z,
        p_value=pval,
        df=n - 1,
        se_method=se_method,
        degenerate=coef is None or few,
        weights=wname,
        range=bounds,
        _estimator=est,
        **extra,
    )
