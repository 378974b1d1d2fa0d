"""The event index, built column-wise in bulk, equals the plain reading, one event at a time.

``evalkit.scoring.measure.EventIndex`` collects the events in one tight pass, parses the timestamps in
bulk and sorts with numpy. ``_reference`` below reads the same events the obvious way (every
event on its own, ``timestamp_ms`` per event, Python's ``sorted`` by (time, ledger position)):
both must give the same index, value for value and type for type, on generated ledgers, on
every conformance ledger (both rubrics' readings) and on generated event lists full of odd
values (non-objects, names and ids that are arrays, numbers, whitespace).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import conformance_cases, require_shared
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.js.timestamps import timestamp_ms
from evalkit.js.values import UNDEFINED, is_non_empty_trimmed, is_number, strict_equals_zero
from evalkit.ledger.reader import read_metrics_dir
from evalkit.record.scoring_context import Window
from evalkit.scoring.measure import (
    BLOCKED,
    LOOP_WARNING,
    QUALITY_GATE_EVENTS,
    SESSION_STARTED,
    WARNED,
    EventDigest,
    EventIndex,
)
from evalkit.simulate.hostile_ledgers import generate_ledger

GUARDS = (BLOCKED, WARNED, LOOP_WARNING)


def _reference(events: Sequence[Any]) -> dict[str, Any]:
    """The index read one event at a time (the semantics EventIndex documents)."""
    raw_ids: dict[str, set[str]] = {}
    by_raw_id: dict[str, Counter[str]] = {name: Counter() for name in GUARDS}
    host_classes: dict[str, str] = {}
    gates: list[tuple[float, int, Any, bool]] = []
    guards: dict[str, list[tuple[float, int]]] = {name: [] for name in GUARDS}
    for position, event in enumerate(events):
        if not isinstance(event, Mapping):
            continue
        name = event.get("event")
        raw = event.get("session_id")
        if is_non_empty_trimmed(raw):
            semantic = event.get("semantic_session_id")
            if isinstance(semantic, str):
                raw_ids.setdefault(semantic, set()).add(raw)
            raw_ids.setdefault(raw, set()).add(raw)
            if name in GUARDS:
                by_raw_id[name][raw] += 1
        if not isinstance(name, str):
            continue
        if name == SESSION_STARTED:
            stamp, host = event.get("timestamp"), event.get("host_class")
            if isinstance(stamp, str) and is_non_empty_trimmed(host):
                host_classes.setdefault(stamp, host)
        t = timestamp_ms(event.get("timestamp", UNDEFINED))
        if t is None:
            continue
        if name in QUALITY_GATE_EVENTS:
            exit_code = event.get("exit_code", UNDEFINED)
            gates.append((t, position, exit_code, event.get("variant") == "full-gate"))
        elif name in guards:
            guards[name].append((t, position))
    gates.sort(key=lambda g: (g[0], g[1]))
    failing = [0]
    for _, _, exit_code, _ in gates:
        failing.append(failing[-1] + (not strict_equals_zero(exit_code)))
    fulls = [g for g in gates if g[3]]
    return {
        "events_present": len(events) > 0,
        "raw_ids": raw_ids,
        "by_raw_id": {name: dict(+counts) for name, counts in by_raw_id.items()},
        "host_classes": host_classes,
        "gate_times": [g[0] for g in gates],
        "failing_prefix": failing,
        "full_times": [g[0] for g in fulls],
        "full_exit": [_typed(g[2]) for g in fulls],
        "guard_times": {name: [t for t, _ in sorted(found)] for name, found in guards.items()},
    }


def _typed(value: Any) -> tuple[str, str]:
    return (type(value).__name__, repr(value))


def _built(events: Sequence[Any], index: EventIndex | None = None) -> dict[str, Any]:
    index = EventIndex(events) if index is None else index
    return {
        "events_present": index.events_present,
        "raw_ids": index.raw_ids,
        "by_raw_id": {name: dict(+counts) for name, counts in index.by_raw_id.items()},
        "host_classes": index.host_classes,
        "gate_times": index.gate_times,
        "failing_prefix": index.failing_prefix,
        "full_times": index.full_times,
        "full_exit": [_typed(v) for v in index.full_exit],
        "guard_times": index.guard_times,
    }


def _assert_same_index(events: Sequence[Any], index: EventIndex | None = None) -> None:
    built, expected = _built(events, index), _reference(events)
    for key, value in expected.items():
        assert built[key] == value, key
    # floats stay floats and counts ints: the evidence prints them
    assert all(t.__class__ is float for t in built["gate_times"] + built["full_times"])
    assert all(n.__class__ is int for n in built["failing_prefix"])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_ledgers(tmp_path: Path, seed: int) -> None:
    metrics = tmp_path / "m"
    generate_ledger(metrics, n_sessions=150, n_events=6000, seed=seed)
    ledger = read_metrics_dir(metrics)
    _assert_same_index(ledger.events_v2)
    _assert_same_index(ledger.events_v1)


@pytest.mark.parametrize("case", conformance_cases())
def test_conformance_ledgers(case: str) -> None:
    ledger = read_metrics_dir(require_shared("conformance", *case.split("/")))
    _assert_same_index(ledger.events_v2)
    _assert_same_index(ledger.events_v1)


_STAMPS = (
    st.sampled_from(
        [
            "2026-09-19T08:00:00.000Z",
            "2026-09-19T08:00:00.000Z",
            "2026-09-19T07:59:59.999Z",
            "2026-09-19T08:00:00+01:00",
            "2026-09-19 08:00:00Z",
            "2026-13-19T08:00:00.000Z",
            "2026-09-19T08:00:00.000Ž",
            "not a timestamp",
            "",
        ]
    )
    | st.just(["2026-09-19"])
    | st.none()
    | st.integers(0, 2)
    | st.just(UNDEFINED)
)
_NAMES = (
    st.sampled_from(
        [*sorted(QUALITY_GATE_EVENTS), *GUARDS, SESSION_STARTED, "orchestrator.wave.completed"]
    )
    | st.none()
    | st.just(["orchestrator.loop.warning"])
    | st.just({"a": 1})
    | st.integers(0, 1)
)
_IDS = st.sampled_from(["r1", "r2", " r1", "  ", "", "s1", "\u00a0"]) | st.none() | st.just(["r1"])
_VALUES = st.none() | st.booleans() | st.integers(-1, 2) | st.sampled_from([0.5, "0", "full-gate"])


_KINDS = st.integers(0, 9)
_NOT_OBJECTS = st.sampled_from([[1, 2], "text", 3, None, True])
# built once, not per drawn event: a strategy built anew is validated anew on every draw
_FIELDS = (
    ("event", _NAMES),
    ("timestamp", _STAMPS),
    ("session_id", _IDS),
    ("semantic_session_id", _IDS),
    ("exit_code", _VALUES),
    ("variant", st.sampled_from(["full-gate", "baseline"]) | _VALUES),
    ("host_class", st.sampled_from(["laptop", " ", ""]) | _VALUES),
)
_PRESENT = st.booleans()


@st.composite
def _event(draw: st.DrawFn) -> Any:
    kind = draw(_KINDS)
    if kind == 0:  # not an object: rubric-v1 keeps such lines
        return draw(_NOT_OBJECTS)
    event: dict[str, Any] = {}
    for key, values in _FIELDS:
        if draw(_PRESENT):
            event[key] = draw(values)
    return event


@settings(max_examples=2500, deadline=None)
@given(st.lists(_event(), max_size=40))
@pytest.mark.slow
def test_generated_event_lists(events: list[Any]) -> None:
    _assert_same_index(events)
    _assert_same_index(tuple(events))


def _resumed_index(events: list[Any], cut: int) -> EventIndex:
    """The index a rerun builds: the first ``cut`` events' digest as a cursor stores it (its
    time order included), read back, then the rest taken as the appended tail."""
    first = EventDigest()
    first.add(events[:cut])
    first.time_order()  # sorted before it is stored, as a batch's index sorts it
    arrays, meta = first.to_state()
    resumed = EventDigest.from_state(dict(arrays), json.loads(json.dumps(meta)))
    resumed.add(events[cut:])
    return EventIndex.from_digest(resumed, bool(events))


#: counted events on few instants (ties across the cut are the case to get right)
_TIMED = st.fixed_dictionaries(
    {
        "event": st.sampled_from([*sorted(QUALITY_GATE_EVENTS), *GUARDS]),
        "timestamp": st.sampled_from(
            [
                "2026-09-19T08:00:00.000Z",
                "2026-09-19T09:00:00+01:00",  # the same instant
                "2026-09-19T07:59:59.999Z",
                "2026-09-19T08:00:00.001Z",
                "not a timestamp",
            ]
        ),
    },
    optional={
        "exit_code": st.sampled_from([0, 1, 0.0, None, True, 2**70, -(2**63), float("inf"), "0"]),
        "variant": st.just("full-gate"),
    },
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_TIMED | _event(), max_size=40), st.data())
def test_a_resumed_digest_merges_the_tail_into_the_stored_order(
    events: list[Any], data: st.DataObject
) -> None:
    """Issue 25: the tail's events merged into a cursor's sorted order give the index of a
    whole reading: equal timestamps across the cut keep ledger order."""
    cut = data.draw(st.integers(0, len(events)))
    _assert_same_index(events, _resumed_index(events, cut))


@settings(max_examples=300, deadline=None)
@given(st.lists(_TIMED | _event(), max_size=40), st.data())
def test_a_resumed_digest_is_stored_as_a_whole_reading_is(
    events: list[Any], data: st.DataObject
) -> None:
    """Issue 25: a cursor's digest with the tail taken is stored (its exit codes classified
    only past the stored ones) exactly as the digest of the whole reading."""
    cut = data.draw(st.integers(0, len(events)))
    first = EventDigest()
    first.add(events[:cut])
    first.time_order()
    arrays, meta = first.to_state()
    resumed = EventDigest.from_state(dict(arrays), json.loads(json.dumps(meta)))
    resumed.add(events[cut:])
    whole = EventDigest()
    whole.add(events)
    (got, got_meta), (want, want_meta) = resumed.to_state(), whole.to_state()
    assert got_meta == want_meta
    assert sorted(got) == sorted(want)
    for name, array in want.items():
        assert got[name].dtype == array.dtype, name
        assert got[name].tobytes() == array.tobytes(), name  # NaN included


def _window_reference(events: Sequence[Any], start: float, end: float) -> tuple[Any, ...]:
    """What lies inside ``[start, end]``, counted event by event (the documented meaning)."""
    inside: list[tuple[float, int, Any, bool]] = []
    guards = dict.fromkeys(GUARDS, 0)
    for position, event in enumerate(events):
        if not isinstance(event, Mapping) or not isinstance(event.get("event"), str):
            continue
        t = timestamp_ms(event.get("timestamp", UNDEFINED))
        if t is None or not start <= t <= end:
            continue
        if event["event"] in QUALITY_GATE_EVENTS:
            full = event.get("variant") == "full-gate"
            inside.append((t, position, event.get("exit_code", UNDEFINED), full))
        elif event["event"] in guards:
            guards[event["event"]] += 1
    failing = sum(1 for g in inside if not strict_equals_zero(g[2]))
    fulls = [g for g in inside if g[3]]
    last = max(fulls, key=lambda g: (g[0], -g[1])) if fulls else None  # ties: earliest event
    return (
        (len(inside), failing),
        (len(fulls), None if last is None else _typed(last[2])),
        tuple(guards[name] for name in GUARDS),
    )


_BOUND = st.sampled_from(
    [1789804799999.0, 1789804800000.0, 1789804800001.0, 1789808400000.0, -1e18, 1e18]
)


#: full gates on few instants with different exit codes (which one is "last" is the case)
_FULL = st.fixed_dictionaries(
    {
        "event": st.sampled_from(sorted(QUALITY_GATE_EVENTS)),
        "variant": st.just("full-gate"),
        "timestamp": st.sampled_from(["2026-09-19T08:00:00.000Z", "2026-09-19T09:00:00.000Z"]),
        "exit_code": st.sampled_from([0, 1, 2, "0", None]),
    }
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_TIMED | _FULL | _event(), max_size=40),
    st.lists(st.tuples(_BOUND, _BOUND), max_size=8),
)
def test_a_window_holds_what_its_events_counted_one_by_one_hold(
    events: list[Any], windows: list[tuple[float, float]]
) -> None:
    """Each window holds the gates (and the failing ones), the last full gate's exit code
    (last by timestamp, ties to the earliest event) and the guard events counted one event
    at a time; an inverted window holds none. Asked for all at once (a batch: one
    searchsorted per kind, issue 25), each window holds the same."""
    index = EventIndex(events)
    at_once = index.in_windows(
        np.array([w[0] for w in windows], dtype=np.float64),
        np.array([w[1] for w in windows], dtype=np.float64),
    )
    for (start, end), batch in zip(windows, at_once, strict=True):
        gates, full, guard = index.in_window(Window(start, end))
        assert batch == (gates, full, guard)
        assert (
            (gates.count, gates.failing),
            (full.count, None if not full.count else _typed(full.last_exit_code)),
            (guard.blocked, guard.warned, guard.loop_warning),
        ) == _window_reference(events, start, end)
        assert all(v.__class__ is int for v in (gates.count, gates.failing, guard.blocked))


_GATE = "orchestrator.quality_gate.passed"
_AT = "2026-09-19T08:00:00.000Z"


@pytest.mark.parametrize(
    "events",
    [
        [],
        [{"session_id": "r1", "semantic_session_id": ""}],  # an empty semantic id still claims
        [{"session_id": "r1", "semantic_session_id": ["s1"]}, {"session_id": "r1"}],
        [{"event": BLOCKED, "session_id": " r1 "}, {"event": BLOCKED, "session_id": "\u00a0"}],
        [{"event": [BLOCKED], "session_id": "r1", "timestamp": _AT}],  # an unhashable name
        # equal timestamps: the earliest event of the ledger comes first
        [
            {"event": _GATE, "timestamp": _AT, "variant": "full-gate", "exit_code": code}
            for code in (3, 0, 1.0, False, "0", None)
        ]
        + [{"event": _GATE, "timestamp": "2026-09-19T07:00:00.000Z", "variant": "full-gate"}],
        [{"event": SESSION_STARTED, "timestamp": _AT, "host_class": h} for h in (" ", "a", "b")],
        [{"event": WARNED, "timestamp": t} for t in (_AT, "2026-09-19T08:00:00+00:00", [_AT], 5)],
    ],
)
def test_edge_cases(events: list[Any]) -> None:
    _assert_same_index(events)


class _Int(int):
    """An int subclass: not a JSON parser's value, but a Mapping ledger may hold one."""


