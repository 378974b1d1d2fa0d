"""Measuring sessions: what a ledger says about each session's window, as one index.

The one way evalkit measures a session (issue 14: no second implementation kept equal by
hand): the events are indexed once (:class:`EventIndex`: sorted by timestamp per kind, raw
session ids, session start events), every canonical session gets its window and peers
(:func:`evalkit.resolve.peer_overlaps`), and :class:`LedgerMeasure` turns one session into the
frozen :class:`~evalkit.record.scoring_context.ScoringContext` the rubric's pure scorers read. One
session (``score_session``) and a whole ledger (``score_records``, ``score_ledger``) go through
the same index, so their verdicts are equal by construction.

:func:`inputs_sha256` hashes what a score depends on (the session record and what was measured
for it), so a journal can tell that a session's inputs did not change since it was scored.
"""

from __future__ import annotations

import hashlib
import json
import math
import operator
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import compress, repeat
from typing import Any

import numpy as np

from evalkit.errors import SessionResolutionError
from evalkit.files.input import canonical_bytes, dumps
from evalkit.js.numbers import js_round
from evalkit.js.timestamps import timestamps_array
from evalkit.js.values import (
    JS_WHITESPACE,
    UNDEFINED,
    get,
    is_non_empty_trimmed,
    is_number,
    is_plain_object,
    js_sort_key,
)
from evalkit.ledger.parse import gc_paused
from evalkit.record.scoring_context import (
    FullGates,
    GuardCounts,
    Kpis,
    PeerOverlap,
    QualityGates,
    ScoringContext,
    Window,
)
from evalkit.resolve import (
    CanonicalSessions,
    Resolution,
    ResolvedVia,
    canonical_sessions,
    compute_window,
    compute_windows,
    peer_overlaps,
    peers_at,
    resolve_record,
)

__all__ = [
    "BLOCKED",
    "INPUTS_FORM",
    "LOOP_WARNING",
    "QUALITY_GATE_EVENTS",
    "SESSION_STARTED",
    "WARNED",
    "EventDigest",
    "EventIndex",
    "LedgerMeasure",
    "Measured",
    "extract_kpis",
    "inputs_document",
    "inputs_sha256",
    "raw_session_ids",
]

QUALITY_GATE_EVENTS = frozenset(
    {"orchestrator.quality_gate.passed", "orchestrator.quality_gate.failed"}
)
BLOCKED = "orchestrator.destructive_guard.blocked"
WARNED = "orchestrator.destructive_guard.warned"
LOOP_WARNING = "orchestrator.loop.warning"
SESSION_STARTED = "orchestrator.session.started"
_GUARD_EVENTS = (BLOCKED, WARNED, LOOP_WARNING)
_RELEVANT = QUALITY_GATE_EVENTS | frozenset(_GUARD_EVENTS)
_WS = frozenset(JS_WHITESPACE)
#: kind codes of the event index: 0 = quality gate, then the guard events in order
_KIND_CODE = {
    **dict.fromkeys(QUALITY_GATE_EVENTS, 0),
    **{name: code for code, name in enumerate(_GUARD_EVENTS, start=1)},
}
#: the code of ``session.started`` (read for its host class, never counted in a window)
_STARTED = len(_GUARD_EVENTS) + 1
_CODE_OF = {**_KIND_CODE, SESSION_STARTED: _STARTED}
#: Names the form of :func:`inputs_document`; a new form gets a new name.
INPUTS_FORM = "evalkit-inputs/1"


def extract_kpis(record: Mapping[str, Any]) -> Kpis:
    """The KPI block: recorded values, ``None`` when absent or not a number.

    ``duration_seconds`` is the recorded field when it is a finite number, else derived from
    the window (``Math.round`` of the seconds between the boundaries, when completed is not
    before started), else ``None``. Drifted names (``duration_minutes``, ``agents``) are not
    read: the reference does not convert them, and a guessed conversion would be a guess.
    """
    return _kpis(record, compute_window(record))


