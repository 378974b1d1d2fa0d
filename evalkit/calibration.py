"""Judge-vs-gold calibration: agreement with CIs, and graduation by a pre-registered rule.

``calibrate(judge_labels, gold)`` compares a judge's labels (``pass`` / ``fail`` /
``cannot-determine`` per gold item) with a frozen gold set (:mod:`evalkit.gold`) and returns a
:class:`CalibrationResult`: Cohen's kappa with its BCa bootstrap interval, Gwet's AC1 and PABAK
(each with its BCa interval), per-class prevalence and bias indices, the confusion matrix,
per-class sensitivity and specificity, agreement per deciding gold rule (Wilson intervals), the
items a target CI width would need, and the graduation verdict of the decision rule frozen in
``gold/<set>/DECISION_RULE.json`` before the first calibration run.

Three classes, decided and documented here:

- **PABAK** is the multi-category form ``(q * po - 1) / (q - 1)`` with ``q = 3``
  (Byrt, Bishop & Carlin 1993; equal to Brennan-Prediger with two raters).
- **Prevalence and bias indices** are defined by Byrt et al. for a 2 x 2 table. They are
  reported **per class, one-vs-rest**: for class ``c`` the table ``[[a, b], [c', d]]`` of
  gold = c / judge = c; ``prevalence_index = |a - d| / n``, ``bias_index = |b - c'| / n`` and
  the binary ``pabak = 2 po - 1`` of that table, each with a percentile bootstrap interval on the
  same resamples.

Items the judge did not label are ``missing``: counted and listed, never guessed, and excluded
from every statistic. A graduating result mints ``calibrated:<set>-v<N>:<hash8>`` where
``calibration_ref`` (``hash8`` its first 8 hex) is the sha256 of the result's canonical JSON,
which includes the gold set's sha256: the status is bound to both.

Where a minted status is accepted (:mod:`evalkit.calibration_status`): a graduating
``calibrate()`` records ``(dimension_id, status, calibration_ref)`` in process, so
``validate_record`` accepts a judge dimension carrying that status with exactly that
``calibration_ref`` in the same Python process; a non-graduating result records nothing. To be
accepted in other processes (a journal read later), the result must be :func:`register`-ed in
the persistent registry.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalkit.calibration_status import default_registry_path, mint_status, remember_graduated
from evalkit.errors import EvalkitError
from evalkit.file_errors import input_file_error
from evalkit.gold import LABELS, GoldSet, read_jsonl_objects, sha256_hex
from evalkit.gold import load as load_gold

__all__ = [
    "DEFAULT_WIDTHS",
    "CalibrationResult",
    "Estimate",
    "calibrate",
    "load_decision_rule",
    "read_judge_labels",
    "register",
    "rule_judge_labels",
]

DEFAULT_WIDTHS = (0.1, 0.2, 0.3)
DECISION_RULE_NAME = "DECISION_RULE.json"


@dataclass(frozen=True)
class Estimate:
    """A figure with its interval (``low``/``high`` None when undefined) and how it was made."""

    statistic: float | None
    low: float | None
    high: float | None
    level: float
    method: str
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": _num(self.statistic),
            "ci": {"low": _num(self.low), "high": _num(self.high), "level": self.level},
            "method": self.method,
            "n": self.n,
        }


def _num(x: Any) -> float | int | None:
    if x is None:
        return None
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    f = float(x)
    return f if math.isfinite(f) else None


def _canonical(obj: Any) -> bytes:
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


# --------------------------------------------------------------------------- result


@dataclass(frozen=True)
class CalibrationResult:
    """Judge-vs-gold agreement. Every figure carries its interval; see the module docstring."""

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
    graduates: bool = False
    graduation_reason: str = ""
    calibration_ref: str | None = None
    calibration_status: str = "uncalibrated"
    _class_probs: tuple[float, ...] = field(default=(), repr=False)

    @property
    def n_missing(self) -> int:
        return len(self.missing)

    @property
    def prevalence_index(self) -> dict[str, float | None]:
        """One-vs-rest prevalence index per class (see the module docstring)."""
        return {r["class"]: r["prevalence_index"] for r in self.prevalence_bias.to_dict("records")}

    @property
    def bias_index(self) -> dict[str, float | None]:
        """One-vs-rest bias index per class (see the module docstring)."""
        return {r["class"]: r["bias_index"] for r in self.prevalence_bias.to_dict("records")}

    def items_needed_for_width(self, width: float) -> int | None:
        """Gold items needed for a kappa CI of total ``width`` at this kappa and class mix.

        Wald-interval planning (``evalkit.stats.power.items_for_ci_width``, Fleiss-Cohen-Everitt
        large-sample variance) at the observed kappa and the gold class proportions. None when
        it is undefined (kappa undefined, or 1: a perfect judge has zero large-sample variance).
        """
        from evalkit.stats.power import items_for_ci_width

        k = self.kappa.statistic if self.kappa is not None else None
        probs = [p for p in self._class_probs if p > 0]
        if k is None or len(probs) < 2:
            return None
        try:
            return int(items_for_ci_width(float(k), probs, float(width), self.level))
        except EvalkitError:
            return None

    def _core(self) -> dict[str, Any]:
        def frame(df: pd.DataFrame) -> list[dict[str, Any]]:
            out = []
            for rec in df.to_dict("records"):
                out.append(
                    {
                        str(k): (
                            _num(v)
                            if isinstance(v, (float, int, np.number)) and not isinstance(v, bool)
                            else v
                        )
                        for k, v in rec.items()
                    }
                )
            return out

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
            "prevalence_bias_one_vs_rest": frame(self.prevalence_bias),
            "confusion": {"rows": "gold", "columns": "judge", "counts": conf},
            "per_class": frame(self.per_class),
            "per_rule": frame(self.per_rule),
            "disagreements": frame(self.disagreements),
            "items_needed_for_width": {
                f"{w:g}": self.items_needed_for_width(w) for w in DEFAULT_WIDTHS
            },
            "decision_rule": dict(self.decision_rule),
            "graduates": self.graduates,
            "graduation_reason": self.graduation_reason,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-simple dict: every agreement figure with its CI, the verdict and the status."""
        d = self._core()
        d["calibration_ref"] = self.calibration_ref
        d["calibration_status"] = self.calibration_status
        return d

    def to_json(self) -> str:
        return json.dumps(
            self.to_dict(), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False
        )


