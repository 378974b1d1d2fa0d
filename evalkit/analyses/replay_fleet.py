"""The rubric-replay study over a fleet of repositories.

Each metrics directory is scored under rubric-v1 and rubric-v2 by :func:`evalkit.score_fleet`
(serially in the kernel, or on a Dask scheduler: the same rows). The page then shows what it
shows for one directory, over the fleet's sessions (named ``<repository>/<session id>``), with
one difference: every pooled rate's interval resamples whole repositories (percentile cluster
bootstrap, :func:`evalkit.analyses.fleet.pooled_rate`) instead of Wilson's, which would treat
the fleet's sessions as independent; the dead-instrument flags are read from those intervals.
The section *Across repositories* adds each graded dimension's fail rate per repository, its
heterogeneity and who drives its flag (:func:`evalkit.analyses.fleet.fire_rates`).

The replay study has no bootstrap parameters of its own (its design is the ceiling), so the
fleet's bootstrap uses fixed, stated values: :data:`N_RESAMPLES` resamples, seed :data:`SEED`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalkit.analyses.notes import Note
from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.journal.reader import JOURNAL_NAME

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from evalkit.analyses.fleet_page import FleetSignal

__all__ = [
    "LEVEL",
    "N_PERMUTATIONS",
    "N_RESAMPLES",
    "SEED",
    "VIEW_TEXT",
    "drift_text",
    "figures_extra",
    "fire_rates",
    "journal_vs_replay",
    "plot_rates",
    "rates_caption",
    "score_both",
    "status_rates",
]

#: Interval level, resamples, permutations and seed of the fleet's bootstrap on this page.
LEVEL = 0.95
N_RESAMPLES = 2000
N_PERMUTATIONS = 2000
SEED = 0

#: What the section *Across repositories* computes (Markdown).
VIEW_TEXT = (
    "Each graded dimension's `fail` rate under each rubric, per repository and pooled; n = "
    "sessions scored, as in the table above."
)


def score_both(
    metrics_dirs: Sequence[str],
    scheduler: str = "",
    rubrics: tuple[str, ...] = ("rubric-v1", "rubric-v2"),
) -> pd.DataFrame:
    """:func:`evalkit.score_fleet` under each rubric, stacked with a ``rubric`` column, session
    ids keyed by repository (:func:`~evalkit.analyses.fleet_page.keyed`). A directory that
    cannot be scored is an error naming it and why: a study's input is all or nothing."""
    import pandas as pd

    from evalkit.analyses.fleet_page import client, keyed
    from evalkit.fleet.score import FleetFailureWarning, fleet_summary, score_fleet

    frames = []
    with client(scheduler) as dask_client:
        for rubric in rubrics:
            with warnings.catch_warnings():  # the failures are raised below, with reasons
                warnings.simplefilter("ignore", FleetFailureWarning)
                frame = score_fleet(list(metrics_dirs), rubric, client=dask_client)
            summary = fleet_summary(frame)
            if summary.failures:
                raise EvalkitError(summary.text())
            frame.insert(0, "rubric", rubric)
            frames.append(frame)
    return keyed(pd.concat(frames, ignore_index=True))


def status_rates(scored: pd.DataFrame, level: float = LEVEL) -> pd.DataFrame:
    """:func:`evalkit.analyses.replay.status_rates`'s table for a fleet: the same rows, counts
    and rates (n = sessions scored), each interval the pooled rate's cluster bootstrap
    (repository = cluster, :data:`N_RESAMPLES` resamples, seed :data:`SEED`)."""
    import pandas as pd

    from evalkit.analyses.fleet import pooled_rate
    from evalkit.analyses.replay import STATUSES

    rows = []
    for (rubric, dim), grp in scored.groupby(["rubric", "dimension"], sort=False):
        sessions = grp.drop_duplicates("session_id")
        for status in STATUSES:
            units = pd.DataFrame(
                {
                    "metrics_dir": sessions["metrics_dir"].to_numpy(),
                    "session_id": sessions["session_id"].to_numpy(),
                    "fires": (sessions["status"] == status).to_numpy(),
                    "determined": True,
                }
            )
            with warnings.catch_warnings():  # all or none of the sessions: a point, said below
                warnings.simplefilter("ignore", DegenerateDataWarning)
                pooled = pooled_rate(units, level=level, n_resamples=N_RESAMPLES, seed=SEED)
            lo, hi = pooled.confidence_interval()
            rows.append(
                {"rubric": rubric, "dimension": dim, "status": status, "k": pooled.k,
                 "n": pooled.n, "rate": pooled.statistic, "ci_low": lo, "ci_high": hi}
            )  # fmt: skip
    return pd.DataFrame(rows)