def _kpis(record: Mapping[str, Any], window: Window | None) -> Kpis:
    """:func:`extract_kpis` of ``record``, whose window (:func:`compute_window`) is ``window``."""
    recorded = get(record, "duration_seconds")
    duration: float | int | None = None
    source = "unavailable"
    if is_number(recorded) and math.isfinite(recorded):
        duration, source = recorded, "recorded"
    elif window is not None and window.end >= window.start:
        duration, source = js_round((window.end - window.start) / 1000), "derived-from-window"

    def number(value: Any) -> float | int | None:
        return value if is_number(value) else None

    eff = get(record, "effectiveness")
    return Kpis(
        duration_seconds=duration,
        duration_source=source,  # type: ignore[arg-type]
        total_waves=number(get(record, "total_waves")),
        total_agents=number(get(record, "total_agents")),
        token_input=number(get(record, "total_token_input")),
        token_output=number(get(record, "total_token_output")),
        carryover=number(get(eff, "carryover")) if is_plain_object(eff) else None,
    )


class EventDigest:
    """What the event index needs of a reading's events, collected a block at a time.

    A sink of a batch reading (:class:`evalkit.ledger.reader.EventSink`): :meth:`add` takes
    one block of events in ledger order and keeps, per quality gate or guard event, its kind
    code and timestamp (per gate whether ``exit_code === 0`` and whether it is a full gate, per
    full gate its ``exit_code``); the raw session ids (per semantic id, both routes) and the
    guard events per raw id; the host class of the first ``session.started`` event per
    timestamp. The per-event work is done by ``map`` over the block and numpy, not by a Python
    loop, except for the events that carry a raw id. Digests of consecutive parts of a reading
    merge (:meth:`merged`) into the digest of the whole.
    """

    def __init__(self) -> None:
        self.kinds: list[Any] = []  # per block: kind code of each counted event
        self.times: list[Any] = []  # per block: their timestamps (ms; NaN when unparseable)
        self.zero: list[Any] = []  # per block: per gate, exit_code === 0
        self.full: list[Any] = []  # per block: per gate, variant == "full-gate"
        self.full_exits: list[Any] = []  # per full gate: its exit_code (UNDEFINED when absent)
        self.raw_ids: dict[str, set[str]] = {}
        self.by_raw_id: dict[str, Counter[str]] = {name: Counter() for name in _GUARD_EVENTS}
        self._own_ids: set[str] | None = set()  # the keys entered as their own raw id
        self.host_classes: dict[str, str] = {}
        self.seen = 0  # events taken
        # the positions of the counted events that have a timestamp, sorted by (timestamp,
        # position), for the first ``_ordered`` of them (:meth:`time_order`); None: not yet
        self._order: Any = None
        self._ordered = 0
        # the first exit codes as a cursor stored them (count, kinds, ints, the others by
        # position), so that storing the digest again classifies only the ones taken since
        self._stored_exits: tuple[int, Any, Any, dict[str, Any]] | None = None

    def add(self, events: Sequence[Any]) -> None:
        """Take one block of events (any JSON values; only objects count), in ledger order."""
        if not events:
            return
        block: list[dict[str, Any]] = events  # type: ignore[assignment]
        if set(map(type, events)) != {dict}:
            block = [
                e if e.__class__ is dict else dict(e) for e in events if isinstance(e, Mapping)
            ]
        events = block
        n = len(block)
        self.seen += n
        if not n:
            return
        names = list(map(dict.get, block, repeat("event")))
        code_of: Any = _CODE_OF.get
        try:
            code_list: list[int] = list(map(code_of, names, repeat(-1)))
        except TypeError:  # an unhashable event name (an array or an object): no kind
            code_list = [_CODE_OF.get(x, -1) if x.__class__ is str else -1 for x in names]
        codes = np.array(code_list, dtype=np.int8)
        self._add_raw_ids(block, codes)
        for i in np.flatnonzero(codes == _STARTED).tolist():
            stamp, host = events[i].get("timestamp"), events[i].get("host_class")
            if isinstance(stamp, str) and isinstance(host, str) and is_non_empty_trimmed(host):
                self.host_classes.setdefault(stamp, host)  # the first such event wins
        is_counted = (codes >= 0) & (codes != _STARTED)
        if not is_counted.any():
            return
        picked = list(compress(events, is_counted.tolist()))  # by compress, in C
        kinds = codes[is_counted]
        self.kinds.append(kinds)
        self.times.append(
            timestamps_array(list(map(dict.get, picked, repeat("timestamp"), repeat(UNDEFINED))))
        )
        gates = list(compress(picked, (kinds == 0).tolist()))
        exits = list(map(dict.get, gates, repeat("exit_code"), repeat(UNDEFINED)))
        # strict_equals_zero, vectorized: a number equal to 0, never false (a bool is an int)
        equal = np.fromiter(map(operator.eq, exits, repeat(0)), bool, len(exits))
        boolean = np.fromiter(map(isinstance, exits, repeat(bool)), bool, len(exits))
        self.zero.append(equal & ~boolean)
        variants = map(dict.get, gates, repeat("variant"))
        full = np.fromiter(map(operator.eq, variants, repeat("full-gate")), bool, len(gates))
        self.full.append(full)
        self.full_exits.extend(compress(exits, full.tolist()))

    def _add_raw_ids(self, events: list[dict[str, Any]], codes: Any) -> None:
        """Raw session ids (route 2, stamped directly; route 1, beside a semantic id).

        A block names each of a few thousand ids many times: an id is checked, and entered
        as its own raw id, once per block and once per digest, not once per event.
        """
        sids = list(map(dict.get, events, repeat("session_id")))
        is_str = np.fromiter(map(isinstance, sids, repeat(str)), bool, len(sids))
        at = np.flatnonzero(is_str)
        named_at = is_str.tolist()
        # picked by compress, in C (a list comprehension per event costs a share here)
        raws: list[str] = list(compress(sids, named_at))  # type: ignore[arg-type]
        kept = list(compress(events, named_at))  # the events of raws, in order
        distinct = set(raws)
        ws = _WS
        # is_non_empty_trimmed, inlined: a first character that is not whitespace needs no trim
        bad = {r for r in distinct if not r or (r[0] in ws and not is_non_empty_trimmed(r))}
        if bad:
            ok = [r not in bad for r in raws]
            at, raws = at[np.array(ok, dtype=bool)], list(compress(raws, ok))
            kept = list(compress(kept, ok))
            distinct -= bad
        raw_ids = self.raw_ids
        if self._own_ids is None:  # a merged or stored digest: the ids entered so far
            self._own_ids = {key for key, known in raw_ids.items() if key in known}
        new = distinct - self._own_ids
        for raw in new:
            raw_ids.setdefault(raw, set()).add(raw)
        self._own_ids |= new
        semantic: list[Any] = list(map(dict.get, kept, repeat("semantic_session_id")))
        named = np.fromiter(map(isinstance, semantic, repeat(str)), bool, len(semantic)).tolist()
        for sem, raw in zip(compress(semantic, named), compress(raws, named), strict=True):
            raw_ids.setdefault(sem, set()).add(raw)
        raw_codes = codes[at]
        for code, name in enumerate(_GUARD_EVENTS, start=1):
            hit = raw_codes == code
            if hit.any():  # Counter.update counts an iterator in C
                self.by_raw_id[name].update(compress(raws, hit.tolist()))

    def time_order(self) -> tuple[Any, Any]:
        """The counted events' timestamps (ledger order) and their positions by timestamp.

        The positions of the events with a timestamp, sorted by (timestamp, position): a
        stable sort keeps equal timestamps in ledger order. Computed once; events taken
        since (a rerun's tail after a cursor's digest) are merged in, not sorted again with
        the rest: every earlier event precedes them in the ledger, so among equal timestamps
        they go after the earlier ones.
        """
        times = self._consolidated()
        if self._order is None:
            valid = np.flatnonzero(~np.isnan(times))
            self._order = _positions(valid[np.argsort(times[valid], kind="stable")], len(times))
        elif self._ordered < len(times):
            tail = np.arange(self._ordered, len(times))
            tail = tail[~np.isnan(times[tail])]
            tail = tail[np.argsort(times[tail], kind="stable")]
            at = np.searchsorted(times[self._order], times[tail], side="right")
            self._order = np.insert(_positions(self._order, len(times)), at, tail)
        self._ordered = len(times)
        return times, self._order

    def _consolidated(self) -> Any:
        """The per-block arrays joined into one block each (the same digest); the timestamps."""
        for name, dtype in _BLOCKS:
            parts = getattr(self, name)
            if len(parts) != 1:
                setattr(self, name, [_joined(parts, dtype)])
        return self.times[0]

    @classmethod
    def merged(cls, digests: Sequence[EventDigest]) -> EventDigest:
        """The digest of consecutive parts of a reading, ``digests`` in ledger order."""
        if len(digests) == 1:
            return digests[0]
        out = cls()
        out._own_ids = None  # raw ids entered by the parts: found again if a block is added
        if digests and digests[0]._order is not None:  # the first part's order goes on
            out._order, out._ordered = digests[0]._order, digests[0]._ordered
        if digests:  # and so do its stored exit codes
            out._stored_exits = digests[0]._stored_exits
        for d in digests:
            out.kinds += d.kinds
            out.times += d.times
            out.zero += d.zero
            out.full += d.full
            out.full_exits += d.full_exits
            for key, raws in d.raw_ids.items():
                out.raw_ids.setdefault(key, set()).update(raws)
            for name, counts in d.by_raw_id.items():
                out.by_raw_id[name].update(counts)
            for stamp, host in d.host_classes.items():
                out.host_classes.setdefault(stamp, host)
            out.seen += d.seen
        return out

    def to_state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The digest as numpy arrays and JSON-simple values (:meth:`from_state` reads them).

        What a journal's cursor stores (:mod:`evalkit.journal.cursor`), so a rerun need not
        parse the events again. The full gates' exit codes are two arrays (each one's kind:
        absent, an int64, anything else; its int64 value) and, for the others, JSON text by
        position.
        """
        times, order = self.time_order()
        exit_arrays, others = _stored_exits(self.full_exits, self._stored_exits)
        arrays = {
            "kinds": self.kinds[0],
            "times": times,
            "zero": self.zero[0],
            "full": self.full[0],
            "order": order,
            **exit_arrays,
        }
        meta = {
            "full_exits": others,
            "raw_ids": {key: sorted(raws) for key, raws in self.raw_ids.items()},
            "by_raw_id": {name: dict(counts) for name, counts in self.by_raw_id.items()},
            "host_classes": self.host_classes,
            "seen": self.seen,
        }
        return arrays, meta

    @classmethod
    def from_state(cls, arrays: Mapping[str, Any], meta: Mapping[str, Any]) -> EventDigest:
        """The digest :meth:`to_state` wrote."""
        out = cls()
        out._own_ids = None  # raw ids of the stored digest: found again if a block is added
        for name, _ in _BLOCKS:
            if len(arrays[name]):
                getattr(out, name).append(arrays[name])
        order = arrays.get("order")  # absent from an older cursor: sorted again when needed
        n = len(arrays["times"])
        if (
            order is not None
            and order.dtype in _ORDER_DTYPES
            and (not len(order) or order.max() < n)
        ):
            out._order, out._ordered = order, n
        exits: list[Any] = arrays["exit_ints"].tolist()
        for i in np.flatnonzero(arrays["exit_kinds"] == _ABSENT).tolist():
            exits[i] = UNDEFINED
        others = json.loads(meta["full_exits"])
        for i, value in others.items():
            exits[int(i)] = value
        out.full_exits = exits
        out._stored_exits = (len(exits), arrays["exit_kinds"], arrays["exit_ints"], others)
        out.raw_ids = {key: set(raws) for key, raws in meta["raw_ids"].items()}
        for name, counts in meta["by_raw_id"].items():
            out.by_raw_id[name] = Counter(counts)
        out.host_classes = dict(meta["host_classes"])
        out.seen = int(meta["seen"])
        return out


#: The dtypes of stored positions (:func:`_positions`).
_ORDER_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _positions(order: Any, n: int) -> Any:
    """``order`` (positions among ``n`` events) as int32 when every position fits.

    Half the memory of int64 for the sort order a cursor stores and every gather reads.
    """
    dtype = np.int32 if n < 2**31 else np.int64
    return order if order.dtype == dtype else order.astype(dtype)


#: The per-block arrays of a digest and their types.
_BLOCKS = (("kinds", np.int8), ("times", np.float64), ("zero", bool), ("full", bool))
#: How a full gate's exit code is stored in a cursor: absent, an int64, anything else (JSON).
_ABSENT, _INT, _OTHER = 0, 1, 2


def _exit_kind(value: Any) -> int:
    if value is UNDEFINED:
        return _ABSENT
    if value.__class__ is int and -(2**63) <= value < 2**63:
        return _INT
    return _OTHER


def _stored_exits(
    exits: list[Any], stored: tuple[int, Any, Any, dict[str, Any]] | None = None
) -> tuple[dict[str, Any], str]:
    """The exit codes as stored (:meth:`EventDigest.to_state`): the arrays, the others' JSON.

    ``stored``: the first ones as a cursor stored them (:meth:`EventDigest.from_state`), so
    that only the codes after them are classified.
    """
    start, before, others = 0, None, {}
    if stored is not None and stored[0] <= len(exits):
        start, kinds_at, ints_at, stored_others = stored
        before, others = (kinds_at, ints_at), dict(stored_others)
    tail = exits[start:]
    kinds = [_exit_kind(x) for x in tail]
    new_kinds = np.array(kinds, dtype=np.int8)
    new_ints = np.array(
        [x if k == _INT else 0 for x, k in zip(tail, kinds, strict=True)], dtype=np.int64
    )
    arrays = {
        "exit_kinds": new_kinds if before is None else np.concatenate([before[0], new_kinds]),
        "exit_ints": new_ints if before is None else np.concatenate([before[1], new_ints]),
    }
    others.update(
        {str(start + i): x for i, (x, k) in enumerate(zip(tail, kinds, strict=True)) if k == _OTHER}
    )
    return arrays, dumps(others, allow_nan=True)


def _spans(times: Any, starts: Any, ends: Any) -> tuple[Any, Any]:
    """Each window's ``[lo, hi)`` in the sorted ``times``; empty for an inverted window."""
    lo = np.searchsorted(times, starts, "left")
    return lo, np.maximum(lo, np.searchsorted(times, ends, "right"))


