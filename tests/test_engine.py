"""score_session's record (SPEC section 2): identity, provenance, model, harness, parameters."""

from __future__ import annotations

import hashlib
import json
import re
import socket
from pathlib import Path

import pytest
from test_rubric_v1_rows import noise, session, write_ledger

import evalkit
from evalkit.errors import ValidationError, VersionMismatchError
from evalkit.record.dimension import NO_SCORE, Dimension, Method, Status
from evalkit.rubrics import RUBRIC_VERSIONS, get_rubric
from evalkit.scoring.engine import (
    SAMPLE_METRICS_DIR,
    EvalRecord,
    build_run_id,
    score_ledger,
    score_session,
)

TS = "2026-10-01T00:00:00.000Z"


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    started = {
        "timestamp": "2026-09-19T08:00:00.000Z",
        "event": "orchestrator.session.started",
        "host_class": "linux-x64",
    }
    return write_ledger(tmp_path, [session()], [started, noise()])


def test_public_names_are_exported() -> None:
    assert evalkit.score_session is score_session
    assert evalkit.EvalRecord is EvalRecord
    assert callable(evalkit.score_ledger) and callable(evalkit.resolve_session)


def test_record_has_every_top_level_field_in_order(ledger: Path) -> None:
    record = score_session(ledger, timestamp=TS).to_dict()
    assert list(record) == [
        "schema_version",
        "record_kind",
        "run_id",
        "session_id",
        "standard_version",
        "rubric_version",
        "provenance",
        "model",
        "harness",
        "kpis",
        "dimensions",
        "handle",
        "anonymized",
        "timestamp",
    ]
    assert record["schema_version"] == 1
    assert record["record_kind"] == "session-eval"
    assert record["standard_version"] == "aiat-llm-eval/1.0"
    assert record["run_id"] == "s1-eval-20261001T000000000Z"
    assert record["timestamp"] == TS
    json.dumps(record, allow_nan=False)  # JSON-ready: no NaN/Infinity anywhere


def test_record_passes_the_record_validator(ledger: Path) -> None:
    from evalkit.record.contract import validate_record

    for version in RUBRIC_VERSIONS:
        validate_record(score_session(ledger, rubric=version, timestamp=TS).to_dict())


def test_run_id_comes_from_the_timestamp_parameter_not_the_clock(ledger: Path) -> None:
    a = score_session(ledger, timestamp="2026-09-30T12:34:56.789Z")
    b = score_session(ledger, timestamp="2026-09-30T12:34:56.789Z")
    assert a.run_id == b.run_id == "s1-eval-20260930T123456789Z"
    assert build_run_id("x", "2026-09-30T12:34:56.789+02:00") == "x-eval-20260930T123456789+0200"


def test_default_timestamp_is_now_in_to_iso_string_form(ledger: Path) -> None:
    record = score_session(ledger)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", record.timestamp)


def test_invalid_timestamp_is_a_validation_error(ledger: Path) -> None:
    with pytest.raises(ValidationError, match="timestamp"):
        score_session(ledger, timestamp="yesterday")


def test_provenance_hashes_the_rubric_text(ledger: Path) -> None:
    for version in RUBRIC_VERSIONS:
        rubric = get_rubric(version)
        assert rubric.text_path.name == f"{version}.md"
        digest = hashlib.sha256(rubric.text_path.read_bytes()).hexdigest()
        record = score_session(ledger, rubric=version, timestamp=TS).to_dict()
        assert record["provenance"]["rubric_sha256"] == digest == rubric.sha256
        commit = record["provenance"]["engine_commit"]
        assert commit is None or re.fullmatch(r"[0-9a-f]{40}", commit)
    assert get_rubric("rubric-v1").sha256 != get_rubric("rubric-v2").sha256


def test_packaged_rubric_texts_are_byte_identical_to_the_repository_texts() -> None:
    from evalkit.rubrics.registry import PACKAGED_TEXT_DIR, RUBRIC_TEXT_DIR

    for version in RUBRIC_VERSIONS:
        repo = (RUBRIC_TEXT_DIR / f"{version}.md").read_bytes()
        assert (PACKAGED_TEXT_DIR / f"{version}.md").read_bytes() == repo, version


def test_rubric_registry() -> None:
    assert RUBRIC_VERSIONS == ("rubric-v1", "rubric-v2")
    assert len(get_rubric("rubric-v1").dimension_ids) == 5
    assert get_rubric("rubric-v2").dimension_ids[4] == "guard-friction"
    with pytest.raises(VersionMismatchError, match="rubric-v9"):
        get_rubric("rubric-v9")


