"""How consistent a model judge is with itself over repeats, and how it agrees with gold.

Pure statistics over long-format labels (:func:`evalkit.judge.runlog.runlog_labels`: columns
``item_id, judge, repeat, label, outcome``; ``label`` null unless ``outcome`` is ``ok``). Every
figure carries its n; proportions carry a Wilson interval, coefficients an interval of their
own:

* :func:`majority_labels` — per item, the label most of its labelled repeats gave; a tie for
  the top is no majority (``None``), counted in ``ties`` and listed, never broken by a guess
  (the rule of label files, :func:`evalkit.files.labels.majority_label`);
* :func:`flip_rate` — the share of items (with >= 2 labelled repeats) whose repeats disagree,
  Wilson interval (Wilson 1927);
* :func:`repeat_kappa` — Fleiss' kappa with the repeats as raters (items with >= 2 labelled
  repeats), via :func:`evalkit.stats.fleiss_kappa` and its intervals;
* :func:`outcome_rates` — ``ok`` / ``cannot-parse`` / ``error`` counts and shares of all calls,
  Wilson intervals: parse failures and errors are never labels and never dropped silently;
* :func:`kappa_vs_gold` — Cohen's kappa of the judge against gold, either on every labelled
  repeat (one row per (item, repeat)), whose bootstrap resamples *items* so an item's repeats
  move together (``clusters``), or on the per-item majority label (ties left out, counted).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit.display import Readable, fmt_estimate, fmt_number
from evalkit.errors import EvalkitError
from evalkit.files.labels import majority_label
from evalkit.judge.parse import DIMENSION_STATUSES

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.stats import AgreementResult, ConfidenceInterval

__all__ = [
    "ClusteredKappa",
    "MajorityLabels",
    "Proportion",
    "flip_rate",
    "gold_pairs",
    "kappa_vs_gold",
    "majority_labels",
    "outcome_rates",
    "proportion",
    "repeat_kappa",
]


@dataclass(frozen=True, repr=False)
class Proportion(Readable):
    """``k`` of ``n`` with a Wilson interval (``None`` bounds when ``n < 2``)."""

    k: int
    n: int
    low: float | None
    high: float | None
    level: float = 0.95

    @property
    def statistic(self) -> float | None:
        """``k / n`` (None when ``n`` is 0)."""
        return self.k / self.n if self.n else None

    def confidence_interval(self) -> tuple[float | None, float | None]:
        """The Wilson interval at ``level`` (``(None, None)`` when ``n < 2``)."""
        return (self.low, self.high)

    def _headline(self) -> str:
        shown = fmt_estimate(self.statistic, (self.low, self.high), None, percent=True)
        return f"{self.k}/{self.n} = " + shown.replace(" [CI undefined]", " (no CI)")


def proportion(k: int, n: int, level: float = 0.95) -> Proportion:
    """``k`` of ``n`` with its Wilson interval (none for ``n`` < 2)."""
    from evalkit.stats import wilson_interval

    # standard §5: a confidence interval on every aggregate over n > 1; n = 1 has none
    low, high = wilson_interval(k, n, level) if n >= 2 else (None, None)
    return Proportion(k, n, low, high, level)


def _judge_rows(labels: pd.DataFrame, judge: str | None) -> pd.DataFrame:
    """The rows of ``judge`` (required when ``labels`` holds several judges)."""
    missing = {"item_id", "judge", "repeat", "label", "outcome"} - set(labels.columns)
    if missing:
        raise EvalkitError(f"labels: column(s) {', '.join(sorted(missing))} missing")
    judges = list(dict.fromkeys(labels["judge"].tolist()))
    if judge is None:
        if len(judges) > 1:
            raise EvalkitError(f"labels hold {len(judges)} judges ({', '.join(judges)}); name one")
        return labels
    if judge not in judges:
        raise EvalkitError(f"labels hold no judge {judge!r}")
    return labels[labels["judge"] == judge]


def _labelled(rows: pd.DataFrame) -> dict[str, list[str]]:
    """Item -> its labels over repeats (``ok`` outcomes only), in repeat order."""
    ok = rows[rows["outcome"] == "ok"].sort_values(["item_id", "repeat"])
    # tolist(): the same values as iterating the column, without a Python step per Arrow cell
    out: dict[str, list[str]] = {}
    for item, label in zip(ok["item_id"].tolist(), ok["label"].tolist(), strict=True):
        out.setdefault(str(item), []).append(str(label))
    return out


@dataclass(frozen=True, repr=False)
class MajorityLabels(Readable):
    """Per item, the majority label over its labelled repeats (``None``: a tie or no label)."""

    labels: Mapping[str, str | None]
    ties: tuple[str, ...]  # items whose top labels tie
    unlabelled: tuple[str, ...]  # items without a single labelled repeat

    @property
    def n(self) -> int:
        """Items with a majority label."""
        return sum(label is not None for label in self.labels.values())

    def _headline(self) -> str:
        return (
            f"majority labels of {len(self.labels)} items: {self.n} with a majority, "
            f"{len(self.ties)} tie(s), {len(self.unlabelled)} without a label"
        )


def majority_labels(labels: pd.DataFrame, judge: str | None = None) -> MajorityLabels:
    """Majority label per item of ``judge`` (module docstring)."""
    rows = _judge_rows(labels, judge)
    by_item = _labelled(rows)
    out: dict[str, str | None] = {}
    ties: list[str] = []
    for item in sorted({str(i) for i in rows["item_id"].tolist()}):
        labelled = by_item.get(item, [])
        out[item] = majority_label(labelled)
        if out[item] is None and labelled:
            ties.append(item)
    unlabelled = tuple(item for item in out if item not in by_item)
    return MajorityLabels(out, tuple(ties), unlabelled)


def flip_rate(labels: pd.DataFrame, judge: str | None = None, level: float = 0.95) -> Proportion:
    """Items whose labelled repeats disagree, of the items with >= 2 labelled repeats."""
    by_item = _labelled(_judge_rows(labels, judge))
    multi = [values for values in by_item.values() if len(values) >= 2]
    flips = sum(len(set(values)) > 1 for values in multi)
    return proportion(flips, len(multi), level)


def repeat_kappa(labels: pd.DataFrame, judge: str | None = None) -> AgreementResult:
    """Fleiss' kappa with the repeats as raters, over items with >= 2 labelled repeats.

    Categories are the four dimension statuses, so the chance agreement does not depend on
    which of them happened to occur. An item's labels are counted per category (a repeat that
    failed is a missing rating, not a category).
    """
    from evalkit.stats import fleiss_kappa

    by_item = _labelled(_judge_rows(labels, judge))
    counts = [
        [values.count(status) for status in DIMENSION_STATUSES]
        for values in by_item.values()
        if len(values) >= 2
    ]
    if not counts:
        raise EvalkitError("repeat kappa needs items with at least two labelled repeats")
    return fleiss_kappa(counts=counts, categories=DIMENSION_STATUSES)


def outcome_rates(
    labels: pd.DataFrame,
    judge: str | None = None,
    level: float = 0.95,
    *,
    expected: int | None = None,
) -> dict[str, Proportion]:
    """Share of all calls per outcome (``ok``, ``cannot-parse``, ``error``), Wilson intervals.

    ``expected``: the calls the design asked for (items x repeats). Then every share is of
    ``expected`` and ``not-run`` counts the calls the labels do not hold at all.
    """
    rows = _judge_rows(labels, judge)
    n = len(rows) if expected is None else int(expected)
    if n < len(rows):
        raise EvalkitError(f"expected {n} calls, but the labels hold {len(rows)}")
    counts = Counter(rows["outcome"])
    rates = {
        outcome: proportion(counts[outcome], n, level)
        for outcome in ("ok", "cannot-parse", "error")
    }
    if expected is not None:
        rates["not-run"] = proportion(n - len(rows), n, level)
    return rates


@dataclass(frozen=True, repr=False)
class ClusteredKappa(Readable):
    """Cohen's kappa over rows grouped in clusters (items); its bootstrap resamples clusters.

    ``result`` is the :class:`~evalkit.stats.AgreementResult` (``statistic``, ``n`` rows);
    ``clusters`` has one item id per input row; ``dropped_ties`` counts the items a
    majority-label kappa left out for a tie (0 on all repeats).
    """

    result: AgreementResult
    clusters: tuple[str, ...]
    basis: str  # "all-repeats" or "majority"
    dropped_ties: int = 0

    @property
    def statistic(self) -> float | None:
        """Cohen's kappa (None when the data leave it undefined)."""
        return self.result.statistic

    @property
    def n(self) -> int:
        """Rows used (labelled (item, repeat) pairs, or items with a majority)."""
        return self.result.n

    @property
    def n_items(self) -> int:
        """Distinct items (clusters) among the rows used."""
        return len(set(self.clusters))

    def _headline(self) -> str:
        # no analytic interval here: it would ignore the clustering (.confidence_interval() is
        # the items-resampling BCa one)
        ties = f", {self.dropped_ties} tie(s) left out" if self.dropped_ties else ""
        return (
            f"{self.result.name} {fmt_number(self.statistic)}, n = {self.n} rows over "
            f"{self.n_items} items ({self.basis}{ties}); interval: .confidence_interval()"
        )

    def confidence_interval(
        self, level: float = 0.95, n_resamples: int = 9999, rng: Any = None
    ) -> ConfidenceInterval:
        """BCa interval resampling whole items (all of an item's repeats together)."""
        return self.result.confidence_interval(
            level=level, method="bca", n_resamples=n_resamples, rng=rng, clusters=self.clusters
        )


