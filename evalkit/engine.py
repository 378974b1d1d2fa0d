"""The scoring engine: one resolved session -> one evaluation record (SPEC section 2).

``score_session`` resolves a session, measures the ledger around it into a frozen
:class:`~evalkit.rubrics.context.ScoringContext` and lets the rubric's pure scorers decide.
``score_ledger`` scores every session of a ledger in one pass: it reads the ledger once, sorts
the events once, finds window membership by binary search and peers by a sweep over sorted
windows, then builds the very same context for each session, so both paths give identical
verdicts (a test checks it on generated ledgers and on every conformance ledger).

Scoring is clock-free: the ``timestamp`` parameter (default: now) only names the run.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import math
import os
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit.dimension import Dimension
from evalkit.errors import EvalkitError, SessionResolutionError, ValidationError
from evalkit.jsnum import js_round, json_number
from evalkit.jsvalues import (
    JS_WHITESPACE,
    UNDEFINED,
    get,
    is_non_empty_trimmed,
    is_number,
    is_plain_object,
    js_sort_key,
    strict_equals_zero,
)
from evalkit.ledger import Diagnostic, Ledger, read_metrics_dir
from evalkit.record import (
    SCHEMA_VERSION,
    STANDARD_VERSION,
    ModelSource,
    make_run_id,
    validate_timestamp,
)
from evalkit.resolve import (
    CanonicalSessions,
    Resolution,
    canonical_sessions,
    compute_window,
    resolve_from_values,
    resolve_raw_session_ids,
    timestamp_ms,
)
from evalkit.rubrics import Rubric, get_rubric
from evalkit.rubrics.dimensions.shared import ledger_gap_note
from evalkit.scoring_context import (
    FullGates,
    GuardCounts,
    Kpis,
    PeerOverlap,
    QualityGates,
    ScoringContext,
    Window,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "MODEL_SOURCES",
    "SAMPLE_METRICS_DIR",
    "STANDARD_VERSION",
    "EvalRecord",
    "Harness",
    "Model",
    "Provenance",
    "build_run_id",
    "read_session_values",
    "score_ledger",
    "score_session",
]

MODEL_SOURCES = tuple(source.value for source in ModelSource)
DEFAULT_MODEL_ID = "unknown"
DEFAULT_MODEL_SOURCE = "self-report"

QUALITY_GATE_EVENTS = frozenset(
    {"orchestrator.quality_gate.passed", "orchestrator.quality_gate.failed"}
)
BLOCKED = "orchestrator.destructive_guard.blocked"
WARNED = "orchestrator.destructive_guard.warned"
LOOP_WARNING = "orchestrator.loop.warning"
_GUARD_EVENTS = (BLOCKED, WARNED, LOOP_WARNING)

_REPO_ROOT = Path(__file__).resolve().parents[1]

#: The small hand-written sample ledger shipped with the package (for the demo).
SAMPLE_METRICS_DIR = Path(__file__).resolve().parent / "data" / "sample"


# -- the ledger as a rubric reads it ---------------------------------------------------------


@dataclass(frozen=True)
class _LedgerView:
    """What one rubric reads of a metrics directory (rubric-v1: the active events file with
    every parseable line; rubric-v2: object lines of the whole rotated history + its gaps)."""

    session_values: tuple[Any, ...]
    events: tuple[Any, ...]
    ledger_note: str


def _view(ledger: Ledger, rubric: Rubric) -> _LedgerView:
    if rubric.event_reading == "active-file":
        return _LedgerView(ledger.sessions.values, ledger.events_v1, "")
    note = ledger_gap_note([g.kind for g in ledger.gaps], ledger.unreadable_event_lines)
    return _LedgerView(ledger.sessions.values, ledger.events_v2, note)


def read_ledger(metrics_dir: str | os.PathLike[str]) -> Ledger:
    """``read_metrics_dir`` for the public entry points: a directory that is not there is a
    resolution error naming it (an absent ``sessions.jsonl`` in an existing one is not).
    """
    if not isinstance(metrics_dir, str | os.PathLike):
        raise EvalkitError(
            f"metrics_dir must be a path (str or os.PathLike), got {type(metrics_dir).__name__}"
        )
    if not os.path.isdir(metrics_dir):
        raise SessionResolutionError(
            f"metrics directory not found: {os.fspath(metrics_dir)!s} "
            "(expected a folder holding sessions.jsonl and events.jsonl)"
        )
    return read_metrics_dir(metrics_dir)


def read_session_values(metrics_dir: str | os.PathLike[str]) -> tuple[Any, ...]:
    """Parsed ``sessions.jsonl`` values of ``metrics_dir`` (before the canonical reading)."""
    return read_ledger(metrics_dir).sessions.values


# -- measuring one session (the one-at-a-time path) ------------------------------------------


def extract_kpis(record: Mapping[str, Any]) -> Kpis:
    """The KPI block: recorded values, ``None`` when absent or not a number.

    ``duration_seconds`` is the recorded field when it is a finite number, else derived from
    the window (``Math.round`` of the seconds between the boundaries, when completed is not
    before started), else ``None``. Drifted names (``duration_minutes``, ``agents``) are not
    read: the reference does not convert them, and a guessed conversion would be a guess.
    """
    recorded = get(record, "duration_seconds")
    duration: float | int | None = None
    source = "unavailable"
    if is_number(recorded) and math.isfinite(recorded):
        duration, source = recorded, "recorded"
    else:
        start = timestamp_ms(get(record, "started_at"))
        end = timestamp_ms(get(record, "completed_at"))
        if start is not None and end is not None and end >= start:
            duration, source = js_round((end - start) / 1000), "derived-from-window"

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


def _scan_context(
    resolution: Resolution, view: _LedgerView, *, attribute_by_id: bool
) -> ScoringContext:
    """Measure the ledger around one session by scanning every event once."""
    window = resolution.window
    gates = failing = full = 0
    last_t: float | None = None
    last_exit: Any = None
    in_window: Counter[str] = Counter()
    for event in view.events:
        if not is_plain_object(event) or window is None:
            continue
        name = get(event, "event")
        is_gate = name in QUALITY_GATE_EVENTS if isinstance(name, str) else False
        if not is_gate and name not in _GUARD_EVENTS:
            continue
        t = timestamp_ms(get(event, "timestamp"))
        if t is None or not window.contains(t):
            continue
        if not is_gate:
            in_window[name] += 1
            continue
        gates += 1
        exit_code = get(event, "exit_code")
        if not strict_equals_zero(exit_code):
            failing += 1
        if get(event, "variant") == "full-gate":
            full += 1
            if last_t is None or t > last_t:  # ties: the earlier event stays last
                last_t, last_exit = t, exit_code
    window_guards = GuardCounts(in_window[BLOCKED], in_window[WARNED], in_window[LOOP_WARNING])

    raw_ids: tuple[str, ...] = ()
    attributed = window_guards
    if attribute_by_id:
        raw_ids = resolve_raw_session_ids(view.events, resolution.record)
        if raw_ids:
            ids = set(raw_ids)
            by_id: Counter[str] = Counter()
            for event in view.events:
                if is_plain_object(event):
                    name = get(event, "event")
                    sid = get(event, "session_id")
                    if name in _GUARD_EVENTS and isinstance(sid, str) and sid in ids:
                        by_id[name] += 1
            attributed = GuardCounts(
                by_id[BLOCKED], by_id[WARNED], by_id[LOOP_WARNING], "session-id"
            )
    return ScoringContext(
        record=resolution.record,
        window=window,
        peer=resolution.peer,
        events_present=len(view.events) > 0,
        quality_gates=QualityGates(gates, failing),
        full_gates=FullGates(full, last_exit if full else None),
        window_guards=window_guards,
        attributed_guards=attributed,
        raw_session_ids=raw_ids,
        kpis=extract_kpis(resolution.record),
        ledger_note=view.ledger_note,
    )


# -- the record ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Provenance:
    rubric_sha256: str
    engine_commit: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"rubric_sha256": self.rubric_sha256, "engine_commit": self.engine_commit}


@dataclass(frozen=True)
class Model:
    id: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "source": self.source}


@dataclass(frozen=True)
class Harness:
    plugin_version: str
    platform: str
    host_class: str | None
    hostname_hash: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "plugin_version": self.plugin_version,
            "platform": self.platform,
            "host_class": self.host_class,
            "hostname_hash": self.hostname_hash,
        }


@dataclass(frozen=True)
class EvalRecord:
    """One evaluation record; :meth:`to_dict` is the record of SPEC section 2.

    ``resolution`` (how the session was selected, its window and peers) and
    ``ledger_diagnostics`` (what the reading of the ledger this rubric reads skipped or
    doubted, file and line) are kept beside the record for callers and reports; they are not
    part of the record itself.
    """

    run_id: str
    session_id: str
    rubric_version: str
    provenance: Provenance
    model: Model
    harness: Harness
    kpis: Kpis
    dimensions: tuple[Dimension, ...]
    timestamp: str
    handle: str | None = None
    resolution: Resolution | None = field(default=None, compare=False, repr=False)
    ledger_diagnostics: tuple[Diagnostic, ...] = field(default=(), compare=False, repr=False)

    @property
    def anonymized(self) -> bool:
        return self.handle is None

    def to_dict(self) -> dict[str, Any]:
        """The full record, JSON-ready (non-finite KPIs and scores written as ``None``)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "record_kind": "session-eval",
            "run_id": self.run_id,
            "session_id": self.session_id,
            "standard_version": STANDARD_VERSION,
            "rubric_version": self.rubric_version,
            "provenance": self.provenance.to_dict(),
            "model": self.model.to_dict(),
            "harness": self.harness.to_dict(),
            "kpis": self.kpis.to_dict(),
            "dimensions": [d.to_dict() for d in self.dimensions],
            "handle": self.handle,
            "anonymized": self.anonymized,
            "timestamp": self.timestamp,
        }


