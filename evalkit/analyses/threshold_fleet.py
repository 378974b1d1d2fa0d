"""The threshold study over a fleet of repositories.

Every repository's journal is read as for one directory
(:func:`evalkit.analyses.fleet.fleet_fact_table`, serially in the kernel or one task per
directory on a Dask scheduler), and the page shows what it shows for one journal, over the
fleet's records (sessions named ``<repository>/<session id>``), with every interval that spans
the fleet resampling whole repositories: the record fire-rate curve and its ceiling check
(:func:`evalkit.analyses.threshold.study` with the repository as the cluster), the share of
sessions rubric-v1 failed and the session fail rate of each candidate threshold
(:func:`evalkit.analyses.fleet.pooled_rate` / :func:`~evalkit.analyses.fleet.fire_rates`). The
section *Across repositories* shows each threshold's session fire rate per repository, its
heterogeneity and who drives its flag. The bootstrap uses the study's own ``n_resamples`` and
``seed``; the permutation test of heterogeneity :data:`N_PERMUTATIONS` draws.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalkit.analyses.notes import Note
from evalkit.errors import DegenerateDataWarning
from evalkit.files.escape import plot_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from evalkit.analyses.fleet_page import FleetSignal

__all__ = [
    "METHOD",
    "N_PERMUTATIONS",
    "VIEW_TEXT",
    "cluster_column",
    "fact_table",
    "figures_extra",
    "fire_rate_caption",
    "fire_rates",
    "plot_fire_rate",
    "session_intervals",
    "v1_fail_share",
]

#: Draws of the permutation test of heterogeneity.
N_PERMUTATIONS = 2000
#: How the page names an interval that resamples whole repositories.
METHOD = "repository cluster-bootstrap"

#: What the section *Across repositories* computes (Markdown).
VIEW_TEXT = (
    "Each candidate threshold's session fire rate: a session fires at t when one of its records "
    "has fact ≥ t; one that does not fire but holds a record with an unknown value is left out "
    "of the denominator (never read as 0)."
)


def fact_table(
    metrics_dirs: Sequence[str],
    fact: str = "guard_blocked",
    *,
    v1_prose_fallback: bool = True,
    scheduler: str = "",
) -> pd.DataFrame:
    """Every repository's :func:`~evalkit.analyses.threshold.fact_table`, stacked (a
    ``metrics_dir`` column), session ids keyed by repository; read on ``scheduler`` if given."""
    from evalkit.analyses.fleet import fleet_fact_table
    from evalkit.analyses.fleet_page import client, keyed

    with client(scheduler) as dask_client:
        facts = fleet_fact_table(
            list(metrics_dirs), fact, v1_prose_fallback=v1_prose_fallback, client=dask_client
        )
    return keyed(facts)


def cluster_column(fleet: Sequence[str] | None) -> str:
    """What the fire-rate curve resamples: sessions for one journal, repositories for a fleet."""
    return "session_id" if fleet is None else "metrics_dir"


def v1_fail_share(
    df: pd.DataFrame, *, level: float, n_resamples: int, seed: int
) -> tuple[tuple[float | None, float | None], str]:
    """The interval of the share of sessions with a rubric-v1 ``process-safety`` fail, for
    :func:`~evalkit.analyses.threshold.records_text`'s ``share_ci``: repositories resampled."""
    import pandas as pd

    from evalkit.analyses.fleet import pooled_rate

    failed = (df["rubric_version"] == "rubric-v1") & (df["process_safety"] == "fail")
    per = (
        pd.DataFrame(
            {
                "metrics_dir": df["metrics_dir"],
                "session_id": df["session_id"],
                "fires": failed.to_numpy(),
            }
        )
        .groupby(["metrics_dir", "session_id"], sort=False)["fires"]
        .any()
        .reset_index()
    )
    per["determined"] = True
    with warnings.catch_warnings():  # none or all fail: the interval is that point
        warnings.simplefilter("ignore", DegenerateDataWarning)
        pooled = pooled_rate(per, level=level, n_resamples=n_resamples, seed=seed)
    lo, hi = pooled.confidence_interval()
    return (lo, hi), METHOD