@pytest.mark.parametrize(
    ("value", "number", "zero"),
    [
        (0, True, True),
        (0.0, True, True),
        (-0.0, True, True),  # -0 === 0
        (1, True, False),
        (-1.5, True, False),
        (float("nan"), True, False),
        (float("inf"), True, False),
        (_Int(0), True, True),
        (_Int(2), True, False),
        (False, False, False),  # false === 0 is false: no coercion
        (True, False, False),
        ("0", False, False),
        ("", False, False),
        (None, False, False),
        (UNDEFINED, False, False),
        ([0], False, False),
        ({"a": 0}, False, False),
    ],
)
def test_is_number_and_strict_zero_read_as_javascript(value: Any, number: bool, zero: bool) -> None:
    """``typeof v === 'number'`` and ``v === 0``, which the reference reading above relies on:
    the fast paths for exact ``int``/``float`` must agree with the general test."""
    assert is_number(value) is number
    assert strict_equals_zero(value) is zero


def _index_fields(index: EventIndex) -> dict[str, Any]:
    return {
        "events_present": index.events_present,
        "raw_ids": index.raw_ids,
        "by_raw_id": {name: dict(+counts) for name, counts in index.by_raw_id.items()},
        "host_classes": index.host_classes,
        "gate_times": index.gate_times,
        "failing_prefix": index.failing_prefix,
        "full_times": index.full_times,
        "full_exit": [_typed(v) for v in index.full_exit],
        "guard_times": index.guard_times,
    }


