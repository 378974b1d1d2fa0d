"""Instrument monitoring over a journal: every check's fire rate as an anytime-valid band.

Each check (a dimension x status, a fact flag, the rule judge's verdict and its rules, judge
dimensions when present) gets one outcome per session, in the journal's order (one session =
its first record under a rubric version; re-scores are counted, not counted twice): fired,
did not fire, or unmeasured (:mod:`evalkit.analyses.measurability`; never a zero). Over the
measured outcomes :func:`evalkit.stats.confidence_sequence` gives a band that may be read after
every session, and a state: ``broken`` (the band's lower end above the ceiling: HR-101),
``quiet`` (its upper end below the floor: HR-105), ``within`` or ``undecided``, with the
session at which it was first reached. A metrics directory without a journal is scored in
memory (nothing written). ``docs/MONITOR.md`` has the construction, the states and what they
do not prove.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import NDArray

from evalkit.analyses import measurability as meas
from evalkit.analyses._journal import read_journal
from evalkit.errors import EvalkitError
from evalkit.journal.file import JOURNAL_NAME
from evalkit.js.timestamps import timestamp_ms
from evalkit.record.dimension import DimensionId, Status
from evalkit.rubrics.dimensions import verification_evidence
from evalkit.rubrics.registry import RUBRIC_VERSIONS, get_rubric
from evalkit.stats.proportion import wilson_interval
from evalkit.stats.sequential import DEFAULT_OPTIMIZE_AT, ConfidenceSequence, confidence_sequence
from evalkit.stats.thresholds import FIRE_RATE_CEILING

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.stats import ConfidenceInterval

__all__ = [
    "DEFAULT_FLOOR",
    "FACT_FLAGS",
    "STATUSES",
    "Check",
    "CheckBand",
    "Limits",
    "MonitorReport",
    "Outcome",
    "State",
    "band_of",
    "monitor",
    "monitor_records",
    "record_outcomes",
]

#: The rate under which a check is ``quiet`` (HR-105's dead-or-silent, as far as data can say
#: it). A stated default, not a rubric's number: the rubrics set a ceiling (~10%) only.
DEFAULT_FLOOR: Final = 0.01

#: The dimension statuses each dimension is monitored under, in the record contract's order.
STATUSES: Final = tuple(s.value for s in Status)
#: Statuses whose high rate is an alarm (HR-101); ``pass`` and ``not-applicable`` shares are
#: reported beside them but never set the exit code (efficiency-kpis is n/a by design).
_ALARM_STATUSES: Final = frozenset({Status.FAIL.value, Status.CANNOT_DETERMINE.value})
#: The judge facts that are flags (True/False/null), in the reference's order.
FACT_FLAGS: Final = (
    "red_runs_then_green_finish",
    "changes_unverified",
    "window_contaminated",
    "guard_blocked_conspicuous",
)
#: The rule judge's statuses (a judge never says not-applicable).
_VERDICTS: Final = ("pass", "fail", "cannot-determine")
_NO_SIGNAL: Final = meas.Measurability(False, "the record carries no such signal")


class State(StrEnum):
    """Where a check's band stands against the floor and the ceiling."""

    BROKEN = "broken"  # lower end above the ceiling (HR-101)
    QUIET = "quiet"  # upper end below the floor (HR-105)
    WITHIN = "within"  # the band inside [floor, ceiling]
    UNDECIDED = "undecided"  # none of these yet


@dataclass(frozen=True)
class Check:
    """One monitored check of one rubric version.

    ``kind``: ``dimension``, ``judge dimension``, ``fact``, ``rule judge`` or ``judge drift``.
    ``alarm``: whether a ``broken`` state is an alarm (the exit code) or a share reported only.
    """

    rubric: str
    kind: str
    name: str
    alarm: bool = True

    @property
    def label(self) -> str:
        """``rubric-v2 · process-safety: fail``."""
        return f"{self.rubric} · {self.name}" if self.rubric else self.name