#: ``<session_id>-eval-<timestamp without '-', ':' and '.'>`` (the record module's builder).
build_run_id = make_run_id


def _now_iso() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


@lru_cache(maxsize=1)
def _engine_commit() -> str | None:
    """``git rev-parse HEAD`` of the evalkit checkout, or None (installed copy, no git)."""
    if not (_REPO_ROOT / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=_REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and sha else None


@lru_cache(maxsize=1)
def _hostname_hash() -> str | None:
    """First 16 hex of sha256(hostname): the clear hostname is never stored."""
    name = socket.gethostname()
    if not name:
        return None
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]


def _host_class(events: Iterable[Any], record: Mapping[str, Any]) -> str | None:
    """``host_class`` of the ``session.started`` event stamped exactly at ``started_at``."""
    started = get(record, "started_at")
    if not is_non_empty_trimmed(started):
        return None
    for event in events:
        if (
            is_plain_object(event)
            and get(event, "event") == "orchestrator.session.started"
            and get(event, "timestamp") == started
            and is_non_empty_trimmed(get(event, "host_class"))
        ):
            return event["host_class"]
    return None


def _check_timestamp(timestamp: str | None) -> str:
    return _now_iso() if timestamp is None else validate_timestamp(timestamp)


def _check_model(model_id: str | None, model_source: str | None) -> Model:
    mid = DEFAULT_MODEL_ID if model_id is None else model_id
    if not is_non_empty_trimmed(mid):
        raise ValidationError("model.id: must be a non-empty string")
    source = DEFAULT_MODEL_SOURCE if model_source is None else model_source
    if source not in MODEL_SOURCES:
        raise ValidationError(
            f"model.source: must be one of {', '.join(MODEL_SOURCES)}, got {source!r}"
        )
    return Model(mid.strip(), source)