# --------------------------------------------------------------------------- inputs


def load_decision_rule(gold: GoldSet, path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The pre-registered decision rule of the gold set (``gold/<set>/DECISION_RULE.json``).

    Read beside the gold version, or, for a copied version folder, the repository's rule of the
    set. When the version's manifest binds the rule's sha256, a different file is refused.
    """
    if path is not None:
        p = Path(path)
    else:
        here = gold.path.parent / DECISION_RULE_NAME
        repo = Path(__file__).resolve().parents[1] / "gold" / gold.name / DECISION_RULE_NAME
        p = here if here.is_file() or not repo.is_file() else repo
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise EvalkitError(
            f"{p}: no pre-registered decision rule; a judge cannot graduate without one"
        ) from None
    digest = sha256_hex(raw)
    bound = (gold.manifest.get("decision_rules") or {}).get(p.name)
    if bound is not None and digest != bound:
        raise EvalkitError(
            f"{p}: not the decision rule {gold.tag} was frozen with (sha256 differs); a "
            "pre-registered rule is never edited — write a new rule file and mint a new version"
        )
    try:
        rule = json.loads(raw.decode("utf-8"))
        g = rule["graduate_if"]
        float(g["kappa_ci_low_at_least"])
        int(g["n_at_least"])
        int(g["missing_at_most"])
        float(rule["ci"]["level"])
    except (ValueError, KeyError, TypeError) as exc:
        raise EvalkitError(f"{p}: not a valid decision rule ({exc!r})") from None
    rule["sha256"] = digest
    rule["path"] = p.name
    return rule


def read_judge_labels(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Judge labels from a ``.csv`` or JSON-lines file with columns ``item_id`` and ``label``."""
    p = Path(path)
    try:
        if p.suffix.lower() == ".csv":
            df = pd.read_csv(p, dtype={"item_id": str, "label": object}, keep_default_na=True)
        else:
            df = pd.DataFrame(read_jsonl_objects(p))
    except OSError as exc:
        raise input_file_error(exc, "judge labels file", p) from exc
    for col in ("item_id", "label"):
        if col not in df.columns:
            raise EvalkitError(f"{p}: column {col!r} missing")
    return df


def rule_judge_labels(gold: GoldSet) -> pd.DataFrame:
    """The rule judge's labels: ``apply_rules(compute_facts(dimensions))`` for every gold item.

    Facts are recomputed from the dimensions with this evalkit (not read from the frozen
    snapshot), so the rule judge is calibrated as it runs today.
    """
    from evalkit import compute_facts
    from evalkit.judge import apply_rules

    rows = []
    for rec in gold.items[["item_id", "dimensions"]].to_dict("records"):
        v = apply_rules(compute_facts(rec["dimensions"]))
        status = getattr(v.status, "value", v.status)
        rows.append(
            {"item_id": rec["item_id"], "label": str(status), "rule": v.rule, "reason": v.reason}
        )
    return pd.DataFrame(rows)


def _judge_series(judge_labels: pd.DataFrame, gold_ids: set[str]) -> dict[str, str | None]:
    if not isinstance(judge_labels, pd.DataFrame):
        raise EvalkitError("judge_labels must be a pandas DataFrame with columns item_id, label")
    for col in ("item_id", "label"):
        if col not in judge_labels.columns:
            raise EvalkitError(f"judge_labels: column {col!r} missing")
    out: dict[str, str | None] = {}
    for i, (iid, label) in enumerate(
        zip(judge_labels["item_id"], judge_labels["label"], strict=True)
    ):
        iid = str(iid)
        if iid in out:
            raise EvalkitError(f"judge_labels: item_id {iid!r} appears twice (row {i})")
        if iid not in gold_ids:
            raise EvalkitError(f"judge_labels: item_id {iid!r} (row {i}) is not in the gold set")
        if label is None or (isinstance(label, float) and math.isnan(label)):
            out[iid] = None  # not labeled: missing, never guessed
            continue
        if label not in LABELS:
            raise EvalkitError(
                f"judge_labels: item {iid!r} (row {i}): label {label!r} is not one of {LABELS}"
            )
        out[iid] = str(label)
    return out


# --------------------------------------------------------------------------- statistics


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
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=1 - level, method="wilson")
    return k / n, float(lo), float(hi)


