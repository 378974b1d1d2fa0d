"""The prevalence study's page: sentences, tables and the figure made from its estimates.

Everything from the data (labels, classes, judge names, item ids) is untrusted: it reaches
Markdown only through :mod:`evalkit.files.escape`, a figure only through ``plot_text``, and
tables as pandas frames (which escape HTML when rendered).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalkit.analyses._results import fmt_estimate
from evalkit.analyses.headline import Headline
from evalkit.analyses.prevalence import NO_LABEL, PrevalenceData, PrevalenceEstimates
from evalkit.files.escape import markdown_code, markdown_text, plot_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "assumption_text",
    "confusion_frame",
    "data_text",
    "estimates_frame",
    "headline",
    "plot_estimates",
    "truth_text",
    "undefined_text",
]

_COLOURS = {"naive": "#8c959f", "corrected": "#0969da", "PPI++": "#1a7f37", "human only": "#bc4c00"}


def _pct(x: float | None) -> str:
    return "undefined" if x is None else f"{100 * x:.1f}%"


def _who(labels: Any) -> str:
    return "" if labels.judge is None else f" (judge {markdown_code(labels.judge)})"


def data_text(data: PrevalenceData) -> str:
    """What was read: the target, the gold set, the human subsample; synthetic said plainly."""
    t, g = data.target, data.gold_judge
    judged_gold = sum(1 for i in g.item_ids if i in set(data.gold_ids))
    lines = []
    if data.synthetic:
        lines.append(
            "**Synthetic data.** Nothing here is a real judge, session or rater: the simulated "
            "model judge (`SimulatedModelJudge()` defaults) labels the gold set and a simulated "
            "target whose true class shares are known, so the page can show the truth beside the "
            "estimates (see `docs/DATA_CARD.md`)."
        )
    lines += [
        f"- Target: {t.n} items{_who(t)}, {t.n_labelled} with a label, "
        f"{t.n - t.n_labelled} without ({len(t.ties)} ties, {len(t.unlabelled)} with no "
        f"readable call); up to {t.max_repeats} call(s) per item.",
        f"- Gold set {markdown_code(data.gold_tag)} (sha256 "
        f"{markdown_code(data.gold_sha256[:12])}…): {len(data.gold_ids)} items, "
        f"{judged_gold} given in the judge's labels{_who(g)}, {g.n - g.n_labelled} of them "
        f"without a label ({len(g.ties)} ties).",
    ]
    h = data.human
    if h is None:
        lines.append("- Human labels: none, so no PPI++ estimate.")
    else:
        source = h.source if data.synthetic else "the human labels file"  # no machine path
        lines.append(
            f"- Human labels: {h.n} target items ({markdown_text(source)}), "
            f"{h.n_labelled} with a label; assumed a simple random sample of the target."
        )
    if t.judge is not None and g.judge is not None and t.judge != g.judge:
        lines.append(
            f"- **Note:** the target labels name judge {markdown_code(t.judge)}, the gold labels "
            f"{markdown_code(g.judge)}. The correction assumes they are one and the same judge."
        )
    if max(t.max_repeats, g.max_repeats) > 1:
        lines.append(
            "- Several calls per item: an item's label is the one strictly more of its readable "
            "calls gave than any other; a tie, or no readable call, leaves it without a label. "
            f"Such an item counts as the judge's outcome {markdown_code(NO_LABEL)} on the target "
            "and on the gold set alike: never a class, never dropped."
        )
    return "\n".join(lines)


def assumption_text(est: PrevalenceEstimates, data: PrevalenceData) -> str:
    """The assumptions in plain words."""
    text = (
        "**What the corrected share assumes:** the judge's error rates measured on the gold set "
        "hold on the target. For each true class, the judge gives each label (and leaves an "
        "item without one) as often on the target as it did on the gold items of that class. "
        "If the target's items are harder or easier for the judge than the gold items, the "
        "corrected shares are biased, and no interval on this page shows it."
    )
    if est.ppi is not None:
        text += (
            "\n\n**What PPI++ assumes instead:** the human-labelled items are a simple random "
            "sample of the target and their human labels are right. Nothing is assumed about "
            "the judge: its errors are measured on those very items, so a poor judge costs "
            "precision, never correctness."
        )
    if data.synthetic:
        text += (
            "\n\nOn this synthetic data both hold by construction: one simulated judge, with the "
            "same spread of item difficulty, labels the gold set and the target, and the human "
            "subsample is drawn at random with the true class as its label."
        )
    return text


def _cell(row: Mapping[str, Any]) -> str:
    if row["share"] is None:
        return "undefined (see below)"
    return fmt_estimate(row["share"], (row["low"], row["high"]), None, percent=True)


def _headers(est: PrevalenceEstimates) -> dict[str, str]:
    c = est.corrected
    heads = {
        "naive": f"naive: the judge's labels (n = {est.n_naive} labelled of {est.n_target})",
        "corrected": f"corrected (n = {c.n} target + {c.n_gold} gold)",
    }
    if est.ppi is not None:
        p = est.ppi
        heads["PPI++"] = f"PPI++ (n = {p.n} human + {p.n_unlabelled} judge only)"
        heads["human only"] = f"human only (n = {p.n})"
    return heads


def estimates_frame(est: PrevalenceEstimates, data: PrevalenceData) -> pd.DataFrame:
    """One row per class: the known truth (synthetic data) and each estimate with its CI."""
    import pandas as pd

    heads = _headers(est)
    by = {(r["class"], r["estimator"]): r for r in est.rows()}
    rows = []
    for c in est.classes:
        row: dict[str, str] = {"class": str(c)}
        if data.truth is not None:
            row["true share (synthetic)"] = _pct(data.truth.get(c, 0.0))
            row[f"realised in the {data.target.n} simulated items"] = _pct(
                (data.realised or {}).get(c, 0.0)
            )
        for name, head in heads.items():
            row[head] = _cell(by[(c, name)])
        rows.append(row)
    return pd.DataFrame(rows).set_index("class")


def confusion_frame(est: PrevalenceEstimates) -> pd.DataFrame | None:
    """The judge's outcome shares per true class on the gold set (rows sum to 100%)."""
    import pandas as pd

    c = est.corrected
    if c.confusion is None:
        return None
    rows = []
    for cls, row in c.confusion.items():
        out = {"gold label": str(cls), "gold items": int(c.gold_counts[cls])}
        out.update({f"judge: {lab}": _pct(p) for lab, p in row.items()})
        rows.append(out)
    return pd.DataFrame(rows).set_index("gold label")