def _check_session_id(session_id: str) -> None:
    # The reference resolves such a record, then its record validation refuses it.
    if not is_non_empty_trimmed(session_id):
        raise ValidationError(
            f"session_id: must be a non-empty string, not only whitespace (got {session_id!r})"
        )


def _make_record(
    resolution: Resolution,
    dimensions: tuple[Dimension, ...],
    kpis: Kpis,
    rubric: Rubric,
    events: Sequence[Any],
    *,
    timestamp: str,
    model: Model,
    handle: str | None,
    harness: Mapping[str, Any] | None,
    diagnostics: tuple[Diagnostic, ...] = (),
) -> EvalRecord:
    from evalkit import __version__

    over = dict(harness or {})
    return EvalRecord(
        run_id=build_run_id(resolution.session_id, timestamp),
        session_id=resolution.session_id,
        rubric_version=rubric.version,
        provenance=Provenance(rubric.sha256, _engine_commit()),
        model=model,
        harness=Harness(
            plugin_version=over.get("plugin_version", __version__),
            platform=over.get("platform", sys.platform),
            host_class=over.get("host_class", _host_class(events, resolution.record)),
            hostname_hash=over.get("hostname_hash", _hostname_hash()),
        ),
        kpis=kpis,
        dimensions=dimensions,
        timestamp=timestamp,
        handle=handle,
        resolution=resolution,
        ledger_diagnostics=diagnostics,
    )


