"""The graduation verdict: every condition of a decision rule's ``graduate_if``, with reasons.

A rule for one label per item (``DECISION_RULE.json``) holds ``kappa_ci_low_at_least``,
``n_at_least`` and ``missing_at_most``; the model-judge rule adds
``repeat_kappa_ci_low_at_least`` (Fleiss' kappa across repeats) and
``failed_calls_share_at_most`` (calls without a label). Each condition present is checked (an
undefined figure fails it, never passes), and the reason names every figure it was judged on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from evalkit.calibration._repeats import RepeatFigures
    from evalkit.calibration._result import Estimate

__all__ = ["graduation"]


def _repeat_conditions(
    g: Mapping[str, Any], figures: RepeatFigures | None
) -> tuple[list[str], list[str]]:
    """(fails, passes) of the conditions only a calibration with repeats can evaluate."""
    fails: list[str] = []
    passes: list[str] = []
    wanted = [k for k in ("repeat_kappa_ci_low_at_least", "failed_calls_share_at_most") if k in g]
    if not wanted:
        return fails, passes
    if figures is None:
        raise EvalkitError(f"the decision rule's condition(s) {wanted} need labels with repeats")
    if "repeat_kappa_ci_low_at_least" in g:
        need = float(g["repeat_kappa_ci_low_at_least"])
        low = figures.decision_repeat_kappa.low
        bound = "pre-registered Fleiss kappa across repeats CI lower bound"
        if low is None:
            fails.append(
                "the pre-registered Fleiss kappa across repeats is undefined (it needs items "
                "with at least two labelled repeats and labels that vary)"
            )
        elif low < need:
            fails.append(f"{bound} {low:.3f} < {need:g}")
        else:
            passes.append(f"{bound} {low:.3f} >= {need:g}")
    if "failed_calls_share_at_most" in g:
        most = float(g["failed_calls_share_at_most"])
        k, n = figures.n_failed, int(figures.calls["expected"])
        share = k / n if n else 1.0
        what = f"calls without a label {k}/{n} = {100 * share:.1f}%"
        if share > most:
            fails.append(f"{what} > {100 * most:g}%")
        else:
            passes.append(f"{what} <= {100 * most:g}%")
    return fails, passes


def graduation(
    rule: Mapping[str, Any],
    decision: Estimate,
    n: int,
    n_missing: int,
    figures: RepeatFigures | None = None,
) -> tuple[bool, str]:
    """``(graduates, reason)`` under ``rule`` (see the module docstring)."""
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
    more_fails, more_passes = _repeat_conditions(g, figures)
    fails += more_fails
    if fails:
        return False, "does not graduate: " + "; ".join(fails)
    return True, (
        f"graduates: {bound} {kappa_low:.3f} >= {need_low:g}, n = {n} >= {need_n}, "
        f"{n_missing} missing <= {max_missing}" + "".join(f", {p}" for p in more_passes)
    )