def undefined_text(est: PrevalenceEstimates) -> str:
    """Every figure that is undefined, and why; every warning the estimators gave."""
    lines = []
    c = est.corrected
    if not c.defined:
        lines.append(
            f"- **Corrected shares undefined:** {markdown_text(c.reason)}. No corrected share "
            "is given rather than a wrong one; the naive, PPI++ and human-only shares do not "
            "depend on it."
        )
    beyond = [cls for cls in est.classes if cls not in c.classes]
    if beyond:
        named = ", ".join(markdown_code(cls) for cls in beyond)
        lines.append(
            f"- Humans gave {named}, which no gold item has: the judge's error rates on such "
            "items are unknown, so it has no corrected share."
        )
    if est.ppi is not None and not est.ppi.defined:
        lines.append(f"- **PPI++ undefined:** {markdown_text(est.ppi.reason)}.")
    if est.other_labels:
        seen = ", ".join(f"{markdown_code(k)} ({v} items)" for k, v in est.other_labels.items())
        lines.append(
            f"- The judge also gave labels that are no gold class on the target: {seen}. They "
            "count in the naive n, and the correction reads them as outcomes of the judge."
        )
    reasons = [r for r in (c.reason, est.ppi.reason if est.ppi is not None else None) if r]
    notes = [n for n in est.notes if not any(r in n for r in reasons)]  # said above already
    lines += [f"- Note from the estimators: {markdown_text(n)}" for n in notes]
    if not lines:
        return "Every figure on this page is defined: no undefined case occurred on these data."
    return "\n".join(lines)


def _covers(row: Mapping[str, Any], truth: float) -> bool:
    return row["low"] is not None and row["high"] is not None and row["low"] <= truth <= row["high"]


def truth_text(est: PrevalenceEstimates, data: PrevalenceData) -> str:
    """Which intervals cover the known true share (synthetic data only)."""
    if data.truth is None:
        return "The true shares of this target are unknown (real data): no check against them."
    parts = []
    for name in _headers(est):
        rows = [r for r in est.rows() if r["estimator"] == name and r["class"] in data.truth]
        hit = [r for r in rows if _covers(r, data.truth[r["class"]])]
        parts.append(f"{name} {len(hit)} of {len(rows)}")
    return (
        f"Intervals ({100 * est.level:g}%) that cover the known true share: "
        + "; ".join(parts)
        + ". One run is not a coverage study: a 95% interval misses the truth about once in "
        "20 runs (the seeded coverage simulation is tests/test_prevalence_coverage.py)."
    )


def _span(points: list[float]) -> tuple[float, float]:
    """An x range around ``points`` at least 12 points wide, inside [0, 1]."""
    lo, hi = min(points), max(points)
    pad = max(0.03, (0.12 - (hi - lo)) / 2)
    lo, hi = max(0.0, lo - pad), min(1.0, hi + pad)
    return lo, hi


def _tick(head: str) -> str:
    name, _, n = head.partition(" (")
    return plot_text(name) + (f"\n({plot_text(n)}" if n else "")