def _batch_equals_kept(metrics: Path) -> None:
    """A batch reading (events digested block by block, none kept) gives the index, the
    diagnostics and the counts of the reading that keeps every event, for both rubrics."""
    from evalkit.rubrics import get_rubric
    from evalkit.scoring.engine import Scorer, read_batch

    kept, batch = read_metrics_dir(metrics), read_batch(metrics)
    assert batch.diagnostics == kept.diagnostics and batch.gaps == kept.gaps
    for rubric in ("rubric-v1", "rubric-v2"):
        reading = get_rubric(rubric).event_reading
        plain = EventIndex(kept.view(reading).events)
        digested = Scorer(batch, rubric).measure._index
        assert _index_fields(digested) == _index_fields(plain), rubric


@pytest.mark.parametrize("block", [1, 97, 4096])
@pytest.mark.parametrize("seed", [4, 5])
@pytest.mark.slow
def test_a_batch_reading_in_small_blocks_equals_the_kept_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, block: int
) -> None:
    """Issue 25: block boundaries anywhere (one byte, mid-line, mid-UTF-8) change nothing."""
    from evalkit.ledger import parse

    metrics = tmp_path / "m"
    generate_ledger(metrics, n_sessions=60, n_events=1500, seed=seed)
    with open(metrics / "events.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"event":"x","note":"\u00e9\u00e9\u00e9"}\n\ufeff{"a":1}\n  \n{"cut":')
    monkeypatch.setattr(parse, "BLOCK_BYTES", block)
    _batch_equals_kept(metrics)


@pytest.mark.parametrize("case", conformance_cases())
def test_a_batch_reading_of_every_conformance_ledger_equals_the_kept_one(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.ledger import parse

    monkeypatch.setattr(parse, "BLOCK_BYTES", 61)
    _batch_equals_kept(require_shared("conformance", *case.split("/")))


def test_the_stored_sort_order_is_int32_and_an_int64_one_is_still_read() -> None:
    """A cursor stores the events' time order as int32 (half the bytes); an older cursor's
    int64 order is taken as it is, not sorted again."""
    stamps = ("2026-01-03T00:00:00.000Z", "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z")
    events = [
        {"event": "orchestrator.quality_gate.passed", "timestamp": t, "exit_code": 0}
        for t in stamps
    ]
    digest = EventDigest()
    digest.add(events)
    arrays, meta = digest.to_state()
    assert arrays["order"].dtype == np.int32
    assert arrays["order"].tolist() == [1, 2, 0]
    for dtype in (np.int32, np.int64):
        stored = {**arrays, "order": arrays["order"].astype(dtype)}
        back = EventDigest.from_state(stored, meta)
        assert back.time_order()[1] is stored["order"]  # taken, not sorted again
        later = [
            {"event": "orchestrator.quality_gate.failed", "timestamp": stamps[1], "exit_code": 1}
        ]
        back.add(later)
        # the tail merged in after the equal timestamp already there, in ledger order
        assert back.time_order()[1].tolist() == [1, 3, 2, 0]
