"""Which session is scored, and over which window (rubric § Session-Resolution Cascade).

Three steps, each a pure function of already-parsed ledger values:

1. :func:`canonical_sessions` -- the canonical reading of SPEC section 6: one record per
   physical session (newest wins per id keeping the first position, backfill stubs never shadow
   real records, double-stub collapse, attestable ``supersedes`` markers, cross-id stub drop).
2. :func:`resolve_record` -- the cascade: an explicit id selects its (last) record, even an
   abandoned one; otherwise one newest-to-oldest scan picks the first ``completed`` record or
   the first non-abandoned record with ``completed_at`` and evidence of work.
3. :func:`compute_window`, :func:`peer_overlaps` -- the inclusive wall-clock window (``None``
   when a boundary is missing or unparseable) and the other sessions overlapping it (strict
   inequality, same id excluded), for every record at once (:func:`find_peer_overlap` asks it
   for one record).

:func:`resolve_session` runs them over a metrics directory. What falls into a window (events,
guard attribution by raw id) is measured by :mod:`evalkit.scoring.measure`.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from typing import Any, Literal

from evalkit.errors import SessionResolutionError
from evalkit.js.timestamps import parse_timestamps, timestamp_ms
from evalkit.js.values import (
    UNDEFINED,
    get,
    is_non_empty_string,
    is_plain_object,
    js_gt0,
    js_nullish,
    js_sort_key,
    js_truthy,
)
from evalkit.ledger.reader import read_session_values
from evalkit.record.scoring_context import PeerOverlap, Window

__all__ = [
    "CanonicalSessions",
    "IgnoredSupersede",
    "Resolution",
    "ResolvedVia",
    "canonical_sessions",
    "compute_window",
    "compute_windows",
    "find_peer_overlap",
    "is_backfill_stub",
    "peer_overlaps",
    "resolve_record",
    "resolve_session",
    "timestamp_ms",
]

ResolvedVia = Literal["explicit", "cascade-completed", "cascade-fallback"]

#: ``_backfill_source`` prefix of a real record repaired in place (never a stub).
_REPAIR_PREFIX = "repair-invalid-sessions/"


# -- canonical reading (SPEC section 6) ------------------------------------------------------


@dataclass(frozen=True)
class IgnoredSupersede:
    """A ``supersedes`` marker that was refused; both records were kept."""

    by: str
    target: str
    reason: Literal["target-not-abandoned", "no-shared-join-key"]


@dataclass(frozen=True)
class CanonicalSessions:
    """One record per physical session, in order of each id's first appearance."""

    records: tuple[Mapping[str, Any], ...]
    ignored_supersedes: tuple[IgnoredSupersede, ...] = ()


def is_backfill_stub(record: Mapping[str, Any]) -> bool:
    """A synthesised record that measured no work (SPEC section 6, rule 1)."""
    source = get(record, "_backfill_source")
    if not is_non_empty_string(source) or source.startswith(_REPAIR_PREFIX):
        return False
    waves = get(record, "waves")
    has_work = (
        (isinstance(waves, list) and len(waves) > 0)
        or js_gt0(get(record, "total_waves"))
        or js_gt0(get(record, "total_agents"))
        or js_gt0(get(record, "total_files_changed"))
    )
    return not has_work


