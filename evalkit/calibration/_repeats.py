"""Calibration of a model judge with K repeats per item: agreement with gold and consistency.

Every statistic comes from :mod:`evalkit.judge.consistency` (the judge layer sits above
calibration in the data flow: calibration imports it, never the reverse):

* judge vs gold: Cohen's kappa on every labelled call, its BCa interval resampling *items*
  (an item's repeats move together), and on the per-item majority label (ties left out,
  counted and listed); Gwet's AC1 and PABAK on every labelled call, items resampled too;
* consistency: Fleiss' kappa with the repeats as raters (BCa, items resampled), the flip rate
  (items whose labelled repeats disagree, Wilson interval), and every call's outcome as a share
  of the calls the design asked for (gold items x K): ``ok``, ``cannot-parse``, ``error`` and
  ``not-run``, each with its Wilson interval and n.

Tables: the confusion matrix counts every labelled call (rows gold, columns judge); sensitivity,
specificity and agreement per gold rule use the per-item majority label (one per item, so their
Wilson intervals hold); the disagreements list each item whose labelled repeats are not all
gold's, with its repeats.

Categories: the gold classes pass, fail, cannot-determine, plus ``not-applicable`` when the
judge answers it (never a gold class: always a disagreement). Kappa does not change with an
unused category; AC1 and PABAK then count four categories. ``categories`` says which were used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit.calibration._calibrate import estimate
from evalkit.calibration._result import Estimate
from evalkit.errors import EvalkitError
from evalkit.gold.sets import LABELS, GoldSet

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.calibration.labels import JudgeLabels

__all__ = [
    "OUTCOME_KEYS",
    "RepeatFigures",
    "RepeatStatistics",
    "confusion_of_calls",
    "disagreements_of_repeats",
    "repeat_statistics",
]

OUTCOME_KEYS = ("ok", "cannot-parse", "error", "not-run")
_NA = "not-applicable"


def _share(p: Any, method: str = "Wilson score interval") -> Estimate:
    return Estimate(p.statistic, p.low, p.high, p.level, method, p.n)


@dataclass(frozen=True)
class RepeatFigures:
    """What a calibration with repeats adds: its design, consistency and the majority kappa.

    ``calls`` counts every outcome and ``expected`` (gold items x K); ``outcomes`` are those
    counts as shares of ``expected`` with Wilson intervals; ``failed_calls`` is the share
    without a label (cannot-parse + error + not-run). ``repeat_kappa`` is Fleiss' kappa across
    repeats as this run displays it, ``decision_repeat_kappa`` on the decision rule's interval.
    """

    repeats: int
    n_items: int
    categories: tuple[str, ...]
    calls: Mapping[str, int]
    outcomes: Mapping[str, Estimate]
    failed_calls: Estimate
    kappa_majority: Estimate
    majority_ties: tuple[str, ...]
    majority_unlabelled: tuple[str, ...]
    repeat_kappa: Estimate
    decision_repeat_kappa: Estimate
    flip_rate: Estimate
    flips: int
    kappa_all_result: Any = field(default=None, repr=False, compare=False)  # ClusteredKappa
    kappa_majority_result: Any = field(default=None, repr=False, compare=False)
    repeat_kappa_result: Any = field(default=None, repr=False, compare=False)

    @property
    def n_failed(self) -> int:
        return sum(self.calls[k] for k in ("cannot-parse", "error", "not-run"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "repeats": self.repeats,
            "n_items": self.n_items,
            "categories": list(self.categories),
            "calls": dict(self.calls),
            "outcomes": {k: v.to_dict() for k, v in self.outcomes.items()},
            "failed_calls": self.failed_calls.to_dict(),
            "kappa_majority": self.kappa_majority.to_dict(),
            "majority_ties": list(self.majority_ties),
            "majority_unlabelled": list(self.majority_unlabelled),
            "repeat_kappa": self.repeat_kappa.to_dict(),
            "decision_repeat_kappa": self.decision_repeat_kappa.to_dict(),
            "flip_rate": self.flip_rate.to_dict(),
            "flips": self.flips,
        }


def _long(labels: JudgeLabels, name: str) -> pd.DataFrame:
    frame = labels.calls.copy()
    frame.insert(1, "judge", name)
    return frame


def _undefined(level: float, method: str, n: int) -> Estimate:
    return Estimate(None, None, None, level, method, n)


@dataclass(frozen=True)
class RepeatStatistics:
    """The figures of :func:`repeat_statistics` and what the tables are built from."""

    figures: RepeatFigures
    stats: dict[str, Any]  # kappa, kappa_ci, ac1, ac1_ci, pabak, pabak_ci (all repeats)
    pairs: list[tuple[str, str]]  # (gold, judge) per labelled call
    clusters: list[str]  # the item of each pair
    majority: Mapping[str, str | None]  # item -> majority label (None: tie or none)
    by_item: dict[str, list[str]]  # item -> labelled repeats, in repeat order
    calls_by_item: dict[str, list[str]]  # item -> every call as shown (label or "(outcome)")


def _consistency(
    long: pd.DataFrame, lv: float, nres: int, rng: int | None, rule_ci: Mapping[str, Any]
) -> tuple[Estimate, Estimate, Any]:
    from evalkit.judge.consistency import repeat_kappa

    method = "bca"
    try:
        rk = repeat_kappa(long)
    except EvalkitError:  # no item with two labelled repeats: undefined, never a number
        shown = _undefined(lv, f"{method} bootstrap resampling items (needs K >= 2)", 0)
        return shown, _undefined(float(rule_ci["level"]), shown.method, 0), None
    shown = estimate(rk, lv, method, nres, rng, clusters_text=True)
    level, resamples = float(rule_ci["level"]), int(rule_ci.get("n_resamples", 2000))
    seed = rule_ci.get("rng", rng)
    if (lv, nres, rng) == (level, resamples, seed):
        return shown, shown, rk
    return shown, estimate(rk, level, method, resamples, seed, clusters_text=True), rk


def repeat_statistics(
    labels: JudgeLabels,
    gold_by_id: Mapping[str, str],
    lv: float,
    nres: int,
    rng: int | None,
    rule: Mapping[str, Any],
) -> RepeatStatistics:
    """Agreement on all repeats and on the majority, consistency and outcomes (module doc)."""
    from evalkit.judge.consistency import (
        ClusteredKappa,
        flip_rate,
        gold_pairs,
        kappa_vs_gold,
        majority_labels,
        outcome_rates,
        proportion,
    )
    from evalkit.stats import cohen_kappa, gwet_ac1, pabak

    name = labels.judge or "judge"
    long = _long(labels, name)
    pairs, clusters, _ = gold_pairs(long, gold_by_id)
    if len(set(clusters)) < 2:
        raise EvalkitError(
            f"calibrate: only {len(set(clusters))} gold item(s) labeled by the judge; need at "
            "least 2"
        )
    cats = LABELS + ((_NA,) if any(j == _NA for _, j in pairs) else ())
    kappa = cohen_kappa(pairs, categories=cats)
    ac1 = gwet_ac1(pairs, categories=cats)
    pab = pabak(pairs, categories=cats)
    stats: dict[str, Any] = {"kappa": kappa, "ac1": ac1, "pabak": pab}
    for key in ("kappa", "ac1", "pabak"):
        stats[f"{key}_ci"] = estimate(stats[key], lv, "bca", nres, rng, clusters=clusters)
    maj_k = kappa_vs_gold(long, gold_by_id, majority=True)
    maj = majority_labels(long)
    shown_rk, decision_rk, rk = _consistency(long, lv, nres, rng, rule["ci"])
    flip = flip_rate(long, level=lv)
    expected = len(gold_by_id) * labels.repeats
    rates = outcome_rates(long, level=lv, expected=expected)
    counts = {k: int(rates[k].k) for k in OUTCOME_KEYS}
    failed = proportion(expected - counts["ok"], expected, lv)
    by_item: dict[str, list[str]] = {}
    calls_by_item: dict[str, list[str]] = {}
    for item, label, outcome in zip(long["item_id"], long["label"], long["outcome"], strict=True):
        calls_by_item.setdefault(item, []).append(label if outcome == "ok" else f"({outcome})")
        if outcome == "ok":
            by_item.setdefault(item, []).append(label)
    figures = RepeatFigures(
        repeats=labels.repeats,
        n_items=len(by_item),
        categories=cats,
        calls={**counts, "expected": expected},
        outcomes={k: _share(rates[k]) for k in OUTCOME_KEYS},
        failed_calls=_share(failed),
        kappa_majority=estimate(maj_k.result, lv, "bca", nres, rng, clusters_text=True),
        majority_ties=maj.ties,
        majority_unlabelled=maj.unlabelled,
        repeat_kappa=shown_rk,
        decision_repeat_kappa=decision_rk,
        flip_rate=_share(flip),
        flips=int(flip.k),
        kappa_all_result=ClusteredKappa(kappa, tuple(clusters), "all-repeats"),
        kappa_majority_result=maj_k,
        repeat_kappa_result=rk,
    )
    return RepeatStatistics(
        figures, stats, pairs, clusters, dict(maj.labels), by_item, calls_by_item
    )


def confusion_of_calls(pairs: list[tuple[str, str]], cats: tuple[str, ...]) -> pd.DataFrame:
    """Counts of labelled calls: rows gold (the three classes), columns judge (``cats``)."""
    import pandas as pd

    table = np.zeros((len(LABELS), len(cats)), dtype=int)
    for g, j in pairs:
        table[LABELS.index(g), cats.index(j)] += 1
    conf = pd.DataFrame(table, index=list(LABELS), columns=list(cats))
    conf.index.name, conf.columns.name = "gold", "judge"
    return conf


def disagreements_of_repeats(
    rs: RepeatStatistics, gs: GoldSet, gold_by_id: Mapping[str, str]
) -> pd.DataFrame:
    """Each item whose labelled repeats are not all gold's.

    Columns: gold, majority (None: a tie), its calls in repeat order, how many agree, the gold
    rule and rationale.
    """
    import pandas as pd

    items = gs.items
    rule_by_id = dict(zip(items["item_id"], items["rule"], strict=True))
    rationale_by_id = dict(zip(items["item_id"], items["rationale"], strict=True))
    rows = []
    for item in sorted(rs.by_item):
        labels = rs.by_item[item]
        agree = sum(lab == gold_by_id[item] for lab in labels)
        if agree == len(labels):
            continue
        rows.append(
            {"item_id": item, "gold": gold_by_id[item], "judge": rs.majority.get(item),
             "repeats": ", ".join(rs.calls_by_item[item]), "agreeing": f"{agree}/{len(labels)}",
             "gold_rule": int(rule_by_id[item]), "rationale": rationale_by_id[item]}
        )  # fmt: skip
    columns = ["item_id", "gold", "judge", "repeats", "agreeing", "gold_rule", "rationale"]
    return pd.DataFrame(rows, columns=columns)
