"""``calibrate``: a judge's labels against a frozen gold set (see :mod:`evalkit.calibration`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit.calibration._inputs import (
    decision_rule_file,
    judge_series,
    load_decision_rule,
)
from evalkit.calibration._lock import check_preregistration
from evalkit.calibration._repo import repo_root
from evalkit.calibration._result import CalibrationResult, Estimate
from evalkit.calibration.certificate import certificate_bytes
from evalkit.calibration_status import mint_status
from evalkit.errors import EvalkitError
from evalkit.gold import LABELS, GoldSet, sha256_hex
from evalkit.gold import load as load_gold
from evalkit.stats import cohen_kappa, gwet_ac1, pabak
from evalkit.stats.bootstrap import resample_weights

__all__ = ["calibrate"]


def _estimate(res: Any, level: float, method: str, n_resamples: int, rng: int | None) -> Estimate:
    lo = hi = None
    if res is not None and res.statistic is not None:
        ci = res.confidence_interval(level=level, method=method, n_resamples=n_resamples, rng=rng)
        lo, hi = ci[0], ci[1]
    return Estimate(
        None if res is None else res.statistic,
        lo,
        hi,
        level,
        f"{method} bootstrap ({n_resamples} resamples, rng={rng})",
        0 if res is None else int(res.n),
    )


def _wilson(k: int, n: int, level: float) -> tuple[float | None, float | None, float | None]:
    if n == 0:
        return None, None, None
    from statsmodels.stats.proportion import proportion_confint  # deferred: heavy

    lo, hi = proportion_confint(k, n, alpha=1 - level, method="wilson")
    return k / n, float(lo), float(hi)


def _one_vs_rest(
    gold_codes: np.ndarray, judge_codes: np.ndarray, level: float, n_resamples: int, rng: int | None
) -> pd.DataFrame:
    n = len(gold_codes)
    w = resample_weights(n, n_resamples, np.random.default_rng(rng)).astype(float)
    rows = []
    tail = (1 - level) / 2
    for c, label in enumerate(LABELS):
        g, j = gold_codes == c, judge_codes == c
        cells = np.stack([g & j, g & ~j, ~g & j, ~g & ~j], axis=1).astype(float)  # a b c d
        point = cells.sum(axis=0) / n
        boot = (w @ cells) / n

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


def _graduation(
    rule: Mapping[str, Any], decision: Estimate, n: int, n_missing: int
) -> tuple[bool, str]:
    g = rule["graduate_if"]
    need_low, need_n, max_missing = (
        float(g["kappa_ci_low_at_least"]),
        int(g["n_at_least"]),
        int(g["missing_at_most"]),
    )
    kappa_low = decision.low
    bound = "pre-registered kappa CI lower bound"
    fails = []
    if kappa_low is None:
        fails.append("the pre-registered kappa interval is undefined")
    elif kappa_low < need_low:
        fails.append(f"{bound} {kappa_low:.3f} < {need_low:g}")
    if n < need_n:
        fails.append(f"n = {n} < {need_n}")
    if n_missing > max_missing:
        fails.append(f"{n_missing} gold item(s) unlabeled > {max_missing}")
    if fails:
        return False, "does not graduate: " + "; ".join(fails)
    return True, (
        f"graduates: {bound} {kappa_low:.3f} >= {need_low:g}, n = {n} >= {need_n}, "
        f"{n_missing} missing <= {max_missing}"
    )


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
    one_vs_rest = _one_vs_rest(p.g_codes, p.j_codes, lv, nres, rng)
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
        "kappa_ci": _estimate(kappa, lv, "bca", nres, rng),
        "ac1": ac1,
        "ac1_ci": _estimate(ac1, lv, "bca", nres, rng),
        "pabak": pab,
        "pabak_ci": _estimate(pab, lv, "bca", nres, rng),
        "prevalence_bias": one_vs_rest,
    }


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
        "per_class": pd.DataFrame(per_class),
        "per_rule": pd.DataFrame(per_rule),
        "disagreements": dis,
    }


def _decision_interval(
    stats: Mapping[str, Any], rule: Mapping[str, Any], lv: float, nres: int, rng: int | None
) -> Estimate:
    """The pre-registered kappa interval (the rule's level, resamples and seed)."""
    rule_ci = rule["ci"]
    level, resamples = float(rule_ci["level"]), int(rule_ci.get("n_resamples", 2000))
    seed = rule_ci.get("rng", rng)
    if (lv, nres, rng) == (level, resamples, seed):
        return stats["kappa_ci"]  # type: ignore[no-any-return]
    return _estimate(stats["kappa"], level, "bca", resamples, seed)


def calibrate(
    judge_labels: pd.DataFrame,
    gold: GoldSet | str | os.PathLike[str],
    *,
    dimension_id: str = "instruction-adherence",
    judge: str = "unnamed judge",
    level: float | None = None,
    n_resamples: int | None = None,
    rng: int | None = 0,
    decision_rule: str | os.PathLike[str] | None = None,
    no_lock: bool = False,
    lock: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
) -> CalibrationResult:
    """Calibrate a judge's labels against a frozen gold set (see :mod:`evalkit.calibration`).

    ``judge_labels``: DataFrame with ``item_id`` and ``label`` (``pass`` | ``fail`` |
    ``cannot-determine``; None/NaN = not labeled, counted as missing). ``gold``: a loaded
    :class:`~evalkit.gold.GoldSet` or a path for :func:`evalkit.gold.load`. ``level`` and
    ``n_resamples`` default to the pre-registered decision rule's; graduation is always judged
    on the rule's own level, resamples and seed. ``judge`` names the rater: it enters the
    result and its certificate, so a minted status says whom it calibrated.

    The run needs the pre-registration lock (``lock``, default
    ``prereg.default_lock_path(root)``) and refuses when it is missing or when the locked gold
    set or decision rule changed; ``no_lock=True`` runs without one, says so in the result, and
    can never be registered. ``root`` is the repository (default: evalkit's own checkout) whose
    lock and ``calibrations/`` decide whether the result may be minted (``result.mintable``).
    """
    gs = gold if isinstance(gold, GoldSet) else load_gold(gold)
    rule_file = decision_rule_file(gs, decision_rule, root=root)
    rule = load_decision_rule(gs, rule_file)
    prereg = check_preregistration(gs, rule, rule_file, root=root, lock=lock, no_lock=no_lock)
    lv = float(rule["ci"]["level"]) if level is None else float(level)
    nres = int(rule["ci"].get("n_resamples", 2000)) if n_resamples is None else int(n_resamples)
    paired = _pair(gs, judge_labels)
    stats = _agreement(paired, lv, nres, rng)
    decision = _decision_interval(stats, rule, lv, nres, rng)
    graduates, reason = _graduation(rule, decision, len(paired.ids), len(paired.missing))
    result = CalibrationResult(
        dimension_id=dimension_id,
        judge=judge,
        gold_name=gs.name,
        gold_version=gs.version,
        gold_sha256=gs.sha256,
        n=len(paired.ids),
        n_gold=len(paired.gold),
        missing=paired.missing,
        level=lv,
        n_resamples=nres,
        rng=rng,
        **stats,
        **_tables(paired, gs, lv),
        decision_rule=rule,
        decision_kappa_ci=decision,
        graduates=graduates,
        graduation_reason=reason,
        mintable=prereg.mintable,
        mint_reason=prereg.reason,
        preregistration=prereg.statement,
        labels=tuple(sorted(paired.judged.items())),
        gold_path=prereg.gold_path,
        decision_rule_path=prereg.rule_path,
        root=str(repo_root(root)),
        _class_probs=tuple(float(np.mean(paired.g_codes == c)) for c in range(len(LABELS))),
    )
    if not result.mintable:
        return result
    ref = sha256_hex(certificate_bytes(result))
    status = mint_status(gs.tag, ref) if graduates else "uncalibrated"
    return dataclasses.replace(result, calibration_ref=ref, calibration_status=status)
