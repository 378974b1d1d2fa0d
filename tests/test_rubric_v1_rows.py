"""One test per row of every condition table of rubric-v1 (seed 000), on hand-made ledgers.

Each test writes a tiny metrics dir into ``tmp_path`` that drives exactly one row, scores it
under rubric-v1 and checks the status (and the evidence facts the row names). The helpers at
the top are reused by ``test_rubric_v2_rows.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalkit.scoring.engine import score_session

TS = "2026-10-01T00:00:00.000Z"
GUARD_NOTE = (
    "destructive-guard emission exists only from 2026-07-16 onward; "
    "earlier sessions: guard signals unmeasurable."
)


def session(**overrides: Any) -> dict[str, Any]:
    """A session that did planned work in [08:00, 10:00] on 2026-09-19; fields overridable.

    An override of ``None`` removes the field (absent, not null).
    """
    rec: dict[str, Any] = {
        "session_id": "s1",
        "started_at": "2026-09-19T08:00:00.000Z",
        "completed_at": "2026-09-19T10:00:00.000Z",
        "total_waves": 2,
        "waves": [{"wave": 1, "role": "Impl-Core"}, {"wave": 2, "role": "Quality"}],
        "total_agents": 3,
        "total_files_changed": 4,
        "agent_summary": {"complete": 3, "spiral": 0},
        "effectiveness": {
            "planned_issues": 2,
            "completion_rate": 1,
            "carryover": 0,
            "carryover_ratio": 0,
        },
    }
    for key, value in overrides.items():
        if value is None:
            rec.pop(key, None)
        else:
            rec[key] = value
    return rec


def gate(ts: str, exit_code: Any = 0, variant: str = "incremental", **extra: Any) -> dict:
    name = "passed" if exit_code == 0 else "failed"
    event = {"timestamp": ts, "event": f"orchestrator.quality_gate.{name}", "variant": variant}
    if exit_code is not None:
        event["exit_code"] = exit_code
    event.update(extra)
    return event


def guard(ts: str, kind: str = "blocked", session_id: str | None = None, **extra: Any) -> dict:
    name = (
        "orchestrator.loop.warning" if kind == "loop" else f"orchestrator.destructive_guard.{kind}"
    )
    event: dict[str, Any] = {"timestamp": ts, "event": name}
    if session_id is not None:
        event["session_id"] = session_id
    event.update(extra)
    return event


def noise(ts: str = "2026-09-19T09:00:00.000Z") -> dict:
    """An event no dimension counts: it makes events.jsonl present and non-empty."""
    return {"timestamp": ts, "event": "orchestrator.wave.completed"}


def write_ledger(
    root: Path,
    sessions: list[dict[str, Any]],
    events: list[Any] | None = None,
    *,
    events_text: str | None = None,
) -> Path:
    """Write ``sessions.jsonl`` and (unless ``events`` and ``events_text`` are None)
    ``events.jsonl``; return the metrics dir."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "sessions.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sessions))
    if events_text is not None:
        (root / "events.jsonl").write_text(events_text)
    elif events is not None:
        (root / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return root


def dims(root: Path, rubric: str, session_id: str | None = "s1") -> dict[str, dict[str, Any]]:
    record = score_session(root, session_id, rubric, timestamp=TS).to_dict()
    return {d["id"]: d for d in record["dimensions"]}


def score_v1(root: Path, session_id: str | None = "s1") -> dict[str, dict[str, Any]]:
    return dims(root, "rubric-v1", session_id)


PEER = session(
    session_id="s2",
    started_at="2026-09-19T09:00:00.000Z",
    completed_at="2026-09-19T11:00:00.000Z",
)


# -- dimension order ---------------------------------------------------------------------------


def test_v1_scores_five_dimensions_in_canonical_order(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session()], [noise()])
    record = score_session(root, "s1", "rubric-v1", timestamp=TS).to_dict()
    assert [d["id"] for d in record["dimensions"]] == [
        "verification-evidence",
        "plan-fidelity",
        "gate-health",
        "process-safety",
        "efficiency-kpis",
    ]
    assert all(d["method"] == "deterministic" for d in record["dimensions"])
    assert record["rubric_version"] == "rubric-v1"
    assert not {"overall", "total", "mean", "global_score"} & set(record)


