"""Judge calibration study: model judges (K repeats per item) and the rule judge vs gold.

All statistics come from ``evalkit.calibration.calibrate`` (Cohen's κ with a BCa interval —
for a model judge on every labelled call and on the majority label, items resampled —,
consistency over repeats, confusion matrix, per-class sensitivity/specificity, agreement per
deciding gold rule, the pre-registered graduation decision). This module loads the judges'
labels (a run log or labels file, or by default a simulated model judge: synthetic), and turns
the results into tables, figures and sentences (:mod:`evalkit.analyses.judge_consistency` holds
the model judges' side-by-side views). Until a calibration graduates and is registered, every
judge figure is advisory.
"""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.display import Readable
from evalkit.errors import EvalkitError
from evalkit.extras import require
from evalkit.files.escape import markdown_code, markdown_text, plot_text
from evalkit.provenance.repository import REPO_ROOT

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "JUDGES",
    "CalibrationStudy",
    "JudgeCalibration",
    "ModelJudgeData",
    "advisory_label",
    "advisory_text",
    "confusion_frame",
    "decision_text",
    "default_gold_path",
    "disagreements",
    "gold_text",
    "judge_labels",
    "load_gold",
    "load_model_judges",
    "per_class_caption",
    "per_class_frame",
    "per_rule_frame",
    "plot_confusion",
    "run",
    "run_all",
    "study_figures",
    "study_no_lock",
    "summary_text",
]

JUDGES: tuple[str, ...] = ("rules",)
#: The name the rule judge carries on the page, in results and in a certificate (as the CLI).
#: (``evalkit.calibration._inputs.RULE_JUDGE_NAME``, written out: this module loads lazily)
RULE_JUDGE = "rule-judge (evalkit.judge.apply_rules)"
DEFAULT_GOLD = "gold/instruction-adherence"


def default_gold_path() -> Path:
    """The committed gold set: beside this package in a checkout, else found from the cwd up.

    The cwd search serves a non-editable install run inside a clone (JupyterLab's cwd is the
    notebook's folder, so a plain relative path would not do).
    """
    candidates = [REPO_ROOT / DEFAULT_GOLD]
    cwd = Path.cwd().resolve()
    candidates += [d / DEFAULT_GOLD for d in (cwd, *cwd.parents)]
    for path in candidates:
        if path.is_dir():
            return path
    raise EvalkitError(
        f"the default gold set {DEFAULT_GOLD!r} was not found beside evalkit or above "
        f"{cwd}; give gold_path"
    )


def load_gold(gold_path: str = "") -> Any:
    """``evalkit.gold.sets.load`` of ``gold_path``, or of the committed instruction-adherence set."""
    from evalkit.gold import sets as gold

    path = Path(gold_path) if gold_path else default_gold_path()
    if not path.exists():
        raise EvalkitError(f"gold set {str(path)!r} not found (give gold_path)")
    return gold.load(path)


def gold_text(gold: Any) -> str:
    """One line naming the gold set (its manifest name is untrusted: escaped), n and balance."""
    balance = ", ".join(
        f"{markdown_code(k)} {markdown_text(v)}" for k, v in gold.class_balance.items()
    )
    return (
        f"Gold set {markdown_code(gold.tag)} (sha256 {markdown_code(str(gold.sha256)[:12])}…): "
        f"n = {gold.n_items} items; gold labels: {balance}."
    )


def judge_labels(gold: Any, judge: str = "rules") -> pd.DataFrame:
    """Labels of the chosen judge for every gold item (``item_id, label, rule, reason``)."""
    from evalkit.calibration import rule_judge_labels

    if judge not in JUDGES:
        raise EvalkitError(f"unknown judge {judge!r}; available: {', '.join(JUDGES)}")
    return rule_judge_labels(gold)


@dataclass(frozen=True, repr=False)
class CalibrationStudy(Readable):
    """The calibration result plus the notes ``calibrate`` wrote to stderr (paths shortened)."""

    result: Any
    notes: tuple[str, ...] = ()
    registered: bool = False  # a graduated entry for exactly this status + ref is in the registry

    @property
    def advisory(self) -> bool:
        """Judge figures are advisory until the calibration graduates AND is registered."""
        return not (self.result.graduates and self.registered)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.result, name)

    def _headline(self) -> str:
        return repr(self.result) + ("" if self.registered else " (not registered)")

    def _rows(self) -> list[tuple[str, Any]]:
        return [*self.result._rows(), *(("note", n) for n in self.notes)]


