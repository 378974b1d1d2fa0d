"""A fleet on a study page: which repositories, where it runs, and who drives a flag.

The rubric-replay and threshold-study notebooks take a fleet (``metrics_dirs``: a list of
metrics directories, a glob, or a file listing one per line) instead of one ``metrics_dir``.
This module holds what both pages show of it, computed by :mod:`evalkit.analyses.fleet`
(never a second definition): the fleet's repositories, a table of every signal's pooled fire
rate (percentile cluster bootstrap, repository = cluster) with its heterogeneity and its
dead-instrument flags, each repository's rate with its Wilson interval, and, for every signal
with a flag or a repository that decides one, the forest plot and the leave-one-out table.
Empty ``metrics_dirs`` means one directory: the pages then show exactly what they always did.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.files.escape import markdown_code, markdown_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from evalkit.analyses.fleet import FleetRates

__all__ = [
    "PER_REPOSITORY_CAPTION",
    "SECTION_HEADING",
    "FleetSignal",
    "client",
    "fleet_note",
    "heterogeneity",
    "keyed",
    "leave_one_out_frame",
    "per_repository_frame",
    "repositories_frame",
    "resolve",
    "shown",
    "summary_frame",
    "view_text",
    "with_fleet",
    "without_paths",
]

#: The heading of the between-repository section (shown only for a fleet).
SECTION_HEADING = "## Across repositories"
PER_REPOSITORY_CAPTION = (
    "Each repository's own rate: `k/n = rate [95% Wilson CI]`, n = its sessions in the "
    "denominator, and its dead-instrument flag, if any, as if it were the only repository; "
    "the first row is the fleet's pooled rate, its interval resampling whole repositories."
)


@dataclass(frozen=True)
class FleetSignal:
    """One signal's fleet rates (a dimension's fail, a fact at a threshold) and what names it
    in results.json (``key``: e.g. ``{"rubric": ..., "dimension": ...}``)."""

    key: Mapping[str, Any]
    rates: FleetRates


# -- naming the fleet and where it runs ------------------------------------------------------


def resolve(metrics_dir: str, metrics_dirs: Any, scheduler: str) -> list[str] | None:
    """The fleet's directories (:func:`evalkit.fleet.score.resolve_fleet`), or ``None`` for one
    ``metrics_dir`` (empty ``metrics_dirs``). Both given, or a scheduler without a fleet, is
    an error: neither is silently ignored."""
    from evalkit.fleet.score import resolve_fleet

    if not isinstance(scheduler, str):
        raise EvalkitError(f"scheduler must be a string (an address or ''), got {scheduler!r}")
    if not metrics_dirs:
        if scheduler:
            raise EvalkitError(
                "scheduler runs a fleet on Dask, and no fleet was given: name one in "
                "metrics_dirs, or leave scheduler empty for one metrics_dir"
            )
        return None
    if metrics_dir:
        raise EvalkitError("give metrics_dir (one directory) or metrics_dirs (a fleet), not both")
    return resolve_fleet(metrics_dirs)


@contextlib.contextmanager
def client(scheduler: str) -> Iterator[Any]:
    """``None`` (serial, in this kernel) for an empty ``scheduler``, else a Dask client of
    that scheduler, closed on exit. Without Dask: :class:`~evalkit.fleet.score.MissingExtraError`
    naming the extra to install."""
    if not scheduler:
        yield None
        return
    from evalkit.fleet.score import MissingExtraError, fleet_client

    with contextlib.ExitStack() as stack:
        try:
            dask_client = stack.enter_context(fleet_client(scheduler))
        except MissingExtraError as exc:
            raise MissingExtraError(
                f"scheduler {scheduler!r}: {exc}; or leave scheduler empty, and the fleet is "
                "read serially in the kernel (the same results)"
            ) from None
        yield dask_client


def shown(params: Mapping[str, Any], metrics_dirs: Any, scheduler: str) -> dict[str, Any]:
    """The parameters table's rows: ``params`` as for one directory; for a fleet, the fleet
    and where it runs in place of the (unused, empty) ``metrics_dir``."""
    if not metrics_dirs:
        return dict(params)
    rest = {k: v for k, v in params.items() if k != "metrics_dir"}
    return {"metrics_dirs": metrics_dirs, "scheduler": scheduler, **rest}


def without_paths(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without the columns of a fleet table that carry machine paths or repeat the
    keyed session id (``metrics_dir``, ``ledger_session_id``), for a preview on the page; a
    table of one directory (no such column) comes back as it is."""
    drop = [c for c in ("metrics_dir", "ledger_session_id") if c in frame]
    return frame.drop(columns=drop) if drop else frame


