"""Inter-rater agreement coefficients with standard errors and self-bootstrapping results.

Every coefficient is written as a function of *sums over items* of per-item sufficient
statistics. The result keeps those per-item statistics, so a bootstrap resample (a vector of
item counts ``w``) is evaluated as ``fn(w @ S)`` for all resamples at once (``bootstrap.py``).

Degenerate data rule (the same for every coefficient): a chance-corrected coefficient
``(pa - pe) / (1 - pe)`` is undefined when ``pe == 1`` (every rating is the same single
category, so ``0/0``), and Krippendorff's alpha when the expected disagreement is 0. Then
``statistic`` is ``None``, ``degenerate`` is ``True`` and a ``DegenerateDataWarning`` is
issued: never an exception, never a NaN. With too few items (one item, or two whose
analytic standard error is 0 or undefined) the estimate is kept, but ``degenerate`` is
``True``, the standard errors are ``None`` and every interval is ``(None, None)``, each with a
``DegenerateDataWarning`` saying why (``_result`` module docstring).
Declaring the possible labels with ``categories=`` can make a coefficient defined (AC1 and
Brennan-Prediger use the number of categories).

References: Cohen (1960, 1968); Fleiss, Cohen & Everitt (1969) "Large sample standard errors
of kappa and weighted kappa"; Fleiss (1971); Fleiss, Nee & Landis (1979); Conger (1980);
Light (1971); Brennan & Prediger (1981); Byrt, Bishop & Carlin (1993); Cicchetti &
Feinstein (1990); Krippendorff (2011) "Computing Krippendorff's alpha-reliability";
Gwet (2008) and Gwet (2014) *Handbook of Inter-Rater Reliability*, 4th ed., whose variance
formulas (finite-population correction f = 0) are those of the R package irrCAC.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.stats._inputs import (
    Ratings,
    as_counts_indexed,
    as_ratings,
    as_table,
    exclusive,
    ratings_from_table,
)
from evalkit.stats._result import AgreementResult, CategoryAgreement, _Estimator

__all__ = [
    "brennan_prediger",
    "cohen_kappa",
    "conger_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "kappa_max",
    "krippendorff_alpha",
    "light_kappa",
    "pabak",
    "specific_agreement",
]

Array = NDArray[np.float64]
_EPS = 1e-12
_LEVELS = ("nominal", "ordinal", "interval", "ratio")


# --------------------------------------------------------------------------- helpers


def _none(x: float | np.floating[Any] | Array | None) -> float | None:
    """NaN (undefined) -> None; numbers -> float."""
    if x is None:
        return None
    value = float(x)
    return None if math.isnan(value) else value


def _chance_corrected(pa: Array | float, pe: Array | float) -> Array:
    """(pa - pe) / (1 - pe), NaN where pe == 1 (undefined)."""
    pa, pe = np.asarray(pa, dtype=float), np.asarray(pe, dtype=float)
    den = 1.0 - pe
    ok = np.abs(den) > _EPS
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, (pa - pe) / np.where(ok, den, 1.0), np.nan)


def _warn_degenerate(name: str, why: str) -> None:
    warnings.warn(
        DegenerateDataWarning(f"{name} is undefined on these data ({why}); statistic is None"),
        stacklevel=3,
    )


#: An SE below this from two items is a rounding error of 0 (a real one is orders larger).
_ZERO_SE = 1e-9


def _few_items(
    name: str, n: int, statistic: float | None, se: float | None, stacklevel: int = 3
) -> bool:
    """Too few items for an SE: warn (no SE, no interval; see ``_result``) and return True.

    One item; or two, with a defined ``statistic`` whose analytic ``se`` is 0 or None.
    """
    if n < 2:
        why = f"only {n} item: the estimate describes it"
    elif n == 2 and statistic is not None and (se is None or se < _ZERO_SE):
        what = "undefined" if se is None else "0"
        why = f"only 2 items, whose standard error is {what}: the estimate describes them"
    else:
        return False
    warnings.warn(
        DegenerateDataWarning(
            f"{name}: {why}, but its sampling variation cannot be estimated "
            "(standard error None, every interval (None, None))"
        ),
        stacklevel=stacklevel,  # the caller of the public function
    )
    return True


_KAPPA_RANGE: tuple[float | None, float | None] = (-1.0, 1.0)
_UPPER_ONLY: tuple[float | None, float | None] = (None, 1.0)


def _gwet_range(w: Array, q: int) -> tuple[float | None, float | None]:
    """The range [-p / (1 - p), 1] of AC1/AC2 and Brennan-Prediger.

    p = sum(w) / q^2 is their largest chance agreement (pa >= 0); unweighted -1 / (q - 1).
    See ``_result`` (range clipping).
    """
    p = float(w.sum()) / q**2 if q >= 1 else 1.0
    return (-p / (1.0 - p), 1.0) if p < 1.0 - _EPS else _UPPER_ONLY


def _weights_matrix(weights: Any, k: int, argname: str = "weights") -> tuple[Array, str]:
    """Agreement weights (1 on the diagonal) and a label, from ``weights``.

    ``None``/"unweighted": identity. "linear": ``1 - |x_i - x_j| / range``. "quadratic":
    ``1 - (x_i - x_j)^2 / range^2``, with ``x`` the category positions 0..k-1 in sorted
    label order (as R irr ``kappa2`` and statsmodels ``cohens_kappa``; a label unused by
    every rater is no category unless declared with ``categories=``). A k x k matrix is read
    as *disagreement* weights (0 on the diagonal, as in statsmodels ``cohens_kappa``),
    converted to ``1 - d / max(d)``.
    """
    values = np.arange(k, dtype=float)  # positions, not the labels' numeric values
    if weights is None or (isinstance(weights, str) and weights in ("unweighted", "identity")):
        return np.eye(k), "unweighted"
    if isinstance(weights, str):
        diff = np.abs(values[:, None] - values[None, :])
        span = float(values.max() - values.min()) if k > 1 else 1.0
        span = span or 1.0
        if weights == "linear":
            return 1.0 - diff / span, "linear"
        if weights == "quadratic":
            return 1.0 - (diff / span) ** 2, "quadratic"
        raise EvalkitError(
            f"{argname} must be None, 'linear', 'quadratic' or a k x k disagreement-weight "
            f"matrix, got {weights!r}"
        )
    try:
        d = np.asarray(weights, dtype=float)
    except (TypeError, ValueError):
        raise EvalkitError(f"{argname} must be a numeric k x k matrix") from None
    if d.shape != (k, k):
        raise EvalkitError(f"{argname} must be {k} x {k} (one row per category), got {d.shape}")
    if not np.all(np.isfinite(d)) or np.any(d < 0):
        raise EvalkitError(f"{argname}: disagreement weights must be finite and >= 0")
    if np.any(np.diag(d) != 0):
        raise EvalkitError(f"{argname}: disagreement weights must be 0 on the diagonal")
    if d.max() == 0:
        raise EvalkitError(f"{argname}: disagreement weights are all 0")
    return 1.0 - d / d.max(), "custom"


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


def _t_test(stat: float | None, se: float | None, df: int) -> tuple[float | None, float | None]:
    if stat is None or not se:
        return None, None
    z = stat / se
    return float(z), float(2 * stats.t.sf(abs(z), df))


def _normal_test(stat: float | None, se0: float | None) -> tuple[float | None, float | None]:
    if stat is None or not se0:
        return None, None
    z = stat / se0
    return float(z), float(2 * stats.norm.sf(abs(z)))


def _jackknife_se(est: _Estimator) -> float | None:
    """Tukey's jackknife SE from leave-one-item-out sums (used where no formula is standard)."""
    s = est.suff
    n = s.shape[0]
    if n < 2:
        return None
    vals = est.fn(s.sum(axis=0)[None, :] - s)
    if np.any(np.isnan(vals)):
        return None
    return float(math.sqrt((n - 1) / n * np.sum((vals - vals.mean()) ** 2)))


