"""Frozen, scipy-style result objects for agreement statistics.

An ``AgreementResult`` carries the point estimate, its analytic standard error (where a
published formula exists) and, privately, the per-item sufficient statistics plus the function
that maps their sums to the statistic. That is what lets a result bootstrap itself: a
resample is a vector of item counts ``w`` and the resampled statistic is ``fn(w @ S)``.

Degenerate intervals (the same rule for every coefficient and every method):

* statistic undefined (``statistic is None``, e.g. every rating the same category):
  ``confidence_interval()`` is ``(None, None)`` with a ``DegenerateDataWarning``;
* too few items (``few_items``): one item, or two items whose analytic standard error is 0
  or undefined (or, for a cluster bootstrap, fewer than two clusters). The point estimate is
  reported (it describes those items), but nothing can be said about its sampling variation,
  so ``standard_error`` (and ``standard_error_h0``, ``z``, ``p_value``) is None,
  ``degenerate`` is True, a ``DegenerateDataWarning`` saying why is issued when the result is
  built, and ``confidence_interval()`` is ``(None, None)`` with a ``DegenerateDataWarning``
  for ``"analytic"``, ``"percentile"`` and ``"bca"`` alike; it never raises and never returns
  a zero-width interval (an SE of 0 from one item would be a false certainty). Two items are
  too few when their SE is 0 or undefined because the SE then stands on one difference
  between two per-item contributions, which the coefficients' symmetry makes 0 far more
  often than not (Cohen's kappa of ``(a, b), (b, a)``: SE 0, interval (-1, -1)), and a
  jackknife SE on two items is built from one-item estimates, themselves degenerate. Two
  items with a positive SE keep it (a t(1) or normal interval, as wide as it says);
* no sampling variation by construction: Cohen's kappa when a rater used one category only
  (``po = pe`` whatever the other rater did, so kappa is 0 and its SE 0 up to rounding): the
  estimate is kept, ``degenerate`` is True with ``extra["degenerate_reason"]``, and every
  interval is ``(None, None)`` with a ``DegenerateDataWarning``, as for too few items;
* every bootstrap resample giving the same value (with two or more units): that point as
  both bounds, with a ``DegenerateDataWarning``.

Range clipping: every interval (analytic, percentile and BCa) is clipped to the coefficient's
range ``AgreementResult.range`` (``(low, high)``; a None end is unbounded). An analytic
``estimate +- q * SE`` can leave the range (e.g. (-2.54, 1) for a PABAK that cannot be below
-1). The ranges: Cohen's, Light's kappa (unweighted, linear, quadratic; numerically checked
for the weighted ones): [-1, 1]; Fleiss' kappa, unweighted, every item with >= 2 ratings:
[-1, 1] (per item pa_i = (r S_i - 1) / (r - 1) >= 2 S_i - 1 with S_i = sum_k p_ik^2, and
mean S_i >= sum_k pi_k^2 = pe, so pa >= 2 pe - 1); items with a single rating enter pe but
not pa (irrCAC), and then there is no lower bound (``counts=[[1, 1], [1, 0], [1, 0],
[1, 0]]`` gives -3.57), so only the upper end 1 is clipped, as for weighted Fleiss and custom
weights anywhere; Conger's kappa, unweighted, no missing rating: [-1, 1] (numerically
checked), else upper end only; Gwet's AC1/AC2, Brennan-Prediger and PABAK:
[-p / (1 - p), 1] with ``p = sum(weights) / q^2`` the largest chance agreement their formula
allows (pa >= 0), i.e. [-1 / (q - 1), 1] unweighted, [-1, 1] for two categories;
Krippendorff's alpha: upper end 1 only (its lower limit depends on the sample and
Krippendorff 2011 gives no fixed one; our random search over small samples never went below
-0.75, but no bound is claimed); kappa_max and specific agreement: [0, 1].
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from evalkit.display import Readable, fmt_estimate, fmt_number
from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.stats._inputs import check_level

__all__ = [
    "AgreementResult",
    "BootstrapResult",
    "CategoryAgreement",
    "ConfidenceInterval",
]

CIMethod = Literal["analytic", "percentile", "bca"]
_METHODS = ("analytic", "percentile", "bca")


class ConfidenceInterval(NamedTuple):
    """A two-sided interval; ``None`` bounds mean the interval is undefined (see warnings)."""

    low: float | None
    high: float | None


@dataclass(frozen=True, eq=False)
class _Estimator:
    """Per-item sufficient statistics ``suff`` (items x p) and ``fn``: sums (..., p) -> stat (...).

    ``fn`` returns NaN where the statistic is undefined (0/0); callers turn that into None.
    ``per_item`` is the matrix, or a function that builds it: then it is built the first time
    a resampling statistic asks for :attr:`suff` (a point estimate never needs it).
    """

    per_item: NDArray[np.float64] | Callable[[], NDArray[np.float64]]
    fn: Callable[[NDArray[np.float64]], NDArray[np.float64]]
    index: NDArray[np.intp] | None = None  # input row of each item used
    n_input: int | None = None  # rows of the input (clusters may be given per input row)

    @cached_property
    def suff(self) -> NDArray[np.float64]:
        """The per-item matrix (built now if it was given as a function)."""
        return self.per_item() if callable(self.per_item) else self.per_item

    def __call__(self, sums: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.fn(sums)


@dataclass(frozen=True, repr=False)
class CategoryAgreement(Readable):
    """Agreement on one category (e.g. Fleiss' per-category kappa)."""

    statistic: float | None
    standard_error: float | None = None
    z: float | None = None
    p_value: float | None = None

    def _headline(self) -> str:
        se = "" if self.standard_error is None else f" (SE {fmt_number(self.standard_error)})"
        return f"{fmt_number(self.statistic)}{se}"

    def _rows(self) -> list[tuple[str, Any]]:
        return [
            ("statistic", self.statistic),
            ("standard error", self.standard_error),
            ("z", self.z),
            ("p-value", self.p_value),
        ]


@dataclass(frozen=True, repr=False)
class BootstrapResult(Readable):
    """A bootstrap interval together with the distribution it came from.

    ``distribution`` holds the statistic of every resample whose statistic was defined;
    ``n_undefined`` counts the resamples where it was not (e.g. all ratings in one category).
    """

    confidence_interval: ConfidenceInterval
    distribution: NDArray[np.float64] = field(repr=False)
    standard_error: float | None
    method: str
    level: float
    n_resamples: int
    n_undefined: int = 0
    bias_correction: float | None = None  # z0 of BCa
    acceleration: float | None = None  # a of BCa

    @property
    def bootstrap_distribution(self) -> NDArray[np.float64]:
        """The distribution under scipy's name (``scipy.stats.BootstrapResult``)."""
        return self.distribution

    def _interval_text(self) -> str:
        low, high = self.confidence_interval
        return (
            "undefined"
            if low is None or high is None
            else f"[{fmt_number(low)}, {fmt_number(high)}]"
        )

    def _headline(self) -> str:
        method = {"bca": "BCa", "percentile": "percentile"}.get(self.method, self.method)
        undefined = f", {self.n_undefined} undefined" if self.n_undefined else ""
        return (
            f"{method} {100 * self.level:g}% interval {self._interval_text()} from "
            f"{self.n_resamples:,} resamples{undefined}"
        )

    def _rows(self) -> list[tuple[str, Any]]:
        return [
            ("interval", self._interval_text()),
            ("method", self.method),
            ("level", self.level),
            ("resamples", self.n_resamples),
            ("undefined resamples", self.n_undefined),
            ("bootstrap standard error", self.standard_error),
            ("bias correction z0 (BCa)", self.bias_correction),
            ("acceleration a (BCa)", self.acceleration),
        ]


@dataclass(frozen=True, eq=False, repr=False)
class AgreementResult(Readable):
    """An agreement statistic with its uncertainty.

    Attributes
    ----------
    statistic : the estimate, or ``None`` when it is undefined on these data (the rule:
        a chance-corrected coefficient whose chance agreement is 1, i.e. ``0/0``, as when every
        rating is the same single category, is ``None`` with ``degenerate=True`` and a
        ``DegenerateDataWarning``; it is never NaN and never raises). With too few items
        (``few_items``) the estimate is kept but ``degenerate`` is True and every interval is
        ``(None, None)`` (see the module docstring).
    standard_error : analytic standard error under the alternative (the formula is named in
        ``se_method``), or ``None`` when undefined.
    n : number of items used. ``n_raters``: raters (columns). ``categories``: the labels.
    name : the coefficient's name. ``observed_agreement`` / ``chance_agreement``: pa and pe.
    standard_error_h0, z, p_value : test of "no agreement beyond chance" where defined.
    df : degrees of freedom of the t quantile for the analytic interval (None: normal).
    per_category, prevalence_index, bias_index, positive, negative, extra : where they apply.
    """

    statistic: float | None
    standard_error: float | None
    n: int
    n_raters: int
    categories: tuple[Any, ...]
    name: str
    observed_agreement: float | None = None
    chance_agreement: float | None = None
    standard_error_h0: float | None = None
    z: float | None = None
    p_value: float | None = None
    df: int | None = None
    se_method: str | None = None
    degenerate: bool = False
    weights: str | None = None
    per_category: Mapping[Any, CategoryAgreement] | None = None
    prevalence_index: float | None = None
    bias_index: float | None = None
    positive: AgreementResult | None = None
    negative: AgreementResult | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    range: tuple[float | None, float | None] = (None, 1.0)  # intervals are clipped to it
    _estimator: _Estimator | None = field(default=None, repr=False)

    def __getattr__(self, name: str) -> Any:
        # extra fields (e.g. positive_agreement) read like attributes
        extra = self.__dict__.get("extra")
        if extra is not None and name in extra:
            return extra[name]
        raise AttributeError(f"{type(self).__name__!s} has no attribute {name!r}")

    @property
    def few_items(self) -> bool:
        """No interval although the estimate is defined (too few items, or no variation).

        One item, or two whose analytic SE is 0 or undefined, or (``extra["degenerate_reason"]``)
        data that leave the estimate no sampling variation, e.g. Cohen's kappa with a rater who
        used one category. The estimate is kept and ``degenerate`` is True (module docstring): a degenerate result
        whose statistic is defined is one whose sampling variation cannot be estimated.
        """
        return self.n < 2 or (self.degenerate and self.statistic is not None)

    def _interval_95(self) -> tuple[ConfidenceInterval | None, str]:
        """The analytic 95% interval when there is one, else why not (no warning either way)."""
        if self.statistic is None:
            return None, "degenerate data"
        if self.few_items:
            return None, "too few items for an interval"
        if self.standard_error is None:
            return None, "no analytic interval: use .bootstrap()"
        return self._analytic_interval(0.95), ""

    def _headline(self) -> str:
        ci, why = self._interval_95()
        if self.statistic is None:
            return f"{self.name} undefined ({why}), n = {self.n}"
        text = f"{self.name} {fmt_estimate(self.statistic, ci, self.n, digits=2)}"
        return text.replace(" [CI undefined]", "") + (f" ({why})" if why else "")

    def _rows(self) -> list[tuple[str, Any]]:
        ci, why = self._interval_95()
        shown = why if ci is None else f"[{fmt_number(ci.low, 3)}, {fmt_number(ci.high, 3)}]"
        rows: list[tuple[str, Any]] = [
            ("statistic", self.statistic),
            ("95% interval (analytic)", shown),
            ("standard error", self.standard_error),
            ("items", self.n),
            ("raters", self.n_raters),
            ("categories", ", ".join(str(c) for c in self.categories)),
            ("observed agreement", self.observed_agreement),
            ("chance agreement", self.chance_agreement),
        ]
        if self.p_value is not None:
            rows += [("z (no agreement beyond chance)", self.z), ("p-value", self.p_value)]
        if self.weights is not None:
            rows.append(("weights", self.weights))
        if self.se_method is not None:
            rows.append(("standard error method", self.se_method))
        return rows

    def __float__(self) -> float:
        if self.statistic is None:
            raise EvalkitError(f"{self.name} is undefined on these data (degenerate)")
        return float(self.statistic)

    def confidence_interval(
        self,
        level: float = 0.95,
        method: CIMethod = "analytic",
        n_resamples: int = 9999,
        rng: Any = None,
        *,
        clusters: Any = None,
    ) -> ConfidenceInterval:
        """Two-sided confidence interval ``(low, high)`` at ``level``.

        ``method="analytic"`` uses ``statistic +- q * standard_error`` with a t quantile on
        ``df`` degrees of freedom when ``df`` is set (the irrCAC convention) or a normal
        quantile otherwise (Fleiss, Cohen & Everitt 1969). Every method's interval is clipped
        to the coefficient's ``range`` (module docstring).
        ``"percentile"`` and ``"bca"`` bootstrap the items (or whole ``clusters``) with
        ``n_resamples`` resamples drawn from ``rng`` (Generator or int seed). An undefined
        statistic, or too few items (``few_items``), gives ``(None, None)`` with a
        ``DegenerateDataWarning`` for every method (module docstring).
        """
        check_level(level)
        if method not in _METHODS:
            raise EvalkitError(f"method must be one of {_METHODS}, got {method!r}")
        if self.few_items:
            items = f"{self.n} item" + ("s" if self.n != 1 else "")
            why = self.extra.get("degenerate_reason") or f"only {items}: too few"
            warnings.warn(
                DegenerateDataWarning(
                    f"{self.name}: {why}; its sampling variation cannot be estimated, so "
                    "the interval is (None, None)"
                ),
                stacklevel=2,
            )
            return ConfidenceInterval(None, None)
        if method == "analytic":
            return self._analytic_interval(level)
        return self.bootstrap(
            n_resamples=n_resamples, rng=rng, level=level, method=method, clusters=clusters
        ).confidence_interval

    def _analytic_interval(self, level: float) -> ConfidenceInterval:
        from scipy import stats

        if self.statistic is None:
            warnings.warn(
                DegenerateDataWarning(f"{self.name} is undefined; its interval is (None, None)"),
                stacklevel=3,
            )
            return ConfidenceInterval(None, None)
        if self.standard_error is None:
            raise EvalkitError(
                f"{self.name} has no analytic standard error here; "
                "use method='bca' or method='percentile'"
            )
        tail = 0.5 + level / 2
        q = float(stats.t.ppf(tail, self.df) if self.df else stats.norm.ppf(tail))
        low = self.statistic - q * self.standard_error
        high = self.statistic + q * self.standard_error
        return clip_interval(ConfidenceInterval(float(low), float(high)), self.range)

    def bootstrap(
        self,
        n_resamples: int = 9999,
        rng: Any = None,
        *,
        level: float = 0.95,
        method: Literal["percentile", "bca"] = "bca",
        clusters: Any = None,
        weights: NDArray[np.integer[Any]] | None = None,
    ) -> BootstrapResult:
        """Bootstrap the items (vectorized): returns the interval and the distribution.

        ``clusters`` resamples whole clusters: one label per item used (``n`` labels) or per
        row of the input (items left out, e.g. without two ratings, are then skipped).
        ``weights`` (resamples x items counts, e.g. from ``resample_weights``) replaces the
        random draws, which makes the result comparable to any other implementation that used
        the same resamples.
        """
        from evalkit.stats import bootstrap as bs

        check_level(level)
        if self._estimator is None:
            raise EvalkitError(f"{self.name} cannot be bootstrapped (no per-item data kept)")
        if method not in ("percentile", "bca"):
            raise EvalkitError(f"bootstrap method must be 'percentile' or 'bca', got {method!r}")
        return bs.bootstrap_estimator(
            self._estimator,
            theta_hat=self.statistic,
            n_resamples=n_resamples,
            rng=rng,
            level=level,
            method=method,
            clusters=clusters,
            weights=weights,
            name=self.name,
            bounds=self.range,
        )


def clip_interval(
    ci: ConfidenceInterval, bounds: tuple[float | None, float | None]
) -> ConfidenceInterval:
    """Clip both ends of ``ci`` into ``bounds`` (a None bound is open; None ends stay None)."""
    lo_b, hi_b = bounds

    def clip(x: float | None) -> float | None:
        if x is None:
            return None
        if lo_b is not None:
            x = max(x, lo_b)
        if hi_b is not None:
            x = min(x, hi_b)
        return float(x)

    return ConfidenceInterval(clip(ci.low), clip(ci.high))
