"""Prevalence study: what share of a target's items really is each class, judge errors corrected.

Inputs: the judge's labels on a **target** (no gold there), the same judge's labels on the
**gold set** with the gold labels (its calibration), and optionally **human labels** on a
random subsample of the target. Three estimates of each class share, side by side:

* **naive**: the judge's own label shares among the target items it labelled (Wilson
  intervals), what an uncorrected report would say;
* **corrected**: :func:`evalkit.stats.corrected_prevalence`, the judge's label shares corrected
  by its error rates measured on the gold set (two-sample bootstrap interval);
* **PPI++**: :func:`evalkit.stats.ppi_prevalence`, the human labels of the subsample with the
  judge's labels of every target item as a power-tuned control variate, beside the human-only
  (classical) share.

**An item the judge left without a label** (an empty label; with repeated calls, a tie for the
most calls or no readable call: :data:`evalkit.files.labels.MAJORITY_RULE`) is the judge's
outcome :data:`NO_LABEL`, on the target and on the gold set alike. It is never guessed as a
class and never dropped: its rate per true class is measured on the gold set like any other
label, so the correction accounts for a judge that abstains more on one class than another
(dropping those items would bias the shares towards the classes it decides easily). A gold
item absent from the judge's labels is missing: left out and counted.

**Default data** (every path ""): synthetic, and said so on the page. The simulated model
judge (:class:`evalkit.simulate.SimulatedModelJudge` with its defaults) labels every item of
the gold set ``gold/instruction-adherence/v2`` and of a simulated target with known class
shares (:func:`evalkit.simulate.simulate_target`) ``repeats`` times; each item's label is its
majority label. A random subsample of ``n_human`` target items gets a simulated human label
equal to its true class. ``seed`` seeds everything through ``numpy.random.SeedSequence(seed)``
(children: gold judge, target draw, target judge, human subsample) and the bootstrap (``seed``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.display import Readable
from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.files.labels import ItemLabels, long_labels, read_item_labels
from evalkit.finite import finite_or_none

__all__ = [
    "DEFAULT_GOLD_VERSION",
    "EMPTY_MEANS",
    "NO_LABEL",
    "PrevalenceData",
    "PrevalenceEstimates",
    "default_data",
    "estimate",
    "figures",
    "gold_pair",
    "human_pairs",
    "load_data",
    "read_calibration",
]

NO_LABEL = "(no label)"
DEFAULT_GOLD_VERSION = "v2"
#: What an empty path parameter means in the study (its parameters table says so).
EMPTY_MEANS = {
    "target_labels_path": "(default: the synthetic target, see docs/DATA_CARD.md)",
    "gold_labels_path": "(default: the simulated model judge on the gold set)",
    "gold_path": "(default: the committed gold set gold/instruction-adherence/v2)",
    "human_labels_path": "(default: simulated human labels with the default data; else none)",
}
ESTIMATORS = ("naive", "corrected", "PPI++", "human only")


@dataclass(frozen=True)
class PrevalenceData:
    """What the estimates are computed from (see the module docstring).

    ``gold_ids`` / ``gold_labels``: every gold item and its gold label, in the gold set's
    order. ``truth``: the known class shares the synthetic target was drawn from, and
    ``realised``: the shares among its simulated items (both None for real data).
    """

    target: ItemLabels
    gold_judge: ItemLabels
    gold_tag: str
    gold_sha256: str
    gold_ids: tuple[str, ...]
    gold_labels: tuple[str, ...]
    human: ItemLabels | None = None
    synthetic: bool = False
    truth: Mapping[str, float] | None = None
    realised: Mapping[str, float] | None = None


@dataclass(frozen=True, repr=False)
class PrevalenceEstimates(Readable):
    """The three estimates of every class share, with their intervals and n.

    ``naive``: class -> ``(share, low, high)`` over the ``n_naive`` target items the judge
    labelled; ``corrected`` / ``ppi``: the stats results (``ppi`` None without human labels);
    ``notes``: every warning the estimators gave (undefined figures, left-out resamples).
    """

    classes: tuple[str, ...]
    level: float
    naive: Mapping[str, tuple[float | None, float | None, float | None]]
    n_naive: int
    n_target: int
    corrected: Any  # evalkit.stats.CorrectedPrevalence
    ppi: Any = None  # evalkit.stats.PPIPrevalence | None
    other_labels: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def _headline(self) -> str:
        ppi = "; PPI++ beside it" if self.ppi is not None else ""
        return f"{self.corrected!r}{ppi}"

    def _rows(self) -> list[tuple[str, Any]]:
        shown: list[tuple[str, Any]] = [("corrected", repr(self.corrected))]
        if self.ppi is not None:
            shown.append(("PPI++", repr(self.ppi)))
        return [*shown, ("target items", self.n_target), *(("note", n) for n in self.notes)]

    def rows(self) -> list[dict[str, Any]]:
        """One row per (class, estimator): share, low, high, n, and why it is undefined."""
        out = []
        for c in self.classes:
            for name in ESTIMATORS:
                row = self._row(c, name)
                if row is not None:
                    out.append({"class": c, "estimator": name, **row})
        return out

    def _row(self, c: str, name: str) -> dict[str, Any] | None:
        if name == "naive":
            share, low, high = self.naive.get(c, (None, None, None))
            return _row(share, low, high, self.n_naive, None)
        if name == "corrected":
            res = self.corrected
            ci = _intervals(res) if res.defined else {}
            share = res.statistic.get(c) if res.defined else None
            low, high = ci.get(c, (None, None))
            return _row(share, low, high, res.n, res.reason)
        if self.ppi is None:
            return None
        res = self.ppi
        if name == "PPI++":
            share = res.statistic.get(c) if res.defined else None
            low, high = _intervals(res).get(c, (None, None)) if res.defined else (None, None)
        else:
            share = res.classical.get(c) if res.defined else None
            cl = _quiet(res.classical_interval) if res.defined else {}
            low, high = cl.get(c, (None, None))
        return _row(share, low, high, res.n, res.reason)


def _row(
    share: float | None, low: float | None, high: float | None, n: int, reason: str | None
) -> dict[str, Any]:
    return {"share": share, "low": low, "high": high, "n": n, "reason": reason}


def _quiet(fn: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # the notes say it already
        return fn()


def _intervals(res: Any) -> dict[Any, tuple[float | None, float | None]]:
    return {c: (ci.low, ci.high) for c, ci in _quiet(res.confidence_interval).items()}


# --------------------------------------------------------------------------- the inputs


def _outcome(label: str | None) -> str:
    return NO_LABEL if label is None else label


def _refuse_reserved(labels: ItemLabels | None) -> None:
    if labels is not None and NO_LABEL in labels.labels:
        raise EvalkitError(
            f"{labels.source}: the label {NO_LABEL!r} is reserved for items without a label"
        )


def gold_pair(
    gold_judge: ItemLabels, gold_ids: Sequence[str], gold_labels: Sequence[str], gold_tag: str
) -> tuple[list[str | None], list[str]]:
    """``(judge outcome, gold label)`` of every gold item: :data:`NO_LABEL` where the judge's
    file gives the item without a label, None (missing) where it does not give the item."""
    known = set(gold_ids)
    unknown = [i for i in gold_judge.item_ids if i not in known]
    if unknown:
        raise EvalkitError(
            f"{gold_judge.source}: item {unknown[0]!r} is not in the gold set {gold_tag} "
            f"({len(unknown)} such item(s)); give the judge's labels on the gold items"
        )
    by_item = gold_judge.by_item()
    judged = [_outcome(by_item[i]) if i in by_item else None for i in gold_ids]
    return judged, list(gold_labels)


def human_pairs(target: ItemLabels, human: ItemLabels) -> tuple[list[str], list[str | None]]:
    """``(judge outcome, human label)`` of every human-labelled item (items of the target)."""
    by_item = target.by_item()
    unknown = [i for i in human.item_ids if i not in by_item]
    if unknown:
        raise EvalkitError(
            f"{human.source}: item {unknown[0]!r} is not an item of the target "
            f"({len(unknown)} such item(s)); human labels belong to a subsample of the target"
        )
    return [_outcome(by_item[i]) for i in human.item_ids], list(human.labels)


def default_gold_path() -> Path:
    """``gold/instruction-adherence/v2`` of the committed gold set."""
    from evalkit.analyses.calibration import default_gold_path as gold_set

    return gold_set() / DEFAULT_GOLD_VERSION


def _load_gold(gold_path: str | Path) -> Any:
    from evalkit.gold import sets as gold

    path = Path(gold_path) if gold_path else default_gold_path()
    if not path.exists():
        raise EvalkitError(f"gold set {str(path)!r} not found (give gold_path)")
    return gold.load(path)


def _check_shares(true_shares: Any) -> dict[str, float]:
    from evalkit.simulate.model_judge import STATUSES

    ok = isinstance(true_shares, Mapping) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in true_shares.values()
    )
    if not ok or set(true_shares) - set(STATUSES):
        raise EvalkitError(
            f"true_shares must map statuses {STATUSES} to numbers, got {true_shares!r}"
        )
    return {s: float(true_shares.get(s, 0.0)) for s in STATUSES}


def _check_count(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise EvalkitError(f"{name} must be an int >= {low}, got {value!r}")
    return value


def default_data(
    gold: Any, *, n_target: int, true_shares: Any, repeats: int, n_human: int, seed: int
) -> PrevalenceData:
    """The synthetic default data over the gold set ``gold`` (see the module docstring)."""
    import numpy as np

    from evalkit.simulate import SimulatedModelJudge, simulate_target

    shares = _check_shares(true_shares)
    _check_count("n_target", n_target, 2)
    if _check_count("n_human", n_human, 0) > n_target:
        raise EvalkitError(f"n_human ({n_human}) cannot exceed n_target ({n_target})")
    gens = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4)]
    judge = SimulatedModelJudge()
    ids, labels = list(gold.items["item_id"]), list(gold.items["label"])
    gold_calls = judge.label_columns(labels, ids, repeats=repeats, rng=gens[0])
    target = simulate_target(n_target, shares, rng=gens[1])
    truth = list(target["truth"])
    target_ids = list(target["item_id"])
    target_calls = judge.label_columns(truth, target_ids, repeats=repeats, rng=gens[2])
    human = None
    if n_human:
        pick = np.sort(gens[3].choice(n_target, size=n_human, replace=False))
        human = ItemLabels(
            source="simulated human labels (the true class)",
            layout="item_id,label",
            item_ids=tuple(target_ids[i] for i in pick),
            labels=tuple(truth[i] for i in pick),
            calls=n_human,
        )
    return PrevalenceData(
        target=long_labels(target_calls, "simulated judge labels on the target"),
        gold_judge=long_labels(gold_calls, "simulated judge labels on the gold set"),
        gold_tag=gold.tag,
        gold_sha256=gold.sha256,
        gold_ids=tuple(ids),
        gold_labels=tuple(labels),
        human=human,
        synthetic=True,
        truth={s: v for s, v in shares.items() if v > 0},
        realised={s: truth.count(s) / n_target for s in shares if shares[s] > 0},
    )


def load_data(
    target_labels_path: str = "",
    gold_labels_path: str = "",
    gold_path: str = "",
    human_labels_path: str = "",
    *,
    n_target: int = 2000,
    true_shares: Any = None,
    repeats: int = 5,
    n_human: int = 200,
    seed: int = 0,
    judge: str | None = None,
) -> PrevalenceData:
    """The study's data: the files given, or (both label paths "") the default data."""
    if bool(target_labels_path) != bool(gold_labels_path):
        raise EvalkitError(
            "give both target_labels_path and gold_labels_path (the same judge's labels on the "
            "target and on the gold set), or neither for the synthetic default data"
        )
    gold = _load_gold(gold_path)
    human = read_item_labels(human_labels_path, "human labels file") if human_labels_path else None
    if not target_labels_path:
        data = default_data(
            gold,
            n_target=n_target,
            true_shares=true_shares if true_shares is not None else {},
            repeats=repeats,
            n_human=0 if human is not None else n_human,
            seed=seed,
        )
        return data if human is None else _with_human(data, human)
    return PrevalenceData(
        target=read_item_labels(target_labels_path, "target labels file", judge=judge),
        gold_judge=read_item_labels(gold_labels_path, "gold labels file", judge=judge),
        gold_tag=gold.tag,
        gold_sha256=gold.sha256,
        gold_ids=tuple(gold.items["item_id"]),
        gold_labels=tuple(gold.items["label"]),
        human=human,
    )


