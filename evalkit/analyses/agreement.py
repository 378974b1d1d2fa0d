"""Agreement study: several raters' labels (long table), per target and per category.

Input columns: ``item_id, target, family, rater, label`` (any other column is ignored; in
particular the simulator's ``truth`` is never read). Per target the raters' labels form an
items x raters matrix; the coefficients come from ``evalkit.stats``: Fleiss' κ, Krippendorff's α
(nominal), Gwet's AC1 and Brennan–Prediger's coefficient (PABAK for two raters; its
multi-rater generalization otherwise), each with a percentile bootstrap interval over items.
A target whose labels never vary has no defined κ: it is reported as "undefined: no variance",
never as a number or NaN.
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalkit.analyses.agreement_labels import REQUIRED_COLUMNS, full_counts, load_labels, wide
from evalkit.analyses.agreement_plots import UNDEFINED, plot_forest
from evalkit.analyses.agreement_plots import missing as _missing
from evalkit.analyses.headline import Headline
from evalkit.display import fmt_estimate
from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.files.escape import markdown_code

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PARADOX_CAPTION",
    "REQUIRED_COLUMNS",
    "describe",
    "figures",
    "format_category_table",
    "format_paradox",
    "format_table",
    "headline",
    "load_labels",
    "paradox",
    "paradox_text",
    "per_category",
    "per_target",
    "plot_forest",
    "variance_free",
    "variance_free_text",
    "wide",
]

_COEFFICIENTS = ("fleiss_kappa", "krippendorff_alpha", "gwet_ac1", "pabak")
_NAMES = {
    "fleiss_kappa": "Fleiss κ",
    "krippendorff_alpha": "Krippendorff α",
    "gwet_ac1": "Gwet AC1",
    "pabak": "PABAK / Brennan–Prediger",
}


def describe(labels: pd.DataFrame) -> pd.DataFrame:
    """Items, raters, families and label categories per target."""
    rows = []
    for target, grp in labels.groupby("target", sort=True):
        rows.append(
            {
                "target": target,
                "items": int(grp["item_id"].nunique()),
                "raters": int(grp["rater"].nunique()),
                "families": ", ".join(sorted(grp["family"].astype(str).unique())),
                "labels seen": ", ".join(sorted(grp["label"].dropna().astype(str).unique())),
            }
        )
    import pandas as pd

    return pd.DataFrame(rows).set_index("target")


def variance_free(labels: pd.DataFrame) -> pd.DataFrame:
    """Targets whose labels never vary (one category across every item and rater)."""
    import pandas as pd

    rows = []
    for target, grp in labels.groupby("target", sort=True):
        cats = sorted(grp["label"].dropna().astype(str).unique())
        rows.append(
            {
                "target": target,
                "categories": len(cats),
                "only_label": cats[0] if len(cats) == 1 else None,
                "variance_free": len(cats) <= 1,
                "n_items": int(grp["item_id"].nunique()),
                "n_labels": len(grp),
            }
        )
    return pd.DataFrame(rows)


def variance_free_text(vf: pd.DataFrame) -> str:
    """Plain statement per variance-free target; says so when there is none."""
    flat = vf[vf["variance_free"]]
    if flat.empty:
        return "Every target's labels vary: each coefficient below is defined."
    parts = [
        f"- {markdown_code(r.target)}: all {r.n_labels} labels over {r.n_items} items are "
        f"{markdown_code(r.only_label)}. "
        "κ, α and AC1 are undefined here (no variance: chance agreement is 1, so 0/0) — the "
        "target cannot separate anything, which is a finding about the instrument, not a "
        "perfect agreement."
        for r in flat.itertuples()
    ]
    return "\n".join(parts)


def _coefficient(name: str, matrix: list[list[Any]], categories: list[Any]) -> Any:
    from evalkit import stats

    if name == "fleiss_kappa":
        return stats.fleiss_kappa(matrix, categories=categories)
    if name == "krippendorff_alpha":
        return stats.krippendorff_alpha(matrix, level="nominal")
    if name == "gwet_ac1":
        return stats.gwet_ac1(matrix, categories=categories)
    if len(matrix[0]) == 2:
        return stats.pabak(matrix, categories=categories)
    return stats.brennan_prediger(matrix, categories=categories)


def per_target(
    labels: pd.DataFrame, *, n_resamples: int = 500, seed: int = 0, level: float = 0.95
) -> pd.DataFrame:
    """One row per target x coefficient: estimate, bootstrap CI, n items, n raters, note."""
    import numpy as np
    import pandas as pd

    rows = []
    for target in sorted(labels["target"].unique()):
        mat = wide(labels, target)
        matrix = mat.to_numpy().tolist()
        categories = sorted({v for row in matrix for v in row if v is not None}, key=str)
        for coef in _COEFFICIENTS:
            row: dict[str, Any] = {
                "target": target,
                "coefficient": _NAMES[coef],
                "estimate": None,
                "ci_low": None,
                "ci_high": None,
                "n_items": int(mat.shape[0]),
                "n_raters": int(mat.shape[1]),
                "observed_agreement": None,
                "note": "",
            }
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateDataWarning)
                try:
                    res = _coefficient(coef, matrix, categories)
                except EvalkitError as exc:
                    row["note"] = f"not computed: {exc}"
                    rows.append(row)
                    continue
                row["observed_agreement"] = getattr(res, "observed_agreement", None)
                if res.statistic is None:
                    row["note"] = UNDEFINED
                else:
                    row["estimate"] = float(res.statistic)
                    try:
                        lo, hi = res.confidence_interval(
                            level=level,
                            method="percentile",
                            n_resamples=n_resamples,
                            rng=np.random.default_rng(seed),
                        )
                        row["ci_low"], row["ci_high"] = lo, hi
                    except EvalkitError as exc:
                        row["note"] = f"no CI: {exc}"
            rows.append(row)
    return pd.DataFrame(rows)


def format_table(table: pd.DataFrame) -> pd.DataFrame:
    """Target x coefficient grid of ``estimate [CI], n = items`` strings (never NaN)."""
    from evalkit.analyses._results import fmt_estimate

    shown = table.copy()
    shown["shown"] = [
        (r.note or "undefined")
        if _missing(r.estimate)
        else fmt_estimate(r.estimate, (_opt(r.ci_low), _opt(r.ci_high)), r.n_items)
        for r in shown.itertuples()
    ]
    grid = shown.pivot(index="target", columns="coefficient", values="shown")
    grid = grid.reindex(columns=[_NAMES[c] for c in _COEFFICIENTS])
    raters = shown.groupby("target")["n_raters"].first()
    grid.insert(0, "raters", raters)
    return grid


def per_category(labels: pd.DataFrame, *, n_resamples: int = 500, seed: int = 0) -> pd.DataFrame:
    """Per target x category: Fleiss' per-category κ_j (percentile bootstrap CI over items) and
    specific agreement, each with n."""
    import pandas as pd

    from evalkit import stats

    rows = []
    for target in sorted(labels["target"].unique()):
        mat = wide(labels, target)
        matrix = mat.to_numpy().tolist()
        categories = sorted({v for row in matrix for v in row if v is not None}, key=str)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            fk = stats.fleiss_kappa(matrix, categories=categories)
            try:
                sa = stats.specific_agreement(matrix, categories=categories, positive=categories[0])
                sa_per = sa.per_category or {}
            except EvalkitError:
                sa_per = {}
        boot, sa_boot = _kappa_j_boot(matrix, categories, n_resamples, seed)
        for cat in categories:
            kj = (fk.per_category or {}).get(cat)
            sj = sa_per.get(cat)
            prevalence = sum(v == cat for row in matrix for v in row) / max(
                1, sum(v is not None for row in matrix for v in row)
            )
            rows.append(
                {
                    "target": target,
                    "category": cat,
                    "share_of_labels": prevalence,
                    "kappa_j": None if kj is None else kj.statistic,
                    "kappa_j_ci_low": boot[cat][0],
                    "kappa_j_ci_high": boot[cat][1],
                    "specific_agreement": None if sj is None else _stat(sj),
                    "specific_ci_low": sa_boot[cat][0],
                    "specific_ci_high": sa_boot[cat][1],
                    "n_items": int(mat.shape[0]),
                }
            )
    return pd.DataFrame(rows)


def _opt(v: Any) -> float | None:
    return None if _missing(v) else float(v)


_Intervals = dict[Any, tuple[float | None, float | None]]


def _kappa_j_boot(
    matrix: list[list[Any]], categories: list[Any], n_resamples: int, seed: int
) -> tuple[_Intervals, _Intervals]:
    """Percentile bootstrap CIs (items resampled, items rated by all m raters) of Fleiss'
    per-category κ_j (Fleiss 1971): ``1 - Σ_i n_ij (m - n_ij) / (N m (m-1) p_j (1 - p_j))``,
    and of the specific agreement ``Σ_i n_ij (n_ij - 1) / Σ_i n_ij (m - 1)`` (Uebersax)."""
    import numpy as np

    full, counts = full_counts(matrix, categories)
    out: _Intervals = {c: (None, None) for c in categories}
    sa_out: _Intervals = {c: (None, None) for c in categories}
    if len(full) < 2:
        return out, sa_out
    m = len(full[0])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(full), size=(n_resamples, len(full)))
    boot = counts[idx]  # resamples x items x categories
    n = boot.shape[1]
    p = boot.sum(axis=1) / (n * m)
    num = (boot * (m - boot)).sum(axis=1)
    den = n * m * (m - 1) * p * (1 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        kj = np.where(den > 0, 1 - num / np.where(den > 0, den, 1.0), np.nan)
        sa_num = (boot * (boot - 1)).sum(axis=1)
        sa_den = (boot * (m - 1)).sum(axis=1)
        sa = np.where(sa_den > 0, sa_num / np.where(sa_den > 0, sa_den, 1.0), np.nan)
    for target, dist in ((out, kj), (sa_out, sa)):
        for j, c in enumerate(categories):
            vals = dist[:, j][np.isfinite(dist[:, j])]
            if vals.size >= 0.9 * n_resamples:  # too many undefined resamples: no CI
                lo, hi = np.percentile(vals, [2.5, 97.5])
                target[c] = (float(lo), float(hi))
    return out, sa_out


def _stat(x: Any) -> float | None:
    v = getattr(x, "statistic", x)
    return None if v is None else float(v)


def format_category_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per-category table with ``undefined: no variance`` instead of missing numbers."""
    out = table.copy()

    def show(v: Any, lo: Any = None, hi: Any = None) -> str:
        if _missing(v):
            return UNDEFINED
        if not _missing(lo) and not _missing(hi):
            return f"{v:.3f} [{lo:.3f}, {hi:.3f}]"
        return f"{v:.3f} [CI undefined]"

    out["κ_j [95% bootstrap CI]"] = [
        show(r.kappa_j, r.kappa_j_ci_low, r.kappa_j_ci_high) for r in out.itertuples()
    ]
    out["specific agreement [95% bootstrap CI]"] = [
        show(r.specific_agreement, r.specific_ci_low, r.specific_ci_high) for r in out.itertuples()
    ]
    out["share of labels"] = [f"{100 * r.share_of_labels:.1f}%" for r in out.itertuples()]
    return out[
        [
            "target",
            "category",
            "share of labels",
            "κ_j [95% bootstrap CI]",
            "specific agreement [95% bootstrap CI]",
            "n_items",
        ]
    ].set_index(["target", "category"])


