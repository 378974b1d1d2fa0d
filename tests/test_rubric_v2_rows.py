"""One test per row of every condition table of rubric-v2 (seed 001), on hand-made ledgers.

The three tables v2 carries over unchanged (verification-evidence, plan-fidelity, gate-health)
are checked row by row under rubric-v2 too; then v2's own: process-safety re-aimed at the
spiral, guard-friction (reported, attributed by raw session id through the dual stamp, with
the time-window fallback and its contamination note), the disclosures, the LEDGER INCOMPLETE
note, and KPIs that are null when unknown.
"""

from __future__ import annotations

import json
from pathlib import Path

from test_rubric_v1_rows import (
    GUARD_NOTE,
    PEER,
    TS,
    dims,
    gate,
    guard,
    noise,
    session,
    write_ledger,
)

from evalkit.scoring.engine import score_session

RAW = "1f0c2a7e-raw"
OTHER_RAW = "3b8e4c9a-raw"
BYPASS_NOTE = "guard BYPASS (allow-destructive-ops) emits no event — not gradeable here."
FALLBACK = "attribution: time-window (no event ties this session_id to a raw harness id — fallback)"


def score_v2(root: Path, session_id: str | None = "s1") -> dict[str, dict]:
    return dims(root, "rubric-v2", session_id)


def lock(raw: str = RAW, semantic: str = "s1") -> dict:
    """The dual stamp: an event carrying the raw id beside the record's semantic id."""
    return {
        "timestamp": "2026-09-19T08:01:00.000Z",
        "event": "orchestrator.session.lock.acquired",
        "session_id": raw,
        "semantic_session_id": semantic,
    }


def test_v2_scores_six_dimensions_in_canonical_order(tmp_path: Path) -> None:
    record = score_session(write_ledger(tmp_path, [session()], [noise()]), "s1", timestamp=TS)
    assert record.rubric_version == "rubric-v2"  # the default rubric
    assert [d.id for d in record.dimensions] == [
        "verification-evidence",
        "plan-fidelity",
        "gate-health",
        "process-safety",
        "guard-friction",
        "efficiency-kpis",
    ]


# -- tables carried over from v1 ---------------------------------------------------------------


def test_v2_ve_rows(tmp_path: Path) -> None:
    cases = [
        ([session(), PEER], [gate("2026-09-19T08:30:00.000Z")], "cannot-determine"),
        ([session(total_files_changed=0)], [noise()], "not-applicable"),
        ([session()], [noise()], "cannot-determine"),
        ([session()], [gate("2026-09-19T08:30:00.000Z")], "pass"),
        ([session()], [gate("2026-09-19T08:30:00.000Z", 1)], "fail"),
    ]
    for i, (sessions, events, status) in enumerate(cases):
        root = write_ledger(tmp_path / str(i), sessions, events)
        assert score_v2(root)["verification-evidence"]["status"] == status, i


def test_v2_pf_rows(tmp_path: Path) -> None:
    cases = [
        ({"completion_rate": 0.8}, "pass", 0.8),
        ({"completion_rate": 0.5}, "fail", 0.5),
        ({"planned_issues": 0}, "not-applicable", None),
        ({"planned_issues": 4}, "cannot-determine", None),
    ]
    for i, (eff, status, score) in enumerate(cases):
        root = write_ledger(tmp_path / str(i), [session(effectiveness=eff)], [noise()])
        pf = score_v2(root)["plan-fidelity"]
        assert (pf["status"], pf["score"]) == (status, score), i


def test_v2_gh_rows(tmp_path: Path) -> None:
    full = "full-gate"
    cases = [
        ([session(), PEER], [gate("2026-09-19T09:50:00.000Z", 0, full)], "cannot-determine"),
        ([session(total_waves=0)], [noise()], "not-applicable"),
        ([session()], [noise()], "cannot-determine"),
        ([session()], [gate("2026-09-19T09:50:00.000Z", 0, full)], "pass"),
        ([session()], [gate("2026-09-19T09:50:00.000Z", 1, full)], "fail"),
    ]
    for i, (sessions, events, status) in enumerate(cases):
        root = write_ledger(tmp_path / str(i), sessions, events)
        assert score_v2(root)["gate-health"]["status"] == status, i


def test_v2_gh_housekeeping_clarification(tmp_path: Path) -> None:
    waves = [{"role": "Housekeeping", "coordinator_direct": True}]
    root = write_ledger(tmp_path, [session(total_waves=1, waves=waves)], [noise()])
    assert score_v2(root)["gate-health"]["status"] == "not-applicable"


# -- 4. process-safety (re-aimed) --------------------------------------------------------------


def test_ps_v2_row1_events_absent_or_empty_cannot_determine(tmp_path: Path) -> None:
    for i, text in enumerate([None, ""]):
        root = write_ledger(tmp_path / str(i), [session()], events_text=text)
        assert score_v2(root)["process-safety"]["status"] == "cannot-determine"