def _with_human(data: PrevalenceData, human: ItemLabels) -> PrevalenceData:
    import dataclasses

    return dataclasses.replace(data, human=human)


def read_calibration(
    certificate: str | Path, *, root: str | Path | None = None
) -> tuple[ItemLabels, Any]:
    """The judge's labels and the gold set of a calibration certificate, re-checked first.

    The certificate's bytes are read once and re-checked offline against the repository
    ``root`` (:func:`evalkit.calibration.verify_certificate`: a certificate that does not
    verify is refused with the reason); its embedded labels and the gold set it names are
    then used. A gold item the certificate gives no label is missing.
    """
    from evalkit import gold as gold_sets
    from evalkit.calibration import verify_certificate
    from evalkit.calibration.certificate import read_certificate_bytes
    from evalkit.files.input import escape_surrogates, parse_json
    from evalkit.provenance.repository import repo_root

    raw = read_certificate_bytes(certificate)
    verify_certificate(raw, root=root)
    obj = parse_json(raw)
    gold = gold_sets.load(repo_root(root) / obj["gold"]["path"])
    items = [(i["item_id"], i["label"]) for i in obj["labels"]["items"] if i["label"] is not None]
    labels = ItemLabels(
        source=escape_surrogates(str(certificate)),
        layout="calibration certificate",
        item_ids=tuple(i for i, _ in items),
        labels=tuple(lab for _, lab in items),
        judge=obj["result"]["judge"],
        calls=len(items),
    )
    return labels, gold


