"""A fleet of repositories: a signal's fire rate per repository, pooled, and who drives a flag.

The unit is a session of one repository (one metrics directory): it *fires* or not, or is
*undetermined* and then left out of every denominator (missing data is never a pass or a
fail). Two readings of "fires" feed the same analysis:

* :func:`dimension_units` — a dimension of a :func:`evalkit.score_fleet` table fires when its
  status is ``fail``; it is determined when its status is ``pass`` or ``fail``
  (``denominator="determined"``, the default: ``not-applicable`` and ``cannot-determine`` say
  the dimension did not grade the session) or whatever it is (``denominator="scored"``: the
  rubric-replay study's share of sessions scored). One row per session, as the replay study
  counts (:func:`evalkit.analyses.replay.status_rates`).
* :func:`fact_units` — a journal fact (``guard_blocked`` ...) of the threshold study fires at
  ``t`` when a record of the session has ``value >= t``; a session that does not fire but holds
  a record with an unknown value is undetermined (:func:`evalkit.analyses.threshold.counterfactual`).

:func:`fire_rates` then gives, with their n: each repository's rate with a Wilson interval;
the pooled rate with a percentile **cluster bootstrap, the repository as the cluster** (its
sessions are not independent draws: a repository's setup moves all of them); a heterogeneity
test (Pearson's chi-square of the repositories x {fires, not} table — Cochran's Q of the rates
with pooled-variance weights — its p-value, a permutation p-value that holds for sparse tables,
and I² = (Q - df) / Q, Higgins & Thompson 2002); every repository's leave-one-out pooled rate;
and the dead-instrument flags of the rubric-replay study (a rate whose whole interval is above
the ~10% ceiling, or a signal that never fires), so a reader sees which repositories make or
break a flag. :func:`plot_forest` draws it.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Literal

from evalkit.display import Readable, fmt_estimate, fmt_number
from evalkit.errors import DegenerateDataWarning, EvalkitError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from matplotlib.figure import Figure

    from evalkit.stats import BootstrapResult, ConfidenceInterval

__all__ = [
    "DETERMINED",
    "FleetRates",
    "Heterogeneity",
    "PooledRate",
    "dimension_units",
    "fact_units",
    "fire_rates",
    "fleet_fact_table",
    "plot_forest",
    "pooled_rate",
    "repository_labels",
]

#: The statuses under which a dimension graded a session (fires = ``fail``).
DETERMINED: tuple[str, ...] = ("pass", "fail")
UNIT_COLUMNS = ("metrics_dir", "session_id", "fires", "determined")


# -- units: one row per repository x session -------------------------------------------------


def dimension_units(
    scored: pd.DataFrame,
    dimension: str,
    *,
    denominator: Literal["determined", "scored"] = "determined",
) -> pd.DataFrame:
    """Sessions of a :func:`evalkit.score_fleet` table for one ``dimension``: ``metrics_dir,
    session_id, fires`` (status ``fail``) ``, determined`` (see the module docstring)."""
    from evalkit.analyses.replay import REPORTED_ONLY

    missing = [c for c in ("metrics_dir", "session_id", "dimension", "status") if c not in scored]
    if missing:
        raise EvalkitError(f"the scored table lacks {missing} (expected score_fleet's columns)")
    if denominator not in ("determined", "scored"):
        raise EvalkitError(f"denominator must be 'determined' or 'scored', got {denominator!r}")
    if dimension in REPORTED_ONLY:
        raise EvalkitError(f"{dimension!r} is reported, never graded: it has no fire rate")
    rows = scored[scored["dimension"] == dimension]
    if rows.empty:
        known = sorted(set(scored["dimension"]))
        raise EvalkitError(f"no row of dimension {dimension!r} in the table; it has {known}")
    # one verdict per session and repository, as the replay study counts
    rows = rows.drop_duplicates(["metrics_dir", "session_id"])
    status = rows["status"].astype(object)
    out = rows[["metrics_dir", "session_id"]].reset_index(drop=True)
    out["fires"] = (status == "fail").to_numpy()
    out["determined"] = (
        status.isin(DETERMINED) if denominator == "determined" else status.notna()
    ).to_numpy()
    return out


def fleet_fact_table(
    metrics_dirs: Any,
    fact: str = "guard_blocked",
    *,
    v1_prose_fallback: bool = True,
    client: Any = None,
) -> pd.DataFrame:
    """The threshold study's :func:`~evalkit.analyses.threshold.fact_table` of every directory
    of the fleet (its journal ``eval.jsonl``), stacked with a ``metrics_dir`` column;
    ``attrs["diagnostics"]`` holds every journal's skipped lines, each prefixed by its
    directory. A directory without a journal is an error naming it: a study's input is all or
    nothing. ``client``: as :func:`evalkit.fleet.score.run_fleet` (``None`` reads them here)."""
    from functools import partial

    import pandas as pd

    from evalkit.analyses.threshold import NUMERIC_FACTS, fact_table
    from evalkit.fleet.score import resolve_fleet, run_fleet

    if fact not in NUMERIC_FACTS:  # before any directory is read
        raise EvalkitError(f"fact {fact!r} is not a numeric fact; choose one of {NUMERIC_FACTS}")
    dirs = resolve_fleet(metrics_dirs)
    task = partial(fact_table, fact=fact, v1_prose_fallback=v1_prose_fallback)
    results = run_fleet(dirs, task, client=client)
    failed = [str(failure) for _, failure in results if failure is not None]
    if failed:
        raise EvalkitError(f"{len(failed)} of {len(dirs)} directories: " + "; ".join(failed))
    frames, diagnostics = [], []
    for d, (frame, _) in zip(dirs, results, strict=True):
        diagnostics += [f"{d}: {line}" for line in frame.attrs.get("diagnostics", [])]
        frame.insert(0, "metrics_dir", d)
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update(fact=fact, diagnostics=diagnostics)
    return out


def fact_units(facts: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Sessions of a :func:`fleet_fact_table` at threshold ``t``: a session fires when a record
    has ``value >= t``; it is undetermined when it does not fire and holds an unknown value."""
    missing = [c for c in ("metrics_dir", "session_id", "value") if c not in facts]
    if missing:
        raise EvalkitError(f"the fact table lacks {missing} (expected fleet_fact_table's)")
    t = float(threshold)
    if not math.isfinite(t):
        raise EvalkitError(f"threshold must be a finite number, got {threshold!r}")
    value = facts["value"].astype(float)
    work = facts[["metrics_dir", "session_id"]].copy()
    work["fires"] = (value >= t).to_numpy()  # NaN >= t is False: unknown never fires
    work["unknown"] = value.isna().to_numpy()
    per = work.groupby(["metrics_dir", "session_id"], sort=False, observed=True).agg(
        fires=("fires", "any"), unknown=("unknown", "any")
    )
    per["determined"] = per["fires"] | ~per["unknown"]
    return per.reset_index()[list(UNIT_COLUMNS)]


