"""Cohen's kappa, weighted or not, for two raters, and the largest kappa their margins allow.

Standard errors of Fleiss, Cohen & Everitt (1969) under H1 and H0; kappa_max (Cohen 1960) with
a jackknife SE over items.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import EvalkitError
from evalkit.stats._result import AgreementResult, _Estimator
from evalkit.stats.agreement._common import (
    _KAPPA_RANGE,
    _UPPER_ONLY,
    Array,
    _chance_corrected,
    _few_items,
    _jackknife_result,
    _none,
    _normal_test,
    _replace,
    _warn_degenerate,
    _warn_no_variation,
    _weights_matrix,
)
from evalkit.stats.agreement._pairs import (
    _complete_pairs,
    _pair_margins,
    _pair_suff,
    _ratings_or_table,
    _table_fn,
)

__all__ = ["cohen_kappa", "kappa_max"]


def cohen_kappa(
    ratings: Any = None,
    rater_b: Any = None,
    *,
    table: Any = None,
    weights: Any = None,
    categories: Sequence[Any] | None = None,
) -> AgreementResult:
    """Cohen's kappa (weighted with ``weights``) for two raters.

    Give ``ratings`` (items x 2; items missing either rating are left out), or the two raters
    apart as scikit-learn's ``cohen_kappa_score(y1, y2)`` takes them (``cohen_kappa(rater_a,
    rater_b)``: one label per item each, None for missing), or ``table``
    (k x k counts, rows rater 1). ``weights``: None, "linear", "quadratic" (Cicchetti-Allison
    and Fleiss-Cohen agreement weights on the category scores) or a k x k disagreement-weight
    matrix with 0 diagonal. ``standard_error`` is the large-sample SE under H1 and
    ``standard_error_h0`` the SE under H0 (kappa = 0), both from Fleiss, Cohen & Everitt
    (1969); ``z = statistic / standard_error_h0`` with a two-sided normal ``p_value``. The
    analytic interval is ``statistic +- z * SE`` (as SAS PROC FREQ). Degenerate rule: see the
    module docstring.
    """
    if rater_b is not None:
        ratings = _two_raters(ratings, rater_b)
    r, _ = _ratings_or_table("cohen_kappa", ratings, table, categories)
    codes, kept = _complete_pairs(r)
    if codes.shape[0] == 0:
        raise EvalkitError("cohen_kappa: no item has ratings from both raters")
    k = r.n_categories
    w, wname = _weights_matrix(weights, k)
    # the per-item matrix only when a bootstrap asks for it: a point estimate and its analytic
    # SE need the k x k table alone
    est = _Estimator(lambda: _pair_suff(codes, k, w), _table_fn(k, w), kept, r.n_rows_input)
    n = codes.shape[0]
    counts = _table(codes, k)
    p = counts / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    # from integer counts, so perfect agreement gives po == 1 exactly and kappa never exceeds 1
    po = float((w * counts).sum() / n)
    pe = float(rows @ w @ cols)
    kappa = _none(_chance_corrected(po, pe))
    se = se0 = None
    if kappa is None:
        _warn_degenerate("Cohen's kappa", "chance agreement is 1: one category only")
    else:
        # Fleiss, Cohen & Everitt (1969), eqs. for weighted kappa (unweighted: w = I)
        wr = w @ cols  # w-bar_i. = sum_j p_.j w_ij
        wc = rows @ w  # w-bar_.j = sum_i p_i. w_ij
        both = wr[:, None] + wc[None, :]
        var1 = (np.sum(p * (w - both * (1 - kappa)) ** 2) - (kappa - pe * (1 - kappa)) ** 2) / (
            n * (1 - pe) ** 2
        )
        var0 = (np.sum(np.outer(rows, cols) * (w - both) ** 2) - pe**2) / (n * (1 - pe) ** 2)
        se = float(math.sqrt(max(var1, 0.0)))
        se0 = float(math.sqrt(max(var0, 0.0)))
    name = "Cohen's kappa" if wname == "unweighted" else f"Cohen's weighted kappa ({wname})"
    few = _few_items(name, n, kappa, se)
    extra: dict[str, Any] = {}
    if kappa is not None and not few and min(np.count_nonzero(rows), np.count_nonzero(cols)) == 1:
        # po == pe whatever the other rater did: kappa is 0 by construction, and its analytic
        # SE is 0 up to rounding (7e-9 seen), which would be a zero-width interval
        why = (
            "a rater used one category only, so kappa is 0 by construction (po = pe) whatever "
            "the other rater did"
        )
        _warn_no_variation(name, why)
        extra["degenerate_reason"] = why
        kappa, few = 0.0, True  # exactly: weighted sums can leave a 1e-16 residue
    if few:
        se = se0 = None
    z, pval = _normal_test(kappa, se0)
    return AgreementResult(
        statistic=kappa,
        standard_error=se,
        n=n,
        n_raters=2,
        categories=r.categories,
        name=name,
        observed_agreement=po,
        chance_agreement=pe,
        standard_error_h0=se0,
        z=z,
        p_value=pval,
        df=None,
        se_method="Fleiss, Cohen & Everitt (1969)",
        degenerate=kappa is None or few,
        weights=wname,
        range=_KAPPA_RANGE if wname != "custom" else _UPPER_ONLY,
        extra=extra,
        _estimator=est,
    )


_CHUNK = 1 << 16


def _table(codes: NDArray[np.intp], k: int) -> Array:
    """The k x k table of the pairs (rows rater 1): counted a chunk at a time, no n-array."""
    cells = np.zeros(k * k, dtype=np.int64)
    for start in range(0, codes.shape[0], _CHUNK):
        part = codes[start : start + _CHUNK]
        cells += np.bincount(part[:, 0] * k + part[:, 1], minlength=k * k)
    return cells.reshape(k, k).astype(np.float64)


def _two_raters(rater_a: Any, rater_b: Any) -> list[tuple[Any, Any]]:
    """The items x 2 ratings of scikit-learn's call: two sequences, one label per item each."""
    columns = []
    for name, value in (("rater_a", rater_a), ("rater_b", rater_b)):
        column = np.asarray(value, dtype=object) if value is not None else None
        if column is None or column.ndim != 1:
            got = "nothing" if column is None else f"{column.ndim}-dimensional input"
            raise EvalkitError(
                f"cohen_kappa: with two raters given apart, {name} must be one label per item "
                f"(a 1-D sequence), got {got}"
            )
        columns.append(column.tolist())
    if len(columns[0]) != len(columns[1]):
        raise EvalkitError(
            f"cohen_kappa: rater_a has {len(columns[0])} labels and rater_b {len(columns[1])}; "
            "give both one label per item (None where one is missing)"
        )
    return list(zip(columns[0], columns[1], strict=True))


