"""Small pieces shared by the class-share estimators (corrected prevalence, PPI, planning)."""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.stats._result import ConfidenceInterval, _check_level

__all__ = [
    "check_level",
    "check_resamples",
    "json_number",
    "json_shares",
    "percentile_intervals",
    "shares_interval_json",
    "undefined_intervals",
    "warn",
    "wilson",
    "z_quantile",
]

check_level = _check_level


def z_quantile(level: float) -> float:
    """Two-sided normal quantile ``z_{(1 + level) / 2}``."""
    from scipy.stats import norm

    _check_level(level)
    return float(norm.ppf(0.5 + level / 2))


def check_resamples(n_resamples: Any, minimum: int = 100) -> int:
    if (
        not isinstance(n_resamples, (int, np.integer))
        or isinstance(n_resamples, (bool, np.bool_))
        or n_resamples < minimum
    ):
        raise EvalkitError(f"n_resamples must be an int >= {minimum}, got {n_resamples!r}")
    return int(n_resamples)


def wilson(k: int, n: int, level: float) -> ConfidenceInterval:
    """Wilson score interval for ``k`` of ``n``; ``(None, None)`` when ``n`` is 0."""
    if n <= 0:
        return ConfidenceInterval(None, None)
    z = z_quantile(level)
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return ConfidenceInterval(max(0.0, centre - half), min(1.0, centre + half))


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