def score_session(
    metrics_dir: str | os.PathLike[str],
    session_id: str | None = None,
    rubric: str | Rubric = "rubric-v2",
    *,
    timestamp: str | None = None,
    model_id: str | None = None,
    model_source: str | None = None,
    handle: str | None = None,
    harness: Mapping[str, Any] | None = None,
) -> EvalRecord:
    """Score one session of ``metrics_dir`` under ``rubric`` and return its record.

    ``session_id`` selects a session explicitly (``None`` or ``""``: the resolution cascade).
    ``timestamp`` (ISO-8601, default now) names the run: ``run_id`` is built from it, never
    from the clock. ``model_id``/``model_source`` default to ``"unknown"``/``"self-report"``
    (evalkit cannot know which model ran the session unless told). ``harness`` may override
    ``plugin_version``, ``platform``, ``host_class`` or ``hostname_hash`` (defaults: the
    evalkit version, ``sys.platform``, the ``host_class`` of the session's start event,
    the first 16 hex of sha256(hostname)). ``handle`` None means anonymized.

    Raises :class:`~evalkit.errors.SessionResolutionError` when no session resolves,
    :class:`~evalkit.errors.ValidationError` when the resolved id is only whitespace or a
    parameter is invalid, :class:`~evalkit.errors.VersionMismatchError` for an unknown rubric.
    """
    rub = get_rubric(rubric)
    ts = _check_timestamp(timestamp)
    model = _check_model(model_id, model_source)
    ledger = read_ledger(metrics_dir)
    view = _view(ledger, rub)
    resolution = resolve_from_values(view.session_values, session_id)
    _check_session_id(resolution.session_id)
    ctx = _scan_context(resolution, view, attribute_by_id=rub.event_reading == "rotation")
    return _make_record(
        resolution,
        rub.score(ctx),
        ctx.kpis,
        rub,
        view.events,
        timestamp=ts,
        model=model,
        handle=handle,
        harness=harness,
        diagnostics=ledger.diagnostics_read_by(rub.event_reading == "rotation"),
    )


# -- the batch path --------------------------------------------------------------------------


_WS = frozenset(JS_WHITESPACE)
#: kind codes of the event index: 0 = quality gate, then the guard events in order
_KIND_CODE = {
    **dict.fromkeys(QUALITY_GATE_EVENTS, 0),
    **{name: code for code, name in enumerate(_GUARD_EVENTS, start=1)},
}

_ISO_MS = (
    r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z"
)


def parse_timestamps(values: Sequence[Any]) -> list[float | None]:
    """``timestamp_ms`` of many values at once, identical to calling it on each.

    The writer's own form (``toISOString``: ``YYYY-MM-DDTHH:MM:SS.mmmZ``) is parsed in bulk by
    pandas; anything else, and anything pandas refuses (day 31 of a 30-day month, hour 24,
    years out of its range), goes through the JavaScript ``Date.parse`` port one by one.
    """
    import pandas as pd

    out: list[float | None] = [None] * len(values)
    if not values:
        return out
    texts = pd.Series([v if isinstance(v, str) else "" for v in values], dtype=object)
    strict = texts.str.fullmatch(_ISO_MS).to_numpy(dtype=bool)
    if strict.any():
        # pandas' ISO-8601 parser (C); the regex above already pinned the exact shape, so
        # only calendar validity (day 31 of a 30-day month, ...) is left for it to refuse.
        parsed = pd.to_datetime(texts[strict], format="ISO8601", errors="coerce", utc=True)
        ok = parsed.notna().to_numpy()
        ms = parsed.dt.tz_localize(None).to_numpy(dtype="datetime64[ms]").astype(np.int64)
        for pos, good, value in zip(
            np.flatnonzero(strict).tolist(), ok.tolist(), ms.tolist(), strict=True
        ):
            if good:
                out[pos] = float(value)
    for pos, value in enumerate(values):
        if out[pos] is None:
            out[pos] = timestamp_ms(value)
    return out