# --------------------------------------------------------------------------- the estimates


def _naive(
    target: ItemLabels, classes: Sequence[str], level: float
) -> tuple[dict[str, tuple[float | None, float | None, float | None]], int, dict[str, int]]:
    from evalkit.stats import wilson_interval

    given = [lab for lab in target.labels if lab is not None]
    n = len(given)
    out: dict[str, tuple[float | None, float | None, float | None]] = {}
    for c in classes:
        k = given.count(c)
        low, high = wilson_interval(k, n, level) if n >= 2 else (None, None)
        out[c] = (k / n if n else None, low, high)
    others = {lab: given.count(lab) for lab in dict.fromkeys(given) if lab not in classes}
    return out, n, others


def estimate(
    data: PrevalenceData, *, level: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> PrevalenceEstimates:
    """Naive, corrected and (with human labels) PPI++ shares of every class; see the module."""
    from evalkit.stats import corrected_prevalence, ppi_prevalence
    from evalkit.stats.checks import order_classes

    for labels in (data.target, data.gold_judge, data.human):
        _refuse_reserved(labels)
    target = [_outcome(lab) for lab in data.target.labels]
    pair = gold_pair(data.gold_judge, data.gold_ids, data.gold_labels, data.gold_tag)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateDataWarning)
        corrected = corrected_prevalence(
            target, pair, level=level, n_resamples=n_resamples, rng=seed
        )
        # the classes shown: the gold classes and any class a human gave
        classes = order_classes([*corrected.classes, *(data.human.labels if data.human else ())])
        ppi = None
        if data.human is not None:
            judged, humans = human_pairs(data.target, data.human)
            # PPI++ reads the judge's outcome on every item, labels beyond the classes included
            every = order_classes([*classes, *target])
            ppi = ppi_prevalence(target, judged, humans, level=level, classes=every)
    naive, n_naive, others = _naive(data.target, classes, level)
    notes = tuple(dict.fromkeys(str(w.message) for w in caught))
    return PrevalenceEstimates(
        classes=tuple(classes),
        level=float(level),
        naive=naive,
        n_naive=n_naive,
        n_target=data.target.n,
        corrected=corrected,
        ppi=ppi,
        other_labels=others,
        notes=notes,
    )


