"""Vectorized bootstrap: resample-weight matrices, percentile and BCa intervals.

A bootstrap resample of ``n`` items is represented by a vector of counts (how often each item
was drawn). Statistics that are functions of sums of per-item sufficient statistics are then
evaluated for all resamples at once as ``W @ S`` (``W``: resamples x items, ``S``: items x
stats), instead of a Python loop calling the statistic once per resample.

Without explicit ``weights``, items (or clusters) with identical sufficient statistics are
merged first and the counts are drawn as a multinomial over the distinct rows: the same
bootstrap distribution (items are exchangeable), with W of resamples x distinct rows. With
``weights`` (e.g. from ``resample_weights``) the item-level W is used as given, so results
can be compared draw for draw with any other implementation. W is processed in chunks below
~200 MB. Seeds: every function takes ``rng`` (Generator or int), never a global state.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.stats._inputs import check_resamples

if TYPE_CHECKING:  # imported at run time inside the functions: _result imports this module
    from evalkit.stats._result import BootstrapResult

__all__ = [
    "TIE_RTOL",
    "as_generator",
    "bca_interval",
    "below_and_ties",
    "bootstrap_sums",
    "percentile_interval",
    "resample_weights",
]

# keep a chunk of the resample-count matrix below this many bytes
_MAX_CHUNK_BYTES = 200_000_000


def as_generator(rng: Any) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from ``rng`` (a Generator, an int seed, or None).

    ``None`` draws fresh entropy (results are then not reproducible); pass a seed for
    reproducible intervals.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer, np.random.SeedSequence)):
        if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng < 0:
            raise EvalkitError(f"rng seed must be >= 0, got {rng}")
        if isinstance(rng, bool):
            raise EvalkitError("rng must be a Generator, an int seed or None, got a bool")
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.RandomState):
        # legacy generator: draw a seed from it, so its state still advances
        return np.random.default_rng(int(rng.randint(0, 2**31 - 1)))
    raise EvalkitError(
        f"rng must be a numpy.random.Generator, an int seed or None, got {type(rng).__name__}"
    )


def _cluster_codes(clusters: ArrayLike | Sequence[Any], n_items: int) -> NDArray[np.intp]:
    arr = np.asarray(clusters, dtype=object)
    if arr.ndim != 1 or arr.shape[0] != n_items:
        raise EvalkitError(
            f"clusters must be a 1-D sequence with one label per item ({n_items}), "
            f"got shape {arr.shape}"
        )
    if any(c is None or (isinstance(c, float) and np.isnan(c)) for c in arr):
        raise EvalkitError("clusters must not contain missing labels (None/NaN)")
    # map labels to 0..m-1 in order of first appearance (labels need only be hashable)
    index: dict[Any, int] = {}
    codes = np.empty(n_items, dtype=np.intp)
    for i, c in enumerate(arr.tolist()):
        codes[i] = index.setdefault(c, len(index))
    return codes


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def resample_weights(
    n_items: int,
    n_resamples: int,
    rng: Any = None,
    clusters: ArrayLike | Sequence[Any] | None = None,
) -> NDArray[np.int64]:
    """Bootstrap resample counts: how often each item is drawn, one row per resample.

    Parameters
    ----------
    n_items : number of items ``n``.
    n_resamples : number of bootstrap resamples ``B``.
    rng : ``numpy.random.Generator``, int seed, or None.
    clusters : optional label per item. When given, whole clusters are drawn with replacement
        (``m`` draws from ``m`` clusters) and every item of a drawn cluster gets the cluster's
        count; items of the same cluster therefore always share a weight.

    Returns
    -------
    ndarray of int64, shape ``(n_resamples, n_items)``. Without clusters every row sums to
    ``n_items``. The draws are multinomial, equivalent to drawing indices with replacement.
    """
    if not _is_int(n_items) or n_items < 1:
        raise EvalkitError(f"n_items must be a positive int, got {n_items!r}")
    check_resamples(n_resamples)
    gen = as_generator(rng)
    if clusters is None:
        return gen.multinomial(
            int(n_items), np.full(int(n_items), 1.0 / n_items), size=int(n_resamples)
        ).astype(np.int64)
    codes = _cluster_codes(clusters, int(n_items))
    m = int(codes.max()) + 1
    cw = gen.multinomial(m, np.full(m, 1.0 / m), size=int(n_resamples)).astype(np.int64)
    return cw[:, codes]


def _units(
    suff: NDArray[np.float64], clusters: Any
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Resampling units (items, or cluster sums) collapsed to distinct rows with multiplicities.

    Units with identical sufficient statistics are exchangeable, so drawing ``m`` units with
    replacement equals drawing multinomial counts over the distinct rows with probabilities
    proportional to their multiplicities: the same bootstrap distribution, far fewer columns.
    """
    if clusters is not None:
        codes = _cluster_codes(clusters, suff.shape[0])
        m = int(codes.max()) + 1
        units = np.zeros((m, suff.shape[1]))
        np.add.at(units, codes, suff)
    else:
        units = suff
    uniq, counts = np.unique(units, axis=0, return_counts=True)
    return uniq, counts.astype(float)


