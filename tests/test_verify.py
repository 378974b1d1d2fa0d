"""Offline re-verify: round trip over the conformance cases, drift, version mismatch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import require_shared
from record_factory import JUDGE_DIM, TIMESTAMP

import evalkit
from evalkit.errors import EvalkitError
from evalkit.journal import reader as journal
from evalkit.record.seal import seal_record
from evalkit.rubrics import registry
from evalkit.verify.rescore import DriftKind, VerifyOutcome, evidence_tokens, verify_record

RUBRICS = ("rubric-v1", "rubric-v2")


def _cases_with_record(corpus: str = "public") -> list[tuple[Path, str, str | None]]:
    """(case dir, rubric, explicit session or None) for every case of a corpus with a record."""
    root = require_shared("conformance", corpus)
    cases = []
    for case in sorted(p for p in root.iterdir() if p.is_dir()):
        args = json.loads((case / "args.json").read_text(encoding="utf-8"))
        for rubric in RUBRICS:
            expected = json.loads((case / f"expected-{rubric[-2:]}.json").read_text("utf-8"))
            if expected["record"] is not None:
                cases.append((case, rubric, args.get("session")))
    return cases


def _score_and_journal(
    metrics_dir: Path, journal_path: Path, rubric: str = "rubric-v2", session: str | None = None
) -> dict[str, Any]:
    rec = evalkit.score_session(
        metrics_dir,
        session_id=session,
        rubric=rubric,
        timestamp=TIMESTAMP,
        model_id="claude-test-model",
        model_source="config",
        handle="tester",
    )
    return journal.append(journal_path, rec.to_dict())


@pytest.mark.parametrize(("corpus", "minimum"), [("public", 124), ("real", 76)])
def test_round_trip_every_case_with_a_record(corpus: str, minimum: int, tmp_path: Path) -> None:
    """score -> journal -> verify agrees (exit 0) for every case with a record, at both rubrics."""
    cases = _cases_with_record(corpus)
    # public: 66 cases, 62 with a record (4 resolution errors), at two rubric versions
    assert len(cases) >= minimum
    outcomes: dict[str, list[str]] = {"agreement": [], "other": []}
    for index, (case, rubric, session) in enumerate(cases):
        journal_path = tmp_path / f"eval-{index}.jsonl"  # the shared folder is never written
        stored = _score_and_journal(case, journal_path, rubric, session)
        result = verify_record(stored["run_id"], case, journal_path=journal_path)
        key = "agreement" if result.exit_code == 0 else "other"
        outcomes[key].append(f"{case.name}/{rubric}: {result.lines()}")
        assert result.verified_dimensions == tuple(d["id"] for d in stored["dimensions"])
        assert result.wording == ()
    assert outcomes["other"] == []
    assert len(outcomes["agreement"]) == len(cases)


@pytest.fixture
def metrics(tmp_path: Path) -> Path:
    """A private copy of a conformance ledger (two gates, a full gate, tokens, a plan)."""
    source = require_shared("conformance", "public", "random-20260919-002")
    target = tmp_path / "metrics"
    shutil.copytree(source, target)
    return target


def _rewrite_journal(path: Path, change: Any, *, reseal: bool = True) -> None:
    """Tamper with the stored record the way an editor would: rewrite its line in place.
    ``reseal`` (default): recompute its seal too, as a forger could (so what is shown is what
    re-scoring alone catches), or as the writer of a record that really says so would."""
    rec = json.loads(path.read_text(encoding="utf-8"))
    change(rec)
    path.write_text(json.dumps(seal_record(rec) if reseal else rec) + "\n", encoding="utf-8")


def _dim(rec: dict[str, Any], dim_id: str) -> dict[str, Any]:
    return next(d for d in rec["dimensions"] if d["id"] == dim_id)


def test_tampered_status_is_drift_naming_dimension_and_field(metrics: Path) -> None:
    stored = _score_and_journal(metrics, metrics / "eval.jsonl")
    original = _dim(stored, "plan-fidelity")["status"]
    flipped = "pass" if original != "pass" else "fail"
    _rewrite_journal(
        metrics / "eval.jsonl", lambda r: _dim(r, "plan-fidelity").update(status=flipped)
    )
    result = verify_record(stored["run_id"], metrics)
    assert result.outcome is VerifyOutcome.DRIFT and result.exit_code == 1
    assert [(d.dimension, d.field) for d in result.drifts] == [("plan-fidelity", "status")]
    assert result.verdicts_changed == ("plan-fidelity",)
    assert result.lines()[0] == (
        f"drift: {stored['run_id']}: 1 difference(s) [verdict]; VERDICT CHANGED: plan-fidelity"
    )
    assert result.lines()[1] == (
        f"drift [verdict]: dimension plan-fidelity field status: stored {flipped!r}, "
        f"re-scored {original!r}"
    )


def test_tampered_score_kpi_and_evidence_number_each_drift(metrics: Path) -> None:
    stored = _score_and_journal(metrics, metrics / "eval.jsonl")
    plan = _dim(stored, "plan-fidelity")
    assert plan["score"] is not None and "completion_rate=" in plan["evidence"]

    def tamper(rec: dict[str, Any]) -> None:
        _dim(rec, "plan-fidelity")["score"] = 0.99
        rec["kpis"]["total_agents"] = 99
        dim = _dim(rec, "plan-fidelity")
        dim["evidence"] = dim["evidence"].replace("completion_rate=", "completion_rate=9", 1)

    _rewrite_journal(metrics / "eval.jsonl", tamper)
    result = verify_record(stored["run_id"], metrics)
    kinds = {(d.dimension, d.field): d.kind for d in result.drifts}
    assert kinds[("kpis", "total_agents")] is DriftKind.KPI
    assert kinds[("plan-fidelity", "score")] is DriftKind.SCORE
    assert kinds[("plan-fidelity", "evidence")] is DriftKind.EVIDENCE_VALUES
    assert kinds[("plan-fidelity", "evidence (fact completion_rate)")] is DriftKind.EVIDENCE_VALUES
    assert result.exit_code == 1
    assert result.verdicts_changed == ()
    assert result.lines()[0].endswith("; no verdict changed")
    assert all(line.startswith("drift [") for line in result.lines()[1 : 1 + len(kinds)])


def test_wording_only_difference_is_drift_classified_as_wording(metrics: Path) -> None:
    """Finding 5: evidence reworded with the same numbers was 'wording only (not drift)'."""
    stored = _score_and_journal(metrics, metrics / "eval.jsonl")
    _rewrite_journal(
        metrics / "eval.jsonl",
        lambda r: _dim(r, "efficiency-kpis").update(
            evidence=_dim(r, "efficiency-kpis")["evidence"].replace(
                "REPORTED, not graded", "Reported only"
            )
        ),
    )
    result = verify_record(stored["run_id"], metrics)
    assert result.outcome is VerifyOutcome.DRIFT and result.exit_code == 1
    assert [(w.dimension, w.kind) for w in result.wording] == [
        ("efficiency-kpis", DriftKind.EVIDENCE_WORDING)
    ]
    assert result.lines()[1].startswith(
        "drift [evidence-wording]: dimension efficiency-kpis field evidence: "
    )


def test_a_judge_dimension_without_its_judge_is_checked_against_the_contract(
    metrics: Path,
) -> None:
    """An older writer's judge dimension (no judge block, so no run log to re-derive it from)
    is checked against the judge writer's contract, and never called an agreement."""
    scored = evalkit.score_session(metrics, timestamp=TIMESTAMP).to_dict()
    judge = dict(JUDGE_DIM, status="fail")
    scored["dimensions"].append(judge)
    stored = journal.append(metrics / "eval.jsonl", scored)
    result = verify_record(stored["run_id"], metrics)
    assert result.outcome is VerifyOutcome.JUDGE_LOG_MISSING and result.exit_code == 1
    assert result.drifts == (), result.lines()
    assert "written without its judge (no judge block, no run log)" in " ".join(result.notes)
    assert result.unverified_dimensions == ("instruction-adherence",)
    assert "instruction-adherence" not in result.verified_dimensions
    assert (
        "judge dimensions (advisory; re-derived from their run log, or checked against the "
        "judge contract when they name none): instruction-adherence"
    ) in result.lines()


