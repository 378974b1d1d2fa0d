"""Threshold study over a journal: one fact per record, read through the facts readers.

For each record of ``eval.jsonl`` the fact (default ``guard_blocked``) comes from
``evalkit.compute_facts(record["dimensions"])`` — for rubric-v1 records the readers take the
guard count from the ``process-safety`` evidence. Records are clustered by session: a session
fails at threshold ``t`` when any of its records has ``fact >= t``. A record whose fact was
not measurable (:mod:`evalkit.analyses.measurability`: guard signals before guard emission
began, gate counts in a ledger without gate telemetry, the third state) has no value: it is
counted as unmeasured, with its reason, never as 0 and never in a rate's denominator.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.analyses._journal import read_journal
from evalkit.analyses.measurability import (
    Unmeasured,
    dimension_signal,
    fact_signal,
    ledger_profile,
    record_measurability,
    tally,
)
from evalkit.analyses.notes import (
    Note,
    degenerate_interval,
    is_zero_width,
    nothing_to_plot,
    sentence,
)
from evalkit.errors import DegenerateDataWarning, EvalkitError
from evalkit.extras import require
from evalkit.files.escape import markdown_code, markdown_text, plot_text
from evalkit.journal.reader import JOURNAL_NAME
from evalkit.record.dimension import DimensionId
from evalkit.rubrics.dimensions.process_safety import read_v1_prose_blocked as _v1_prose_blocked
from evalkit.stats.thresholds import FIRE_RATE_CEILING

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from evalkit.record.calibration_status import CalibrationAcceptance

__all__ = [
    "LEVEL",
    "NO_FINDING_DEGENERATE",
    "NO_FINDING_NO_INTERVAL",
    "NO_FINDING_UNMEASURED",
    "NUMERIC_FACTS",
    "bins_text",
    "ceiling_text",
    "counterfactual",
    "counterfactual_frame",
    "data_notes_text",
    "distribution_bins",
    "fact_table",
    "figures",
    "fire_rate_caption",
    "gaps_text",
    "plot_distribution",
    "plot_fire_rate",
    "published_table",
    "records_preview",
    "records_text",
    "study",
    "unmeasured",
    "unmeasured_text",
    "value_sources",
    "value_sources_text",
]

#: Confidence level of every interval on the page (the fire rate's and the session rates').
LEVEL = 0.95

NUMERIC_FACTS: tuple[str, ...] = (
    "guard_blocked",
    "gate_runs_total",
    "gate_runs_failed",
    "full_gate_runs",
    "spiral",
    "carryover",
)


def _journal_path(metrics_dir: str | Path) -> Path:
    p = Path(metrics_dir)
    path = p if p.is_file() else p / JOURNAL_NAME
    if not path.is_file():
        raise EvalkitError(f"no journal at {path} (expected {JOURNAL_NAME} in the metrics dir)")
    return path


def _profile(journal: Path) -> Any:
    """The ledger beside the journal (what measurability needs), or None when there is none."""
    root = journal.parent
    return ledger_profile(root) if (root / "sessions.jsonl").exists() else None


# rubric-v1 wrote its guard count in prose on the two pass branches ("(0 blocked, 0 spiral, ..."
# and "0 destructive_guard.blocked, 0 spiral; ..."). The facts readers, like the reference
# computeRecordFacts, return null there ("no number on this branch"); the published measurement
# read these records by regex over the process-safety evidence. This fallback does the same and
# marks every value it supplies (value_source "v1-prose").


def fact_table(
    metrics_dir: str | Path,
    fact: str = "guard_blocked",
    *,
    v1_prose_fallback: bool = True,
    accepted: CalibrationAcceptance | None = None,
) -> pd.DataFrame:
    """One row per journal record: run_id, session_id, rubric_version, ``fact``, process-safety
    status, where the value came from, and the reader's parse misses for that fact.

    ``value_source`` is ``facts`` (``evalkit.compute_facts``), ``v1-prose`` (the documented
    fallback for rubric-v1 prose evidence, ``guard_blocked`` only), ``unknown`` or
    ``unmeasured`` (the fact's source did not exist for this record: ``value`` is None,
    ``recorded`` holds what the record says, ``unmeasured`` why; see
    :mod:`evalkit.analyses.measurability`). ``process_safety_measured``: whether that
    dimension's status is a measurement.
    ``accepted``: the calibrations a record may claim (default: the repository's verified
    certificates, :func:`evalkit.analyses._journal.read_journal`); the skipped lines are in
    ``attrs["diagnostics"]``.
    """
    import pandas as pd

    if fact not in NUMERIC_FACTS:
        raise EvalkitError(f"fact {fact!r} is not a numeric fact; choose one of {NUMERIC_FACTS}")
    journal = _journal_path(metrics_dir)
    read = read_journal(journal, accepted)
    profile = _profile(journal)
    rows = []
    for line, rec in zip(read.line_numbers, read.records, strict=True):
        rm = record_measurability(rec, profile)
        facts = rm.facts
        ps = next(
            (
                d
                for d in rec.get("dimensions", [])
                if isinstance(d, dict) and d.get("id") == DimensionId.PROCESS_SAFETY
            ),
            None,
        )
        misses = [
            m
            for m in facts.get("parse_misses", [])
            if isinstance(m, dict) and m.get("fact") == fact
        ]
        value, source = facts.get(fact), "facts"
        if value is None:
            source = "unknown"
            if v1_prose_fallback and fact == "guard_blocked" and ps is not None:
                prose = _v1_prose_blocked(ps.get("evidence"))
                if rec.get("rubric_version") == "rubric-v1" and prose is not None:
                    value, source = prose, "v1-prose"
        recorded, why = value, rm.source(fact_signal(fact)).reason
        if why is not None:  # a number from a source that did not exist is no measurement
            value, source = None, "unmeasured"
        rows.append(
            {
                "line": line,
                "run_id": rec.get("run_id"),
                "session_id": rec.get("session_id"),
                "rubric_version": rec.get("rubric_version"),
                "value": value,
                "value_source": source,
                "process_safety": ps.get("status") if ps else None,
                "parse_misses": len(misses),
                "recorded": recorded,
                "unmeasured": why,
                "process_safety_measured": rm.of(
                    dimension_signal(DimensionId.PROCESS_SAFETY)
                ).measured,
            }
        )
    df = pd.DataFrame(
        rows,
        columns=[
            "line",
            "run_id",
            "session_id",
            "rubric_version",
            "value",
            "value_source",
            "process_safety",
            "parse_misses",
            "recorded",
            "unmeasured",
            "process_safety_measured",
        ],
    )
    df.attrs["diagnostics"] = [str(d) for d in read.diagnostics]
    df.attrs["fact"] = fact
    return df


def published_table(df: pd.DataFrame) -> dict[str, int]:
    """The measurement rubric-v2 reports: records, sessions, rubric-v1 process-safety fails;
    ``v1_sessions``: sessions with a rubric-v1 record whose process-safety was measured (the
    denominator of the fail share)."""
    v1 = df[df["rubric_version"] == "rubric-v1"]
    fails = v1[v1["process_safety"] == "fail"]
    measured = v1[v1["process_safety_measured"]] if "process_safety_measured" in v1 else v1
    return {
        "records": len(df),
        "sessions": int(df["session_id"].nunique()),
        "v1_records": len(v1),
        "v1_fail_records": len(fails),
        "v1_fail_sessions": int(fails["session_id"].nunique()),
        "v1_sessions": int(measured["session_id"].nunique()),
    }


def unmeasured(df: pd.DataFrame) -> Unmeasured:
    """The records whose fact was not measurable, by reason (see the module docstring)."""
    from evalkit.analyses.measurability import MEASURED, Measurability

    reasons = df["unmeasured"] if "unmeasured" in df else [None] * len(df)
    return tally(MEASURED if r is None else Measurability(False, str(r)) for r in reasons)


def unmeasured_text(df: pd.DataFrame) -> str:
    """``10 of 10 records unmeasured: ...; left out of every rate, never read as 0`` (or "")."""
    u = unmeasured(df)
    if not u.count:
        return ""
    fact = markdown_code(str(df.attrs.get("fact", "")))
    return (
        f"**Unmeasured {fact}:** {markdown_text(u.text('records'))}. These records are left "
        "out of every rate and interval on this page, never read as 0."
    )


def counterfactual(df: pd.DataFrame, thresholds: Sequence[int | float]) -> list[dict[str, Any]]:
    """Threshold ``t`` -> records firing (``value >= t``) and sessions failing (any record fires).

    Unknown and unmeasured values are never read as 0: such a record neither fires nor
    counts in the record rate's denominator (``records_known``), and a session that does not
    fail but holds an unknown record is undetermined and left out of the session rate's
    denominator, as :func:`evalkit.stats.threshold_study` does for clusters.
    """
    known = df[df["value"].notna()]
    n_rec, n_known, n_sess = len(df), len(known), int(df["session_id"].nunique())
    n_unmeasured = unmeasured(df).count
    with_unknown = set(df.loc[df["value"].isna(), "session_id"])
    out = []
    for t in sorted(thresholds):
        firing = known[known["value"].astype(float) >= float(t)]
        failing = set(firing["session_id"])
        undetermined = len(with_unknown - failing)
        determined = n_sess - undetermined
        out.append(
            {
                "threshold": t,
                "records_firing": len(firing),
                "records": n_rec,
                "records_known": n_known,
                "records_rate": len(firing) / n_known if n_known else None,
                "sessions_failing": len(failing),
                "sessions": n_sess,
                "sessions_undetermined": undetermined,
                "sessions_rate": len(failing) / determined if determined else None,
                "records_unknown": n_rec - n_known - n_unmeasured,
                "records_unmeasured": n_unmeasured,
            }
        )
    return out


def study(
    df: pd.DataFrame,
    *,
    ceiling: float = FIRE_RATE_CEILING,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = LEVEL,
    cluster_column: str = "session_id",
) -> Any:
    """``evalkit.stats.threshold_study`` on the table: fire-rate curve with cluster-bootstrap CIs
    (whole sessions resampled; a fleet's page resamples repositories: ``cluster_column=
    "metrics_dir"``), gaps, ceiling check."""
    import numpy as np

    from evalkit.stats import threshold_study

    values = [None if v is None or v != v else float(v) for v in df["value"].tolist()]
    # its degenerate-data notes are in ``st.warnings``: the page says them as sentences
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return threshold_study(
            values,
            clusters=df[cluster_column].tolist(),
            ceiling=ceiling,
            n_resamples=n_resamples,
            level=level,
            rng=np.random.default_rng(seed),
        )


def data_notes_text(st: Any) -> str:
    """The study's degenerate-data notes as sentences (Markdown; "" when there are none)."""
    return "\n".join(f"- *Note on the data:* {markdown_text(sentence(w))}" for w in st.warnings)


