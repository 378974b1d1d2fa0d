"""Rubric replay: score one ledger under rubric-v1 and rubric-v2 and compare per dimension.

Rates are per dimension over the sessions scored (one row per session, so no clustering is
needed); each carries a Wilson 95% interval and its n. A session whose dimension status rests
on a source that did not exist (:mod:`evalkit.analyses.measurability`: no gate telemetry in the
ledger, guard signals before guard emission began, the third state) is unmeasured: out of n,
counted on its own with its cause. A status class far above the ~10% ceiling, or a graded
dimension that never fails, is flagged as a possible dead instrument: the flag is a reason to
look, not a verdict (a genuinely rare event and a broken reader look alike).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.analyses._journal import read_journal
from evalkit.analyses.measurability import RecordMeasurability, dimension_signal, tally
from evalkit.analyses.notes import Note, nothing_to_plot
from evalkit.extras import require
from evalkit.journal.reader import JOURNAL_NAME
from evalkit.record.dimension import DimensionId
from evalkit.rubrics.dimensions.gates import reports_contaminated_window, reports_zero_gate_events
from evalkit.stats.thresholds import FIRE_RATE_CEILING

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd
    from matplotlib.figure import Figure

    from evalkit.analyses.headline import Headline
    from evalkit.record.calibration_status import CalibrationAcceptance

__all__ = [
    "NEW_DIMENSION",
    "RATES_CAPTION",
    "STATUSES",
    "changed_detail",
    "changed_summary",
    "changed_text",
    "changed_verdicts",
    "dead_instrument_flags",
    "drift_summary",
    "drift_text",
    "figures",
    "flags_view",
    "headline",
    "journal_vs_replay",
    "plot_rates",
    "rate_matrix",
    "score_both",
    "sessions_scored",
    "sessions_text",
    "status_rates",
]

STATUSES: tuple[str, ...] = ("pass", "fail", "not-applicable", "cannot-determine")
#: What the status-rate table of one ledger shows (Markdown).
RATES_CAPTION = (
    "`k/n = rate [95% Wilson CI]`; n = sessions scored under that rubric whose status was "
    "measured; the unmeasured ones are counted apart, with their cause."
)
# Dimensions whose status is always not-applicable by design: reported, never graded.
REPORTED_ONLY: frozenset[str] = frozenset({DimensionId.EFFICIENCY_KPIS, DimensionId.GUARD_FRICTION})


def score_both(
    metrics_dir: str | Path, rubrics: tuple[str, ...] = ("rubric-v1", "rubric-v2")
) -> pd.DataFrame:
    """``evalkit.score_ledger`` under each rubric, stacked with a ``rubric`` column."""
    import pandas as pd

    import evalkit

    frames = []
    for rubric in rubrics:
        df = evalkit.score_ledger(metrics_dir, rubric=rubric).copy()
        df.insert(0, "rubric", rubric)
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def status_rates(
    scored: pd.DataFrame,
    level: float = 0.95,
    *,
    measured: Mapping[tuple[str, str], RecordMeasurability] | None = None,
) -> pd.DataFrame:
    """Per rubric x dimension x status: k, n, rate, Wilson CI (n = sessions measured).

    ``measured``: each (rubric, session)'s measurability
    (:func:`evalkit.analyses.instruments.measure_scored`); a session whose dimension was not
    measured is left out of n and counted in ``unmeasured``, its causes in ``unmeasured_why``.
    Without it every session counts. No interval on fewer than two sessions
    (``ci_low``/``ci_high`` None): one session is a case, not a rate.
    """
    import pandas as pd

    from evalkit.analyses._results import share

    rows = []
    for (rubric, dim), grp in scored.groupby(["rubric", "dimension"], sort=False):
        sessions = grp.drop_duplicates("session_id")
        by_session = measured or {}
        ms = [
            by_session[(str(rubric), str(sid))].of(dimension_signal(str(dim)))
            for sid in (sessions["session_id"] if measured is not None else [])
        ]
        u = tally(ms)
        keep = [m.measured for m in ms] if measured is not None else [True] * len(sessions)
        counts = sessions[keep]["status"].value_counts()
        n = int(sum(keep))
        for status in STATUSES:
            k = int(counts.get(status, 0))
            rate, lo, hi = share(k, n, level)
            rows.append(
                {
                    "rubric": rubric,
                    "dimension": dim,
                    "status": status,
                    "k": k,
                    "n": n,
                    "rate": rate,
                    "ci_low": lo,
                    "ci_high": hi,
                    "unmeasured": u.count,
                    "unmeasured_why": u.why() or None,
                }
            )
    return pd.DataFrame(rows)


def rate_matrix(rates: pd.DataFrame) -> pd.DataFrame:
    """A readable table: one row per rubric x dimension, ``k/n = rate [CI]`` per status."""
    from evalkit.analyses._results import fmt_estimate

    out = rates.copy()
    out["shown"] = [
        # n is already in "k/n"; only a single session gets its own label (n = 1, no CI)
        f"{r.k}/{r.n} = "
        + fmt_estimate(r.rate, (r.ci_low, r.ci_high), 1 if r.n == 1 else None, percent=True)
        if r.n
        else "—"  # none measured: the unmeasured column says why
        for r in out.itertuples()
    ]
    table = out.pivot_table(
        index=["rubric", "dimension"], columns="status", values="shown", aggfunc="first", sort=False
    )
    table = table.reindex(columns=list(STATUSES))
    if "unmeasured" in out and out["unmeasured"].any():
        first = out.drop_duplicates(["rubric", "dimension"]).set_index(["rubric", "dimension"])
        table["unmeasured"] = [
            f"{r.unmeasured} of {r.n + r.unmeasured}: {r.unmeasured_why}" if r.unmeasured else ""
            for r in first.reindex(table.index).itertuples()
        ]
    return table


def dead_instrument_flags(rates: pd.DataFrame, ceiling: float = FIRE_RATE_CEILING) -> pd.DataFrame:
    """Flags per graded dimension: ``fail`` or ``cannot-determine`` far above the ceiling (the
    whole CI above it), or ``fail`` at 0% (never fires), over the measured sessions; and every
    dimension with unmeasured sessions, with the cause (first, so the reason is read first)."""
    import pandas as pd

    rows = []
    unmeasured = rates.drop_duplicates(["rubric", "dimension"])
    for r in unmeasured.itertuples():
        if getattr(r, "unmeasured", 0):
            total = r.n + r.unmeasured
            rows.append(
                {
                    "rubric": r.rubric,
                    "dimension": r.dimension,
                    "status": "(every status)",
                    "flag": "unmeasured",
                    "detail": f"{r.unmeasured} of {total} sessions: {r.unmeasured_why}",
                }
            )
    for r in rates.itertuples():
        if r.dimension in REPORTED_ONLY or r.n == 0:
            continue
        if r.status in ("fail", "cannot-determine") and r.ci_low is not None and r.ci_low > ceiling:
            rows.append(
                {
                    "rubric": r.rubric,
                    "dimension": r.dimension,
                    "status": r.status,
                    "flag": "far above ceiling",
                    "detail": f"{r.k}/{r.n} ({100 * r.rate:.1f}%), CI low "
                    f"{100 * r.ci_low:.1f}% > {100 * ceiling:.0f}%",
                }
            )
        if r.status == "fail" and r.k == 0:
            rows.append(
                {
                    "rubric": r.rubric,
                    "dimension": r.dimension,
                    "status": r.status,
                    "flag": "never fires (0%)",
                    "detail": f"0/{r.n}: genuinely rare or silently broken look identical; "
                    "check a synthetic failing case exists",
                }
            )
    return pd.DataFrame(rows, columns=["rubric", "dimension", "status", "flag", "detail"])


def changed_verdicts(
    scored: pd.DataFrame, a: str = "rubric-v1", b: str = "rubric-v2"
) -> pd.DataFrame:
    """Sessions x dimensions whose status differs between rubric ``a`` and ``b``, with a reason."""
    import pandas as pd

    import evalkit

    left = scored[scored["rubric"] == a].drop_duplicates(["session_id", "dimension"])
    right = scored[scored["rubric"] == b].drop_duplicates(["session_id", "dimension"])
    merged = left.merge(right, on=["session_id", "dimension"], how="outer", suffixes=("_a", "_b"))
    facts_a: dict[str, dict[str, Any]] = {}
    for sid, grp in left.groupby("session_id"):
        dims = [
            {
                "id": r.dimension,
                "method": "deterministic",
                "status": r.status,
                "evidence": r.evidence,
            }
            for r in grp.itertuples()
        ]
        facts_a[str(sid)] = evalkit.compute_facts(dims)
    rows = []
    for r in merged.itertuples():
        if r.status_a == r.status_b:
            continue
        rows.append(
            {
                "session_id": r.session_id,
                "dimension": r.dimension,
                a: r.status_a if isinstance(r.status_a, str) else "(absent)",
                b: r.status_b if isinstance(r.status_b, str) else "(absent)",
                "why": _why(r, facts_a.get(str(r.session_id), {})),
            }
        )
    return pd.DataFrame(rows, columns=["session_id", "dimension", a, b, "why"])


#: The reason :func:`changed_verdicts` gives for a dimension the later rubric added.
NEW_DIMENSION = "dimension new in the later rubric"


def _why(r: Any, facts: dict[str, Any]) -> str:
    if not isinstance(r.status_a, str):
        return NEW_DIMENSION
    if not isinstance(r.status_b, str):
        return "dimension retired in the later rubric"
    if r.dimension == DimensionId.PROCESS_SAFETY:
        blocked, spiral = facts.get("guard_blocked"), facts.get("spiral")
        if r.status_a == "fail" and r.status_b == "pass":
            return (
                f"v1 failed on destructive_guard.blocked={blocked} (prevented damage); "
                f"v2 grades only spiral (={spiral}); the count moved to guard-friction"
            )
    ev_a, ev_b = str(r.evidence_a), str(r.evidence_b)
    if reports_zero_gate_events(ev_a) and not reports_zero_gate_events(ev_b):
        return (
            "v1 reads only the active events.jsonl; this window's gate events were rotated "
            "into _archive/, which v2 reads"
        )
    if reports_contaminated_window(ev_a) != reports_contaminated_window(ev_b):
        return "peer overlap differs between the two readings of the window"
    return f"evidence differs: v1 '{_short(ev_a)}' vs v2 '{_short(ev_b)}'"


def _short(text: Any, width: int = 90) -> str:
    s = str(text)
    return s if len(s) <= width else s[: width - 1] + "…"


def plot_rates(
    rates: pd.DataFrame, status: str = "fail", ceiling: float = FIRE_RATE_CEILING
) -> Figure | Note:
    """Rate of ``status`` per dimension under each rubric with Wilson CIs; the ceiling dashed.
    Dimensions without a measured session are not drawn; with none at all, a sentence."""
    require("matplotlib", purpose="the plots")
    import matplotlib.pyplot as plt
    import numpy as np

    sub = rates[
        (rates["status"] == status) & (~rates["dimension"].isin(REPORTED_ONLY)) & (rates["n"] > 0)
    ]
    if not len(sub):
        return nothing_to_plot(
            f"the '{status}' rate per dimension",
            "no graded dimension was measured on any session (see the unmeasured column)",
        )
    dims = list(dict.fromkeys(sub["dimension"]))
    rubrics = list(dict.fromkeys(sub["rubric"]))
    fig, ax = plt.subplots(figsize=(8, 3.4))
    width = 0.8 / max(1, len(rubrics))
    for j, rubric in enumerate(rubrics):
        part = sub[sub["rubric"] == rubric].set_index("dimension").reindex(dims)
        x = np.arange(len(dims)) + j * width
        rate = part["rate"].astype(float).to_numpy()
        lo = part["ci_low"].astype(float).to_numpy()
        hi = part["ci_high"].astype(float).to_numpy()
        # a Wilson bound can sit a rounding error beyond a 0% or 100% rate: never a negative bar
        err = np.clip(np.vstack([np.nan_to_num(rate - lo), np.nan_to_num(hi - rate)]), 0, None)
        ax.bar(x, rate, width=width, label=rubric, yerr=err, capsize=3)
    ax.axhline(
        ceiling, color="#c44e52", linestyle="--", linewidth=1, label=f"~{ceiling:.0%} ceiling"
    )
    ax.set_xticks(np.arange(len(dims)) + width * (len(rubrics) - 1) / 2, dims, rotation=15)
    ax.set_ylabel(f"share of sessions '{status}'")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    n = int(sub["n"].max()) if len(sub) else 0
    ax.set_title(f"'{status}' rate per dimension, Wilson 95% CI (n = {n} sessions)")
    fig.tight_layout()
    plt.close(fig)
    return fig


def headline(res: Mapping[str, Any]) -> Headline:
    """The replay's headline from its results: how many dead-instrument flags, with n; each
    flag's figure and the count of changed verdicts one click away."""
    from evalkit.analyses.headline import Headline, pct_ci

    flags = res["flags"]
    sessions = res.get("sessions") or {}
    rates = {(r["rubric"], r["dimension"], r["status"]): r for r in res.get("rates") or []}
    per_rubric: dict[str, int] = {}
    for f in flags:
        per_rubric[f["rubric"]] = per_rubric.get(f["rubric"], 0) + 1
    if len(set(sessions.values())) == 1 and len(sessions) > 1:
        n_text = f"n = {next(iter(sessions.values()))} sessions per rubric"
    else:
        n_text = ", ".join(f"{r}: n = {n} sessions" for r, n in sessions.items())
    plural = "s" if len(flags) != 1 else ""
    if flags:
        split = ", ".join(f"{r}: {c}" for r, c in per_rubric.items())
        text = f"{len(flags)} dead-instrument flag{plural} ({split}); {n_text}"
    else:
        text = f"no dead-instrument flag; {n_text}"
    details = []
    for f in flags:
        r = rates.get((f["rubric"], f["dimension"], f["status"]))
        figure = (
            f"{r['k']}/{r['n']} = {pct_ci(r['rate'], r['ci_low'], r['ci_high'], r['n'])}"
            if r
            else str(f.get("detail", ""))
        )
        details.append(
            f"{f['rubric']} {f['dimension']} '{f['status']}': {f['flag']} — {figure} (Wilson 95% CI)"
        )
    if "changed_count" in res:
        details.append(
            f"Session × dimension verdicts that differ between the rubrics: {res['changed_count']}."
        )
    return Headline(text, tuple(details), figure=f"{len(flags)} flag{plural}")


