"""``calibrate``: a judge's labels against a frozen gold set (see :mod:`evalkit.calibration`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.calibration._graduation import graduation
from evalkit.calibration._inputs import (
    DECISION_RULE_NAME,
    MODEL_JUDGE_RULE_NAME,
    REPEAT_CONDITIONS,
    decision_rule_file,
    judge_series,
    load_decision_rule,
    repository_rule_file,
)
from evalkit.calibration._lock import check_preregistration, gold_tag, unlocked_rule
from evalkit.calibration._result import CalibrationResult, Estimate
from evalkit.calibration.certificate import certificate_bytes
from evalkit.calibration.labels import (
    CALL_COLUMNS,
    JudgeLabels,
    check_against_gold,
    judge_info,
    labels_from_frame,
)
from evalkit.errors import EvalkitError
from evalkit.gold.sets import LABELS, GoldSet, sha256_hex
from evalkit.gold.sets import load as load_gold
from evalkit.provenance.repository import repo_root
from evalkit.record.calibration_status import mint_status
from evalkit.record.dimension import DimensionId
from evalkit.stats import cohen_kappa, gwet_ac1, pabak
from evalkit.stats.bootstrap import resample_weights

__all__ = ["calibrate"]


def estimate(
    res: Any,
    level: float,
    method: str,
    n_resamples: int,
    rng: int | None,
    *,
    clusters: Any = None,
    clusters_text: bool = False,
) -> Estimate:
    """``res`` (an AgreementResult) with its bootstrap interval as an :class:`Estimate`.

    ``clusters`` (one item id per input row) resamples whole items; ``clusters_text`` says so
    in the method where every row already is one item (Fleiss across repeats, the majority).
    """
    lo = hi = None
    if res is not None and res.statistic is not None:
        extra = {} if clusters is None else {"clusters": clusters}
        ci = res.confidence_interval(
            level=level, method=method, n_resamples=n_resamples, rng=rng, **extra
        )
        lo, hi = ci[0], ci[1]
    by = " resampling items" if clusters is not None or clusters_text else ""
    return Estimate(
        None if res is None else res.statistic,
        lo,
        hi,
        level,
        f"{method} bootstrap{by} ({n_resamples} resamples, rng={rng})",
        0 if res is None else int(res.n),
    )


def _wilson(k: int, n: int, level: float) -> tuple[float | None, float | None, float | None]:
    """The rate ``k / n`` and its Wilson interval; all None when ``n`` is 0."""
    from evalkit.stats import wilson_interval

    lo, hi = wilson_interval(k, n, level)
    return (k / n if n else None), lo, hi


def one_vs_rest_table(
    gold_codes: np.ndarray,
    judge_codes: np.ndarray,
    level: float,
    n_resamples: int,
    rng: int | None,
    clusters: Any = None,
) -> pd.DataFrame:
    """Per gold class, one-vs-rest prevalence and bias indices and binary PABAK.

    Each with a percentile interval (``clusters``: whole items resampled, every row of a drawn
    item together).
    """
    n = len(gold_codes)
    w = resample_weights(n, n_resamples, np.random.default_rng(rng), clusters).astype(float)
    drawn = w.sum(axis=1, keepdims=True)  # n without clusters: the rows a resample holds
    rows = []
    tail = (1 - level) / 2
    for c, label in enumerate(LABELS):
        g, j = gold_codes == c, judge_codes == c
        cells = np.stack([g & j, g & ~j, ~g & j, ~g & ~j], axis=1).astype(float)  # a b c d
        point = cells.sum(axis=0) / n
        boot = (w @ cells) / drawn

        def idx(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            a, b, cc, d = (t[..., i] for i in range(4))
            return np.abs(a - d), np.abs(b - cc), 2 * (a + d) - 1

        pi, bi, pb = idx(point)
        bpi, bbi, bpb = idx(boot)
        row: dict[str, Any] = {"class": label}
        for name, est, dist in (
            ("prevalence_index", pi, bpi),
            ("bias_index", bi, bbi),
            ("pabak", pb, bpb),
        ):
            row[name] = float(est)
            row[f"{name}_low"] = float(np.quantile(dist, tail))
            row[f"{name}_high"] = float(np.quantile(dist, 1 - tail))
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class _Paired:
    """The labeled gold items with the gold's and the judge's label, as codes and as text."""

    ids: list[str]
    gold: dict[str, str]
    judged: dict[str, str | None]
    missing: tuple[str, ...]
    g_codes: np.ndarray
    j_codes: np.ndarray


def _pair(gs: GoldSet, judge_labels: pd.DataFrame) -> _Paired:
    items = gs.items
    gold_by_id = dict(zip(items["item_id"], items["label"], strict=True))
    judged = judge_series(judge_labels, set(gold_by_id))
    ids = sorted(i for i in gold_by_id if judged.get(i) is not None)
    missing = tuple(sorted(i for i in gold_by_id if judged.get(i) is None))
    if len(ids) < 2:
        raise EvalkitError(
            f"calibrate: only {len(ids)} gold item(s) labeled by the judge; need at least 2"
        )
    code = {label: i for i, label in enumerate(LABELS)}
    return _Paired(
        ids,
        gold_by_id,
        judged,
        missing,
        np.array([code[gold_by_id[i]] for i in ids]),
        np.array([code[str(judged[i])] for i in ids]),
    )


def _agreement(p: _Paired, lv: float, nres: int, rng: int | None) -> dict[str, Any]:
    """Kappa, AC1 and PABAK with their BCa intervals, and the one-vs-rest indices."""
    ratings = np.array([[p.gold[i], p.judged[i]] for i in p.ids], dtype=object)
    kappa = cohen_kappa(ratings, categories=LABELS)
    ac1 = gwet_ac1(ratings, categories=LABELS)
    pab = pabak(ratings, categories=LABELS)
    one_vs_rest = one_vs_rest_table(p.g_codes, p.j_codes, lv, nres, rng)
    # Byrt et al.'s indices are defined for 2 x 2 tables; with 3 classes they ride along per
    # class (one-vs-rest) as extras of the PABAK result.
    pab = dataclasses.replace(
        pab,
        extra={
            **dict(pab.extra),
            "prevalence_index_per_class": dict(
                zip(LABELS, one_vs_rest["prevalence_index"], strict=True)
            ),
            "bias_index_per_class": dict(zip(LABELS, one_vs_rest["bias_index"], strict=True)),
        },
    )
    return {
        "kappa": kappa,
        "kappa_ci": estimate(kappa, lv, "bca", nres, rng),
        "ac1": ac1,
        "ac1_ci": estimate(ac1, lv, "bca", nres, rng),
        "pabak": pab,
        "pabak_ci": estimate(pab, lv, "bca", nres, rng),
        "prevalence_bias": one_vs_rest,
    }


def _per_class_and_rule(p: _Paired, gs: GoldSet, lv: float) -> dict[str, pd.DataFrame]:
    """Per-class sensitivity/specificity and per-rule agreement, Wilson intervals."""
    rule_by_id = dict(zip(gs.items["item_id"], gs.items["rule"], strict=True))
    per_class = []
    for c, label in enumerate(LABELS):
        pos, neg = p.g_codes == c, p.g_codes != c
        sens = _wilson(int(np.sum(pos & (p.j_codes == c))), int(pos.sum()), lv)
        spec = _wilson(int(np.sum(neg & (p.j_codes != c))), int(neg.sum()), lv)
        per_class.append(
            {"class": label, "n_gold": int(pos.sum()), "n_judge": int(np.sum(p.j_codes == c))}
            | dict(zip(("sensitivity", "sensitivity_low", "sensitivity_high"), sens, strict=True))
            | dict(zip(("specificity", "specificity_low", "specificity_high"), spec, strict=True))
        )
    per_rule = []
    for r in sorted({int(rule_by_id[i]) for i in p.ids}):
        members = [i for i in p.ids if int(rule_by_id[i]) == r]
        agree = sum(p.gold[i] == p.judged[i] for i in members)
        est = _wilson(agree, len(members), lv)
        per_rule.append(
            {"rule": r, "n": len(members), "agree": agree}
            | dict(zip(("agreement", "agreement_low", "agreement_high"), est, strict=True))
        )
    return {"per_class": pd.DataFrame(per_class), "per_rule": pd.DataFrame(per_rule)}


def _tables(p: _Paired, gs: GoldSet, lv: float) -> dict[str, pd.DataFrame]:
    """Confusion matrix, per-class sensitivity/specificity, per-rule agreement, disagreements."""
    items = gs.items
    rule_by_id = dict(zip(items["item_id"], items["rule"], strict=True))
    rationale_by_id = dict(zip(items["item_id"], items["rationale"], strict=True))
    conf = pd.crosstab(
        pd.Categorical([p.gold[i] for i in p.ids], categories=LABELS),
        pd.Categorical([str(p.judged[i]) for i in p.ids], categories=LABELS),
        dropna=False,
    )
    conf.index.name, conf.columns.name = "gold", "judge"
    dis = pd.DataFrame(
        [
            {"item_id": i, "gold": p.gold[i], "judge": p.judged[i],
             "gold_rule": int(rule_by_id[i]), "rationale": rationale_by_id[i]}
            for i in p.ids
            if p.gold[i] != p.judged[i]
        ],
        columns=["item_id", "gold", "judge", "gold_rule", "rationale"],
    )  # fmt: skip
    return {
        "confusion": conf.astype(int),
        **_per_class_and_rule(p, gs, lv),
        "disagreements": dis,
    }


def _decision_interval(
    res: Any,
    shown: Estimate,
    rule: Mapping[str, Any],
    run: tuple[float, int, int | None],
    clusters: Any = None,
) -> Estimate:
    """The pre-registered kappa interval (the rule's level, resamples and seed)."""
    rule_ci = rule["ci"]
    level, resamples = float(rule_ci["level"]), int(rule_ci.get("n_resamples", 2000))
    seed = rule_ci.get("rng", run[2])
    if run == (level, resamples, seed):
        return shown
    return estimate(res, level, "bca", resamples, seed, clusters=clusters)


@dataclass(frozen=True)
class _Run:
    """What every calibration shares: the gold set, the rule, the lock check, the bootstrap."""

    gs: GoldSet
    rule: dict[str, Any]
    prereg: Any  # evalkit.calibration._lock.Preregistration
    lv: float
    nres: int
    rng: int | None

    @property
    def gold_by_id(self) -> dict[str, str]:
        return dict(zip(self.gs.items["item_id"], self.gs.items["label"], strict=True))


def _single(run: _Run, judge_labels: pd.DataFrame) -> dict[str, Any]:
    """The fields of a calibration with one label per item."""
    paired = _pair(run.gs, judge_labels)
    stats = _agreement(paired, run.lv, run.nres, run.rng)
    decision = _decision_interval(
        stats["kappa"], stats["kappa_ci"], run.rule, (run.lv, run.nres, run.rng)
    )
    graduates, reason = graduation(run.rule, decision, len(paired.ids), len(paired.missing))
    return {
        "n": len(paired.ids),
        "missing": paired.missing,
        **stats,
        **_tables(paired, run.gs, run.lv),
        "decision_kappa_ci": decision,
        "graduates": graduates,
        "graduation_reason": reason,
        "labels": tuple(sorted(paired.judged.items())),
        "_class_probs": tuple(float(np.mean(paired.g_codes == c)) for c in range(len(LABELS))),
    }


def _with_repeats(run: _Run, labels: JudgeLabels) -> dict[str, Any]:
    """The fields of a calibration with K repeats per item (:mod:`evalkit.calibration._repeats`)."""
    from evalkit.calibration._repeats import (
        confusion_of_calls,
        disagreements_of_repeats,
        repeat_statistics,
    )

    gold_by_id = run.gold_by_id
    rs = repeat_statistics(labels, gold_by_id, run.lv, run.nres, run.rng, run.rule)
    fig = rs.figures
    code = {label: i for i, label in enumerate((*LABELS, "not-applicable"))}
    codes = np.array([[code[g], code[j]] for g, j in rs.pairs])
    one = one_vs_rest_table(codes[:, 0], codes[:, 1], run.lv, run.nres, run.rng, rs.clusters)
    decision = _decision_interval(
        rs.stats["kappa"], rs.stats["kappa_ci"], run.rule, (run.lv, run.nres, run.rng),
        rs.clusters,
    )  # fmt: skip
    ids = sorted(i for i, lab in rs.majority.items() if lab is not None)
    majority = _Paired(
        ids, gold_by_id, dict(rs.majority), (),
        np.array([code[gold_by_id[i]] for i in ids], dtype=int),
        np.array([code[str(rs.majority[i])] for i in ids], dtype=int),
    )  # fmt: skip
    missing = tuple(sorted(set(gold_by_id) - set(rs.by_item)))
    graduates, reason = graduation(run.rule, decision, fig.n_items, len(missing), fig)
    labelled = sorted(rs.by_item)
    return {
        "n": fig.n_items,
        "missing": missing,
        **rs.stats,
        "prevalence_bias": one,
        "confusion": confusion_of_calls(rs.pairs, fig.categories),
        **_per_class_and_rule(majority, run.gs, run.lv),
        "disagreements": disagreements_of_repeats(rs, run.gs, gold_by_id),
        "decision_kappa_ci": decision,
        "graduates": graduates,
        "graduation_reason": reason,
        "labels": tuple(sorted(rs.majority.items())),
        "repeats": fig,
        "calls": tuple(
            (i, int(r), lab, str(out))
            for i, r, lab, out in labels.calls[list(CALL_COLUMNS)].itertuples(index=False)
        ),
        "_class_probs": tuple(
            sum(gold_by_id[i] == c for i in labelled) / len(labelled) for c in LABELS
        ),
    }


def _check_labels(labels: JudgeLabels, gs: GoldSet, repeated: bool, rule_file: Path) -> None:
    """Refuse labels of other items than ``gs``'s.

    With repeats, also a call without a label that does not say why.
    """
    check_against_gold(labels, gs)
    unknown = labels.calls["outcome"].isna()
    if repeated and unknown.any():
        raise EvalkitError(
            f"{labels.source}: item {labels.calls['item_id'][unknown].iloc[0]!r} has no label and "
            f"no outcome; the rule {rule_file.name} counts calls without a label, so say why (an "
            "outcome column: cannot-parse or error)"
        )


def _as_labels(judge_labels: Any, judge: str | None) -> JudgeLabels | pd.DataFrame:
    """A frame of one label per item as given (no ``repeat`` column), else :class:`JudgeLabels`."""
    if isinstance(judge_labels, JudgeLabels):
        return judge_labels
    if isinstance(judge_labels, pd.DataFrame) and "repeat" in judge_labels.columns:
        return labels_from_frame(judge_labels, judge)
    return judge_labels  # type: ignore[no-any-return]


def calibrate(
    judge_labels: pd.DataFrame | JudgeLabels,
    gold: GoldSet | str | os.PathLike[str],
    *,
    dimension_id: str = DimensionId.INSTRUCTION_ADHERENCE.value,
    judge: str | None = None,
    level: float | None = None,
    n_resamples: int | None = None,
    rng: int | None = 0,
    decision_rule: str | os.PathLike[str] | None = None,
    no_lock: bool = False,
    lock: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    judge_info: Mapping[str, Any] | None = None,
) -> CalibrationResult:
    """Calibrate a judge's labels against a frozen gold set (see :mod:`evalkit.calibration`).

    ``judge_labels``: a DataFrame with ``item_id`` and ``label`` (``pass`` | ``fail`` |
    ``cannot-determine``; None/NaN = not labeled, counted as missing), or K labels per item: a
    :class:`~evalkit.calibration.JudgeLabels` (:func:`~evalkit.calibration.read_labels` of a
    run log or labels file) or a DataFrame with a ``repeat`` column (and ``outcome``, ``judge``;
    see :mod:`evalkit.calibration.labels`). A run log, or K > 1, is a model judge's: its
    repeats are calibrated with their consistency under the model-judge decision rule
    (``DECISION_RULE-model-judge.json``); one label per item under ``DECISION_RULE.json``.
    ``decision_rule`` names another rule file. ``gold``: a loaded
    :class:`~evalkit.gold.sets.GoldSet` or a path for :func:`evalkit.gold.sets.load`. ``level`` and
    ``n_resamples`` default to the pre-registered decision rule's; graduation is always judged
    on the rule's own level, resamples and seed. ``judge`` names the rater (it enters the
    result and its certificate, so a minted status says whom it calibrated); for labels that
    hold several judges it selects one.

    The run needs the pre-registration lock (``lock``, default
    ``prereg.default_lock_path(root)``) and refuses when it is missing or when the locked gold
    set or decision rule changed; ``no_lock=True`` runs without one, says so in the result, and
    can never be registered; an explicit ``decision_rule`` must be one the lock holds, as it is
    (else ``EvalkitError``), unless ``no_lock``. ``root`` is the repository (default: evalkit's
    own checkout) whose lock and ``calibrations/`` decide whether the result may be minted
    (``result.mintable``).

    Graduation is judged only under the repository's locked rule for the gold set's name
    (:func:`~evalkit.calibration._inputs.decision_rule_file`), whatever rule a copied gold
    folder brings; a result under any other rule, or with ``no_lock``, does not graduate and
    says ``not pre-registered``. ``dimension_id`` must be the rule's. ``judge_info`` is the
    certificate's ``judge`` section (default: what the labels say of their judge,
    :attr:`~evalkit.calibration.JudgeLabels.judge_info`, a frame's ``attrs["judge_info"]``,
    else a table with no judge identity, ``origin: "file"``).
    """
    gs = gold if isinstance(gold, GoldSet) else load_gold(gold)
    info = _judge_info(judge_labels, judge_info)
    if decision_rule is not None and not no_lock:
        why = unlocked_rule(decision_rule, root)
        if why is not None:
            raise EvalkitError(
                f"decision rule {decision_rule}: not a locked decision rule ({why}); a rule is "
                "frozen and locked (`evalkit preregister`) before its first run, or the run says "
                "--no-lock"
            )
    labels = _as_labels(judge_labels, judge)
    model = isinstance(labels, JudgeLabels) and labels.model_judge
    name = MODEL_JUDGE_RULE_NAME if model else DECISION_RULE_NAME
    rule_file = decision_rule_file(gs, decision_rule, root=root, name=name)
    from_repository = decision_rule is None and rule_file == repository_rule_file(gs, name, root)
    rule = load_decision_rule(gs, rule_file, bound_by_manifest=not from_repository)
    _check_dimension(dimension_id, rule, rule_file)
    repeated = model or bool(set(rule["graduate_if"]) & set(REPEAT_CONDITIONS))
    if repeated and not isinstance(labels, JudgeLabels):  # a rule for repeats names the path
        labels = labels_from_frame(labels, judge, model_judge=True)
    if isinstance(labels, JudgeLabels):
        _check_labels(labels, gs, repeated, rule_file)
    prereg = check_preregistration(gs, rule, rule_file, root=root, lock=lock, no_lock=no_lock)
    lv = float(rule["ci"]["level"]) if level is None else float(level)
    nres = int(rule["ci"].get("n_resamples", 2000)) if n_resamples is None else int(n_resamples)
    run = _Run(gs, rule, prereg, lv, nres, rng)
    if repeated and isinstance(labels, JudgeLabels):
        fields = _with_repeats(run, labels)
    else:
        fields = _single(run, labels.single() if isinstance(labels, JudgeLabels) else labels)
    why_not = NOT_PRE_REGISTERED_NO_LOCK if no_lock else unlocked_rule(rule_file, root)
    if why_not is not None:  # computed and shown; never a graduation
        # what that rule would say, worded as no pre-registered verdict
        said = str(fields["graduation_reason"]).replace("pre-registered ", "")
        fields["graduation_reason"] = (
            f"{NOT_PRE_REGISTERED}: {why_not}; under {rule_file.name} the figures say: {said}"
        )
        fields["graduates"] = False
    shown_judge = judge or (labels.judge if isinstance(labels, JudgeLabels) else None)
    result = CalibrationResult(
        dimension_id=dimension_id,
        judge=shown_judge or "unnamed judge",
        gold_name=gs.name,
        gold_version=gs.version,
        gold_sha256=gs.sha256,
        n_gold=len(gs.items),
        level=lv,
        n_resamples=nres,
        rng=rng,
        decision_rule=rule,
        mintable=prereg.mintable,
        mint_reason=prereg.reason,
        preregistration=prereg.statement,
        gold_path=prereg.gold_path,
        decision_rule_path=prereg.rule_path,
        root=str(repo_root(root)),
        gold_tag=gold_tag(gs, root),
        pre_registered=why_not is None,
        judge_info=info,
        gold_labels=tuple(
            sorted(zip(gs.items["item_id"].astype(str), gs.items["label"].astype(str), strict=True))
        ),
        **fields,
    )
    return _minted(result, gs)


#: How a graduation verdict not judged under the repository's locked rule starts.
NOT_PRE_REGISTERED = "not pre-registered"
NOT_PRE_REGISTERED_NO_LOCK = "run with --no-lock: no pre-registration was checked"


def _judge_info(labels: Any, given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The certificate's ``judge`` section (see :func:`calibrate`)."""
    if given is not None:
        return dict(given)
    if isinstance(labels, JudgeLabels) and labels.judge_info is not None:
        return dict(labels.judge_info)
    attrs = getattr(labels, "attrs", None)
    if isinstance(attrs, Mapping) and isinstance(attrs.get("judge_info"), Mapping):
        return dict(attrs["judge_info"])
    return judge_info(None, "file")


def _check_dimension(dimension_id: str, rule: Mapping[str, Any], rule_file: Path) -> None:
    """Refuse a calibration of another dimension than its decision rule's."""
    ruled = rule.get("dimension_id")
    if ruled is not None and ruled != dimension_id:
        raise EvalkitError(
            f"calibrate: dimension {dimension_id!r} is not the dimension of the decision rule "
            f"{rule_file.name} ({ruled!r}): a calibration holds only for the dimension its gold "
            "set and rule were made for"
        )


def _minted(result: CalibrationResult, gs: GoldSet) -> CalibrationResult:
    """``result`` with its calibration_ref (mintable) and status (mintable and graduating)."""
    if not result.mintable:
        return result
    ref = sha256_hex(certificate_bytes(result))
    if not result.graduates:
        return dataclasses.replace(result, calibration_ref=ref)
    try:
        status = mint_status(gs.tag, ref)
    except EvalkitError as exc:  # a gold set whose name cannot form a status: shown, never minted
        return dataclasses.replace(result, mintable=False, mint_reason=f"not mintable: {exc}")
    return dataclasses.replace(result, calibration_ref=ref, calibration_status=status)
