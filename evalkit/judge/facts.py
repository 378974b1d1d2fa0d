"""Pre-computed judge facts (rubric-v2 § "Judge Dimensions", "Facts are pre-computed").

``compute_facts(dimensions)`` reads the deterministic dimensions' evidence strings and returns
the fifteen facts the judge must not be asked to infer. It is a loop over the dimensions'
facts readers (each beside its templates in :mod:`evalkit.rubrics.dimensions`), followed by the
cross-dimension facts and contradictions below. Three kinds of "no number" are kept apart:

* ``None`` — this branch carries no such number (a contaminated window has no attributable
  gate count; a dimension that is absent cannot carry anything, and its absence is never a
  parse miss);
* a ``parse_misses`` entry — the dimension is present and should have carried the number, but
  no known template matched: the reader went blind (decision rule 5);
* the third state — ``process-safety`` / ``guard-friction`` report ``events.jsonl`` absent or
  empty, so every gate count came from a file that was never readable: the gate facts are
  ``None`` (not zeros) and no parse miss is recorded for them, whatever the gate evidence says
  (reworded, cut, missing, not a string) — only "nothing changed" survives as
  ``changes_unverified=False``, as the reference's vectors have it; a ``0 quality_gate events
  ... but total_files_changed=…`` verification string is recorded as a contradiction, so
  decision rule 1 abstains instead of rule 6 failing (or passing) on facts nobody measured.

Cross-version reading: a stored rubric-v1 record has no ``guard-friction`` dimension; its guard
count is read from the v1 ``process-safety`` fail branch and its spiral count from the v1 prose
form when the v2 token is missing.

Which readers run: the six of rubric-v2's facts (the reference's ``computeRecordFacts``), in its
reading order (the order parse misses are recorded in), whatever the record's version. A later
rubric passed as ``rubric=`` adds the readers of its new dimensions after them, and their facts
after the fifteen keys; rubric-v1 and rubric-v2 add none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.js.numbers import json_number
from evalkit.js.values import js_string
from evalkit.rubrics.dimensions import (
    efficiency_kpis,
    gate_health,
    guard_friction,
    plan_fidelity,
    process_safety,
    verification_evidence,
)
from evalkit.rubrics.dimensions.reading import Number, Reading, RecordView
from evalkit.rubrics.dimensions.spec import FactsReader
from evalkit.rubrics.registry import Rubric, get_rubric

#: rubric-v2 decision rule 2 (defined where the fact is computed, in guard_friction).
GUARD_BLOCKED_CONSPICUOUS_THRESHOLD = guard_friction.GUARD_BLOCKED_CONSPICUOUS

#: The facts keys, in the order the reference emits them.
FACT_KEYS: tuple[str, ...] = (
    "gate_runs_total",
    "gate_runs_failed",
    "full_gate_runs",
    "last_full_gate_exit",
    "red_runs_then_green_finish",
    "changes_unverified",
    "window_contaminated",
    "guard_blocked",
    "guard_attribution",
    "guard_blocked_conspicuous",
    "spiral",
    "completion_rate",
    "carryover",
    "contradictions",
    "parse_misses",
)

#: rubric-v2's facts readers in the reference's reading order (parse misses follow it).
REFERENCE_READERS: tuple[FactsReader, ...] = (
    verification_evidence.FACTS,
    gate_health.FACTS,
    process_safety.FACTS,
    guard_friction.FACTS,
    plan_fidelity.FACTS,
    efficiency_kpis.FACTS,
)

_DEFAULT_RUBRIC = "rubric-v2"  # the version whose judge defined the facts


@dataclass(frozen=True)
class Facts:
    """The fifteen rubric-v2 facts; ``to_dict()`` is what :func:`compute_facts` returns.

    ``extra`` holds the facts of a later rubric's new dimensions (empty for v1 and v2),
    emitted after the fifteen keys.
    """

    gate_runs_total: Number | None = None
    gate_runs_failed: Number | None = None
    full_gate_runs: Number | None = None
    last_full_gate_exit: Number | None = None
    red_runs_then_green_finish: bool | None = None
    changes_unverified: bool | None = None
    window_contaminated: bool | None = None
    guard_blocked: Number | None = None
    guard_attribution: str | None = None
    guard_blocked_conspicuous: bool | None = None
    spiral: Number | None = None
    completion_rate: Number | None = None
    carryover: Number | None = None
    contradictions: tuple[str, ...] = field(default_factory=tuple)
    parse_misses: tuple[Mapping[str, str], ...] = field(default_factory=tuple)
    extra: tuple[tuple[str, Any], ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict, keys in the reference's order, non-finite numbers as None."""
        out: dict[str, Any] = {}
        for key in FACT_KEYS:
            value = getattr(self, key)
            if key == "contradictions":
                out[key] = list(value)
            elif key == "parse_misses":
                out[key] = [dict(miss) for miss in value]
            else:
                out[key] = json_number(value)
        for key, value in self.extra:
            out[key] = json_number(value)
        return out


def facts_readers(rubric: str | Rubric = _DEFAULT_RUBRIC) -> tuple[FactsReader, ...]:
    """The readers :func:`compute_facts` runs for ``rubric``, in reading order."""
    known = {reader.dimension for reader in REFERENCE_READERS}
    later = tuple(
        spec.facts
        for spec in get_rubric(rubric).dimensions
        if spec.facts is not None and spec.id not in known
    )
    return REFERENCE_READERS + later


def _events_unreadable(view: RecordView, readers: Sequence[FactsReader]) -> bool:
    """The third state: a present dimension reports ``events.jsonl`` absent or empty."""
    return any(
        reader.events_unreadable(text)
        for reader in readers
        if reader.events_unreadable is not None
        and (text := view.evidence(reader.dimension)) is not None
    )