# -- results ---------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class PooledRate(Readable):
    """The fleet's rate: ``k`` of ``n`` determined sessions in ``n_repositories``
    repositories; its interval resamples whole repositories (percentile bootstrap)."""

    statistic: float | None
    k: int
    n: int
    n_repositories: int
    bootstrap: BootstrapResult
    level: float

    def confidence_interval(self, level: float | None = None) -> ConfidenceInterval:
        """The cluster-bootstrap interval (another ``level``: from the same resamples)."""
        from evalkit.stats import ConfidenceInterval
        from evalkit.stats.bootstrap import percentile_interval

        if level is None or level == self.level:
            return self.bootstrap.confidence_interval
        if self.bootstrap.distribution.size == 0:
            return ConfidenceInterval(None, None)
        return ConfidenceInterval(*percentile_interval(self.bootstrap.distribution, level))

    def _headline(self) -> str:
        shown = fmt_estimate(
            self.statistic, self.bootstrap.confidence_interval, self.n, percent=True
        )
        return f"pooled rate {self.k}/{self.n} = {shown} over {self.n_repositories} repositories"


@dataclass(frozen=True, repr=False)
class Heterogeneity(Readable):
    """Do the repositories share one rate? ``q`` (Pearson chi-square, = Cochran's Q with
    pooled-variance weights), ``df``, ``p_value`` (chi-square), ``p_value_permutation``
    (repositories' sizes and the fleet's fires fixed, ``n_permutations`` draws), ``i_squared``
    ((Q - df) / Q, at least 0), ``sparse_share`` (share of expected cells below 5, where the
    chi-square p-value is rough); all ``None`` with a ``note`` when undefined."""

    q: float | None
    df: int
    p_value: float | None
    p_value_permutation: float | None
    i_squared: float | None
    n_repositories: int
    sparse_share: float | None
    n_permutations: int
    note: str = ""

    def _headline(self) -> str:
        if self.q is None:
            return f"heterogeneity undefined over {self.n_repositories} repositories ({self.note})"
        return (
            f"heterogeneity Q = {fmt_number(self.q)} on {self.df} df, p = {fmt_number(self.p_value, 3)}"
            f" (permutation p = {fmt_number(self.p_value_permutation, 3)}), "
            f"I2 = {fmt_number(self.i_squared, percent=True)}"
        )


