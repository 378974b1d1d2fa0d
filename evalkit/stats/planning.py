"""Planning a prevalence study: how many gold items, how many human labels, for half-width h.

For the corrected design (gold items, by the delta method) and the PPI++ design (human labels,
by bisection on its variance), analytically or by seeded simulation of the estimator itself.
Both give the expected precision. Formulas: docs/STATISTICS.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from evalkit.display import Readable, fmt_number
from evalkit.errors import EvalkitError
from evalkit.stats import _shares as sh
from evalkit.stats.bootstrap import as_generator

__all__ = [
    "PrevalencePlan",
    "corrected_variance",
    "plan_prevalence",
    "ppi_variance",
]

_MAX_N = 10_000_000


@dataclass(frozen=True, repr=False)
class PrevalencePlan(Readable):
    """Sizes for a prevalence interval of half-width ``half_width`` (None: unreachable)."""

    half_width: float
    level: float
    n_target: int
    classes: tuple[Any, ...]
    prevalence: Mapping[Any, float]
    method: str
    n_gold: int | None
    n_gold_per_class: Mapping[Any, int] | None
    corrected_half_width: Mapping[Any, float] | None
    gold_reason: str | None
    n_human: int | None
    ppi_half_width: Mapping[Any, float] | None
    human_reason: str | None

    def _headline(self) -> str:
        gold = (
            fmt_number(self.n_gold)
            if self.n_gold is not None
            else f"unreachable ({self.gold_reason})"
        )
        human = (
            fmt_number(self.n_human)
            if self.n_human is not None
            else f"unreachable ({self.human_reason})"
        )
        return (
            f"prevalence plan for +-{fmt_number(self.half_width, percent=True)} at "
            f"{100 * self.level:g}%: {gold} gold items (corrected) or {human} human labels (PPI++)"
        )

    def _rows(self) -> list[tuple[str, Any]]:
        return [
            ("half-width", fmt_number(self.half_width, percent=True)),
            ("level", self.level),
            ("target items", self.n_target),
            ("gold items (corrected prevalence)", self.n_gold),
            ("why unreachable (gold)", self.gold_reason),
            ("human labels (PPI++)", self.n_human),
            ("why unreachable (human)", self.human_reason),
            ("method", self.method),
        ]

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON-simple values."""
        return {
            "half_width": self.half_width,
            "level": self.level,
            "n_target": self.n_target,
            "prevalence": sh.json_shares(self.prevalence),
            "method": self.method,
            "n_gold": self.n_gold,
            "n_gold_per_class": sh.json_shares(self.n_gold_per_class),
            "corrected_half_width": sh.json_shares(self.corrected_half_width),
            "gold_reason": self.gold_reason,
            "n_human": self.n_human,
            "ppi_half_width": sh.json_shares(self.ppi_half_width),
            "human_reason": self.human_reason,
        }


# --------------------------------------------------------------------------- inputs


def _shares_of(value: Any, argname: str) -> tuple[tuple[Any, ...], NDArray[np.float64]]:
    if not isinstance(value, Mapping) or len(value) < 2:
        raise EvalkitError(f"{argname} must be a mapping class -> share with at least 2 classes")
    try:
        arr = np.array([float(v) for v in value.values()])
    except (TypeError, ValueError):
        raise EvalkitError(f"{argname} must map each class to a number") from None
    if any(isinstance(v, bool) for v in value.values()):
        raise EvalkitError(f"{argname} must map each class to a number, not a bool")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or abs(arr.sum() - 1) > 1e-9:
        raise EvalkitError(f"{argname} must hold non-negative shares summing to 1, got {value!r}")
    return tuple(value), arr


def _confusion_of(value: Any, classes: tuple[Any, ...]) -> NDArray[np.float64]:
    """K x K rows P(judge label | true class), labels in the classes' order."""
    if isinstance(value, Mapping):
        try:
            rows = [[float(value[c][lab]) for lab in classes] for c in classes]
        except (KeyError, TypeError, ValueError):
            raise EvalkitError(
                "confusion must map every class to a mapping judge label -> probability over "
                f"the same classes {classes!r}"
            ) from None
        m = np.array(rows)
    else:
        try:
            m = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise EvalkitError("confusion must be a K x K matrix of probabilities") from None
    k = len(classes)
    if m.shape != (k, k):
        raise EvalkitError(f"confusion must be {k} x {k} (rows true class), got {m.shape}")
    if not np.all(np.isfinite(m)) or np.any(m < 0) or np.any(np.abs(m.sum(axis=1) - 1) > 1e-9):
        raise EvalkitError("confusion rows must be probabilities summing to 1")
    if abs(np.linalg.det(m)) < 1e-12:
        raise EvalkitError("confusion is singular: no correction (and no plan) is possible")
    return m