def plot_estimates(est: PrevalenceEstimates, data: PrevalenceData) -> Figure:
    """Per class, each estimator's share with its interval (value written beside it); the
    known truth of synthetic data as a dashed line."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    heads = _headers(est)
    names = list(reversed(list(heads)))  # the first estimator at the top
    k = len(est.classes)
    fig, axes = plt.subplots(1, k, figsize=(3.6 * k + 2.4, 0.75 * len(names) + 1.5), sharey=True)
    axes = [axes] if k == 1 else list(axes)
    by = {(r["class"], r["estimator"]): r for r in est.rows()}
    for ax, cls in zip(axes, est.classes, strict=True):
        rows = [by[(cls, name)] for name in names]
        truth = None if data.truth is None else data.truth.get(cls)
        points = [x for r in rows for x in (r["share"], r["low"], r["high"]) if x is not None]
        lo, hi = _span(points + ([truth] if truth is not None else []) or [0.0, 1.0])
        for y, (name, r) in enumerate(zip(names, rows, strict=True)):
            _draw(ax, y, r, _COLOURS[name], (lo + hi) / 2)
        if truth is not None:
            ax.axvline(truth, color="black", ls="--", lw=1.2, label="known true share (synthetic)")
        ax.set_title(plot_text(cls))
        ax.set_xlim(lo, hi)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 5, 10]))
        ax.xaxis.set_major_formatter(PercentFormatter(xmax=1, decimals=0))
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(names)), [_tick(heads[n]) for n in names], fontsize=8)
    axes[0].set_ylim(-0.6, len(names) - 0.4)
    if data.truth is not None:
        axes[-1].legend(loc="upper right", fontsize=8, bbox_to_anchor=(1.0, -0.12))
    fig.suptitle(f"Share of each class on the target: estimate and {100 * est.level:g}% interval")
    fig.tight_layout()
    plt.close(fig)
    return fig


def _draw(ax: Any, y: int, row: Mapping[str, Any], colour: str, middle: float) -> None:
    if row["share"] is None:
        ax.text(middle, y, "undefined", ha="center", va="center", color=colour, fontsize=9)
        return
    if row["low"] is not None and row["high"] is not None:
        ax.hlines(y, row["low"], row["high"], color=colour, lw=3, alpha=0.8)
    ax.plot([row["share"]], [y], "o", color=colour, ms=7)
    ax.annotate(_cell(row), (row["share"], y), xytext=(0, 7), textcoords="offset points",
                ha="center", fontsize=7.5, color=colour)  # fmt: skip


# ------------------------------------------------------------------------ the landing headline


def _share(name: str, row: Mapping[str, Any] | None, n_text: str) -> str:
    from evalkit.finite import finite_float

    if row is None or finite_float(row.get("share")) is None:
        return f"{name} undefined"
    ci = (finite_float(row.get("low")), finite_float(row.get("high")))
    return f"{name} {fmt_estimate(finite_float(row['share']), ci, None, percent=True)} ({n_text})"


def _line(res: Mapping[str, Any], cls: str) -> str:
    from evalkit.finite import finite_float

    rows = {r["estimator"]: r for r in res["estimates"] if r["class"] == cls}
    n = {name: (row or {}).get("n") for name, row in rows.items()}
    gold = (res.get("corrected") or {}).get("n_gold")
    parts = [
        _share("corrected", rows.get("corrected"), f"n = {n.get('corrected')} target, {gold} gold"),
        _share("naive", rows.get("naive"), f"n = {n.get('naive')} labelled by the judge"),
    ]
    if "PPI++" in rows:
        parts.append(_share("PPI++", rows["PPI++"], f"n = {n.get('PPI++')} human-labelled"))
    truth = finite_float((res.get("truth") or {}).get(cls)) if res.get("synthetic") else None
    if truth is not None:
        parts.append(f"known true share {100 * truth:.1f}% (synthetic)")
    return f"share of {cls!r}: " + "; ".join(parts)


def headline(res: Mapping[str, Any]) -> Headline:
    """The prevalence study's headline from its results: the shares of ``fail`` (else the first
    class) side by side; the other classes and what the estimates assume one click away."""
    from evalkit.finite import finite_float

    classes = list(res["classes"])
    lead = "fail" if "fail" in classes else classes[0]
    level = finite_float(res.get("level")) or 0.95
    text = _line(res, lead) + f"; {100 * level:g}% intervals"
    details = [_line(res, c) + "." for c in classes if c != lead]
    corrected = res.get("corrected") or {}
    advisory = None
    if corrected.get("reason"):
        advisory = f"Corrected shares undefined: {corrected['reason']}."
    details.append(
        "Assumption of the corrected share: the judge's error rates measured on the gold set "
        "hold on the target."
    )
    ppi = res.get("ppi") or {}
    if ppi.get("reason"):
        details.append(f"PPI++ undefined: {ppi['reason']}.")
    if res.get("synthetic"):
        details.append("Synthetic data: a simulated judge over a simulated target (data card).")
    row: Mapping[str, Any] = next(
        (r for r in res["estimates"] if r["class"] == lead and r["estimator"] == "corrected"), {}
    )
    share = finite_float(row.get("share"))
    figure = f"{lead} {_pct(share)} (corrected)" if share is not None else f"{lead} undefined"
    return Headline(text, tuple(details), advisory, figure=figure)