# --------------------------------------------------------------------------- results.json


def _covers(row: Mapping[str, Any], truth: Mapping[str, float] | None) -> bool | None:
    if truth is None or row["class"] not in truth or row["low"] is None or row["high"] is None:
        return None
    return bool(row["low"] <= truth[row["class"]] <= row["high"])


def figures(est: PrevalenceEstimates, data: PrevalenceData) -> dict[str, Any]:
    """Machine-readable figures (results.json, the CLI's JSON): JSON-simple, no machine path."""

    def described(labels: ItemLabels | None) -> dict[str, Any] | None:
        if labels is None:
            return None
        summary = labels.summary()
        summary.pop("file")
        return summary

    rows = [
        {**{k: finite_or_none(v) for k, v in r.items()}, "covers_truth": _covers(r, data.truth)}
        for r in est.rows()
    ]
    return {
        "synthetic": data.synthetic,
        "truth": None if data.truth is None else dict(data.truth),
        "realised": None if data.realised is None else dict(data.realised),
        "classes": list(est.classes),
        "level": est.level,
        "no_label": NO_LABEL,
        "estimates": rows,
        "naive": {
            "n": est.n_naive,
            "n_target": est.n_target,
            "other_labels": dict(est.other_labels),
        },
        "corrected": est.corrected.to_dict(),
        "ppi": None if est.ppi is None else est.ppi.to_dict(),
        "target": described(data.target),
        "gold": {
            "tag": data.gold_tag,
            "sha256": data.gold_sha256,
            "n_items": len(data.gold_ids),
            "judge": described(data.gold_judge),
        },
        "human": described(data.human),
        "notes": list(est.notes),
    }