def _merge(readings: Sequence[tuple[str, Reading]]) -> tuple[dict[str, Any], list[str]]:
    """Each fact from the first reader that has a number for it.

    A later reader with another number for the same fact is a disagreement (the record
    contradicts itself).
    """
    values: dict[str, Any] = {}
    source: dict[str, str] = {}
    disagreements: list[str] = []
    for dimension, reading in readings:
        for key, value in reading.facts.items():
            if value is None:
                continue
            if key not in values:
                values[key], source[key] = value, dimension
            elif value != values[key]:
                disagreements.append(
                    f"{key} disagrees between {source[key]} ({js_string(values[key])}) "
                    f"and {dimension} ({js_string(value)})"
                )
    return values, disagreements


def _exceeds(a: str, b: str, f: Mapping[str, Any]) -> list[str]:
    if f.get(a) is not None and f.get(b) is not None and f[a] > f[b]:
        return [f"{a}={js_string(f[a])} exceeds {b}={js_string(f[b])}"]
    return []


def _consistency(view: RecordView, f: Mapping[str, Any], disagreements: list[str]) -> list[str]:
    """The record disagreeing with itself: statuses against the numbers, counts against counts."""
    out: list[str] = []
    ve_status = view.status(verification_evidence.ID)
    gh_status = view.status(gate_health.ID)
    failed = f.get("gate_runs_failed")
    last_exit = f.get("last_full_gate_exit")
    if ve_status == "pass" and failed is not None and failed > 0:
        out.append(f"verification-evidence status=pass but gate_runs_failed={js_string(failed)}")
    if ve_status == "fail" and failed == 0:
        out.append("verification-evidence status=fail but gate_runs_failed=0")
    out += _exceeds("gate_runs_failed", "gate_runs_total", f)
    out += _exceeds("full_gate_runs", "gate_runs_total", f)
    if gh_status == "pass" and last_exit is not None and last_exit != 0:
        out.append(f"gate-health status=pass but last_full_gate_exit={js_string(last_exit)}")
    if gh_status == "fail" and last_exit == 0:
        out.append("gate-health status=fail but last_full_gate_exit=0")
    out += disagreements
    # v2 shape only (guard-friction present): v2 process-safety fails on spiral > 0 and nothing
    # else. A v1 record failed on blocked >= 1, which is no contradiction of its own rubric.
    if (
        view.has(guard_friction.ID)
        and view.status(process_safety.ID) == "fail"
        and f.get("spiral") == 0
    ):
        out.append("process-safety status=fail but agent_summary.spiral=0")
    return out


def compute_facts_object(dimensions: Any, *, rubric: str | Rubric = _DEFAULT_RUBRIC) -> Facts:
    """Compute the facts as a frozen :class:`Facts` (see :func:`compute_facts`)."""
    readers = facts_readers(rubric)
    view = RecordView.of(dimensions)
    view = view.with_events_unreadable(_events_unreadable(view, readers))
    readings = [(reader.dimension, reader.read(view)) for reader in readers]
    f, disagreements = _merge(readings)
    failed, last_exit = f.get("gate_runs_failed"), f.get("last_full_gate_exit")
    red_then_green = None if failed is None or last_exit is None else failed > 0 and last_exit == 0
    said = [r.contaminated for _, r in readings if r.contaminated is not None]
    contradictions = [c for _, r in readings for c in r.contradictions]
    extra_keys = [key for reader in readers[len(REFERENCE_READERS) :] for key in reader.facts]
    return Facts(
        gate_runs_total=f.get("gate_runs_total"),
        gate_runs_failed=failed,
        full_gate_runs=f.get("full_gate_runs"),
        last_full_gate_exit=last_exit,
        red_runs_then_green_finish=red_then_green,
        changes_unverified=f.get("changes_unverified"),
        window_contaminated=any(said) if said else None,
        guard_blocked=f.get("guard_blocked"),
        guard_attribution=f.get("guard_attribution"),
        guard_blocked_conspicuous=f.get("guard_blocked_conspicuous"),
        spiral=f.get("spiral"),
        completion_rate=f.get("completion_rate"),
        carryover=f.get("carryover"),
        contradictions=tuple(contradictions + _consistency(view, f, disagreements)),
        parse_misses=tuple(miss for _, r in readings for miss in r.misses),
        extra=tuple((key, f.get(key)) for key in dict.fromkeys(extra_keys) if key not in FACT_KEYS),
    )


def compute_facts(dimensions: Any, *, rubric: str | Rubric = _DEFAULT_RUBRIC) -> dict[str, Any]:
    """Compute the rubric-v2 judge facts from a record's ``dimensions`` array.

    Accepts anything: a non-list (``None``, a dict) reads as no dimensions; entries that are
    not objects, or whose ``id`` matches no deterministic dimension, are ignored; a duplicated
    dimension is read from its FIRST occurrence; a non-string ``evidence`` reads as ``""``
    (present but blind, so a parse miss). Returns a plain dict with exactly the fifteen keys
    of :data:`FACT_KEYS`, in that order; ``None`` means "no such number on this branch".
    ``rubric`` names a later rubric whose new dimensions' facts follow the fifteen keys
    (rubric-v1 and rubric-v2 have none: the default is rubric-v2, whose judge defined them).
    """
    return compute_facts_object(dimensions, rubric=rubric).to_dict()


__all__ = [
    "FACT_KEYS",
    "GUARD_BLOCKED_CONSPICUOUS_THRESHOLD",
    "REFERENCE_READERS",
    "Facts",
    "compute_facts",
    "compute_facts_object",
    "facts_readers",
]
