"""Judge panels: several judges' labels over the same items, with or without gold.

``judge_panel(labels, gold=None)``: pairwise agreement and kappa, with gold the correlation of
the judges' errors and the effective number of independent judges (Kish's design effect), the
majority vote against gold (ties counted, never broken), and a Dawid-Skene estimate without
gold. What each figure means and when it is undefined: docs/STATISTICS.md.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.display import Readable, fmt_estimate, fmt_number
from evalkit.errors import EvalkitError
from evalkit.finite import json_figure
from evalkit.stats import _shares as sh
from evalkit.stats._inputs import check_level, check_resamples
from evalkit.stats._labels import as_labels, as_panel, check_classes
from evalkit.stats._result import AgreementResult, ConfidenceInterval
from evalkit.stats.latent_class import DawidSkeneResult, dawid_skene, panel_codes
from evalkit.stats.proportion import wilson_interval

__all__ = ["ErrorCorrelation", "JudgePanel", "MajorityVote", "PairAgreement", "judge_panel"]

_NO_INTERVAL = ConfidenceInterval(None, None)


@dataclass(frozen=True, repr=False)
class PairAgreement(Readable):
    """Two judges on the items both labelled: raw agreement and Cohen's kappa, with intervals."""

    judge_a: Any
    judge_b: Any
    n: int
    agreement: float | None
    agreement_interval: ConfidenceInterval
    kappa: AgreementResult | None
    kappa_interval: ConfidenceInterval

    def figures(self) -> str:
        """``agreement 85.0% [..], kappa 0.70 [..], n = 40``: the pair's figures, one line."""
        kappa = None if self.kappa is None else self.kappa.statistic
        return (
            f"agreement {fmt_estimate(self.agreement, self.agreement_interval, None, percent=True)}"
            f", kappa {fmt_estimate(kappa, self.kappa_interval, self.n, digits=2)}"
        )

    def _headline(self) -> str:
        return f"{self.judge_a} vs {self.judge_b}: {self.figures()}"


@dataclass(frozen=True, repr=False)
class ErrorCorrelation(Readable):
    """Correlation of two judges' error indicators against gold (None when undefined)."""

    judge_a: Any
    judge_b: Any
    n: int
    statistic: float | None
    confidence_interval: ConfidenceInterval

    def _headline(self) -> str:
        shown = fmt_estimate(self.statistic, self.confidence_interval, self.n, digits=2)
        return f"error correlation {self.judge_a} vs {self.judge_b} {shown}"


@dataclass(frozen=True, repr=False)
class MajorityVote(Readable):
    """The panel's majority label against gold: Cohen's kappa, its interval, and the ties."""

    kappa: AgreementResult | None
    confidence_interval: ConfidenceInterval
    n: int
    n_ties: int
    tie_items: tuple[int, ...]
    n_without_gold: int

    def _headline(self) -> str:
        kappa = None if self.kappa is None else self.kappa.statistic
        shown = fmt_estimate(kappa, self.confidence_interval, self.n, digits=2)
        return f"majority vote vs gold: kappa {shown}, {self.n_ties} tie(s)"