def rates_caption(scored: pd.DataFrame) -> str:
    """What the rate table shows for a fleet (Markdown)."""
    n_repos = int(scored["metrics_dir"].nunique())
    return (
        f"`k/n = rate [95% cluster-bootstrap CI]`; n = sessions scored under that rubric across "
        f"the fleet's {n_repos} repositories. The interval resamples whole repositories "
        f"({N_RESAMPLES} resamples, seed {SEED}), not sessions; the dead-instrument flags "
        "below are read from these intervals."
    )


def plot_rates(rates: pd.DataFrame, ceiling: float, scored: pd.DataFrame) -> Figure | Note:
    """:func:`evalkit.analyses.replay.plot_rates` of the fleet's fail rates, titled for its
    interval (cluster bootstrap, repository = cluster); its sentence when nothing is drawn."""
    from evalkit.analyses.replay import plot_rates as plot_one

    fig = plot_one(rates, "fail", ceiling)
    if isinstance(fig, Note):
        return fig
    n_repos = int(scored["metrics_dir"].nunique())
    n = int(rates.loc[rates["status"] == "fail", "n"].max()) if len(rates) else 0
    fig.axes[0].set_title(
        f"'fail' rate per dimension, 95% cluster-bootstrap CI, repository = cluster "
        f"(n = {n} sessions, {n_repos} repositories)",
        fontsize=9,
    )
    return fig


def fire_rates(scored: pd.DataFrame, ceiling: float) -> list[FleetSignal]:
    """Each graded dimension's fail rate under each rubric (:func:`evalkit.analyses.fleet.
    fire_rates` on :func:`~evalkit.analyses.fleet.dimension_units` with the replay study's
    denominator, sessions scored), in table order."""
    from evalkit.analyses.fleet import dimension_units
    from evalkit.analyses.fleet import fire_rates as rates_of
    from evalkit.analyses.fleet_page import FleetSignal
    from evalkit.analyses.replay import REPORTED_ONLY

    out = []
    for (rubric, dim), grp in scored.groupby(["rubric", "dimension"], sort=False):
        if dim in REPORTED_ONLY:
            continue
        units = dimension_units(grp, str(dim), denominator="scored")
        with warnings.catch_warnings():  # a fleet of one: the interval is undefined, and said
            warnings.simplefilter("ignore", DegenerateDataWarning)
            rates = rates_of(
                units, label=f"{rubric} {dim} fail", ceiling=ceiling, level=LEVEL,
                n_resamples=N_RESAMPLES, n_permutations=N_PERMUTATIONS, seed=SEED,
            )  # fmt: skip
        out.append(FleetSignal({"rubric": rubric, "dimension": dim, "status": "fail"}, rates))
    return out


def journal_vs_replay(scored: pd.DataFrame) -> pd.DataFrame | None:
    """:func:`evalkit.analyses.replay.journal_vs_replay` of every repository with a journal,
    stacked, sessions keyed by repository; ``None`` when no repository has a journal."""
    import pandas as pd

    from evalkit.analyses.replay import journal_vs_replay as one

    frames = []
    for d, part in scored.groupby("metrics_dir", sort=False):
        own = part.assign(session_id=part["ledger_session_id"])
        drift = one(str(d), own)
        if drift is not None:
            label = str(part["repository"].iloc[0])
            frames.append(drift.assign(session_id=label + "/" + drift["session_id"].astype(str)))
    return pd.concat(frames, ignore_index=True) if frames else None


def drift_text(drift: pd.DataFrame | None, scored: pd.DataFrame) -> str:
    """:func:`evalkit.analyses.replay.drift_text` for a fleet: how many repositories had a
    journal to compare (Markdown)."""
    from evalkit.analyses.replay import drift_text as one

    n_repos = int(scored["metrics_dir"].nunique())
    if drift is None:
        return (
            f"No journal (`{JOURNAL_NAME}`) in any of the {n_repos} repositories: nothing to "
            "compare."
        )
    with_journal = sum(1 for d in dict.fromkeys(scored["metrics_dir"]) if _has_journal(str(d)))
    return one(drift) + f" Repositories with a journal: {with_journal} of {n_repos}."


def _has_journal(metrics_dir: str) -> bool:
    from pathlib import Path

    return (Path(metrics_dir) / JOURNAL_NAME).is_file()


def figures_extra(scored: pd.DataFrame) -> dict[str, Any]:
    """What results.json's ``fleet`` says of the fleet itself: repositories and their sessions."""
    per = scored.groupby("repository", sort=False)["session_id"].nunique()
    return {
        "bootstrap": {"level": LEVEL, "n_resamples": N_RESAMPLES, "seed": SEED},
        "repositories": [{"repository": str(k), "sessions": int(v)} for k, v in per.items()],
    }