def plot_distribution(
    df: pd.DataFrame, fact: str, thresholds: Sequence[int | float] = ()
) -> Figure | Note:
    """Bar chart of the fact's observed values (records), candidate thresholds marked; a
    sentence instead when no record has a known value."""
    require("matplotlib", purpose="the plots")  # a plotting call needs its extra, drawn or not
    values = df["value"].dropna().astype(int)
    if values.empty:
        why = unmeasured(df).text("records") or "no record carries a known value"
        return nothing_to_plot(f"the distribution of {fact}", why)
    import matplotlib.pyplot as plt

    counts = values.value_counts().sort_index()
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.bar(counts.index, counts.to_numpy(), width=0.8, color="#4c72b0")
    top = ax.get_ylim()[1]
    for k, t in enumerate(sorted(thresholds)):
        ax.axvline(float(t) - 0.5, color="#c44e52", linestyle="--", linewidth=1)
        y = top * (0.92 - 0.09 * (k % 4))  # staggered so neighbouring labels do not overlap
        ax.text(float(t) - 0.3, y, plot_text(f"t={t}"), color="#c44e52", fontsize=8)
    ax.set_xlabel(f"{plot_text(fact)} per record")
    ax.set_ylabel("records")
    ax.set_title(
        f"Distribution of {plot_text(fact)} (n = {len(values)} records with a known value)"
    )
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_fire_rate(st: Any, fact: str) -> Figure | Note:
    """``evalkit.stats.plot_threshold_study`` labelled in this study's terms (records, sessions);
    a sentence instead when there is no curve (no known value, or a single threshold)."""
    from evalkit.stats import plot_threshold_study

    if nothing := _no_curve(st, fact):
        return nothing

    fig = plot_threshold_study(st)
    ax = fig.axes[0]
    names = {"item fire rate": "record fire rate", "cluster fail rate": "session fail rate"}
    legend = ax.get_legend()
    if legend is not None:
        for text in legend.get_texts():
            text.set_text(names.get(text.get_text(), text.get_text()))
    ax.set_ylabel("share of records firing / sessions failing")
    ax.set_xlabel(f"threshold t (the rule fires when {plot_text(fact)} ≥ t)")
    ax.set_title(
        f"Fire rate of {plot_text(fact)} ≥ t (n = {st.n_items} records, {st.n_clusters} sessions; "
        f"{st.level:.0%} cluster-bootstrap CI)",
        fontsize=10,
    )
    return fig


