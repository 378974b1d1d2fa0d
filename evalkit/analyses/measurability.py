"""Was a signal measurable for a record, and why not: one answer for every analysis.

A *signal* is what an analysis counts per record: a dimension's status (``dimension:<id>``),
a judge fact (``fact:<name>``, the scalar keys of :data:`evalkit.judge.facts.FACT_KEYS`) or
the rule judge's verdict (:data:`RULE_JUDGE`). It is *unmeasured* when its source did not
exist or could not be read for that record: the third state (the record's own evidence
reports ``events.jsonl`` absent or empty); guard signals of a session that began before the
guard-emission date the record's evidence discloses; gate signals when the ledger holds no
quality_gate event at all; a fact the record carries no number for. Analyses leave an
unmeasured signal out of every rate's denominator and count it on its own, with its reason
(:func:`tally`). Facts and records stay as the rubric defines them; only the reading changes.
:func:`ledger_profile` says what a metrics directory holds. See ``docs/MEASURABILITY.md``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from evalkit.js.timestamps import format_iso, timestamp_ms
from evalkit.judge.facts import FACT_KEYS, REFERENCE_READERS, compute_facts
from evalkit.judge.rules import RuleVerdict, apply_rules
from evalkit.ledger.reader import read_metrics_dir
from evalkit.record.dimension import DimensionId, Status
from evalkit.resolve import canonical_sessions
from evalkit.rubrics.dimensions import (
    gate_health,
    guard_friction,
    process_safety,
    verification_evidence,
)
from evalkit.rubrics.dimensions.shared import GUARD_EMISSION_NOTE
from evalkit.scoring.measure import BLOCKED, LOOP_WARNING, QUALITY_GATE_EVENTS, WARNED

__all__ = [
    "FACT_SIGNALS",
    "GATE_FACTS",
    "GUARD_FACTS",
    "MEASURED",
    "RULE_JUDGE",
    "LedgerProfile",
    "Measurability",
    "RecordMeasurability",
    "Unmeasured",
    "dimension_signal",
    "fact_signal",
    "ledger_profile",
    "measurability",
    "record_measurability",
    "tally",
]

#: The rule judge's verdict on a record (:func:`evalkit.judge.rules.apply_rules`), as a signal.
RULE_JUDGE: Final = "rule-judge"
#: The facts that are signals (the two lists, contradictions and parse misses, are not).
FACT_SIGNALS: Final = tuple(k for k in FACT_KEYS if k not in ("contradictions", "parse_misses"))
#: Facts read from quality_gate events (the gate dimensions' readers, and the cross-dimension
#: red-then-green): unmeasured when the ledger has none at all.
GATE_FACTS: Final = frozenset(
    (*verification_evidence.FACTS.facts, *gate_health.FACTS.facts, "red_runs_then_green_finish")
)
#: Facts read from destructive-guard events: unmeasured before guard emission began.
GUARD_FACTS: Final = frozenset(guard_friction.FACTS.facts)
_GATE_DIMENSIONS = frozenset({DimensionId.VERIFICATION_EVIDENCE, DimensionId.GATE_HEALTH})
# the disclosure every process-safety / guard-friction evidence carries, its date a group
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_NOTE_DATE = _DATE.search(GUARD_EMISSION_NOTE)
assert _NOTE_DATE is not None  # the rubric's disclosure names the date guard emission began
_EMISSION = re.compile(
    re.escape(GUARD_EMISSION_NOTE[: _NOTE_DATE.start()])
    + f"({_DATE.pattern})"
    + re.escape(GUARD_EMISSION_NOTE[_NOTE_DATE.end() :]),
    re.ASCII,
)
_GUARD_EVENTS = (BLOCKED, WARNED, LOOP_WARNING)
_NO_NAME = "(no event name)"


def dimension_signal(dimension_id: str) -> str:
    """The signal of a dimension's status: ``dimension:<id>``."""
    return f"dimension:{dimension_id}"


