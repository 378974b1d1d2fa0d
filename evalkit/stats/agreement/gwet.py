"""Chance agreement from the number of categories: Gwet's AC1/AC2, Brennan-Prediger, PABAK.

Their chance agreement depends on q, the number of categories (observed, or declared with
``categories=``), so one category alone leaves them undefined; PABAK is Brennan-Prediger for
two raters, with Byrt, Bishop & Carlin's (1993) prevalence and bias indices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from evalkit.errors import EvalkitError
from evalkit.stats._inputs import Ratings
from evalkit.stats._result import AgreementResult, _Estimator
from evalkit.stats.agreement._common import (
    _EPS,
    _UPPER_ONLY,
    Array,
    _chance_corrected,
    _label_scores,
    _replace,
    _weights_matrix,
)
from evalkit.stats.agreement._family import (
    _family_parts,
    _family_result,
    _family_suff,
    _multi_or_table_input,
)
from evalkit.stats.agreement._pairs import _complete_pairs, _ratings_or_table

__all__ = ["brennan_prediger", "gwet_ac1", "pabak"]


def _gwet_range(w: Array, q: int) -> tuple[float | None, float | None]:
    """The range [-p / (1 - p), 1] of AC1/AC2 and Brennan-Prediger.

    p = sum(w) / q^2 is their largest chance agreement (pa >= 0); unweighted -1 / (q - 1).
    See ``_result`` (range clipping).
    """
    p = float(w.sum()) / q**2 if q >= 1 else 1.0
    return (-p / (1.0 - p), 1.0) if p < 1.0 - _EPS else _UPPER_ONLY


def gwet_ac1(
    ratings: Any = None,
    *,
    table: Any = None,
    counts: Any = None,
    weights: Any = None,
    categories: Sequence[Any] | None = None,
) -> AgreementResult:
    """Gwet's AC1 (AC2 with ``weights``) for any number of raters, missing ratings allowed.

    Chance agreement ``pe = sum(w) / (q (q - 1)) * sum_k pi_k (1 - pi_k)`` (Gwet 2008, 2014),
    ``q`` the number of categories (observed, or declared with ``categories=``). The standard
    error is Gwet's variance as in R irrCAC ``gwet.ac1.raw`` (finite-population correction
    f = 0; Gwet 2014, *Handbook of Inter-Rater Reliability*, 4th ed.), with a t(n-1)
    interval, upper bound capped at 1. ``table=`` (two raters) is expanded to items and
    gets the contingency-table variance of irrCAC ``gwet.ac1.table`` (Gwet 2008), which
    divides by n where the raw-data variance divides by n - 1.
    """
    counts_arr, cats, n_raters, origin = _multi_or_table_input(
        "gwet_ac1", ratings, table, counts, categories
    )
    w, wname = _weights_matrix(weights, len(cats), scores=_label_scores(cats))
    q = len(cats)
    tw = float(w.sum())
    suff, rr, ok, pa_i, p_ik = _family_suff(counts_arr, w)
    scale = tw / (q * (q - 1)) if q >= 2 else math.nan

    def coef_fn(sums: Array) -> Array:
        _, pa, pi = _family_parts(sums)
        pe = scale * np.sum(pi * (1 - pi), axis=-1)
        return _chance_corrected(pa, pe)

    pi = p_ik.mean(axis=0)
    pe = float(scale * np.sum(pi * (1 - pi)))
    pe_ivec = scale * (counts_arr @ (1 - pi)) / np.where(rr > 0, rr, 1.0)
    return _family_result(
        name="Gwet's AC1" if wname == "unweighted" else f"Gwet's AC2 ({wname})",
        coef_fn=coef_fn,
        suff=suff,
        pa_i=pa_i,
        ok=ok,
        pe=pe,
        pe_ivec=pe_ivec,
        n_raters=n_raters,
        categories=cats,
        wname=wname,
        why="only one category: chance agreement is undefined (declare categories=)",
        from_table=table is not None,
        origin=origin,
        bounds=_gwet_range(w, q),
    )


def brennan_prediger(
    ratings: Any = None,
    *,
    table: Any = None,
    counts: Any = None,
    weights: Any = None,
    categories: Sequence[Any] | None = None,
) -> AgreementResult:
    """Brennan & Prediger's (1981) coefficient: chance agreement ``sum(w) / q^2``.

    Any number of raters, missing ratings allowed; SE as R irrCAC ``bp.coeff.raw``
    (f = 0), t(n-1) interval. ``q`` is the number of categories (declare unused ones with
    ``categories=``).
    """
    counts_arr, cats, n_raters, origin = _multi_or_table_input(
        "brennan_prediger", ratings, table, counts, categories
    )
    w, wname = _weights_matrix(weights, len(cats), scores=_label_scores(cats))
    q = len(cats)
    pe = float(w.sum()) / q**2
    suff, _, ok, pa_i, _ = _family_suff(counts_arr, w)

    def coef_fn(sums: Array) -> Array:
        _, pa, _ = _family_parts(sums)
        return _chance_corrected(pa, np.full_like(pa, pe))

    return _family_result(
        name="Brennan-Prediger coefficient",
        coef_fn=coef_fn,
        suff=suff,
        pa_i=pa_i,
        ok=ok,
        pe=pe,
        pe_ivec=None,
        n_raters=n_raters,
        categories=cats,
        wname=wname,
        why="only one category (declare categories=)",
        from_table=table is not None,
        origin=origin,
        bounds=_gwet_range(w, q),
    )


def pabak(
    ratings: Any = None,
    *,
    table: Any = None,
    categories: Sequence[Any] | None = None,
) -> AgreementResult:
    """Prevalence-adjusted bias-adjusted kappa (Byrt, Bishop & Carlin 1993), two raters.

    ``PABAK = (q * po - 1) / (q - 1)`` (``2 po - 1`` for a 2 x 2 table), the
    Brennan-Prediger coefficient of two raters (same SE). For a 2 x 2 table
    ``[[a, b], [c, d]]`` also ``prevalence_index = |a - d| / n`` and
    ``bias_index = |b - c| / n`` (None for more categories; the signed ``(a - d) / n`` and
    ``(b - c) / n`` are ``extra["prevalence_index_signed"]`` / ``["bias_index_signed"]``).
    With them, Byrt et al.'s identity ``kappa = (PABAK - PI^2 + BI^2) / (1 - PI^2 + BI^2)``
    holds.
    """
    r, from_table = _ratings_or_table("pabak", ratings, table, categories)
    codes, kept = _complete_pairs(r)
    if codes.shape[0] == 0:
        raise EvalkitError("pabak: no item has ratings from both raters")
    if from_table:
        bp = brennan_prediger(table=table, categories=categories)
    else:
        bp = brennan_prediger(counts=Ratings(codes, r.categories).counts(), categories=r.categories)
    k = r.n_categories
    tab = np.zeros((k, k))
    np.add.at(tab, (codes[:, 0], codes[:, 1]), 1.0)
    n = tab.sum()
    pi_ = bi_ = pi_signed = bi_signed = None
    if k == 2:
        pi_signed = float((tab[0, 0] - tab[1, 1]) / n)
        bi_signed = float((tab[0, 1] - tab[1, 0]) / n)
        pi_, bi_ = abs(pi_signed), abs(bi_signed)
    est = bp._estimator
    if est is not None:
        est = _Estimator(est.suff, est.fn, kept, r.n_rows_input)
    return _replace(
        bp,
        _estimator=est,
        name="PABAK",
        n_raters=2,
        prevalence_index=pi_,
        bias_index=bi_,
        extra={
            "table": tab,
            "prevalence_index_signed": pi_signed,  # (a - d) / n, as R epiR reports it
            "bias_index_signed": bi_signed,  # (b - c) / n
        },
    )