# -- 1. verification-evidence ------------------------------------------------------------------


def test_ve_row1_peer_overlap_cannot_determine(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session(), PEER], [gate("2026-09-19T08:30:00.000Z")])
    ve = score_v1(root)["verification-evidence"]
    assert ve["status"] == "cannot-determine"
    assert "window contaminated by 1 overlapping session(s) [s2]" in ve["evidence"]


def test_ve_row2_no_gates_no_files_changed_not_applicable(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session(total_files_changed=0)], [noise()])
    ve = score_v1(root)["verification-evidence"]
    assert ve["status"] == "not-applicable"
    assert "0 quality_gate events in window and total_files_changed=0" in ve["evidence"]


def test_ve_row3_no_gates_files_changed_cannot_determine(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session(total_files_changed=4)], [noise()])
    ve = score_v1(root)["verification-evidence"]
    assert ve["status"] == "cannot-determine"
    assert "total_files_changed=4 — verification evidence unavailable" in ve["evidence"]


def test_ve_row3_files_changed_unknown_is_not_zero(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session(total_files_changed=None)], [noise()])
    ve = score_v1(root)["verification-evidence"]
    assert ve["status"] == "cannot-determine"
    assert "total_files_changed=n/a" in ve["evidence"]


def test_ve_row4_all_gates_green_pass(tmp_path: Path) -> None:
    events = [gate("2026-09-19T08:30:00.000Z"), gate("2026-09-19T09:30:00.000Z")]
    ve = score_v1(write_ledger(tmp_path, [session()], events))["verification-evidence"]
    assert ve["status"] == "pass"
    assert ve["evidence"] == (
        "attribution: time-window. 2 quality_gate event(s) in window, all exit_code=0."
    )


def test_ve_row5_any_gate_red_fail(tmp_path: Path) -> None:
    events = [gate("2026-09-19T08:30:00.000Z", 1), gate("2026-09-19T09:30:00.000Z")]
    ve = score_v1(write_ledger(tmp_path, [session()], events))["verification-evidence"]
    assert ve["status"] == "fail"
    assert "2 quality_gate event(s) in window; 1 with non-zero exit_code." in ve["evidence"]


def test_ve_only_exit_code_decides_not_event_name(tmp_path: Path) -> None:
    green_failed = {**gate("2026-09-19T08:30:00.000Z"), "event": "orchestrator.quality_gate.failed"}
    missing_code = gate("2026-09-19T09:30:00.000Z", None)
    root = write_ledger(tmp_path / "a", [session()], [green_failed])
    assert score_v1(root)["verification-evidence"]["status"] == "pass"
    root = write_ledger(tmp_path / "b", [session()], [missing_code])
    assert score_v1(root)["verification-evidence"]["status"] == "fail"


def test_ve_window_is_inclusive_at_both_ends(tmp_path: Path) -> None:
    events = [gate("2026-09-19T08:00:00.000Z"), gate("2026-09-19T10:00:00.000Z", 2)]
    ve = score_v1(write_ledger(tmp_path, [session()], events))["verification-evidence"]
    assert ve["status"] == "fail" and "2 quality_gate event(s)" in ve["evidence"]


def test_ve_events_outside_window_do_not_count(tmp_path: Path) -> None:
    events = [gate("2026-09-19T07:59:59.999Z", 1), gate("2026-09-19T10:00:00.001Z", 1)]
    ve = score_v1(write_ledger(tmp_path, [session()], events))["verification-evidence"]
    assert ve["status"] == "cannot-determine"  # files changed, no gate in the window


# -- 2. plan-fidelity --------------------------------------------------------------------------


def _eff(**eff: Any) -> dict[str, Any]:
    return session(effectiveness=eff)


def test_pf_row1_rate_at_threshold_passes_with_score(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [_eff(completion_rate=0.8, planned_issues=5)], [noise()])
    pf = score_v1(root)["plan-fidelity"]
    assert (pf["status"], pf["score"]) == ("pass", 0.8)
    assert pf["evidence"].startswith("completion_rate=0.8 (v1 threshold:")
    assert "carryover=n/a, carryover_ratio=n/a." in pf["evidence"]