def _interval(values: Any) -> tuple[float | None, float | None]:
    import numpy as np

    vals = np.asarray(values, dtype=float)
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return None, None
    lo, hi = np.percentile(vals, [2.5, 97.5])
    return float(lo), float(hi)


def _paradox_boot(
    matrix: list[list[Any]], categories: list[Any], n_resamples: int, seed: int
) -> dict[str, tuple[float | None, float | None]]:
    """Percentile bootstrap CIs (items resampled) of observed agreement, Fleiss' chance agreement
    and, for two categories, the mean prevalence and bias indices over rater pairs
    (Byrt, Bishop & Carlin 1993: ``|a - d| / n`` and ``|b - c| / n`` per pair)."""
    import numpy as np

    full, counts = full_counts(matrix, categories)
    out: dict[str, tuple[float | None, float | None]] = {
        k: (None, None) for k in ("po", "pe", "pi", "bi")
    }
    if len(full) < 2:
        return out
    m = len(full[0])
    idx = np.random.default_rng(seed).integers(0, len(full), size=(n_resamples, len(full)))
    per_item = (counts * (counts - 1)).sum(axis=1) / (m * (m - 1))
    out["po"] = _interval(per_item[idx].mean(axis=1))
    shares = counts[idx].sum(axis=1) / (len(full) * m)  # resamples x categories
    out["pe"] = _interval((shares**2).sum(axis=1))
    if len(categories) == 2:
        arr = np.array(full, dtype=object)
        pis, bis = [], []
        for a, b in itertools.combinations(range(m), 2):
            x, y = arr[:, a] == categories[0], arr[:, b] == categories[0]
            both_first = (x & y).astype(float)
            both_second = (~x & ~y).astype(float)
            pis.append(np.abs(both_first[idx].mean(axis=1) - both_second[idx].mean(axis=1)))
            bis.append(
                np.abs(
                    (x & ~y).astype(float)[idx].mean(axis=1)
                    - (~x & y).astype(float)[idx].mean(axis=1)
                )
            )
        out["pi"] = _interval(np.mean(pis, axis=0))
        out["bi"] = _interval(np.mean(bis, axis=0))
    return out