@dataclass(frozen=True)
class Outcome:
    """A check on one record: ``fired`` True/False, or None with why it was unmeasured."""

    fired: bool | None
    measurability: meas.Measurability = meas.MEASURED


# --------------------------------------------------------------------------------------------
# one record


def _status_checks(rubric: str, dim_id: str, judge: bool) -> list[Check]:
    kind = "judge dimension" if judge else "dimension"
    return [Check(rubric, kind, f"{dim_id}: {s}", s in _ALARM_STATUSES) for s in STATUSES]


def _fact_checks(rubric: str) -> list[Check]:
    names = [
        *(f"fact {k}" for k in FACT_FLAGS),
        "fact spiral > 0",
        "fact contradictions (non-empty)",
        "fact parse_misses (non-empty)",
    ]
    return [Check(rubric, "fact", name) for name in names]


def _rule_checks(rubric: str) -> list[Check]:
    return [
        *(Check(rubric, "rule judge", f"rule judge: {s}", s != "pass") for s in _VERDICTS),
        Check(rubric, "rule judge", "rule 1 decides (contradictions)"),
        Check(rubric, "rule judge", "rule 2 decides (conspicuous guard count)"),
        Check(rubric, "rule judge", "rule 3 sets guard_blocked aside", alarm=False),
        Check(rubric, "rule judge", "rule 4 sets red-then-green aside", alarm=False),
        Check(rubric, "rule judge", "rule 5 decides (not proven)"),
        Check(rubric, "rule judge", "rule 6 decides fail (named deviation)"),
    ]


def record_outcomes(
    record: Mapping[str, Any], profile: meas.LedgerProfile | None = None
) -> dict[str, Outcome]:
    """Every check's outcome on one record, by check name (the one function a check reads).

    Dimension x status: the dimension's status, where its signal was measured. A fact flag:
    the fact's value where measured and not null (``spiral > 0`` likewise; the two lists are
    always read). The rule judge: its verdict and which rule decided, where the verdict is
    measured; rules 3 and 4 never decide (they forbid), so they fire when the verdict was
    reached past them with the fact they set aside present.
    """
    rm = meas.record_measurability(record, profile)
    out: dict[str, Outcome] = {}
    for dim in record.get("dimensions") or []:
        dim_id, status = dim.get("id"), dim.get("status")
        if not isinstance(dim_id, str) or f"{dim_id}: pass" in out:
            continue
        m = rm.of(meas.dimension_signal(dim_id))
        for s in STATUSES:
            out[f"{dim_id}: {s}"] = Outcome(status == s if m.measured else None, m)
    for key in FACT_FLAGS:
        out[f"fact {key}"] = _fact(rm, key, lambda v: v is True)
    out["fact spiral > 0"] = _fact(
        rm, "spiral", lambda v: isinstance(v, int | float) and not isinstance(v, bool) and v > 0
    )
    out["fact contradictions (non-empty)"] = _contradictions(rm)
    out["fact parse_misses (non-empty)"] = Outcome(bool(rm.facts.get("parse_misses")))
    verdict_m = rm.of(meas.RULE_JUDGE)
    v = rm.verdict
    past_rule_2 = v.rule not in (1, 2)

    def rule(fired: bool | None) -> Outcome:
        return Outcome(fired if verdict_m.measured else None, verdict_m)

    for s in _VERDICTS:
        out[f"rule judge: {s}"] = rule(str(v.status) == s)
    out["rule 1 decides (contradictions)"] = rule(v.rule == 1)
    out["rule 2 decides (conspicuous guard count)"] = rule(v.rule == 2)
    out["rule 3 sets guard_blocked aside"] = (
        rule(False)
        if not past_rule_2
        else _fact(rm, "guard_blocked", lambda b: isinstance(b, int | float) and b > 0)
    )
    out["rule 4 sets red-then-green aside"] = (
        rule(False) if not past_rule_2 else _fact(rm, "red_runs_then_green_finish", bool)
    )
    out["rule 5 decides (not proven)"] = rule(v.rule == 5)
    out["rule 6 decides fail (named deviation)"] = rule(v.rule == 6 and str(v.status) == "fail")
    return out