class _EventIndex:
    """The events of a ledger, sorted once by timestamp, for window queries by bisection."""

    def __init__(self, events: Sequence[Any]) -> None:
        # One pass in Python collects what the windows need; timestamps are then parsed in
        # bulk and each kind is sorted once by (timestamp, ledger position).
        kinds: list[str] = []
        positions: list[int] = []
        stamps: list[Any] = []
        exits: list[Any] = []
        fulls: list[bool] = []
        self.raw_ids: dict[str, set[str]] = {}
        self.by_raw_id: dict[str, Counter[str]] = {name: Counter() for name in _GUARD_EVENTS}
        relevant = QUALITY_GATE_EVENTS | frozenset(_GUARD_EVENTS)
        raw_ids = self.raw_ids
        by_raw_id = self.by_raw_id
        for idx, event in enumerate(events):
            if type(event) is not dict and not isinstance(event, Mapping):
                continue
            name = event.get("event")
            raw = event.get("session_id")
            if isinstance(raw, str) and raw and (raw[0] not in _WS or is_non_empty_trimmed(raw)):
                semantic = event.get("semantic_session_id")
                if isinstance(semantic, str):
                    raw_ids.setdefault(semantic, set()).add(raw)
                raw_ids.setdefault(raw, set()).add(raw)  # route 2: id stamped directly
                if isinstance(name, str) and name in by_raw_id:
                    by_raw_id[name][raw] += 1
            if not isinstance(name, str) or name not in relevant:
                continue
            kinds.append(name)
            positions.append(idx)
            stamps.append(event.get("timestamp", UNDEFINED))
            if name in QUALITY_GATE_EVENTS:
                exits.append(event.get("exit_code", UNDEFINED))
                fulls.append(event.get("variant") == "full-gate")
            else:
                exits.append(None)
                fulls.append(False)
        times = np.array(
            [np.nan if t is None else t for t in parse_timestamps(stamps)], dtype=np.float64
        )
        codes = np.array([_KIND_CODE[k] for k in kinds], dtype=np.int8)
        # sort once by (timestamp, ledger position); events without a parseable timestamp
        # can never fall into a window and are left out
        valid = np.flatnonzero(~np.isnan(times))
        order = valid[np.lexsort((np.asarray(positions, dtype=np.int64)[valid], times[valid]))]
        sorted_codes = codes[order]
        is_gate = sorted_codes == 0
        gate_order = order[is_gate]
        self.gate_times: list[float] = times[gate_order].tolist()
        failing = np.array(
            [not strict_equals_zero(exits[i]) for i in gate_order.tolist()], dtype=np.int64
        )
        self.failing_prefix: list[int] = [0, *np.cumsum(failing).tolist()]
        full_order = [i for i in gate_order.tolist() if fulls[i]]
        self.full_times: list[float] = [float(times[i]) for i in full_order]
        self.full_exit: list[Any] = [exits[i] for i in full_order]
        self.guard_times: dict[str, list[float]] = {
            name: times[order[sorted_codes == code]].tolist()
            for code, name in enumerate(_GUARD_EVENTS, start=1)
        }
        self.events_present = len(events) > 0

    @staticmethod
    def _span(times: list[float], window: Window) -> tuple[int, int]:
        lo = bisect.bisect_left(times, window.start)
        # an inverted window (completed before started) holds no event: an empty span, never
        # a negative count
        return lo, max(lo, bisect.bisect_right(times, window.end))

    def measure(
        self, record: Mapping[str, Any], window: Window | None, *, attribute_by_id: bool
    ) -> tuple[QualityGates, FullGates, GuardCounts, GuardCounts, tuple[str, ...]]:
        if window is None:
            gates, full, window_guards = QualityGates(), FullGates(), GuardCounts()
        else:
            lo, hi = self._span(self.gate_times, window)
            gates = QualityGates(hi - lo, self.failing_prefix[hi] - self.failing_prefix[lo])
            lo, hi = self._span(self.full_times, window)
            if hi > lo:
                # last by timestamp; among equal timestamps the earliest event of the ledger
                first_of_last = bisect.bisect_left(self.full_times, self.full_times[hi - 1], lo, hi)
                full = FullGates(hi - lo, self.full_exit[first_of_last])
            else:
                full = FullGates()
            blocked, warned, loop = (
                (lambda span: span[1] - span[0])(self._span(self.guard_times[n], window))
                for n in _GUARD_EVENTS
            )
            window_guards = GuardCounts(blocked, warned, loop)
        raw_ids: tuple[str, ...] = ()
        attributed = window_guards
        semantic = get(record, "session_id")
        if attribute_by_id and is_non_empty_trimmed(semantic):
            raw_ids = tuple(sorted(self.raw_ids.get(semantic, ()), key=js_sort_key))
            if raw_ids:
                blocked, warned, loop = (
                    sum(self.by_raw_id[n][r] for r in raw_ids) for n in _GUARD_EVENTS
                )
                attributed = GuardCounts(blocked, warned, loop, attribution="session-id")
        return gates, full, window_guards, attributed, raw_ids


