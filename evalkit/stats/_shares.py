"""Small pieces shared by the class-share estimators (corrected prevalence, PPI, planning)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import DegenerateDataWarning
from evalkit.finite import json_figure
from evalkit.stats._inputs import check_level
from evalkit.stats._result import ConfidenceInterval

__all__ = [
    "json_shares",
    "percentile_intervals",
    "shares_interval_json",
    "undefined_intervals",
    "warn",
    "z_quantile",
]


def z_quantile(level: float) -> float:
    """Two-sided normal quantile ``z_{(1 + level) / 2}``."""
    from evalkit.stats.distributions import normal_ppf

    check_level(level)
    return float(normal_ppf(0.5 + level / 2))


def warn(message: str, stacklevel: int = 3) -> None:
    warnings.warn(DegenerateDataWarning(message), stacklevel=stacklevel)


def undefined_intervals(classes: Sequence[Any]) -> dict[Any, ConfidenceInterval]:
    return {c: ConfidenceInterval(None, None) for c in classes}


def json_shares(shares: Mapping[Any, Any] | None) -> dict[str, Any] | None:
    if shares is None:
        return None
    return {str(c): json_figure(v) for c, v in shares.items()}


def shares_interval_json(
    intervals: Mapping[Any, ConfidenceInterval],
) -> dict[str, dict[str, float | int | None]]:
    return {
        str(c): {"low": json_figure(ci.low), "high": json_figure(ci.high)}
        for c, ci in intervals.items()
    }


def percentile_intervals(
    distribution: NDArray[np.float64], classes: Sequence[Any], level: float
) -> dict[Any, ConfidenceInterval]:
    """Per-class percentile interval of a resamples x classes distribution (scipy's rule)."""
    alpha = (1 - level) / 2
    lo, hi = np.percentile(distribution, [100 * alpha, 100 * (1 - alpha)], axis=0)
    return {
        c: ConfidenceInterval(float(min(max(lo[j], 0.0), 1.0)), float(min(max(hi[j], 0.0), 1.0)))
        for j, c in enumerate(classes)
    }