def test_ps_v2_row1_only_unreadable_lines_cannot_determine(tmp_path: Path) -> None:
    # rubric-v2 counts non-object lines as unreadable (v1 keeps them and passes)
    root = write_ledger(tmp_path, [session()], events_text="[1, 2]\n42\n")
    ps = score_v2(root)["process-safety"]
    assert ps["status"] == "cannot-determine"
    assert "LEDGER INCOMPLETE: 2 unreadable line(s)" in ps["evidence"]


def test_ps_v2_row2_spiral_positive_fails(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session(agent_summary={"spiral": 1})], [noise()])
    ps = score_v2(root)["process-safety"]
    assert ps["status"] == "fail"
    assert ps["evidence"].startswith("agent_summary.spiral=1 — adverse process signal.")


def test_ps_v2_row3_blocked_commands_no_longer_fail(tmp_path: Path) -> None:
    events = [guard("2026-09-19T09:00:00.000Z"), guard("2026-09-19T09:10:00.000Z")]
    ps = score_v2(write_ledger(tmp_path, [session()], events))["process-safety"]
    assert ps["status"] == "pass"
    assert ps["evidence"].startswith("no adverse process signals (agent_summary.spiral=0).")


def test_ps_v2_row3_spiral_absent_passes(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session(agent_summary=None)], [noise()])
    assert score_v2(root)["process-safety"]["status"] == "pass"


def test_ps_v2_disclosures_always_appended(tmp_path: Path) -> None:
    for i, spiral in enumerate([0, 3]):
        root = write_ledger(
            tmp_path / str(i), [session(agent_summary={"spiral": spiral})], [noise()]
        )
        evidence = score_v2(root)["process-safety"]["evidence"]
        assert evidence.endswith(f"{BYPASS_NOTE} {GUARD_NOTE}")
        assert "are NOT graded here — see the guard-friction dimension." in evidence


def test_ps_v2_ignores_peer_contamination(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session(), PEER], [guard("2026-09-19T09:30:00.000Z")])
    ps = score_v2(root)["process-safety"]
    assert ps["status"] == "pass" and "NOTE: window overlaps" not in ps["evidence"]


# -- 5. guard-friction -------------------------------------------------------------------------


def test_gf_row1_events_absent_not_applicable_unmeasured(tmp_path: Path) -> None:
    gf = score_v2(write_ledger(tmp_path, [session()]))["guard-friction"]
    assert gf["status"] == "not-applicable"
    assert gf["evidence"] == (
        "REPORTED, not graded. events.jsonl absent or empty — guard-friction counts unavailable "
        "(not zero: unmeasured). " + GUARD_NOTE
    )


def test_gf_row2_counts_reported_never_graded(tmp_path: Path) -> None:
    events = [
        guard("2026-09-19T09:00:00.000Z", "blocked"),
        guard("2026-09-19T09:01:00.000Z", "warned"),
        guard("2026-09-19T09:02:00.000Z", "warned"),
        guard("2026-09-19T09:03:00.000Z", "loop"),
    ]
    gf = score_v2(write_ledger(tmp_path, [session()], events))["guard-friction"]
    assert gf["status"] == "not-applicable"
    assert gf["evidence"] == (
        "REPORTED, not graded. destructive_guard.blocked=1, destructive_guard.warned=2, "
        f"loop.warning=1 ({FALLBACK}). {GUARD_NOTE}"
    )


def test_gf_dual_stamp_attributes_by_raw_id_regardless_of_window(tmp_path: Path) -> None:
    events = [
        lock(),
        guard("2026-09-19T13:00:00.000Z", session_id=RAW),  # after the window: still ours
        guard("2026-09-19T07:00:00.000Z", "loop", session_id=RAW),  # before it: still ours
        guard("2026-09-19T09:00:00.000Z", session_id=OTHER_RAW),  # in the window: not ours
    ]
    gf = score_v2(write_ledger(tmp_path, [session()], events))["guard-friction"]
    assert (
        "destructive_guard.blocked=1, destructive_guard.warned=0, loop.warning=1 "
        f"(attribution: session-id [{RAW}])" in gf["evidence"]
    )


def test_gf_route2_semantic_id_stamped_directly_on_events(tmp_path: Path) -> None:
    events = [guard("2026-09-19T13:00:00.000Z", session_id="s1")]
    gf = score_v2(write_ledger(tmp_path, [session()], events))["guard-friction"]
    assert "destructive_guard.blocked=1" in gf["evidence"]
    assert "(attribution: session-id [s1])" in gf["evidence"]


def test_gf_several_raw_ids_are_sorted(tmp_path: Path) -> None:
    events = [lock("b-raw"), lock("a-raw"), guard("2026-09-19T13:00:00.000Z", session_id="b-raw")]
    gf = score_v2(write_ledger(tmp_path, [session()], events))["guard-friction"]
    assert "(attribution: session-id [a-raw, b-raw])" in gf["evidence"]