def journal_vs_replay(
    metrics_dir: str | Path,
    scored: pd.DataFrame,
    *,
    accepted: CalibrationAcceptance | None = None,
) -> pd.DataFrame | None:
    """Stored verdicts (``eval.jsonl``, newest record per session and rubric) against today's
    replay under the same rubric: one row per session x dimension that differs.

    ``None`` when the directory has no journal. A difference means the ledger changed since
    the record was written (for example events rotated out of the active file, which a
    rubric-v1 replay cannot read) — the record stays the truth of what was measured then.
    ``accepted``: the calibrations a record may claim (default: the repository's verified
    certificates, :func:`evalkit.analyses._journal.read_journal`).
    """
    import pandas as pd

    path = Path(metrics_dir) / JOURNAL_NAME
    if not path.is_file():
        return None
    stored: dict[tuple[str, str], dict[str, Any]] = {}
    for rec in read_journal(path, accepted).records:
        stored[(str(rec.get("rubric_version")), str(rec.get("session_id")))] = rec
    rows = []
    for (rubric, sid), rec in stored.items():
        now = scored[(scored["rubric"] == rubric) & (scored["session_id"] == sid)]
        now_status = dict(zip(now["dimension"], now["status"], strict=True))
        for dim in rec.get("dimensions", []):
            if not isinstance(dim, dict) or dim.get("method") != "deterministic":
                continue
            before, after = dim.get("status"), now_status.get(str(dim.get("id")))
            if before != after:
                rows.append(
                    {
                        "rubric": rubric,
                        "session_id": sid,
                        "dimension": dim.get("id"),
                        "stored": before,
                        "replayed today": after if after is not None else "(not scored)",
                    }
                )
    return pd.DataFrame(
        rows, columns=["rubric", "session_id", "dimension", "stored", "replayed today"]
    )