def test_pf_row2_rate_below_threshold_fails_with_score(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [_eff(completion_rate=0.79, planned_issues=5)], [noise()])
    pf = score_v1(root)["plan-fidelity"]
    assert (pf["status"], pf["score"]) == ("fail", 0.79)


def test_pf_row3_no_rate_no_planned_not_applicable(tmp_path: Path) -> None:
    for i, eff in enumerate([{}, {"planned_issues": 0}]):
        root = write_ledger(tmp_path / str(i), [session(effectiveness=eff)], [noise()])
        pf = score_v1(root)["plan-fidelity"]
        assert (pf["status"], pf["score"]) == ("not-applicable", None)
        assert "score" in pf  # the key is present, its value null


def test_pf_row4_no_rate_planned_positive_cannot_determine(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [_eff(planned_issues=3)], [noise()])
    pf = score_v1(root)["plan-fidelity"]
    assert (pf["status"], pf["score"]) == ("cannot-determine", None)
    assert pf["evidence"].startswith("planned_issues=3 but effectiveness.completion_rate")


def test_pf_rate_that_is_not_a_number_is_absent(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [_eff(completion_rate="1", planned_issues=2)], [noise()])
    assert score_v1(root)["plan-fidelity"]["status"] == "cannot-determine"


def test_pf_only_plan_fidelity_carries_a_score(tmp_path: Path) -> None:
    scored = score_v1(write_ledger(tmp_path, [session()], [noise()]))
    assert [k for k, d in scored.items() if "score" in d] == ["plan-fidelity"]


# -- 3. gate-health ----------------------------------------------------------------------------


def test_gh_row1_peer_overlap_cannot_determine(tmp_path: Path) -> None:
    events = [gate("2026-09-19T09:50:00.000Z", variant="full-gate")]
    gh = score_v1(write_ledger(tmp_path, [session(), PEER], events))["gate-health"]
    assert gh["status"] == "cannot-determine"
    assert "window contaminated by 1 overlapping session(s) — full-gate events" in gh["evidence"]


def test_gh_row2_no_full_gate_no_waves_not_applicable(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session(total_waves=0, waves=[])], [noise()])
    gh = score_v1(root)["gate-health"]
    assert gh["status"] == "not-applicable"
    assert "0 full-gate events and no waves ran" in gh["evidence"]


def test_gh_row2_total_waves_zero_wins_over_a_waves_array(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session(total_waves=0)], [noise()])
    assert score_v1(root)["gate-health"]["status"] == "not-applicable"


def test_gh_row2_waves_missing_counts_as_no_waves(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session(waves=None)], [noise()])
    assert score_v1(root)["gate-health"]["status"] == "not-applicable"


def test_gh_row3_no_full_gate_waves_ran_cannot_determine(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session()], [gate("2026-09-19T08:30:00.000Z")])
    gh = score_v1(root)["gate-health"]
    assert gh["status"] == "cannot-determine"
    assert "2 wave(s) ran but 0 full-gate events in window" in gh["evidence"]


def test_gh_row4_last_full_gate_green_pass(tmp_path: Path) -> None:
    events = [
        gate("2026-09-19T08:30:00.000Z", 1, "full-gate"),
        gate("2026-09-19T09:50:00.000Z", 0, "full-gate"),
    ]
    gh = score_v1(write_ledger(tmp_path, [session()], events))["gate-health"]
    assert gh["status"] == "pass"
    assert gh["evidence"].endswith("2 full-gate event(s) in window; last exit_code=0.")


def test_gh_row5_last_full_gate_red_fail(tmp_path: Path) -> None:
    events = [
        gate("2026-09-19T08:30:00.000Z", 0, "full-gate"),
        gate("2026-09-19T09:50:00.000Z", 2, "full-gate"),
    ]
    gh = score_v1(write_ledger(tmp_path, [session()], events))["gate-health"]
    assert gh["status"] == "fail" and gh["evidence"].endswith("last exit_code=2.")


def test_gh_last_is_by_timestamp_not_file_order(tmp_path: Path) -> None:
    events = [
        gate("2026-09-19T09:50:00.000Z", 0, "full-gate"),
        gate("2026-09-19T08:30:00.000Z", 1, "full-gate"),
    ]
    assert score_v1(write_ledger(tmp_path, [session()], events))["gate-health"]["status"] == "pass"


