"""The resolution cascade and the canonical session reading (rubric § Cascade, SPEC section 6)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit import Resolution, resolve_session
from evalkit.errors import EvalkitError, SessionResolutionError, ValidationError
from evalkit.resolve import (
    canonical_sessions,
    compute_window,
    find_peer_overlap,
    is_backfill_stub,
    resolve_record,
)
from evalkit.scoring.engine import score_session
from evalkit.scoring.measure import raw_session_ids

START = "2026-09-19T08:00:00.000Z"
END = "2026-09-19T10:00:00.000Z"


def rec(sid: str, **fields: Any) -> dict[str, Any]:
    return {"session_id": sid, **fields}


def worked(sid: str, **fields: Any) -> dict[str, Any]:
    """A record the cascade accepts as fallback: completed_at and evidence of work."""
    return rec(sid, completed_at=END, agent_summary={"complete": 1}, **fields)


def ids(records: Any) -> list[str]:
    return [r["session_id"] for r in canonical_sessions(records).records]


def write_sessions(root: Path, records: list[Any], *, raw: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    text = raw if raw is not None else "".join(json.dumps(r) + "\n" for r in records)
    (root / "sessions.jsonl").write_text(text, encoding="utf-8")
    return root


# -- the cascade -------------------------------------------------------------------------------


def test_explicit_selects_last_record_with_that_id(tmp_path: Path) -> None:
    records = [worked("a", total_waves=1), worked("b"), worked("a", total_waves=2)]
    record, via = resolve_record(canonical_sessions(records).records, "a")
    assert via == "explicit" and record["total_waves"] == 2


def test_explicit_resolves_even_an_abandoned_record() -> None:
    record, via = resolve_record([rec("a", status="abandoned"), worked("b")], "a")
    assert (record["session_id"], via) == ("a", "explicit")


def test_explicit_no_match_names_the_id() -> None:
    with pytest.raises(SessionResolutionError, match="session not found: zzz"):
        resolve_record([worked("a")], "zzz")


def test_explicit_empty_string_runs_the_cascade() -> None:
    assert resolve_record([worked("a"), worked("b")], "") == (worked("b"), "cascade-fallback")


def test_cascade_completed_status() -> None:
    record, via = resolve_record([worked("a"), rec("b", status="completed")])
    assert (record["session_id"], via) == ("b", "cascade-completed")


def test_cascade_completed_needs_no_completed_at() -> None:
    _, via = resolve_record([rec("b", status="completed")])
    assert via == "cascade-completed"


def test_cascade_newer_fallback_beats_older_completed() -> None:
    record, via = resolve_record([rec("old", status="completed"), worked("new")])
    assert (record["session_id"], via) == ("new", "cascade-fallback")


def test_cascade_skips_abandoned_even_with_work() -> None:
    record, _ = resolve_record([worked("a"), worked("b", status="abandoned")])
    assert record["session_id"] == "a"


def test_cascade_skips_missing_completed_at() -> None:
    records = [worked("a"), rec("b", agent_summary={"complete": 3})]
    assert resolve_record(records)[0]["session_id"] == "a"


def test_cascade_skips_records_without_evidence_of_work() -> None:
    records = [worked("a"), rec("b", completed_at=END, agent_summary={"complete": 0})]
    assert resolve_record(records)[0]["session_id"] == "a"


def test_cascade_completion_rate_zero_is_evidence_of_work() -> None:
    records = [worked("a"), rec("b", completed_at=END, effectiveness={"completion_rate": 0})]
    assert resolve_record(records) == (records[1], "cascade-fallback")


def test_cascade_null_completion_rate_is_not_evidence() -> None:
    records = [worked("a"), rec("b", completed_at=END, effectiveness={"completion_rate": None})]
    assert resolve_record(records)[0]["session_id"] == "a"


def test_absent_status_is_not_abandoned_other_status_qualifies_on_work() -> None:
    assert resolve_record([worked("a", status="in-progress")])[1] == "cascade-fallback"
    assert resolve_record([worked("a")])[1] == "cascade-fallback"


def test_nothing_eligible_raises() -> None:
    with pytest.raises(SessionResolutionError, match="no completed session found"):
        resolve_record([rec("a", status="abandoned"), rec("b")])


def test_empty_ledger_raises() -> None:
    with pytest.raises(SessionResolutionError, match="no session records found"):
        resolve_record([])


def test_sessions_file_absent_or_empty_raises(tmp_path: Path) -> None:
    with pytest.raises(SessionResolutionError):
        resolve_session(tmp_path)
    with pytest.raises(SessionResolutionError):
        resolve_session(write_sessions(tmp_path / "e", [], raw=""))


def test_resolve_session_public_api(tmp_path: Path) -> None:
    root = write_sessions(tmp_path, [worked("a", started_at=START)])
    resolution = resolve_session(root)
    assert isinstance(resolution, Resolution)
    assert (resolution.session_id, resolution.resolved_via) == ("a", "cascade-fallback")
    assert resolution.window is not None and resolution.peer.count == 0
    assert resolve_session(root, "a").resolved_via == "explicit"


def test_errors_are_value_errors() -> None:
    assert issubclass(SessionResolutionError, EvalkitError)
    assert issubclass(SessionResolutionError, ValueError)


def test_whitespace_session_id_resolves_then_fails_validation(tmp_path: Path) -> None:
    root = write_sessions(tmp_path, [worked("   ", status="completed")])
    assert resolve_session(root).session_id == "   "
    with pytest.raises(ValidationError, match="session_id"):
        score_session(root, timestamp="2026-10-01T00:00:00.000Z")


def test_bad_lines_are_skipped(tmp_path: Path) -> None:
    raw = '{"session_id": "broken\n[1,2]\n\ufeff' + json.dumps(worked("a")) + "\r\n\n"
    assert resolve_session(write_sessions(tmp_path, [], raw=raw)).session_id == "a"


# -- canonical reading -------------------------------------------------------------------------


def test_newest_wins_and_keeps_first_position() -> None:
    records = [worked("a", v=1), worked("b"), worked("a", v=2)]
    canon = canonical_sessions(records).records
    assert [r["session_id"] for r in canon] == ["a", "b"]
    assert canon[0]["v"] == 2
    # so the cascade (newest first) reaches b before the rewritten a
    assert resolve_record(canon)[0]["session_id"] == "b"


def test_records_without_string_id_are_dropped() -> None:
    assert ids([rec(""), {"session_id": 5}, {"x": 1}, [1], "s", worked("a")]) == ["a"]


def test_backfill_stub_definition() -> None:
    assert is_backfill_stub(rec("a", _backfill_source="hook"))
    assert is_backfill_stub(rec("a", _backfill_source="hook", total_waves=0, waves=[]))
    assert not is_backfill_stub(rec("a", _backfill_source="hook", total_agents=2))
    assert not is_backfill_stub(rec("a", _backfill_source="hook", waves=[{}]))
    assert not is_backfill_stub(rec("a", _backfill_source="repair-invalid-sessions/1004"))
    assert not is_backfill_stub(rec("a", _backfill_source=""))
    assert not is_backfill_stub(rec("a"))


def test_stub_never_shadows_a_real_record() -> None:
    real = worked("a", total_waves=3)
    stub = rec("a", _backfill_source="hook", status="abandoned")
    assert canonical_sessions([real, stub]).records == (real,)
    # a real record after a stub still wins (newest among non-stubs)
    assert canonical_sessions([stub, real]).records == (real,)
    # among stubs the newest wins
    stub2 = rec("a", _backfill_source="hook2")
    assert canonical_sessions([stub, stub2]).records == (stub2,)


def test_double_stub_collapse_drops_synthetic_twin() -> None:
    times = {"started_at": START, "completed_at": END, "status": "abandoned"}
    authentic = rec("main-1", **times)
    synthetic = rec("main-abandoned-x", _synthetic_session_id=True, **times)
    assert ids([synthetic, authentic]) == ["main-1"]


def test_double_stub_collapse_is_narrow() -> None:
    times = {"started_at": START, "completed_at": END}
    # not abandoned: kept
    assert len(ids([rec("a", **times), rec("b", _synthetic_session_id=True, **times)])) == 2
    # all synthetic: kept
    ab = {"status": "abandoned", **times}
    both = [rec("a", _synthetic_session_id=True, **ab), rec("b", _synthetic_session_id=True, **ab)]
    assert len(ids(both)) == 2
    # started_at alone equal: kept
    other = rec("b", _synthetic_session_id=True, status="abandoned", started_at=START)
    assert len(ids([rec("a", **ab), other])) == 2


def test_double_stub_group_is_the_joined_timestamp_text() -> None:
    # The reference keys a group on `${started_at} ${completed_at}`: these two records share
    # the key "a b c", so the synthetic one is dropped there (verified against its
    # sessions-canonical.mjs run on this ledger).
    authentic = rec("A", status="abandoned", started_at="a b", completed_at="c")
    synthetic = rec(
        "B", status="abandoned", started_at="a", completed_at="b c", _synthetic_session_id=True
    )
    assert ids([authentic, synthetic]) == ["A"]


def test_supersede_removes_attestable_target() -> None:
    stub = rec("stub", status="abandoned", started_at=START)
    real = worked("real", started_at=START, supersedes="stub")
    assert ids([stub, real]) == ["real"]
    by_raw = [
        rec("stub", raw_session_id="r1"),
        worked("real", raw_session_id="r1", supersedes="stub"),
    ]
    assert ids(by_raw) == ["real"]


def test_supersede_refused_for_authoritative_target() -> None:
    target = worked("t", status="completed", started_at=START)
    marker = worked("m", started_at=START, supersedes="t")
    canon = canonical_sessions([target, marker])
    assert [r["session_id"] for r in canon.records] == ["t", "m"]
    assert [(i.by, i.target, i.reason) for i in canon.ignored_supersedes] == [
        ("m", "t", "target-not-abandoned")
    ]


def test_supersede_refused_without_join_key() -> None:
    target = rec("t", status="abandoned", started_at=START)
    marker = worked("m", started_at=END, supersedes="t")
    canon = canonical_sessions([target, marker])
    assert len(canon.records) == 2
    assert canon.ignored_supersedes[0].reason == "no-shared-join-key"


def test_supersede_chain_is_order_independent() -> None:
    a = rec("A", status="abandoned", started_at=START)
    b = rec("B", status="abandoned", started_at=START, supersedes="A")
    c = worked("C", started_at=START, supersedes="B")
    for perm in itertools.permutations([a, b, c]):
        assert sorted(ids(list(perm))) == ["A", "C"]


def test_supersede_cycle_keeps_newest_member() -> None:
    x = rec("X", started_at=START, completed_at="2026-09-19T09:00:00.000Z", supersedes="Y")
    y = rec("Y", started_at=START, completed_at="2026-09-19T09:30:00.000Z", supersedes="X")
    for perm in itertools.permutations([x, y]):
        assert ids(list(perm)) == ["Y"]
    # equal timestamps: the smaller session_id is kept
    p = rec("P", started_at=START, supersedes="Q")
    q = rec("Q", started_at=START, supersedes="P")
    assert ids([q, p]) == ["P"]


def test_supersede_pointing_at_missing_id_or_itself_is_ignored() -> None:
    canon = canonical_sessions([worked("a", supersedes="gone"), worked("b", supersedes="b")])
    assert len(canon.records) == 2 and canon.ignored_supersedes == ()


def test_cross_id_stub_drop_by_raw_session_id() -> None:
    real = worked("main-1", raw_session_id="r1", total_waves=2)
    stub = rec("main-abandoned-1", raw_session_id="r1", _backfill_source="hook")
    assert ids([stub, real]) == ["main-1"]
    only_stubs = [stub, rec("other", raw_session_id="r1", _backfill_source="hook")]
    assert len(ids(only_stubs)) == 2


# -- windows and peers -------------------------------------------------------------------------


def test_window_is_none_when_a_boundary_is_missing_or_bad() -> None:
    assert compute_window(rec("a", started_at=START, completed_at=END)) is not None
    assert compute_window(rec("a", completed_at=END)) is None
    assert compute_window(rec("a", started_at="yesterday", completed_at=END)) is None
    assert compute_window(rec("a", started_at=1789804800000, completed_at=END)) is None


def test_peer_overlap_is_strict_and_excludes_same_id() -> None:
    me = rec("me", started_at="2026-09-19T08:00:00Z", completed_at="2026-09-19T10:00:00Z")
    touching = rec("t", started_at="2026-09-19T10:00:00Z", completed_at="2026-09-19T11:00:00Z")
    inside = rec("i", started_at="2026-09-19T09:00:00Z", completed_at="2026-09-19T09:10:00Z")
    no_window = rec("n", started_at="2026-09-19T09:00:00Z")
    abandoned = rec(
        "x",
        status="abandoned",
        started_at="2026-09-19T07:00:00Z",
        completed_at="2026-09-19T08:00:00.001Z",
    )
    peers = find_peer_overlap([me, touching, inside, no_window, abandoned, me], me)
    assert peers.peers == ("i", "x")
    assert find_peer_overlap([me, inside], rec("me")).count == 0  # null window: no peers


def test_offsets_are_compared_as_instants() -> None:
    me = rec("me", started_at="2026-09-19T10:00:00+02:00", completed_at="2026-09-19T12:00:00+02:00")
    other = rec("o", started_at="2026-09-19T09:59:00Z", completed_at="2026-09-19T11:00:00Z")
    assert find_peer_overlap([me, other], me).peers == ("o",)


def test_raw_ids_through_dual_stamp_and_direct_stamp() -> None:
    events = [
        {"session_id": "r2", "semantic_session_id": "s1"},
        {"session_id": "r1", "semantic_session_id": "s1"},
        {"session_id": "s1"},
        {"session_id": "  ", "semantic_session_id": "s1"},
        {"session_id": "r9", "semantic_session_id": "s2"},
        "not an event",
    ]
    assert raw_session_ids(events, rec("s1")) == ("r1", "r2", "s1")
    assert raw_session_ids(events, rec("s3")) == ()
    assert raw_session_ids(events, rec("  ")) == ()


_TIMES = st.integers(min_value=0, max_value=12)  # few values: ties and touching ends abound
_RECORDS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d", 7, None]),  # rewrites share an id; some are no id
        st.one_of(st.none(), st.tuples(_TIMES, _TIMES).map(sorted)),
    ),
    max_size=14,
)


@settings(max_examples=400, deadline=None)
@given(_RECORDS)
def test_peers_at_one_position_are_the_sweeps_peers(drawn: list[tuple[object, object]]) -> None:
    """peers_at (the array query an incremental run makes per session) against
    peer_overlaps (the sweep over every window), position by position."""
    import numpy as np

    from evalkit.record.scoring_context import Window
    from evalkit.resolve import peer_overlaps, peers_at

    records = [{"session_id": sid} for sid, _ in drawn]
    windows = [None if w is None else Window(float(w[0]), float(w[1])) for _, w in drawn]
    at = [i for i, w in enumerate(windows) if w is not None]
    arrays = (
        np.array(at, dtype=np.int64),
        np.array([windows[i].start for i in at], dtype=np.float64),  # type: ignore[union-attr]
        np.array([windows[i].end for i in at], dtype=np.float64),  # type: ignore[union-attr]
    )
    swept = peer_overlaps(records, windows)
    for position, window in enumerate(windows):
        assert peers_at(records, position, window, arrays) == swept[position]