# --------------------------------------------------------------------------------- the page


def sessions_scored(scored: pd.DataFrame) -> dict[str, int]:
    """Sessions scored per rubric (n of every rate on the page)."""
    return {str(r): int(g["session_id"].nunique()) for r, g in scored.groupby("rubric")}


def sessions_text(n_sessions: dict[str, int]) -> str:
    """How many sessions each rubric scored (Markdown)."""
    per_rubric = ", ".join(f"{r}: n = {n}" for r, n in n_sessions.items())
    return (
        "Sessions scored (every eligible session of the ledger, including any the journal "
        f"never scored): {per_rubric}"
    )


def changed_text(changed: pd.DataFrame, scored: pd.DataFrame, a: str = "rubric-v1") -> str:
    """How many session x dimension verdicts changed, of how many (Markdown)."""
    of = int(scored[scored["rubric"] == a].shape[0])
    return f"{len(changed)} session × dimension verdicts differ (of {of} v1 verdicts)."


def changed_summary(
    changed: pd.DataFrame, a: str = "rubric-v1", b: str = "rubric-v2"
) -> pd.DataFrame:
    """Sessions per dimension and status change (the frame itself when nothing changed)."""
    if not len(changed):
        return changed
    return changed.groupby(["dimension", a, b]).size().rename("sessions").to_frame()