def _no_curve(st: Any, fact: str) -> Note | None:
    """Why the fire-rate curve of ``st`` has nothing to show, or None."""
    what = f"the fire-rate curve of {fact} ≥ t"
    if st.n_items == 0:
        return nothing_to_plot(what, "no record has a measured, known value: no rate exists")
    if len(st.table) < 2:
        return nothing_to_plot(
            what,
            f"every known value is {_plain(st.table['threshold'].iloc[0] - 1)}: a curve of one "
            "point; the table below holds it",
        )
    return None


def _plain(x: Any) -> str:
    v = float(x)
    return str(int(v)) if v == int(v) else str(v)


def distribution_bins(df: pd.DataFrame) -> dict[str, int]:
    """Counts in the bins rubric-v2 reports: 0, 1, 2, 3-5, 6+ (known values only)."""
    v = df["value"].dropna().astype(float)
    return {
        "0": int((v == 0).sum()),
        "1": int((v == 1).sum()),
        "2": int((v == 2).sum()),
        "3-5": int(((v >= 3) & (v <= 5)).sum()),
        "6+": int((v >= 6).sum()),
    }


def counterfactual_frame(
    cf: list[dict[str, Any]],
    st: Any,
    *,
    sessions: tuple[Mapping[Any, tuple[float | None, float | None]], str] | None = None,
) -> pd.DataFrame:
    """The counterfactual table with the record fire rate's cluster-bootstrap CI and the
    session fail rate's Wilson CI, each with its n. ``sessions``: other intervals of the
    session fail rate, by threshold, and their method's name (a fleet's cluster bootstrap)."""
    import pandas as pd

    from evalkit.analyses._results import fmt_estimate

    level = f"{st.level:.0%}"
    method = "Wilson" if sessions is None else sessions[1]
    rows = []
    for row in cf:
        t = row["threshold"]
        ci, status = _study_row(st, t)
        determined = row["sessions"] - row["sessions_undetermined"]
        s_ci = (
            _session_ci(row["sessions_failing"], determined, st.level)
            if sessions is None
            else sessions[0][t]
        )
        rate, status = _fire_rate_shown(row, ci, status)
        rows.append(
            {
                "threshold": t,
                "records firing": f"{row['records_firing']} of {row['records_known']}",
                f"record fire rate [{level} cluster-bootstrap CI]": rate,
                "sessions failing": f"{row['sessions_failing']} of {determined}",
                f"session fail rate [{level} {method} CI]": (
                    fmt_estimate(row["sessions_rate"], s_ci, determined, percent=True)
                    if determined
                    else "no rate: no session is determined"
                ),
                "ceiling check (CI vs ceiling)": status,
            }
        )
    return pd.DataFrame(rows).set_index("threshold")