def fact_signal(fact: str) -> str:
    """The signal of a judge fact: ``fact:<name>``."""
    return f"fact:{fact}"


@dataclass(frozen=True)
class Measurability:
    """Whether one signal was measured for one record; ``reason`` (one line) when it was not."""

    measured: bool
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-simple values."""
        return {"measured": self.measured, "reason": self.reason}


#: A measured signal.
MEASURED: Final = Measurability(True)


def _unmeasured(reason: str) -> Measurability:
    return Measurability(False, reason)


# --------------------------------------------------------------------------------------------
# the ledger profile


@dataclass(frozen=True)
class LedgerProfile:
    """What a metrics directory holds, as far as measurability asks.

    ``events_by_type``: event name -> count over every event source rubric-v2 reads
    (``events.jsonl`` and its rotated history), most frequent first; ``events_state`` is the
    active file's (``absent``, ``empty``, ``present``, ``unreadable``). ``session_starts``: the
    start of each canonical session (epoch ms, ``None`` when unparseable).
    """

    path: str
    sessions: int
    first_start: str | None
    last_end: str | None
    events_state: str
    events_by_type: Mapping[str, int]
    unreadable_event_lines: int
    event_sources: int
    session_starts: Mapping[str, float | None] = field(repr=False, default_factory=dict)

    @property
    def events(self) -> int:
        """Readable events over every source."""
        return sum(self.events_by_type.values())

    @property
    def gate_events(self) -> int:
        """quality_gate events (passed or failed) anywhere in the history."""
        return sum(self.events_by_type.get(name, 0) for name in QUALITY_GATE_EVENTS)

    @property
    def guard_events(self) -> int:
        """destructive-guard and loop-warning events anywhere in the history."""
        return sum(self.events_by_type.get(name, 0) for name in _GUARD_EVENTS)

    @property
    def has_gate_telemetry(self) -> bool:
        """Whether any quality_gate event exists: without one, no gate count is a measurement."""
        return self.gate_events > 0

    def events_text(self) -> str:
        """What ``events.jsonl`` holds, in a few words (``47 events, all subagent_stop``)."""
        if self.events_state == "absent" and self.event_sources == 0:
            return "no events.jsonl"
        if self.events_state == "unreadable":
            return "events.jsonl cannot be read"
        bad = (
            f"; {self.unreadable_event_lines} unreadable line(s)"
            if self.unreadable_event_lines
            else ""
        )
        n = self.events
        if n == 0:
            return f"no readable event{bad}"
        top = list(self.events_by_type.items())
        if len(top) == 1:
            return f"{n} event{'s' if n != 1 else ''}, all {top[0][0]}{bad}"
        shown = ", ".join(f"{k} {v}" for k, v in top[:4])
        more = f", {len(top) - 4} more type(s)" if len(top) > 4 else ""
        return f"{n} events: {shown}{more}{bad}"

    def where(self) -> str:
        """``events.jsonl`` or, with rotated sources, ``events.jsonl and its rotated history``."""
        return "events.jsonl" if self.event_sources <= 1 else "events.jsonl or its history"

    def gate_cause(self) -> str:
        """One line: why no gate count is a measurement here (no quality_gate event at all)."""
        return f"no quality_gate event anywhere in {self.where()}: {self.events_text()}"

    def events_cause(self) -> str:
        """One line: why nothing event-derived was measured (the third state)."""
        return f"no telemetry: {self.events_text()}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-simple values (no absolute path: the directory's name only)."""
        return {
            "name": os.path.basename(os.path.normpath(self.path)),
            "sessions": self.sessions,
            "first_start": self.first_start,
            "last_end": self.last_end,
            "events_state": self.events_state,
            "events": self.events,
            "events_by_type": dict(self.events_by_type),
            "unreadable_event_lines": self.unreadable_event_lines,
            "event_sources": self.event_sources,
            "gate_events": self.gate_events,
            "guard_events": self.guard_events,
            "has_gate_telemetry": self.has_gate_telemetry,
        }


