"""Kappa for many raters: Fleiss' (1971), Conger's (1980) and Light's (1971).

Fleiss and Conger share the observed agreement and irrCAC's variance and differ in the chance
agreement (pooled category shares, or each rater's own); Light's is the mean of Cohen's kappa
over every pair of raters, with a jackknife SE over items.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from evalkit.errors import DegenerateDataWarning
from evalkit.stats._inputs import as_ratings
from evalkit.stats._result import AgreementResult, CategoryAgreement, _Estimator
from evalkit.stats.agreement._common import (
    _EPS,
    _KAPPA_RANGE,
    _UPPER_ONLY,
    Array,
    _chance_corrected,
    _few_items,
    _jackknife_se,
    _label_scores,
    _none,
    _normal_test,
    _replace,
    _warn_degenerate,
    _weights_matrix,
)
from evalkit.stats.agreement._family import (
    _family_parts,
    _family_result,
    _family_suff,
    _multi_or_table_input,
    _pair_counts,
)
from evalkit.stats.agreement._pairs import _pair_suff, _table_fn

__all__ = ["conger_kappa", "fleiss_kappa", "light_kappa"]


def fleiss_kappa(
    ratings: Any = None,
    *,
    counts: Any = None,
    weights: Any = None,
    categories: Sequence[Any] | None = None,
) -> AgreementResult:
    """Fleiss' kappa for any number of raters (missing ratings allowed, as irrCAC).

    Give ``ratings`` (items x raters) or ``counts`` (items x categories: how many raters chose
    each category). The rows of ``counts`` may sum to different numbers of raters ``r_i``
    (items rated by different numbers of raters, the counts form of missing ratings), as R
    irrCAC ``fleiss.kappa.dist``: observed agreement averages items with >= 2 ratings;
    category proportions average ``n_ij / r_i`` over all items (Fleiss 1971 when every item
    has the same raters). ``n_raters`` is then the largest ``r_i``. ``standard_error``:
    Gwet's variance under H1 (irrCAC ``fleiss.kappa.raw``), with a t(n-1) analytic interval;
    ``standard_error_h0``: Fleiss, Nee & Landis (1979), with ``z = statistic /
    standard_error_h0`` and a two-sided normal ``p_value`` (R irr
    ``kappam.fleiss``). ``per_category``: kappa_j of Fleiss (1971) with its SE under H0
    ``sqrt(2 / sum_i r_i (r_i - 1))``, z and p. Degenerate rule: see the module docstring.
    """
    counts_arr, cats, n_raters, origin = _multi_or_table_input(
        "fleiss_kappa", ratings, None, counts, categories
    )
    w, wname = _weights_matrix(weights, len(cats), scores=_label_scores(cats))
    suff, rr, ok, pa_i, p_ik = _family_suff(counts_arr, w)

    def coef_fn(sums: Array) -> Array:
        _, pa, pi = _family_parts(sums)
        pe = np.einsum("...i,ij,...j->...", pi, w, pi)
        return _chance_corrected(pa, pe)

    pi = p_ik.mean(axis=0)
    pe = float(pi @ w @ pi)
    pi_w = (w @ pi + w.T @ pi) / 2
    pe_ivec = (counts_arr @ pi_w) / np.where(rr > 0, rr, 1.0)
    # Fleiss, Nee & Landis (1979) SE under H0 and Fleiss (1971) per-category kappas,
    # over items with >= 2 ratings; sum r_i (r_i - 1) = N m (m - 1) without missing ratings
    use = rr >= 2
    c2, r2 = counts_arr[use], rr[use]
    pairs = float(np.sum(r2 * (r2 - 1)))
    p_j = c2.sum(axis=0) / r2.sum() if r2.size else np.full(len(cats), np.nan)
    pq = p_j * (1 - p_j)
    se0_cat = math.sqrt(2 / pairs) if pairs > 0 else None
    per_cat = {}
    for j, cat in enumerate(cats):
        if pq[j] > _EPS and r2.size:
            disagree = np.sum(c2[:, j] * (r2 - c2[:, j]) / (r2 * (r2 - 1))) / r2.size
            kj: float | None = float(1 - disagree / pq[j])
        else:
            kj = None
        zj, pj = _normal_test(kj, se0_cat)
        per_cat[cat] = CategoryAgreement(kj, se0_cat if kj is not None else None, zj, pj)
    spq = float(pq.sum())
    se0 = None
    if spq > _EPS and pairs > 0 and wname == "unweighted":
        inner = spq**2 - float(np.sum(pq * ((1 - p_j) - p_j)))
        se0 = math.sqrt(2 / pairs) * math.sqrt(max(inner, 0.0)) / spq
    res = _family_result(
        name="Fleiss' kappa" if wname == "unweighted" else f"Fleiss' weighted kappa ({wname})",
        coef_fn=coef_fn,
        suff=suff,
        pa_i=pa_i,
        ok=ok,
        pe=pe,
        pe_ivec=pe_ivec,
        n_raters=n_raters,
        categories=cats,
        wname=wname,
        why="chance agreement is 1: every rating is the same category",
        origin=origin,
        # pa >= 2 pe - 1 when every item has >= 2 ratings (``_result``: range clipping)
        bounds=_KAPPA_RANGE if wname == "unweighted" and np.all(rr >= 2) else _UPPER_ONLY,
        per_category=per_cat if wname == "unweighted" else None,
    )
    if res.few_items:
        se0 = None  # too few items: no sampling variation to speak of (module docstring)
    z, pval = _normal_test(res.statistic, se0)
    return _replace(res, standard_error_h0=se0, z=z, p_value=pval)


def conger_kappa(
    ratings: Any,
    *,
    weights: Any = None,
    categories: Sequence[Any] | None = None,
) -> AgreementResult:
    """Conger's (1980) kappa: Fleiss' observed agreement, each rater's own chance agreement.

    Chance agreement comes from each rater's own category distribution (the average of the
    pairwise Cohen chance agreements).

    Missing ratings allowed; SE as R irrCAC ``conger.kappa.raw`` (f = 0), t(n-1) interval.
    """
    r = as_ratings(ratings, categories=categories)
    n, nr, q = r.n_items, r.n_raters, r.n_categories
    w, wname = _weights_matrix(weights, r.n_categories, scores=_label_scores(r.categories))
    counts_arr = r.counts()
    _, ok, pa_i, _ = _pair_counts(counts_arr, w)
    delta = np.zeros((n, nr, q))
    rated = r.codes >= 0
    ii, gg = np.nonzero(rated)
    delta[ii, gg, r.codes[ii, gg]] = 1.0
    eps = rated.astype(float)
    suff = np.column_stack([np.ones(n), ok, pa_i, delta.reshape(n, nr * q), eps])

    def pe_of(sums: Array) -> Array:
        classif = sums[..., 3 : 3 + nr * q].reshape((*sums.shape[:-1], nr, q))
        ng = sums[..., 3 + nr * q :]
        with np.errstate(divide="ignore", invalid="ignore"):
            pgk = classif / ng[..., None]
        pbar = pgk.mean(axis=-2)
        outer = pbar[..., :, None] * pbar[..., None, :]
        s2 = (np.einsum("...gk,...gl->...kl", pgk, pgk) - nr * outer) / (nr - 1)
        pe: Array = np.sum(w * (outer - s2 / nr), axis=(-1, -2))
        return pe

    def coef_fn(sums: Array) -> Array:
        _, pa, _ = _family_parts(sums[..., :3])
        return _chance_corrected(pa, pe_of(sums))

    sums = suff.sum(axis=0)
    pe = float(pe_of(sums[None, :])[0])
    # irrCAC conger.kappa.raw: per-item chance-agreement contributions (lambda_ig)
    ng = eps.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pgk = delta.sum(axis=0) / ng[:, None]
    colsum = pgk.sum(axis=0)
    dw = delta @ w.T  # [i, g, k] = sum_l w[k, l] delta[i, g, l]
    pw = pgk @ w.T  # [g, k]
    a = (n / ng)[None, :, None] * (dw - (eps - ng[None, :] / n)[:, :, None] * pw[None, :, :])
    lam = np.sum(a * (colsum[None, None, :] - pgk[None, :, :]), axis=2)
    pe_ivec = lam.sum(axis=1) / (nr * (nr - 1))
    return _family_result(
        name="Conger's kappa" if wname == "unweighted" else f"Conger's weighted kappa ({wname})",
        coef_fn=coef_fn,
        suff=suff,
        pa_i=pa_i,
        ok=ok,
        pe=pe,
        pe_ivec=pe_ivec,
        n_raters=nr,
        categories=r.categories,
        wname=wname,
        why="chance agreement is 1: every rating is the same category",
        origin=(r.rows, r.n_rows_input),
        bounds=_KAPPA_RANGE if wname == "unweighted" and bool(rated.all()) else _UPPER_ONLY,
    )


def light_kappa(
    ratings: Any,
    *,
    weights: Any = None,
    categories: Sequence[Any] | None = None,
) -> AgreementResult:
    """Light's (1971) kappa: the mean of Cohen's kappa over all pairs of raters.

    Each pair uses the items both rated. Pairs whose kappa is undefined are left out of the
    mean (None if all are). ``standard_error`` is the jackknife SE over items (no standard
    closed form); bootstrap intervals are available.
    """
    r = as_ratings(ratings, categories=categories)
    k, nr = r.n_categories, r.n_raters
    w, wname = _weights_matrix(weights, r.n_categories)
    pairs = list(itertools.combinations(range(nr), 2))
    suff = np.concatenate([_pair_suff(r.codes[:, [g, h]], k, w) for g, h in pairs], axis=1)
    pair_fn = _table_fn(k, w)
    npairs = len(pairs)
    width = 1 + 2 * k

    def coef_fn(sums: Array) -> Array:
        per = pair_fn(sums.reshape((*sums.shape[:-1], npairs, width)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean: Array = np.nanmean(per, axis=-1)
            return mean

    est = _Estimator(suff, coef_fn, r.rows, r.n_rows_input)
    sums = suff.sum(axis=0)
    coef = _none(coef_fn(sums[None, :])[0])
    per_pair = pair_fn(sums.reshape(npairs, width))
    if coef is None:
        _warn_degenerate("Light's kappa", "every pair of raters has chance agreement 1")
    elif np.any(np.isnan(per_pair)):
        warnings.warn(
            DegenerateDataWarning(
                "Light's kappa: Cohen's kappa is undefined for some pairs of raters; "
                "the mean uses the others"
            ),
            stacklevel=2,
        )
    se = _jackknife_se(est) if coef is not None else None
    few = _few_items("Light's kappa", r.n_items, coef, se)
    if few:
        se = None
    return AgreementResult(
        statistic=coef,
        standard_error=se,
        n=r.n_items,
        n_raters=nr,
        categories=r.categories,
        name="Light's kappa",
        df=None,
        se_method="jackknife over items",
        degenerate=coef is None or few,
        weights=wname,
        range=_KAPPA_RANGE if wname != "custom" else _UPPER_ONLY,  # a mean of Cohen's kappas
        extra={"pairwise": {(g, h): _none(v) for (g, h), v in zip(pairs, per_pair, strict=True)}},
        _estimator=est,
    )