def kappa_max(
    ratings: Any = None,
    *,
    table: Any = None,
    categories: Sequence[Any] | None = None,
) -> AgreementResult:
    """The largest Cohen's kappa the two raters' marginal distributions allow (Cohen 1960).

    ``po_max = sum_k min(p_k., p_.k)``; ``kappa_max = (po_max - pe) / (1 - pe)``.
    ``standard_error`` is the jackknife SE over items; ``extra["kappa"]`` holds Cohen's kappa
    and ``extra["kappa_over_max"]`` their ratio.
    """
    r, _ = _ratings_or_table("kappa_max", ratings, table, categories)
    codes, kept = _complete_pairs(r)
    if codes.shape[0] == 0:
        raise EvalkitError("kappa_max: no item has ratings from both raters")
    k = r.n_categories
    suff = _pair_suff(codes, k, np.eye(k))

    def fn(sums: Array) -> Array:
        _, rows, cols = _pair_margins(sums, k)
        return _chance_corrected(np.minimum(rows, cols).sum(axis=-1), np.sum(rows * cols, axis=-1))

    res = _jackknife_result(
        suff,
        fn,
        kept if kept is not None else r.rows,
        r.n_rows_input,
        n=int(codes.shape[0]),
        n_raters=2,
        categories=r.categories,
        name="kappa_max",
        range=(0.0, 1.0),  # sum_k min(p_k., p_.k) >= sum_k p_k. p_.k
    )
    value = res.statistic
    if value is None:
        _warn_degenerate("kappa_max", "chance agreement is 1: one category only")
    kap = _none(_table_fn(k, np.eye(k))(suff.sum(axis=0)[None, :])[0])
    ratio = kap / value if (kap is not None and value) else None
    return _replace(res, extra={"kappa": kap, "kappa_over_max": ratio})