def _positive(name: str, value: Any, integer: bool = False) -> Any:
    ok_type = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, bool) or not isinstance(value, ok_type) or not value > 0:
        kind = "a positive int" if integer else "a positive number"
        raise EvalkitError(f"{name} must be {kind}, got {value!r}")
    if not integer and not math.isfinite(float(value)):
        raise EvalkitError(f"{name} must be finite, got {value!r}")
    return int(value) if integer else float(value)


# --------------------------------------------------------------------------- formulas


def corrected_variance(
    pi: NDArray[np.float64],
    m: NDArray[np.float64],
    n_gold_per_class: NDArray[np.float64],
    n_target: float,
) -> NDArray[np.float64]:
    """Delta-method variance of each corrected share (see the module docstring)."""
    a = np.linalg.inv(m.T)
    q = pi @ m
    cov = (np.diag(q) - np.outer(q, q)) / n_target
    for c in range(len(pi)):
        row = m[c]
        cov = cov + pi[c] ** 2 * (np.diag(row) - np.outer(row, row)) / n_gold_per_class[c]
    return np.diag(a @ cov @ a.T)


def _corrected_parts(
    pi: NDArray[np.float64], m: NDArray[np.float64], w: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``a_k`` and ``b_k`` of ``Var_k = a_k / N + b_k / n_gold``."""
    a_part = corrected_variance(pi, m, np.full(len(pi), np.inf), 1.0)
    b_part = corrected_variance(pi, m, w, np.inf)
    return a_part, b_part


def ppi_variance(
    pi: NDArray[np.float64], m: NDArray[np.float64], n: float, n_unlabelled: float
) -> NDArray[np.float64]:
    """Variance of each PPI++ share with the population-optimal lambda (module docstring)."""
    q = pi @ m
    s_y, s_f = pi * (1 - pi), q * (1 - q)
    c = pi * np.diag(m) - pi * q
    if n_unlabelled <= 0:
        return s_y / n
    den = (1 + n / n_unlabelled) * s_f
    lam = np.clip(np.divide(c, den, out=np.zeros_like(c), where=den > 0), 0.0, 1.0)
    return lam**2 * s_f / n_unlabelled + (s_y - 2 * lam * c + lam**2 * s_f) / n


# --------------------------------------------------------------------------- simulation


def _simulated_corrected_sd(
    pi: NDArray[np.float64], m: NDArray[np.float64], n_c: NDArray[np.int64], n_target: int,
    reps: int, seed: int,
) -> NDArray[np.float64]:  # fmt: skip
    from evalkit.stats.prevalence import _resample_shares

    gen = np.random.default_rng(seed)
    rows = [gen.multinomial(int(n_c[i]), m[i], size=reps) for i in range(len(pi))]
    m_star = np.stack(rows, axis=1) / n_c[None, :, None]
    t_star = gen.multinomial(n_target, pi @ m, size=reps).astype(float)
    ok = ~np.any((t_star > 0) & (m_star.sum(axis=1) == 0), axis=1)
    est = _resample_shares(m_star[ok], t_star[ok], pi)
    return est.std(axis=0, ddof=1)  # type: ignore[no-any-return]


def _simulated_ppi_sd(
    pi: NDArray[np.float64], m: NDArray[np.float64], n: int, n_target: int, reps: int, seed: int
) -> NDArray[np.float64]:
    from evalkit.stats.ppi import ppi_class_shares

    gen = np.random.default_rng(seed)
    joint_p = (pi[:, None] * m).ravel()
    k = len(pi)
    joints = gen.multinomial(n, joint_p, size=reps).reshape(reps, k, k).astype(float)
    unl = gen.multinomial(n_target - n, pi @ m, size=reps).astype(float)
    est = np.array([ppi_class_shares(joints[r], unl[r])["theta"] for r in range(reps)])
    return est.std(axis=0, ddof=1)  # type: ignore[no-any-return]


def _smallest(ok: Callable[[int], bool], lo: int, hi: int) -> int | None:
    """Smallest n in [lo, hi] with ok(n), assuming ok is monotone; None if ok(hi) fails."""
    if not ok(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


# --------------------------------------------------------------------------- the plan


def _gold_counts(n_gold: int, w: NDArray[np.float64]) -> NDArray[np.int64]:
    return np.maximum(1, np.round(n_gold * w)).astype(np.int64)


def _plan_gold(
    pi: NDArray[np.float64], m: NDArray[np.float64], w: NDArray[np.float64], h: float,
    z: float, n_target: int, sim: tuple[int, int] | None, classes: tuple[Any, ...],
) -> tuple[int | None, NDArray[np.float64] | None, str | None]:  # fmt: skip
    a_part, b_part = _corrected_parts(pi, m, w)
    room = (h / z) ** 2 - a_part / n_target
    if np.any(room <= 0):
        k = int(np.argmin(room))
        need = math.ceil(z * z * a_part[k] / (h * h))
        return (
            None,
            None,
            (
                f"with {n_target} target items the target's own sampling error already exceeds "
                f"+-{h:g} for class {classes[k]!r} (even with a perfect confusion matrix): label at least "
                f"{need} target items"
            ),
        )
    n_formula = max(2, math.ceil(float(np.max(b_part / room))))
    if sim is None:
        var = corrected_variance(pi, m, n_formula * w, n_target)
        return n_formula, z * np.sqrt(var), None
    reps, seed = sim

    def ok(n: int) -> bool:
        sd = _simulated_corrected_sd(pi, m, _gold_counts(n, w), n_target, reps, seed)
        return bool(np.all(z * sd <= h))

    found = _smallest(ok, 2, min(_MAX_N, 4 * n_formula))
    if found is None:
        return None, None, f"no gold set up to {4 * n_formula} items reached +-{h:g} in simulation"
    sd = _simulated_corrected_sd(pi, m, _gold_counts(found, w), n_target, reps, seed)
    return found, z * sd, None


def _plan_human(
    pi: NDArray[np.float64], m: NDArray[np.float64], h: float, z: float, n_target: int,
    sim: tuple[int, int] | None,
) -> tuple[int | None, NDArray[np.float64] | None, str | None]:  # fmt: skip
    def width(n: int) -> NDArray[np.float64]:
        if sim is None:
            return z * np.sqrt(ppi_variance(pi, m, n, n_target - n))
        return z * _simulated_ppi_sd(pi, m, n, n_target, *sim)

    found = _smallest(lambda n: bool(np.all(width(n) <= h)), 2, n_target)
    if found is None:
        return (
            None,
            None,
            (
                f"even with all {n_target} target items labelled by humans the interval is wider "
                f"than +-{h:g}: a larger target is needed"
            ),
        )
    return found, width(found), None


def plan_prevalence(
    prevalence: Mapping[Any, float],
    confusion: Any,
    half_width: float,
    *,
    n_target: int,
    level: float = 0.95,
    gold_shares: Mapping[Any, float] | None = None,
    method: Literal["formula", "simulation"] = "formula",
    n_simulations: int = 400,
    rng: Any = None,
) -> PrevalencePlan:
    """Gold items (corrected design) and human labels (PPI++) for a half-width ``half_width``.

    ``prevalence``: class -> expected true share; ``confusion``: the judge's expected error
    rates, true class -> judge label -> probability (or a K x K matrix in the classes' order);
    ``n_target``: judge-labelled target items; ``gold_shares``: the gold set's class mix
    (default ``prevalence``). ``method``: ``"formula"`` (delta method / PPI variance) or
    ``"simulation"`` (seeded by ``rng``, ``n_simulations`` replications per size). See the
    module docstring.
    """
    classes, pi = _shares_of(prevalence, "prevalence")
    m = _confusion_of(confusion, classes)
    h = _positive("half_width", half_width)
    if h >= 1:
        raise EvalkitError(f"half_width must be below 1 (a share's range), got {half_width!r}")
    big_n = _positive("n_target", n_target, integer=True)
    if big_n < 3:
        raise EvalkitError(f"n_target must be at least 3, got {n_target!r}")
    z = sh.z_quantile(level)
    if gold_shares is None:
        w = pi
    else:
        g_classes, w = _shares_of(gold_shares, "gold_shares")
        if set(g_classes) != set(classes):
            raise EvalkitError("gold_shares must list the same classes as prevalence")
        w = np.array([gold_shares[c] for c in classes], dtype=float)
    if np.any(w <= 0):
        raise EvalkitError("gold_shares must give every class a positive share of the gold set")
    if method not in ("formula", "simulation"):
        raise EvalkitError(f"method must be 'formula' or 'simulation', got {method!r}")
    sim = None
    if method == "simulation":
        reps = _positive("n_simulations", n_simulations, integer=True)
        if reps < 50:
            raise EvalkitError(f"n_simulations must be at least 50, got {n_simulations!r}")
        sim = (reps, int(as_generator(rng).integers(2**31)))
    n_gold, gold_hw, gold_reason = _plan_gold(pi, m, w, h, z, big_n, sim, classes)
    n_human, ppi_hw, human_reason = _plan_human(pi, m, h, z, big_n, sim)

    def per_class(v: NDArray[np.float64] | None) -> dict[Any, float] | None:
        return None if v is None else {c: float(x) for c, x in zip(classes, v, strict=True)}

    return PrevalencePlan(
        half_width=h,
        level=float(level),
        n_target=big_n,
        classes=classes,
        prevalence=per_class(pi) or {},
        method=method,
        n_gold=n_gold,
        n_gold_per_class=None
        if n_gold is None
        else {c: int(x) for c, x in zip(classes, _gold_counts(n_gold, w), strict=True)},
        corrected_half_width=per_class(gold_hw),
        gold_reason=gold_reason,
        n_human=n_human,
        ppi_half_width=per_class(ppi_hw),
        human_reason=human_reason,
    )