#: The ceiling check of a rate that is no finding: no measured record, or a zero-width interval.
NO_FINDING_UNMEASURED = "no finding: no measured record"
NO_FINDING_DEGENERATE = "no finding: the interval has zero width"
NO_FINDING_NO_INTERVAL = "no finding: the interval is undefined"


def _fire_rate_shown(
    row: Mapping[str, Any], ci: tuple[float | None, float | None], status: str
) -> tuple[str, str]:
    """The record fire rate as the page shows it, and its ceiling check: a rate without a
    measured record, or with an interval of one point, is stated as such, never a finding."""
    from evalkit.analyses._results import fmt_estimate

    known = row["records_known"]
    if not known:
        return f"no rate: none of {row['records']} records measured", NO_FINDING_UNMEASURED
    if is_zero_width(*ci):
        assert ci[0] is not None
        return degenerate_interval(row["records_firing"], known, ci[0]), NO_FINDING_DEGENERATE
    shown = fmt_estimate(row["records_rate"], ci, known, percent=True)
    if (ci[0] is None or ci[1] is None) and status != "not studied":
        return shown, NO_FINDING_NO_INTERVAL
    return shown, status


def _session_ci(k: int, n: int, level: float) -> tuple[float | None, float | None]:
    """Wilson interval of ``k`` of ``n`` sessions; none on fewer than two (a case, not a rate)."""
    from evalkit.analyses._results import share

    return share(k, n, level)[1:]