def keyed(frame: pd.DataFrame) -> pd.DataFrame:
    """A fleet table with session ids unique across the fleet: ``session_id`` becomes
    ``<repository>/<session id>`` (two repositories may hold the same id), the ledger's own id
    is kept in ``ledger_session_id``, and ``repository`` holds the short label."""
    from evalkit.analyses.fleet import repository_labels

    out = frame.copy()
    labels = repository_labels(list(dict.fromkeys(out["metrics_dir"])))
    repo = out["metrics_dir"].map(labels)
    out["ledger_session_id"] = out["session_id"]
    out["repository"] = repo
    out["session_id"] = repo.astype(str) + "/" + out["session_id"].astype(str)
    out.attrs.update(frame.attrs)
    return out


def repositories_frame(frame: pd.DataFrame, unit: str = "sessions") -> pd.DataFrame:
    """Per repository (fleet order): its sessions (and ``unit`` rows when they are records)."""
    import pandas as pd

    grouped = frame.groupby("repository", sort=False)
    table = pd.DataFrame({"sessions": grouped["session_id"].nunique()})
    if unit != "sessions":
        table[unit] = grouped.size()
    return table


def fleet_note(frame: pd.DataFrame, scheduler: str, what: str) -> str:
    """What a fleet run is (Markdown): repositories, where it ran, how intervals resample."""
    n_repos = int(frame["metrics_dir"].nunique())
    n_sessions = int(frame["session_id"].nunique())
    where = (
        f"on the Dask scheduler {markdown_code(scheduler)}"
        if scheduler
        else "serially, in this kernel"
    )
    return (
        f"**A fleet of {n_repos} repositories** ({n_sessions} sessions), {what} {where}. "
        "Every interval on this page that spans the fleet resamples **whole repositories** "
        "(percentile cluster bootstrap, repository = cluster): the sessions of one repository "
        "share its setup and are not independent draws. Each repository's own rate has a "
        "Wilson interval (section *Across repositories*). Where no session of the fleet has "
        "a status or a fact fires (or every session does), every resample gives the same rate "
        "and the pooled interval is that point: the repositories' Wilson intervals say how "
        "sure such a 0% is. Sessions are named `<repository>/<session id>`, since two "
        "repositories may use the same id."
    )


# -- the between-repository view -------------------------------------------------------------


def _estimate(k: int, n: int, rate: Any, ci: Sequence[Any]) -> str:
    from evalkit.analyses._results import fmt_estimate

    return f"{k}/{n} = " + fmt_estimate(rate, (ci[0], ci[1]), 1 if n == 1 else None, percent=True)


def drivers(rates: FleetRates) -> list[str]:
    """Repositories without which the pooled flag, or the pooled rate's side of the ceiling,
    changes: who drives the fleet's verdict."""
    loo = rates.leave_one_out
    return loo.loc[loo["changes_flag"] | loo["crosses_ceiling"], "repository"].tolist()


def _heterogeneity_text(rates: FleetRates) -> tuple[str, str]:
    het = rates.heterogeneity
    if het.q is None:
        return "undefined", het.note
    p = het.p_value_permutation
    shown_p = "< 0.001" if p is not None and p < 0.001 else f"{p:.3f}"
    return f"{100 * (het.i_squared or 0):.0f}%", shown_p


def summary_frame(signals: Sequence[FleetSignal]) -> pd.DataFrame:
    """One row per signal: the pooled rate and its cluster-bootstrap interval, repositories,
    I² and the permutation p-value of heterogeneity, the pooled flags and who drives them."""
    import pandas as pd

    rows = []
    for s in signals:
        r, level = s.rates, f"{s.rates.level:.0%}"
        i2, p = _heterogeneity_text(r)
        rows.append(
            {
                "signal": r.label,
                f"pooled rate [{level} cluster-bootstrap CI]": _estimate(
                    r.pooled.k, r.pooled.n, r.pooled.statistic, r.confidence_interval()
                ),
                "repositories": r.pooled.n_repositories,
                "I²": i2,
                "heterogeneity p (permutation)": p,
                "pooled flag": "; ".join(r.flags) or "none",
                "driven by": ", ".join(drivers(r)) or "none",
            }
        )
    return pd.DataFrame(rows).set_index("signal")