def test_gf_session_id_attribution_needs_no_contamination_note(tmp_path: Path) -> None:
    events = [lock(), guard("2026-09-19T09:30:00.000Z", session_id=RAW)]
    gf = score_v2(write_ledger(tmp_path, [session(), PEER], events))["guard-friction"]
    assert "attribution: session-id" in gf["evidence"]
    assert "NOTE: window overlaps" not in gf["evidence"]


def test_gf_fallback_without_peer_has_no_note(tmp_path: Path) -> None:
    events = [guard("2026-09-19T09:30:00.000Z", session_id=OTHER_RAW)]
    gf = score_v2(write_ledger(tmp_path, [session()], events))["guard-friction"]
    assert FALLBACK in gf["evidence"] and "destructive_guard.blocked=1" in gf["evidence"]
    assert gf["evidence"].endswith(GUARD_NOTE)


def test_gf_fallback_with_peer_carries_contamination_note(tmp_path: Path) -> None:
    events = [guard("2026-09-19T09:30:00.000Z", session_id=OTHER_RAW)]
    gf = score_v2(write_ledger(tmp_path, [session(), PEER], events))["guard-friction"]
    assert FALLBACK in gf["evidence"]
    assert gf["evidence"].endswith(
        " NOTE: window overlaps 1 peer session(s); window-attributed counts may include peer "
        "signals."
    )


# -- ledger completeness note ------------------------------------------------------------------


def test_ledger_incomplete_note_on_event_dimensions_only(tmp_path: Path) -> None:
    text = json.dumps(gate("2026-09-19T08:30:00.000Z")) + "\n" + '{"timestamp":\n' + "[1]\n"
    scored = score_v2(write_ledger(tmp_path, [session()], events_text=text))
    note = (
        " LEDGER INCOMPLETE: 2 unreadable line(s) — counts above are LOWER BOUNDS and a zero "
        "here may be unmeasured rather than absent."
    )
    for dim_id in ("verification-evidence", "gate-health", "process-safety", "guard-friction"):
        assert scored[dim_id]["evidence"].endswith(note), dim_id
    for dim_id in ("plan-fidelity", "efficiency-kpis"):
        assert "LEDGER INCOMPLETE" not in scored[dim_id]["evidence"]
    assert scored["verification-evidence"]["status"] == "pass"  # statuses unchanged


def test_ledger_incomplete_names_a_missing_archive(tmp_path: Path) -> None:
    tombstone = {
        "timestamp": "2026-09-19T07:00:00.000Z",
        "event": "orchestrator.events.rotated",
        "archived_as": "/elsewhere/_archive/events-20260901T000000Z_20260919T065959Z.jsonl",
    }
    root = write_ledger(tmp_path, [session()], [tombstone, gate("2026-09-19T08:30:00.000Z")])
    ve = score_v2(root)["verification-evidence"]
    assert ve["status"] == "pass"
    assert "LEDGER INCOMPLETE: 1 gap(s) [missing-archive×1] — counts above" in ve["evidence"]


def test_ledger_incomplete_counts_gaps_by_kind_and_lines(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session()], events_text=json.dumps(noise()) + "\n{bad\n")
    (root / "events.jsonl.2").write_text(json.dumps(gate("2026-09-19T08:30:00.000Z")) + "\n")
    archive = root / "_archive"
    archive.mkdir()
    (archive / "events-20260901T000000Z_20260910T000000Z.jsonl").mkdir()  # a folder: unreadable
    ve = score_v2(root)["verification-evidence"]
    assert ve["status"] == "pass"  # the ring's gate counts; gaps never change a status
    assert (
        " LEDGER INCOMPLETE: 2 gap(s) [ring-hole×1, unreadable-source×1], 1 unreadable line(s) — "
        in ve["evidence"]
    )


def test_v2_reads_rotated_archives(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session()], [noise("2026-09-19T11:00:00.000Z")])
    archive = root / "_archive"
    archive.mkdir()
    (archive / "events-20260919T000000Z_20260919T100000Z.jsonl").write_text(
        json.dumps(gate("2026-09-19T08:30:00.000Z", 1)) + "\n"
    )
    assert score_v2(root)["verification-evidence"]["status"] == "fail"
    # rubric-v1 reads events.jsonl only
    assert dims(root, "rubric-v1")["verification-evidence"]["status"] == "cannot-determine"


# -- 6. efficiency-kpis ------------------------------------------------------------------------


def test_v2_ek_always_not_applicable_kpis_null_when_unknown(tmp_path: Path) -> None:
    rec = {"session_id": "s1", "status": "completed"}
    record = score_session(write_ledger(tmp_path, [rec], [noise()]), timestamp=TS).to_dict()
    ek = record["dimensions"][-1]
    assert (ek["id"], ek["status"]) == ("efficiency-kpis", "not-applicable")
    assert record["kpis"] == dict.fromkeys(
        [
            "duration_seconds",
            "total_waves",
            "total_agents",
            "token_input",
            "token_output",
            "carryover",
        ]
    )