@dataclass(frozen=True, repr=False)
class JudgePanel(Readable):
    """Everything ``judge_panel`` reports; see the module docstring."""

    judges: tuple[Any, ...]
    classes: tuple[Any, ...]
    n_items: int
    level: float
    pairwise: tuple[PairAgreement, ...]
    dawid_skene: DawidSkeneResult
    error_rates: Mapping[Any, float | None] | None = None
    error_correlations: tuple[ErrorCorrelation, ...] | None = None
    mean_error_correlation: float | None = None
    mean_error_correlation_interval: ConfidenceInterval = _NO_INTERVAL
    effective_judges: float | None = None
    effective_judges_interval: ConfidenceInterval = _NO_INTERVAL
    effective_judges_reason: str | None = None
    majority: MajorityVote | None = None

    def _headline(self) -> str:
        effective = fmt_estimate(
            self.effective_judges, self.effective_judges_interval, None, digits=1
        )
        return (
            f"panel of {len(self.judges)} judges on {self.n_items} items: "
            f"effective judges {effective}"
        )

    def _rows(self) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = [("judges", ", ".join(str(j) for j in self.judges))]
        rows += [(f"{p.judge_a} vs {p.judge_b}", p.figures()) for p in self.pairwise]
        rows.append(
            (
                "mean error correlation",
                fmt_estimate(
                    self.mean_error_correlation,
                    self.mean_error_correlation_interval,
                    None,
                    digits=2,
                ),
            )
        )
        rows.append(("why no effective number", self.effective_judges_reason))
        if self.majority is not None:
            rows.append(("majority vote", repr(self.majority)))
        rows.append(("latent classes", repr(self.dawid_skene)))
        return [(k, v) for k, v in rows if v is not None] + [("level", fmt_number(self.level))]

    def to_dict(self) -> dict[str, Any]:
        """JSON-simple summary."""

        def ci(c: ConfidenceInterval) -> dict[str, Any]:
            return {"low": json_figure(c.low), "high": json_figure(c.high)}

        out: dict[str, Any] = {
            "judges": [str(j) for j in self.judges],
            "classes": [str(c) for c in self.classes],
            "n_items": self.n_items,
            "level": self.level,
            "pairwise": [
                {
                    "judges": [str(p.judge_a), str(p.judge_b)],
                    "n": p.n,
                    "agreement": json_figure(p.agreement),
                    "agreement_interval": ci(p.agreement_interval),
                    "kappa": None if p.kappa is None else json_figure(p.kappa.statistic),
                    "kappa_interval": ci(p.kappa_interval),
                }
                for p in self.pairwise
            ],
            "dawid_skene": self.dawid_skene.to_dict(),
            "error_rates": sh.json_shares(self.error_rates),
            "mean_error_correlation": json_figure(self.mean_error_correlation),
            "mean_error_correlation_interval": ci(self.mean_error_correlation_interval),
            "effective_judges": json_figure(self.effective_judges),
            "effective_judges_interval": ci(self.effective_judges_interval),
            "effective_judges_reason": self.effective_judges_reason,
        }
        if self.error_correlations is not None:
            out["error_correlations"] = [
                {
                    "judges": [str(e.judge_a), str(e.judge_b)],
                    "n": e.n,
                    "statistic": json_figure(e.statistic),
                    "interval": ci(e.confidence_interval),
                }
                for e in self.error_correlations
            ]
        if self.majority is not None:
            mv = self.majority
            out["majority"] = {
                "kappa": None if mv.kappa is None else json_figure(mv.kappa.statistic),
                "interval": ci(mv.confidence_interval),
                "n": mv.n,
                "n_ties": mv.n_ties,
                "tie_items": list(mv.tie_items),
                "n_without_gold": mv.n_without_gold,
            }
        return out


# --------------------------------------------------------------------------- pieces


def _kappa(pairs: NDArray[np.intp], classes: tuple[Any, ...], level: float) -> tuple[Any, Any]:
    """Cohen's kappa of code pairs (n x 2) over ``classes`` and its analytic interval."""
    from evalkit.stats.agreement import cohen_kappa

    if pairs.shape[0] == 0:
        return None, ConfidenceInterval(None, None)
    rows = [[classes[a], classes[b]] for a, b in pairs]
    res = cohen_kappa(rows, categories=classes)
    return res, res.confidence_interval(level)


def _pairwise(
    judges: tuple[Any, ...], codes: NDArray[np.intp], classes: tuple[Any, ...], level: float
) -> tuple[PairAgreement, ...]:
    out = []
    for a, b in itertools.combinations(range(len(judges)), 2):
        both = (codes[:, a] >= 0) & (codes[:, b] >= 0)
        n = int(both.sum())
        same = int(np.sum(codes[both, a] == codes[both, b]))
        kappa, kci = _kappa(codes[both][:, [a, b]], classes, level)
        out.append(
            PairAgreement(
                judge_a=judges[a],
                judge_b=judges[b],
                n=n,
                agreement=same / n if n else None,
                agreement_interval=wilson_interval(same, n, level),
                kappa=kappa,
                kappa_interval=kci,
            )
        )
    return tuple(out)


