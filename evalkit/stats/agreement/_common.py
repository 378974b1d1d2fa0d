"""What every agreement coefficient shares: the degenerate-data rule, weights and tests.

The rules are stated once, in :mod:`evalkit.stats.agreement` and ``evalkit.stats._result``:
``_none`` turns an undefined (NaN) value into None, ``_chance_corrected`` is NaN where the
chance agreement is 1, ``_few_items`` decides (and says) when there are too few items for a
standard error. Also here: the agreement weights of every weighted coefficient, the ranges
intervals are clipped to, the t and normal tests, and the jackknife over items.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.stats._result import AgreementResult, _Estimator
from evalkit.stats.distributions import normal_sf, t_sf

Array = NDArray[np.float64]
_EPS = 1e-12


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
    name: str,
    n: int,
    statistic: float | None,
    se: float | None,
    stacklevel: int = 3,
    of: str = "",
) -> bool:
    """Too few items for an SE: warn (no SE, no interval; see ``_result``) and return True.

    One item; or two, with a defined ``statistic`` whose analytic ``se`` is 0 or None.
    ``of`` qualifies what is counted (Fleiss' and Gwet's family count the items "with 2+
    ratings": only they carry observed agreement).
    """
    qualifier = f" {of}" if of else ""
    if n < 2:
        why = f"only {n} item{qualifier}: the estimate describes it"
    elif n == 2 and statistic is not None and (se is None or se < _ZERO_SE):
        what = "undefined" if se is None else "0"
        why = (
            f"only 2 items{qualifier}, whose standard error is {what}: the estimate describes them"
        )
    else:
        return False
    _warn_no_variation(name, why, stacklevel=stacklevel + 1)
    return True


def _warn_no_variation(name: str, why: str, stacklevel: int = 4) -> None:
    """Warn that an estimate is kept but its sampling variation cannot be estimated."""
    warnings.warn(
        DegenerateDataWarning(
            f"{name}: {why}, but its sampling variation cannot be estimated "
            "(standard error None, every interval (None, None))"
        ),
        stacklevel=stacklevel,  # the caller of the public function
    )


_KAPPA_RANGE: tuple[float | None, float | None] = (-1.0, 1.0)
_UPPER_ONLY: tuple[float | None, float | None] = (None, 1.0)


def _label_scores(categories: Sequence[Any]) -> Array | None:
    """The labels as scores when every one is a real number (not a bool), else None."""
    if categories and all(
        isinstance(c, numbers.Real) and not isinstance(c, bool | np.bool_) for c in categories
    ):
        return np.asarray([float(c) for c in categories])
    return None


def _weights_matrix(
    weights: Any, k: int, argname: str = "weights", scores: Array | None = None
) -> tuple[Array, str]:
    """Agreement weights (1 on the diagonal) and a label, from ``weights``.

    ``None``/"unweighted": identity. "linear": ``1 - |x_i - x_j| / range``. "quadratic":
    ``1 - (x_i - x_j)^2 / range^2``. ``x`` is ``scores`` when given: the many-rater
    coefficients (Gwet's AC2, Fleiss, Brennan-Prediger, Conger) pass the labels' numeric
    values, as R irrCAC does (its ``quadratic.weights(categ)``; so labels {1, 2, 3, 5} are
    not equally spaced); without ``scores`` (Cohen's and Light's kappa, and non-numeric labels
    everywhere) ``x`` is the category positions 0..k-1 in sorted label order (as R irr
    ``kappa2`` and statsmodels ``cohens_kappa``; a label unused by every rater is no category
    unless declared with ``categories=``). A k x k matrix is read as *disagreement* weights
    (0 on the diagonal, as in statsmodels ``cohens_kappa``), converted to ``1 - d / max(d)``.
    """
    values = np.arange(k, dtype=float) if scores is None else np.asarray(scores, dtype=float)
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


def _t_test(stat: float | None, se: float | None, df: int) -> tuple[float | None, float | None]:
    if stat is None or not se:
        return None, None
    z = stat / se
    return float(z), float(2 * t_sf(abs(z), df))


def _normal_test(stat: float | None, se0: float | None) -> tuple[float | None, float | None]:
    if stat is None or not se0:
        return None, None
    z = stat / se0
    return float(z), float(2 * normal_sf(abs(z)))


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


def _replace(res: AgreementResult, **changes: Any) -> AgreementResult:
    import dataclasses

    return dataclasses.replace(res, **changes)