def _iso(ms: float | None) -> str | None:
    return None if ms is None else format_iso(ms)


def ledger_profile(metrics_dir: str | os.PathLike[str]) -> LedgerProfile:
    """Read ``metrics_dir`` once: sessions, their date range, events by type, sources."""
    ledger = read_metrics_dir(metrics_dir)
    records = canonical_sessions(ledger.sessions.values).records
    starts: dict[str, float | None] = {}
    ends: list[float] = []
    for rec in records:
        starts[str(rec.get("session_id"))] = timestamp_ms(rec.get("started_at"))
        end = timestamp_ms(rec.get("completed_at"))
        if end is not None:
            ends.append(end)
    known = [s for s in starts.values() if s is not None]
    by_type: Counter[str] = Counter()
    for ev in ledger.events_v2:
        name = ev.get("event")
        by_type[name if isinstance(name, str) else _NO_NAME] += 1
    return LedgerProfile(
        path=os.fspath(metrics_dir),
        sessions=len(records),
        first_start=_iso(min(known)) if known else None,
        last_end=_iso(max(ends)) if ends else None,
        events_state=ledger.events.state,
        events_by_type=dict(sorted(by_type.items(), key=lambda kv: (-kv[1], kv[0]))),
        unreadable_event_lines=ledger.unreadable_event_lines,
        event_sources=len(ledger.event_sources),
        session_starts=starts,
    )


# --------------------------------------------------------------------------------------------
# one record


