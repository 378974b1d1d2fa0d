"""Threshold studies: where would "count >= t" put a signal, and is that signal usable?

For a count per item (e.g. ``guard_blocked`` per record, records clustered by session) a rubric
author considering the rule "fail when count >= t" needs, for every candidate ``t``: how many
items and clusters would fail, the fire rate with an honest interval (resampling whole
clusters, because records of one session are not independent), and whether the rate sits
above the ceiling a signal may have before it is a broken instrument (the rubric's ~10%,
HR-101) or at the floor where it never fires at all (a dead instrument). The observed
distribution and its gaps show where a threshold choice is arbitrary: every ``t`` inside a
gap gives the same verdicts.

Unknown counts (``None``/NaN) are excluded and counted as ``n_unknown`` — never treated as 0.
A cluster none of whose known items fires but which holds an unknown item is *undetermined*
at that threshold; it is left out of the cluster fail rate rather than counted as passing.
"""

from __future__ import annotations

import itertools
import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.finite import json_figure
from evalkit.stats._fire_rates import cluster_failures, fire_rate_ci, fires_per_cluster
from evalkit.stats._inputs import check_level, check_resamples
from evalkit.stats.limits import FIRE_RATE_CEILING  # its home: no numpy for the CLI

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "FIRE_RATE_CEILING",
    "CeilingStatus",
    "Gap",
    "ThresholdStudy",
    "plot_threshold_study",
    "threshold_study",
]


COLUMNS: tuple[str, ...] = (
    "threshold",
    "items_firing",
    "fire_rate",
    "ci_low",
    "ci_high",
    "clusters_failing",
    "clusters_undetermined",
    "cluster_fail_rate",
    "above_ceiling",
    "ceiling_status",
    "dead",
)


class CeilingStatus(StrEnum):
    """Where the fire rate's CI lies relative to the ceiling."""

    ABOVE = "above"  # the whole interval is above the ceiling
    WITHIN = "within"  # the whole interval is at or below the ceiling
    UNDECIDED = "undecided"  # the interval straddles the ceiling (or is undefined)


@dataclass(frozen=True)
class Gap:
    """A run of unobserved integer values between two observed ones (``after`` < ``before``)."""

    after: int
    before: int

    @property
    def first_missing(self) -> int:
        """The smallest value inside the gap."""
        return self.after + 1

    @property
    def last_missing(self) -> int:
        """The largest value inside the gap."""
        return self.before - 1

    @property
    def length(self) -> int:
        """How many values the gap spans."""
        return self.before - self.after - 1

    def to_dict(self) -> dict[str, int]:
        """The gap as JSON-simple values."""
        return {
            "after": self.after,
            "before": self.before,
            "first_missing": self.first_missing,
            "last_missing": self.last_missing,
            "length": self.length,
        }