def _collapse_double_stubs(by_id: dict[str, Mapping[str, Any]]) -> None:
    """Rule 2: of abandoned records sharing both timestamps, drop the synthetic twins."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for rec in by_id.values():
        if get(rec, "status") != "abandoned":
            continue
        started, completed = get(rec, "started_at"), get(rec, "completed_at")
        if not (is_non_empty_string(started) and is_non_empty_string(completed)):
            continue
        # The reference groups on the text "<started_at> <completed_at>", so ("a b", "c") and
        # ("a", "b c") are one group there; the same key keeps the same records.
        groups.setdefault(f"{started} {completed}", []).append(rec)
    for group in groups.values():
        if len(group) < 2:
            continue
        synthetic = [r for r in group if get(r, "_synthetic_session_id") is True]
        # All-synthetic or all-authentic: no evidence which one is the artefact; keep all.
        if not synthetic or len(synthetic) == len(group):
            continue
        for rec in synthetic:
            del by_id[rec["session_id"]]


def _supersede_reject_reason(
    superseder: Mapping[str, Any], target: Mapping[str, Any]
) -> Literal["target-not-abandoned", "no-shared-join-key"] | None:
    status = get(target, "status")
    if is_non_empty_string(status) and status != "abandoned":
        return "target-not-abandoned"
    raw_a, raw_b = get(superseder, "raw_session_id"), get(target, "raw_session_id")
    if is_non_empty_string(raw_a) and is_non_empty_string(raw_b) and raw_a == raw_b:
        return None
    started = get(superseder, "started_at")
    if is_non_empty_string(started) and get(target, "started_at") == started:
        return None
    return "no-shared-join-key"


def _cycle_order_timestamp(rec: Mapping[str, Any]) -> str:
    for key in ("completed_at", "started_at"):
        value = get(rec, key)
        if is_non_empty_string(value):
            return value
    return ""


def _resolve_supersedes(
    by_id: dict[str, Mapping[str, Any]], ignored: list[IgnoredSupersede]
) -> None:
    """Rule 3: drop every record a *surviving* record attestably supersedes.

    A fixpoint over the supersede graph, so the result depends on the edges only, never on
    file order (a chain C -> B -> A leaves C and A). A cycle is broken by keeping its newest
    member (``completed_at``, else ``started_at``; ties by ascending ``session_id``).
    """
    superseded_by: dict[str, set[str]] = {}
    for rec in by_id.values():
        target = get(rec, "supersedes")
        if not is_non_empty_string(target) or target == rec["session_id"]:
            continue
        target_rec = by_id.get(target)
        if target_rec is None:
            continue  # nothing to remove; not an anomaly either
        reason = _supersede_reject_reason(rec, target_rec)
        if reason is not None:
            ignored.append(IgnoredSupersede(rec["session_id"], target, reason))
            continue
        superseded_by.setdefault(target, set()).add(rec["session_id"])
    if not superseded_by:
        return

    ids = list(by_id)
    alive: dict[str, bool] = {}
    while True:
        changed = True
        while changed:
            changed = False
            for sid in ids:
                if sid in alive:
                    continue
                sups = superseded_by.get(sid)
                if not sups:
                    alive[sid] = True
                    changed = True
                    continue
                states = [alive.get(s) for s in sups]
                if any(st is True for st in states):
                    alive[sid] = False
                    changed = True
                elif all(st is False for st in states):
                    alive[sid] = True
                    changed = True
        undecided = [sid for sid in ids if sid not in alive]
        if not undecided:
            break
        newest = min(
            undecided,
            key=lambda sid: (
                _Desc(js_sort_key(_cycle_order_timestamp(by_id[sid]))),
                js_sort_key(sid),
            ),
        )
        alive[newest] = True
    for sid, is_alive in alive.items():
        if not is_alive:
            del by_id[sid]


@dataclass(frozen=True, order=False)
class _Desc:
    """Sort key wrapper that reverses the order of ``bytes``."""

    key: bytes

    def __lt__(self, other: _Desc) -> bool:
        return self.key > other.key


def _collapse_stubs_by_raw_id(by_id: dict[str, Mapping[str, Any]]) -> None:
    """Rule 4: a stub sharing a raw id with a non-stub of another id is dropped."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for rec in by_id.values():
        raw = get(rec, "raw_session_id")
        if is_non_empty_string(raw):
            groups.setdefault(raw, []).append(rec)
    for group in groups.values():
        stubs = [r for r in group if is_backfill_stub(r)]
        if len(group) < 2 or len(stubs) == len(group):
            continue
        for rec in stubs:
            by_id.pop(rec["session_id"], None)


def canonical_sessions(values: Iterable[Any]) -> CanonicalSessions:
    """The canonical reading of parsed ``sessions.jsonl`` values (SPEC section 6).

    Values that are not objects, and objects without a non-empty string ``session_id``, are
    dropped. Order: the first appearance of each surviving id.
    """
    by_id: dict[str, Mapping[str, Any]] = {}
    for rec in values:
        if not is_plain_object(rec):
            continue
        sid = get(rec, "session_id")
        if not is_non_empty_string(sid):
            continue
        prev = by_id.get(sid)
        # A later backfill stub never shadows an earlier real record of the same id.
        if prev is not None and is_backfill_stub(rec) and not is_backfill_stub(prev):
            continue
        by_id[sid] = rec  # an existing key keeps its (first) position
    _collapse_double_stubs(by_id)
    ignored: list[IgnoredSupersede] = []
    _resolve_supersedes(by_id, ignored)
    _collapse_stubs_by_raw_id(by_id)
    return CanonicalSessions(tuple(by_id.values()), tuple(ignored))