def _jackknife_result(
    suff: Array, fn: Callable[[Array], Array], rows: NDArray[np.intp], n_input: int, **fields: Any
) -> AgreementResult:
    """A coefficient ``fn`` of the item sums of ``suff`` with its jackknife SE over items."""
    est = _Estimator(suff, fn, rows, n_input)
    value = _none(fn(suff.sum(axis=0)[None, :])[0])
    se = _jackknife_se(est) if value is not None else None
    name = str(fields.get("name", "statistic"))
    few = _few_items(name, suff.shape[0], value, se, stacklevel=4)
    return AgreementResult(
        statistic=value,
        standard_error=None if few else se,
        se_method="jackknife over items",
        degenerate=value is None or few,
        _estimator=est,
        **fields,
    )


def _ratings_or_table(
    name: str, ratings: Any, table: Any, categories: Sequence[Any] | None
) -> tuple[Ratings, bool]:
    """Two-rater input: ``ratings`` (n x 2) or ``table`` (k x k). Returns (ratings, from_table)."""
    which, value = exclusive(name, ("ratings", ratings), ("table", table))
    if which == "table":
        tab = as_table(value)
        r = ratings_from_table(tab)
        if categories is not None:
            cats = tuple(categories)
            if len(cats) != tab.shape[0]:
                raise EvalkitError(
                    f"{name}: categories has {len(cats)} labels, table is "
                    f"{tab.shape[0]} x {tab.shape[0]}"
                )
            r = Ratings(r.codes, cats)
        return r, True
    r = as_ratings(value, categories=categories)
    if r.n_raters != 2:
        raise EvalkitError(
            f"{name}: ratings must have exactly 2 raters (columns), got {r.n_raters}; "
            "for more raters use fleiss_kappa, conger_kappa, light_kappa or gwet_ac1"
        )
    return r, False