def _peers_by_sweep(
    records: Sequence[Mapping[str, Any]], windows: Sequence[Window | None]
) -> list[tuple[str, ...]]:
    """Peer overlap of every record at once: a sweep over windows sorted by start.

    A record j can overlap i (``i.start < j.end and j.start < i.end``) only if ``j.end >
    i.start``; processing windows by ascending start, a window whose end is at or before the
    current start can never overlap a later one and leaves the active heap for good.
    """
    starts = {i: w.start for i, w in enumerate(windows) if w is not None}
    order = sorted(starts, key=starts.__getitem__)
    found: list[list[int]] = [[] for _ in records]
    active: list[tuple[float, int]] = []  # (end, index) min-heap
    for i in order:
        wi = windows[i]
        assert wi is not None
        while active and active[0][0] <= wi.start:
            heapq.heappop(active)
        for _, j in active:
            wj = windows[j]
            assert wj is not None
            if wi.overlaps(wj):
                found[i].append(j)
                found[j].append(i)
        heapq.heappush(active, (wi.end, i))
    peers: list[tuple[str, ...]] = []
    for i, rec in enumerate(records):
        own = rec["session_id"]
        ids = [
            records[j]["session_id"] for j in sorted(found[i]) if records[j]["session_id"] != own
        ]
        peers.append(tuple(dict.fromkeys(ids)))
    return peers


def _batch_contexts(
    canonical: CanonicalSessions, view: _LedgerView, rubric: Rubric
) -> list[tuple[Resolution, ScoringContext]]:
    records = canonical.records
    windows = [compute_window(r) for r in records]
    peers = _peers_by_sweep(records, windows)
    index = _EventIndex(view.events)
    by_id = rubric.event_reading == "rotation"
    out: list[tuple[Resolution, ScoringContext]] = []
    for rec, window, peer_ids in zip(records, windows, peers, strict=True):
        resolution = Resolution(
            session_id=rec["session_id"],
            resolved_via="explicit",
            record=rec,
            window=window,
            peer=PeerOverlap(peer_ids) if window is not None else PeerOverlap(),
            ignored_supersedes=canonical.ignored_supersedes,
        )
        gates, full, window_guards, attributed, raw_ids = index.measure(
            rec, window, attribute_by_id=by_id
        )
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
            kpis=extract_kpis(rec),
            ledger_note=view.ledger_note,
        )
        out.append((resolution, ctx))
    return out


LEDGER_COLUMNS = ("session_id", "dimension", "status", "score", "evidence")


def score_ledger(
    metrics_dir: str | os.PathLike[str], rubric: str | Rubric = "rubric-v2"
) -> pd.DataFrame:
    """Score every session of ``metrics_dir``: one row per deterministic dimension.

    Columns ``session_id, dimension, status, score, evidence``; each session scored exactly as
    ``score_session(metrics_dir, session_id=that_id, rubric=rubric)`` scores it (``score`` is
    ``None`` for dimensions without one). Sessions are the canonical reading's, in ledger
    order; ids that ``score_session`` refuses (only whitespace) have no rows and are listed in
    ``df.attrs["skipped"]``.
    """
    import pandas as pd

    rub = get_rubric(rubric)
    view = _view(read_ledger(metrics_dir), rub)
    canonical = canonical_sessions(view.session_values)
    rows: list[tuple[str, str, str, Any, str]] = []
    skipped: list[str] = []
    for resolution, ctx in _batch_contexts(canonical, view, rub):
        if not is_non_empty_trimmed(resolution.session_id):
            skipped.append(resolution.session_id)
            continue
        for dim in rub.score(ctx):
            score = json_number(dim.score) if dim.has_score else None  # as to_dict writes it
            rows.append((resolution.session_id, dim.id, str(dim.status), score, dim.evidence))
    columns = list(zip(*rows, strict=True)) if rows else [(), (), (), (), ()]
    # object dtype keeps a null score None (not NaN) and an integral score an int
    frame = pd.DataFrame(
        {
            name: pd.Series(values, dtype=object)
            for name, values in zip(LEDGER_COLUMNS, columns, strict=True)
        }
    )
    frame.attrs["skipped"] = skipped
    frame.attrs["rubric_version"] = rub.version
    return frame