def _contradictions(rm: meas.RecordMeasurability) -> Outcome:
    """Contradictions fire, unless the only one is the third state (no telemetry at all)."""
    found = rm.facts.get("contradictions") or []
    if set(found) == {verification_evidence.EVENTS_ABSENT_CONTRADICTION}:
        m = rm.of(meas.dimension_signal(DimensionId.PROCESS_SAFETY))
        if not m.measured:  # the events file was never readable: an instrument, not a record
            return Outcome(None, m)
    return Outcome(bool(found))


def _fact(rm: meas.RecordMeasurability, key: str, fires: Any) -> Outcome:
    m = rm.of(meas.fact_signal(key))
    value = rm.facts.get(key)
    if not m.measured:
        return Outcome(None, m)
    if value is None:  # measured source, no number on this branch: still not a zero
        return Outcome(None, meas.Measurability(False, "the record carries no such number"))
    return Outcome(bool(fires(value)), m)


# --------------------------------------------------------------------------------------------
# bands


@dataclass(frozen=True)
class Limits:
    """What a band is read against: the ceiling, the floor, its ``alpha`` and ``optimize_at``.

    Refuses a ceiling or floor that is not a rate, a floor not below the ceiling, an alpha
    not strictly between 0 and 1 (``confidence_sequence`` checks ``optimize_at``).
    """

    ceiling: float = FIRE_RATE_CEILING
    floor: float = DEFAULT_FLOOR
    alpha: float = 0.05
    optimize_at: float = DEFAULT_OPTIMIZE_AT

    def __post_init__(self) -> None:
        for name, value in (("ceiling", self.ceiling), ("floor", self.floor)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise EvalkitError(f"monitor: {name} must be a rate in [0, 1], got {value!r}")
        if self.floor >= self.ceiling:
            raise EvalkitError(
                f"monitor: floor ({self.floor}) must be below ceiling ({self.ceiling})"
            )
        a = self.alpha
        if isinstance(a, bool) or not isinstance(a, int | float) or not 0 < a < 1:
            raise EvalkitError(f"monitor: alpha must be strictly between 0 and 1, got {a!r}")


@dataclass(frozen=True, eq=False)
class CheckBand:
    """One check over the monitored sessions: counts, the band, the state and when.

    ``sessions``: sessions of the check's rubric in order; ``n`` the measured ones, ``fires``
    those the check fired on; ``unmeasured`` counts the rest by reason. ``session_of[i]`` is
    the 1-based session number (in the monitored order) of the ``i + 1``-th measured outcome
    and ``session_ids`` the id of every session. The ``*_at`` fields are session numbers.
    """

    check: Check
    band: ConfidenceSequence = field(repr=False)
    session_of: NDArray[np.intp] = field(repr=False)
    session_ids: tuple[str, ...] = field(repr=False)
    unmeasured: meas.Unmeasured
    ceiling: float
    floor: float
    broken_at: int | None
    quiet_at: int | None
    within_at: int | None

    @property
    def sessions(self) -> int:
        """Sessions of this check's rubric in the monitored order."""
        return len(self.session_ids)

    @property
    def n(self) -> int:
        """Sessions the check was measured on."""
        return self.band.n

    @property
    def fires(self) -> int:
        """Measured sessions the check fired on."""
        return int(self.band.fires[-1]) if self.band.n else 0

    @property
    def rate(self) -> float | None:
        """The running rate after the last measured session (None: nothing measured)."""
        return self.fires / self.n if self.n else None

    @property
    def interval(self) -> ConfidenceInterval:
        """The anytime-valid band after the last measured session."""
        return self.band.interval()

    @property
    def fixed_n(self) -> ConfidenceInterval:
        """The Wilson interval at the same level, valid only if n had been fixed in advance."""
        return wilson_interval(self.fires, self.n, 1.0 - self.band.alpha)

    @property
    def state(self) -> State:
        """``broken`` once the lower end passed the ceiling, else ``quiet``, ``within``, ..."""
        if self.broken_at is not None:
            return State.BROKEN
        if self.quiet_at is not None:
            return State.QUIET
        if self.within_at is not None:
            return State.WITHIN
        return State.UNDECIDED

    @property
    def state_at(self) -> int | None:
        """The session number at which the state was first reached (None: undecided)."""
        return {
            State.BROKEN: self.broken_at,
            State.QUIET: self.quiet_at,
            State.WITHIN: self.within_at,
        }.get(self.state)

    @property
    def state_session(self) -> str | None:
        """The id of that session."""
        at = self.state_at
        return None if at is None else self.session_ids[at - 1]

    def to_dict(self) -> dict[str, Any]:
        """JSON-simple values, one row of ``evalkit monitor --format json``."""
        low, high = self.interval
        f_low, f_high = self.fixed_n
        return {
            "rubric": self.check.rubric,
            "kind": self.check.kind,
            "check": self.check.name,
            "alarm": self.check.alarm,
            "sessions": self.sessions,
            "n": self.n,
            "fires": self.fires,
            "unmeasured": self.unmeasured.count,
            "rate": self.rate,
            "lower": low,
            "upper": high,
            "state": self.state.value,
            "since_session": self.state_at,
            "since_session_id": self.state_session,
            "broken_at": self.broken_at,
            "quiet_at": self.quiet_at,
            "within_at": self.within_at,
            "fixed_n_lower": f_low,
            "fixed_n_upper": f_high,
            "unmeasured_reasons": [{"reason": r, "count": c} for r, c in self.unmeasured.reasons],
        }


def band_of(
    check: Check,
    outcomes: Sequence[Outcome],
    session_ids: Sequence[str],
    limits: Limits,
) -> CheckBand:
    """The band of one check from its outcome on each session (in order)."""
    cs = confidence_sequence(
        [o.fired for o in outcomes], alpha=limits.alpha, optimize_at=limits.optimize_at
    )
    ceiling, floor = limits.ceiling, limits.floor
    session_of = cs.positions + 1

    def at(n: int | None) -> int | None:
        return None if n is None else int(session_of[n - 1])

    within = np.flatnonzero((cs.lower >= floor) & (cs.upper <= ceiling))
    return CheckBand(
        check=check,
        band=cs,
        session_of=session_of,
        session_ids=tuple(session_ids),
        unmeasured=meas.tally(
            o.measurability if o.fired is None else meas.MEASURED for o in outcomes
        ),
        ceiling=ceiling,
        floor=floor,
        broken_at=at(cs.first_above(ceiling)),
        quiet_at=at(cs.first_below(floor)) if floor > 0 else None,
        within_at=at(int(within[0]) + 1 if within.size else None),
    )


# --------------------------------------------------------------------------------------------
# a journal


@dataclass(frozen=True, eq=False)
class MonitorReport:
    """Every check's band over one journal (or a ledger scored in memory)."""

    source: str  # "journal" | "ledger (scored in memory, nothing written)"
    name: str  # the metrics directory's name (never a machine path)
    limits: Limits
    since: str | None
    sessions: Mapping[str, int]  # rubric -> sessions monitored
    repeat_records: int  # records of a session already monitored under that rubric
    skipped_lines: tuple[str, ...]  # journal lines that are not valid records
    bands: tuple[CheckBand, ...]
    notes: tuple[str, ...] = ()
    unit: str = "sessions"  # what one outcome is (a judge drift report: "calls")

    @property
    def ceiling(self) -> float:
        """Broken above this rate."""
        return self.limits.ceiling

    @property
    def floor(self) -> float:
        """Quiet below this rate."""
        return self.limits.floor

    @property
    def alpha(self) -> float:
        """Every band misses its rate at some session with probability at most this."""
        return self.limits.alpha

    @property
    def optimize_at(self) -> float:
        """The number of outcomes the bands are tightest around."""
        return self.limits.optimize_at

    @property
    def broken_alarms(self) -> tuple[CheckBand, ...]:
        """The alarm checks whose band passed the ceiling (what ``evalkit monitor`` exits 4 on)."""
        return tuple(b for b in self.bands if b.check.alarm and b.state is State.BROKEN)

    def frame(self) -> pd.DataFrame:
        """One row per check (``CheckBand.to_dict`` without the reasons list)."""
        import pandas as pd

        rows = [
            {k: v for k, v in b.to_dict().items() if k != "unmeasured_reasons"} for b in self.bands
        ]
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """JSON-simple values (``evalkit monitor --format json``)."""
        return {
            "source": self.source,
            "name": self.name,
            "ceiling": self.ceiling,
            "floor": self.floor,
            "alpha": self.alpha,
            "optimize_at": self.optimize_at,
            "method": METHOD,
            "since": self.since,
            "unit": self.unit,
            "sessions": dict(self.sessions),
            "repeat_records": self.repeat_records,
            "skipped_lines": list(self.skipped_lines),
            "notes": list(self.notes),
            "broken": [b.check.label for b in self.broken_alarms],
            "checks": [b.to_dict() for b in self.bands],
        }


METHOD: Final = (
    "anytime-valid confidence sequence (two-sided beta-binomial mixture, Howard et al. 2021)"
)


def _since_ms(since: str | None) -> float | None:
    if since is None:
        return None
    text = since if "T" in since else f"{since}T00:00:00.000Z"
    ms = timestamp_ms(text)
    if ms is None:
        raise EvalkitError(f"monitor: --since {since!r} is not an ISO-8601 date or timestamp")
    return ms


def monitor_records(
    records: Iterable[Mapping[str, Any]],
    *,
    profile: meas.LedgerProfile | None = None,
    rubric: str | None = None,
    limits: Limits | None = None,
    since: str | None = None,
    source: str = "journal",
    name: str = "",
    skipped_lines: Sequence[str] = (),
    progress: Callable[[Iterable[Any]], Iterable[Any]] | None = None,
) -> MonitorReport:
    """Every check's band over ``records`` taken in order (see the module docstring).

    ``since`` keeps the sessions that started on or after it (the ledger's start when
    ``profile`` knows it, else the record's timestamp); ``rubric`` keeps one rubric version.
    ``progress`` wraps the records (a progress bar).
    """
    limits = limits or Limits()
    since_ms = _since_ms(since)
    by_rubric: dict[str, list[tuple[str, dict[str, Outcome]]]] = {}
    seen: set[tuple[str, str]] = set()
    repeats = 0
    judge_dims: dict[str, dict[str, bool]] = {}
    for rec in progress(records) if progress is not None else records:
        version, sid = str(rec.get("rubric_version")), str(rec.get("session_id"))
        if rubric is not None and version != rubric:
            continue
        if since_ms is not None:
            start = profile.session_starts.get(sid) if profile is not None else None
            start = start if start is not None else timestamp_ms(rec.get("timestamp"))
            if start is None or start < since_ms:
                continue
        if (version, sid) in seen:
            repeats += 1
            continue
        seen.add((version, sid))
        dims = judge_dims.setdefault(version, {})
        for d in rec.get("dimensions") or []:
            if isinstance(d.get("id"), str):
                dims.setdefault(d["id"], d.get("method") == "judge")
        by_rubric.setdefault(version, []).append((sid, record_outcomes(rec, profile)))
    bands: list[CheckBand] = []
    for version in sorted(by_rubric, key=_rubric_order):
        rows = by_rubric[version]
        ids = [sid for sid, _ in rows]
        for check in _checks(version, judge_dims.get(version, {})):
            outcomes = [found.get(check.name, Outcome(None, _NO_SIGNAL)) for _, found in rows]
            bands.append(band_of(check, outcomes, ids, limits))
    return MonitorReport(
        source=source,
        name=name,
        limits=limits,
        since=since,
        sessions={v: len(by_rubric[v]) for v in sorted(by_rubric, key=_rubric_order)},
        repeat_records=repeats,
        skipped_lines=tuple(skipped_lines),
        bands=tuple(bands),
    )


def _rubric_order(version: str) -> tuple[int, str]:
    return (RUBRIC_VERSIONS.index(version), "") if version in RUBRIC_VERSIONS else (99, version)


def _checks(version: str, seen_dims: Mapping[str, bool]) -> list[Check]:
    """The checks of a rubric version: its dimensions (and any seen), facts, the rule judge."""
    dims: dict[str, bool] = {}
    if version in RUBRIC_VERSIONS:
        dims.update(dict.fromkeys(get_rubric(version).dimension_ids, False))
    for dim_id, judge in seen_dims.items():
        dims.setdefault(dim_id, judge)
    checks = [c for dim_id, judge in dims.items() for c in _status_checks(version, dim_id, judge)]
    return checks + _fact_checks(version) + _rule_checks(version)


def monitor(
    metrics_dir: str | os.PathLike[str],
    *,
    rubric: str | None = None,
    limits: Limits | None = None,
    since: str | None = None,
    from_ledger: bool = False,
    progress: Callable[[Iterable[Any]], Iterable[Any]] | None = None,
) -> MonitorReport:
    """Monitor the journal of ``metrics_dir`` (or the ledger scored in memory).

    ``metrics_dir`` holds ``eval.jsonl`` (or is that file). Without a journal, or with
    ``from_ledger``, every eligible session of the ledger is scored in memory under ``rubric``
    (default: every shipped version), in ledger order, and nothing is written.
    """
    path = Path(metrics_dir)
    journal_path = path if path.is_file() else path / JOURNAL_NAME
    ledger_dir = path.parent if path.is_file() else path
    if not ledger_dir.is_dir():
        raise EvalkitError(f"monitor: {metrics_dir} is not a metrics directory or a journal")
    profile = _profile(ledger_dir)
    notes: list[str] = []
    kw: dict[str, Any] = {
        "profile": profile,
        "rubric": rubric,
        "limits": limits,
        "since": since,
        "name": ledger_dir.name,
        "progress": progress,
    }
    if profile is None:
        notes.append(
            "no readable ledger beside the journal: measurability rests on each record's own "
            "evidence"
        )
    if journal_path.is_file() and not from_ledger:
        read = read_journal(journal_path)
        skipped = tuple(str(d) for d in read.diagnostics)
        report = monitor_records(read.records, source="journal", skipped_lines=skipped, **kw)
    else:
        if not (ledger_dir / "sessions.jsonl").is_file():
            raise EvalkitError(
                f"monitor: {ledger_dir} holds neither {JOURNAL_NAME} nor sessions.jsonl"
            )
        report = monitor_records(
            _scored(ledger_dir, rubric),
            source="ledger (scored in memory, nothing written)",
            **kw,
        )
        if not journal_path.is_file():
            notes.append(f"no {JOURNAL_NAME}: the ledger's sessions were scored in memory")
    return _with_notes(report, notes)


def _with_notes(report: MonitorReport, notes: Sequence[str]) -> MonitorReport:
    from dataclasses import replace

    return replace(report, notes=(*report.notes, *notes))


def _profile(ledger_dir: Path) -> meas.LedgerProfile | None:
    if not (ledger_dir / "sessions.jsonl").is_file():
        return None
    try:
        return meas.ledger_profile(ledger_dir)
    except (EvalkitError, OSError):
        return None


def _scored(ledger_dir: Path, rubric: str | None) -> Iterable[dict[str, Any]]:
    """Every session's record under each rubric (ledger order), scored in memory."""
    from evalkit.scoring.engine import score_records

    for version in [rubric] if rubric else RUBRIC_VERSIONS:
        for record in score_records(ledger_dir, version):
            yield record.to_dict()