@dataclass(frozen=True, repr=False)
class FleetRates(Readable):
    """Result of :func:`fire_rates`: ``per_repository`` (one row per repository: ``metrics_dir,
    repository, sessions, n, k, rate, ci_low, ci_high, flag``), ``pooled``, ``heterogeneity``,
    ``leave_one_out`` (``metrics_dir, repository, n_without, k_without, rate_without, ci_low,
    ci_high, flag_without``, ``changes_flag``: the pooled flags differ without it,
    ``crosses_ceiling``: the pooled point estimate moves across the ceiling without it),
    ``flags`` (the pooled rate's) and the parameters. A repository with ``changes_flag`` or
    ``crosses_ceiling`` is one that drives the fleet's verdict.
    ``.statistic``, ``.n`` and ``.confidence_interval()`` are the pooled rate's."""

    label: str
    per_repository: pd.DataFrame
    pooled: PooledRate
    heterogeneity: Heterogeneity
    leave_one_out: pd.DataFrame
    flags: tuple[str, ...]
    ceiling: float
    level: float
    n_undetermined: int

    @property
    def statistic(self) -> float | None:
        return self.pooled.statistic

    @property
    def n(self) -> int:
        return self.pooled.n

    def confidence_interval(self, level: float | None = None) -> ConfidenceInterval:
        return self.pooled.confidence_interval(level)

    def _headline(self) -> str:
        flags = f"; flags: {', '.join(self.flags)}" if self.flags else ""
        return f"{self.label}: {self.pooled!r}{flags}"

    def _rows(self) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = [
            (
                str(r.repository),
                f"{r.k}/{r.n} = " + fmt_estimate(r.rate, (r.ci_low, r.ci_high), None, percent=True),
            )
            for r in self.per_repository.itertuples()
        ]
        return [
            *rows,
            ("heterogeneity", repr(self.heterogeneity)),
            ("undetermined sessions", self.n_undetermined),
        ]

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-simple, repositories by label (no machine paths)."""
        from evalkit.analyses._results import jsonable

        ci = self.pooled.confidence_interval()
        het = self.heterogeneity
        return jsonable(
            {
                "label": self.label,
                "ceiling": self.ceiling,
                "level": self.level,
                "pooled": {
                    "rate": self.pooled.statistic,
                    "k": self.pooled.k,
                    "n": self.pooled.n,
                    "repositories": self.pooled.n_repositories,
                    "ci": [ci.low, ci.high],
                    "ci_method": "percentile cluster bootstrap, repository = cluster",
                    "n_resamples": self.pooled.bootstrap.n_resamples,
                    "flags": list(self.flags),
                },
                "undetermined_sessions": self.n_undetermined,
                "heterogeneity": {k: getattr(het, k) for k in het.__dataclass_fields__},
                "per_repository": self.per_repository.drop(columns="metrics_dir"),
                "leave_one_out": self.leave_one_out.drop(columns="metrics_dir"),
            }
        )


# -- the analysis ----------------------------------------------------------------------------


def repository_labels(metrics_dirs: Sequence[str]) -> dict[str, str]:
    """Short names: the trailing path parts every directory shares are dropped (``metrics``,
    ``.orchestrator/metrics``), then the last parts of what is left, as few as make every
    label unique (the same number of parts for all)."""
    parts = {d: PurePath(os.path.normpath(d)).parts for d in metrics_dirs}
    common = 0
    if len(parts) > 1:
        while all(len(p) > common + 1 for p in parts.values()) and (
            len({p[-1 - common] for p in parts.values()}) == 1
        ):
            common += 1
    trimmed = {d: p[: len(p) - common] for d, p in parts.items()}
    longest = max((len(p) for p in trimmed.values()), default=0)
    for depth in range(1, longest + 1):
        labels = {d: "/".join(p[-depth:]) for d, p in trimmed.items()}
        if len(set(labels.values())) == len(labels):
            return labels
    return {d: os.path.normpath(d) for d in metrics_dirs}


def _check_units(units: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in UNIT_COLUMNS if c not in units]
    if missing:
        raise EvalkitError(f"units lack {missing} (expected dimension_units or fact_units)")
    if units.empty:
        raise EvalkitError("units are empty: no session to compute a fire rate on")
    out = units[list(UNIT_COLUMNS)].copy()
    for col in ("fires", "determined"):
        if out[col].isna().any():
            raise EvalkitError(f"units[{col!r}] must be True or False in every row")
        out[col] = out[col].astype(bool)
    if (out["fires"] & ~out["determined"]).any():
        raise EvalkitError("a unit that fires is determined: fires without determined found")
    return out


def _per_repository(units: pd.DataFrame, level: float) -> pd.DataFrame:
    from evalkit.stats import wilson_interval

    grouped = units.groupby("metrics_dir", sort=False, observed=True)
    table = grouped.agg(
        sessions=("session_id", "size"), n=("determined", "sum"), k=("fires", "sum")
    ).reset_index()
    labels = repository_labels(table["metrics_dir"].tolist())
    table.insert(1, "repository", table["metrics_dir"].map(labels))
    cis = [
        wilson_interval(int(k), int(n), level) for k, n in zip(table["k"], table["n"], strict=True)
    ]
    table["rate"] = [k / n if n else None for k, n in zip(table["k"], table["n"], strict=True)]
    table["ci_low"] = [c.low for c in cis]
    table["ci_high"] = [c.high for c in cis]
    return table.astype({"sessions": int, "n": int, "k": int})


def _ratio(sums: np.ndarray) -> np.ndarray:
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[..., 1] > 0, sums[..., 0] / np.maximum(sums[..., 1], 1), np.nan)


def _pooled(units: pd.DataFrame, level: float, n_resamples: int, rng: Any) -> PooledRate:
    import numpy as np

    from evalkit.stats.bootstrap import bootstrap_sums

    used = units[units["determined"]]
    k, n = int(used["fires"].sum()), len(used)
    suff = np.column_stack([used["fires"].to_numpy(float), np.ones(n)])
    boot = bootstrap_sums(
        suff if n else np.zeros((1, 2)),
        _ratio,
        n_resamples=n_resamples,
        rng=rng,
        level=level,
        method="percentile",
        clusters=used["metrics_dir"].tolist() if n else None,
        name="pooled fire rate",
    )
    return PooledRate(k / n if n else None, k, n, int(used["metrics_dir"].nunique()), boot, level)


def _check_seed(seed: Any) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise EvalkitError(f"seed must be an int >= 0, got {seed!r}")


def pooled_rate(
    units: pd.DataFrame, *, level: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> PooledRate:
    """The pooled rate of ``units`` alone, with the interval :func:`fire_rates` gives it (the
    same percentile cluster bootstrap, repository = cluster, same seed, same draws)."""
    import numpy as np

    from evalkit.stats.checks import check_level, check_resamples

    check_level(level)
    n_resamples = check_resamples(n_resamples, minimum=100)
    _check_seed(seed)
    return _pooled(_check_units(units), level, n_resamples, np.random.default_rng(seed))


def _heterogeneity(k: np.ndarray, n: np.ndarray, n_permutations: int, rng: Any) -> Heterogeneity:
    import numpy as np
    from scipy.stats import chi2

    keep = n > 0
    k, n = k[keep].astype(np.int64), n[keep].astype(np.int64)
    r, total_k, total_n = int(k.size), int(k.sum()), int(n.sum())
    df = max(r - 1, 0)
    if r < 2 or total_k in (0, total_n):
        why = (
            "fewer than two repositories with a determined session"
            if r < 2
            else f"every session {'fires' if total_k else 'does not fire'}: no variation to test"
        )
        return Heterogeneity(None, df, None, None, None, r, None, 0, note=why)
    p = total_k / total_n

    def pearson(fires: np.ndarray) -> np.ndarray:
        return ((fires - n * p) ** 2 / (n * p * (1 - p))).sum(axis=-1)

    q = float(pearson(k))
    draws = rng.multivariate_hypergeometric(n, total_k, size=n_permutations)
    # a tolerance so a permutation equal to the data is never lost to rounding
    extreme = int(np.sum(pearson(draws) >= q - 1e-9 * max(1.0, q)))
    expected = np.concatenate([n * p, n * (1 - p)])
    return Heterogeneity(
        q=q,
        df=df,
        p_value=float(chi2.sf(q, df)),
        p_value_permutation=(1 + extreme) / (1 + n_permutations),
        i_squared=max(0.0, (q - df) / q) if q > 0 else 0.0,
        n_repositories=r,
        sparse_share=float(np.mean(expected < 5)),
        n_permutations=n_permutations,
    )


def _flags(
    keys: Sequence[str],
    k: Sequence[int],
    n: Sequence[int],
    cis: Sequence[Any],
    label: str,
    ceiling: float,
) -> dict[str, tuple[str, ...]]:
    """The rubric-replay study's dead-instrument flags (:func:`~evalkit.analyses.replay.
    dead_instrument_flags`) of each keyed rate: key -> flags."""
    import pandas as pd

    from evalkit.analyses.replay import dead_instrument_flags

    def col(values: Sequence[Any]) -> pd.Series:
        return pd.Series(list(values), dtype=object)

    rates = pd.DataFrame(
        {
            "rubric": col(keys),
            "dimension": col([label] * len(keys)),
            "status": col(["fail"] * len(keys)),
            "k": col([int(x) for x in k]),
            "n": col([int(x) for x in n]),
            "rate": col([kk / nn if nn else None for kk, nn in zip(k, n, strict=True)]),
            "ci_low": col([c[0] for c in cis]),
            "ci_high": col([c[1] for c in cis]),
        }
    )
    found: dict[str, list[str]] = {key: [] for key in keys}
    for row in dead_instrument_flags(rates, ceiling).itertuples():
        found[row.rubric].append(str(row.flag))
    return {key: tuple(v) for key, v in found.items()}


def _leave_one_out(
    per: pd.DataFrame,
    pooled: PooledRate,
    pooled_flags: tuple[str, ...],
    label: str,
    ceiling: float,
    boot: dict[str, Any],
) -> pd.DataFrame:
    """The pooled rate without each repository (same cluster bootstrap, on the others)."""
    import numpy as np
    import pandas as pd

    from evalkit.stats.bootstrap import bootstrap_sums

    sums = per[["k", "n"]].to_numpy(dtype=float)
    rows = []
    for i, d in enumerate(per["metrics_dir"]):
        rest = np.delete(sums, i, axis=0)
        rest = rest[rest[:, 1] > 0]
        k, n = (int(rest[:, 0].sum()), int(rest[:, 1].sum())) if rest.size else (0, 0)
        ci: tuple[float | None, float | None] = (None, None)
        if n:
            with warnings.catch_warnings():  # degenerate subsets: the interval says so (None)
                warnings.simplefilter("ignore", DegenerateDataWarning)
                result = bootstrap_sums(
                    rest, _ratio, method="percentile", rng=np.random.default_rng([boot["seed"], i]),
                    n_resamples=boot["n_resamples"], level=boot["level"], name="leave-one-out rate",
                )  # fmt: skip
            ci = tuple(result.confidence_interval)  # type: ignore[assignment]
        rows.append((d, k, n, k / n if n else None, ci))
    flags = _flags([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                   [r[4] for r in rows], label, ceiling)  # fmt: skip
    return pd.DataFrame(
        {
            "metrics_dir": per["metrics_dir"].to_numpy(),
            "repository": per["repository"].to_numpy(),
            "n_without": [r[2] for r in rows],
            "k_without": [r[1] for r in rows],
            "rate_without": pd.Series([r[3] for r in rows], dtype=object),
            "ci_low": pd.Series([r[4][0] for r in rows], dtype=object),
            "ci_high": pd.Series([r[4][1] for r in rows], dtype=object),
            "flag_without": ["; ".join(flags[r[0]]) for r in rows],
            "changes_flag": [set(flags[r[0]]) != set(pooled_flags) for r in rows],
            "crosses_ceiling": [_crosses(pooled.statistic, r[3], ceiling) for r in rows],
        }
    )


def _crosses(rate: float | None, without: float | None, ceiling: float) -> bool:
    """Whether leaving a repository out moves the pooled point estimate across the ceiling."""
    return rate is not None and without is not None and (rate > ceiling) != (without > ceiling)


def fire_rates(
    units: pd.DataFrame,
    *,
    label: str = "fail",
    ceiling: float = 0.10,
    level: float = 0.95,
    n_resamples: int = 2000,
    n_permutations: int = 2000,
    seed: int = 0,
) -> FleetRates:
    """Per-repository and pooled fire rates of ``units`` (:func:`dimension_units`,
    :func:`fact_units`), heterogeneity, leave-one-out rates and dead-instrument flags.

    ``label`` names the signal in flags and plots (e.g. ``"rubric-v2 quality-gates fail"``).
    ``ceiling``: the rate a signal may have (~10%, HR-101). The pooled interval is a
    percentile bootstrap resampling whole repositories (``n_resamples``, seeded by ``seed``);
    fewer than two repositories leave it undefined, with a ``DegenerateDataWarning``.
    """
    import numpy as np

    from evalkit.stats.checks import check_level, check_resamples

    check_level(level)
    if isinstance(ceiling, bool) or not isinstance(ceiling, int | float) or not 0 <= ceiling <= 1:
        raise EvalkitError(f"ceiling must be a rate in [0, 1], got {ceiling!r}")
    n_resamples = check_resamples(n_resamples, minimum=100)
    n_permutations = check_resamples(n_permutations, minimum=100)
    _check_seed(seed)
    work = _check_units(units)
    per = _per_repository(work, level)
    pooled = _pooled(work, level, n_resamples, np.random.default_rng(seed))
    pooled_ci = tuple(pooled.confidence_interval())
    pooled_flags = _flags(["pooled"], [pooled.k], [pooled.n], [pooled_ci], label, ceiling)["pooled"]
    repo_flags = _flags(
        per["metrics_dir"].tolist(), per["k"].tolist(), per["n"].tolist(),
        list(zip(per["ci_low"], per["ci_high"], strict=True)), label, ceiling,
    )  # fmt: skip
    per["flag"] = ["; ".join(repo_flags[d]) for d in per["metrics_dir"]]
    het = _heterogeneity(
        per["k"].to_numpy(), per["n"].to_numpy(), n_permutations, np.random.default_rng([seed, 1])
    )
    boot = {"seed": seed, "n_resamples": n_resamples, "level": level}
    loo = _leave_one_out(per, pooled, pooled_flags, label, float(ceiling), boot)
    return FleetRates(
        label=label,
        per_repository=per,
        pooled=pooled,
        heterogeneity=het,
        leave_one_out=loo,
        flags=pooled_flags,
        ceiling=float(ceiling),
        level=level,
        n_undetermined=int((~work["determined"]).sum()),
    )


def plot_forest(rates: FleetRates, max_rows: int = 40) -> Figure:
    """Forest plot: each repository's rate with its Wilson interval, the pooled rate's cluster-
    bootstrap interval as a diamond, the ceiling dashed; repositories whose removal changes
    the pooled flag in red (see :mod:`evalkit.analyses.fleet_forest`)."""
    from evalkit.analyses.fleet_forest import forest_figure

    return forest_figure(rates, max_rows=max_rows)