def test_model_defaults_and_overrides(ledger: Path) -> None:
    record = score_session(ledger, timestamp=TS).to_dict()
    assert record["model"] == {"id": "unknown", "source": "self-report"}
    record = score_session(ledger, timestamp=TS, model_id="m-1", model_source="config").to_dict()
    assert record["model"] == {"id": "m-1", "source": "config"}
    with pytest.raises(ValidationError, match=r"model\.source"):
        score_session(ledger, timestamp=TS, model_source="guess")


def test_harness_never_stores_a_clear_hostname(ledger: Path) -> None:
    harness = score_session(ledger, timestamp=TS).to_dict()["harness"]
    expected = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:16]
    assert harness["hostname_hash"] == expected
    assert socket.gethostname() not in json.dumps(harness) or socket.gethostname() == expected
    assert harness["plugin_version"] == evalkit.__version__
    assert harness["host_class"] == "linux-x64"  # from the session.started event at started_at


def test_handle_and_anonymized(ledger: Path) -> None:
    assert score_session(ledger, timestamp=TS).to_dict()["anonymized"] is True
    record = score_session(ledger, timestamp=TS, handle="ada").to_dict()
    assert (record["handle"], record["anonymized"]) == ("ada", False)


def test_score_key_absent_versus_null() -> None:
    assert "score" not in Dimension("x", Method.DETERMINISTIC, Status.PASS, "e").to_dict()
    assert Dimension("x", Method.DETERMINISTIC, Status.PASS, "e").score is NO_SCORE
    dim = Dimension("x", Method.DETERMINISTIC, Status.NOT_APPLICABLE, "e", score=None)
    assert dim.to_dict()["score"] is None
    assert (
        Dimension("x", Method.DETERMINISTIC, Status.PASS, "e", score=float("inf")).to_dict()[
            "score"
        ]
        is None
    )


def test_non_finite_completion_rate_scores_null_but_still_decides(tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    line = json.dumps(session()).replace('"completion_rate": 1', '"completion_rate": 1e400')
    (root / "sessions.jsonl").write_text(line + "\n")
    (root / "events.jsonl").write_text(json.dumps(noise()) + "\n")
    pf = score_session(root, timestamp=TS).to_dict()["dimensions"][1]
    assert (pf["status"], pf["score"]) == ("pass", None)
    assert pf["evidence"].startswith("completion_rate=Infinity ")


def test_garbage_values_never_crash_and_are_not_guessed(tmp_path: Path) -> None:
    rec = session(
        total_waves="3",
        total_files_changed=[1],
        agent_summary={"spiral": "2"},
        effectiveness="high",
        waves={"a": 1},
        duration_seconds="60",
    )
    root = write_ledger(tmp_path, [rec], ["x", {"event": 5, "timestamp": {}}, noise()])
    record = score_session(root, "s1", timestamp=TS).to_dict()
    assert record["kpis"]["total_waves"] is None and record["kpis"]["duration_seconds"] == 7200
    by_id = {d["id"]: d for d in record["dimensions"]}
    assert by_id["process-safety"]["status"] == "fail"  # "2" > 0 in the reference's JavaScript
    assert by_id["plan-fidelity"]["status"] == "not-applicable"
    assert (
        "total_files_changed=n/a — verification evidence unavailable."
        in by_id["verification-evidence"]["evidence"]
    )
    assert "LEDGER INCOMPLETE: 1 unreadable line(s)" in by_id["guard-friction"]["evidence"]


def test_sample_ledger_scores(tmp_path: Path) -> None:
    frame = score_ledger(SAMPLE_METRICS_DIR)
    assert frame["session_id"].nunique() == 6
    assert set(frame["status"]) <= {s.value for s in Status}
    record = score_session(SAMPLE_METRICS_DIR, timestamp=TS)
    assert record.resolution is not None
    assert (record.session_id, record.resolution.resolved_via) == (
        "spike-2026-09-22-session-5",
        "cascade-fallback",
    )


def test_integral_numbers_past_2_53_are_written_as_the_reference_writes_them(
    tmp_path: Path,
) -> None:
    # JSON.parse gives the double 1.2345678901234568e20; the reference's JSON.stringify
    # writes it as 123456789012345680000 (Node v20.20), and that is what a vector holds.
    big = 123456789012345678901
    rec = session(
        total_token_input=big,
        effectiveness={"planned_issues": 2, "completion_rate": big, "carryover": big},
    )
    root = write_ledger(tmp_path, [rec], [noise()])
    for rubric in RUBRIC_VERSIONS:
        record = score_session(root, "s1", rubric, timestamp=TS).to_dict()
        assert record["kpis"]["token_input"] == 123456789012345680000
        assert record["kpis"]["carryover"] == 123456789012345680000
        plan = next(d for d in record["dimensions"] if d["id"] == "plan-fidelity")
        assert plan["score"] == 123456789012345680000
        text = json.dumps(record)
        assert '"token_input": 123456789012345680000' in text
        assert '"score": 123456789012345680000' in text