def study_no_lock() -> bool:
    """True when ``evalkit study run --no-lock`` runs this notebook: its calibrations then run
    without a lock too (stated in each result, never mintable), as the page says."""
    from evalkit.studies.run import NO_LOCK_ENV

    return os.environ.get(NO_LOCK_ENV) == "1"


def run(
    judge: Any,
    gold: Any,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    no_lock: bool | None = None,
    root: str | os.PathLike[str] | None = None,
    name: str | None = None,
) -> CalibrationStudy:
    """``evalkit.calibration.calibrate`` of the judge's labels against ``gold``.

    ``judge``: a labels DataFrame or :class:`~evalkit.calibration.JudgeLabels`; ``name`` the
    judge's name (default: the labels' own, else "unnamed judge"). ``no_lock``
    defaults to :func:`study_no_lock`; ``root`` is the repository whose lock and certificates
    the result is checked against (default: evalkit's own).
    """
    from evalkit.calibration import calibrate

    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        result = calibrate(
            judge,
            gold,
            n_resamples=n_resamples,
            rng=seed,
            no_lock=study_no_lock() if no_lock is None else no_lock,
            root=root,
            judge=name,
        )
    notes = tuple(
        line.replace(str(REPO_ROOT) + os.sep, "").replace(str(REPO_ROOT), ".")
        for line in buf.getvalue().splitlines()
        if line
    )
    return CalibrationStudy(result, notes, _registered(result))


def _registered(result: Any) -> bool:
    """Does the result's repository hold a verified certificate for exactly this result?"""
    from evalkit.calibration import is_registered

    return bool(is_registered(result))


@dataclass(frozen=True)
class ModelJudgeData:
    """The model judges' labels of a study: each judge's calls, and where they came from."""

    judges: tuple[Any, ...]  # evalkit.calibration.JudgeLabels, one per judge
    synthetic: bool
    source: str  # "" for the simulated default, else the path given

    def describe(self) -> str:
        """One sentence for the page: synthetic or which file, the judges and their K."""
        from evalkit.files.escape import markdown_code, markdown_text

        named = ", ".join(f"{markdown_code(j.judge)} (K = {j.repeats})" for j in self.judges)
        if self.synthetic:
            return (
                f"**Synthetic data.** The model judge here is simulated: {named} labels every "
                "gold item K times from a known per-class confusion, with per-item difficulty "
                "shared by an item's repeats and parse failures as outcomes "
                "(`evalkit.simulate.SimulatedModelJudge` defaults; see docs/DATA_CARD.md). No "
                "model was called; its figures describe the simulator, not any real judge."
            )
        shown = "/".join(Path(self.source).parts[-2:])
        return f"Labels read from {markdown_text('…/' + shown)}: {named}."


def load_model_judges(
    labels_path: str, gold: Any, *, repeats: int = 5, seed: int = 0
) -> ModelJudgeData:
    """Every judge of ``labels_path`` (a run log or labels file), or when it is "" the simulated
    model judge over ``gold`` (its defaults, ``repeats`` calls per item, seeded by ``seed``)."""
    from evalkit.calibration import labels_from_frame, read_labels

    if not labels_path:
        from evalkit.simulate import SimulatedModelJudge

        items = gold.items
        frame = SimulatedModelJudge().label(
            list(items["label"]), list(items["item_id"]), repeats=repeats, rng=seed
        )
        labels = labels_from_frame(frame, source="simulated model judge", model_judge=True)
        return ModelJudgeData((labels,), True, "")
    path = Path(labels_path)
    names = _judge_names(path)
    judges = tuple(read_labels(path, name) for name in names)
    return ModelJudgeData(judges, False, labels_path)


