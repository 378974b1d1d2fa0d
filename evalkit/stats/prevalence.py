"""Judge-error-corrected prevalence: the share of each class on a target the judge labelled.

The maximum-likelihood class shares given the judge's confusion matrix on a gold set (the EM
of Saerens, Latinne & Decaestecker 2002; Rogan & Gladen's closed form for two classes), with a
two-sample percentile bootstrap interval. Undefined, with its reason and never NaN, when the
judge's error rates cannot correct the shares. It assumes the judge errs on the target as on
gold. Method, sources and the undefined cases: docs/STATISTICS.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.display import Readable, fmt_shares
from evalkit.errors import EvalkitError
from evalkit.finite import json_figure
from evalkit.stats import _shares as sh
from evalkit.stats._inputs import check_level, check_resamples
from evalkit.stats._labels import (
    as_labels,
    calibration_pairs,
    check_classes,
    encode,
    order_classes,
)
from evalkit.stats._result import ConfidenceInterval
from evalkit.stats.bootstrap import as_generator
from evalkit.stats.proportion import wilson_interval

__all__ = ["ASSUMPTION", "CorrectedPrevalence", "corrected_prevalence", "ml_class_shares"]

ASSUMPTION = (
    "The judge's error rates measured on the gold set (how often it gives each label to items "
    "of each true class) hold on the target too. If the target's items are harder or easier "
    "for the judge than the gold items, the corrected shares are biased."
)
METHOD = "maximum likelihood on the simplex, EM of Saerens, Latinne & Decaestecker (2002)"
INTERVAL_METHOD = (
    "percentile bootstrap: gold items resampled within each gold class, target items resampled"
)
DEFAULT_MIN_SINGULAR_VALUE = 0.05
_TOL, _MAX_ITER = 1e-12, 20_000
_BOOT_TOL = 1e-8


@dataclass(frozen=True, repr=False)
class CorrectedPrevalence(Readable):
    """Judge-error-corrected class shares with their interval; see the module docstring.

    ``statistic``: class -> corrected share (None when undefined, see ``reason``). ``n``:
    target items used (judge label present); ``n_missing``: target items without a label.
    ``naive`` / ``naive_interval``: the judge's own label shares on the target with Wilson
    intervals (what an uncorrected report would say). ``confusion``: true class -> judge
    label -> estimated probability; ``youden``: per class one-vs-rest ``Se + Sp - 1``.
    """

    statistic: Mapping[Any, float] | None
    n: int
    classes: tuple[Any, ...]
    labels: tuple[Any, ...]
    level: float
    reason: str | None
    naive: Mapping[Any, float] | None
    naive_interval: Mapping[Any, ConfidenceInterval]
    n_missing: int
    n_gold: int
    n_gold_missing: int
    gold_counts: Mapping[Any, int]
    confusion: Mapping[Any, Mapping[Any, float]] | None
    youden: Mapping[Any, float | None]
    smallest_singular_value: float | None
    min_singular_value: float
    standard_error: Mapping[Any, float] | None = None
    n_resamples: int = 0
    n_undefined_resamples: int = 0
    iterations: int = 0
    converged: bool = False
    assumption: str = ASSUMPTION
    method: str = METHOD
    interval_method: str = INTERVAL_METHOD
    _interval: Mapping[Any, ConfidenceInterval] = field(default_factory=dict, repr=False)
    _distribution: NDArray[np.float64] = field(default_factory=lambda: np.empty((0, 0)), repr=False)

    @property
    def defined(self) -> bool:
        """Whether the estimate exists (the data allowed it)."""
        return self.statistic is not None

    @property
    def bootstrap_distribution(self) -> NDArray[np.float64]:
        """Resamples x classes: the corrected shares of every defined resample."""
        return self._distribution

    def confidence_interval(self, level: float | None = None) -> dict[Any, ConfidenceInterval]:
        """Class -> ``(low, high)`` at ``level`` (default: the level the result was built at).

        Another level reads the same bootstrap distribution. Undefined: every class
        ``(None, None)`` with a ``DegenerateDataWarning``.
        """
        lv = self.level if level is None else level
        check_level(lv)
        if self.statistic is None or self._distribution.shape[0] == 0:
            why = self.reason or "too few items to estimate the sampling variation"
            sh.warn(f"corrected prevalence has no interval ({why}); intervals are None")
            return sh.undefined_intervals(self.classes)
        if lv == self.level:
            return dict(self._interval)
        return sh.percentile_intervals(self._distribution, self.classes, lv)

    def _quiet_interval(self) -> dict[Any, ConfidenceInterval] | None:
        return dict(self._interval) if self.statistic is not None and self._interval else None

    def _headline(self) -> str:
        if self.statistic is None:
            return f"corrected prevalence undefined ({self.reason}), n = {self.n}"
        shares = fmt_shares(self.statistic, self._quiet_interval(), self.classes)
        return f"corrected prevalence {shares}, n = {self.n} (gold {self.n_gold})"

    def _rows(self) -> list[tuple[str, Any]]:
        return [
            ("corrected shares", fmt_shares(self.statistic, self._quiet_interval(), self.classes)),
            (
                "judge's own shares (naive)",
                fmt_shares(self.naive, self.naive_interval, self.classes),
            ),
            ("interval", f"{100 * self.level:g}% {self.interval_method}"),
            ("target items", self.n),
            ("target items without a label", self.n_missing),
            ("gold items", self.n_gold),
            ("method", self.method),
            ("why undefined", self.reason),
            ("assumption", self.assumption),
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON-simple summary (what a CLI or a notebook shows)."""
        ci = (
            self.confidence_interval()
            if self._distribution.shape[0]
            else sh.undefined_intervals(self.classes)
        )
        return {
            "estimator": "corrected_prevalence",
            "method": self.method,
            "interval_method": self.interval_method,
            "statistic": sh.json_shares(self.statistic),
            "confidence_interval": sh.shares_interval_json(ci),
            "level": self.level,
            "n": self.n,
            "n_missing": self.n_missing,
            "n_gold": self.n_gold,
            "n_gold_missing": self.n_gold_missing,
            "gold_counts": {str(c): int(v) for c, v in self.gold_counts.items()},
            "naive": sh.json_shares(self.naive),
            "naive_interval": sh.shares_interval_json(self.naive_interval),
            "standard_error": sh.json_shares(self.standard_error),
            "confusion": None
            if self.confusion is None
            else {str(c): sh.json_shares(row) for c, row in self.confusion.items()},
            "youden": sh.json_shares(self.youden),
            "smallest_singular_value": json_figure(self.smallest_singular_value),
            "min_singular_value": self.min_singular_value,
            "n_resamples": self.n_resamples,
            "n_undefined_resamples": self.n_undefined_resamples,
            "reason": self.reason,
            "assumption": self.assumption,
        }