def _paradox_target(
    matrix: list[list[Any]], n_raters: int, categories: list[Any], n_resamples: int, seed: int
) -> tuple[Any, list[float], list[float], tuple[float | None, float | None]]:
    """Fleiss' κ of one target, its rater pairs' prevalence and bias indices, κ's CI.

    The indices exist for binary targets only; degenerate-data warnings are silenced here, the
    table explains undefined figures.
    """
    import numpy as np

    from evalkit import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        fk = stats.fleiss_kappa(matrix, categories=categories)
        pis: list[float] = []
        bis: list[float] = []
        if len(categories) == 2:
            for a, b in itertools.combinations(range(n_raters), 2):
                pair = [[row[a], row[b]] for row in matrix]
                res = stats.pabak(pair, categories=categories)
                # two declared categories: pabak always gives both indices
                if res.prevalence_index is not None and res.bias_index is not None:
                    pis.append(res.prevalence_index)
                    bis.append(res.bias_index)
        kappa_ci: tuple[float | None, float | None] = (None, None)
        if fk.statistic is not None:
            with contextlib.suppress(EvalkitError):
                kappa_ci = fk.confidence_interval(
                    method="percentile", n_resamples=n_resamples, rng=np.random.default_rng(seed)
                )
    return fk, pis, bis, kappa_ci


