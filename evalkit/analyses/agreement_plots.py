"""The agreement study's forest plot: every coefficient with its CI, per target."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.extras import require
from evalkit.files.escape import plot_text

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["UNDEFINED", "missing", "plot_forest"]

#: How a coefficient without variance is named (in tables and on the plot).
UNDEFINED = "undefined: no variance"


def missing(v: object) -> bool:
    """None or NaN: a figure that is not there."""
    return v is None or (isinstance(v, float) and v != v)


def plot_forest(table: pd.DataFrame) -> Figure:
    """Estimates with their CIs per target and coefficient; undefined ones are named, not drawn."""
    require("matplotlib", purpose="the plots")
    import matplotlib.pyplot as plt

    targets = sorted(table["target"].unique())
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.9 * len(targets)))
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52"]
    for i, target in enumerate(targets):
        sub = table[table["target"] == target].reset_index(drop=True)
        for j, r in sub.iterrows():
            y = i + (j - 1.5) * 0.18
            if missing(r["estimate"]):
                ax.text(-0.95, y, f"{r['coefficient']}: {UNDEFINED}", fontsize=7, va="center")
                continue
            lo = r["estimate"] if missing(r["ci_low"]) else r["ci_low"]
            hi = r["estimate"] if missing(r["ci_high"]) else r["ci_high"]
            ax.plot([lo, hi], [y, y], color=colours[j % 4], linewidth=2)
            ax.plot(
                r["estimate"],
                y,
                "o",
                color=colours[j % 4],
                label=r["coefficient"] if i == 0 else None,
            )
    ax.set_yticks(range(len(targets)), [plot_text(t) for t in targets])
    ax.set_xlim(-1, 1)
    ax.axvline(0, color="0.6", linewidth=0.8)
    ax.set_xlabel("coefficient (95% percentile bootstrap CI over items)")
    n = int(table["n_items"].max()) if len(table) else 0
    ax.set_title(f"Agreement per target (n = {n} items per target)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    plt.close(fig)
    return fig