# -- the cascade -----------------------------------------------------------------------------


def resolve_record(
    records: Sequence[Mapping[str, Any]], session_id: str | None = None
) -> tuple[Mapping[str, Any], ResolvedVia]:
    """Select the session to score from canonical records (rubric § Resolution Cascade).

    An explicit ``session_id`` selects the last record carrying it, even an abandoned one
    (``""`` means no argument). Otherwise one newest-to-oldest scan returns the first record
    that is ``completed``, or that is not ``abandoned``, has ``completed_at`` and shows work
    (``agent_summary.complete > 0`` or a non-null ``effectiveness.completion_rate``); an
    absent ``status`` is not ``abandoned``. Raises :class:`SessionResolutionError`.
    """
    if not records:
        raise SessionResolutionError("no session records found in sessions.jsonl")
    if session_id:
        match = None
        for rec in records:
            if get(rec, "session_id") == session_id:
                match = rec
        if match is None:
            raise SessionResolutionError(f"session not found: {session_id}")
        return match, "explicit"
    for rec in reversed(records):
        status = get(rec, "status")
        if status == "abandoned":
            continue
        if status == "completed":
            return rec, "cascade-completed"
        if not js_truthy(get(rec, "completed_at")):
            continue
        summary = get(rec, "agent_summary")
        complete = get(summary, "complete") if is_plain_object(summary) else 0
        if js_nullish(complete):
            complete = 0
        eff = get(rec, "effectiveness")
        rate = get(eff, "completion_rate") if is_plain_object(eff) else UNDEFINED
        if js_gt0(complete) or not js_nullish(rate):
            return rec, "cascade-fallback"
    raise SessionResolutionError(
        "no completed session found (all records abandoned or without evidence of completed work)"
    )


# -- windows, peers, raw ids -----------------------------------------------------------------


def compute_window(record: Mapping[str, Any]) -> Window | None:
    """``[started_at, completed_at]`` in epoch ms, or ``None`` when either is unparseable."""
    start = timestamp_ms(get(record, "started_at"))
    end = timestamp_ms(get(record, "completed_at"))
    if start is None or end is None:
        return None
    return Window(start, end)


def compute_windows(records: Sequence[Mapping[str, Any]]) -> list[Window | None]:
    """:func:`compute_window` of every record, the timestamps parsed in bulk (same windows).

    A batch's every session: :func:`evalkit.js.timestamps.parse_timestamps` reads the
    writer's own form with numpy and hands anything else to the one-by-one parser.
    """
    starts = parse_timestamps([get(r, "started_at") for r in records])
    ends = parse_timestamps([get(r, "completed_at") for r in records])
    return [
        None if start is None or end is None else Window(start, end)
        for start, end in zip(starts, ends, strict=True)
    ]


def _peer_id(record: Mapping[str, Any]) -> str:
    sid = get(record, "session_id")
    return sid if isinstance(sid, str) else "(unknown)"


def peer_overlaps(
    records: Sequence[Mapping[str, Any]], windows: Sequence[Window | None]
) -> list[tuple[str, ...]]:
    """The peers of every record at once.

    For each record, the ids (in ledger order, each once) of the other records whose windows
    strictly overlap its window; ``()`` for a record without a window.

    ``windows[i]`` is :func:`compute_window` of ``records[i]``. Records carrying the same
    ``session_id`` (rewrites of one session) are never each other's peers. A sweep over the
    windows sorted by start: a window j can overlap a later-starting i (``i.start < j.end and
    j.start < i.end``) only if ``j.end > i.start``, so a window whose end is at or before the
    current start leaves the active heap for good.
    """
    starts = {i: w.start for i, w in enumerate(windows) if w is not None}
    ends = {i: w.end for i, w in enumerate(windows) if w is not None}
    found: list[list[int]] = [[] for _ in records]
    active: list[tuple[float, int]] = []  # (end, index) min-heap
    for i in sorted(starts, key=starts.__getitem__):
        start_i, end_i = starts[i], ends[i]
        while active and active[0][0] <= start_i:
            heapq.heappop(active)
        for end_j, j in active:
            # Window.overlaps, inlined (the sweep's inner loop): strict on both sides
            if start_i < end_j and starts[j] < end_i:
                found[i].append(j)
                found[j].append(i)
        heapq.heappush(active, (end_i, i))
    return [_peer_ids(records, i, sorted(found[i])) for i in range(len(records))]