def test_gh_equal_timestamps_earlier_line_wins(tmp_path: Path) -> None:
    events = [
        gate("2026-09-19T09:50:00.000Z", 3, "full-gate"),
        gate("2026-09-19T09:50:00.000Z", 0, "full-gate"),
    ]
    gh = score_v1(write_ledger(tmp_path, [session()], events))["gate-health"]
    assert gh["status"] == "fail" and gh["evidence"].endswith("last exit_code=3.")


def test_gh_missing_exit_code_on_last_full_gate_fails(tmp_path: Path) -> None:
    events = [gate("2026-09-19T09:50:00.000Z", None, "full-gate")]
    gh = score_v1(write_ledger(tmp_path, [session()], events))["gate-health"]
    assert gh["status"] == "fail" and gh["evidence"].endswith("last exit_code=undefined.")


def test_gh_clarification_coordinator_direct_housekeeping_is_no_waves(tmp_path: Path) -> None:
    waves = [{"wave": 1, "role": "Housekeeping", "coordinator_direct": True}]
    root = write_ledger(tmp_path, [session(total_waves=1, waves=waves)], [noise()])
    assert score_v1(root)["gate-health"]["status"] == "not-applicable"


def test_gh_clarification_keys_on_wave_shape_not_session_type(tmp_path: Path) -> None:
    real = session(session_type="housekeeping", total_waves=1, waves=[{"role": "Impl-Core"}])
    mixed = session(
        total_waves=2,
        waves=[
            {"role": "Housekeeping", "coordinator_direct": True},
            {"role": "Impl-Core", "coordinator_direct": True},
        ],
    )
    not_direct = session(total_waves=1, waves=[{"role": "Housekeeping"}])
    for i, rec in enumerate([real, mixed, not_direct]):
        root = write_ledger(tmp_path / str(i), [rec], [noise()])
        assert score_v1(root)["gate-health"]["status"] == "cannot-determine"


# -- 4. process-safety (v1) --------------------------------------------------------------------


def test_ps_v1_row1_events_absent_cannot_determine(tmp_path: Path) -> None:
    ps = score_v1(write_ledger(tmp_path, [session()]))["process-safety"]
    assert ps["status"] == "cannot-determine"
    assert ps["evidence"] == (
        "events.jsonl absent or empty — process-safety signals unmeasurable. " + GUARD_NOTE
    )


def test_ps_v1_row1_events_empty_cannot_determine(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session()], events_text="")
    assert score_v1(root)["process-safety"]["status"] == "cannot-determine"


def test_ps_v1_row2_blocked_in_window_fails(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session()], [guard("2026-09-19T09:00:00.000Z")])
    ps = score_v1(root)["process-safety"]
    assert ps["status"] == "fail"
    assert ps["evidence"].startswith(
        "destructive_guard.blocked=1, agent_summary.spiral=0, loop.warning=0 (all window-attributed)."
    )


def test_ps_v1_row2_spiral_fails(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session(agent_summary={"spiral": 2})], [noise()])
    ps = score_v1(root)["process-safety"]
    assert ps["status"] == "fail" and "agent_summary.spiral=2" in ps["evidence"]


def test_ps_v1_row3_loop_warning_alone_passes(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session()], [guard("2026-09-19T09:00:00.000Z", "loop")])
    ps = score_v1(root)["process-safety"]
    assert ps["status"] == "pass"
    assert "1 loop.warning in window (warn-only, non-blocking)" in ps["evidence"]


def test_ps_v1_row4_no_adverse_signal_passes(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session()], [guard("2026-09-19T11:00:00.000Z")])
    ps = score_v1(root)["process-safety"]  # the blocked event is outside the window
    assert ps["status"] == "pass"
    assert ps["evidence"] == (
        "no adverse process signals in window (0 blocked, 0 spiral, 0 loop.warning). " + GUARD_NOTE
    )


def test_ps_v1_disclosure_always_appended(tmp_path: Path) -> None:
    cases = [[], [noise()], [guard("2026-09-19T09:00:00.000Z")]]
    for i, events in enumerate(cases):
        root = write_ledger(
            tmp_path / str(i), [session()], events, events_text="" if not events else None
        )
        assert GUARD_NOTE in score_v1(root)["process-safety"]["evidence"]


