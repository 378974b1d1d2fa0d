"""Which sessions an appended tail can change, so a rerun measures only those.

A batch leaves a :class:`ScoringState` (where ``sessions.jsonl`` was read to and its hash,
the canonical session ids, the rubric's note on the reading, whether there were events, the
event sources). The next batch, whose event sources were all resumed from the cursor
(:class:`evalkit.ledger.reader.ReadPoint`), asks :func:`affected_positions` which canonical
sessions the appended part can touch: the new sessions, the old ones whose window holds an
appended quality gate or guard event, whose id or raw ids an appended event names, whose
start an appended ``session.started`` is stamped at, and those a new session's window
overlaps (a new peer). Anything it cannot bound (a session line rewritten or superseding,
another note, new or lost sources) answers None: measure every session. The records stay
those of a full rescore (``tests/test_incremental.py``); ``docs/INCREMENTAL.md``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from evalkit.js.values import get, is_non_empty_trimmed
from evalkit.ledger.reader import Ledger, prefix_sha256
from evalkit.resolve import is_backfill_stub
from evalkit.scoring.measure import EventDigest, LedgerMeasure

__all__ = ["ScoringState", "affected_positions", "scoring_state"]


@dataclass(frozen=True)
class ScoringState:
    """What one batch read and measured, for the next batch to bound what changed."""

    sessions_end: int
    sessions_next_line: int
    sessions_sha256: str
    ids_sha256: str
    n_sessions: int
    ledger_note: str
    events_present: bool
    sources: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """As JSON-simple values (the cursor stores it)."""
        return {**asdict(self), "sources": list(self.sources)}

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> ScoringState:
        """The inverse of :meth:`to_dict`."""
        return cls(**{**value, "sources": tuple(value["sources"])})


def _ids_sha256(records: Sequence[Mapping[str, Any]]) -> str:
    h = hashlib.sha256()
    for rec in records:
        h.update(rec["session_id"].encode("utf-8", "surrogatepass") + b"\n")
    return h.hexdigest()


def scoring_state(ledger: Ledger, measure: LedgerMeasure) -> ScoringState | None:
    """The state of this reading, or None when ``sessions.jsonl`` was not hashed as read."""
    sessions = ledger.sessions
    counts = sessions.counts
    if sessions.exists and (counts is None or counts.partial or counts.sha256 is None):
        return None  # not read with a hash, or its last line is not complete yet
    sha = counts.sha256 if counts is not None else None
    return ScoringState(
        sessions_end=counts.end if counts is not None else 0,
        sessions_next_line=counts.next_line if counts is not None else 1,
        sessions_sha256=sha or "",
        ids_sha256=_ids_sha256(measure.records),
        n_sessions=len(measure.records),
        ledger_note=measure.ledger_note,
        events_present=measure.events_present,
        sources=tuple(src.path for src in ledger.event_sources),
    )


def affected_positions(
    ledger: Ledger, measure: LedgerMeasure, old: ScoringState
) -> set[int] | None:
    """The canonical positions whose inputs the appended part can change; None: any can."""
    appended = [src.appended for src in ledger.event_sources]
    if tuple(src.path for src in ledger.event_sources) != old.sources or None in appended:
        return None
    records = measure.records
    new = _new_sessions(ledger, records, old)
    if new is None:
        return None
    if measure.ledger_note != old.ledger_note:
        return None
    if measure.events_present != old.events_present:
        return None
    tail = EventDigest.merged(appended) if appended else EventDigest()
    found = set(new)
    found |= _in_windows(measure, tail)
    found |= _named(records, measure, tail)
    found |= _new_peers(measure, new)
    return found


def _new_sessions(
    ledger: Ledger, records: Sequence[Mapping[str, Any]], old: ScoringState
) -> list[int] | None:
    """Positions of the sessions appended since ``old``; None unless only fresh ones were."""
    sessions = ledger.sessions
    if old.sessions_sha256:
        if prefix_sha256(sessions.path, old.sessions_end) != old.sessions_sha256:
            return None
    elif old.sessions_end:
        return None
    if len(records) < old.n_sessions or _ids_sha256(records[: old.n_sessions]) != old.ids_sha256:
        return None
    known = {rec["session_id"] for rec in records[: old.n_sessions]}
    fresh: list[str] = []
    for line in sessions.lines:
        if line.line_no < old.sessions_next_line:
            continue
        value = line.value
        if line.error is not None or value.__class__ is not dict:
            return None
        sid = value.get("session_id")
        if (
            not isinstance(sid, str)
            or not is_non_empty_trimmed(sid)
            or sid in known
            or "supersedes" in value
            or is_backfill_stub(value)
        ):
            return None
        known.add(sid)
        fresh.append(sid)
    if len(records) != old.n_sessions + len(fresh):
        return None
    return list(range(old.n_sessions, len(records)))


def _in_windows(measure: LedgerMeasure, tail: EventDigest) -> set[int]:
    """Sessions whose window holds an appended quality gate or guard event."""
    times = np.concatenate(tail.times) if tail.times else np.zeros(0)
    times = np.sort(times[~np.isnan(times)])
    if not len(times):
        return set()
    at, starts, ends = measure.window_arrays
    inside = np.searchsorted(times, ends, "right") - np.searchsorted(times, starts, "left")
    return set(at[inside > 0].tolist())


def _named(
    records: Sequence[Mapping[str, Any]], measure: LedgerMeasure, tail: EventDigest
) -> set[int]:
    """Sessions an appended event names: by id, by raw id, or by its start's timestamp."""
    raws = set().union(*(set(c) for c in tail.by_raw_id.values()))
    semantic = set(tail.raw_ids)
    semantic |= {sem for sem, ids in measure.raw_ids.items() if not ids.isdisjoint(raws)}
    stamps = set(tail.host_classes)
    found = set()
    for i, rec in enumerate(records):
        started = get(rec, "started_at")
        if rec["session_id"] in semantic or (started.__class__ is str and started in stamps):
            found.add(i)
    return found


def _new_peers(measure: LedgerMeasure, new: list[int]) -> set[int]:
    """Old sessions whose window a new session's window strictly overlaps (a new peer)."""
    if not new:
        return set()
    at, starts, ends = measure.window_arrays
    found: set[int] = set()
    for i in new:
        w = measure.windows[i]
        if w is not None:
            found |= set(at[(starts < w.end) & (w.start < ends)].tolist())
    return found