def _chunks(total: int, row_bytes: int) -> Iterator[int]:
    size = max(1, _MAX_CHUNK_BYTES // max(1, row_bytes))
    done = 0
    while done < total:
        step = min(size, total - done)
        yield step
        done += step


def _row_products(counts: NDArray[np.float64], rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """``counts @ rows`` computed row by row in a fixed order.

    BLAS picks its kernel (and so its summation order) by matrix shape, so ``A @ B`` can
    differ in the last bit for the same row of A in a 7-row chunk and in a 10,000-row one.
    einsum's own loop does not depend on the number of rows: a resample's statistic is the
    same whatever chunk it falls in, and on every machine with the same numpy.
    """
    products: NDArray[np.float64] = np.einsum("ij,jk->ik", counts, rows)
    return products


def _sums_of_resamples(
    suff: NDArray[np.float64],
    fn: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    n_resamples: int,
    gen: np.random.Generator,
    weights: NDArray[Any] | None,
    units: tuple[NDArray[np.float64], NDArray[np.float64]],
) -> NDArray[np.float64]:
    """Statistic of every resample, computed as fn(W @ S) in memory-bounded chunks.

    ``units`` are ``_units(suff, clusters)``; ``weights`` (item level) replace the draws.
    """
    n = suff.shape[0]
    out = []
    if weights is not None:
        w = np.asarray(weights)
        if w.ndim != 2 or w.shape[1] != n:
            raise EvalkitError(
                f"weights must have shape (n_resamples, {n}) (one count per item used), "
                f"got {w.shape}"
            )
        start = 0
        for size in _chunks(w.shape[0], 8 * (n + 4 * suff.shape[1])):
            out.append(fn(_row_products(w[start : start + size].astype(float), suff)))
            start += size
        return np.concatenate(out)
    rows, mult = units
    m = int(mult.sum())
    prob = mult / m
    # a chunk holds its counts (rows) and sums (columns), plus the statistic's temporaries
    for size in _chunks(n_resamples, 8 * (rows.shape[0] + 4 * rows.shape[1])):
        counts = gen.multinomial(m, prob, size=size).astype(float)
        out.append(fn(_row_products(counts, rows)))
    return np.concatenate(out)


def _jackknife(
    fn: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    units: tuple[NDArray[np.float64], NDArray[np.float64]],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Leave-one-unit-out statistics of the distinct ``units``, and their multiplicities."""
    rows, mult = units
    total = (rows * mult[:, None]).sum(axis=0)
    return fn(total[None, :] - rows), mult


def percentile_interval(distribution: NDArray[np.float64], level: float) -> tuple[float, float]:
    """Percentile interval (linear interpolation between order statistics, as scipy)."""
    alpha = (1 - level) / 2
    lo, hi = np.percentile(distribution, [100 * alpha, 100 * (1 - alpha)])
    return float(lo), float(hi)


#: Resamples this close to the estimate (relative) are ties of BCa's bias correction: the same
#: value reached by another order of floating-point sums (1e-16 apart) is no resample "below".
TIE_RTOL = 1e-12


def below_and_ties(distribution: NDArray[np.float64], theta_hat: float) -> tuple[int, int]:
    """Resamples below the estimate, and those tied with it (within ``TIE_RTOL``, relative).

    Relative to the larger of ``|theta_hat|`` and the distribution's largest magnitude, so an
    estimate of exactly 0 has ties too (a resample of 1e-17 is a rounding error of 0).
    """
    scale = max(abs(theta_hat), float(np.max(np.abs(distribution))) if distribution.size else 0.0)
    tied = np.abs(distribution - theta_hat) <= TIE_RTOL * scale
    return int(np.count_nonzero((distribution < theta_hat) & ~tied)), int(np.count_nonzero(tied))


def bca_interval(
    distribution: NDArray[np.float64],
    theta_hat: float,
    jackknife: NDArray[np.float64],
    level: float,
    jackknife_weights: NDArray[np.float64] | None = None,
) -> tuple[tuple[float, float], float, float]:
    """BCa interval (Efron & Tibshirani 1993, 14.3), as ``scipy.stats.bootstrap``.

    The bias correction ``z0`` counts ties half (scipy's rule), a tie being a resample within
    :data:`TIE_RTOL` of the estimate (:func:`below_and_ties`); the acceleration ``a`` comes
    from the jackknife values (optionally weighted by multiplicity). Returns
    ``((low, high), z0, a)``. When every jackknife value is equal, ``a`` is 0.
    """
    from scipy.special import ndtr, ndtri

    b = distribution.size
    below, ties = below_and_ties(distribution, theta_hat)
    frac = (2 * below + ties) / (2 * b)
    z0 = float(ndtri(frac))
    wts = np.ones_like(jackknife) if jackknife_weights is None else jackknife_weights
    dot = float(np.sum(wts * jackknife) / np.sum(wts))
    dev = dot - jackknife
    den = float(np.sum(wts * dev**2)) ** 1.5
    a = 0.0 if den == 0 else float(np.sum(wts * dev**3)) / (6 * den)
    z_lo = float(ndtri((1 - level) / 2))
    z_hi = -z_lo
    a1 = float(ndtr(z0 + (z0 + z_lo) / (1 - a * (z0 + z_lo))))
    a2 = float(ndtr(z0 + (z0 + z_hi) / (1 - a * (z0 + z_hi))))
    lo, hi = np.percentile(distribution, [100 * a1, 100 * a2])
    return (float(lo), float(hi)), z0, a


def bootstrap_sums(
    suff: Any,
    fn: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    *,
    theta_hat: float | None = None,
    n_resamples: int = 9999,
    rng: Any = None,
    level: float = 0.95,
    method: Literal["percentile", "bca"] = "bca",
    clusters: Any = None,
    weights: Any = None,
    name: str = "statistic",
) -> Any:
    """Bootstrap any statistic that is a function of sums of per-item sufficient statistics.

    ``suff`` is items x p; ``fn`` maps sums of shape (..., p) to the statistic (...), NaN
    where undefined. Resampling is vectorized: ``fn(W @ suff)`` for chunks of the
    resample-count matrix W (kept under ~200 MB). ``clusters`` resamples whole clusters;
    ``weights`` (resamples x items counts) replaces the random draws. Returns a
    ``BootstrapResult`` (interval plus distribution).
    """
    from evalkit.stats._result import _Estimator

    if not callable(fn):
        raise EvalkitError(f"fn must be a function of the sums, got {type(fn).__name__}")
    if suff is None or isinstance(suff, (str, bytes, dict, bool)):
        raise EvalkitError(
            f"suff must be an items x statistics array of numbers, got {type(suff).__name__}"
        )
    try:
        arr = np.asarray(suff, dtype=float)  # ragged rows raise ValueError here
    except (TypeError, ValueError):
        raise EvalkitError("suff must be an items x statistics array of numbers") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise EvalkitError(f"suff must be items x statistics (non-empty, 2-D), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise EvalkitError("suff must be finite (no NaN or infinity)")
    if theta_hat is None:
        value = float(np.asarray(fn(arr.sum(axis=0)[None, :]))[0])
        theta_hat = None if math.isnan(value) else value
    return bootstrap_estimator(
        _Estimator(arr, fn),
        theta_hat=theta_hat,
        n_resamples=n_resamples,
        rng=rng,
        level=level,
        method=method,
        clusters=clusters,
        weights=weights,
        name=name,
    )


def _align_clusters(clusters: Any, estimator: Any) -> Any:
    """Clusters given per input row are narrowed to the items the statistic used."""
    if clusters is None:
        return None
    arr = np.asarray(clusters, dtype=object)
    n = estimator.suff.shape[0]
    index = getattr(estimator, "index", None)
    n_input = getattr(estimator, "n_input", None)
    if arr.ndim == 1 and index is not None and arr.shape[0] == n_input != n:
        return arr[index]
    if arr.ndim != 1 or arr.shape[0] != n:
        expected = f"{n}" if n_input in (None, n) else f"{n} (items used) or {n_input} (input rows)"
        raise EvalkitError(f"clusters must have one label per item: {expected}, got {arr.shape}")
    return arr


def bootstrap_estimator(
    estimator: Any,
    *,
    theta_hat: float | None,
    n_resamples: int,
    rng: Any,
    level: float,
    method: str,
    clusters: Any,
    weights: Any,
    name: str,
    bounds: tuple[float | None, float | None] = (None, None),
) -> BootstrapResult:
    """Bootstrap a result's estimator; see ``AgreementResult.bootstrap``.

    The interval is clipped to ``bounds`` (the statistic's range; resamples lie in it, so
    this only matters for statistics whose formula can leave it).

    Degenerate cases never raise: fewer than two resampling units (items or clusters) give
    ``(None, None)``; resamples where the statistic is undefined are left out
    (counted in ``n_undefined``, with a ``DegenerateDataWarning``); a distribution with a
    single value gives that value as both bounds; a BCa bias correction that is infinite
    (the estimate lies outside the distribution), or an acceleration with no defined jackknife
    value, falls back to the percentile interval.
    All three warn.
    """
    from evalkit.stats._result import BootstrapResult, ConfidenceInterval, clip_interval

    if weights is None:
        check_resamples(n_resamples, minimum=2)
    gen = as_generator(rng)
    suff, fn = estimator.suff, estimator.fn
    clusters = _align_clusters(clusters, estimator)
    # distinct units are found once and serve both the resampling and the jackknife
    units = _units(suff, clusters)
    n_units = suff.shape[0] if weights is not None else int(units[1].sum())
    if n_units < 2:
        # one item (or one cluster): every resample is the data itself, a false certainty
        _warn(
            f"{name}: {n_units} resampling unit (item or cluster): the bootstrap cannot "
            "vary the data; interval is (None, None)"
        )
        return BootstrapResult(
            confidence_interval=ConfidenceInterval(None, None),
            distribution=np.empty(0),
            standard_error=None,
            method=method,
            level=level,
            n_resamples=0,
        )
    dist_all = _sums_of_resamples(suff, fn, int(n_resamples), gen, weights, units)
    dist = dist_all[~np.isnan(dist_all)]
    n_undefined = int(dist_all.size - dist.size)
    if n_undefined:
        _warn(
            f"{name}: undefined in {n_undefined} of {dist_all.size} bootstrap resamples "
            "(e.g. all ratings in one category); they are left out of the distribution"
        )
    (lo, hi), z0, a = _interval(dist, theta_hat, fn, units, level, method, name)
    return BootstrapResult(
        confidence_interval=clip_interval(ConfidenceInterval(lo, hi), bounds),
        distribution=dist,
        standard_error=float(np.std(dist, ddof=1)) if dist.size > 1 else None,
        method=method,
        level=level,
        n_resamples=int(dist_all.size),
        n_undefined=n_undefined,
        bias_correction=z0,
        acceleration=a,
    )


def _warn(message: str, depth: int = 0) -> None:
    # past this helper (and ``depth`` more helpers) and the bootstrap functions, to the line
    # of the caller's code that asked for the interval
    warnings.warn(DegenerateDataWarning(message), stacklevel=4 + depth)


def _interval(
    dist: NDArray[np.float64],
    theta_hat: float | None,
    fn: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    units: tuple[NDArray[np.float64], NDArray[np.float64]],
    level: float,
    method: str,
    name: str,
) -> tuple[tuple[float | None, float | None], float | None, float | None]:
    """``((low, high), z0, a)`` of the defined resamples ``dist``.

    The degenerate cases of :func:`bootstrap_estimator` (undefined estimate, a single value,
    BCa without a defined bias correction or acceleration) each warn and say what they give.
    """
    if theta_hat is None or dist.size == 0:
        _warn(f"{name} is undefined on these data; interval is (None, None)", 1)
        return (None, None), None, None
    if np.all(dist == dist[0]):
        _warn(
            f"{name}: every bootstrap resample gives {dist[0]:.6g}; the interval is that point", 1
        )
        return (float(dist[0]), float(dist[0])), None, None
    if method == "percentile":
        return percentile_interval(dist, level), None, None
    jack, mult = _jackknife(fn, units)
    ok = ~np.isnan(jack)
    if not np.all(ok):
        _warn(
            f"{name}: undefined in {int((~ok).sum())} jackknife samples; "
            "the acceleration uses the rest",
            1,
        )
    below, ties = below_and_ties(dist, float(theta_hat))
    infinite_z0 = below + ties == 0 or below == dist.size
    if infinite_z0 or not np.any(ok):
        why = (
            "the estimate lies outside the bootstrap distribution, so the BCa bias correction "
            "is infinite"
            if infinite_z0
            else "every jackknife sample is undefined, so the BCa acceleration is too"
        )
        _warn(f"{name}: {why}; falling back to the percentile interval", 1)
        return percentile_interval(dist, level), None, None
    (lo, hi), z0, a = bca_interval(dist, float(theta_hat), jack[ok], level, mult[ok])
    return (lo, hi), z0, a