def _judge_names(path: Path) -> list[str | None]:
    """The judges a run log or labels file holds (``[None]``: one, unnamed)."""
    from evalkit.calibration.labels import is_runlog, read_labels_table

    if is_runlog(path):
        from evalkit.judge.runlog import read_runlog

        return list(read_runlog(path).judges())
    table = read_labels_table(path)
    if "judge" not in table.columns:
        return [None]
    return [str(j) for j in dict.fromkeys(table["judge"].dropna())] or [None]


@dataclass(frozen=True, repr=False)
class JudgeCalibration(Readable):
    """A study's calibrations: each model judge's and the rule judge's, and the data."""

    model: tuple[CalibrationStudy, ...]
    rule: CalibrationStudy
    data: ModelJudgeData

    @property
    def studies(self) -> tuple[CalibrationStudy, ...]:
        return (*self.model, self.rule)

    def _headline(self) -> str:
        verdicts = ", ".join(
            f"{s.result.judge} {'graduates' if s.result.graduates else 'does not graduate'}"
            for s in self.studies
        )
        return f"{len(self.studies)} calibrations: {verdicts}"

    def _rows(self) -> list[tuple[str, Any]]:
        return [(str(s.result.judge), repr(s)) for s in self.studies]


def run_all(
    data: ModelJudgeData,
    gold: Any,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    no_lock: bool | None = None,
    root: str | os.PathLike[str] | None = None,
) -> JudgeCalibration:
    """Calibrate every model judge of ``data`` and the rule judge against ``gold``."""
    kw: dict[str, Any] = {"n_resamples": n_resamples, "seed": seed, "no_lock": no_lock}
    model = tuple(run(j, gold, root=root, **kw) for j in data.judges)
    rule = run(judge_labels(gold), gold, root=root, name=RULE_JUDGE, **kw)
    return JudgeCalibration(model, rule, data)


def advisory_label(result: Any) -> str:
    """``*(advisory: …)*`` for a judge figure, or "" once graduated and registered."""
    return _advisory(result).strip()


def _advisory(result: Any) -> str:
    if not result.graduates:
        return " *(advisory: not graduated)*"
    if not getattr(result, "registered", False):
        return " *(advisory: graduated, not registered)*"
    return ""


def advisory_text(result: Any) -> str:
    """One sentence: are the judge figures on this page advisory, and why."""
    if not result.graduates:
        return (
            "**Advisory.** This calibration does not graduate under its pre-registered rule: "
            "every judge figure here describes the judge and licenses none of its verdicts; "
            "judge dimensions stay `uncalibrated`."
        )
    if not getattr(result, "registered", False):
        return (
            "**Advisory.** This calibration graduates under its pre-registered rule but is not "
            "registered (`evalkit calibrate` registers it). Until it is, every judge figure here "
            "is advisory and judge dimensions stay `uncalibrated`."
        )
    return (
        f"Registered calibration: judge dimensions may carry "
        f"{markdown_code(result.calibration_status)} together with its calibration_ref."
    )


def _ci(e: Any) -> str:
    if e.statistic is None:
        return "undefined"
    if e.low is None or e.high is None:
        return f"{e.statistic:.3f} [CI undefined], n = {e.n}"
    return f"{e.statistic:.3f} [{e.low:.3f}, {e.high:.3f}], n = {e.n}"


def summary_text(result: Any) -> str:
    """Agreement with gold in a few lines, each figure with its interval, n and method."""
    k = result.kappa_ci
    ac1, pb = result.ac1_ci, result.pabak_ci
    adv = _advisory(result)
    reps = getattr(result, "repeats", None)
    if reps is None:
        lines = [f"- Cohen's κ (judge vs gold): {_ci(k)} — {k.method}{adv}"]
    else:
        ties = len(reps.majority_ties)
        lines = [
            f"- Cohen's κ on every labelled call (n = calls; {reps.repeats} repeats per item, "
            f"{reps.n_items} items): {_ci(k)} — {k.method}{adv}",
            f"- Cohen's κ on the per-item majority label (n = items): "
            f"{_ci(reps.kappa_majority)} — {reps.kappa_majority.method}; {ties} tie(s) left "
            f"out, never broken{adv}",
        ]
    cats = "4 categories" if reps is not None and len(reps.categories) == 4 else "3 classes"
    lines += [
        f"- Gwet's AC1: {_ci(ac1)}{adv}",
        f"- PABAK ({cats}): {_ci(pb)}{adv}",
        f"- Gold items the judge did not label (missing, never guessed): {result.n_missing}",
    ]
    lines += [f"- Note: {markdown_text(n)}" for n in getattr(result, "notes", ())]
    return "\n".join(lines)


