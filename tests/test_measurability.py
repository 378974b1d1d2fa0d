"""Measurability: was a signal measured for a record, and why not (evalkit.analyses.measurability).

The real April 2026 ledger (``../shared/conformance/real/ledger-2026-04-13-*``) is the case the
helper exists for: 47 events, all ``subagent_stop``, no gate telemetry, every session before
guard emission began. Small ledgers written here pin each rule on its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit.analyses import measurability as m
from tests.real_ledgers import journaled_real_ledger

GATES = "no quality_gate event anywhere in events.jsonl: 47 events, all subagent_stop"
GUARDS = "guard emission began 2026-07-16; the session started before it"


def _records(metrics_dir: Path) -> list[dict[str, Any]]:
    lines = (metrics_dir / "eval.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def april(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return journaled_real_ledger(
        "ledger-2026-04-13",
        tmp_path_factory.mktemp("april") / "metrics",
        ("rubric-v1", "rubric-v2"),
    )


def test_the_april_profile_names_what_events_jsonl_holds(april: Path) -> None:
    profile = m.ledger_profile(april)
    assert profile.sessions == 10 and profile.events == 47
    assert dict(profile.events_by_type) == {"subagent_stop": 47}
    assert not profile.has_gate_telemetry and profile.gate_events == profile.guard_events == 0
    assert profile.events_text() == "47 events, all subagent_stop"
    assert profile.gate_cause() == GATES
    # sessions.jsonl writes +02:00 offsets: 16:00+02:00 is 14:00Z
    assert profile.first_start == "2026-04-07T14:00:00.000Z"
    assert profile.last_end == "2026-04-13T07:15:00.000Z"
    assert profile.to_dict()["name"] == "metrics"  # never the machine path


@pytest.mark.parametrize("rubric", ["rubric-v1", "rubric-v2"])
def test_april_guard_and_gate_signals_are_unmeasured_with_their_cause(
    april: Path, rubric: str
) -> None:
    profile = m.ledger_profile(april)
    rms = [
        m.record_measurability(r, profile) for r in _records(april) if r["rubric_version"] == rubric
    ]
    assert len(rms) == 10

    def unmeasured(signal: str) -> m.Unmeasured:
        return m.tally(rm.of(signal) for rm in rms)

    for signal in ("fact:guard_blocked", "fact:guard_blocked_conspicuous"):
        assert unmeasured(signal).to_dict() == {
            "unmeasured": 10,
            "of": 10,
            "reasons": [{"reason": GUARDS, "count": 10}],
        }
    for signal in (
        "fact:changes_unverified",
        "fact:gate_runs_total",
        "dimension:verification-evidence",
        "dimension:gate-health",
    ):
        assert unmeasured(signal).reasons == ((GATES, 10),), signal
    # the facts themselves stay as rubric-v2 defines them: files changed, zero gate runs
    assert all(rm.facts["changes_unverified"] is True for rm in rms)
    assert all(rm.verdict.status == "fail" and rm.verdict.rule == 6 for rm in rms)
    assert unmeasured(m.RULE_JUDGE).text() == (
        f"10 of 10 records unmeasured: rule 6 fires on changes_unverified, unmeasured: {GATES}"
    )
    # spiral and plan-fidelity come from sessions.jsonl: measured
    assert unmeasured("fact:spiral").count == 0
    assert unmeasured("dimension:plan-fidelity").count == 0
    ps = unmeasured("dimension:process-safety")
    if rubric == "rubric-v1":  # v1's pass rests on guard silence before guards spoke
        assert ps.reasons == ((GUARDS, 10),)
        assert unmeasured("fact:guard_blocked").count == 10
    else:  # v2 grades spiral only
        assert ps.count == 0
        assert unmeasured("dimension:guard-friction").reasons == ((GUARDS, 10),)


def _ledger(
    root: Path,
    *,
    started: str = "2026-08-01T10:00:00Z",
    files: int = 5,
    spiral: int = 0,
    events: list[dict[str, Any]] | None = None,
) -> Path:
    root.mkdir(parents=True)
    session = {
        "session_id": "s1",
        "status": "completed",
        "started_at": started,
        "completed_at": started.replace("10:00", "11:00"),
        "total_files_changed": files,
        "total_waves": 1,
        "waves": [{"wave": 1, "role": "Impl", "agent_count": 1}],
        "agent_summary": {"complete": 1, "spiral": spiral},
        "effectiveness": {"planned_issues": 1, "completed": 1, "completion_rate": 1.0},
    }
    (root / "sessions.jsonl").write_text(json.dumps(session) + "\n", encoding="utf-8")
    if events is not None:
        text = "".join(json.dumps(e) + "\n" for e in events)
        (root / "events.jsonl").write_text(text, encoding="utf-8")
    return root


NOISE = [{"event": "subagent_stop", "timestamp": "2026-08-01T10:30:00Z"}]
GATE = {
    "event": "orchestrator.quality_gate.passed",
    "timestamp": "2026-08-01T10:40:00Z",
    "variant": "full-gate",
    "exit_code": 0,
}


def _measure(root: Path, rubric: str = "rubric-v2") -> m.RecordMeasurability:
    record = evalkit.score_session(root, rubric=rubric, timestamp="2026-12-01T00:00:00.000Z")
    return m.record_measurability(record.to_dict(), m.ledger_profile(root))


def test_a_spiral_fails_rule_6_measurably_without_gate_telemetry(tmp_path: Path) -> None:
    rm = _measure(_ledger(tmp_path / "m", spiral=2, events=NOISE))
    assert rm.verdict.status == "fail" and rm.verdict.rule == 6
    assert rm.of(m.RULE_JUDGE) == m.MEASURED  # spiral is a measured deviation
    assert not rm.of("fact:changes_unverified").measured


def test_with_gate_telemetry_the_gate_signals_are_measured(tmp_path: Path) -> None:
    rm = _measure(_ledger(tmp_path / "m", events=[*NOISE, GATE]))
    for signal in ("fact:gate_runs_total", "fact:changes_unverified", m.RULE_JUDGE):
        assert rm.of(signal) == m.MEASURED, signal
    assert rm.of("dimension:verification-evidence").measured
    # after 2026-07-16 a zero guard count is a measurement
    assert rm.facts["guard_blocked"] == 0 and rm.of("fact:guard_blocked").measured


def test_nothing_changed_is_measured_even_in_the_third_state(tmp_path: Path) -> None:
    rm = _measure(_ledger(tmp_path / "m", files=0))  # no events.jsonl at all
    assert rm.facts["changes_unverified"] is False
    assert rm.of("fact:changes_unverified") == m.MEASURED
    assert rm.of("dimension:verification-evidence") == m.MEASURED  # not-applicable: structural
    third = rm.of("fact:gate_runs_total")
    assert not third.measured and third.reason == "no telemetry: no events.jsonl"
    assert rm.of("fact:spiral").reason is not None and "third state" in rm.of("fact:spiral").reason


def test_a_session_the_ledger_cannot_date_is_not_placed_after_guard_emission(
    tmp_path: Path,
) -> None:
    root = _ledger(tmp_path / "m", events=[*NOISE, GATE])
    record = evalkit.score_session(root, timestamp="2026-12-01T00:00:00.000Z").to_dict()
    undated = m.ledger_profile(root)
    undated = m.LedgerProfile(**{**undated.__dict__, "session_starts": {}})
    got = m.record_measurability(record, undated).of("fact:guard_blocked")
    assert got == m.Measurability(
        False, "guard emission began 2026-07-16; the session's start is unknown in the ledger"
    )
    # without a ledger, the record's own timestamp bounds the start: after the date, measured
    assert m.measurability(record, "fact:guard_blocked") == m.MEASURED
    early = {**record, "timestamp": "2026-05-01T00:00:00.000Z"}
    assert m.measurability(early, "fact:guard_blocked").reason == GUARDS


def test_the_preset_is_measurable_throughout(tmp_path: Path) -> None:
    from evalkit.simulate import build_preset

    ledger = build_preset(tmp_path / "m")
    profile = m.ledger_profile(ledger.metrics_dir)
    assert profile.has_gate_telemetry and profile.guard_events > 0
    rms = [m.record_measurability(r, profile) for r in _records(ledger.metrics_dir)]
    assert len(rms) == 40
    # every fact's source existed (a missing number, e.g. a contaminated window, has its own
    # reason), and every dimension's status is a measurement
    for fact in m.FACT_SIGNALS:
        assert m.tally(rm.source(m.fact_signal(fact)) for rm in rms).count == 0, fact
    assert all(rm.of(s).measured for rm in rms for s in rm.signals if s.startswith("dimension:"))
    contaminated = m.tally(rm.of("fact:changes_unverified") for rm in rms)
    assert contaminated.reasons == (
        ("the window is shared with peer sessions: gate events cannot be attributed", 5),
    )


def test_tally_groups_reasons_and_says_nothing_when_all_were_measured() -> None:
    t = m.tally([m.MEASURED, m.Measurability(False, "a"), m.Measurability(False, "b")] * 2)
    assert (t.count, t.total, t.measured) == (4, 6, 2)
    assert t.text("sessions") == "4 of 6 sessions unmeasured: a (2); b (2)"
    assert m.tally([m.MEASURED]).text() == ""
    assert m.tally([]).to_dict() == {"unmeasured": 0, "of": 0, "reasons": []}