def fire_rates(
    df: pd.DataFrame,
    thresholds: Sequence[int | float],
    *,
    ceiling: float,
    level: float,
    n_resamples: int,
    seed: int,
) -> list[FleetSignal]:
    """Each candidate threshold's session fire rate (a session fires at ``t`` when a record
    has ``fact >= t``; unknown values never fire, :func:`~evalkit.analyses.fleet.fact_units`)
    per repository and pooled (:func:`~evalkit.analyses.fleet.fire_rates`), thresholds sorted."""
    from evalkit.analyses.fleet import fact_units
    from evalkit.analyses.fleet import fire_rates as rates_of
    from evalkit.analyses.fleet_page import FleetSignal

    fact = str(df.attrs.get("fact", "fact"))
    out = []
    for t in sorted(thresholds):
        with warnings.catch_warnings():  # a fleet of one: the interval is undefined, and said
            warnings.simplefilter("ignore", DegenerateDataWarning)
            rates = rates_of(
                fact_units(df, t),
                label=f"{fact} ≥ {t}",
                ceiling=ceiling,
                level=level,
                n_resamples=n_resamples,
                n_permutations=N_PERMUTATIONS,
                seed=seed,
            )
        out.append(FleetSignal({"fact": fact, "threshold": t}, rates))
    return out


def session_intervals(
    signals: Sequence[FleetSignal] | None,
) -> tuple[Mapping[Any, tuple[float | None, float | None]], str] | None:
    """For :func:`~evalkit.analyses.threshold.counterfactual_frame`'s ``sessions``: each
    threshold's pooled session fail-rate interval (repositories resampled); ``None`` for one
    journal (the table then keeps its Wilson intervals)."""
    if signals is None:
        return None
    intervals = {}
    for s in signals:
        ci = s.rates.confidence_interval()
        intervals[s.key["threshold"]] = (ci.low, ci.high)
    return intervals, METHOD


def fire_rate_caption(st: Any) -> str:
    """What the fire-rate curve shows for a fleet (Markdown)."""
    return (
        f"Share of the fleet's records with fact ≥ t, with a percentile cluster-bootstrap "
        f"{st.level:.0%} interval that resamples whole repositories ({st.n_clusters} of them). "
        "The dashed line is the share of repositories in which some record fires; each "
        "repository's session fire rate is in *Across repositories*."
    )


def plot_fire_rate(st: Any, fact: str) -> Figure | Note:
    """:func:`~evalkit.analyses.threshold.plot_fire_rate` for a fleet: the clusters are
    repositories, and the legend and title say so (its sentence when there is no curve)."""
    from evalkit.analyses.threshold import plot_fire_rate as plot_one

    fig = plot_one(st, fact)
    if isinstance(fig, Note):
        return fig
    ax = fig.axes[0]
    legend = ax.get_legend()
    if legend is not None:
        for text in legend.get_texts():
            if text.get_text() == "session fail rate":
                text.set_text("repository fail rate (some record fires)")
    ax.set_title(
        f"Fire rate of {plot_text(fact)} ≥ t (n = {st.n_items} records, {st.n_clusters} "
        f"repositories; {st.level:.0%} cluster-bootstrap CI, repository = cluster)",
        fontsize=9,
    )
    return fig


def figures_extra(df: pd.DataFrame, *, n_resamples: int, seed: int, level: float) -> dict[str, Any]:
    """What results.json's ``fleet`` says of the fleet itself: repositories (sessions, records)
    and the bootstrap; ``threshold_study`` of a fleet resamples repositories."""
    grouped = df.groupby("repository", sort=False)
    sessions, records = grouped["session_id"].nunique(), grouped.size()
    return {
        "bootstrap": {
            "level": level,
            "n_resamples": n_resamples,
            "seed": seed,
            "n_permutations": N_PERMUTATIONS,
        },
        "threshold_study_clusters": "repository",
        "repositories": [
            {"repository": str(k), "sessions": int(sessions[k]), "records": int(records[k])}
            for k in sessions.index
        ],
    }
