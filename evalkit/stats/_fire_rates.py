"""Fire rates per threshold, per cluster: the arithmetic behind :func:`threshold_study`."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.bootstrap import as_generator, resample_weights

__all__ = ["cluster_failures", "fire_rate_ci", "fires_per_cluster"]

# Resample-weight chunks stay below this many cells so memory is bounded for large inputs.
_CHUNK_CELLS = 4_000_000


def fires_per_cluster(
    t_grid: NDArray[np.float64], values: NDArray[np.float64], codes: NDArray[Any], n_clusters: int
) -> NDArray[np.int64]:
    """``[c, j]``: known items of cluster ``c`` with a count >= ``t_grid[j]``.

    Built from a cluster x (how many thresholds an item reaches) histogram, never an items x
    thresholds array.
    """
    reached = np.searchsorted(t_grid, values, side="right")
    hist = np.bincount(
        codes * (t_grid.size + 1) + reached, minlength=n_clusters * (t_grid.size + 1)
    ).reshape(n_clusters, t_grid.size + 1)
    fires: NDArray[np.int64] = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1][:, 1:]
    return fires


def cluster_failures(
    fires_per_cluster: NDArray[np.int64], unknown_codes: NDArray[Any], n_clusters: int
) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.float64]]:
    """Per threshold: clusters failing, clusters undetermined, and the failing share.

    A cluster fails when a known item fires; it is undetermined when none fires but one has an
    unknown count (never read as "not firing"); the share is over the determined clusters.
    """
    failing = fires_per_cluster > 0
    has_unknown = np.zeros(n_clusters, dtype=bool)
    has_unknown[unknown_codes] = True
    clusters_failing = failing.sum(axis=0)
    undetermined = ((~failing) & has_unknown[:, None]).sum(axis=0)
    determined = n_clusters - undetermined
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(determined > 0, clusters_failing / determined, np.nan)
    return clusters_failing, undetermined, rate


def fire_rate_ci(
    fires_per_cluster: NDArray[np.int64],
    codes: NDArray[Any],
    values: NDArray[np.float64],
    t_grid: NDArray[np.float64],
    n_resamples: int,
    level: float,
    rng: Any,
) -> tuple[NDArray[np.float64], NDArray[np.float64], list[str]]:
    """The cluster-bootstrap CI of the fire rate per threshold.

    Also the notes on degenerate data: no known count, a single cluster, every count 0.
    """
    ci_low = np.full(t_grid.size, np.nan)
    ci_high = np.full(t_grid.size, np.nan)
    notes: list[str] = []
    known_clusters, codes_known = np.unique(codes, return_inverse=True)
    m = int(known_clusters.size)
    if values.size == 0:
        notes.append("no known count: every rate is undefined (NaN)")
    elif m == 1:
        notes.append(
            "a single cluster: resampling clusters cannot vary the data, so the fire-rate CI "
            "is undefined (NaN)"
        )
    elif t_grid.size:
        ci_low, ci_high = _bootstrap_ci(
            fires_per_cluster[known_clusters],
            np.bincount(codes_known, minlength=m),
            n_resamples,
            level,
            as_generator(rng),
        )
    if values.size and np.all(values == 0):
        notes.append("every known count is 0: the instrument never fires at any threshold >= 1")
    return ci_low, ci_high, notes


def _bootstrap_ci(
    fires_c: NDArray[np.int64],
    size_c: NDArray[np.int64],
    n_resamples: int,
    level: float,
    gen: np.random.Generator,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile CI of the item fire rate, resampling whole clusters.

    ``fires_c`` (clusters x thresholds): firing items per cluster; ``size_c``: known items per
    cluster. A resample draws the ``m`` clusters with replacement; its fire rate is
    ``sum_c w_c fires_c / sum_c w_c size_c``, so the weight matrix is resamples x clusters.
    """
    m = int(size_c.size)
    fires = fires_c.astype(np.float64)
    sizes = size_c.astype(np.float64)
    rates = np.empty((n_resamples, fires.shape[1]))
    chunk = max(1, _CHUNK_CELLS // max(m, 1))
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        w = resample_weights(m, rows, gen).astype(np.float64)  # clusters are the units drawn
        rates[start : start + rows] = (w @ fires) / (w @ sizes)[:, None]
    alpha = 1.0 - level
    low, high = np.quantile(rates, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    return low, high