def confusion_frame(result: Any) -> pd.DataFrame:
    """Counts, rows = gold label, columns = judge label, with margins."""
    conf = result.confusion.copy()
    conf.index.name, conf.columns.name = "gold", "judge"
    conf["total (gold)"] = conf.sum(axis=1)
    conf.loc["total (judge)"] = conf.sum(axis=0)
    return conf


def plot_confusion(result: Any) -> Figure:
    require("matplotlib", purpose="the plots")
    import matplotlib.pyplot as plt

    conf = result.confusion
    fig, ax = plt.subplots(figsize=(4.8, 4.0))
    ax.imshow(conf.to_numpy(), cmap="Blues")
    for i in range(conf.shape[0]):
        for j in range(conf.shape[1]):
            value = int(conf.iloc[i, j])
            colour = "white" if value > conf.to_numpy().max() / 2 else "black"
            ax.text(j, i, str(value), ha="center", va="center", fontsize=11, color=colour)
    ax.set_xticks(range(conf.shape[1]), [plot_text(c) for c in conf.columns], rotation=15)
    ax.set_yticks(range(conf.shape[0]), [plot_text(c) for c in conf.index])
    ax.set_xlabel("judge")
    ax.set_ylabel("gold")
    advisory = " — advisory" if getattr(result, "advisory", not result.graduates) else ""
    reps = getattr(result, "repeats", None)
    n = (
        f"n = {int(conf.to_numpy().sum())} labelled calls, {result.n} items"
        if reps is not None
        else f"n = {result.n} items"
    )
    ax.set_title(f"{plot_text(result.judge)[:48]} vs gold ({n}){advisory}", fontsize=10)
    fig.tight_layout()
    plt.close(fig)
    return fig


def _pct(v: Any, lo: Any, hi: Any) -> str:
    if v is None or v != v:
        return "undefined"
    if lo is None or hi is None or lo != lo or hi != hi:
        return f"{100 * v:.1f}% [CI undefined]"
    return f"{100 * v:.1f}% [{100 * lo:.1f}%, {100 * hi:.1f}%]"


def per_class_caption(result: Any) -> str:
    """What the per-class and per-rule tables hold, with their advisory label."""
    label = advisory_label(result)
    basis = (
        "On each item's majority label (items with a tie left out, one label per item so the "
        "Wilson intervals hold). "
        if getattr(result, "repeats", None) is not None
        else ""
    )
    return (
        (f"Judge figures {label}. " if label else "")
        + basis
        + (
            "Wilson 95% CIs; sensitivity's n is the items gold puts in the class, specificity's n "
            "all the other items; per rule, n is the items that rule decided."
        )
    )


def per_class_frame(result: Any) -> pd.DataFrame:
    """Sensitivity and specificity per class with their Wilson 95% CIs and n.

    Sensitivity's n is the items gold puts in the class; specificity's n is all the others.
    """
    df = result.per_class
    total = int(df["n_gold"].sum())
    out = df[["class", "n_gold", "n_judge"]].copy()
    out["sensitivity [95% CI], n"] = [
        _pct(r.sensitivity, r.sensitivity_low, r.sensitivity_high) + f", n = {int(r.n_gold)}"
        for r in df.itertuples()
    ]
    out["specificity [95% CI], n"] = [
        _pct(r.specificity, r.specificity_low, r.specificity_high)
        + f", n = {total - int(r.n_gold)}"
        for r in df.itertuples()
    ]
    return out.set_index("class")


def per_rule_frame(result: Any) -> pd.DataFrame:
    """Agreement per deciding gold rule (1-6) with Wilson 95% CIs and n."""
    df = result.per_rule
    out = df[["rule", "n", "agree"]].copy()
    out["agreement [95% CI], n"] = [
        f"{_pct(r.agreement, None, None)} (n = 1, no CI)"
        if r.n == 1
        else _pct(r.agreement, r.agreement_low, r.agreement_high) + f", n = {int(r.n)}"
        for r in df.itertuples()
    ]
    return out.set_index("rule")