def _one_vs_rest(
    gold_codes: np.ndarray, judge_codes: np.ndarray, level: float, n_resamples: int, rng: int | None
) -> pd.DataFrame:
    from evalkit.stats.bootstrap import resample_weights

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
    rule: Mapping[str, Any], kappa_low: float | None, n: int, n_missing: int
) -> tuple[bool, str]:
    g = rule["graduate_if"]
    need_low, need_n, max_missing = (
        float(g["kappa_ci_low_at_least"]),
        int(g["n_at_least"]),
        int(g["missing_at_most"]),
    )
    fails = []
    if kappa_low is None:
        fails.append("the kappa interval is undefined")
    elif kappa_low < need_low:
        fails.append(f"kappa CI lower bound {kappa_low:.3f} < {need_low:g}")
    if n < need_n:
        fails.append(f"n = {n} < {need_n}")
    if n_missing > max_missing:
        fails.append(f"{n_missing} gold item(s) unlabeled > {max_missing}")
    if fails:
        return False, "does not graduate: " + "; ".join(fails)
    return True, (
        f"graduates: kappa CI lower bound {kappa_low:.3f} >= {need_low:g}, n = {n} >= {need_n}, "
        f"{n_missing} missing <= {max_missing}"
    )


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
    check_prereg: bool = True,
) -> CalibrationResult:
    """Calibrate a judge's labels against a frozen gold set (see the module docstring).

    ``judge_labels``: DataFrame with ``item_id`` and ``label`` (``pass`` | ``fail`` |
    ``cannot-determine``; None/NaN = not labeled, counted as missing). ``gold``: a loaded
    :class:`~evalkit.gold.GoldSet` or a path for :func:`evalkit.gold.load`. ``level`` and
    ``n_resamples`` default to the pre-registered decision rule's; graduation is always judged
    on the rule's own level and resamples. ``judge`` names the rater: it enters the result, its
    hash and the registry entry, so a minted status says whom it calibrated. With
    ``check_prereg``, a pre-registration lock whose gold set or decision rule changed refuses
    the run (:func:`evalkit.prereg.require_unchanged`).
    """
    from evalkit.stats import cohen_kappa, gwet_ac1, pabak

    gs = gold if isinstance(gold, GoldSet) else load_gold(gold)
    rule = load_decision_rule(gs, decision_rule)
    if check_prereg:
        _check_prereg(gs, rule)
    rule_ci = rule["ci"]
    rule_level = float(rule_ci["level"])
    rule_resamples = int(rule_ci.get("n_resamples", 2000))
    lv = rule_level if level is None else float(level)
    nres = rule_resamples if n_resamples is None else int(n_resamples)

    items = gs.items
    gold_by_id = dict(zip(items["item_id"], items["label"], strict=True))
    rule_by_id = dict(zip(items["item_id"], items["rule"], strict=True))
    rationale_by_id = dict(zip(items["item_id"], items["rationale"], strict=True))
    judged = _judge_series(judge_labels, set(gold_by_id))
    ids = sorted(i for i in gold_by_id if judged.get(i) is not None)
    missing = tuple(sorted(i for i in gold_by_id if judged.get(i) is None))
    if len(ids) < 2:
        raise EvalkitError(
            f"calibrate: only {len(ids)} gold item(s) labeled by the judge; need at least 2"
        )

    code = {label: i for i, label in enumerate(LABELS)}
    g_codes = np.array([code[gold_by_id[i]] for i in ids])
    j_codes = np.array([code[str(judged[i])] for i in ids])
    ratings = np.array([[gold_by_id[i], judged[i]] for i in ids], dtype=object)

    kappa = cohen_kappa(ratings, categories=LABELS)
    ac1 = gwet_ac1(ratings, categories=LABELS)
    pab = pabak(ratings, categories=LABELS)
    one_vs_rest = _one_vs_rest(g_codes, j_codes, lv, nres, rng)
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
    kappa_ci = _estimate(kappa, lv, "bca", nres, rng)
    ac1_ci = _estimate(ac1, lv, "bca", nres, rng)
    pabak_ci = _estimate(pab, lv, "bca", nres, rng)
    if lv == rule_level and nres == rule_resamples and rng == rule_ci.get("rng", rng):
        decision_low = kappa_ci.low
    else:
        decision_low = _estimate(
            kappa, rule_level, "bca", rule_resamples, rule_ci.get("rng", rng)
        ).low

    conf = pd.crosstab(
        pd.Categorical([gold_by_id[i] for i in ids], categories=LABELS),
        pd.Categorical([str(judged[i]) for i in ids], categories=LABELS),
        dropna=False,
    )
    conf.index.name, conf.columns.name = "gold", "judge"
    conf = conf.astype(int)

    per_class = []
    for c, label in enumerate(LABELS):
        pos, neg = g_codes == c, g_codes != c
        sens = _wilson(int(np.sum(pos & (j_codes == c))), int(pos.sum()), lv)
        spec = _wilson(int(np.sum(neg & (j_codes != c))), int(neg.sum()), lv)
        per_class.append(
            {
                "class": label,
                "n_gold": int(pos.sum()),
                "n_judge": int(np.sum(j_codes == c)),
                "sensitivity": sens[0],
                "sensitivity_low": sens[1],
                "sensitivity_high": sens[2],
                "specificity": spec[0],
                "specificity_low": spec[1],
                "specificity_high": spec[2],
            }
        )
    per_rule = []
    for r in sorted({int(rule_by_id[i]) for i in ids}):
        members = [i for i in ids if int(rule_by_id[i]) == r]
        agree = sum(gold_by_id[i] == judged[i] for i in members)
        est = _wilson(agree, len(members), lv)
        per_rule.append(
            {
                "rule": r,
                "n": len(members),
                "agree": agree,
                "agreement": est[0],
                "agreement_low": est[1],
                "agreement_high": est[2],
            }
        )
    dis = pd.DataFrame(
        [
            {
                "item_id": i,
                "gold": gold_by_id[i],
                "judge": judged[i],
                "gold_rule": int(rule_by_id[i]),
                "rationale": rationale_by_id[i],
            }
            for i in ids
            if gold_by_id[i] != judged[i]
        ],
        columns=["item_id", "gold", "judge", "gold_rule", "rationale"],
    )
    graduates, reason = _graduation(rule, decision_low, len(ids), len(missing))
    probs = tuple(float(np.mean(g_codes == c)) for c in range(len(LABELS)))

    result = CalibrationResult(
        dimension_id=dimension_id,
        judge=judge,
        gold_name=gs.name,
        gold_version=gs.version,
        gold_sha256=gs.sha256,
        n=len(ids),
        n_gold=len(gold_by_id),
        missing=missing,
        level=lv,
        n_resamples=nres,
        rng=rng,
        kappa=kappa,
        kappa_ci=kappa_ci,
        ac1=ac1,
        ac1_ci=ac1_ci,
        pabak=pab,
        pabak_ci=pabak_ci,
        prevalence_bias=one_vs_rest,
        confusion=conf,
        per_class=pd.DataFrame(per_class),
        per_rule=pd.DataFrame(per_rule),
        disagreements=dis,
        decision_rule=rule,
        graduates=graduates,
        graduation_reason=reason,
        _class_probs=probs,
    )
    ref = sha256_hex(_canonical(result._core()))
    status = mint_status(gs.tag, ref) if graduates else "uncalibrated"
    if graduates:  # accepted by validate_record in this process; register() persists it
        remember_graduated(dimension_id, status, ref)
    return _replace(result, calibration_ref=ref, calibration_status=status)