def gold_pairs(
    labels: pd.DataFrame,
    gold: Mapping[str, str],
    judge: str | None = None,
    *,
    majority: bool = False,
) -> tuple[list[tuple[str, str]], list[str], int]:
    """``(gold label, judge label)`` pairs, the item of each pair, and the ties left out.

    ``majority=False``: one pair per labelled (item, repeat). ``majority=True``: one pair per
    item with a majority label (ties left out and counted). Items not in ``gold`` are an
    ``EvalkitError`` (labels of another set).
    """
    rows = _judge_rows(labels, judge)
    unknown = sorted({str(i) for i in rows["item_id"].tolist()} - set(gold))
    if unknown:
        raise EvalkitError(f"labels name item(s) not in the gold set: {unknown[:5]}")
    pairs: list[tuple[str, str]] = []
    clusters: list[str] = []
    ties = 0
    if majority:
        maj = majority_labels(rows)
        ties = len(maj.ties)
        for item, label in maj.labels.items():
            if label is not None:
                pairs.append((gold[item], label))
                clusters.append(item)
    else:
        for item, values in _labelled(rows).items():
            for label in values:
                pairs.append((gold[item], label))
                clusters.append(item)
    return pairs, clusters, ties


def kappa_vs_gold(
    labels: pd.DataFrame,
    gold: Mapping[str, str],
    judge: str | None = None,
    *,
    majority: bool = False,
) -> ClusteredKappa:
    """Cohen's kappa of the judge against ``gold`` (item id -> gold label).

    ``majority=False``: one row per labelled (item, repeat). ``majority=True``: one row per
    item with a majority label (ties left out and counted in ``dropped_ties``). Items not in
    ``gold`` are an ``EvalkitError`` (labels of another set); gold items the judge never
    labelled are simply absent (their n shows it).
    """
    from evalkit.stats import cohen_kappa

    pairs, clusters, ties = gold_pairs(labels, gold, judge, majority=majority)
    if not pairs:
        raise EvalkitError("no labelled item to compare with gold")
    result = cohen_kappa(pairs, categories=DIMENSION_STATUSES)
    basis = "majority" if majority else "all-repeats"
    return ClusteredKappa(result, tuple(clusters), basis, ties)
