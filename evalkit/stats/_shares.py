"""Small pieces shared by the class-share estimators (corrected prevalence, PPI, planning)."""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import DegenerateDataWarning
from evalkit.stats._inputs import check_level
from evalkit.stats._result import ConfidenceInterval

__all__ = [
    "json_number",
    "json_shares",
    "percentile_intervals",
    "shares_interval_json",
    "undefined_intervals",
    "warn",
    "z_quantile",
]


def z_quantile(level: float) -> float:
    """Two-sided normal quantile ``z_{(1 + level) / 2}``."""
    from scipy.stats import norm

    check_level(level)
    return float(norm.ppf(0.5 + level / 2))


def warn(message: str, stacklevel: int = 3) -> None:
    warnings.warn(DegenerateDataWarning(message), stacklevel=stacklevel)


def undefined_intervals(classes: Sequence[Any]) -> dict[Any, ConfidenceInterval]:
    return {c: ConfidenceInterval(None, None) for c in classes}


def json_number(x: Any) -> float | int | None:
    """A JSON-simple number: ints stay ints, non-finite floats and None become None."""
    if x is None:
        return None
    if isinstance(x, (bool, np.bool_)):
        return int(x)
    if isinstance(x, numbers.Integral):
        return int(x)
    f = float(x)
    return f if math.isfinite(f) else None


def json_shares(shares: Mapping[Any, Any] | None) -> dict[str, Any] | None:
    if shares is None:
        return None
    return {str(c): json_number(v) for c, v in shares.items()}


def shares_interval_json(
    intervals: Mapping[Any, ConfidenceInterval],
) -> dict[str, dict[str, float | int | None]]:
    return {
        str(c): {"low": json_number(ci.low), "high": json_number(ci.high)}
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