def _study_row(st: Any, t: Any) -> tuple[tuple[float | None, float | None], str]:
    """The fire rate's CI and ceiling status of threshold ``t`` in the study ``st``."""
    try:
        r = st.row(t)
    except KeyError:
        return (None, None), "not studied"
    return (_num(r["ci_low"]), _num(r["ci_high"])), str(r["ceiling_status"])


def _num(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if v == v else None


def ceiling_text(cf: list[dict[str, Any]], st: Any, ceiling: float) -> str:
    """One line per candidate threshold: where its record fire rate sits against the ceiling
    (a rate without a measured record, or with a zero-width interval, is no finding)."""
    if cf and not cf[0]["records_known"]:  # one sentence instead of one per threshold
        return (
            f"No fire rate at any threshold: none of the {cf[0]['records']} records has a "
            "measured, known value (see the records read above)."
        )
    lines = []
    for row in cf:
        t = row["threshold"]
        ci, status = _study_row(st, t)
        rate = row["records_rate"]
        shown, checked = _fire_rate_shown(row, ci, status)
        if checked in (NO_FINDING_UNMEASURED, NO_FINDING_DEGENERATE, NO_FINDING_NO_INTERVAL):
            lines.append(
                f"- t = {markdown_text(t)}: {shown}; {checked}, so nothing is said about the "
                f"{ceiling:.0%} ceiling."
            )
            continue
        verdict = {
            "above": f"the whole interval is above the {ceiling:.0%} ceiling",
            "within": f"the whole interval is at or below the {ceiling:.0%} ceiling",
            "undecided": f"the interval straddles the {ceiling:.0%} ceiling",
        }.get(status, status)
        point = ""
        if rate is not None:
            side = "above" if rate > ceiling else "at or below"
            point = f"the point estimate is {side} the ceiling; "
        lines.append(
            f"- t = {markdown_text(t)}: fires on {row['records_firing']} of {row['records']} records "
            f"({shown}, cluster-bootstrap {st.level:.0%} CI); "
            f"{point}{verdict}."
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------------- the page


def records_text(
    df: pd.DataFrame,
    pub: Mapping[str, int],
    level: float = LEVEL,
    *,
    share_ci: tuple[tuple[float | None, float | None], str] | None = None,
) -> str:
    """The records read: counts, rubric-v1 process-safety fails (share of the sessions whose
    rubric-v1 process-safety was measured, with its Wilson interval, or ``share_ci``: another
    interval over every session and its method's name), unknown values and skipped journal
    lines (Markdown)."""
    from evalkit.analyses._results import fmt_estimate

    k = pub["v1_fail_sessions"]
    n = pub.get("v1_sessions", pub["sessions"]) if share_ci is None else pub["sessions"]
    ci, method = (_session_ci(k, n, level), "Wilson") if share_ci is None else share_ci
    fact = str(df.attrs.get("fact", ""))
    if n:
        share = fmt_estimate(k / n, ci, n, percent=True)
        fails = (
            f"of which `process-safety` failed on {pub['v1_fail_records']} records ({k} "
            f"sessions: {share} of sessions, {method} {level:.0%} CI)"
        )
    elif pub["v1_records"]:
        fails = "none with a measured `process-safety` (no fail share: see the flags)"
    else:
        fails = "so no rubric-v1 `process-safety` fail share"
    unknown = int((df["value_source"] == "unknown").sum())
    return (
        f"**{pub['records']} records** over **{pub['sessions']} sessions**; "
        f"rubric-v1 records: {pub['v1_records']}, {fails}. "
        f"Unknown {markdown_code(fact)} values (reader found no number): {unknown}. "
        f"Journal lines skipped: {len(df.attrs['diagnostics'])}."
    )


def value_sources(df: pd.DataFrame) -> dict[str, int]:
    """Records per ``value_source`` (``facts``, ``v1-prose``, ``unknown``, ``unmeasured``),
    most frequent first."""
    return {str(k): int(v) for k, v in df["value_source"].value_counts().items()}


def value_sources_text(sources: Mapping[str, int]) -> str:
    """Where each value came from, and why the rubric-v1 prose fallback exists (Markdown)."""
    unmeasured = sources.get("unmeasured", 0)
    return (
        f"Where each value came from: `compute_facts` → {sources.get('facts', 0)} records; "
        f"rubric-v1 prose fallback → {sources.get('v1-prose', 0)} records; "
        f"unknown → {sources.get('unknown', 0)}"
        + (f"; unmeasured (no value) → {unmeasured}" if unmeasured else "")
        + ". rubric-v1 wrote the guard count in prose on its "
        "pass branches (`(0 blocked, 0 spiral, …`); the facts readers, like the reference, return "
        "null there (no number on this branch), so the fallback reads that prose count and says so."
    )


def records_preview(df: pd.DataFrame, rows: int = 12) -> tuple[str, pd.DataFrame]:
    """A caption (Markdown) and the first ``rows`` records, indexed by run id (the journal line
    number dropped); the notebook holds all of them as ``df``."""
    caption = (
        f"First {rows} of {len(df)} records (all of them: the frame `df`):"
        if len(df) > rows
        else f"All {len(df)} records (the frame `df`):"
        if len(df) != 1
        else "The one record (the frame `df`):"
    )
    # the cause of an unmeasured value is said once above the table, not once per row
    hidden = [c for c in ("line", "unmeasured", "process_safety_measured") if c in df]
    preview = df.drop(columns=hidden).set_index("run_id").head(rows).astype(object)
    # a person reads this table: no value is "—" (its value_source says why), never None
    return caption, preview.where(preview.notna(), "—")


def bins_text(df: pd.DataFrame, bins: Mapping[str, int]) -> str:
    """Records per distribution bin, with n (Markdown)."""
    n = int(df["value"].notna().sum())
    if not n:
        return "No record has a measured, known value: no bins."
    per_bin = ", ".join(f"`{k}` → {v}" for k, v in bins.items())
    return f"Records per bin: {per_bin} (n = {n})."


def gaps_text(st: Any) -> str:
    """The gaps in the observed values, and what a gap means for a threshold (Markdown)."""
    if st.n_items == 0:
        return "No observed values, so no gaps."
    between = ", ".join(f"between {g.after} and {g.before}" for g in st.gaps) or "none"
    return (
        f"Gaps in the observed values: {between}. Every threshold inside one gap gives the same "
        "verdicts."
    )


def fire_rate_caption(st: Any) -> str:
    """What the fire-rate curve shows (Markdown)."""
    return (
        f"Share of records with fact ≥ t, with a percentile cluster-bootstrap {st.level:.0%} "
        "interval (sessions resampled). The dashed line is the share of sessions failing."
    )


def figures(
    df: pd.DataFrame,
    pub: Mapping[str, int],
    cf: list[dict[str, Any]],
    table: pd.DataFrame,
    bins: Mapping[str, int],
    st: Any,
) -> dict[str, Any]:
    """The page's machine-readable figures, for :func:`evalkit.analyses.write_results`."""
    values = df["value"].dropna()
    return {
        "fact": df.attrs.get("fact"),
        "value_sources": value_sources(df),
        "published_table": {
            k: pub[k] for k in ("records", "sessions", "v1_fail_records", "v1_fail_sessions")
        },
        "counterfactual": [
            {k: row[k] for k in ("threshold", "records_firing", "sessions_failing")} for row in cf
        ],
        "counterfactual_detail": table.reset_index().to_dict(orient="records"),
        "distribution_bins": dict(bins),
        "maximum": None if values.empty else float(df["value"].max()),
        "gaps": [g.to_dict() for g in st.gaps],
        "threshold_study": st.to_json_dict(),
        "unmeasured": unmeasured(df).to_dict(),
    }