def paradox(
    labels: pd.DataFrame,
    *,
    high_agreement: float = 0.8,
    low_kappa: float = 0.4,
    n_resamples: int = 500,
    seed: int = 0,
) -> pd.DataFrame:
    """κ-paradox diagnostics per target: observed and chance agreement vs κ, and (binary
    targets) the mean prevalence and bias indices over rater pairs (Byrt, Bishop & Carlin 1993),
    each with a percentile bootstrap 95% CI over items (``*_ci_low`` / ``*_ci_high``) and n.

    Numbers that do not exist are None: κ of a target whose labels never vary, the indices of a
    target with more than two categories (``diagnosis`` and :func:`format_paradox` say why).
    """
    import pandas as pd

    rows = []
    for target in sorted(labels["target"].unique()):
        mat = wide(labels, target)
        matrix = mat.to_numpy().tolist()
        categories = sorted({v for row in matrix for v in row if v is not None}, key=str)
        fk, pis, bis, kappa_ci = _paradox_target(
            matrix, mat.shape[1], categories, n_resamples, seed
        )
        boot = _paradox_boot(matrix, categories, n_resamples, seed)
        po, kappa = fk.observed_agreement, fk.statistic
        if kappa is None:
            flag = UNDEFINED
        elif po is not None and po >= high_agreement and kappa < low_kappa:
            flag = "paradox: high observed agreement, low κ"
        else:
            flag = ""
        rows.append(
            {
                "target": target,
                "n_items": int(mat.shape[0]),
                "n_items_full": len(full_counts(matrix, categories)[0]),
                "categories": len(categories),
                "observed_agreement": po,
                "observed_agreement_ci_low": boot["po"][0],
                "observed_agreement_ci_high": boot["po"][1],
                "chance_agreement": fk.chance_agreement,
                "chance_agreement_ci_low": boot["pe"][0],
                "chance_agreement_ci_high": boot["pe"][1],
                "fleiss_kappa": kappa,
                "fleiss_kappa_ci_low": kappa_ci[0],
                "fleiss_kappa_ci_high": kappa_ci[1],
                "mean_prevalence_index": sum(pis) / len(pis) if pis else None,
                "mean_prevalence_index_ci_low": boot["pi"][0],
                "mean_prevalence_index_ci_high": boot["pi"][1],
                "mean_bias_index": sum(bis) / len(bis) if bis else None,
                "mean_bias_index_ci_low": boot["bi"][0],
                "mean_bias_index_ci_high": boot["bi"][1],
                "diagnosis": flag,
            }
        )
    df = pd.DataFrame(rows).set_index("target").astype(object)
    return df.where(df.notna(), None)