def decision_text(result: Any) -> str:
    """The pre-registered rule and the decision, in sentences (the rule's fields escaped)."""
    rule = result.decision_rule
    g = rule.get("graduate_if", {})

    def t(value: Any) -> str:
        return markdown_text(value)

    extra = ""
    if "repeat_kappa_ci_low_at_least" in g:
        extra += (
            f", Fleiss κ across repeats CI lower bound ≥ {t(g.get('repeat_kappa_ci_low_at_least'))}"
        )
    if "failed_calls_share_at_most" in g:
        share = g.get("failed_calls_share_at_most")
        shown = f"{100 * share:g}%" if isinstance(share, int | float) else str(share)
        extra += f", calls without a label ≤ {markdown_text(shown)}"
    head = (
        f"Pre-registered rule ({markdown_code(rule.get('path'))}, sha256 "
        f"{markdown_code(str(rule.get('sha256', ''))[:12])}…, frozen {t(rule.get('frozen_on'))}): "
        f"graduate iff the κ CI lower bound ≥ {t(g.get('kappa_ci_low_at_least'))}, n ≥ "
        f"{t(g.get('n_at_least'))} and missing ≤ {t(g.get('missing_at_most'))}{extra}; "
        f"otherwise {markdown_code(rule.get('otherwise'))}."
    )
    verdict = "**graduates**" if result.graduates else "**does not graduate**"
    ci = rule.get("ci", {})
    pre_n, pre_rng = ci.get("n_resamples"), ci.get("rng")
    interval = ""
    if pre_n is not None and (result.n_resamples != pre_n or result.rng != pre_rng):
        interval = (
            f" The decision uses the pre-registered interval ({t(pre_n)} resamples, rng "
            f"{t(pre_rng)}); the intervals shown above use this run's {t(result.n_resamples)} "
            f"resamples (rng {t(result.rng)}), so their bounds can differ slightly from the "
            "decision's."
        )
    registered = (
        "It is registered."
        if getattr(result, "registered", False)
        else "It is not registered: this page does not register a calibration, "
        "`evalkit calibrate` does, and only a registered calibration lets a record carry that "
        "status."
    )
    return (
        f"{head}\n\nDecision: {verdict} — {t(result.graduation_reason)}.{interval} "
        f"Resulting calibration status: {markdown_code(result.calibration_status)}. {registered}"
    )


def disagreements(result: Any) -> pd.DataFrame:
    """Every item where judge and gold differ, with the gold rule and rationale."""
    df = result.disagreements.copy()
    return df.set_index("item_id") if "item_id" in df.columns else df


def _judge_figures(study: CalibrationStudy, kind: str) -> dict[str, Any]:
    d: dict[str, Any] = study.result.to_dict()
    d["kind"] = kind
    d["registered"] = study.registered
    d["advisory"] = study.advisory
    d["notes"] = list(study.notes)
    return d


def study_figures(jc: JudgeCalibration) -> dict[str, Any]:
    """Machine-readable figures for results.json (every judge figure advisory unless graduated
    and registered). The top-level ``calibration``, ``kappa``, ``graduates``, ``registered``,
    ``calibration_status`` and ``advisory`` are the first model judge's; ``judges`` holds every
    model judge, ``rule_judge`` the deterministic rater beside them."""
    judges = [_judge_figures(s, "model") for s in jc.model]
    first = judges[0]
    data = jc.data
    return {
        "data": {
            "synthetic": data.synthetic,
            "source": "simulated model judge"
            if data.synthetic
            else "/".join(Path(data.source).parts[-2:]),
            "judges": [j.judge for j in data.judges],
            "repeats": [j.repeats for j in data.judges],
        },
        "judges": judges,
        "rule_judge": _judge_figures(jc.rule, "rule"),
        "calibration": first,
        "kappa": first["kappa"],
        "consistency": first.get("repeats"),
        "graduates": first["graduates"],
        "registered": first["registered"],
        "calibration_status": first["calibration_status"],
        "advisory": first["advisory"],
    }
