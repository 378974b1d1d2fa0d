"""Instrument flags on a scored ledger: the judge facts and the rule judge, each with its cause.

For every session scored under a rubric (:func:`evalkit.analyses.replay.score_both`), the facts
(:func:`evalkit.compute_facts`) and the rule judge's verdict (:func:`evalkit.judge.apply_rules`)
are computed and each read through :mod:`evalkit.analyses.measurability`. A boolean fact
*fires* when it is ``True``; it is counted in its rate only where it was measured, and the
unmeasured records are counted on their own with their cause in the ledger in one line. A
fact or a rule that fires on every record of an era only for lack of telemetry is flagged as
such: the HR-101 reasoning (a check that fires far above ~10% is a broken instrument) applied
to an instrument that has no source yet. See docs/MEASURABILITY.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalkit.analyses.measurability import (
    RULE_JUDGE,
    LedgerProfile,
    RecordMeasurability,
    fact_signal,
    record_measurability,
    tally,
)
from evalkit.stats.thresholds import FIRE_RATE_CEILING

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CEILING_FACTS",
    "FLAG_FACTS",
    "FOR_LACK_OF_TELEMETRY",
    "fact_rates",
    "fact_rates_frame",
    "figures",
    "flags_text",
    "flags_view",
    "instrument_flags",
    "measure_scored",
    "rule_labels",
    "rule_labels_frame",
]

#: The boolean judge facts a rubric author reads as flags (a rate of ``True``).
FLAG_FACTS: tuple[str, ...] = (
    "changes_unverified",
    "guard_blocked_conspicuous",
    "red_runs_then_green_finish",
    "window_contaminated",
)
#: The flag facts rule 6 and rule 2 read as firing: a measured rate far above the ceiling is a
#: broken instrument (HR-101). The other two describe the session (its workflow, its peers).
CEILING_FACTS: tuple[str, ...] = ("changes_unverified", "guard_blocked_conspicuous")
#: The flag of a signal that fires, and fires only where it was not measured.
FOR_LACK_OF_TELEMETRY = "fires for lack of telemetry"


def measure_scored(
    scored: pd.DataFrame, profile: LedgerProfile | None
) -> dict[tuple[str, str], RecordMeasurability]:
    """(rubric, session id) -> the session's measurability, from ``score_both``'s rows."""
    out: dict[tuple[str, str], RecordMeasurability] = {}
    for (rubric, sid), grp in scored.groupby(["rubric", "session_id"], sort=False):
        dims = [
            {
                "id": r.dimension,
                "method": "deterministic",
                "status": r.status,
                "evidence": r.evidence,
            }
            for r in grp.drop_duplicates("dimension").itertuples()
        ]
        record = {"session_id": sid, "rubric_version": rubric, "dimensions": dims}
        out[(str(rubric), str(sid))] = record_measurability(record, profile)
    return out


def _by_rubric(
    measured: Mapping[tuple[str, str], RecordMeasurability],
) -> dict[str, list[RecordMeasurability]]:
    groups: dict[str, list[RecordMeasurability]] = {}
    for (rubric, _), rm in measured.items():
        groups.setdefault(rubric, []).append(rm)
    return groups


def fact_rates(
    measured: Mapping[tuple[str, str], RecordMeasurability], level: float = 0.95
) -> pd.DataFrame:
    """Per rubric x flag fact: records where it is True (``recorded``), the measured records
    and those of them it fires on, with a Wilson interval; the unmeasured ones with their cause."""
    import pandas as pd

    from evalkit.analyses._results import share

    rows = []
    for rubric, rms in _by_rubric(measured).items():
        for fact in FLAG_FACTS:
            signal = fact_signal(fact)
            u = tally(rm.of(signal) for rm in rms)
            fires = [rm for rm in rms if rm.facts.get(fact) is True]
            k = sum(1 for rm in fires if rm.of(signal).measured)
            n = u.measured
            rate, lo, hi = share(k, n, level)
            rows.append(
                {
                    "rubric": rubric,
                    "fact": fact,
                    "records": len(rms),
                    "recorded_true": len(fires),
                    "fires": k,
                    "measured": n,
                    "rate": rate,
                    "ci_low": lo,
                    "ci_high": hi,
                    "unmeasured": u.count,
                    "cause": u.why() or None,
                    "unmeasured_true": len(fires) - k,
                }
            )
    return pd.DataFrame(rows)


def rule_labels(measured: Mapping[tuple[str, str], RecordMeasurability]) -> pd.DataFrame:
    """Per rubric x deciding rule x label of the rule judge: records, and how many of them
    rest on an unmeasured fact (with the cause)."""
    import pandas as pd

    rows = []
    for rubric, rms in _by_rubric(measured).items():
        groups: dict[tuple[int, str], list[RecordMeasurability]] = {}
        for rm in rms:
            groups.setdefault((rm.verdict.rule, str(rm.verdict.status)), []).append(rm)
        for (rule, status), grp in sorted(groups.items()):
            u = tally(rm.of(RULE_JUDGE) for rm in grp)
            rows.append(
                {
                    "rubric": rubric,
                    "rule": rule,
                    "label": status,
                    "records": len(grp),
                    "of": len(rms),
                    "unmeasured": u.count,
                    "cause": u.why() or None,
                }
            )
    return pd.DataFrame(
        rows, columns=["rubric", "rule", "label", "records", "of", "unmeasured", "cause"]
    )


def instrument_flags(
    facts: pd.DataFrame, rules: pd.DataFrame, ceiling: float = FIRE_RATE_CEILING
) -> pd.DataFrame:
    """The flags a rubric author should read, one line of cause each: a fact or a rule label
    that fires only where it was unmeasured (for lack of telemetry), a measured rate of a
    :data:`CEILING_FACTS` fact far above the ceiling (its whole Wilson interval), and every
    unmeasured share."""
    import pandas as pd

    rows: list[dict[str, Any]] = []

    def flag(rubric: str, signal: str, name: str, cause: str) -> None:
        rows.append({"rubric": rubric, "signal": signal, "flag": name, "cause": cause})

    for r in facts.itertuples():
        signal = f"fact {r.fact}"
        lack = bool(r.unmeasured_true and not r.fires)
        if lack:
            every = f"true on {r.recorded_true} of {r.records} records, every one unmeasured"
            flag(r.rubric, signal, FOR_LACK_OF_TELEMETRY, f"{every}: {r.cause}")
        elif r.fact in CEILING_FACTS and r.ci_low is not None and r.ci_low > ceiling:
            flag(
                r.rubric,
                signal,
                "far above ceiling",
                f"{r.fires} of {r.measured} measured records, Wilson CI low "
                f"{100 * r.ci_low:.1f}% > {100 * ceiling:.0f}%",
            )
        if r.unmeasured and not lack:
            flag(
                r.rubric, signal, "unmeasured", f"{r.unmeasured} of {r.records} records: {r.cause}"
            )
    for r in rules.itertuples():
        if not r.unmeasured:
            continue
        every = r.unmeasured == r.records
        name = FOR_LACK_OF_TELEMETRY if every and r.label == "fail" else "unmeasured"
        how = "every one" if every else str(r.unmeasured)
        flag(
            r.rubric,
            f"rule judge: rule {r.rule} → {r.label}",
            name,
            f"{r.records} of {r.of} records, {how} unmeasured: {r.cause}",
        )
    return pd.DataFrame(rows, columns=["rubric", "signal", "flag", "cause"])


def flags_text(flags: pd.DataFrame) -> str:
    """How many instrument flags, or that none was raised (Markdown)."""
    if not len(flags):
        return "No instrument flag raised: every fact and rule-judge label was measured."
    lack = int((flags["flag"] == FOR_LACK_OF_TELEMETRY).sum())
    text = f"{len(flags)} instrument flag(s), each with its cause in the ledger."
    if lack:
        text += (
            f" {lack} of them fire for lack of telemetry: the signal is true on records whose "
            "source did not exist, a broken instrument for that era, not a finding about the "
            "sessions."
        )
    return text


def fact_rates_frame(facts: pd.DataFrame) -> pd.DataFrame:
    """The fact rates as a page shows them: one row per rubric x fact."""
    import pandas as pd

    from evalkit.analyses._results import fmt_estimate

    rows = []
    for r in facts.itertuples():
        rate = (
            f"{r.fires}/{r.measured} = "
            + fmt_estimate(
                r.rate, (r.ci_low, r.ci_high), 1 if r.measured == 1 else None, percent=True
            )
            if r.measured
            else "no rate (none measured)"
        )
        rows.append(
            {
                "rubric": r.rubric,
                "fact": r.fact,
                "true on measured records [95% Wilson CI]": rate,
                "true where unmeasured": f"{r.unmeasured_true} of {r.unmeasured}",
                "unmeasured: cause": _text(r.cause),
            }
        )
    return pd.DataFrame(rows).set_index(["rubric", "fact"])


def _text(cause: Any) -> str:
    """A cause as a table shows it: no cause is an empty cell (pandas may hold it as NaN)."""
    return cause if isinstance(cause, str) else ""


def rule_labels_frame(rules: pd.DataFrame) -> pd.DataFrame:
    """The rule judge's labels by deciding rule as a page shows them."""
    out = rules.copy()
    out["records"] = [f"{r.records} of {r.of}" for r in out.itertuples()]
    out["unmeasured: cause"] = [_text(r.cause) for r in out.itertuples()]
    return out.drop(columns=["of", "cause"]).set_index(["rubric", "rule", "label"])


def flags_view(flags: pd.DataFrame) -> pd.DataFrame | None:
    """The flags indexed by rubric and signal (None when no flag was raised)."""
    return flags.set_index(["rubric", "signal"]) if len(flags) else None


def figures(facts: pd.DataFrame, rules: pd.DataFrame, flags: pd.DataFrame) -> dict[str, Any]:
    """results.json's ``instruments``: the fact rates, the rule labels and the flags."""
    return {
        "facts": facts.to_dict(orient="records"),
        "rule_judge": rules.to_dict(orient="records"),
        "flags": flags.to_dict(orient="records"),
    }