def test_ps_v1_contamination_adds_note_without_downgrade(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session(), PEER], [guard("2026-09-19T09:30:00.000Z")])
    ps = score_v1(root)["process-safety"]
    assert ps["status"] == "fail"  # not downgraded to cannot-determine
    assert ps["evidence"].endswith(
        " NOTE: window overlaps 1 peer session(s); window-attributed counts may include peer "
        "signals."
    )


def test_ps_v1_keeps_non_object_event_lines(tmp_path: Path) -> None:
    root = write_ledger(tmp_path, [session()], events_text="[1, 2]\n42\n")
    assert score_v1(root)["process-safety"]["status"] == "pass"


# -- 5. efficiency-kpis ------------------------------------------------------------------------


def test_ek_always_not_applicable_with_recorded_duration(tmp_path: Path) -> None:
    root = write_ledger(
        tmp_path,
        [session(duration_seconds=5400, total_token_input=10, total_token_output=20)],
        [noise()],
    )
    record = score_session(root, "s1", "rubric-v1", timestamp=TS).to_dict()
    ek = {d["id"]: d for d in record["dimensions"]}["efficiency-kpis"]
    assert ek["status"] == "not-applicable"
    assert record["kpis"] == {
        "duration_seconds": 5400,
        "total_waves": 2,
        "total_agents": 3,
        "token_input": 10,
        "token_output": 20,
        "carryover": 0,
    }
    assert ek["evidence"] == (
        "REPORTED, not graded. duration_seconds=5400 (recorded), total_waves=2, total_agents=3, "
        "token_input=10, token_output=20, carryover=0."
    )


def test_ek_duration_derived_from_window_rounded_half_up(tmp_path: Path) -> None:
    rec = session(completed_at="2026-09-19T08:00:02.500Z")  # 2.5 s: Math.round gives 3
    record = score_session(
        write_ledger(tmp_path, [rec], [noise()]), "s1", "rubric-v1", timestamp=TS
    )
    assert record.to_dict()["kpis"]["duration_seconds"] == 3
    assert "duration_seconds=3 (derived-from-window)" in record.dimensions[-1].evidence


def test_ek_missing_kpis_are_null_never_zero(tmp_path: Path) -> None:
    rec = {"session_id": "s1", "completed_at": "2026-09-19T10:00:00.000Z"}
    record = score_session(
        write_ledger(tmp_path, [rec], [noise()]), "s1", "rubric-v1", timestamp=TS
    )
    assert set(record.to_dict()["kpis"].values()) == {None}
    assert "duration_seconds=null (unavailable)" in record.dimensions[-1].evidence


def test_ek_drifted_field_names_are_not_converted(tmp_path: Path) -> None:
    rec = session(duration_minutes=60, agents=4, total_agents=None, started_at=None)
    kpis = score_session(
        write_ledger(tmp_path, [rec], [noise()]), "s1", "rubric-v1", timestamp=TS
    ).to_dict()["kpis"]
    assert kpis["duration_seconds"] is None and kpis["total_agents"] is None


def test_ek_non_finite_kpi_is_null(tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    line = json.dumps(session()).replace('"total_waves": 2', '"total_waves": 1e400')
    (root / "sessions.jsonl").write_text(line + "\n")
    (root / "events.jsonl").write_text(json.dumps(noise()) + "\n")
    record = score_session(root, "s1", "rubric-v1", timestamp=TS)
    assert record.to_dict()["kpis"]["total_waves"] is None
    assert "total_waves=Infinity" in record.dimensions[-1].evidence


def test_ek_negative_kpi_is_not_a_measurement(tmp_path: Path) -> None:
    rec = session(total_waves=-3, duration_seconds=-7200, effectiveness={"carryover": -2})
    record = score_session(
        write_ledger(tmp_path, [rec], [noise()]), "s1", "rubric-v1", timestamp=TS
    )
    kpis = record.to_dict()["kpis"]
    assert (kpis["total_waves"], kpis["duration_seconds"], kpis["carryover"]) == (None, None, None)
    # the evidence quotes what the ledger says, as the reference engine does
    assert "duration_seconds=-7200 (recorded), total_waves=-3," in record.dimensions[-1].evidence