def _joined(parts: list[Any], dtype: Any) -> Any:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


class EventIndex:
    """The events of a ledger, sorted once by timestamp, for window queries by bisection.

    Quality gates and guard events are sorted per kind by (timestamp, ledger position);
    events without a parseable timestamp never fall into a window and are left out. Guard
    events are also counted per raw session id, raw ids are mapped to the semantic ids that
    claim them, and the first ``session.started`` event per timestamp keeps its host class.
    Built from the events themselves or (:meth:`from_digest`) from a batch reading's digest.
    """

    def __init__(self, events: Sequence[Any]) -> None:
        digest = EventDigest()
        with gc_paused():
            digest.add(events)
        self._build(digest, len(events) > 0)

    @classmethod
    def from_digest(cls, digest: EventDigest, events_present: bool) -> EventIndex:
        """The index of the events ``digest`` took (``events_present``: were there any)."""
        index = cls.__new__(cls)
        index._build(digest, events_present)
        return index

    def _build(self, digest: EventDigest, events_present: bool) -> None:
        self.events_present = events_present
        self.raw_ids = digest.raw_ids
        self.by_raw_id = digest.by_raw_id
        self.host_classes = digest.host_classes
        self._index_windows(digest)

    def _index_windows(self, digest: EventDigest) -> None:
        """Quality gates and guard events by kind, sorted by (timestamp, ledger position).

        Kept as arrays, never one Python list per kind: a rerun asks for a few windows
        (``searchsorted`` each), a batch for all of them at once (:meth:`in_windows`).
        """
        times, order = digest.time_order()
        kinds, zero, full = digest.kinds[0], digest.zero[0], digest.full[0]
        sorted_kinds = kinds[order]
        # the gate number of each gate in ledger order (an explicit dtype: numpy's default
        # accumulation of a bool array takes a slow casting loop)
        gate_of = np.cumsum(kinds == 0, dtype=np.int64) - 1
        gate_order = order[sorted_kinds == 0]
        by_time = gate_of[gate_order]  # gate numbers in time order
        self._gate_times = times[gate_order]
        self._failing_prefix = np.concatenate(
            [np.zeros(1, dtype=np.int64), np.cumsum(~zero[by_time], dtype=np.int64)]
        )
        is_full = full[by_time]
        self._full_times = times[gate_order[is_full]]
        full_of = np.cumsum(full, dtype=np.int64) - 1  # the full-gate number of each gate
        self._full_exit_at = full_of[by_time[is_full]]  # positions in digest.full_exits
        self._exits = digest.full_exits
        self._guard_times = [
            times[order[sorted_kinds == code]] for code, _ in enumerate(_GUARD_EVENTS, start=1)
        ]

    @property
    def gate_times(self) -> list[float]:
        """The quality gates' timestamps, sorted (a list, made on each call)."""
        return self._gate_times.tolist()

    @property
    def failing_prefix(self) -> list[int]:
        """How many of the first ``k`` gates (by time) failed, for ``k = 0 .. len``."""
        return self._failing_prefix.tolist()

    @property
    def full_times(self) -> list[float]:
        """The full gates' timestamps, sorted."""
        return self._full_times.tolist()

    @property
    def full_exit(self) -> list[Any]:
        """The full gates' ``exit_code`` values, in the order of :attr:`full_times`."""
        return [self._exits[i] for i in self._full_exit_at.tolist()]

    @property
    def guard_times(self) -> dict[str, list[float]]:
        """Each guard event's timestamps, sorted, by event name."""
        return {n: t.tolist() for n, t in zip(_GUARD_EVENTS, self._guard_times, strict=True)}

    def in_window(self, window: Window | None) -> tuple[QualityGates, FullGates, GuardCounts]:
        """Quality gates, full gates and guard events inside ``window`` (none without one)."""
        if window is None:
            return QualityGates(), FullGates(), GuardCounts()
        return self.in_windows(np.array([window.start]), np.array([window.end]))[0]

    def in_windows(
        self, starts: Any, ends: Any
    ) -> list[tuple[QualityGates, FullGates, GuardCounts]]:
        """:meth:`in_window` of each window ``[starts[i], ends[i]]`` (float64 arrays), at once.

        An event is inside when ``start <= t <= end``; an inverted window (completed before
        started) holds none, never a negative count. The last full gate is the last by
        timestamp, among equal timestamps the earliest event of the ledger.
        """
        lo, hi = _spans(self._gate_times, starts, ends)
        prefix = self._failing_prefix
        gates = zip((hi - lo).tolist(), (prefix[hi] - prefix[lo]).tolist(), strict=True)
        flo, fhi = _spans(self._full_times, starts, ends)
        counts = (fhi - flo).tolist()
        last: list[Any] = [None] * len(counts)
        if len(self._full_times):
            at = np.maximum(fhi - 1, 0)
            first_of_last = np.searchsorted(self._full_times, self._full_times[at], "left")
            exit_at = self._full_exit_at[first_of_last].tolist()
            last = [self._exits[i] if n else None for i, n in zip(exit_at, counts, strict=True)]
        guards = zip(
            *((b - a).tolist() for a, b in (_spans(t, starts, ends) for t in self._guard_times)),
            strict=True,
        )
        return [
            (
                QualityGates(n, failing),
                FullGates(count, exit_code) if count else FullGates(),
                GuardCounts(blocked, warned, loop),
            )
            for (n, failing), count, exit_code, (blocked, warned, loop) in zip(
                gates, counts, last, guards, strict=True
            )
        ]

    def raw_ids_of(self, record: Mapping[str, Any]) -> tuple[str, ...]:
        """Raw harness ids tied to the record's (semantic) ``session_id``, sorted as JS sorts.

        Route 1, an event carrying ``session_id`` (raw) beside ``semantic_session_id`` equal
        to the record's id; route 2, the record's id stamped directly as an event's
        ``session_id``. Empty when nothing ties them.
        """
        semantic = get(record, "session_id")
        if not is_non_empty_trimmed(semantic):
            return ()
        return tuple(sorted(self.raw_ids.get(semantic, ()), key=js_sort_key))

    def attributed(self, raw_ids: Sequence[str]) -> GuardCounts:
        """Guard events carrying one of ``raw_ids`` as their ``session_id``."""
        blocked, warned, loop = (sum(self.by_raw_id[n][r] for r in raw_ids) for n in _GUARD_EVENTS)
        return GuardCounts(blocked, warned, loop, attribution="session-id")

    def host_class(self, record: Mapping[str, Any]) -> str | None:
        """The host class of the session's start event, else ``None``.

        ``host_class`` of the first ``session.started`` event stamped exactly at the record's
        ``started_at`` (a non-empty string).
        """
        started = get(record, "started_at")
        if not is_non_empty_trimmed(started):
            return None
        return self.host_classes.get(started)