class ThresholdStudy(pd.DataFrame):  # type: ignore[misc]  # pandas ships no types here
    """Result of :func:`threshold_study`: a pandas DataFrame, one row per threshold.

    Columns (``COLUMNS``): ``threshold`` (the rule is "count >= threshold"), ``items_firing``
    (known items with count >= threshold), ``fire_rate`` (= items_firing / n_items),
    ``ci_low``/``ci_high`` (percentile cluster-bootstrap interval of the fire rate),
    ``clusters_failing`` (clusters with at least one firing item), ``clusters_undetermined``
    (clusters without a firing known item but with an unknown one), ``cluster_fail_rate``
    (failing / determined clusters), ``above_ceiling`` (point estimate > ceiling),
    ``ceiling_status`` (:class:`CeilingStatus` of the interval), ``dead`` (fire rate <= floor).

    The context travels with the frame as attributes (pandas ``_metadata``, kept on slices and
    copies): ``gaps``, ``distribution`` (value counts of the known counts), ``n_items``,
    ``n_unknown``, ``n_clusters``, ``ceiling``, ``floor``, ``level``, ``n_resamples``,
    ``ci_method`` and ``warnings``. :meth:`to_json_dict` gives all of it JSON-simple.
    """

    _metadata: ClassVar[list[str]] = [
        "gaps",
        "distribution",
        "n_items",
        "n_unknown",
        "n_clusters",
        "ceiling",
        "floor",
        "level",
        "n_resamples",
        "ci_method",
        "warnings",
    ]
    # class-level defaults: a frame pandas builds without __finalize__ still answers them
    gaps: tuple[Gap, ...] = ()
    distribution: pd.Series | None = None
    n_items: int = 0
    n_unknown: int = 0
    n_clusters: int = 0
    ceiling: float = FIRE_RATE_CEILING
    floor: float = 0.0
    level: float = 0.95
    n_resamples: int = 0
    ci_method: str = "percentile, cluster bootstrap (whole clusters resampled)"
    warnings: tuple[str, ...] = ()

    @property
    def _constructor(self) -> type[ThresholdStudy]:
        return ThresholdStudy

    @property
    def table(self) -> pd.DataFrame:
        """The rows as a plain DataFrame (a copy; its ``attrs`` carry n, ceiling, floor, level)."""
        out = pd.DataFrame(self, copy=True)
        out.attrs = dict(self.attrs)
        return out

    def row(self, threshold: float) -> pd.Series:
        """The row of ``threshold`` (``KeyError`` when it was not studied)."""
        hit = self.index[self["threshold"] == threshold]
        if len(hit) == 0:
            raise KeyError(f"threshold {threshold!r} is not in the study")
        return self.loc[hit[0]]

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-simple dict: scalars, lists and dicts only; NaN becomes None."""
        rows = []
        for rec in pd.DataFrame(self).to_dict(orient="records"):
            rows.append({k: _json_scalar(v) for k, v in rec.items()})
        distribution = self.distribution if self.distribution is not None else pd.Series()
        return {
            "n_items": self.n_items,
            "n_unknown": self.n_unknown,
            "n_clusters": self.n_clusters,
            "ceiling": self.ceiling,
            "floor": self.floor,
            "level": self.level,
            "n_resamples": self.n_resamples,
            "ci_method": self.ci_method,
            "thresholds": rows,
            "gaps": [g.to_dict() for g in self.gaps],
            "distribution": [
                {"value": _json_scalar(v), "items": int(c)} for v, c in distribution.items()
            ],
            "warnings": list(self.warnings),
        }


def _make_study(table: pd.DataFrame, **context: Any) -> ThresholdStudy:
    study = ThresholdStudy(table)
    study.attrs.update(table.attrs)
    for name, value in context.items():
        setattr(study, name, value)
    return study


def _json_scalar(v: Any) -> Any:
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, numbers.Real):
        return json_figure(v)
    return str(v) if isinstance(v, StrEnum) else v


# --------------------------------------------------------------------------- inputs


def _is_unknown(v: Any) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isnan(float(v))


def _as_list(name: str, value: Any) -> list[Any]:
    """A 1-D sequence (list, tuple, ndarray, Series) as a list; anything else is an error."""
    if isinstance(value, (np.ndarray, pd.Series, pd.Index)):
        if value.ndim != 1:
            raise EvalkitError(f"{name} must be 1-D (one value per item), got {value.ndim}-D")
        return list(value.tolist())
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise EvalkitError(
            f"{name} must be a 1-D sequence with one value per item, got {type(value).__name__}"
        )
    return list(value)


def _parse_counts(
    counts: ArrayLike | Sequence[Any],
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    values = _as_list("counts", counts)
    out = np.full(len(values), np.nan)
    known = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        if _is_unknown(v):
            continue
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise EvalkitError(f"counts[{i}]: expected a number or None, got {v!r}")
        x = float(v)
        if not math.isfinite(x) or x < 0:
            raise EvalkitError(f"counts[{i}]: a count must be finite and >= 0, got {v!r}")
        out[i] = x
        known[i] = True
    return out, known


def _cluster_codes(clusters: ArrayLike | Sequence[Any] | None, n: int) -> NDArray[np.intp]:
    if clusters is None:
        return np.arange(n, dtype=np.intp)
    labels = _as_list("clusters", clusters)
    if len(labels) != n:
        raise EvalkitError(
            f"clusters has {len(labels)} labels but counts has {n} items (one label per item)"
        )
    index: dict[Any, int] = {}
    codes = np.empty(n, dtype=np.intp)
    for i, c in enumerate(labels):
        if _is_unknown(c):
            raise EvalkitError(f"clusters[{i}]: missing cluster label")
        codes[i] = index.setdefault(c, len(index))
    return codes


def _default_thresholds(values: NDArray[np.float64]) -> NDArray[np.float64]:
    if values.size == 0:
        return np.array([], dtype=float)
    if np.all(values == np.round(values)):
        # integer counts: every t from 1 to max + 1 (the first t at which nothing fires)
        return np.arange(1, int(values.max()) + 2, dtype=float)
    return np.unique(values)  # real-valued scores: the observed values


def _gaps(values: NDArray[np.float64]) -> tuple[Gap, ...]:
    if values.size == 0 or not np.all(values == np.round(values)):
        return ()  # gaps are defined for integer counts only
    distinct = np.unique(values).astype(np.int64)
    return tuple(Gap(int(a), int(b)) for a, b in itertools.pairwise(distinct) if b - a > 1)


# --------------------------------------------------------------------------- study


def threshold_study(
    counts: ArrayLike | Sequence[Any],
    clusters: ArrayLike | Sequence[Any] | None = None,
    *,
    thresholds: Sequence[float] | ArrayLike | None = None,
    ceiling: float = FIRE_RATE_CEILING,
    floor: float = 0.0,
    level: float = 0.95,
    n_resamples: int = 2000,
    rng: Any = None,
) -> ThresholdStudy:
    """Fire rates of the rule "count >= t" for every threshold ``t``, with cluster-bootstrap CIs.

    Parameters
    ----------
    counts : one non-negative count per item; ``None``/NaN = unknown (excluded, counted in
        ``n_unknown``, never read as 0).
    clusters : optional label per item (e.g. the session of each record). The CI resamples
        whole clusters; a cluster *fails* at ``t`` when any of its items fires. Without
        clusters each item is its own cluster.
    thresholds : the ``t`` values to study. Default: for integer counts every integer from 1
        to ``max + 1`` (the first value at which nothing fires); for real-valued counts the
        distinct observed values.
    ceiling : the largest fire rate a signal may have (rubric HR-101: ~10%).
    floor : a fire rate at or below it marks the threshold ``dead`` (default 0: never fires).
    level, n_resamples, rng : the percentile bootstrap interval (seed ``rng`` to reproduce).

    Degenerate data — no known count, every count 0, a single cluster — returns the documented
    result with an ``evalkit.DegenerateDataWarning`` (a single cluster leaves no between-cluster
    variation: the CI is NaN, ``ceiling_status`` "undecided"); it never raises.
    """
    ceiling_f, floor_f, level_f = _check_rates(ceiling, floor, level)
    n_resamples = check_resamples(n_resamples)
    values_all, known = _parse_counts(counts)
    codes_all = _cluster_codes(clusters, values_all.size)
    values = values_all[known]
    n_items = int(values.size)
    t_grid = _threshold_grid(thresholds, values)
    # codes number the clusters of all items; only clusters with a known item are resampled
    n_clusters_all = int(codes_all.max()) + 1 if codes_all.size else 0
    codes = codes_all[known]
    fires = fires_per_cluster(t_grid, values, codes, n_clusters_all)
    items_firing = fires.sum(axis=0).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        fire_rate = items_firing / n_items if n_items else np.full(t_grid.size, np.nan)
    clusters_failing, undetermined, cluster_fail_rate = cluster_failures(
        fires, codes_all[~known], n_clusters_all
    )
    ci_low, ci_high, notes = fire_rate_ci(fires, codes, values, t_grid, n_resamples, level_f, rng)
    for note in notes:
        warnings.warn(f"threshold_study: {note}", DegenerateDataWarning, stacklevel=2)

    table = pd.DataFrame(
        {
            "threshold": _tidy_thresholds(t_grid),
            "items_firing": items_firing,
            "fire_rate": fire_rate,
            "ci_low": ci_low,
            "ci_high": ci_high,
            "clusters_failing": clusters_failing.astype(np.int64),
            "clusters_undetermined": undetermined.astype(np.int64),
            "cluster_fail_rate": cluster_fail_rate,
            "above_ceiling": fire_rate > ceiling_f,
            "ceiling_status": _ceiling_status(ci_low, ci_high, ceiling_f) if t_grid.size else [],
            "dead": fire_rate <= floor_f,
        },
        columns=list(COLUMNS),
    )
    meta: dict[str, Any] = {"n_items": n_items, "n_unknown": int((~known).sum())}
    meta["n_clusters"] = n_clusters_all
    meta |= {"ceiling": ceiling_f, "floor": floor_f, "level": level_f}
    return _finish(table, values, notes, n_resamples=n_resamples, **meta)


def _ceiling_status(
    ci_low: NDArray[np.float64], ci_high: NDArray[np.float64], ceiling: float
) -> NDArray[Any]:
    """Per threshold: above the ceiling (the whole CI), within it, or undecided."""
    within = np.where(ci_high <= ceiling, CeilingStatus.WITHIN.value, CeilingStatus.UNDECIDED.value)
    status: NDArray[Any] = np.where(ci_low > ceiling, CeilingStatus.ABOVE.value, within)
    return status.astype(object)


def _finish(
    table: pd.DataFrame, values: NDArray[np.float64], notes: list[str], **meta: Any
) -> ThresholdStudy:
    """The study: the table, the gaps and the count distribution.

    The table keeps ``meta`` in its attrs, so it alone still says what it was computed on
    (pandas keeps attrs on copies).
    """
    table.attrs.update(meta)
    distribution = pd.Series(values).value_counts().sort_index()
    distribution.index = _tidy_thresholds(distribution.index.to_numpy(dtype=float))
    distribution.index.name = "value"
    distribution.name = "items"
    return _make_study(
        table, gaps=_gaps(values), distribution=distribution, warnings=tuple(notes), **meta
    )


def _rate(name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise EvalkitError(f"{name} must be a number, got {value!r}")
    x = float(value)
    if math.isnan(x):
        raise EvalkitError(f"{name} must be a number, got NaN")
    return x


def _check_rates(ceiling: float, floor: float, level: float) -> tuple[float, float, float]:
    c, f, lv = _rate("ceiling", ceiling), _rate("floor", floor), _rate("level", level)
    if not (0.0 <= c <= 1.0):
        raise EvalkitError(f"ceiling must be a rate in [0, 1], got {ceiling!r}")
    if not (0.0 <= f <= 1.0) or f > c:
        raise EvalkitError(f"floor must be a rate in [0, ceiling], got {floor!r}")
    check_level(lv)
    return c, f, lv


def _threshold_grid(
    thresholds: Sequence[float] | ArrayLike | None, values: NDArray[np.float64]
) -> NDArray[np.float64]:
    if thresholds is None:
        return _default_thresholds(values)
    try:
        grid = np.asarray(thresholds, dtype=float).ravel()
    except (TypeError, ValueError):
        raise EvalkitError("thresholds must be numbers") from None
    if not np.all(np.isfinite(grid)):
        raise EvalkitError("thresholds must be finite numbers")
    return np.unique(grid)


def _tidy_thresholds(grid: NDArray[np.float64]) -> NDArray[Any]:
    """Integer-valued thresholds as int64 (``t == 3`` reads naturally), others as float."""
    if grid.size and np.all(grid == np.round(grid)) and np.all(np.abs(grid) < 2**53):
        return grid.astype(np.int64)
    return grid


# --------------------------------------------------------------------------- plot


def _study_of_table(table: pd.DataFrame) -> ThresholdStudy:
    n_items = int(table.attrs.get("n_items", 0))
    return _make_study(
        table,
        gaps=(),
        distribution=pd.Series(dtype=float),
        n_items=n_items,
        n_unknown=int(table.attrs.get("n_unknown", 0)),
        n_clusters=int(table.attrs.get("n_clusters", 0)),
        ceiling=float(table.attrs.get("ceiling", FIRE_RATE_CEILING)),
        floor=float(table.attrs.get("floor", 0.0)),
        level=float(table.attrs.get("level", 0.95)),
        n_resamples=int(table.attrs.get("n_resamples", 0)),
    )


def plot_threshold_study(study: ThresholdStudy | pd.DataFrame, ax: Axes | None = None) -> Figure:
    """Fire rate against threshold with its CI band, the ceiling (and floor), gaps shaded.

    ``study`` is the result of :func:`threshold_study`, or its ``table`` (whose ``attrs``
    carry n, ceiling, floor and level; gaps are then not shaded). Draws on ``ax`` when given
    (returning its figure), else on a new figure built without pyplot (safe in headless runs).
    The cluster fail rate is drawn dashed for comparison.
    """
    from evalkit.extras import require

    require("matplotlib", purpose="plot_threshold_study")
    from matplotlib.figure import Figure as _Figure

    if not isinstance(study, ThresholdStudy) and isinstance(study, pd.DataFrame):
        # a bare table: no gaps, default ceiling/floor/level
        missing = {"threshold", "fire_rate", "ci_low", "ci_high", "cluster_fail_rate"} - set(
            study.columns
        )
        if missing:
            raise EvalkitError(f"plot_threshold_study: table lacks column(s) {sorted(missing)}")
        study = _study_of_table(study)
    if not isinstance(study, ThresholdStudy):
        raise EvalkitError("plot_threshold_study expects the ThresholdStudy of threshold_study()")
    if ax is None:
        fig = _Figure(figsize=(7.0, 4.0), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.get_figure()  # type: ignore[assignment]
    tab = study
    t = tab["threshold"].to_numpy(dtype=float)
    for i, gap in enumerate(study.gaps):
        ax.axvspan(
            gap.after + 0.5,
            gap.before - 0.5,
            color="0.85",
            zorder=0,
            label="unobserved values" if i == 0 else None,
        )
    if len(tab):
        ax.fill_between(
            t,
            tab["ci_low"].to_numpy(dtype=float),
            tab["ci_high"].to_numpy(dtype=float),
            step="mid",
            alpha=0.3,
            color="C0",
            label=f"{study.level:.0%} CI (cluster bootstrap)",
        )
        ax.step(t, tab["fire_rate"], where="mid", color="C0", label="item fire rate")
        ax.step(
            t,
            tab["cluster_fail_rate"],
            where="mid",
            color="C1",
            linestyle="--",
            label="cluster fail rate",
        )
    ax.axhline(study.ceiling, color="C3", linestyle=":", label=f"ceiling {study.ceiling:.0%}")
    if study.floor > 0:
        ax.axhline(study.floor, color="0.4", linestyle=":", label=f"floor {study.floor:.0%}")
    ax.set_xlabel("threshold t (fires when count >= t)")
    ax.set_ylabel("rate")
    ax.set_ylim(-0.02, 1.02)
    unknown = f", {study.n_unknown} unknown" if study.n_unknown else ""
    ax.set_title(
        f"Threshold study: n = {study.n_items} items, {study.n_clusters} clusters{unknown}"
    )
    ax.legend(loc="upper right", fontsize="small")
    return fig