def format_paradox(table: pd.DataFrame) -> pd.DataFrame:
    """The paradox table for the page: ``estimate [95% CI]`` strings, n once, never NaN."""
    import pandas as pd

    def show(r: Any, key: str, why_missing: str) -> str:
        v = r[key]
        if _missing(v):
            return why_missing
        lo, hi = r[f"{key}_ci_low"], r[f"{key}_ci_high"]
        if _missing(lo) or _missing(hi):
            return f"{float(v):.3f} [CI undefined]"
        return f"{float(v):.3f} [{float(lo):.3f}, {float(hi):.3f}]"

    rows = []
    for target, r in table.iterrows():
        not_binary = f"n/a ({r['categories']} categories; defined for 2)"
        rows.append(
            {
                "target": target,
                "n items": r["n_items_full"],
                "observed agreement": show(r, "observed_agreement", "n/a"),
                "chance agreement": show(r, "chance_agreement", "n/a"),
                "Fleiss κ": show(r, "fleiss_kappa", UNDEFINED),
                "mean prevalence index": show(r, "mean_prevalence_index", not_binary),
                "mean bias index": show(r, "mean_bias_index", not_binary),
                "diagnosis": r["diagnosis"] or "—",
            }
        )
    return pd.DataFrame(rows).set_index("target")


PARADOX_CAPTION = "`estimate [95% bootstrap CI]` over the items every rater labelled (n items)."


def paradox_text(table: pd.DataFrame) -> str:
    """What the paradox table says, in sentences."""
    lines = []
    for target, r in table.iterrows():
        if str(r["diagnosis"]).startswith("paradox"):
            lines.append(
                f"- {markdown_code(target)}: raters agree on "
                f"{100 * float(r['observed_agreement']):.1f}% of pairs, yet κ = {float(r['fleiss_kappa']):.3f}: chance agreement is "
                f"{100 * float(r['chance_agreement']):.1f}% because one label dominates "
                f"(mean prevalence index {float(r['mean_prevalence_index']):.3f}), "
                f"n = {r['n_items_full']} items. Read AC1 / PABAK beside κ."
            )
        elif r["diagnosis"] == UNDEFINED:
            lines.append(f"- {markdown_code(target)}: κ {UNDEFINED}.")
    return "\n".join(lines) or "No target shows high observed agreement with a low κ."