def per_repository_frame(signals: Sequence[FleetSignal]) -> pd.DataFrame:
    """Repositories x signals: ``k/n = rate [Wilson CI]`` and the repository's own flag; the
    first row is the pooled rate with its cluster-bootstrap interval. Columns are named by
    what varies between the signals' keys (``rubric, dimension``; ``threshold``)."""
    import pandas as pd

    if not signals:
        return pd.DataFrame()
    keys = [s.key for s in signals]
    varying = [k for k in keys[0] if len({str(x.get(k)) for x in keys}) > 1] or [
        next(iter(keys[0]))
    ]
    pooled_label = "pooled (cluster bootstrap)"
    columns = {}
    for s in signals:
        per = s.rates.per_repository
        cells = {pooled_label: _estimate(s.rates.pooled.k, s.rates.pooled.n,
                                         s.rates.statistic, s.rates.confidence_interval())}  # fmt: skip
        for r in per.itertuples():
            flag = f" — {r.flag}" if r.flag else ""
            cells[str(r.repository)] = (
                _estimate(int(r.k), int(r.n), r.rate, (r.ci_low, r.ci_high)) + flag
            )
        columns[tuple(s.key[k] for k in varying)] = pd.Series(cells)
    table = pd.DataFrame(columns)
    table.columns = (
        pd.MultiIndex.from_tuples(list(columns), names=varying)
        if len(varying) > 1
        else pd.Index([c[0] for c in columns], name=varying[0])
    )
    table.index.name = "repository"
    return table


def leave_one_out_frame(rates: FleetRates) -> pd.DataFrame:
    """The pooled rate without each repository, its interval and flag, and whether leaving
    the repository out changes the pooled flag or the side of the ceiling."""
    import pandas as pd

    level = f"{rates.level:.0%}"
    rows = []
    for r in rates.leave_one_out.itertuples():
        rows.append(
            {
                "without": r.repository,
                f"pooled rate without it [{level} cluster-bootstrap CI]": _estimate(
                    int(r.k_without), int(r.n_without), r.rate_without, (r.ci_low, r.ci_high)
                ),
                "flag without it": r.flag_without or "none",
                "changes the pooled flag": "yes" if r.changes_flag else "no",
                "crosses the ceiling": "yes" if r.crosses_ceiling else "no",
            }
        )
    return pd.DataFrame(rows).set_index("without")


def _decided(signals: Sequence[FleetSignal]) -> list[FleetSignal]:
    return [s for s in signals if s.rates.flags or drivers(s.rates)]


def view_text(signals: Sequence[FleetSignal], what: str) -> str:
    """What the section shows (Markdown)."""
    decided = _decided(signals)
    head = (
        f"{what} The pooled rate's interval resamples whole repositories; heterogeneity is "
        "Pearson's chi-square of repositories × {fires, not} (Cochran's Q), with a "
        "permutation p-value and I² = (Q − df)/Q. A repository *drives* a flag when leaving "
        "it out changes the pooled flag or moves the pooled rate across the ceiling."
    )
    if not decided:
        return head + "\n\nNo signal has a pooled flag or a repository that decides one."
    names = ", ".join(markdown_text(s.rates.label) for s in decided)
    return (
        head + f"\n\nBelow, for each signal with a pooled flag or a driver ({names}): the "
        "forest plot (each repository's rate and Wilson interval, the pooled rate's "
        "interval as a diamond, drivers in red) and the leave-one-out table."
    )


def heterogeneity(signals: Sequence[FleetSignal]) -> list[tuple[str, Figure, pd.DataFrame]]:
    """For each signal with a pooled flag or a driver: a heading (Markdown), its forest plot
    and its leave-one-out table."""
    from evalkit.analyses.fleet import plot_forest

    return [
        (f"### {markdown_text(s.rates.label)}", plot_forest(s.rates), leave_one_out_frame(s.rates))
        for s in _decided(signals)
    ]


def with_fleet(
    figures: Mapping[str, Any], signals: Sequence[FleetSignal] | None, **extra: Any
) -> dict[str, Any]:
    """The page's figures, plus (for a fleet) ``fleet``: every signal's key and fleet rates
    (per repository by label, pooled, heterogeneity, leave-one-out), and ``extra``."""
    if signals is None:
        return dict(figures)
    return {
        **figures,
        "fleet": {
            "clusters": "repository",
            **extra,
            "signals": [{**s.key, **s.rates.to_json_dict()} for s in signals],
        },
    }