def test_unknown_rubric_version_is_a_version_mismatch_not_drift(metrics: Path) -> None:
    stored = _score_and_journal(metrics, metrics / "eval.jsonl")
    # written by an evalkit that knew rubric-v9 and its text (sealed as such)
    text = "9" * 64

    def v9(rec: dict[str, Any]) -> None:
        rec.update(rubric_version="rubric-v9")
        rec["provenance"]["rubric_sha256"] = text

    _rewrite_journal(metrics / "eval.jsonl", v9)
    result = verify_record(stored["run_id"], metrics)
    assert result.outcome is VerifyOutcome.VERSION_MISMATCH and result.exit_code == 3
    assert result.drifts == ()
    assert "'rubric-v9' is unknown to this evalkit" in result.mismatch
    assert text in result.mismatch


def test_changed_rubric_file_is_a_version_mismatch_with_both_hashes(
    metrics: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = _score_and_journal(metrics, metrics / "eval.jsonl")
    edited = tmp_path / "rubrics"
    shutil.copytree(registry.RUBRIC_TEXT_DIR, edited)  # rubrics/*.md themselves stay untouched
    with (edited / "rubric-v2.md").open("a", encoding="utf-8") as fh:
        fh.write("\nAn edit after the first scored run.\n")
    monkeypatch.setattr(registry, "RUBRIC_TEXT_DIR", edited)
    result = verify_record(stored["run_id"], metrics)
    assert result.exit_code == 3 and result.drifts == ()
    old, new = stored["provenance"]["rubric_sha256"], result.current_sha256
    assert new is not None and new != old
    assert result.mismatch == (
        f"rubric text changed: rubric-v2 was scored against rubric_sha256 {old}, "
        f"but the current rubric file rubric-v2.md hashes to {new}"
    )


def test_stored_hash_not_matching_current_text_is_a_version_mismatch(metrics: Path) -> None:
    stored = _score_and_journal(metrics, metrics / "eval.jsonl")
    # written by an evalkit whose rubric text hashed otherwise (sealed as such)
    _rewrite_journal(
        metrics / "eval.jsonl",
        lambda r: r["provenance"].update(rubric_sha256="0" * 64),
    )
    result = verify_record(stored["run_id"], metrics)
    assert result.exit_code == 3
    assert "0" * 64 in result.mismatch and stored["provenance"]["rubric_sha256"] in result.mismatch


def test_verify_accepts_a_record_dict(metrics: Path) -> None:
    rec = evalkit.score_session(metrics, timestamp=TIMESTAMP).to_dict()
    assert verify_record(rec, metrics).exit_code == 0
    rec["dimensions"][0]["status"] = "fail" if rec["dimensions"][0]["status"] != "fail" else "pass"
    result = verify_record(rec, metrics)
    # the edit, and the seal it broke (the dict was changed after the engine wrote it)
    assert [(d.dimension, d.field, d.kind) for d in result.drifts] == [
        (rec["dimensions"][0]["id"], "status", DriftKind.VERDICT),
        ("record", "provenance.record_sha256", DriftKind.SEAL),
    ]
    assert "changed after it was written" in result.drifts[1].detail
    resealed = verify_record(seal_record(rec), metrics)  # re-scoring alone still catches it
    assert [d.kind for d in resealed.drifts] == [DriftKind.VERDICT]


def test_unknown_run_id_and_missing_journal_are_user_errors(metrics: Path) -> None:
    with pytest.raises(EvalkitError, match="no journal"):
        verify_record("nope-eval-1", metrics)
    _score_and_journal(metrics, metrics / "eval.jsonl")
    with pytest.raises(EvalkitError, match="unknown run id 'nope-eval-1'"):
        verify_record("nope-eval-1", metrics)


def test_duplicate_copies_are_noted(metrics: Path) -> None:
    stored = _score_and_journal(metrics, metrics / "eval.jsonl")
    journal.append(metrics / "eval.jsonl", stored)
    result = verify_record(stored["run_id"], metrics)
    assert result.exit_code == 0
    assert result.notes == ("run id appears 2 times (lines 1, 2); verifying the last",)


def test_evidence_tokens_keep_numbers_and_null_markers() -> None:
    text = "duration_seconds=null (unavailable), total_waves=3, carryover_ratio=n/a, rate=0.75, x=1e+21."
    assert evidence_tokens(text) == ["null", "3", "n/a", "0.75", "1e+21"]


def test_run_id_not_built_from_session_and_timestamp_is_drift(metrics: Path) -> None:
    """Finding 5: a run_id that does not match session_id + timestamp was only a note."""
    rec = evalkit.score_session(metrics, timestamp=TIMESTAMP).to_dict()
    expected = rec["run_id"]
    rec["run_id"] = "custom-run-1"
    journal.append(metrics / "eval.jsonl", rec)
    result = verify_record("custom-run-1", metrics)
    assert result.exit_code == 1
    assert [(d.dimension, d.field, d.kind) for d in result.drifts] == [
        ("record", "run_id", DriftKind.IDENTITY)
    ]
    assert result.drifts[0].stored == "custom-run-1" and result.drifts[0].rescored == expected


def test_a_line_is_the_engine_s_record_only_when_bytes_and_values_both_agree() -> None:
    """verify's shortcut past sealing the re-scored record: the line's bytes by orjson *and*
    its parsed value. A NaN in the re-scored record (orjson writes it as null, as the line
    holds) or an int where the line holds a float is never taken for the line."""
    import orjson

    from evalkit.verify.rescore import _is_the_line

    record = {"kpis": {"x": None, "y": 1.0}, "provenance": {"rubric_sha256": "a"}}
    line = seal_record(record)
    data = orjson.dumps(line)
    assert _is_the_line(record, orjson.loads(data), data)
    nan = {**record, "kpis": {"x": float("nan"), "y": 1.0}}
    assert orjson.dumps({**nan, "provenance": line["provenance"]}) == data  # the same bytes
    assert not _is_the_line(nan, orjson.loads(data), data)
    assert not _is_the_line({**record, "kpis": {"x": None, "y": 1}}, orjson.loads(data), data)
    unsealed = orjson.dumps(record)
    assert not _is_the_line(record, orjson.loads(unsealed), unsealed)
