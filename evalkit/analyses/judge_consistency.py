"""Model judges side by side: agreement with gold beside their consistency over repeats.

Views of the judge-calibration study's results (:class:`evalkit.analyses.calibration.
JudgeCalibration`): one table with a row per judge (the model judges and the rule judge, the
deterministic rater), a figure of the same figures with their intervals against the
pre-registered bars, and per model judge its consistency in sentences and its calls per
outcome. Every figure comes from the calibration result; nothing is computed here but layout.
Judge names are untrusted text (a run log says them): escaped where they reach Markdown or a
plot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit.analyses._results import fmt_estimate
from evalkit.files.escape import markdown_code, plot_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["consistency_text", "outcomes_frame", "overview_frame", "plot_overview"]

_OUTCOME_NAMES = {
    "ok": "labelled (ok)",
    "cannot-parse": "cannot-parse (a reply, no label)",
    "error": "error (no reply)",
    "not-run": "not run (absent from the labels)",
}


def _est(e: Any, percent: bool = False, n: bool = True) -> str:
    if e is None:
        return "—"
    return fmt_estimate(e.statistic, (e.low, e.high), e.n if n else None, percent=percent)


def _verdict(study: Any) -> str:
    r = study.result
    if r.graduates and study.registered:
        return f"graduates, registered ({r.calibration_status})"
    if r.graduates:
        return "graduates (advisory: not registered)"
    return "does not graduate (advisory)"


def overview_frame(jc: Any) -> pd.DataFrame:
    """One row per judge: kappa on all calls and on the majority, consistency, calls without a
    label and the verdict, each figure ``estimate [95% CI], n``."""
    import pandas as pd

    rows = []
    for study in jc.studies:
        r = study.result
        reps = r.repeats
        row: dict[str, Any] = {
            "judge": r.judge,
            "kind": f"model judge, K = {reps.repeats}" if reps is not None else "rule judge",
            "κ vs gold, every call [95% CI], n calls": _est(r.kappa_ci),
        }
        if reps is None:
            row["κ vs gold, majority label [95% CI], n items"] = _est(r.kappa_ci) + " (one label)"
            row["Fleiss κ across repeats [95% CI], n items"] = "n/a (deterministic)"
            row["flip rate [Wilson 95% CI], n items"] = "n/a (deterministic)"
            row["calls without a label"] = f"{r.n_missing} item(s) missing"
        else:
            ties = len(reps.majority_ties)
            row["κ vs gold, majority label [95% CI], n items"] = (
                _est(reps.kappa_majority) + f"; {ties} tie(s) left out"
            )
            row["Fleiss κ across repeats [95% CI], n items"] = _est(reps.repeat_kappa)
            row["flip rate [Wilson 95% CI], n items"] = _est(reps.flip_rate, percent=True)
            row["calls without a label"] = f"{reps.n_failed} of {reps.calls['expected']}: " + _est(
                reps.failed_calls, percent=True, n=False
            )
        row["verdict (pre-registered rule)"] = _verdict(study)
        rows.append(row)
    return pd.DataFrame(rows).set_index("judge")


def consistency_text(study: Any) -> str:
    """A model judge's consistency over its repeats, in sentences (Markdown, names escaped)."""
    r = study.result
    reps = r.repeats
    if reps is None:
        return f"{markdown_code(r.judge)} gives one label per item: no repeats to compare."
    ties = reps.majority_ties
    listed = ", ".join(markdown_code(t) for t in ties[:8]) + (", …" if len(ties) > 8 else "")
    calls = reps.calls
    return "\n".join(
        [
            f"- {markdown_code(r.judge)}: K = {reps.repeats} repeats per item; "
            f"{reps.n_items} of {r.n_gold} gold items carry at least one label.",
            f"- Fleiss κ across repeats (the repeats as raters): {_est(reps.repeat_kappa)} "
            f"items — {reps.repeat_kappa.method}.",
            f"- Flip rate (items whose labelled repeats disagree): "
            f"{_est(reps.flip_rate, percent=True)} items (Wilson 95% CI); {reps.flips} items "
            "flip.",
            f"- Majority label: {len(ties)} item(s) tie for the top label and have none — "
            "counted, shown, never broken" + (f" ({listed})." if ties else "."),
            f"- Calls without a label: {reps.n_failed} of {calls['expected']} "
            f"({_est(reps.failed_calls, percent=True, n=False)}): cannot-parse "
            f"{calls['cannot-parse']}, error {calls['error']}, not run {calls['not-run']}; "
            "never a label, never guessed.",
        ]
    )