def _pair_suff(err: NDArray[np.float64], seen: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Per item, for every judge pair: [w, w e_a, w e_b, w e_a e_b], w = both seen with gold."""
    cols = []
    for a, b in itertools.combinations(range(err.shape[1]), 2):
        w = (seen[:, a] & seen[:, b]).astype(float)
        cols += [w, w * err[:, a], w * err[:, b], w * err[:, a] * err[:, b]]
    return np.stack(cols, axis=1)


def _correlations(sums: NDArray[np.float64]) -> NDArray[np.float64]:
    """(..., 4 * pairs) sums -> (..., pairs) phi correlations (NaN where undefined)."""
    s = sums.reshape(*sums.shape[:-1], -1, 4)
    w, sa, sb, sab = s[..., 0], s[..., 1], s[..., 2], s[..., 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        pa, pb, pab = sa / w, sb / w, sab / w
        den = np.sqrt(pa * (1 - pa) * pb * (1 - pb))
        r = (pab - pa * pb) / den
    return np.where(den > 0, r, np.nan)


def _effective(sums: NDArray[np.float64], m: int) -> NDArray[np.float64]:
    r = _correlations(sums).mean(axis=-1)  # NaN when any pair is undefined
    with np.errstate(divide="ignore", invalid="ignore"):
        out = m / (1 + (m - 1) * r)
    return np.where(1 + (m - 1) * r > 0, out, np.nan)


def _boot(
    suff: NDArray[np.float64], fn: Any, level: float, n_resamples: int, rng: Any, name: str
) -> ConfidenceInterval:
    from evalkit.stats.bootstrap import bootstrap_sums

    if suff.shape[0] < 2:
        return ConfidenceInterval(None, None)
    res = bootstrap_sums(
        suff, fn, n_resamples=n_resamples, rng=rng, level=level, method="bca", name=name
    )
    return res.confidence_interval  # type: ignore[no-any-return]


def _gold_part(
    judges: tuple[Any, ...],
    codes: NDArray[np.intp],
    gold: NDArray[np.intp],
    classes: tuple[Any, ...],
    level: float,
    n_resamples: int,
    gen: np.random.Generator,
) -> dict[str, Any]:
    has_gold = gold >= 0
    seen = (codes >= 0) & has_gold[:, None]
    err = (codes != gold[:, None]).astype(float) * seen
    rates = {
        j: (float(err[seen[:, g], g].mean()) if seen[:, g].any() else None)
        for g, j in enumerate(judges)
    }
    suff = _pair_suff(err, seen)
    point = _correlations(suff.sum(axis=0))
    pairs = list(itertools.combinations(range(len(judges)), 2))
    corrs = []
    for p, (a, b) in enumerate(pairs):
        sub = suff[:, 4 * p : 4 * p + 4]
        sub = sub[sub[:, 0] > 0]
        value = None if np.isnan(point[p]) else float(point[p])
        interval = (
            ConfidenceInterval(None, None)
            if value is None
            else _boot(sub, lambda s: _correlations(s)[..., 0], level, n_resamples, gen, "phi")
        )
        corrs.append(ErrorCorrelation(judges[a], judges[b], int(sub.shape[0]), value, interval))
    m = len(judges)
    mean_r = float(np.mean(point)) if not np.any(np.isnan(point)) else None
    out: dict[str, Any] = {"error_rates": rates, "error_correlations": tuple(corrs)}
    if mean_r is None:
        reason = (
            "a pair's error correlation is undefined: a judge that never errs (or always "
            "errs) on the items it shares with another has no error variance"
        )
        sh.warn(f"effective number of judges is undefined: {reason}")
        out["effective_judges_reason"] = reason
    else:
        rows = suff[np.any(suff[:, 0::4] > 0, axis=1)]
        out["mean_error_correlation"] = mean_r
        out["mean_error_correlation_interval"] = _boot(
            rows, lambda s: _correlations(s).mean(axis=-1), level, n_resamples, gen, "mean r"
        )
        eff = float(_effective(suff.sum(axis=0), m))
        out["effective_judges"] = None if np.isnan(eff) else eff
        out["effective_judges_interval"] = _boot(
            rows, lambda s: _effective(s, m), level, n_resamples, gen, "effective judges"
        )
    out["majority"] = _majority(codes, gold, classes, level)
    return out


def _majority(
    codes: NDArray[np.intp], gold: NDArray[np.intp], classes: tuple[Any, ...], level: float
) -> MajorityVote:
    k = len(classes)
    votes = np.zeros((codes.shape[0], k))
    for g in range(codes.shape[1]):
        seen = codes[:, g] >= 0
        np.add.at(votes, (np.nonzero(seen)[0], codes[seen, g]), 1.0)
    labelled = votes.sum(axis=1) > 0
    top = votes.max(axis=1, keepdims=True)
    tie = labelled & (np.sum(votes == top, axis=1) > 1)
    use = labelled & ~tie & (gold >= 0)
    pairs = np.stack([np.argmax(votes[use], axis=1), gold[use]], axis=1).astype(np.intp)
    kappa, kci = _kappa(pairs, classes, level)
    return MajorityVote(
        kappa=kappa,
        confidence_interval=kci,
        n=int(use.sum()),
        n_ties=int(tie.sum()),
        tie_items=tuple(int(i) for i in np.nonzero(tie)[0]),
        n_without_gold=int(np.sum(labelled & ~tie & (gold < 0))),
    )


def judge_panel(
    labels: Any,
    gold: Any = None,
    *,
    level: float = 0.95,
    n_resamples: int = 2000,
    rng: Any = None,
    classes: Any = None,
    max_iter: int = 1000,
    tol: float = 1e-8,
) -> JudgePanel:
    """Agreement, error correlation, effective number, majority vote and Dawid-Skene.

    ``labels``: a mapping judge -> label sequence over the same items (None = not labelled),
    a DataFrame with one column per judge, or items x judges rows. ``gold``: the gold label
    of each item (None = no gold), for the error and majority-vote figures. Bootstrap
    intervals use ``n_resamples`` resamples of the items drawn from ``rng``; ``max_iter`` and
    ``tol`` are Dawid-Skene's. See the module docstring for every figure.
    """
    from evalkit.stats.bootstrap import as_generator

    check_level(level)
    n_res = check_resamples(n_resamples, minimum=100)
    gen = as_generator(rng)
    judges, columns = as_panel(labels)
    declared = check_classes(classes)
    gold_labels = None if gold is None else as_labels(gold, "gold")
    if gold_labels is not None and len(gold_labels) != len(columns[0]):
        raise EvalkitError(
            f"gold must have one label per item: {len(gold_labels)} labels for "
            f"{len(columns[0])} items"
        )
    pool = columns if gold_labels is None else [*columns, gold_labels]
    cls, all_codes = panel_codes(pool, declared, "labels")
    codes = all_codes[:, : len(judges)]
    pairwise = _pairwise(judges, codes, cls, level)
    ds = dawid_skene(
        {j: columns[g] for g, j in enumerate(judges)}, classes=cls, max_iter=max_iter, tol=tol
    )
    extra: dict[str, Any] = {}
    if gold_labels is not None:
        extra = _gold_part(judges, codes, all_codes[:, -1], cls, level, n_res, gen)
    return JudgePanel(
        judges=judges,
        classes=cls,
        n_items=len(columns[0]),
        level=float(level),
        pairwise=pairwise,
        dawid_skene=ds,
        **extra,
    )
