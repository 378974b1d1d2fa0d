"""The forest plot of a fleet's fire rates (:func:`evalkit.analyses.fleet.plot_forest`).

One row per repository (rate and Wilson interval, marker area by its n), the pooled rate's
cluster-bootstrap interval as a diamond at the bottom, the ceiling dashed. Repositories whose
removal changes the pooled dead-instrument flag, or moves the pooled rate across the ceiling,
are red: they are who drives the verdict. With more
repositories than ``max_rows``, the rows shown are the ones furthest from the pooled rate in
standard errors, and the title says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.files.escape import plot_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from evalkit.analyses.fleet import FleetRates

__all__ = ["forest_figure"]

_DRIVER = "#c44e52"
_OTHER = "#4c72b0"


def _shown(rates: FleetRates, max_rows: int) -> tuple[pd.DataFrame, int]:
    """Repositories with a determined session, most deviant first when there are too many,
    then ordered by rate (highest at the top)."""
    per = rates.per_repository.merge(
        rates.leave_one_out[["metrics_dir", "changes_flag", "crosses_ceiling"]],
        on="metrics_dir",
        how="left",
    )
    per["drives"] = per["changes_flag"] | per["crosses_ceiling"]
    per = per[per["n"] > 0].copy()
    total = len(per)
    p = rates.pooled.statistic
    if total > max_rows:
        if p is not None and 0 < p < 1:
            per["z"] = (per["k"] - per["n"] * p).abs() / (per["n"] * p * (1 - p)) ** 0.5
        else:
            per["z"] = per["n"].astype(float)
        per = per.nlargest(max_rows, "z")
    return per.sort_values(["rate", "n"], ascending=[True, True]), total


def forest_figure(rates: FleetRates, max_rows: int = 40) -> Figure:
    import matplotlib.pyplot as plt
    import numpy as np

    if not isinstance(max_rows, int) or isinstance(max_rows, bool) or max_rows < 1:
        from evalkit.errors import EvalkitError

        raise EvalkitError(f"max_rows must be a positive int, got {max_rows!r}")
    per, total = _shown(rates, max_rows)
    rows = len(per)
    fig, ax = plt.subplots(figsize=(8, 1.9 + 0.26 * (rows + 1)))
    y = np.arange(1, rows + 1)
    rate = per["rate"].astype(float).to_numpy()
    lo = per["ci_low"].astype(float).to_numpy()
    hi = per["ci_high"].astype(float).to_numpy()
    colors = [_DRIVER if bool(c) else _OTHER for c in per["drives"]]
    # a Wilson bound can sit a rounding error beyond a 0% or 100% rate: never a negative bar
    err = np.clip(np.vstack([np.nan_to_num(rate - lo), np.nan_to_num(hi - rate)]), 0, None)
    ax.hlines(y, rate - err[0], rate + err[1], colors=colors, linewidth=1.2)
    sizes = 12 + 60 * np.sqrt(per["n"].to_numpy(dtype=float) / max(1, int(per["n"].max())))
    ax.scatter(rate, y, s=sizes, c=colors, marker="s", zorder=3)
    pooled = rates.pooled
    low, high = pooled.confidence_interval()
    if pooled.statistic is not None:
        if low is not None and high is not None:
            ax.fill([low, pooled.statistic, high, pooled.statistic], [0, 0.3, 0, -0.3],
                    color="#333333", zorder=3)  # fmt: skip
        else:
            ax.scatter([pooled.statistic], [0], marker="D", color="#333333", zorder=3)
        ax.axvline(pooled.statistic, color="#333333", linestyle=":", linewidth=0.8)
    ax.axvline(rates.ceiling, color=_DRIVER, linestyle="--", linewidth=1,
               label=f"~{rates.ceiling:.0%} ceiling")  # fmt: skip
    labels = [plot_text(f"{r.repository} ({r.k}/{r.n})") for r in per.itertuples()]
    pooled_label = f"pooled ({pooled.k}/{pooled.n}, {pooled.n_repositories} repositories)"
    ax.set_yticks([0, *y.tolist()], [plot_text(pooled_label), *labels], fontsize=8)
    ax.set_ylim(-0.8, rows + 0.8)
    right = np.nanmax([rates.ceiling, *hi.tolist(), high if high is not None else 0.0])
    ax.set_xlim(0, min(1.0, 1.12 * right) if right > 0 else 1.0)
    ax.set_xlabel("fire rate (share of determined sessions)")
    ax.set_title(_title(rates, rows, total), fontsize=9)
    if any(c == _DRIVER for c in colors):
        ax.scatter([], [], marker="s", color=_DRIVER,
                   label="without it, the pooled flag or side of the ceiling changes")  # fmt: skip
    # below the axes: inside, it would cover the pooled diamond or a repository's bar
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    fig.tight_layout()
    plt.close(fig)
    return fig


def _title(rates: FleetRates, rows: int, total: int) -> str:
    het = rates.heterogeneity
    if het.q is None:
        spread = f"heterogeneity: {het.note}"
    else:
        p = het.p_value_permutation
        shown_p = "< 0.001" if p is not None and p < 0.001 else f"= {p:.3f}"
        spread = f"I² = {100 * (het.i_squared or 0):.0f}%, heterogeneity p {shown_p} (permutation)"
    flags = "; ".join(rates.flags) if rates.flags else "none"
    subset = "" if rows == total else f" ({rows} of {total} repositories, furthest from pooled)"
    level = f"{rates.level:.0%}"
    # plot_text keeps each line literal (untrusted labels); the line breaks are ours
    first = plot_text(f"{rates.label}{subset}")
    second = (
        f"per repository: Wilson {level} CI; pooled: {level} cluster bootstrap "
        "(repository = cluster)"
    )
    return first + "\n" + second + "\n" + plot_text(f"pooled flag: {flags}; {spread}")