def outcomes_frame(study: Any) -> pd.DataFrame:
    """Calls per outcome, as shares of the calls the design asked for (items x K)."""
    import pandas as pd

    reps = study.result.repeats
    if reps is None:
        return pd.DataFrame()
    rows = [
        {
            "outcome": _OUTCOME_NAMES[k],
            "calls": reps.calls[k],
            "share [Wilson 95% CI], n calls": _est(reps.outcomes[k], percent=True),
        }
        for k in ("ok", "cannot-parse", "error", "not-run")
    ]
    return pd.DataFrame(rows).set_index("outcome")


def _bar(ax: Any, y: float, e: Any, colour: str, scale: float = 1.0) -> None:
    if e is None or e.statistic is None:
        ax.text(0.02, y, "undefined", fontsize=8, va="center", transform=ax.get_yaxis_transform())
        return
    lo = e.statistic if e.low is None else e.low
    hi = e.statistic if e.high is None else e.high
    ax.plot([scale * lo, scale * hi], [y, y], color=colour, linewidth=2.5)
    ax.plot(scale * e.statistic, y, "o", color=colour)


def _name(judge: str, width: int = 24) -> str:
    """A judge's name for a plot axis: escaped for matplotlib, wrapped, at most three lines."""
    import textwrap

    lines = textwrap.wrap(plot_text(judge), width, break_long_words=False) or [""]
    return "\n".join(lines[:3]) + ("…" if len(lines) > 3 else "")


def _bars(jc: Any) -> tuple[list[str], list[tuple[Any, str]]]:
    names, kappas = [], []
    for study in jc.studies:
        r = study.result
        if r.repeats is None:
            names.append(f"{_name(r.judge)}\n(rule judge)")
            kappas.append((r.kappa_ci, "#55a868"))
        else:
            names += [f"{_name(r.judge)}\nevery call", f"{_name(r.judge)}\nmajority label"]
            kappas += [(r.kappa_ci, "#4c72b0"), (r.repeats.kappa_majority, "#8172b2")]
    return names, kappas


def _panel(
    ax: Any, rows: list[tuple[str, Any]], colour: str, title: str, scale: float = 1.0
) -> None:
    for i, (_, e) in enumerate(rows):
        _bar(ax, i, e, colour, scale)
    ax.set_yticks(range(len(rows)), [name for name, _ in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_title(title, fontsize=9)


def _mark(ax: Any, value: float | None, scale: float = 1.0) -> None:
    if value is not None:
        ax.axvline(scale * value, color="#c44e52", linestyle="--", linewidth=1)


def plot_overview(jc: Any) -> Figure:
    """κ vs gold (every call, majority, rule judge), Fleiss κ across repeats, flip rate and
    calls without a label, each with its 95% interval, against the pre-registered bars."""
    import matplotlib.pyplot as plt

    model = [s.result for s in jc.studies if s.result.repeats is not None]
    names, kappas = _bars(jc)
    fig, axes = plt.subplots(
        1,
        4,
        figsize=(14, 1.6 + 0.75 * max(len(names), 2)),
        gridspec_kw={"width_ratios": [3, 2, 2, 2]},
    )
    ax = axes[0]
    for i, (e, colour) in enumerate(kappas):
        _bar(ax, i, e, colour)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_xlim(-0.1, 1.0)
    _mark(ax, _rule_bar(jc, "kappa_ci_low_at_least"))
    ax.set_title("Cohen's κ vs gold (BCa 95% CI, items resampled)", fontsize=9)
    title = "Fleiss κ across repeats\n(BCa 95% CI)"
    _panel(axes[1], [(_name(r.judge), r.repeats.repeat_kappa) for r in model], "#4c72b0", title)
    axes[1].set_xlim(-0.1, 1.0)
    _mark(axes[1], _rule_bar(jc, "repeat_kappa_ci_low_at_least"))
    title = "flip rate, % of items\n(Wilson 95% CI)"
    _panel(axes[2], [(_name(r.judge), r.repeats.flip_rate) for r in model], "#dd8452", title, 100)
    axes[2].set_xlim(0, 100)
    rows = [(_name(r.judge), r.repeats.failed_calls) for r in model]
    title = "calls without a label, %\n(Wilson 95% CI)"
    _panel(axes[3], rows, "#937860", title, 100)
    highest = max([e.high or 0.0 for _, e in rows] + [0.05])
    axes[3].set_xlim(0, 100 * min(1.0, 1.2 * highest))
    _mark(axes[3], _rule_bar(jc, "failed_calls_share_at_most"), 100)
    fig.suptitle(
        "Model judges beside the rule judge — dashed: the pre-registered bars "
        "(advisory unless graduated and registered)",
        fontsize=10,
    )
    fig.tight_layout()
    plt.close(fig)
    return fig


def _rule_bar(jc: Any, key: str) -> float | None:
    """The pre-registered bar ``key`` of the model judges' rule (None when it has none)."""
    for s in jc.studies:
        value = s.result.decision_rule.get("graduate_if", {}).get(key)
        if s.result.repeats is not None and isinstance(value, int | float):
            return float(value)
    return None
