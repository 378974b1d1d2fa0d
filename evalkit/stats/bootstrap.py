"""Vectorized bootstrap: resample-weight matrices, percentile and BCa intervals.

A bootstrap resample of ``n`` items is represented by a vector of counts (how often each item
was drawn). Statistics that are functions of sums of per-item sufficient statistics are then
evaluated for all resamples at once as ``W @ S`` (``W``: resamples x items, ``S``: items x
stats), instead of a Python loop calling the statistic once per resample.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from evalkit.errors import EvalkitError

__all__ = [
    "as_generator",
    "resample_weights",
]


def as_generator(rng: Any) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from ``rng`` (a Generator, an int seed, or None).

    ``None`` draws fresh entropy (results are then not reproducible); pass a seed for
    reproducible intervals.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer, np.random.SeedSequence)):
        return np.random.default_rng(rng)
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
    if not isinstance(n_items, (int, np.integer)) or n_items < 1:
        raise EvalkitError(f"n_items must be a positive int, got {n_items!r}")
    if not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise EvalkitError(f"n_resamples must be a positive int, got {n_resamples!r}")
    gen = as_generator(rng)
    if clusters is None:
        return gen.multinomial(
            int(n_items), np.full(int(n_items), 1.0 / n_items), size=int(n_resamples)
        ).astype(np.int64)
    codes = _cluster_codes(clusters, int(n_items))
    m = int(codes.max()) + 1
    cw = gen.multinomial(m, np.full(m, 1.0 / m), size=int(n_resamples)).astype(np.int64)
    return cw[:, codes]