def figures(
    labels: pd.DataFrame,
    vf: pd.DataFrame,
    per_target_table: pd.DataFrame,
    per_category_table: pd.DataFrame,
    paradox_table: pd.DataFrame,
    *,
    families: Any = None,
    vs_gold: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """The page's machine-readable figures, for :func:`evalkit.analyses.write_results`.

    ``families``: the label families read from run logs (None for a labels file); ``vs_gold``:
    each judge's kappa against the gold set, when the runs labelled one.
    """
    return {
        "label_families": None if families is None else list(families.judges),
        "judges_vs_gold": None if vs_gold is None else vs_gold.to_dict(orient="records"),
        "n_items": int(labels["item_id"].nunique()),
        "targets": sorted(labels["target"].unique()),
        "variance_free": vf.to_dict(orient="records"),
        "per_target": per_target_table.to_dict(orient="records"),
        "per_category": per_category_table.to_dict(orient="records"),
        "paradox": paradox_table.reset_index().to_dict(orient="records"),
    }


# ------------------------------------------------------------------------ the landing headline


def headline(res: Mapping[str, Any]) -> Headline:
    """The agreement study's headline from its results: Fleiss κ per target (its range), with
    the undefined targets and the κ paradoxes one click away."""
    from evalkit.finite import finite_float

    rows = [r for r in res["per_target"] if r.get("coefficient") == "Fleiss κ"]
    defined = [r for r in rows if finite_float(r.get("estimate")) is not None]
    undefined = sorted(r["target"] for r in rows if finite_float(r.get("estimate")) is None)

    def one(r: Mapping[str, Any]) -> str:
        return fmt_estimate(
            finite_float(r["estimate"]),
            (finite_float(r["ci_low"]), finite_float(r["ci_high"])),
            None,
        )

    raters = sorted({r["n_raters"] for r in rows})
    items = sorted({r["n_items"] for r in rows})
    n_text = (
        f"n = {items[0]} items × {raters[0]} raters per target"
        if len(items) == 1 and len(raters) == 1
        else f"n = {'/'.join(map(str, items))} items per target"
    )
    if not defined:
        text = f"Fleiss κ undefined for every target (labels never vary); {n_text}"
        figure = "Fleiss κ undefined"
    elif len(defined) == 1:
        r = defined[0]
        text = f"Fleiss κ {one(r)} ({r['target']}), bootstrap 95% CI; {n_text}"
        figure = f"Fleiss κ {float(r['estimate']):.2f}"
    else:
        lo = min(defined, key=lambda r: r["estimate"])
        hi = max(defined, key=lambda r: r["estimate"])
        text = (
            f"Fleiss κ per target from {one(lo)} ({lo['target']}) to {one(hi)} "
            f"({hi['target']}), bootstrap 95% CIs, over {len(defined)} targets; {n_text}"
        )
        figure = f"Fleiss κ {float(lo['estimate']):.2f} to {float(hi['estimate']):.2f}"
    details = []
    if undefined:
        details.append(
            "κ undefined (labels never vary — no variance, not perfect agreement): "
            + ", ".join(undefined)
            + "."
        )
    paradox = [
        p["target"]
        for p in res.get("paradox") or []
        if str(p.get("diagnosis", "")).startswith("paradox")
    ]
    if paradox:
        details.append(
            "κ paradox (high observed agreement, low κ; read AC1/PABAK beside κ): "
            + ", ".join(sorted(paradox))
            + "."
        )
    return Headline(text, tuple(details), figure=figure)