# --------------------------------------------------------------------------- estimation


def ml_class_shares(
    confusion: NDArray[np.float64],
    counts: NDArray[np.float64],
    *,
    tol: float = _TOL,
    max_iter: int = _MAX_ITER,
    start: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], int, bool]:
    """Maximum-likelihood class shares by the EM of Saerens et al. (2002), vectorized.

    ``confusion``: (..., K, L) rows ``P(label | class)``; ``counts``: (..., L) label counts on
    the target. Every label with a positive count needs a positive column of ``confusion``
    (callers check it). Returns ``(shares (..., K), iterations, converged)``; EM starts at
    ``start`` (positive shares; default uniform) and stops when no share moves by more than
    ``tol``.
    """
    m = np.asarray(confusion, dtype=float)
    c = np.asarray(counts, dtype=float)
    batch = m.shape[:-2]
    m2 = m.reshape(-1, *m.shape[-2:])
    q = c.reshape(-1, c.shape[-1])
    q = q / q.sum(axis=1, keepdims=True)
    n_problems, k = m2.shape[0], m2.shape[1]
    if start is None:
        pi = np.full((n_problems, k), 1.0 / k)
    else:
        pi = np.array(start, dtype=float).reshape(n_problems, k)
    todo = np.arange(n_problems)  # problems still moving: converged ones are set aside
    it = 0
    while todo.size and it < max_iter:
        it += 1
        mt, qt, pt = m2[todo], q[todo], pi[todo]
        fitted = np.einsum("bk,bkl->bl", pt, mt)
        ratio = np.divide(qt, fitted, out=np.zeros_like(qt), where=fitted > 0)
        new = pt * np.einsum("bkl,bl->bk", mt, ratio)
        pi[todo] = new
        todo = todo[np.max(np.abs(new - pt), axis=1) > tol]
    return pi.reshape(*batch, k), it, todo.size == 0