def _check_prereg(gs: GoldSet, rule: Mapping[str, Any]) -> None:
    """Refuse when the lock says this gold set or its decision rule changed since.

    The lock names repository inputs; a gold set outside the repository (a copy, a scratch
    freeze) is not a pre-registered input, which is said once on stderr.
    """
    from evalkit import prereg

    repo = Path(__file__).resolve().parents[1]
    try:
        gs.path.resolve().relative_to(repo / "gold")
    except ValueError:
        prereg._note_once(
            f"gold set {gs.path} is outside the repository: not a pre-registered input"
        )
        return
    prereg.require_unchanged("gold", [f"{gs.path.parent.name}/{gs.path.name}"])
    prereg.require_unchanged("decision_rule", [f"{gs.path.parent.name}/{rule['path']}"])


def _replace(result: CalibrationResult, **changes: Any) -> CalibrationResult:
    from dataclasses import replace

    return replace(result, **changes)


def register(
    result: CalibrationResult,
    registry: str | os.PathLike[str] | None = None,
    *,
    date: str | None = None,
) -> dict[str, Any]:
    """Append a graduated calibration to the registry (JSON lines); refuses a non-graduate.

    ``registry`` defaults to :func:`evalkit.calibration_status.default_registry_path`. A
    registry path that is a directory, or cannot be created or written for a missing parent or
    permissions, raises an ``EvalkitError`` that is also the matching ``OSError`` subclass
    (:mod:`evalkit.file_errors`) and names the path.
    """
    if not result.graduates or result.calibration_ref is None:
        raise EvalkitError(
            f"calibration of {result.dimension_id!r} did not graduate ({result.graduation_reason}); "
            "nothing registered — the judge stays 'uncalibrated'"
        )
    path = Path(registry) if registry is not None else default_registry_path()
    entry = {
        "dimension_id": result.dimension_id,
        "judge": result.judge,
        "calibration_status": result.calibration_status,
        "calibration_ref": result.calibration_ref,
        "gold_set": f"{result.gold_name}-v{result.gold_version}",
        "gold_sha256": result.gold_sha256,
        "kappa": result.kappa_ci.to_dict(),
        "n": result.n,
        "graduated": True,
        "date": date or _dt.datetime.now(_dt.UTC).date().isoformat(),
    }
    line = json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line)
    except OSError as exc:
        raise input_file_error(exc, "calibration registry", path) from exc
    return entry
