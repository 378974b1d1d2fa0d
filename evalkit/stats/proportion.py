"""One proportion ``k`` of ``n``: the Wilson score interval, the one used throughout evalkit.

Every rate evalkit reports with an interval (status rates of a rubric replay, a judge's
per-class sensitivity and specificity and per-rule agreement, the naive class shares of a
prevalence study, the pairwise agreement of a judge panel) takes it from here.
"""

from __future__ import annotations

import numbers

import numpy as np

from evalkit.errors import EvalkitError
from evalkit.stats._inputs import check_level
from evalkit.stats._result import ConfidenceInterval

__all__ = ["wilson_interval"]


def wilson_interval(k: int, n: int, level: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval for ``k`` successes in ``n`` trials (Wilson 1927).

    ``(centre - half, centre + half)`` with ``z`` the two-sided normal quantile of ``level``,
    ``p = k / n``, ``centre = (p + z^2 / 2n) / (1 + z^2 / n)`` and
    ``half = z sqrt(p (1 - p) / n + z^2 / 4n^2) / (1 + z^2 / n)``. Computed operation for
    operation as statsmodels' ``proportion_confint(k, n, alpha=1 - level, method="wilson")``,
    so both give the same doubles, and clipped to ``[0, 1]`` (rounding can step a bound at
    ``k = 0`` or ``k = n`` a hair outside). ``n = 0`` gives ``(None, None)``: no data, no
    interval.

    Raises
    ------
    EvalkitError
        When ``k`` or ``n`` is not a whole number with ``0 <= k <= n``, or ``level`` is not
        strictly between 0 and 1.
    """
    check_level(level)
    for name, value in (("k", k), ("n", n)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool | np.bool_):
            raise EvalkitError(f"wilson_interval: {name} must be a whole number, got {value!r}")
    if not 0 <= k <= n:
        raise EvalkitError(f"wilson_interval: need 0 <= k <= n, got k={k!r}, n={n!r}")
    if n == 0:
        return ConfidenceInterval(None, None)
    from evalkit.stats.distributions import normal_isf

    count, nobs = np.int64(k), np.int64(n)
    crit = normal_isf((1 - level) / 2.0)
    crit2 = crit**2
    q = count / nobs
    denom = 1 + crit2 / nobs
    center = (q + crit2 / (2 * nobs)) / denom
    dist = crit * np.sqrt(q * (1.0 - q) / nobs + crit2 / (4.0 * nobs**2))
    dist /= denom
    return ConfidenceInterval(
        float(np.clip(center - dist, 0, 1)), float(np.clip(center + dist, 0, 1))
    )