def _newton_polish(
    pi: NDArray[np.float64], m: NDArray[np.float64], q: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Newton steps on the face of the simplex EM converged to (exact boundary solutions).

    Classes whose share EM drove below 1e-7 start fixed at 0; the rest solve the KKT system of
    ``max sum_l q_l log (M^T pi)_l`` subject to ``sum pi = 1``; a class Newton drives negative
    is fixed at 0 too. Kept only if the result satisfies the optimality conditions (gradient 1
    on the support, at most 1 off it); otherwise EM's answer stands.
    """
    used = q > 0
    mu, qu = m[:, used], q[used]
    active = pi > 1e-7
    for _ in range(pi.size):
        if not active.any():
            return pi
        x = _newton_on_face(pi, mu, qu, active)
        if x is None:
            return pi
        negative = x < 0
        if negative.any():
            active &= ~negative
            continue
        grad = mu @ (qu / (x @ mu))
        ok = np.all(np.abs(grad[active] - 1) <= 1e-8) and np.all(grad[~active] <= 1 + 1e-8)
        return x if ok else pi
    return pi


def _newton_on_face(
    pi: NDArray[np.float64],
    mu: NDArray[np.float64],
    qu: NDArray[np.float64],
    active: NDArray[np.bool_],
) -> NDArray[np.float64] | None:
    """Newton's method for the ML on the face ``active`` (None: singular; may go negative)."""
    a = np.nonzero(active)[0]
    x: NDArray[np.float64] = np.where(active, pi, 0.0)
    x = x / x.sum()
    ones = np.ones((1, a.size))
    for _ in range(50):
        fitted = x @ mu
        if np.any(fitted <= 0):
            return None
        grad = mu @ (qu / fitted)
        hess = -(mu[a] * (qu / fitted**2)) @ mu[a].T
        kkt = np.block([[hess, ones.T], [ones, np.zeros((1, 1))]])
        try:
            step = np.linalg.solve(kkt, np.concatenate([-grad[a], [0.0]]))[: a.size]
        except np.linalg.LinAlgError:
            return None
        x = x.copy()
        x[a] += step
        if np.any(x < 0) or float(np.max(np.abs(step))) < 1e-15:
            return x
    return x


# --------------------------------------------------------------------------- the public function


@dataclass(frozen=True)
class _Data:
    classes: tuple[Any, ...]
    labels: tuple[Any, ...]
    gold_table: NDArray[np.float64]  # K x L counts
    target_counts: NDArray[np.float64]  # L
    n_missing: int
    n_gold_missing: int


def _prepare(target_labels: Any, calibration: Any, classes: Any) -> _Data:
    target = as_labels(target_labels, "target_labels")
    judge_gold, gold = calibration_pairs(calibration)
    declared = check_classes(classes)
    pairs = [
        (j, g) for j, g in zip(judge_gold, gold, strict=True) if j is not None and g is not None
    ]
    gold_used = [g for _, g in pairs]
    cls = declared if declared is not None else order_classes(gold_used)
    if declared is not None:
        encode(gold_used, cls, "calibration (gold labels)")  # a gold label outside classes
    labels = order_classes([*cls, *(j for j, _ in pairs), *target])
    k, n_lab = len(cls), len(labels)
    table = np.zeros((k, n_lab))
    if pairs:
        np.add.at(
            table,
            (
                encode(gold_used, cls, "calibration"),
                encode([j for j, _ in pairs], labels, "calibration (judge labels)"),
            ),
            1.0,
        )
    t_codes = encode(target, labels, "target_labels")
    counts = np.bincount(t_codes[t_codes >= 0], minlength=n_lab).astype(float)
    return _Data(
        classes=cls,
        labels=labels,
        gold_table=table,
        target_counts=counts,
        n_missing=int(np.sum(t_codes < 0)),
        n_gold_missing=len(gold) - len(pairs),
    )


def _youden(
    table: NDArray[np.float64], labels: tuple[Any, ...], classes: tuple[Any, ...]
) -> dict[Any, float | None]:
    """One-vs-rest Youden's J per class on gold: ``Se_c + Sp_c - 1`` (None when undefined)."""
    out: dict[Any, float | None] = {}
    n_c = table.sum(axis=1)
    for i, c in enumerate(classes):
        rest = n_c.sum() - n_c[i]
        if n_c[i] == 0 or rest == 0:
            out[c] = None
            continue
        j = labels.index(c) if c in labels else None
        said_c = table[:, j] if j is not None else np.zeros(len(classes))
        sens = said_c[i] / n_c[i]
        false_pos = (said_c.sum() - said_c[i]) / rest
        out[c] = float(sens - false_pos)  # Se + Sp - 1 = Se - (1 - Sp)
    return out


def _undefined_reason(
    d: _Data, youden: Mapping[Any, float | None], sigma: float | None, bound: float
) -> str | None:
    n_c = d.gold_table.sum(axis=1)
    if d.target_counts.sum() == 0:
        return "no target labels: the target is empty (or every label is missing)"
    if n_c.sum() == 0:
        return "no gold item has both a judge label and a gold label"
    if len(d.classes) < 2:
        return (
            f"the gold set holds a single class ({d.classes[0]!r}): the judge's errors on "
            "other classes are unknown, so nothing can be corrected"
        )
    empty = [c for c, n in zip(d.classes, n_c, strict=True) if n == 0]
    if empty:
        return f"class {empty[0]!r} has no gold item: the judge's error rates on it are unknown"
    unseen = [
        lab
        for lab, t, col in zip(d.labels, d.target_counts, d.gold_table.sum(axis=0), strict=True)
        if t > 0 and col == 0
    ]
    if unseen:
        return (
            f"the judge gave the target label {unseen[0]!r} but never gave it on the gold set: "
            "its error rates for that label are unknown"
        )
    bad = [(c, j) for c, j in youden.items() if j is not None and j <= 0]
    if bad:
        c, j = bad[0]
        return (
            f"the judge is uninformative for class {c!r}: Youden's J = Se + Sp - 1 = {j:.4g} "
            "<= 0 on the gold set"
        )
    if sigma is not None and sigma < bound:
        return (
            f"the confusion matrix is near-singular: its smallest singular value {sigma:.4g} is "
            f"below {bound:g} (errors in the observed shares could grow more than "
            f"{1 / bound:.0f}-fold)"
        )
    return None


def _resample_shares(
    m_star: NDArray[np.float64],
    t_star: NDArray[np.float64],
    near: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """ML shares of many resamples: closed form where it is the ML, EM elsewhere.

    With as many judge labels as classes, a solution of ``q = M^T pi`` inside the simplex fits
    the observed label shares exactly, so it is the maximum likelihood (and EM's fixed point);
    the other resamples (a share at 0, or a singular M) run EM to a step below 1e-8 (far finer
    than the interval's own Monte Carlo error), started next to the closed form when there is
    one, else next to ``near`` (the estimate on the data, which resamples scatter around).
    """
    b, k, n_lab = m_star.shape
    out = np.empty((b, k))
    hint = np.full(k, 1.0 / k) if near is None else np.maximum(near, 1e-6)
    start = np.tile(hint / hint.sum(), (b, 1))
    q = t_star / t_star.sum(axis=1, keepdims=True)
    if k == n_lab:
        mt = np.swapaxes(m_star, 1, 2)
        ok = np.abs(np.linalg.det(mt)) > 1e-12
        lin = np.linalg.solve(mt[ok], q[ok][..., None])[..., 0]
        rows = np.nonzero(ok)[0]
        out[rows] = lin
        # outside the simplex the ML is on its boundary: EM starts next to it, not at uniform
        close = np.maximum(lin, 1e-6)
        start[rows] = close / close.sum(axis=1, keepdims=True)
        need_em = np.ones(b, dtype=bool)
        need_em[rows[np.all(lin >= 0, axis=1)]] = False
    else:
        need_em = np.ones(b, dtype=bool)
    if need_em.any():
        out[need_em], _, _ = ml_class_shares(
            m_star[need_em], t_star[need_em], tol=_BOOT_TOL, start=start[need_em]
        )
    return out


def _bootstrap(
    d: _Data, conf: NDArray[np.float64], n_resamples: int, rng: Any, pi: NDArray[np.float64]
) -> tuple[NDArray[np.float64], int]:
    """Two-sample bootstrap distribution (resamples x classes) and the undefined count."""
    gen = as_generator(rng)
    n_c = d.gold_table.sum(axis=1).astype(np.int64)
    n_t = int(d.target_counts.sum())
    q = d.target_counts / n_t
    rows = [gen.multinomial(int(n_c[i]), conf[i], size=n_resamples) for i in range(len(n_c))]
    m_star = np.stack(rows, axis=1) / n_c[None, :, None]
    t_star = gen.multinomial(n_t, q, size=n_resamples).astype(float)
    bad = np.any((t_star > 0) & (m_star.sum(axis=1) == 0), axis=1)
    return _resample_shares(m_star[~bad], t_star[~bad], pi), int(bad.sum())


def _base_fields(
    d: _Data,
    conf: NDArray[np.float64],
    youden: Mapping[Any, float | None],
    sigma: float | None,
    level: float,
    bound: float,
) -> dict[str, Any]:
    """The fields every result has, defined or not (naive shares, confusion, diagnostics)."""
    n_c = d.gold_table.sum(axis=1)
    n_t = int(d.target_counts.sum())
    return {
        "n": n_t,
        "classes": d.classes,
        "labels": d.labels,
        "level": level,
        "naive": None
        if n_t == 0
        else {lab: float(v) for lab, v in zip(d.labels, d.target_counts / n_t, strict=True)},
        "naive_interval": {
            lab: wilson_interval(int(v), n_t, level)
            for lab, v in zip(d.labels, d.target_counts, strict=True)
        },
        "n_missing": d.n_missing,
        "n_gold": int(n_c.sum()),
        "n_gold_missing": d.n_gold_missing,
        "gold_counts": {c: int(v) for c, v in zip(d.classes, n_c, strict=True)},
        "confusion": None
        if n_c.sum() == 0
        else {
            c: {lab: float(conf[i, j]) for j, lab in enumerate(d.labels)}
            for i, c in enumerate(d.classes)
        },
        "youden": youden,
        "smallest_singular_value": sigma,
        "min_singular_value": bound,
    }


def corrected_prevalence(
    target_labels: Any,
    calibration: Any,
    *,
    level: float = 0.95,
    n_resamples: int = 2000,
    rng: Any = None,
    classes: Any = None,
    min_singular_value: float = DEFAULT_MIN_SINGULAR_VALUE,
) -> CorrectedPrevalence:
    """Class shares on a target corrected for the judge's errors measured on gold.

    ``target_labels``: the judge's label on every target item (``None`` = missing).
    ``calibration``: a pair ``(judge_labels_on_gold, gold_labels)`` of equal-length label
    sequences, or a calibration result offering ``paired_labels()`` (or attributes
    ``judge_labels`` / ``gold_labels``). ``classes``: the true classes to report (default: the
    gold labels seen). ``n_resamples`` two-sample bootstrap resamples drawn from ``rng``
    (Generator or int seed) give the percentile interval at ``level``. Undefined cases, the
    bound ``min_singular_value`` and the method: see the module docstring.
    """
    check_level(level)
    n_res = check_resamples(n_resamples, minimum=100)
    if (
        isinstance(min_singular_value, bool)
        or not isinstance(min_singular_value, (int, float))
        or not 0 <= float(min_singular_value) < 1
    ):
        raise EvalkitError(f"min_singular_value must be in [0, 1), got {min_singular_value!r}")
    d = _prepare(target_labels, calibration, classes)
    n_c = d.gold_table.sum(axis=1)
    n_t = int(d.target_counts.sum())
    conf = np.divide(
        d.gold_table, n_c[:, None], out=np.zeros_like(d.gold_table), where=n_c[:, None] > 0
    )
    youden = _youden(d.gold_table, d.labels, d.classes)
    sigma = float(np.linalg.svd(conf, compute_uv=False).min()) if n_c.sum() > 0 else None
    base = _base_fields(d, conf, youden, sigma, float(level), float(min_singular_value))
    reason = _undefined_reason(d, youden, sigma, float(min_singular_value))
    if reason is not None:
        sh.warn(f"corrected prevalence is undefined: {reason}")
        return CorrectedPrevalence(statistic=None, reason=reason, **base)
    pi, iterations, converged = ml_class_shares(conf, d.target_counts)
    pi = _newton_polish(pi, conf, d.target_counts / n_t)
    dist, n_bad = _bootstrap(d, conf, n_res, rng, pi)
    if n_bad:
        sh.warn(
            f"corrected prevalence: {n_bad} of {n_res} bootstrap resamples left out (a target "
            "label never occurred among the resampled gold judgments)"
        )
    if n_t < 2 or n_c.min() < 2 or dist.shape[0] < 2:
        # one item cannot show its own sampling variation: no interval rather than a false one
        sh.warn(
            "corrected prevalence: fewer than two target items, or a gold class with fewer "
            "than two items: the sampling variation cannot be estimated; intervals are None"
        )
        dist = np.empty((0, len(d.classes)))
    return CorrectedPrevalence(
        statistic={c: float(pi[i]) for i, c in enumerate(d.classes)},
        reason=None,
        standard_error=None
        if dist.shape[0] == 0
        else {c: float(s) for c, s in zip(d.classes, dist.std(axis=0, ddof=1), strict=True)},
        n_resamples=n_res,
        n_undefined_resamples=n_bad,
        iterations=iterations,
        converged=converged,
        _interval={} if dist.shape[0] == 0 else sh.percentile_intervals(dist, d.classes, level),
        _distribution=dist,
        **base,
    )