def _dimensions(record: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    first: dict[str, Mapping[str, Any]] = {}
    dims = record.get("dimensions")
    for dim in dims if isinstance(dims, list) else []:
        if isinstance(dim, Mapping) and isinstance(dim.get("id"), str):
            first.setdefault(dim["id"], dim)
    return first


def _text(dim: Mapping[str, Any] | None) -> str:
    evidence = None if dim is None else dim.get("evidence")
    return evidence if isinstance(evidence, str) else ""


#: fact -> the dimensions whose readers carry it (rubric-v2's reference readers)
_CARRIERS: Final = {
    key: tuple(r.dimension for r in REFERENCE_READERS if key in r.facts) for key in FACT_SIGNALS
}


@dataclass(frozen=True)
class RecordMeasurability:
    """Every signal of one record with its measurability; the facts and verdict it rests on."""

    session_id: str | None
    facts: Mapping[str, Any]
    verdict: RuleVerdict
    signals: Mapping[str, Measurability]
    sources: Mapping[str, Measurability] = field(repr=False, default_factory=dict)

    def of(self, signal: str) -> Measurability:
        """The signal's measurability (a signal the record does not carry is unmeasured)."""
        found = self.signals.get(signal)
        return found if found is not None else _unmeasured("the record carries no such signal")

    def source(self, signal: str) -> Measurability:
        """Whether the signal's *source* existed, whatever number the record carries.

        For an analysis that supplies a value itself (the threshold study's rubric-v1 prose
        fallback): a value read from a source that did not exist is still unmeasured.
        """
        return self.sources.get(signal, self.of(signal))


def _guard_era(
    record: Mapping[str, Any], dims: Mapping[str, Mapping[str, Any]], profile: LedgerProfile | None
) -> str | None:
    """Why this record's guard signals are unmeasured by date, else None."""
    match = None
    for dim_id in (DimensionId.GUARD_FRICTION, DimensionId.PROCESS_SAFETY):
        match = _EMISSION.search(_text(dims.get(dim_id)))
        if match:
            break
    if match is None:
        return None  # no disclosure: no emission date to compare with
    began = match.group(1)
    since = timestamp_ms(f"{began}T00:00:00.000Z")
    sid = record.get("session_id")
    if profile is not None:
        start = profile.session_starts.get(str(sid)) if sid is not None else None
        if start is None:
            return f"guard emission began {began}; the session's start is unknown in the ledger"
    else:  # no ledger: the record's own timestamp bounds the session's start from above
        start = timestamp_ms(record.get("timestamp"))
        if start is None or since is None or start >= since:
            return None
    if since is not None and start < since:
        return f"guard emission began {began}; the session started before it"
    return None


def record_measurability(
    record: Mapping[str, Any], profile: LedgerProfile | None = None
) -> RecordMeasurability:
    """Every signal of ``record`` (a journal record, or ``session_id`` + ``dimensions``).

    ``profile`` (:func:`ledger_profile` of the record's metrics directory) adds what only the
    ledger knows: whether any gate telemetry exists and when each session started. Without it,
    only the record's own evidence speaks (and its ``timestamp`` bounds the session's start).
    """
    dims = _dimensions(record)
    facts = compute_facts(record.get("dimensions"))
    third_state = any(
        reader(_text(dims.get(dim_id)))
        for dim_id, reader in (
            (DimensionId.PROCESS_SAFETY, process_safety.read_unmeasurable),
            (DimensionId.GUARD_FRICTION, guard_friction.read_unmeasurable),
        )
        if dim_id in dims
    )
    no_events = (
        profile.events_cause()
        if profile is not None
        else "no telemetry: the record's evidence reports events.jsonl absent or empty"
    )
    events = no_events if third_state else None
    gates = (
        profile.gate_cause()
        if profile is not None and not profile.has_gate_telemetry and not third_state
        else None
    )
    guards = _guard_era(record, dims, profile)
    sources: dict[str, Measurability] = {}
    signals: dict[str, Measurability] = {}

    for dim_id, dim in dims.items():
        signals[dimension_signal(dim_id)] = _dimension(dim_id, dim, dims, events, gates, guards)

    for key in FACT_SIGNALS:
        missing = None
        # nothing changed is nothing to verify, whatever the telemetry: that False is measured
        nothing_changed = key == "changes_unverified" and facts.get(key) is False
        if key in GATE_FACTS and not nothing_changed:
            missing = events or gates
        elif key in GUARD_FACTS:
            missing = events or guards
        sources[fact_signal(key)] = MEASURED if missing is None else _unmeasured(missing)
        if missing is None and facts.get(key) is None:
            missing = _no_number(key, facts, dims, third_state)
        signals[fact_signal(key)] = MEASURED if missing is None else _unmeasured(missing)

    verdict = apply_rules(facts)
    signals[RULE_JUDGE] = _verdict(verdict, facts, signals, events)
    sid = record.get("session_id")
    return RecordMeasurability(
        None if sid is None else str(sid), facts, verdict, signals, {**signals, **sources}
    )


def _dimension(
    dim_id: str,
    dim: Mapping[str, Any],
    dims: Mapping[str, Mapping[str, Any]],
    events: str | None,
    gates: str | None,
    guards: str | None,
) -> Measurability:
    status = dim.get("status")
    if dim_id in _GATE_DIMENSIONS:
        if status == Status.NOT_APPLICABLE:  # nothing changed / no waves ran: structural
            return MEASURED
        missing = events or gates
        return MEASURED if missing is None else _unmeasured(missing)
    if dim_id == DimensionId.PROCESS_SAFETY:
        if events is not None:
            return _unmeasured(events)
        v1_reading = DimensionId.GUARD_FRICTION not in dims  # v1 graded the guard counts here
        spiral = process_safety.read_spiral(_text(dim))
        if spiral is None:
            spiral = process_safety.read_spiral_v1_prose(_text(dim))
        if v1_reading and guards is not None and not (status == Status.FAIL and _positive(spiral)):
            return _unmeasured(guards)  # its pass rests on guard silence
        return MEASURED
    if dim_id == DimensionId.GUARD_FRICTION:
        missing = events or guards
        return MEASURED if missing is None else _unmeasured(missing)
    return MEASURED


def _no_number(
    key: str, facts: Mapping[str, Any], dims: Mapping[str, Any], third_state: bool
) -> str:
    """Why a fact whose source existed has no value in this record."""
    carriers = _CARRIERS.get(key, ())
    if third_state:
        return (
            "the evidence reports events.jsonl absent or empty and carries no such number "
            "(the third state)"
        )
    if any(m.get("fact") == key for m in facts.get("parse_misses") or []):
        return "the reader found no number in the evidence (a parse miss)"
    if (
        key in GUARD_FACTS
        and DimensionId.GUARD_FRICTION not in dims
        and (DimensionId.PROCESS_SAFETY in dims)
    ):
        return "rubric-v1 wrote no guard count on this process-safety branch"
    if carriers and not any(c in dims for c in carriers):
        return f"the record has no {' or '.join(carriers)} dimension"
    if key in GATE_FACTS and facts.get("window_contaminated") is True:
        return "the window is shared with peer sessions: gate events cannot be attributed"
    return "the record's evidence carries no such number on this branch"


def _verdict(
    verdict: RuleVerdict,
    facts: Mapping[str, Any],
    signals: Mapping[str, Measurability],
    events: str | None,
) -> Measurability:
    """Whether the deciding rule read only measured facts."""

    def fact(name: str) -> Measurability:
        return signals[fact_signal(name)]

    if verdict.rule == 1:
        only_source = set(facts.get("contradictions") or []) == {
            verification_evidence.EVENTS_ABSENT_CONTRADICTION
        }
        return _unmeasured(events) if only_source and events is not None else MEASURED
    if verdict.rule == 2:
        return fact("guard_blocked_conspicuous")
    if verdict.rule == 5:
        if facts.get("parse_misses"):
            return MEASURED  # a blind reader is the record's defect, which rule 5 reports
        return _unmeasured(
            "rule 5: neither fact rule 6 reads is measured (changes_unverified: "
            f"{fact('changes_unverified').reason}; spiral: {fact('spiral').reason})"
        )
    unverified, spiral = fact("changes_unverified"), fact("spiral")
    if verdict.status == "fail":
        fired_unverified = facts.get("changes_unverified") is True and unverified.measured
        fired_spiral = _positive(facts.get("spiral")) and spiral.measured
        if fired_unverified or fired_spiral:
            return MEASURED
        return _unmeasured(f"rule 6 fires on changes_unverified, unmeasured: {unverified.reason}")
    for name, m in (("changes_unverified", unverified), ("spiral", spiral)):
        if not m.measured:
            return _unmeasured(f"rule 6 passes without {name}, unmeasured: {m.reason}")
    return MEASURED


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def measurability(
    record: Mapping[str, Any], signal: str, profile: LedgerProfile | None = None
) -> Measurability:
    """Whether ``signal`` was measured for ``record`` (see :func:`record_measurability`)."""
    return record_measurability(record, profile).of(signal)


# --------------------------------------------------------------------------------------------
# counting


@dataclass(frozen=True)
class Unmeasured:
    """How many of ``total`` records a signal was unmeasured on, by reason (most first)."""

    count: int
    total: int
    reasons: tuple[tuple[str, int], ...] = ()

    @property
    def measured(self) -> int:
        """Records the signal was measured on: the denominator of its rates."""
        return self.total - self.count

    def text(self, unit: str = "records") -> str:
        """``10 of 10 sessions unmeasured: guard emission began ...`` (empty when none)."""
        if not self.count:
            return ""
        why = "; ".join(r if n == self.count else f"{r} ({n})" for r, n in self.reasons)
        return f"{self.count} of {self.total} {unit} unmeasured: {why}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-simple values."""
        return {
            "unmeasured": self.count,
            "of": self.total,
            "reasons": [{"reason": r, "count": n} for r, n in self.reasons],
        }


def tally(items: Iterable[Measurability]) -> Unmeasured:
    """Count the unmeasured among ``items``, grouped by reason."""
    total, reasons = 0, Counter[str]()
    for m in items:
        total += 1
        if not m.measured:
            reasons[m.reason or "unmeasured"] += 1
    ordered = tuple(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    return Unmeasured(sum(reasons.values()), total, ordered)