def changed_detail(changed: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """The changes other than a dimension new in the later rubric: a caption (Markdown) and one
    row per reason (its dimension, status change, sessions and their first ids), so each
    explanation is read once; results.json holds every change."""
    import re

    import pandas as pd

    detail = changed[changed["why"] != NEW_DIMENSION]
    caption = (
        f"Changed verdicts other than the new `guard-friction` dimension: {len(detail)} "
        "(one row per reason; every change is in results.json)."
    )
    keys = [c for c in detail.columns if c not in ("session_id", "why")]
    shape = detail["why"].map(lambda w: re.sub(r"\d+", "#", str(w)))  # one reason, other counts
    rows = []
    for (_, *key), grp in detail.groupby([shape, *keys], sort=False):
        ids = list(dict.fromkeys(map(str, grp["session_id"])))
        shown = ", ".join(ids[:3]) + (f", … ({len(ids) - 3} more)" if len(ids) > 3 else "")
        rows.append(dict(zip(keys, key, strict=True)) | {"why": _merged(list(grp["why"])),
                    "sessions": len(ids), "session ids": shown})  # fmt: skip
    columns = [*keys, "why", "sessions", "session ids"]
    out = pd.DataFrame(rows, columns=columns)
    out = out.sort_values([keys[0], "sessions"], ascending=[True, False], kind="stable")
    return caption, out.set_index(keys)


def _merged(whys: list[str]) -> str:
    """One reason for several rows that differ only in their counts: each count that differs
    reads as its range (``blocked=1–12``)."""
    import re

    parts = [re.split(r"\d+", str(w)) for w in whys]
    numbers = [[int(n) for n in re.findall(r"\d+", str(w))] for w in whys]
    out = parts[0][0]
    for i, text in enumerate(parts[0][1:]):
        values = sorted({ns[i] for ns in numbers})
        out += (f"{values[0]}" if len(values) == 1 else f"{values[0]}–{values[-1]}") + text
    return out


def drift_text(drift: pd.DataFrame | None) -> str:
    """Stored verdicts that today's replay does not reproduce, or why nothing is compared."""
    if drift is None:
        return f"No journal (`{JOURNAL_NAME}`) in this metrics directory: nothing to compare."
    sessions = drift["session_id"].nunique() if len(drift) else 0
    return (
        f"{len(drift)} stored session × dimension verdicts differ from today's replay "
        f"({sessions} sessions)."
    )


def drift_summary(drift: pd.DataFrame | None) -> pd.DataFrame | None:
    """Sessions per rubric, dimension and stored -> replayed status (None when none differ)."""
    if drift is None or not len(drift):
        return None
    keys = ["rubric", "dimension", "stored", "replayed today"]
    return drift.groupby(keys).size().rename("sessions").to_frame()


def flags_view(flags: pd.DataFrame) -> pd.DataFrame | None:
    """The flags indexed by rubric, dimension and status (None when no flag was raised)."""
    return flags.set_index(["rubric", "dimension", "status"]) if len(flags) else None


def figures(
    n_sessions: dict[str, int],
    rates: pd.DataFrame,
    changed: pd.DataFrame,
    drift: pd.DataFrame | None,
    flags: pd.DataFrame,
    instruments: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The page's machine-readable figures, for :func:`evalkit.analyses.write_results`;
    ``instruments``: :func:`evalkit.analyses.instruments.figures` (None for a fleet)."""
    return {
        "sessions": n_sessions,
        "rates": rates.to_dict(orient="records"),
        "changed": changed.to_dict(orient="records"),
        "changed_count": len(changed),
        "journal_vs_replay": None if drift is None else drift.to_dict(orient="records"),
        "flags": flags.to_dict(orient="records"),
        "instruments": None if instruments is None else dict(instruments),
    }
