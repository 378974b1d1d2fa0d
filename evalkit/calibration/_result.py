"""The calibration result: every agreement figure with its interval, the verdict, the status.

``CalibrationResult._core()`` is the part a calibration certificate embeds (the figures anyone
can reproduce from the labels and the gold set); ``to_dict()`` adds what this run says about
itself: its ``calibration_ref`` and status, whether it may be minted and why, and its
pre-registration.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalkit.display import Readable, fmt_estimate
from evalkit.errors import EvalkitError
from evalkit.files.input import dumps
from evalkit.finite import json_figure

__all__ = ["DEFAULT_WIDTHS", "CalibrationResult", "Estimate"]

DEFAULT_WIDTHS = (0.1, 0.2, 0.3)


@dataclass(frozen=True, repr=False)
class Estimate(Readable):
    """A figure with its interval (``low``/``high`` None when undefined) and how it was made."""

    statistic: float | None
    low: float | None
    high: float | None
    level: float
    method: str
    n: int

    def _headline(self) -> str:
        shown = fmt_estimate(self.statistic, (self.low, self.high), self.n, digits=2)
        return f"{shown} ({100 * self.level:g}% {self.method})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": json_figure(self.statistic),
            "ci": {
                "low": json_figure(self.low),
                "high": json_figure(self.high),
                "level": self.level,
            },
            "method": self.method,
            "n": self.n,
        }


def _frame(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for rec in df.to_dict("records"):
        out.append(
            {
                str(k): (
                    json_figure(v)
                    if isinstance(v, (float, int, np.number)) and not isinstance(v, bool)
                    else v
                )
                for k, v in rec.items()
            }
        )
    return out


@dataclass(frozen=True, repr=False)
class CalibrationResult(Readable):
    """Judge-vs-gold agreement. Every figure carries its interval; see :mod:`evalkit.calibration`.

    ``kappa_ci`` is the interval this run displays (its ``level``/``n_resamples``/``rng``);
    ``decision_kappa_ci`` is the pre-registered interval graduation was judged on (the decision
    rule's level, resamples and seed). ``mintable`` says whether a graduating result may be
    registered (``mint_reason`` says why or why not); ``calibration_ref`` is the sha256 of the
    certificate it would mint (None when it cannot be minted) and ``calibration_status`` the
    status a record may carry once that certificate is registered.
    """

    dimension_id: str
    judge: str
    gold_name: str
    gold_version: int
    gold_sha256: str
    n: int
    n_gold: int
    missing: tuple[str, ...]
    level: float
    n_resamples: int
    rng: int | None
    kappa: Any  # evalkit.stats AgreementResult (Cohen's kappa)
    kappa_ci: Estimate
    ac1: Any  # AgreementResult (Gwet's AC1)
    ac1_ci: Estimate
    pabak: Any  # AgreementResult (PABAK, 3 classes)
    pabak_ci: Estimate
    prevalence_bias: pd.DataFrame = field(repr=False)
    confusion: pd.DataFrame = field(repr=False)
    per_class: pd.DataFrame = field(repr=False)
    per_rule: pd.DataFrame = field(repr=False)
    disagreements: pd.DataFrame = field(repr=False)
    decision_rule: Mapping[str, Any] = field(repr=False)
    decision_kappa_ci: Estimate | None = None
    graduates: bool = False
    graduation_reason: str = ""
    calibration_ref: str | None = None
    calibration_status: str = "uncalibrated"
    mintable: bool = False
    mint_reason: str = ""
    preregistration: str = ""
    #: the judge's labels as given, ``(item_id, label or None)`` sorted by item id
    labels: tuple[tuple[str, str | None], ...] = field(default=(), repr=False)
    #: the gold label of every gold item, ``(item_id, label)`` sorted by item id (not part of
    #: the certificate: the gold set it names holds them)
    gold_labels: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    #: the gold version folder and decision rule, repository-relative when inside ``root``
    gold_path: str = field(default="", repr=False)
    decision_rule_path: str = field(default="", repr=False)
    #: the repository the result was computed against (where --register writes)
    root: str = field(default="", repr=False, compare=False)
    _class_probs: tuple[float, ...] = field(default=(), repr=False)
    #: a model judge's K repeats per item: consistency, outcomes, the majority kappa (else None)
    repeats: Any = field(default=None, repr=False)  # evalkit.calibration._repeats.RepeatFigures
    #: its calls as given, ``(item_id, repeat, label or None, outcome)`` (``labels`` then holds
    #: each item's majority label, None for a tie)
    calls: tuple[tuple[str, int, str | None, str], ...] = field(default=(), repr=False)

    @property
    def n_missing(self) -> int:
        return len(self.missing)

    def _headline(self) -> str:
        verdict = "graduates" if self.graduates else "does not graduate"
        kappa = fmt_estimate(
            self.kappa_ci.statistic, (self.kappa_ci.low, self.kappa_ci.high), self.n, digits=2
        )
        return (
            f"judge {self.judge} on {self.dimension_id} vs gold {self.gold_name} "
            f"v{self.gold_version}: kappa {kappa}; {verdict}"
        )

    def _rows(self) -> list[tuple[str, Any]]:
        return [
            ("Cohen's kappa", repr(self.kappa_ci)),
            ("Gwet's AC1", repr(self.ac1_ci)),
            ("PABAK", repr(self.pabak_ci)),
            (
                "decision interval",
                None if self.decision_kappa_ci is None else repr(self.decision_kappa_ci),
            ),
            ("graduates", self.graduates),
            ("why", self.graduation_reason),
            ("gold items", self.n_gold),
            ("gold items the judge did not label", self.n_missing),
            ("calibration status", self.calibration_status),
            ("may be registered", self.mintable),
            ("why (registration)", self.mint_reason),
        ]

    @property
    def prevalence_index(self) -> dict[str, float | None]:
        """One-vs-rest prevalence index per class (see the package docstring)."""
        return {r["class"]: r["prevalence_index"] for r in self.prevalence_bias.to_dict("records")}

    @property
    def bias_index(self) -> dict[str, float | None]:
        """One-vs-rest bias index per class (see the package docstring)."""
        return {r["class"]: r["bias_index"] for r in self.prevalence_bias.to_dict("records")}

    def paired_labels(self) -> tuple[list[str | None], list[str]]:
        """``(judge_labels, gold_labels)`` over every gold item, aligned, sorted by item id.

        A gold item the judge did not label has judge label None (missing, never guessed).
        What :func:`evalkit.stats.corrected_prevalence` reads from a calibration.
        """
        if not self.gold_labels:
            raise EvalkitError(
                "this calibration result carries no gold labels (made by calibrate(), it does)"
            )
        judged = dict(self.labels)
        return (
            [judged.get(iid) for iid, _ in self.gold_labels],
            [label for _, label in self.gold_labels],
        )

    def items_needed_for_width(self, width: float) -> int | None:
        """Gold items needed for a kappa CI of total ``width`` at this kappa and class mix.

        Wald-interval planning (``evalkit.stats.power.items_for_ci_width``, Fleiss-Cohen-Everitt
        large-sample variance) at the observed kappa and the gold class proportions. None when
        it is undefined (kappa undefined, or 1: a perfect judge has zero large-sample variance).
        """
        from evalkit.stats.power import items_for_ci_width  # deferred: loads scipy

        k = self.kappa.statistic if self.kappa is not None else None
        probs = [p for p in self._class_probs if p > 0]
        if k is None or len(probs) < 2:
            return None
        try:
            return int(items_for_ci_width(float(k), probs, float(width), self.level))
        except EvalkitError:
            return None

    def _graduation(self) -> dict[str, Any]:
        rule_ci = self.decision_rule.get("ci", {})
        extra = {}
        if self.repeats is not None:
            extra["repeat_kappa"] = self.repeats.decision_repeat_kappa.to_dict()
        return extra | {
            "kappa": None if self.decision_kappa_ci is None else self.decision_kappa_ci.to_dict(),
            "level": rule_ci.get("level"),
            "n_resamples": rule_ci.get("n_resamples"),
            "rng": rule_ci.get("rng", self.rng),
        }

    def _core(self) -> dict[str, Any]:
        """The figures a certificate embeds: reproducible from the labels and the gold set."""
        conf = {
            str(g): {str(j): int(self.confusion.loc[g, j]) for j in self.confusion.columns}
            for g in self.confusion.index
        }
        return {
            "dimension_id": self.dimension_id,
            "judge": self.judge,
            "gold": {
                "name": self.gold_name,
                "version": self.gold_version,
                "sha256": self.gold_sha256,
            },
            "n": self.n,
            "n_gold": self.n_gold,
            "n_missing": self.n_missing,
            "missing": list(self.missing),
            "bootstrap": {"n_resamples": self.n_resamples, "rng": self.rng, "level": self.level},
            "kappa": self.kappa_ci.to_dict(),
            "ac1": self.ac1_ci.to_dict(),
            "pabak": self.pabak_ci.to_dict(),
            "prevalence_bias_one_vs_rest": _frame(self.prevalence_bias),
            "confusion": {"rows": "gold", "columns": "judge", "counts": conf},
            "per_class": _frame(self.per_class),
            "per_rule": _frame(self.per_rule),
            "disagreements": _frame(self.disagreements),
            "items_needed_for_width": {
                f"{w:g}": self.items_needed_for_width(w) for w in DEFAULT_WIDTHS
            },
            "decision_rule": dict(self.decision_rule),
            "graduation": self._graduation(),
            "graduates": self.graduates,
            "graduation_reason": self.graduation_reason,
        } | ({} if self.repeats is None else {"repeats": self.repeats.to_dict()})

    def to_dict(self) -> dict[str, Any]:
        """JSON-simple dict: every agreement figure with its CI, the verdict and the status."""
        d = self._core()
        d["calibration_ref"] = self.calibration_ref
        d["calibration_status"] = self.calibration_status
        d["mintable"] = self.mintable
        d["mintable_reason"] = self.mint_reason
        d["preregistration"] = self.preregistration
        return d

    def to_json(self) -> str:
        return dumps(self.to_dict(), indent=2, sort_keys=True)


def canonical_json(obj: Any) -> bytes:
    """Compact, key-sorted, ASCII JSON: one byte string per value (what hashes are taken of)."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("ascii")
