"""Prediction-powered class shares (PPI++): a judge on every item, humans on a random subsample.

Each class share by PPI++ (Angelopoulos, Duchi & Zrnic 2023) with its power-tuned lambda and
normal interval, exactly as ``ppi_py``, beside the classical human-only interval and the
effective number of human labels. The Wald interval's weakness for a rare class with few human
labels applies (measured by simulation). Method, sources, tuning modes and the undefined cases:
docs/STATISTICS.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from evalkit.display import Readable, fmt_number, fmt_shares
from evalkit.errors import EvalkitError
from evalkit.stats import _shares as sh
from evalkit.stats._inputs import check_level
from evalkit.stats._labels import as_labels, as_pairs, check_classes, encode, order_classes
from evalkit.stats._result import ConfidenceInterval

__all__ = ["ASSUMPTION", "PPIPrevalence", "ppi_class_shares", "ppi_prevalence"]

Tuning = Literal["per-class", "shared", "none"]
_TUNINGS = ("per-class", "shared", "none")
METHOD = "PPI++ (Angelopoulos, Duchi & Zrnic 2023), power-tuned lambda"
ASSUMPTION = (
    "The human-labelled items are a simple random sample of the target, and the human labels "
    "are the truth. Nothing is assumed about the judge: its errors are measured on the "
    "labelled items of this very target, so a poor judge only costs precision, never bias."
)


@dataclass(frozen=True, repr=False)
class PPIPrevalence(Readable):
    """PPI++ class shares beside the human-only classical estimate; see the module docstring.

    ``statistic``: class -> PPI++ share (None when undefined, see ``reason``); ``n``: human-
    labelled items used; ``n_unlabelled``: judge-only items. ``standard_error``, ``lam``,
    ``classical`` (human-only shares), ``classical_standard_error``, ``effective_n`` and
    ``n_gained`` are per class; ``naive``: the judge's own shares over every target item.
    """

    statistic: Mapping[Any, float] | None
    n: int
    n_unlabelled: int
    classes: tuple[Any, ...]
    level: float
    tuning: str
    reason: str | None
    standard_error: Mapping[Any, float] | None
    lam: Mapping[Any, float] | None
    unclipped_statistic: Mapping[Any, float] | None
    classical: Mapping[Any, float] | None
    classical_standard_error: Mapping[Any, float] | None
    effective_n: Mapping[Any, float | None] | None
    naive: Mapping[Any, float] | None
    n_pairs_missing: int
    n_judge_missing: int
    method: str = METHOD
    assumption: str = ASSUMPTION

    @property
    def defined(self) -> bool:
        """Whether the estimate exists (the data allowed it)."""
        return self.statistic is not None

    @property
    def n_gained(self) -> dict[Any, float | None] | None:
        """Per class: effective sample size minus the human labels actually used."""
        if self.effective_n is None:
            return None
        return {c: None if e is None else e - self.n for c, e in self.effective_n.items()}

    def _normal(
        self,
        centre: Mapping[Any, float] | None,
        se: Mapping[Any, float] | None,
        level: float | None,
        clip: bool,
        what: str,
    ) -> dict[Any, ConfidenceInterval]:
        lv = self.level if level is None else level
        z = sh.z_quantile(lv)
        if centre is None or se is None:
            sh.warn(f"{what} is undefined ({self.reason}); intervals are None", stacklevel=4)
            return sh.undefined_intervals(self.classes)
        out: dict[Any, ConfidenceInterval] = {}
        for c in self.classes:
            if se[c] == 0:
                sh.warn(f"{what}: class {c!r} has standard error 0; its interval is None", 4)
                out[c] = ConfidenceInterval(None, None)
                continue
            low, high = centre[c] - z * se[c], centre[c] + z * se[c]
            if clip:
                low, high = max(low, 0.0), min(high, 1.0)
            out[c] = ConfidenceInterval(float(low), float(high))
        return out

    def confidence_interval(self, level: float | None = None) -> dict[Any, ConfidenceInterval]:
        """Class -> PPI++ ``(low, high)`` at ``level`` (default: the result's), clipped to [0, 1]."""
        return self._normal(self.unclipped_statistic, self.standard_error, level, True, "PPI++")

    def unclipped_interval(self, level: float | None = None) -> dict[Any, ConfidenceInterval]:
        """The normal interval before clipping (what ``ppi_py.ppi_mean_ci`` returns)."""
        return self._normal(self.unclipped_statistic, self.standard_error, level, False, "PPI++")

    def classical_interval(self, level: float | None = None) -> dict[Any, ConfidenceInterval]:
        """The human-only normal interval (``ppi_py.classical_mean_ci``), clipped to [0, 1]."""
        return self._normal(
            self.classical, self.classical_standard_error, level, True, "classical share"
        )

    def _intervals(self) -> tuple[dict[Any, ConfidenceInterval], dict[Any, ConfidenceInterval]]:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # undefined intervals read as "undefined"
            return self.confidence_interval(), self.classical_interval()

    def _headline(self) -> str:
        if self.statistic is None:
            return f"PPI++ prevalence undefined ({self.reason}), n = {self.n}"
        ppi_ci, _ = self._intervals()
        shares = fmt_shares(self.statistic, ppi_ci, self.classes)
        return f"PPI++ prevalence {shares}, n = {self.n} (+{self.n_unlabelled} judge-only)"

    def _rows(self) -> list[tuple[str, Any]]:
        ppi_ci, cl_ci = self._intervals()
        return [
            (
                f"PPI++ shares, {100 * self.level:g}% interval",
                fmt_shares(self.statistic, ppi_ci, self.classes),
            ),
            ("human-only shares", fmt_shares(self.classical, cl_ci, self.classes)),
            ("judge's own shares (naive)", fmt_shares(self.naive, None, self.classes)),
            ("human-labelled items", self.n),
            ("judge-only items", self.n_unlabelled),
            ("effective n", _per_class(self.effective_n)),
            ("method", self.method),
            ("why undefined", self.reason),
            ("assumption", self.assumption),
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON-simple summary (what a CLI or a notebook shows)."""
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the summary says undefined in its own fields
            ppi_ci, cl_ci = self.confidence_interval(), self.classical_interval()
        return {
            "estimator": "ppi_prevalence",
            "method": self.method,
            "tuning": self.tuning,
            "statistic": sh.json_shares(self.statistic),
            "confidence_interval": sh.shares_interval_json(ppi_ci),
            "standard_error": sh.json_shares(self.standard_error),
            "lambda": sh.json_shares(self.lam),
            "classical": sh.json_shares(self.classical),
            "classical_interval": sh.shares_interval_json(cl_ci),
            "effective_n": sh.json_shares(self.effective_n),
            "n_gained": sh.json_shares(self.n_gained),
            "naive": sh.json_shares(self.naive),
            "level": self.level,
            "n": self.n,
            "n_unlabelled": self.n_unlabelled,
            "n_pairs_missing": self.n_pairs_missing,
            "n_judge_missing": self.n_judge_missing,
            "reason": self.reason,
            "assumption": self.assumption,
        }


def _per_class(values: Mapping[Any, float | None] | None) -> str:
    """``pass 412, fail 88``: a per-class count, whole, or ``undefined``."""
    if not values:
        return "undefined"
    return ", ".join(
        f"{c} {fmt_number(None if v is None else round(v))}" for c, v in values.items()
    )


# --------------------------------------------------------------------------- the computation


def _indicator_moments(counts: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    """Per-class mean of one-hot indicators and the item count, from class counts."""
    total = float(counts.sum())
    return (counts / total if total > 0 else np.zeros_like(counts)), total


def ppi_class_shares(
    joint: NDArray[np.float64], unlabelled: NDArray[np.float64], tuning: str = "per-class"
) -> dict[str, NDArray[np.float64]]:
    """PPI++ per class from counts.

    ``joint[h, j]``: labelled items with human h and judge j; ``unlabelled[j]``: judge-only
    items. Returns arrays per class: ``theta``, ``se``, ``lam``, ``classical``,
    ``classical_se`` (every variance as in ppi_py; see the module docstring).
    """
    n = float(joint.sum())
    big_n = float(unlabelled.sum())
    y = joint.sum(axis=1) / n  # mean of 1{Y = c}
    f = joint.sum(axis=0) / n  # mean of 1{f = c} on the labelled items
    both = np.diag(joint) / n  # mean of 1{Y = c} 1{f = c}
    fu, _ = _indicator_moments(unlabelled)
    cov = both - y * f  # divisor n (ppi_py's cov_grads / 2)
    total = n + big_n
    f_all = (f * n + fu * big_n) / total
    var_all = f_all * (1 - f_all) * total / (total - 1)  # np.cov: divisor n + N - 1
    ratio = n / big_n if big_n > 0 else math.inf
    if tuning == "none":
        lam = np.ones_like(y)
    elif tuning == "shared":
        den = (1 + ratio) * var_all.sum()
        lam = np.full_like(y, 0.0 if den == 0 or math.isinf(den) else cov.sum() / den)
    else:
        den = (1 + ratio) * var_all
        lam = np.divide(cov, den, out=np.zeros_like(cov), where=(den > 0) & np.isfinite(den))
    lam = np.clip(lam, 0.0, 1.0)
    if big_n == 0:
        lam = np.zeros_like(lam)  # no unlabelled item: nothing to borrow from the judge
    theta = lam * fu + (y - lam * f)
    # var of (1{Y=c} - lam 1{f=c}) with divisor n: E[(Y - lam f)^2] - (y - lam f)^2
    second = y - 2 * lam * both + lam**2 * f
    var_rect = np.maximum(second - (y - lam * f) ** 2, 0.0)
    var_imp = lam**2 * fu * (1 - fu)
    se = np.sqrt(var_rect / n + (var_imp / big_n if big_n > 0 else 0.0))
    return {
        "theta": theta,
        "se": se,
        "lam": lam,
        "classical": y,
        "classical_se": np.sqrt(y * (1 - y) / n),
    }


def _check_tuning(tuning: Any) -> str:
    if tuning not in _TUNINGS:
        raise EvalkitError(f"tuning must be one of {_TUNINGS}, got {tuning!r}")
    return str(tuning)


def _counts(
    judge_all: Any, judge_labelled: Any, human_labelled: Any, classes: Any, overlap: str
) -> tuple[tuple[Any, ...], NDArray[np.float64], NDArray[np.float64], int, int]:
    """(classes, joint human x judge counts, unlabelled judge counts, pairs/judge missing)."""
    every = as_labels(judge_all, "judge_all")
    jl, hl = as_pairs(judge_labelled, human_labelled, ("judge_labelled", "human_labelled"))
    declared = check_classes(classes)
    cls = declared or order_classes([*hl, *jl, *every])
    k = len(cls)
    keep = [(h, j) for h, j in zip(hl, jl, strict=True) if h is not None and j is not None]
    joint = np.zeros((k, k))
    if keep:
        h_codes = encode([h for h, _ in keep], cls, "human_labelled")
        j_codes = encode([j for _, j in keep], cls, "judge_labelled")
        np.add.at(joint, (h_codes, j_codes), 1.0)
    a_codes = encode(every, cls, "judge_all")
    all_counts = np.bincount(a_codes[a_codes >= 0], minlength=k).astype(float)
    if overlap == "included":
        unl = all_counts - joint.sum(axis=0)
        if np.any(unl < 0):
            c = cls[int(np.argmin(unl))]
            raise EvalkitError(
                f"judge_all must include the human-labelled items (overlap='included'): "
                f"judge_labelled gives {c!r} more often than judge_all does; pass "
                "overlap='disjoint' if judge_all holds only the items without a human label"
            )
    else:
        unl = all_counts
    return cls, joint, unl, len(hl) - len(keep), int(np.sum(a_codes < 0))


def ppi_prevalence(
    judge_all: Any,
    judge_labelled: Any,
    human_labelled: Any,
    *,
    level: float = 0.95,
    tuning: Tuning = "per-class",
    overlap: Literal["included", "disjoint"] = "included",
    classes: Any = None,
) -> PPIPrevalence:
    """PPI++ estimate of each class share on a target, with its interval; see the module doc.

    ``judge_all``: the judge's label on every target item; ``judge_labelled`` and
    ``human_labelled``: the judge's and a human's label on a random subsample of the target,
    aligned item by item (pairs with a missing label are left out and counted).
    """
    check_level(level)
    tune = _check_tuning(tuning)
    if overlap not in ("included", "disjoint"):
        raise EvalkitError(f"overlap must be 'included' or 'disjoint', got {overlap!r}")
    cls, joint, unl, pairs_missing, judge_missing = _counts(
        judge_all, judge_labelled, human_labelled, classes, overlap
    )
    n, big_n = int(joint.sum()), int(unl.sum())
    every = joint.sum(axis=0) + unl
    base: dict[str, Any] = {
        "n": n,
        "n_unlabelled": big_n,
        "classes": cls,
        "level": float(level),
        "tuning": tune,
        "naive": None
        if every.sum() == 0
        else {c: float(v) for c, v in zip(cls, every / every.sum(), strict=True)},
        "n_pairs_missing": pairs_missing,
        "n_judge_missing": judge_missing,
    }
    reason = None
    if n + big_n == 0:
        reason = "no target item has a label"
    elif n < 2:
        reason = f"{n} human-labelled item(s): the sampling variation cannot be estimated"
    if reason is not None:
        sh.warn(f"PPI++ prevalence is undefined: {reason}")
        empty: dict[str, Any] = dict.fromkeys(
            (
                "statistic",
                "standard_error",
                "lam",
                "unclipped_statistic",
                "classical",
                "classical_standard_error",
                "effective_n",
            )
        )
        return PPIPrevalence(reason=reason, **empty, **base)
    r = ppi_class_shares(joint, unl, tune)

    def per_class(values: NDArray[np.float64]) -> dict[Any, float]:
        return {c: float(v) for c, v in zip(cls, values, strict=True)}

    eff = {
        c: None if se == 0 else float(n * cse**2 / se**2)
        for c, se, cse in zip(cls, r["se"], r["classical_se"], strict=True)
    }
    return PPIPrevalence(
        statistic=per_class(np.clip(r["theta"], 0.0, 1.0)),
        reason=None,
        standard_error=per_class(r["se"]),
        lam=per_class(r["lam"]),
        unclipped_statistic=per_class(r["theta"]),
        classical=per_class(r["classical"]),
        classical_standard_error=per_class(r["classical_se"]),
        effective_n=eff,
        **base,
    )
