"""The threshold study's headline on the landing page, read from its ``results.json``.

The lowest candidate threshold whose fire-rate interval is not wholly above the ceiling, its
records firing and sessions failing with n; the counterfactual table and the journal read one
click away. Laid out by :mod:`evalkit.analyses.landing`; the figures are
:func:`evalkit.analyses.threshold.figures`' (see ``docs/EXPLORER.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.analyses.headline import Headline, pct_ci
from evalkit.display import fmt_number
from evalkit.finite import finite_float

__all__ = ["headline"]


def headline(res: Mapping[str, Any]) -> Headline:
    """The threshold study's headline from its results."""
    st = res["threshold_study"]
    by_t = {row["threshold"]: row for row in st["thresholds"]}
    cf = [row for row in res["counterfactual"] if row["threshold"] in by_t]
    if not cf:
        return Headline("no candidate threshold was evaluated", figure="no threshold")
    n, clusters, ceiling = st["n_items"], st["n_clusters"], st["ceiling"]
    not_above = [row for row in cf if by_t[row["threshold"]]["ceiling_status"] != "above"]
    pick = min(not_above, key=lambda r: r["threshold"]) if not_above else cf[-1]
    row = by_t[pick["threshold"]]
    why = (
        f"the lowest candidate whose interval is not wholly above the {100 * ceiling:.0f}% ceiling"
        if not_above
        else f"every candidate's interval lies wholly above the {100 * ceiling:.0f}% ceiling; "
        "the largest is shown"
    )
    rate = (
        pct_ci(row["fire_rate"], None, None, 1)  # "(n = 1, no CI)"
        if n == 1
        else pct_ci(row["fire_rate"], row["ci_low"], row["ci_high"], None)
        + ", cluster-bootstrap 95% CI"
    )
    text = (
        f"threshold {pick['threshold']} fires on {pick['records_firing']} of {n} "
        f"record{'s' if n != 1 else ''} ({rate}), {pick['sessions_failing']} of {clusters} "
        f"session{'s' if clusters != 1 else ''} fail; n = {n} records / {clusters} sessions"
    )
    others = "; ".join(
        f"t = {r['threshold']}: {r['records_firing']} records, {r['sessions_failing']} sessions"
        for r in cf
    )
    details = [f"Threshold shown: {why} (ceiling check: {row['ceiling_status']}).",
               f"Counterfactual table ({res.get('fact', 'fact')} ≥ t): {others}."]  # fmt: skip
    pub = res.get("published_table")
    if pub:
        details.append(
            f"Journal read: {pub['records']} records over {pub['sessions']} sessions; rubric-v1 "
            f"process-safety failed {pub['v1_fail_records']} records "
            f"({pub['v1_fail_sessions']} sessions)."
        )
    if st.get("n_unknown"):
        details.append(f"Records with an unknown value (not counted as 0): {st['n_unknown']}.")
    rate_text = fmt_number(finite_float(row["fire_rate"]), percent=True)
    figure = f"{rate_text} at t = {pick['threshold']}"
    return Headline(text, tuple(details), figure=figure)