def _complete_pairs(r: Ratings) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Items rated by both raters: their codes and their input rows."""
    both = (r.codes >= 0).all(axis=1)
    return r.codes[both], r.rows[both]


def _pair_suff(codes: NDArray[np.intp], k: int, w: Array) -> Array:
    """Per item of two raters: [w(a_i, b_i), one-hot(a_i) (k), one-hot(b_i) (k)].

    Sums give n * po and both raters' margins, all a weighted kappa needs: 1 + 2k columns
    rather than the k * k cells of the table. Rows of codes with a -1 give an all-zero row.
    """
    n = codes.shape[0]
    s = np.zeros((n, 1 + 2 * k))
    ok = np.nonzero((codes >= 0).all(axis=1))[0]
    a, b = codes[ok, 0], codes[ok, 1]
    s[ok, 0] = w[a, b]
    s[ok, 1 + a] = 1.0
    s[ok, 1 + k + b] = 1.0
    return s


def _pair_margins(sums: Array, k: int) -> tuple[Array, Array, Array]:
    """(po, rater-1 margins, rater-2 margins) from sums (..., 1 + 2k); NaN if no item."""
    n = sums[..., 1 : 1 + k].sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(n > 0, 1.0 / np.where(n > 0, n, 1.0), np.nan)
    return (
        sums[..., 0] * inv,
        sums[..., 1 : 1 + k] * inv[..., None],
        sums[..., 1 + k :] * inv[..., None],
    )


def _table_fn(k: int, w: Array) -> Callable[[Array], Array]:
    """Weighted Cohen kappa from sums (..., 1 + 2k) of ``_pair_suff``."""

    def fn(sums: Array) -> Array:
        po, rows, cols = _pair_margins(sums, k)
        pe = np.einsum("...i,ij,...j->...", rows, w, cols)
        return _chance_corrected(po, pe)

    return fn


# --------------------------------------------------------------------------- Cohen


def cohen_kappa(
    ratings: Any = None,
    *,
    table: Any = None,
    weights: Any = None,
    categories: Sequence[Any] | None = None,
) -> AgreementResult:
    """Cohen's kappa (weighted with ``weights``) for two raters.

    Give ``ratings`` (items x 2; items missing either rating are left out) or ``table``
    (k x k counts, rows rater 1). ``weights``: None, "linear", "quadratic" (Cicchetti-Allison
    and Fleiss-Cohen agreement weights on the category scores) or a k x k disagreement-weight
    matrix with 0 diagonal. ``standard_error`` is the large-sample SE under H1 and
    ``standard_error_h0`` the SE under H0 (kappa = 0), both from Fleiss, Cohen & Everitt
    (1969); ``z = statistic / standard_error_h0`` with a two-sided normal ``p_value``. The
    analytic interval is ``statistic +- z * SE`` (as SAS PROC FREQ). Degenerate rule: see the
    module docstring.
    """
    r, _ = _ratings_or_table("cohen_kappa", ratings, table, categories)
    codes, kept = _complete_pairs(r)
    if codes.shape[0] == 0:
        raise EvalkitError("cohen_kappa: no item has ratings from both raters")
    k = r.n_categories
    w, wname = _weights_matrix(weights, k)
    suff = _pair_suff(codes, k, w)
    est = _Estimator(suff, _table_fn(k, w), kept, r.n_rows_input)
    n = codes.shape[0]
    counts = np.zeros((k, k))
    np.add.at(counts, (codes[:, 0], codes[:, 1]), 1.0)
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
    few = _few_items("Cohen's kappa", n, kappa, se)
    if few:
        se = se0 = None
    z, pval = _normal_test(kappa, se0)
    return AgreementResult(
        statistic=kappa,
        standard_error=se,
        n=n,
        n_raters=2,
        categories=r.categories,
        name="Cohen's kappa" if wname == "unweighted" else f"Cohen's weighted kappa ({wname})",
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
        _estimator=est,
    )


# --------------------------------------------------------------------------- multi-rater family


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
    few = _few_items(name, n, coef, se, stacklevel=4)
    if few:
        se = None
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
    w, wname = _weights_matrix(weights, len(cats))
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


def _replace(res: AgreementResult, **changes: Any) -> AgreementResult:
    import dataclasses

    return dataclasses.replace(res, **changes)


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
    w, wname = _weights_matrix(weights, len(cats))
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
    w, wname = _weights_matrix(weights, len(cats))
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
    w, wname = _weights_matrix(weights, r.n_categories)
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


# --------------------------------------------------------------------------- Krippendorff


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
    which, value = exclusive("krippendorff_alpha", ("ratings", ratings), ("counts", counts))
    if which == "counts":
        counts_arr, base_rows, n_input = as_counts_indexed(value)
        cats = _count_categories(value, counts_arr, categories)
        numeric = all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in cats)
        if level in ("interval", "ratio") and not numeric:
            raise EvalkitError(f"krippendorff_alpha: level={level!r} needs numeric categories")
        values = np.asarray(cats, dtype=float) if numeric else np.arange(len(cats), dtype=float)
        n_raters = int(counts_arr.sum(axis=1).max())
    else:
        r = as_ratings(value, categories=categories)
        if level in ("interval", "ratio") and not r.numeric:
            raise EvalkitError(
                f"krippendorff_alpha: level={level!r} needs numeric labels, got "
                f"{list(r.categories)[:5]!r}"
            )
        counts_arr, cats, values, n_raters = r.counts(), r.categories, r.values, r.n_raters
        base_rows, n_input = r.rows, r.n_rows_input
    m = counts_arr.sum(axis=1)
    pairable = m >= 2
    c = counts_arr[pairable]
    m = m[pairable]
    q = len(cats)
    if c.shape[0] == 0:
        raise EvalkitError("krippendorff_alpha: no unit has two or more ratings (none pairable)")
    # per-unit coincidences o^u_ck = n_uc (n_uk - [c == k]) / (m_u - 1)
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
        suff = o_u.reshape(c.shape[0], q * q)

        def alpha_fn(sums: Array) -> Array:
            o = sums.reshape((*sums.shape[:-1], q, q))
            marg = o.sum(axis=-1)
            d = _delta("ordinal", values, marg)
            return _alpha_from(np.sum(o * d, axis=(-1, -2)), marg, d)

    else:
        d_fixed = _delta(level, values, np.zeros(q))
        # sum_ck o^u_ck d_ck without the q x q array per unit (d_cc = 0)
        disagreement = np.sum((c @ d_fixed) * c, axis=1) / (m - 1)
        suff = np.column_stack([disagreement, c])

        def alpha_fn(sums: Array) -> Array:
            return _alpha_from(sums[..., 0], sums[..., 1:], d_fixed)

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


# --------------------------------------------------------------------------- two-rater extras


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
        kept,
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


def _positive_index(cats: tuple[Any, ...], positive: Any, from_table: bool) -> int:
    if positive is not None:
        if positive not in cats:
            raise EvalkitError(f"positive={positive!r} is not one of the categories {cats!r}")
        return cats.index(positive)
    if from_table:
        return 0  # table [[a, b], [c, d]]: a = both raters positive (Cicchetti & Feinstein)
    if tuple(cats) == (0, 1):
        return 1
    raise EvalkitError(
        f"specific_agreement: say which label is positive with positive=, categories are {cats!r}"
    )


def specific_agreement(
    ratings: Any = None,
    *,
    table: Any = None,
    positive: Any = None,
    categories: Sequence[Any] | None = None,
) -> AgreementResult:
    """Positive and negative (category-specific) agreement (Cicchetti & Feinstein 1990).

    Two raters, 2 x 2 table ``[[a, b], [c, d]]``: ``PA = 2a / (2a + b + c)``,
    ``NA = 2d / (2d + b + c)``. In general (any raters, Uebersax's form) the specific agreement
    on category j is ``sum_i n_ij (n_ij - 1) / sum_i n_ij (r_i - 1)``. ``statistic`` is the
    agreement on the ``positive`` category (row/column 0 of a table; label 1/True for 0/1
    labels; otherwise say ``positive=``); ``.positive`` and ``.negative`` (binary data) are
    results of their own, ``per_category`` maps every category to its specific agreement.
    Standard errors: jackknife over items.
    """
    if table is not None:
        r, from_table = _ratings_or_table("specific_agreement", ratings, table, categories)
    else:
        if ratings is None:
            raise EvalkitError("specific_agreement: give ratings= or table=")
        r, from_table = as_ratings(ratings, categories=categories), False
        if categories is None and set(r.categories) <= {0, 1}:
            # binary 0/1 (or False/True) labels: both categories exist even if one is unused
            r = as_ratings(ratings, categories=(0, 1))
    counts_arr = r.counts()
    rr = counts_arr.sum(axis=1)
    use = rr >= 2
    c, rr = counts_arr[use], rr[use]
    if c.shape[0] == 0:
        raise EvalkitError("specific_agreement: no item has two or more ratings")
    rows, n_input = r.rows[use], r.n_rows_input
    cats = r.categories
    q = len(cats)
    suff = np.column_stack([c * (c - 1), c * (rr - 1)[:, None]])
    n = int(c.shape[0])

    def one(j: int, label: str) -> AgreementResult:
        def fn(sums: Array) -> Array:
            num, den = sums[..., j], sums[..., q + j]
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)

        return _jackknife_result(
            suff,
            fn,
            rows,
            n_input,
            n=n,
            n_raters=r.n_raters,
            categories=cats,
            name=label,
            range=(0.0, 1.0),  # a proportion
        )

    per = {cat: one(j, f"specific agreement on {cat!r}") for j, cat in enumerate(cats)}
    per_cat = {
        cat: CategoryAgreement(res.statistic, res.standard_error) for cat, res in per.items()
    }
    jpos = _positive_index(cats, positive, from_table) if q == 2 or positive is not None else None
    if jpos is None:
        raise EvalkitError(
            "specific_agreement: with more than two categories say which is positive= "
            "(per_category has every category)"
        )
    pos = _replace(per[cats[jpos]], name="positive agreement")
    neg = _replace(per[cats[1 - jpos]], name="negative agreement") if q == 2 else None
    if pos.statistic is None:
        _warn_degenerate("positive agreement", "no rating in the positive category")
    return _replace(
        pos,
        name="specific agreement (positive)",
        positive=pos,
        negative=neg,
        per_category=per_cat,
        extra={
            "positive_agreement": pos.statistic,
            "negative_agreement": neg.statistic if neg is not None else None,
        },
    )