def raw_session_ids(events: Sequence[Any], record: Mapping[str, Any]) -> tuple[str, ...]:
    """Raw harness ids tied to ``record`` by ``events`` (:meth:`EventIndex.raw_ids_of`)."""
    return EventIndex(events).raw_ids_of(record)


@dataclass(frozen=True)
class Measured:
    """One session measured, ready to score.

    How it resolved, the scorers' context, the host class of its start event (a record field
    that the scorers do not read) and the hash of its inputs (computed when first asked: a
    table of verdicts never needs it).
    """

    resolution: Resolution
    context: ScoringContext
    host_class: str | None

    @cached_property
    def inputs_sha256(self) -> str:
        """:func:`inputs_sha256` of this session's context and host class."""
        return inputs_sha256(self.context, self.host_class)


class LedgerMeasure:
    """The canonical sessions of one rubric's reading of a ledger, measured on demand.

    ``session_values`` and ``events`` are what the rubric reads (:meth:`evalkit.ledger.reader.Ledger.
    view`); ``attribute_by_id`` is rubric-v2's guard attribution by raw session id;
    ``ledger_note`` the rubric's note on an incomplete read. A batch reading passes its
    ``event_digests`` (one per source, in reading order) and ``events_present`` instead of the
    events. Windows, peers and the event index are built once, the first time a session is
    measured.
    """

    def __init__(
        self,
        session_values: Sequence[Any],
        events: Sequence[Any],
        *,
        attribute_by_id: bool,
        ledger_note: str = "",
        event_digests: Sequence[EventDigest] = (),
        events_present: bool | None = None,
    ) -> None:
        self.canonical: CanonicalSessions = canonical_sessions(session_values)
        self._events = events
        self._digests = tuple(event_digests)
        self._events_present = events_present
        self._attribute_by_id = attribute_by_id
        self._ledger_note = ledger_note
        self._peer_asks = 0  # sessions whose peers were found by array query
        self._window_asks = 0  # sessions whose window was asked for alone

    @property
    def records(self) -> tuple[Mapping[str, Any], ...]:
        """The canonical session records, in ledger order."""
        return self.canonical.records

    @property
    def windows(self) -> list[Window | None]:
        """Each canonical session's window (None: it has none), in ledger order."""
        return self._windows

    @property
    def index(self) -> EventIndex:
        """The event index every session is measured through."""
        return self._index

    @property
    def events_present(self) -> bool:
        """Whether the reading holds any event (without building the index)."""
        if "_index" in self.__dict__ or not self._digests:
            return self._index.events_present
        return bool(self._events_present)

    @property
    def raw_ids(self) -> Mapping[str, set[str]]:
        """Raw session ids per semantic id (:meth:`EventIndex.raw_ids_of`), index or not."""
        if "_index" in self.__dict__ or not self._digests:
            return self._index.raw_ids
        return EventDigest.merged(self._digests).raw_ids

    @property
    def ledger_note(self) -> str:
        """The rubric's note on an incomplete reading ("" when complete or not rotation)."""
        return self._ledger_note

    @cached_property
    def _windows(self) -> list[Window | None]:
        return compute_windows(self.records)

    @cached_property
    def window_arrays(self) -> tuple[Any, Any, Any]:
        """The positions with a window (ledger order), and their starts and ends, as arrays."""
        held = [(i, w) for i, w in enumerate(self._windows) if w is not None]
        return (
            np.array([i for i, _ in held], dtype=np.int64),
            np.array([w.start for _, w in held], dtype=np.float64),
            np.array([w.end for _, w in held], dtype=np.float64),
        )

    @cached_property
    def _peers(self) -> list[tuple[str, ...]]:
        return peer_overlaps(self.records, self._windows)

    def _peers_at(self, position: int) -> tuple[str, ...]:
        """The peers of one session: by array query while few are asked, then all by a sweep.

        An incremental run measures a few sessions of a large ledger; a full run soon passes
        the threshold and pays the one sweep. Either way the peers are those of
        :func:`evalkit.resolve.peer_overlaps`.
        """
        if "_peers" not in self.__dict__:
            self._peer_asks += 1
            if self._peer_asks <= max(1, len(self.records) // 16):
                window = self._windows[position]
                return peers_at(self.records, position, window, self.window_arrays)
        return self._peers[position]

    def _in_window(
        self, position: int, window: Window | None
    ) -> tuple[QualityGates, FullGates, GuardCounts]:
        """The events in one session's window: one by one while few are asked, then all.

        As :meth:`_peers_at`: a rerun measures a few sessions; a full run soon asks for all
        windows at once (:meth:`EventIndex.in_windows`, one ``searchsorted`` per kind).
        """
        if window is None:
            return QualityGates(), FullGates(), GuardCounts()
        if "_window_counts" not in self.__dict__:
            self._window_asks += 1
            if self._window_asks <= max(1, len(self.records) // 16):
                return self._index.in_window(window)
        return self._window_counts[position]  # every position with a window is counted

    @cached_property
    def _window_counts(self) -> dict[int, tuple[QualityGates, FullGates, GuardCounts]]:
        positions, starts, ends = self.window_arrays
        return dict(zip(positions.tolist(), self._index.in_windows(starts, ends), strict=True))

    @cached_property
    def _index(self) -> EventIndex:
        if not self._digests:
            return EventIndex(self._events)
        with gc_paused():
            present = bool(self._events_present)
            return EventIndex.from_digest(EventDigest.merged(self._digests), present)

    @cached_property
    def _position(self) -> dict[int, int]:
        return {id(rec): i for i, rec in enumerate(self.records)}

    @cached_property
    def _by_session_id(self) -> dict[str, int]:
        return {rec["session_id"]: i for i, rec in enumerate(self.records)}

    def resolve(self, session_id: str | None = None) -> Measured:
        """The session ``session_id`` selects, measured.

        ``None`` or ``""`` selects by the resolution cascade. Raises
        :class:`~evalkit.errors.SessionResolutionError` as
        :func:`evalkit.resolve.resolve_record` does.
        """
        if session_id and self.records:
            # resolve_record's explicit branch, by lookup: canonical ids are unique, so "the
            # last record carrying it" is the one (a journal verified whole asks 5,000 times)
            position = self._by_session_id.get(session_id)
            if position is None:
                raise SessionResolutionError(f"session not found: {session_id}")
            return self.measure(position, "explicit")
        record, via = resolve_record(self.records, session_id)
        return self.measure(self._position[id(record)], via)

    def measure_all(self) -> Iterator[Measured]:
        """Every canonical session, in ledger order, as selected by its id."""
        for position in range(len(self.records)):
            yield self.measure(position)

    def measure(self, position: int, via: ResolvedVia = "explicit") -> Measured:
        """The canonical session at ``position``."""
        rec = self.records[position]
        window = self._windows[position]
        index = self._index
        resolution = Resolution(
            session_id=rec["session_id"],
            resolved_via=via,
            record=rec,
            window=window,
            peer=PeerOverlap(self._peers_at(position)),
            ignored_supersedes=self.canonical.ignored_supersedes,
        )
        gates, full, window_guards = self._in_window(position, window)
        raw_ids: tuple[str, ...] = ()
        attributed = window_guards
        if self._attribute_by_id:
            raw_ids = index.raw_ids_of(rec)
            if raw_ids:
                attributed = index.attributed(raw_ids)
        ctx = ScoringContext(
            record=rec,
            window=window,
            peer=resolution.peer,
            events_present=index.events_present,
            quality_gates=gates,
            full_gates=full,
            window_guards=window_guards,
            attributed_guards=attributed,
            raw_session_ids=raw_ids,
            kpis=_kpis(rec, window),
            ledger_note=self._ledger_note,
        )
        return Measured(resolution, ctx, index.host_class(rec))


def _guards(counts: GuardCounts) -> list[Any]:
    return [counts.blocked, counts.warned, counts.loop_warning, counts.attribution]


def inputs_document(ctx: ScoringContext, host_class: str | None) -> dict[str, Any]:
    """Everything a record's deterministic content depends on, as one JSON document.

    The session record as read, and what the engine measured for it from the events and the
    other sessions: the window, the peers, whether the ledger holds events, the quality gates
    (count, failing), the full gates (count and the last one's ``exit_code``, left out when
    that event has no such key), the guard events in the window and as attributed (counts
    and how), the raw session ids, the rubric's note on an incomplete read and the host class
    of the session's start event. The scorers are pure functions of this content (the
    :class:`~evalkit.record.scoring_context.ScoringContext`), so equal documents give equal records.
    """
    full: dict[str, Any] = {"count": ctx.full_gates.count}
    if ctx.full_gates.last_exit_code is not UNDEFINED:
        full["last_exit_code"] = ctx.full_gates.last_exit_code
    return {
        "form": INPUTS_FORM,
        "session": dict(ctx.record),
        "window": None if ctx.window is None else [ctx.window.start, ctx.window.end],
        "peers": list(ctx.peer.peers),
        "events_present": ctx.events_present,
        "quality_gates": [ctx.quality_gates.count, ctx.quality_gates.failing],
        "full_gates": full,
        "window_guards": _guards(ctx.window_guards),
        "attributed_guards": _guards(ctx.attributed_guards),
        "raw_session_ids": list(ctx.raw_session_ids),
        "ledger_note": ctx.ledger_note,
        "host_class": host_class,
    }


def inputs_sha256(ctx: ScoringContext, host_class: str | None) -> str:
    r"""sha256 (hex) of :func:`inputs_document` in canonical form.

    Keys sorted, compact separators (``,`` and ``:``), UTF-8, lone surrogates escaped as
    ``\udXXX`` and a number beyond double range (read from ``1e400``) written ``Infinity``.
    """
    body = canonical_bytes(inputs_document(ctx, host_class), allow_nan=True)
    return hashlib.sha256(body).hexdigest()