def peers_at(
    records: Sequence[Mapping[str, Any]], position: int, window: Window | None, arrays: Any
) -> tuple[str, ...]:
    """``peer_overlaps(records, windows)[position]``, for one record, by an array query.

    ``arrays``: ``(positions, starts, ends)`` of every record with a window, positions in
    ledger order (:attr:`evalkit.scoring.measure.LedgerMeasure.window_arrays`). For a few
    records of a large ledger (an incremental run) this costs no sweep over all of them.
    """
    if window is None:
        return ()
    at, starts, ends = arrays
    hits = at[(starts < window.end) & (window.start < ends)].tolist()
    return _peer_ids(records, position, (j for j in hits if j != position))


def _peer_ids(
    records: Sequence[Mapping[str, Any]], position: int, others: Iterable[int]
) -> tuple[str, ...]:
    """The ids of ``others`` (positions in ledger order), each once, but the record's own."""
    own = get(records[position], "session_id")
    ids = (records[j] for j in others)
    return tuple(dict.fromkeys(_peer_id(r) for r in ids if get(r, "session_id") != own))


def find_peer_overlap(
    records: Sequence[Mapping[str, Any]], resolved: Mapping[str, Any]
) -> PeerOverlap:
    """Other sessions whose windows strictly overlap the resolved one's (ledger order).

    Records with the resolved ``session_id`` (rewrites of the same session) and records
    without a window are excluded; a resolved session without a window has no peers.
    :func:`peer_overlaps` for one record (the same computation the batch uses).
    """
    if compute_window(resolved) is None:
        return PeerOverlap()
    everyone = [*records, resolved]
    return PeerOverlap(peer_overlaps(everyone, [compute_window(r) for r in everyone])[-1])


# -- the public entry point ------------------------------------------------------------------


@dataclass(frozen=True)
class Resolution:
    """The resolved session: its id, how it was selected, its record, window and peers.

    ``resolved_via`` is ``"explicit"``, ``"cascade-completed"`` or ``"cascade-fallback"``.
    ``window`` is ``None`` when a boundary is missing or unparseable. ``ignored_supersedes``
    reports the refused ``supersedes`` markers of the canonical reading.
    """

    session_id: str
    resolved_via: ResolvedVia
    record: Mapping[str, Any] = field(repr=False)
    window: Window | None = None
    peer: PeerOverlap = field(default_factory=PeerOverlap)
    ignored_supersedes: tuple[IgnoredSupersede, ...] = ()

    def to_dict(self) -> dict[str, str]:
        """As the conformance vectors write it: ``{"session_id", "resolvedVia"}``."""
        return {"session_id": self.session_id, "resolvedVia": self.resolved_via}


def resolve_from_values(session_values: Iterable[Any], session_id: str | None = None) -> Resolution:
    """Resolve over parsed ``sessions.jsonl`` values (the canonical reading, then the cascade)."""
    canonical = canonical_sessions(session_values)
    record, via = resolve_record(canonical.records, session_id)
    return Resolution(
        session_id=record["session_id"],
        resolved_via=via,
        record=record,
        window=compute_window(record),
        peer=find_peer_overlap(canonical.records, record),  # no window: no peers
        ignored_supersedes=canonical.ignored_supersedes,
    )


def resolve_session(metrics_dir: str | PathLike[str], session_id: str | None = None) -> Resolution:
    """Resolve the session to score in ``metrics_dir`` (explicit id, else the cascade).

    Raises :class:`~evalkit.errors.SessionResolutionError` naming the id when an explicit id
    has no record, or when nothing is eligible.
    """
    return resolve_from_values(read_session_values(metrics_dir), session_id)
